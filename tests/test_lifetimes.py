"""Lifetimes and ownership of what generated code allocates and returns.

Generated code deletes each value after its last read (``optimize/release.py``), so ``del`` is
valid input too, to any order; the adjoints of ``sum`` and ``mean`` are read-only broadcast
views, so every returned gradient must still be an array of the caller's own
(``optimize/owned.py``); and together they keep the peak memory of a gradient call close to a
hand-written one.
"""

import gc
import tracemalloc

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

from srcgrad import grad, hessian, hvp, jvp, source, value_and_grad, vjp

# ---- `del` in the input -------------------------------------------------------------------------


def releases_as_it_goes(x, n):
    y = np.sin(x) * x
    z = np.exp(y)
    del y
    for i in range(n):
        t = z * (i + 1.0)
        z = np.tanh(t)
        del t
    if n > 2:
        u = z * z
        del z
        z = u
    return np.sum(z * x)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_del_of_names_is_accepted_and_changes_no_gradient(n):
    x = np.array([0.3, -0.8, 1.1])
    check_grad(releases_as_it_goes, (x, n))
    plain = grad(releases_as_it_goes, optimize=False)(x, n)
    np.testing.assert_allclose(plain, grad(releases_as_it_goes)(x, n), rtol=1e-12)


# ---- higher order through generated code that contains `del` ----------------------------------


def wavy(x):
    a = np.sin(x) * x
    b = np.exp(a) + x * x
    return np.log(b) * a


def wavy_sum(x):
    a = np.sin(x) * x
    b = np.exp(a) + x * x
    return np.sum(np.log(b) * a) + np.mean(a * b)


def test_generated_gradients_release_values():
    assert "\n    del " in source(grad(wavy))
    assert "\n    del " in source(grad(wavy_sum))


@pytest.mark.parametrize("x", [0.4, -1.3, 2.1])
def test_grad_of_grad_through_del(x):
    second = grad(grad(wavy))(x)
    expected = numeric_grad(grad(wavy), (x,), 0)
    np.testing.assert_allclose(second, expected, rtol=1e-6, atol=1e-8)
    third = grad(grad(grad(wavy)))(x)
    np.testing.assert_allclose(third, numeric_grad(grad(grad(wavy)), (x,), 0), rtol=1e-5,
                               atol=1e-7)


