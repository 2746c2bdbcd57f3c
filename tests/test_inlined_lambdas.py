"""A lambda given to ``map``, ``filter`` or ``sorted(key=...)`` inside a helper the function
calls (inlined) is written as a comprehension, as it is in the function itself. Before, the
helper's copy was refused ("a lambda that is not assigned to a name of its own once") although
the same line in the differentiated function worked.

Checked against central differences in float64 (value_and_grad in both arguments, jvp; hvp for
some); each test fails on the code before (refused) but two guards: a lambda a helper passes on
to another helper (which worked before) and ``min(key=lambda ...)`` (refused in both places)."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import SrcgradError, grad

X = np.array([0.3, -0.5, 0.7])
T = np.array([0.2, 0.4, -0.6])


def squares(xs):
    return sum(map(lambda v: np.sum(v * v), xs))


def summed_map(c, x):
    return squares([x, c * x])


def scaled(xs, c):
    v = c * 2.0  # (a local of the helper named as the lambda's parameter)
    return sum(map(lambda v: np.sum(v * c), xs)) + v


def map_reads_helper_names(c, x):
    v = np.sum(x)
    return scaled([x, x * x], c * v) * v


def late(xs, c):
    m = map(lambda v: np.sum(v * c), xs)
    c = c * 5.0  # (Python's map calls the lambda when sum asks: it reads this c)
    return sum(m)


def map_read_after_a_change(c, x):
    return late([x, np.sin(x)], c)


def pairs(xs, ys):
    return list(map(lambda a, b: a * b, xs, ys))


def map_of_two_lists(c, x):
    ps = pairs([x, x * x], [np.cos(x), c * x])
    return np.sum(ps[0]) + np.sum(ps[1] * ps[0])


def ordered(xs, w):
    s = 0.0
    for v in sorted(xs, key=lambda v: np.sum(v * w)):
        s = s * 0.5 + np.sum(np.sin(v))
    return s


def sorted_by_a_key(c, x):
    return ordered([x, -2.0 * x, c * x * x], 3.0)


def positive(xs, t):
    return [np.sum(v) * t for v in filter(lambda v: np.sum(v) > t, xs)]


def filtered(c, x):
    out = positive([x, -2.0 * x, c * x], 0.1)
    return sum(out) + len(out)


def tanh_sum(xs):
    return sum(map(lambda v: np.sum(np.tanh(v)), xs))


def twice(xs, y):
    return tanh_sum(xs) * tanh_sum([y])


def helper_inlined_twice_and_nested(c, x):
    return twice([x, c * x], x * x)


def in_a_loop(xs):
    tot = 0.0
    for i in range(len(xs)):
        tot = tot + sum(map(lambda v: np.sum(v * xs[i]), xs))
    return tot


def map_in_a_helper_loop(c, x):
    return in_a_loop([x, x + c])


def chained(xs):
    ys = list(filter(lambda v: np.sum(v) > 0.0, map(lambda v: v * 3.0, xs)))
    return sum(np.sum(y * y) for y in ys)


def filter_of_a_map(c, x):
    return chained([x, -x, c * x * x])


def apply(fn, y):
    return fn(y)


def cubes(y, c):
    return apply(lambda v: np.sum(v ** 3) * c, y)


def lambda_passed_on_by_a_helper(c, x):
    return cubes(x * 2.0, c)


CASES = [summed_map, map_reads_helper_names, map_read_after_a_change, map_of_two_lists,
         sorted_by_a_key, filtered, helper_inlined_twice_and_nested, map_in_a_helper_loop,
         filter_of_a_map, lambda_passed_on_by_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_lambda_given_to_a_builtin_in_a_helper(f):
    check_both_and_jvp(f, 1.3, X, T)


@pytest.mark.parametrize("f", [summed_map, sorted_by_a_key, filter_of_a_map],
                         ids=lambda f: f.__name__)
def test_second_order(f):
    check_hvp_in_x(f, 1.3, X, T)


def smallest(xs):
    return np.sum(min(xs, key=lambda v: np.sum(v)))


def test_a_lambda_given_to_another_builtin_stays_refused():
    # min/max(key=lambda) are refused in the function itself too: the helper's copy the same
    with pytest.raises(SrcgradError, match=r"(?s)lambda that is not assigned.*test_inlined_"):
        grad(lambda x: smallest([x, 2.0 * x]))(X)
