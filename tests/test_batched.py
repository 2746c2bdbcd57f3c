"""The batched reverse sweep of ``jacobian(f, method="rev")`` (srcgrad/batched.py): one sweep for
all the output's seeds, checked against the per-seed rows (``vjp`` per output element) and
central differences; the per-seed fallback where it cannot be written, or cannot run; its text
(golden)."""

import numpy as np
import pytest
from golden_source import assert_golden

from srcgrad import SrcgradError, jacobian, pullback, runtime, source
from srcgrad.batched import ROW_BY_ROW, Refused, batched_pullback, seeded
from srcgrad.derived import unwrap
from srcgrad.runtime import batched


def tanh_map(x, A):
    return np.tanh(A @ x)


def swing(c, L, n):
    th = np.array([1.0, 0.5, 0.2]) * c
    om = np.zeros(3)
    for _ in range(n):
        a = -(9.81 / L) * np.sin(th) - c * om
        th = th + 0.01 * om
        om = om + 0.01 * a
    return th * th


def layer(W, X, b):
    h = np.tanh(X @ W + b)
    return (h * h - b) / (1.0 + h ** 2) + np.exp(-W[0, 0])


def picked(W, X):
    h = np.tanh(X @ W)
    return np.sum(h * h, axis=1) + h[:, 0]


def spread(x, y):
    z = x[:, None] * y + np.exp(x).sum()
    return np.sin(z)


def peak(x):
    return np.max(x, axis=1) * x[:, 0]


def fancy(x):
    return np.sin(x[[0, 2, 2]]) * x[:3] + x[x > 0].sum()


def fancy_columns(X):
    return (np.sin(X[:, [0, 2, 2]]) * X[[1, 1, 0], 1:2]).ravel()


def held(x):
    items = [x * 2.0, np.sin(x)]
    d = {"a": items[0], "b": items[1]}
    return d["a"] * d["b"]


def chosen(X):
    return (np.max(X, axis=0) * np.min(X, axis=1, keepdims=True)).ravel() + np.max(X) * X[0, 0]


def joined(X):
    both = np.concatenate([X, np.sin(X[:, 1:])], axis=1)
    return np.stack([both, both * 2.0], axis=-1).ravel()


def two_argument(x):
    return np.arctan2(x, 1.5) + np.hypot(x, x[::-1]) + np.maximum(x, 0.5)


def products(X):
    x = X[0]
    v = np.dot(np.outer(x, x), x) + np.dot(x, X) + np.einsum("ij,jk->ik", X, np.cos(X))[1]
    return v + np.einsum("i,j->ij", x, np.sin(x)).ravel()[:3]


def diagonal(X):
    return np.einsum("ii->i", X) * np.einsum("ij->j", X)


def overwritten(x, n):
    y = x * 1.0
    for i in range(n):
        y[i % 3] = y[i % 3] * np.sin(y[(i + 1) % 3])
    return y * y


def real_part(x):
    return np.sin(x * (1 + 2j)).real


def through_complex(x):
    w = np.exp(1j * x)
    return np.real(w * np.conj(w[::-1])) + np.imag(w) * x + real_part(x)


def running(X):
    return np.cumsum(np.sin(X), axis=1).ravel() + np.cumsum(X * X, axis=0)[::-1].ravel() + (
        np.cumsum(X)[::-1])


def per_row(X):
    # helpers without a batched twin, called once per row (rowwise); mean's rows are numbers
    top = np.transpose(np.cumprod(X, axis=1)) + np.sort(X, axis=0) * np.quantile(X, 0.3, axis=1)
    return top.ravel() + np.mean(X) * np.pad(X, 1)[1:-1, 1:-1].ravel()


def indexed(X, x):
    # a cotangent read at an index (bincount's), a NumPy function of a cotangent (matvec's)
    return np.matvec(X, x) + np.bincount(np.array([0, 2, 2]), x)


def pieces(x):
    # lists of cotangents into and out of helpers called per row (split_grad, hstack_grad)
    a, b = np.split(np.sin(x), 2)
    return np.hstack((a * b, b, np.append(a, x[0])))


def stacked_products(X):
    # matrix products of more than two axes and a reshape in F order: per-seed helpers per row
    T = np.stack([X, X * X])
    return (T @ np.sin(X)).ravel()[:5] + np.reshape(np.cos(X), -1, order="F")[:5] + (
        np.dot(T, X[0])[1, 1])


