"""Calls whose shape is known when the code is read (issue 14, item 6): call-site unpacking of a
tuple, list or dict written in the function, loops over a tuple of functions, and
``statistics.fmean``. Each is checked against central differences in float64 (reverse and
forward mode), and at second order; where the shape is not known, a located error says what to
write."""

import statistics

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import check_second_order

import srcgrad
from srcgrad import grad, jvp


def combine(a, b, c=1.0):
    return a * b + c


def unpacks_literals(x):
    pair = (x[0], x[1])
    return combine(*pair) + combine(*[x[1], x[2]], **{"c": np.sin(x[0])})


def unpacks_a_dict_name(x):
    kw = {"c": x[2] ** 2, "b": x[1]}
    return combine(x[0], **kw) * kw["b"]


def unpacks_a_list_name(x):
    xs = [x[0], np.exp(x[1])]
    return combine(*xs, c=len(xs) * 1.0)


def step(v):
    return v * 1.5 + np.sin(v)


STEPS = (np.tanh, step)


def loops_over_literal_functions(x):
    for f in (np.tanh, step, np.cos):
        x = f(x)
    return np.sum(x)


def loops_over_local_functions(x):
    square = lambda v: v * v  # noqa: E731
    fs = [step, square]
    total = 0.0
    for f in fs:
        total = total + np.sum(f(x))
    return total


def loops_over_global_functions(x):
    for f in STEPS:
        x = f(x) * 0.9
    return np.sum(x ** 2)


def apply_all(fs, v):
    for f in fs:
        v = f(v)
    return v


def passes_functions_to_a_loop(x):
    return np.sum(apply_all((step, np.exp), x))


def fmean_of_a_list(x):
    return statistics.fmean([x[0], x[1] * 2.0, np.sin(x[2])]) ** 2


def fmean_of_an_array(x):
    return statistics.fmean(x) * x[0]


def weighted_fmean(x):
    return statistics.fmean([x[0], x[1]], weights=[x[2], 2.0]) ** 2


X = np.array([0.3, -0.7, 1.1])
CASES = [unpacks_literals, unpacks_a_dict_name, unpacks_a_list_name,
         loops_over_literal_functions, loops_over_local_functions, loops_over_global_functions,
         passes_functions_to_a_loop, fmean_of_a_list, fmean_of_an_array, weighted_fmean]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_and_forward_against_differences(f):
    check_grad(f, (X,))
    t = np.array([1.0, -0.5, 2.0])
    value, tangent = jvp(f)(X, t)
    assert value == f(X)  # the same value, fmean's rounding included
    assert tangent == pytest.approx(numeric_grad(f, (X,), 0) @ t, rel=1e-6)


@pytest.mark.parametrize("f", [unpacks_literals, loops_over_global_functions,
                               passes_functions_to_a_loop, weighted_fmean],
                         ids=lambda f: f.__name__)
def test_second_order(f):
    check_second_order(f, (X,))


def unpacks_a_parameter(x, xs):
    return combine(*xs)


def unpacks_a_changed_list(x):
    xs = [x[0], x[1]]
    xs.append(x[2])
    return combine(*xs)


def unpacks_a_parameter_dict(x, kw):
    return combine(x[0], **kw)


@pytest.mark.parametrize("f, args", [(unpacks_a_parameter, (X, (1.0, 2.0))),
                                     (unpacks_a_changed_list, (X,)),
                                     (unpacks_a_parameter_dict, (X, {"b": 1.0}))],
                         ids=["unpacks_a_parameter", "unpacks_a_changed_list",
                              "unpacks_a_parameter_dict"])
def test_unpacking_of_a_list_grown_by_appends_and_of_a_parameter(f, args):
    """The length (keys) known at transform time: a list the function grows by appends in its
    own block; a parameter's length or keys (the derivative is specialized per length, keys)."""
    check_grad(f, args)
    t = np.array([1.0, -0.5, 2.0])
    value, tangent = jvp(f)(*args, t)
    assert value == f(*args)
    assert tangent == pytest.approx(numeric_grad(f, args, 0) @ t, rel=1e-6)


def loops_over_passed_functions(x, fs, hooks):
    for f in fs:
        x = f(x)
    for k in hooks:
        x = hooks[k](x) * 0.9
    for g in hooks.values():
        x = g(x)
    for name, g in hooks.items():
        x = g(x) * (1.0 + 0.1 * len(name))
    return np.sum(x ** 2)


def loops_over_a_changed_dict(x, hooks):
    hooks["c"] = np.cos
    for k in hooks:
        x = hooks[k](x)
    return np.sum(x)


def test_loops_over_a_tuple_or_dict_of_functions_passed():
    # `for g in fs` of the differentiated function's own parameter was `cannot resolve g`:
    # the derivative is now specialized per tuple (dict) of functions passed, and unrolled
    hooks = {"a": step, "b": np.tanh}
    for fs in ((np.tanh, step), (step,)):
        check_grad(loops_over_passed_functions, (X, fs, hooks))
        t = np.array([1.0, -0.5, 2.0])
        _, tangent = jvp(loops_over_passed_functions)(X, fs, hooks, t)
        want = numeric_grad(loops_over_passed_functions, (X, fs, hooks), 0) @ t
        assert tangent == pytest.approx(want, rel=1e-6)
    check_second_order(loops_over_passed_functions, (X, (np.tanh, step), hooks))
    # a dict the function changes: what it holds is known only when it runs
    with pytest.raises(srcgrad.SrcgradError, match="cannot resolve") as info:
        grad(loops_over_a_changed_dict)(X, {"a": step})
    assert "test_static_calls.py" in str(info.value)


class _Block:
    def __init__(self, w):
        self.w = w

    def scale(self, v):
        return np.sin(v) * self.w


def loops_over_passed_methods(x, fs):
    for f in fs:
        x = f(x)
    return np.sum(x)


def test_loops_over_a_tuple_of_bound_methods_passed():
    # specialized per (method, object) passed; the object's field is read when it runs
    a, b = _Block(2.0), _Block(3.0)
    df = grad(loops_over_passed_methods)
    for w in (2.0, 5.0):
        a.w = w
        fs = (a.scale, b.scale)
        want = numeric_grad(loops_over_passed_methods, (X, fs), 0)
        np.testing.assert_allclose(df(X, fs), want, rtol=1e-6, atol=1e-8)