def _numeric_hessian(f, x, eps=1e-5):
    df = grad(f)
    columns = [(df(x + eps * e) - df(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.array(columns).T


def test_hessian_and_hvp_through_del():
    x = np.array([0.4, -1.3, 2.1, 0.7])
    expected = _numeric_hessian(wavy_sum, x)
    np.testing.assert_allclose(hessian(wavy_sum)(x), expected, rtol=1e-6, atol=1e-7)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    np.testing.assert_allclose(hvp(wavy_sum)(x, v), expected @ v, rtol=1e-6, atol=1e-7)


# ---- returned gradients are arrays of the caller's own ------------------------------------------


def total(x):
    return np.sum(x)


def summed(x, y):
    return np.sum(x + y)


def column_means(x):
    return np.sum(np.mean(x, axis=0))


def identity(x):
    return x


def square_sum(x):
    return np.sum(x) ** 2


def of_a_list(xs):
    return np.sum(xs[0]) + np.mean(xs[1])


def squared_sum_of_a_list(xs):
    return np.sum(sum(xs) ** 2)  # every element gets the one cotangent of sum(xs)


X = np.arange(1.0, 7.0).reshape(2, 3)
Y = np.arange(3.0) + 0.5
SEED = np.array([1.0, -2.0, 0.5])

CALLS = [
    ("sum", lambda: (grad(total)(X), (X,))),
    ("sum-two", lambda: (grad(summed, wrt=(0, 1))(X, Y), (X, Y))),
    ("mean-axis", lambda: (grad(column_means)(X), (X,))),
    ("value_and_grad", lambda: (value_and_grad(total)(X)[1], (X,))),
    ("vjp-seed", lambda: (vjp(identity)(Y, SEED), (Y, SEED))),
    ("hvp", lambda: (hvp(square_sum)(Y, SEED), (Y, SEED))),
    ("jvp-tangent", lambda: (jvp(identity)(Y, SEED)[1], (Y, SEED))),
    ("list", lambda: (grad(of_a_list)([X, Y]), (X, Y))),
    ("list-sum", lambda: (grad(squared_sum_of_a_list)([Y, SEED]), (Y, SEED))),
]


def _leaves(g):
    if isinstance(g, (tuple, list)):
        return [leaf for part in g for leaf in _leaves(part)]
    return [g]


@pytest.mark.parametrize("call", [c for _, c in CALLS], ids=[name for name, _ in CALLS])
def test_returned_gradients_are_writable_and_share_no_memory(call):
    g, arguments = call()
    leaves = [leaf for leaf in _leaves(g) if isinstance(leaf, np.ndarray)]
    assert leaves
    for k, leaf in enumerate(leaves):
        assert leaf.flags.writeable and leaf.flags.owndata
        for other in list(arguments) + leaves[:k]:
            assert not np.shares_memory(leaf, other)
        before = leaf.copy()
        leaf *= 2.0  # users scale gradients in place
        np.testing.assert_array_equal(leaf, 2.0 * before)


def weighs_its_gradient(x):
    return np.sum(grad(square_sum)(x) * np.sin(x))


def test_second_order_through_a_copied_gradient():
    assert "return copy_grad(cast_like(dx, x))" in source(grad(square_sum))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(hessian(square_sum)(x), np.full((3, 3), 2.0))
    np.testing.assert_allclose(hvp(square_sum)(x, SEED), np.full(3, 2.0 * SEED.sum()))
    check_grad(weighs_its_gradient, (x,))


def test_sum_gradient_values_with_views_inside():
    dx, dy = grad(summed, wrt=(0, 1))(X, Y)
    np.testing.assert_array_equal(dx, np.ones_like(X))
    np.testing.assert_array_equal(dy, np.full(3, 2.0))
    check_grad(column_means, (X,))


def two_sums(x):
    y = x * 2.0
    return np.sum(y * y) + np.sum(y)


def loop_then_sum(x, n):
    y = x * 2.0
    s = 0.0
    for i in range(n):
        s = s + np.sum(y * i)
    return s + np.sum(y)


def test_a_view_is_never_updated_in_place():
    # dy starts as the view of `np.sum(y)`: later contributions make a new array, never `+=`
    for f, args in ((two_sums, ()), (loop_then_sum, (3,))):
        text = source(grad(f))
        assert "    dy = unreduce(dsum_y, " in text
        assert "dy = dy + " in text and "dy +=" not in text
        check_grad(f, (np.array([0.5, -1.0, 2.0]), *args))


def fills_then_sums(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] * x[(i + 1) % len(x)]
    return np.sum(y)


def sum_and_items(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i]
    return s + np.sum(x)


def test_element_updates_of_a_view_update_a_copy_of_it():
    # the adjoint of `np.sum(y)` is a read-only view: zeroing the elements a write overwrote,
    # or adding into the elements a read took, copies it once, at the first update
    text = source(grad(fills_then_sums))
    assert "dy = unreduce(1.0, y)" in text and "dy = zero_item(dy, i)" in text
    check_grad(fills_then_sums, (np.array([0.5, -1.5, 2.0, 0.25]),))
    text = source(grad(sum_and_items))
    assert "dx = unreduce(dsum_x, x)" in text and "dx = add_at(dx, i, dx_item)" in text
    for n in (0, 2, 3):
        check_grad(sum_and_items, (np.array([0.5, -1.0, 2.0]), n))


# ---- peak memory ----------------------------------------------------------------------------


def logistic(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logistic_by_hand(w, X, y):
    z = X @ w
    p = 0.5 * (np.tanh(0.5 * z) + 1.0)
    return X.T @ (p - y) / X.shape[0]


def _peak(call):
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak - before


def test_peak_memory_of_a_gradient_is_close_to_a_hand_written_one():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20000, 20))
    y = (rng.uniform(size=20000) < 0.5).astype(float)
    w = 0.1 * rng.standard_normal(20)
    dlogistic = grad(logistic)
    np.testing.assert_allclose(dlogistic(w, X, y), logistic_by_hand(w, X, y), rtol=1e-10)
    generated = min(_peak(lambda: dlogistic(w, X, y)) for _ in range(3))
    by_hand = min(_peak(lambda: logistic_by_hand(w, X, y)) for _ in range(3))
    assert generated <= 1.5 * by_hand
