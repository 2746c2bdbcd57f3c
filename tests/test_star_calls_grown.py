"""``f(*xs)`` / ``f(**kw)`` of a list (dict) the function grows by appends (writes at constant
keys) whose count is known when the code is read: in its own block and in loops over a range
of constants (normalize/appended_spreads.py); against central differences, one at second order.
What is known only when it runs stays refused, at the ``*``."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x, numeric_grad
from test_errors import where_is

from srcgrad import grad, hvp, jvp
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.7, -1.3, 2.1])
T = np.array([0.3, -0.5, 0.8])


def _three(a, b, c=0.0):
    return a * b + c * a


def _total(*vs):
    s = 0.0
    for v in vs:
        s = s + v * v
    return s


def appended_in_a_range_loop(c, x):
    xs = []
    for k in range(3):
        xs.append(x[k] * c)
    return _three(*xs)


def nested_loops_and_reads(c, x):
    xs = [x[0]]
    for i in range(2):
        for j in range(1, 3):
            xs.append(x[j] * c * (i + 1))
    t = xs[0] + len(xs)
    return _total(*xs) * t


def keys_written(c, x):
    kw = {"a": x[0]}
    kw["b"] = x[1] * c
    kw["a"] = x[2]
    return _three(**kw)


def keys_written_in_a_loop(c, x):
    kw = {}
    for n in ("a", "b", "c"):
        kw[n] = x[0] * c + x[1]
    return _three(**kw) + x[2]


@pytest.mark.parametrize("f", [appended_in_a_range_loop, nested_loops_and_reads, keys_written,
                               keys_written_in_a_loop], ids=lambda f: f.__name__)
def test_spelled_out(f):
    check_both_and_jvp(f, 0.6, X, T)


def test_second_order():
    check_hvp_in_x(nested_loops_and_reads, 0.6, X, T)


def appended_in_a_while_loop(c, x):
    xs = [x[0]]
    while len(xs) < 3:
        xs.append(x[1] * c)
    return _total(*xs)


def appended_len_times(c, x):
    xs = []
    for k in range(len(x)):
        xs.append(x[k] * c)
    return _total(*xs)


def passed_before(c, x):
    xs = [x[0]]
    _grow(xs, c)
    return _total(*xs)


def _grow(xs, c):
    xs.append(c)


@pytest.mark.parametrize("f", [appended_in_a_while_loop, appended_len_times, passed_before],
                         ids=lambda f: f.__name__)
def test_known_only_when_it_runs_is_refused_at_the_star(f):
    lineno, offset, _ = where_is(f, "*xs")
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f, wrt=1)
    assert (info.value.lineno, info.value.offset) == (lineno, offset)
    assert "pass the elements" in str(info.value)


# --- `f(*p)` of an inlined helper's own parameter, given a tuple: JAX's `cls(*children)` ------


def _call_with(f, args):
    return f(*args)


def tuple_passed_to_a_helper(c, x):
    t = (x, c, x[0])
    return np.sum(_call_with(_three, t)) + np.sum(_call_with(_three, (c, x)))


class _Box:
    def __init__(self, a):
        self.a = a
        self.a2 = 2.0 * a


def _reads_derived(b, x):
    return np.sum(b.a2 * x * b.a)


def test_a_helpers_parameter_given_a_tuple():
    check_both_and_jvp(tuple_passed_to_a_helper, 0.6, X, T)
    check_hvp_in_x(tuple_passed_to_a_helper, 0.6, X, T)


def test_unflatten_written_with_a_star():
    import srcgrad

    class Box(_Box):
        pass

    srcgrad.register_pytree(Box, lambda b: ((b.a,), None), lambda aux, ch: Box(*ch))
    b = Box(np.array([0.5, 1.5, -0.7]))
    g = grad(_reads_derived)(b, X)
    np.testing.assert_allclose(g.a, 4.0 * b.a * X, rtol=1e-12)


def _appends_then_spreads(xs):
    xs.append(1.0)
    return _three(*xs)


def list_changed_by_the_helper(c, x):
    t = (x, c)
    return np.sum(_call_with(_three, t)) + np.sum(_appends_then_spreads([x, c]))


def test_a_parameter_the_helper_changes_is_refused_at_its_star():
    lineno, offset, _ = where_is(_appends_then_spreads, "*xs")
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(list_changed_by_the_helper, wrt=1)
    assert (info.value.lineno, info.value.offset) == (lineno, offset)
    assert "a parameter given a tuple written in the caller" in str(info.value)


# --- `f(*xs)` / `f(**kw)` of the differentiated function's own parameter: per length (keys) --


def unpacks_a_parameter(c, x, xs):
    return np.sum(_three(*xs)) * c + np.sum(x)


def sums_squares(xs, x):
    return np.sum(_total(*xs) * x)


def passes_keywords(kw, x):
    return np.sum(_three(x, **kw))


def test_a_parameter_unpacked_specializes_per_length():
    for xs in ((X, 2.0), (X, 2.0, X[0])):  # (a derivative per length)
        g = grad(unpacks_a_parameter, wrt=(0, 1))(0.6, X, xs)
        want = [numeric_grad(unpacks_a_parameter, [0.6, X, xs], k) for k in (0, 1)]
        np.testing.assert_allclose(g[0], want[0], rtol=1e-6)
        np.testing.assert_allclose(g[1], want[1], rtol=1e-6)
    xs, n = [X[0], X[1] * 2.0], np.sum(X)
    np.testing.assert_allclose(grad(sums_squares)(xs, X), [2 * xs[0] * n, 2 * xs[1] * n])
    assert np.isclose(jvp(sums_squares)(xs, X, [1.0, 0.0])[1], 2 * xs[0] * n)
    np.testing.assert_allclose(hvp(sums_squares)(xs, X, [1.0, 0.0]), [2 * n, 0.0])
    np.testing.assert_allclose(grad(passes_keywords, wrt=1)({"b": 2.0, "c": 1.0}, X),
                               np.full(3, 3.0))


def _euler(rhs, y, h, args):
    for _ in range(3):
        y = y + h * rhs(y, *args)
    return y


def _decay(y, k, w):
    return -k * y + w


def integrates(c, x, args):
    return np.sum(_euler(_decay, x, 0.1, args) * x) * c


def test_a_helper_unpacks_the_functions_tuple_parameter():
    # the integrator's `rhs(y, *args)` with `args` the differentiated function's own tuple:
    # specialized per its length (a tuple keeps it wherever it goes)
    args = (0.7, 0.2)
    g = grad(integrates, wrt=(0, 1))(0.6, X, args)
    want = [numeric_grad(integrates, [0.6, X, args], k) for k in (0, 1)]
    np.testing.assert_allclose(g[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(g[1], want[1], rtol=1e-6)
    assert np.isclose(jvp(integrates, wrt=1)(0.6, X, args, T)[1], want[1] @ T, rtol=1e-6)
    g = grad(integrates, wrt=2)(0.6, X, args)
    for i in range(2):
        step = np.zeros(2)
        step[i] = 1e-6
        want = (integrates(0.6, X, tuple(args + step)) - integrates(0.6, X, tuple(
            args - step))) / 2e-6
        assert np.isclose(g[i], want, rtol=1e-6)
    with pytest.raises(UnsupportedSyntaxError, match="own parameter holding a tuple"):
        grad(integrates, wrt=1)(0.6, X, list(args))  # (a list may change its length)