def over_a_list(x):
    y = x * 1.0
    for v in [x[0], x[1]]:
        y = y * v
    return y


def complex_output(x):
    return np.exp(1j * x) * x[::-1] + np.cumsum(x * (1 - 2j))


def diagonal_then_overwritten(X, n):
    # (an array made of a tuple of numbers: its sweep raises Unbatched after the loop)
    y = np.array((X[0, 0], X[1, 1], X[2, 2])) * 1.0
    for i in range(n):
        y[i % 3] = y[i % 3] * np.sin(y[(i + 1) % 3])
    return y * y


def central_jacobian(f, args, pos, eps=1e-6):
    x = np.asarray(args[pos], dtype=float)
    columns = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        hi, lo = list(args), list(args)
        hi[pos], lo[pos] = x + e.reshape(x.shape), x - e.reshape(x.shape)
        columns.append((np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps))
    return np.stack(columns, -1).reshape(np.shape(f(*args)) + x.shape)


def per_seed(f, args, pos):
    value, back = pullback(f, wrt=pos)(*args)
    value = np.asarray(value)
    rows = [back(e.reshape(value.shape)) for e in np.eye(value.size)]
    return np.reshape(np.stack(rows), value.shape + np.shape(args[pos]))


CASES = [
    (tanh_map, (np.linspace(-1, 1, 7), np.arange(21.0).reshape(3, 7) / 30), 0, True),
    (swing, (0.3, 1.2, 10), 0, True),
    (layer, (np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3),
             np.array([0.1, -0.2])), 0, True),
    (picked, (np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3)), 0,
     True),
    (spread, (np.linspace(0, 1, 3), np.linspace(1, 2, 4)), 1, True),
    (spread, (np.linspace(0, 1, 3), np.linspace(1, 2, 4)), 0, True),
    (peak, (np.linspace(-1, 1, 6).reshape(2, 3),), 0, True),
    (fancy, (np.array([0.3, -0.7, 1.1, 0.4]),), 0, True),
    (fancy_columns, (np.linspace(-1, 1, 9).reshape(3, 3) + 0.05,), 0, True),
    (held, (np.array([0.3, -0.7, 1.1]),), 0, True),
    (chosen, (np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4], [1.3, 0.1, 0.9]]),), 0, True),
    (joined, (np.linspace(-1, 1, 6).reshape(2, 3),), 0, True),
    (two_argument, (np.array([0.3, -0.7, 1.1]),), 0, True),
    (products, (np.linspace(-1, 1, 9).reshape(3, 3) + 0.05,), 0, True),
    (diagonal, (np.linspace(-1, 1, 9).reshape(3, 3) + 0.05,), 0, True),
    (overwritten, (np.array([0.3, -0.7, 1.1]), 5), 0, True),
    (diagonal_then_overwritten, (np.linspace(-1, 1, 9).reshape(3, 3) + 0.05, 5), 0, True),
    (through_complex, (np.array([0.3, -0.7, 1.1]),), 0, True),
    (running, (np.linspace(-1, 1, 6).reshape(2, 3),), 0, True),
    (per_row, (np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4], [1.3, 0.1, 0.9]]),), 0, True),
    (indexed, (np.linspace(-1, 1, 9).reshape(3, 3), np.array([0.3, -0.7, 1.1])), 1, True),
    (complex_output, (np.array([0.3, -0.7, 1.1]),), 0, True),
    (pieces, (np.array([0.3, -0.7, 1.1, 0.4]),), 0, True),
    (stacked_products, (np.linspace(-1, 1, 9).reshape(3, 3) + 0.05,), 0, True),
]
# where the batched sweep is generated but cannot run (an array of a tuple of numbers): each seed
# alone; it stops after restoring the values its loop overwrote, which back_many puts back
UNBATCHED = {diagonal_then_overwritten}


