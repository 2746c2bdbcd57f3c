"""``f(*xs)`` / ``f(**kw)`` of a list (dict) the function grows by appends (writes at constant
keys) whose count is known when the code is read: in its own block and in loops over a range
of constants (normalize/appended_spreads.py); against central differences, one at second order.
What is known only when it runs stays refused, at the ``*``."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x
from test_errors import where_is

from srcgrad import grad
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


def appended_in_a_branch(c, x):
    xs = [x[0]]
    if x[1] > 0:
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


@pytest.mark.parametrize("f", [appended_in_a_branch, appended_len_times, passed_before],
                         ids=lambda f: f.__name__)
def test_known_only_when_it_runs_is_refused_at_the_star(f):
    lineno, offset, _ = where_is(f, "*xs")
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f, wrt=1)
    assert (info.value.lineno, info.value.offset) == (lineno, offset)
    assert "pass the elements" in str(info.value)
