"""``f(*xs)`` of a list appended to in a ``while`` loop or a loop over ``range(len(x))``: its
length is known only when it runs, but Python's call takes only the lengths ``f``'s positional
parameters allow. The call is spelled for each of those, chosen by ``len(xs)``, after a check
that raises Python's TypeError for any other (normalize/appended_spreads.py ``arity_spread``).
Before, it was refused at the star.

Checked against central differences in float64 (value_and_grad in both arguments, jvp; hvp for
one); each test fails on the code before (refused)."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import grad

X = np.array([0.5, -1.2, 0.8])
T = np.array([0.3, -0.7, 0.2])


def _f3(a, b, c=2.0):
    return np.sum(a * b) * np.mean(c)


def in_a_while_loop(c, x):
    xs = [x]
    k = 0
    while k < 1:
        xs.append(x * c)
        k = k + 1
    return _f3(*xs)


def in_a_range_len_loop(c, x):
    xs = []
    for i in range(len(x) - 1):
        xs.append(x * (c + i))
    return _f3(*xs)


def in_a_branch_of_the_loop(c, x):
    xs = [x]
    for i in range(len(x)):
        if i < 2:
            xs.append(np.sin(x) * c)
    return _f3(*xs)


def after_a_positional_argument(c, x):
    xs = []
    k = 0
    while np.sum(x) * k < 3.0 and k < 2:
        xs.append(x * c)
        k = k + 1
    return _f3(x, *xs)


def with_a_keyword(c, x):
    xs = []
    for i in range(len(x) - 1):
        xs.append(x * (c + i))
    return _f3(*xs, c=c)


def of_a_lambda(c, x):
    g = lambda p, q: np.sum(p * q)  # noqa: E731
    xs = []
    for i in range(len(x) - 1):
        xs.append(x * (c + i))
    return g(*xs)


def _collected(vs, c):
    out = []
    k = 0
    while k < len(vs):
        out.append(vs[k] * c)
        k = k + 1
    return _f3(*out)


def in_a_helper(c, x):
    return _collected([x, np.cos(x)], c)


CASES = [in_a_while_loop, in_a_range_len_loop, in_a_branch_of_the_loop,
         after_a_positional_argument, with_a_keyword, of_a_lambda, in_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_spelled_for_the_lengths_the_function_takes(f):
    check_both_and_jvp(f, 1.3, X, T)


def test_second_order():
    check_hvp_in_x(in_a_range_len_loop, 1.3, X, T)


def too_many(c, x):
    xs = [x]
    for i in range(len(x)):
        xs.append(x * (c + i))
    return _f3(*xs)


def too_few(c, x):
    xs = []
    k = 0
    while k < 1:
        xs.append(x * c)
        k = k + 1
    return _f3(*xs)


@pytest.mark.parametrize("f", [too_many, too_few], ids=lambda f: f.__name__)
def test_another_length_raises_pythons_type_error(f):
    with pytest.raises(TypeError):
        f(1.3, X)  # (Python's own)
    with pytest.raises(TypeError, match=r"_f3\(\) takes from 2 to 3 positional arguments"):
        grad(f, wrt=1)(1.3, X)
