"""analysis/shifts.py: the max subtracted before a softmax or log-softmax carries no gradient,
where every use of it is a shift the operations after it cancel. Each case checks grad and jvp
against central differences, and from the generated text whether the max is differentiated;
the cases where the pattern does not hold need the max's gradient to be right."""

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import check_second_order

import srcgrad

RNG = np.random.default_rng(3)
A = RNG.standard_normal((3, 4))
Y = RNG.uniform(size=(3, 4))
SQUARE = RNG.standard_normal((3, 3))
TIES = np.array([[1.0, 2.0, 2.0, -1.0], [0.5, 0.5, 0.5, 0.5], [3.0, -2.0, 3.0, 1.0]])


def log_softmax(a, y):
    z = a - np.max(a, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp)


def softmax_methods(a, y):
    z = a - a.max(axis=-1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=-1, keepdims=True)
    return np.sum(p * y) + np.sum(np.sin(p))


def whole(a, y):
    z = a - np.max(a, axis=None, keepdims=True)
    e = np.exp(z)
    return np.sum(y * (e / np.sum(e, axis=None, keepdims=True)))


def z_read_again(a, y):  # z also meets y: the result depends on the max
    z = a - np.max(a, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp) + np.sum(z * y)


def max_read_again(a, y):  # log-sum-exp: m + log(sum(exp(a - m)))
    m = np.max(a, axis=1, keepdims=True)
    z = a - m
    return np.sum(y[:, :1] * (m + np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def other_axis(a, y):
    z = a - np.max(a, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=0, keepdims=True))
    return -np.sum(y * logp)


def without_log(a, y):  # z - sum(exp(z)): a shift does not cancel
    z = a - np.max(a, axis=1, keepdims=True)
    return np.sum(y * (z - np.sum(np.exp(z), axis=1, keepdims=True)))


def sum_without_keepdims(a, y):  # (3,) against (3, 3): broadcast along the other axis
    z = a - np.max(a, axis=1, keepdims=True)
    return -np.sum(y * (z - np.log(np.sum(np.exp(z), axis=1))))


def in_a_loop(a, y):  # z read in a loop
    z = a - np.max(a, axis=1, keepdims=True)
    s = y
    for _ in range(2):
        s = s * z
    return np.sum(s) - np.sum(y * (z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))))


def another_array(a, y):  # the max of a (3, 4) from b (2, 3, 4): varies along b's axis 1
    b = y[None, :, :] + a[None, :1, :] * np.ones((2, 1, 1))
    z = b - np.max(a, axis=1, keepdims=True)
    return -np.sum(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))


def check(f, a, y, dropped):
    """grad and jvp of ``f`` in ``a`` against central differences; whether its code
    differentiates the max."""
    df = srcgrad.grad(f)
    want = numeric_grad(f, (a, y), 0)
    np.testing.assert_allclose(df(a, y), want, rtol=1e-6, atol=1e-8)
    assert ("chooser_grad" not in srcgrad.source(df)) == dropped, srcgrad.source(df)
    direction = RNG.standard_normal(a.shape)
    value, tangent = srcgrad.jvp(f)(a, y, direction)
    assert value == f(a, y)
    np.testing.assert_allclose(tangent, np.sum(want * direction), rtol=1e-6, atol=1e-8)
    assert ("chooser_grad" not in srcgrad.source(srcgrad.jvp(f))) == dropped


@pytest.mark.parametrize("f", [log_softmax, softmax_methods, whole])
def test_the_max_of_a_softmax_is_not_differentiated(f):
    check(f, A, Y, True)
    check(f, TIES, Y, True)  # tied maxima: the result is smooth in a all the same


@pytest.mark.parametrize(
    "f", [z_read_again, max_read_again, other_axis, without_log, in_a_loop, another_array])
def test_a_max_the_result_depends_on_is_differentiated(f):
    check(f, A, Y, False)


def test_a_sum_without_keepdims_is_no_shift():
    check(sum_without_keepdims, SQUARE, Y[:, :3], False)


def test_second_order_of_a_log_softmax():
    check_second_order(log_softmax, [A[:2, :3], Y[:2, :3]], 0)


def test_a_complex_softmax_needs_no_gradient_of_its_max():
    # np.max has no complex derivative (refused at run time where it is differentiated); here
    # it is not, and the shift cancels for complex values too
    def loss(a, y):
        z = a - np.max(a, axis=1, keepdims=True)
        e = np.exp(z)
        return np.sum(np.abs(y * (e / np.sum(e, axis=1, keepdims=True))) ** 2)

    a = A + 0.3j * RNG.standard_normal(A.shape)
    np.testing.assert_allclose(srcgrad.grad(loss)(a, Y), numeric_grad(loss, (a, Y), 0),
                               rtol=1e-6, atol=1e-8)