@pytest.mark.parametrize("f, args, pos, batches", CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_the_batched_sweep_gives_the_per_seed_rows(f, args, pos, batches):
    assert (seeded(unwrap(pullback(f, wrt=pos))) is not None) == batches
    for method in ("rev", "auto") if f is tanh_map else ("rev",):
        if f is complex_output:
            # real seeds give the rows of the real part only (each back(e) is the gradient of
            # Re(sum(conj(e) * f))): not the Jacobian, which jacobian refuses to call one
            with pytest.raises(SrcgradError, match="real arrays"):
                jacobian(f, wrt=pos, method=method)(*args)
            continue
        J = jacobian(f, wrt=pos, method=method)(*args)
        np.testing.assert_allclose(J, per_seed(f, args, pos), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(J, central_jacobian(f, args, pos), rtol=1e-6, atol=1e-8)
    assert ("back_many" in source(jacobian(f, wrt=pos, method="rev"))) == batches
    if batches:
        value, back, back_many = seeded(unwrap(pullback(f, wrt=pos)))(*args)
        seeds = np.eye(np.size(value)).reshape((np.size(value),) + np.shape(value))
        if f in UNBATCHED:
            with pytest.raises(batched.Unbatched):
                back_many(seeds)
            again = np.stack([back(e) for e in seeds])
            np.testing.assert_allclose(again.reshape(np.shape(value) + np.shape(args[pos])),
                                       per_seed(f, args, pos), rtol=1e-14, atol=1e-15)
        else:
            got = back_many(seeds).reshape(np.shape(value) + np.shape(args[pos]))
            np.testing.assert_allclose(got, per_seed(f, args, pos), rtol=1e-13, atol=1e-15)


def test_where_the_batched_sweep_cannot_run_each_seed_is_swept_alone():
    calls = []

    def back_many(seeds):
        raise batched.Unbatched("a complex value")

    def back(seed):
        calls.append(seed)
        return 2.0 * seed[::-1]

    value, x = np.zeros(3), np.zeros(3)
    J = batched.rows(back_many, back, value, x)
    np.testing.assert_array_equal(J, 2.0 * np.eye(3)[::-1])
    assert len(calls) == 3


def test_blocks_of_seeds_and_the_refusals():
    x, A = np.linspace(-1, 1, 7), np.arange(21.0).reshape(3, 7) / 30
    _, back, back_many = seeded(unwrap(pullback(tanh_map)))(x, A)
    seeds = np.eye(3)
    np.testing.assert_allclose(back_many(seeds), np.stack([back(e) for e in seeds]), rtol=1e-14)
    with pytest.raises(batched.Unbatched):
        back_many(np.eye(2))  # seeds shaped unlike the output
    with pytest.raises(Refused, match="a loop or a test on a batched value"):
        batched_pullback(unwrap(pullback(over_a_list)))
    assert_golden("tanh_map_back_many.py", source(seeded(unwrap(pullback(tanh_map)))))


def test_a_tuple_wrt_is_swept_once_for_all_seeds():
    x, A = np.linspace(-1, 1, 7), np.arange(21.0).reshape(3, 7) / 30
    _, back, back_many = seeded(unwrap(pullback(tanh_map, wrt=(0, 1))))(x, A)
    many = back_many(np.eye(3))
    for k in range(2):
        want = np.stack([back(e)[k] for e in np.eye(3)])
        np.testing.assert_allclose(many[k], want, rtol=1e-13, atol=1e-15)
        J = jacobian(tanh_map, wrt=(0, 1), method="rev")(x, A)[k]
        np.testing.assert_allclose(J, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(J, central_jacobian(tanh_map, (x, A), k), rtol=1e-6,
                                   atol=1e-8)


def test_a_helper_called_per_row_gives_numpy_values_of_double_rows():
    def doubled(g):
        return g * 2.0

    assert all(callable(getattr(runtime, name, None)) for name in ROW_BY_ROW)
    rows = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(batched.rowwise(doubled, (True,), rows), rows * 2.0)
    np.testing.assert_array_equal(batched.rowwise(np.add, (True, False), rows[:, 0], 1.5),
                                  rows[:, 0] + 1.5)
    with pytest.raises(batched.Unbatched, match="less than double"):
        # a row of numbers is a NumPy scalar where the per-seed value may be a Python float
        batched.rowwise(np.add, (True, False), rows[:, 0], np.float32(1.5))
    with pytest.raises(batched.Unbatched, match="a float of"):
        batched.rowwise(lambda g: float(g[0]), (True,), rows)
    with pytest.raises(batched.Unbatched, match="different shapes"):
        batched.rowwise(lambda g: g[: int(g[0]) + 1], (True,), rows)
