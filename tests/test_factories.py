"""A lambda or nested def returned by a helper (a factory, issue 14): ``f = make(a); f(x)``,
the gradient flowing into the captured ``a`` and into ``x``; a nested def returned, a factory
called twice with different captures, its result passed to another helper or put in a list
looped over. The closure is the helper's variables (renamed apart at each call) plus the code,
inlined where it is called. Checked against central differences in float64, at second order
too; each test fails on the code before (refused: "a lambda that is not assigned to a name of
its own once", "the local function `g` used as a value").

A function made again on each trip of a loop that holds values of its own (default values, a
factory's variables) and is kept past its trip by another name or a literal was refused: its
calls would read the values of the last one made (before, a lambda with a default kept so gave
a silently wrong gradient). A lambda's default values are now kept with it
(tests/test_function_values.py), and a factory's arguments with its result
(tests/test_function_lists.py)."""

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import check_second_order

from srcgrad import grad, jvp

A = np.array([0.7, 1.3, -0.4])
X = np.array([0.3, -0.2, 0.5])
T = np.array([0.1, 0.7, -0.3])


def make(c):
    return lambda t: c * t


def make_def(c):
    def g(t):
        return c * np.sin(t)
    return g


def apply(fn, v):
    return fn(v)


def returned_lambda(a, x):
    f = make(a)
    return np.sum(f(x) ** 2)


def returned_def(a, x):
    f = make_def(a)
    return np.sum(f(x) * x)


def called_twice(a, x):
    f = make(a)
    g = make(2.0 * a)
    return np.sum(f(x) * g(x))


def passed_to_a_helper(a, x):
    return np.sum(apply(make_def(a), x) ** 2)


def listed_and_looped_over(a, x):
    fs = [make(a), make_def(a * a)]
    s = 0.0
    for fn in fs:
        s = s + np.sum(fn(x) ** 2)
    return s


@pytest.mark.parametrize("f", [returned_lambda, returned_def, called_twice,
                               passed_to_a_helper, listed_and_looped_over])
def test_a_factorys_function_in_both_arguments(f):
    for k in (0, 1):
        want = numeric_grad(f, [A, X], k)
        np.testing.assert_allclose(grad(f, wrt=k)(A, X), want, rtol=1e-6, atol=1e-9)
        _, t = jvp(f, wrt=k)(A, X, T)
        np.testing.assert_allclose(t, want @ T, rtol=1e-6, atol=1e-9)


def test_second_order():
    # (listed_and_looped_over and the others checked so once by hand: 0.4-0.7 s each)
    check_second_order(called_twice, [A, X], 0)


def kept_from_an_earlier_trip(a, x):
    for k in range(3):
        g = lambda t, c=a * k: c * t  # noqa: E731
        if k == 0:
            h = g
    return np.sum(h(x))


def kept_in_a_dict(a, x):
    for k in range(3):
        g = lambda t, c=a * k: c * t  # noqa: E731
        if k == 0:
            d = {"f": g}
    return np.sum(d["f"](x))


def factory_kept_from_an_earlier_trip(a, x):
    for k in range(3):
        g = make(a * (k + 1.0))
        if k == 0:
            h = g
    return np.sum(h(x))


def factory_called_in_its_trip(a, x):
    s = 0.0
    for k in range(3):
        g = make(a * (k + 1.0))
        s = s + np.sum(g(x) ** 2)
    return s


# (kept_from_an_earlier_trip and kept_in_a_dict work: the name or the dict holds the
# lambda's default values of that trip, tests/test_function_values.py; a factory's result, the
# factory's arguments, tests/test_function_lists.py)
def test_a_factorys_function_remade_in_a_loop_kept_past_its_trip():
    f = factory_kept_from_an_earlier_trip
    np.testing.assert_allclose(grad(f)(A, X), numeric_grad(f, [A, X], 0), rtol=1e-6)


def test_a_factory_called_in_the_trip_that_makes_it():
    np.testing.assert_allclose(grad(factory_called_in_its_trip)(A, X),
                               numeric_grad(factory_called_in_its_trip, [A, X], 0), rtol=1e-6)


def measured_and_looped_over(x, c):
    fs = (np.sin, lambda t: c * t)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) ** 2)
    return s * len(fs) + np.sum(fs[1](x))


def test_a_tuple_holding_a_lambda_that_reads_a_variable_measured_and_looped_over():
    # was "the local function `lambda_2` used as a value" (len(fs) read the tuple)
    for k in (0, 1):
        want = numeric_grad(measured_and_looped_over, [X, A], k)
        np.testing.assert_allclose(grad(measured_and_looped_over, wrt=k)(X, A), want,
                                   rtol=1e-6, atol=1e-9)
