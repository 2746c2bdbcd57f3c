"""A name bound to a callable more than once, then called (issue 14): ``pp = partial(f, 1.0);
pp = partial(f, 2.0); pp(x)``, a function variable rebound in a branch or a loop. Each call
calls what Python's would; values equal Python's, gradients are checked against central
differences in float64 in reverse and forward mode, and at second order.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import hessian_by_differences

import srcgrad
from srcgrad import SrcgradError

X = np.array([0.3, -0.7, 1.1, 0.5])


def _scaled(a, x):
    return a * np.sin(x)


class Layer:
    def __init__(self, w):
        self.w = w

    def scale(self, x):
        return np.tanh(self.w * x)


A, B = Layer(0.5), Layer(-1.5)


def partial_bound_twice(x):
    pp = functools.partial(_scaled, 1.0)
    y = pp(x)
    pp = functools.partial(_scaled, x[1])
    return np.sum(pp(x) * y)


def rebound_in_a_branch(x):
    g = np.sin
    if x[0] > 0:
        g = np.cos
    return np.sum(g(x) * x)


def rebound_in_a_loop(x):  # the call on the next trip sees the later binding
    g = np.sin
    y = x
    for _ in range(3):
        y = g(y) * x
        g = np.cos
    return np.sum(y)


def bound_methods_rebound(x):
    h = A.scale
    if x[2] > 0:
        h = B.scale
    y = h(x)
    h = A.scale
    return np.sum(h(y))


def _apply_twice(x, c):
    f = np.exp
    if c:
        f = np.tanh
    return f(x)


def rebound_in_a_helper(x):
    return np.sum(_apply_twice(x, x[0] > 0) + _apply_twice(x, x[1] > 0))


CASES = [partial_bound_twice, rebound_in_a_branch, rebound_in_a_loop, bound_methods_rebound,
         rebound_in_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "-x"])
def test_a_name_bound_twice_calls_what_it_holds(f, x):
    value, _ = srcgrad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    check_grad(f, (x,))
    _, t = srcgrad.jvp(f)(x, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (x,), 0)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [partial_bound_twice, rebound_in_a_branch, rebound_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_name_bound_twice_at_second_order(f):
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


def held_in_a_list_too(x):
    g = np.sin
    if x[0] > 0:
        g = np.cos
    fs = [g]
    return np.sum(fs[0](x))


def test_a_rebound_name_also_used_as_a_value_is_still_refused():
    with pytest.raises(SrcgradError, match="cannot resolve"):
        srcgrad.grad(held_in_a_list_too)(X)
