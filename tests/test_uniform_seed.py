"""optimize/uniform.py: the seed of a full mean or sum stays a Python float in specialized code
where the arrays it spreads over are float64 arrays of one shape (checked at each call), and
only where what it meets gives the same numbers either way. Each case compares the specialized
derivative with the unspecialized one (same bits, dtype and shape) and central differences."""

import numpy as np
from gradcheck import numeric_grad
from gradcheck import same_bits as same

import srcgrad

RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 3))
W = RNG.standard_normal(3)
Y = (RNG.uniform(size=6) < 0.5).astype(np.float64)


def specialized(df, *args):
    """The specialized code for ``args`` called directly (``df`` would run the unspecialized code
    where it raises ValueError, kinds.py)."""
    df(*args)
    assert srcgrad.source(df).startswith("# specialized")
    return df.last()(*args)


def check(f, args, wrt, uniform, mode=srcgrad.grad):
    """The specialized gradient equals the unspecialized one and central differences; its code
    calls a uniform seed helper exactly when ``uniform``."""
    generic = mode(f, wrt=wrt)
    df = srcgrad.specialize(generic)
    got = specialized(df, *args)
    same(got, generic.__wrapped__(*args))
    names = list(f.__code__.co_varnames[:f.__code__.co_argcount])
    grads = got if isinstance(got, tuple) else (got,)
    for g, w in zip(grads, wrt):
        np.testing.assert_allclose(g, numeric_grad(f, args, names.index(w)), rtol=1e-6,
                                   atol=1e-8)
    assert ("uniform_" in srcgrad.source(df)) == uniform, srcgrad.source(df)
    return df, generic


def logistic(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def test_a_mean_seed_over_members_of_one_shape_is_a_number():
    check(logistic, (W, X, Y), ("w",), True)


def two_sines(x, b):
    return np.mean(np.sin(x) + np.sin(b))


def test_members_of_other_shapes_at_a_call_get_the_spread_array():
    # same kinds (2-d float64), b of one row broadcast over x: the seed is the array, and b's
    # gradient sums its rows (as a number it would be 1/4 of the right one)
    x = RNG.standard_normal((4, 3))
    check(two_sines, (x, RNG.standard_normal((4, 3))), ("x", "b"), True)
    check(two_sines, (x, RNG.standard_normal((1, 3))), ("x", "b"), True)
    check(logistic, (W, X, np.array([1.0])), ("w", "y"), True)


def plane(A, b):
    return np.sum(np.tanh(A + b) * A)


def test_a_sum_seed_and_a_broadcast_row_in_two_dimensions():
    A = RNG.standard_normal((4, 3))
    check(plane, (A, RNG.standard_normal((4, 3))), ("A", "b"), True)
    check(plane, (A, RNG.standard_normal((1, 3))), ("A", "b"), True)  # the check fails: array
    # b of one dimension fewer: the check at the call also asks that it broadcast to A's shape
    check(plane, (A, RNG.standard_normal(3)), ("A", "b"), True)
    check(plane, (A, RNG.standard_normal(1)), ("A", "b"), True)


def softmax_loss(W, b, X, Y):  # the benchmark's MLP loss, after its hidden layer
    logits = X @ W + b
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def test_a_seed_over_members_of_several_dimensions():
    # Y * logp: Y is read as an array, b (1-d), logits and the (n, 1) sums only give the shape;
    # the number stands for the spread array where they broadcast to Y's shape
    X = RNG.standard_normal((5, 3))
    df, _ = check(softmax_loss, (RNG.standard_normal((3, 4)), RNG.standard_normal(4), X,
                                 RNG.uniform(size=(5, 4))), ("W", "b"), True)
    assert "uniform_unreduce(dsum_Y_times_logp, None, (Y,), (" in srcgrad.source(df)
    # Y of one column, logits of four: Y * logp broadcasts Y, the spread array is kept
    check(softmax_loss, (RNG.standard_normal((3, 4)), RNG.standard_normal(4), X,
                         RNG.uniform(size=(5, 1))), ("W", "b"), True)
    # everything of one column (b of length 1): the number again
    check(softmax_loss, (RNG.standard_normal((3, 1)), RNG.standard_normal(1), X,
                         RNG.uniform(size=(5, 1))), ("W", "b"), True)


def float32_member(x, w):
    u = x.astype(np.float32)
    return np.mean(u * w)


def test_a_float32_member_gets_the_spread_array():
    # u is float32: a Python float times u stays float32, the float64 spread array does not
    x = RNG.standard_normal(5)
    generic = srcgrad.grad(float32_member, wrt=("w",))
    df = srcgrad.specialize(generic)
    w = RNG.standard_normal(5)
    got = specialized(df, x, w)
    same(got, generic.__wrapped__(x, w))
    np.testing.assert_allclose(got[0], numeric_grad(float32_member, (x, w), 1), rtol=1e-6)
    assert "uniform_mean_grad" in srcgrad.source(df)


def product_mean(w, X):
    return np.mean(X @ w)


def divided(x, y):
    return np.mean(x * y) / 2.0 + np.sum(x / 3.0 * y)


def test_a_seed_met_by_a_product_or_a_division_stays_the_array():
    # mean(X @ w): the seed is z's whole gradient and goes into a matrix product
    check(product_mean, (W, X), ("w",), False)
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    df, generic = check(divided, (x, y), ("x", "y"), True)
    text = srcgrad.source(df)
    assert text.count("uniform_") == 2, text


def vjp_mean(x, y):
    return np.mean(x * y)


def test_a_vjp_seed_that_is_not_a_python_float():
    x, y = RNG.standard_normal(5), RNG.standard_normal(5)
    generic = srcgrad.vjp(vjp_mean)
    df = srcgrad.specialize(generic)
    for seed in (2.0, np.float64(2.0), np.array(2.0), np.float32(2.0)):
        same(specialized(df, x, y, seed), generic.__wrapped__(x, y, seed))
    assert "uniform_" in srcgrad.source(df)
    np.testing.assert_allclose(specialized(df, x, y, 2.0), 2.0 * y / 5)


def test_the_check_at_the_call_with_members_of_several_dimensions():
    from srcgrad.runtime import shape_like, uniform_mean_grad, uniform_unreduce, unreduce

    Y = np.ones((5, 4))
    fits = (np.ones(4), np.ones((5, 1)), np.ones((1, 4)), np.ones(()))
    assert type(uniform_unreduce(2.0, None, (Y,), fits)) is float
    assert uniform_mean_grad(2.0, None, (Y,), fits) == 0.1
    # more dimensions, another dtype, not an array: the spread array, as unreduce gives it
    for other in (np.ones((2, 5, 4)), np.ones((2, 1, 1)), np.ones(4, np.float32), 2.0):
        spread = uniform_unreduce(2.0, None, (Y,), (np.ones(4), other))
        same(spread, unreduce(2.0, shape_like(Y, np.ones(4), other)))
    # a member of as many dimensions but longer along an axis: the spread array
    row = np.ones((1, 4))
    same(uniform_unreduce(2.0, None, (row,), (Y,)), unreduce(2.0, shape_like(row, Y)))
