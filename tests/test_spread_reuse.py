"""Code specialized to its arguments' kinds: a fixed operand of a loop's arithmetic spread to the
step's shape once (optimize/spread.py, ``runtime.spread_rows``), and an array the function made
and reads no more written by the operation reading it last (optimize/reuse.py,
``runtime.written_into``). Each against the unspecialized derivative bit for bit (numbers, dtype,
shape), central differences, the generated text, and what must stay as it is."""

import numpy as np
import pytest
from gradcheck import numeric_grad
from gradcheck import same_bits as same

import srcgrad
from srcgrad.optimize import scalars
from srcgrad.runtime import spread_rows, written_into

RNG = np.random.default_rng(21)


def checked(f, args, present, absent, transform=srcgrad.grad):
    """The specialized derivative of f wrt every argument: the unspecialized one's numbers bit
    for bit, the arguments unchanged, central differences (grad), the pieces of its text."""
    wrt = f.__code__.co_varnames[:f.__code__.co_argcount]
    generic = transform(f, wrt=wrt)
    df = srcgrad.specialize(generic)
    copies = [np.copy(a) for a in args]
    extra = (tuple(np.ones_like(a) for a in args),) if transform is srcgrad.jvp else ()
    got = df(*args, *extra)
    assert all(np.array_equal(a, c) for a, c in zip(args, copies))
    same(got, generic.__wrapped__(*args, *extra))
    same(df(*args, *extra), got)  # (the spread arrays and the outputs are the call's own)
    if transform is srcgrad.grad:
        for i, g in enumerate(got):
            np.testing.assert_allclose(g, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
    text = srcgrad.source(df)
    for piece in present:
        assert piece in text, (piece, text)
    for piece in absent:
        assert piece not in text, (piece, text)


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def scaled(b, c, xs):  # b on the left of `-`, c a column (as many dimensions), `/`
    s = 0.0
    for t in range(len(xs)):
        u = (b - xs[t]) / c
        s = s + np.sum(np.sin(u))
    return s


def written(b, xs):  # b rebound in the loop: not fixed
    s = 0.0
    for t in range(len(xs)):
        s = s + np.sum(np.cos(xs[t] * b))
        b = b * 0.5
    return s


def test_a_fixed_operand_of_a_loops_arithmetic_is_spread_to_the_steps_shape_once():
    Wx, Wh = RNG.normal(size=(2, 3)), 0.5 * RNG.normal(size=(3, 3))
    b, xs, h0 = RNG.normal(size=3), RNG.normal(size=(4, 5, 2)), RNG.normal(size=(5, 3))
    checked(rnn, (Wx, Wh, b, xs, h0), ["b_rows = {}", "+ spread_rows(b, plus, b_rows)",
                                       "h = np.tanh(plus_plus_b, out=plus_plus_b)"], [])
    # a widening bias (h0 of one row: b of 5 rows widens the first step's sum; spread_rows
    # gives b itself there)
    checked(rnn, (Wx, Wh, RNG.normal(size=(5, 1)), xs, h0[:1]), ["spread_rows("], [])
    checked(scaled, (b, RNG.normal(size=(5, 1)) + 3.0, RNG.normal(size=(3, 5, 3))),
            ["spread_rows(b, ", "/ spread_rows(c, "], [])
    checked(written, (b, RNG.normal(size=(3, 4, 3))), [], ["spread_rows("])
    # jvp too
    checked(rnn, (Wx, Wh, b, xs, h0), ["spread_rows(b, "], [], transform=srcgrad.jvp)


def test_spread_rows_spreads_only_what_keeps_the_shape_and_makes_it_once():
    b = RNG.normal(size=3)
    held = {}
    a = np.zeros((4, 3))
    full = spread_rows(b, a, held)
    assert full.shape == (4, 3) and full.flags.c_contiguous and np.array_equal(full[2], b)
    assert spread_rows(b, np.ones((4, 3)), held) is full  # (kept for the shape)
    assert spread_rows(b, np.zeros((4, 1)), held) is b  # b widens (4, 1): itself
    assert spread_rows(b, np.zeros(2), held) is b  # does not broadcast: itself (NumPy raises)
    assert spread_rows(b, 2.0, held) is b
    assert spread_rows(b, b + 1.0, held) is b


def mlp(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    z = h @ W2 * 2.0
    return np.sum(np.exp(z - 1.0) * h[:, :2])


def read_again(W1, b1, X):  # X @ W1 read twice: not written into (p + b1 is)
    p = X @ W1
    return np.sum(np.tanh(p + b1) * p)


def on_argument(x, b):  # an argument is never written into
    return np.sum(np.exp(x) + np.sin(x + b))


def test_an_array_made_and_read_no_more_is_the_output_of_the_operation_reading_it():
    W1, b1, W2 = RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=(4, 2))
    X = RNG.normal(size=(5, 3))
    checked(mlp, (W1, b1, W2, X),
            ["= written_into(np.add, X_matmul_W1, b1)",
             "np.tanh(X_matmul_W1_plus_b1, out=X_matmul_W1_plus_b1)",
             "np.multiply(h_matmul_W2, f64_2_0, out=h_matmul_W2)",
             "np.subtract(z, f64_1_0, out=z)"],
            [])
    # b1 widens X @ W1 (a column plus a row): a new array
    checked(mlp, (W1[:, :1], b1, W2, X), ["written_into(np.add, X_matmul_W1, b1)"], [])
    checked(read_again, (W1, b1, X), ["np.tanh(p_plus_b1, out=p_plus_b1)"], ["written_into("])
    checked(on_argument, (RNG.normal(size=(2, 3)), RNG.normal(size=3)), [],
            ["written_into(", "out="])


def scaled_steps(x, y):
    s = 0.0
    for _ in range(3):
        s = s + np.sum((1 - x * 0.5) / (2.5 + y) * -3.0)
    return s + np.sum(x ** 2.0) + np.sum(3e-3 * y * 7.0)  # (a power: kept)


def test_a_number_operand_of_float64_array_arithmetic_is_an_array_of_no_dimensions():
    x, y = RNG.normal(size=(3, 4)), RNG.normal(size=4) ** 2
    checked(scaled_steps, (x, y), ["f64_1_0 - x_times_c", "f64_2_5 + y", "* f64_7_0",
                                   "x ** 1.0"], ["v1_minus_x_times_c = 1", "c_plus_y = 2.5"])
    # the arrays are read-only, and float32 arithmetic keeps Python's numbers (which NumPy
    # converts to float32; an array of float64 would widen the result)
    df = srcgrad.specialize(srcgrad.grad(scaled_steps, wrt=("x", "y")))
    got = df(x.astype(np.float32), y.astype(np.float32))
    assert got[0].dtype == np.float32 and "f64_" not in srcgrad.source(df)
    assert not scalars._NUMBERS[1.0].flags.writeable


@pytest.mark.parametrize("shape, into", [((3,), True), ((4, 3), True), ((), True),
                                         ((1, 3), False), ((4, 1), False), ((2, 4, 3), False)])
def test_written_into_writes_only_where_the_result_keeps_the_arrays_shape(shape, into):
    x, y = RNG.normal(size=(4, 3)), RNG.normal(size=shape)
    want = x / y
    got = written_into(np.true_divide, x, y)
    assert np.array_equal(got, want) and (got is x) == into
