"""analysis/shapes.py: a reduction that keeps its axes (``keepdims=True``), or removes leading
ones (``axis=0``), has a shape that broadcasts into its operand's, so it adds nothing to a
shape set that holds the operand's: ``z = a - np.max(a, axis=1, keepdims=True)`` has the shape
of ``a``, and ``a`` gets ``dz`` as it is. Each case is checked against central differences, in
the code for any arguments and in the code specialized to their kinds, and the generated text
shows which contributions are still summed back to their operand's shape."""

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import check_second_order

import srcgrad

RNG = np.random.default_rng(16)
A = RNG.standard_normal((3, 4))
Y = RNG.uniform(size=(3, 4))
BIG = RNG.standard_normal((2, 3, 4))
ROW = RNG.standard_normal(4)


def log_softmax(a, y):
    z = a - np.max(a, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp)


def softmax_head(l, b, y):  # logits l + b: logp has the shape of exp_z, no argument's
    logits = l + b
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp) / y.shape[0]


def centered(a, w):  # the mean over the leading axis, no keepdims: (4,) into (3, 4)
    c = a - np.mean(a, axis=0)
    return np.sum(np.tanh(c * w) ** 2)


def rebound(a, w):  # the sum is of the old a, which the new one broadcasts
    m = np.sum(a, axis=1, keepdims=True)
    a = a * 2.0 + w
    z = a - m
    return np.sum(z * z)


def bigger_other(a, w):  # the max of a meets a larger array: both summed back
    z = w - np.max(a, axis=1, keepdims=True)
    return np.sum(np.sin(z) * z)


def smaller_other(a, v):  # v (4,) meets the (3, 1) max of a, not a itself: (3, 4)
    z = v - np.max(a, axis=1, keepdims=True)
    return np.sum(np.cos(z) * a)


def leading_pair(b, w):  # over the axes (1, 0) of b (2, 3, 4): (4,)
    s = np.sum(b * b, axis=(1, 0))
    return np.sum(np.tanh(b - s) * w)


def in_a_branch(a, y, flag=True):  # a reduction inside a branch: no fact is kept
    if flag:
        m = np.max(a, axis=1, keepdims=True)
    else:
        m = np.min(a, axis=1, keepdims=True)
    z = a - m
    return np.sum(y * z * z)


def in_a_loop(a, w):  # a's shape grows in the first trip: (3, 4) -> (2, 3, 4)
    for _ in range(2):
        m = np.sum(a, axis=0, keepdims=True)
        a = np.tanh(a * w - m)
    return np.sum(a * a)


CASES = [
    (log_softmax, (A, Y)),
    (softmax_head, (A, ROW, Y)),
    (centered, (A, BIG)),
    (rebound, (A, BIG)),
    (bigger_other, (A, BIG)),
    (smaller_other, (A, ROW)),
    (leading_pair, (BIG, BIG[0])),
    (in_a_branch, (A, Y)),
    (in_a_loop, (A, BIG)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradients_match_central_differences(f, args):
    expected = [numeric_grad(f, args, wrt) for wrt in (0, 1)]  # (two arrays first, each case)
    df = srcgrad.grad(f, wrt=(0, 1))
    for fn in (df, srcgrad.specialize(df)):
        for _ in range(2):  # (the same result at every call)
            for got, want in zip(fn(*args), expected):
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_the_softmax_shift_passes_its_cotangent_on_as_it_is():
    text = srcgrad.source(srcgrad.grad(log_softmax))
    # z = a - max: a has z's shape; logp = z - log(sum): z has logp's shape
    assert "dz = dlogp + dexp_z * exp_z" in text, text
    assert "return cast_like(dz, a)" in text, text
    assert "unbroadcast(dz" not in text and "unbroadcast(dlogp, exp_z)" not in text, text
    # the log of the sum is smaller than logp: its contribution is summed
    assert "dlog_sum_exp_z = unbroadcast(-dlogp, sum_exp_z)" in text, text


def test_the_leading_reductions_broadcast_into_their_operand():
    text = srcgrad.source(srcgrad.grad(centered))
    assert "da = dc + mean_grad(dmean_a, a, axis=0)" in text, text  # c has a's shape
    assert "dmean_a = unbroadcast(-dc, mean_a_shape)" in text, text
    text = srcgrad.source(srcgrad.grad(leading_pair))
    assert "db = db_minus_s + (" in text, text  # b - s has b's shape
    assert "ds = unbroadcast(-db_minus_s, s_shape)" in text, text


def test_the_sums_stay_where_shapes_may_differ():
    text = srcgrad.source(srcgrad.grad(bigger_other))
    assert "dmax_a = unbroadcast(-dz, max_a)" in text, text  # (the max met w, not a)
    text = srcgrad.source(srcgrad.grad(rebound))
    assert "da_times_c = unbroadcast(dz, a)" in text, text  # (the old a meets w)
    text = srcgrad.source(srcgrad.grad(smaller_other, wrt=1))
    assert "dv = unbroadcast(dz, v)" in text, text
    text = srcgrad.source(srcgrad.grad(in_a_branch))
    assert "unbroadcast(dz, a)" in text, text  # (m's fact, in a branch, is not kept)


def test_a_value_read_anyway_gives_logp_its_shape():
    """optimize/shape_proxy.py: logp, never computed, is summed back to the shape of exp_z,
    which the sweep reads anyway, not to a shape view made at each call; and the seed checks
    only y (optimize/uniform.py: exp_z is no value the number meets)."""
    text = srcgrad.source(srcgrad.grad(softmax_head))
    assert "dlogp = unbroadcast(dy_times_logp * y, exp_z)" in text, text
    df = srcgrad.specialize(srcgrad.grad(softmax_head, wrt=(0, 1)))
    df(A, ROW, Y)
    text = srcgrad.source(df)
    assert "dlogp = unbroadcast(dy_times_logp * y, exp_z)" in text, text
    assert "uniform_unreduce(dsum_y_times_logp, None, (y,), (b, l))" in text, text


@pytest.mark.parametrize("f, args", [(softmax_head, (A[:2, :3], ROW[:3], Y[:2, :3])),
                                     (centered, (A[:2, :2], BIG[:, :2, :2]))],
                         ids=["softmax_head", "centered"])
def test_second_order_reads_the_held_values(f, args):
    """Second order differentiates the code above, whose unbroadcast reads exp_z (or a) for
    the shape of a value never computed."""
    check_second_order(f, list(args), 0)
