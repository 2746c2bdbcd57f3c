"""``:=`` evaluated only sometimes: on the right of ``and`` / ``or``, in a branch of ``a if c
else b``, in a comprehension or a lambda (normalize/walrus.py). Python binds the name only when
that operand runs, and a comprehension's ``:=`` binds in the function: each case against central
differences (value_and_grad in both arguments, jvp), one at second order, both ways of each test."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x
from test_errors import where_is

from srcgrad import grad, source
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.7, -1.3, 2.1])
T = np.array([0.3, -0.5, 0.8])


def right_of_and(c, x):
    s = np.sum(x)
    n = c
    if c > 0 and (n := c * x[0] ** 2) > -10.0:
        s = s + n * x[1]
    return s * n


def right_of_or(c, x):
    m = x[2]
    t = c < 0 or (m := np.sin(c * x[1])) > -2.0
    return m * x[0] + float(t)


def in_a_branch_of_a_choice(c, x):
    y = (m := c * x[0]) if c > 0 else (m := x[1] * x[2])
    return y * m + x[2]


def running_sum(c, x):
    s = 0.0
    ys = [(s := s + c * v) for v in x]
    return s * ys[0] + ys[1] ** 2


def filtered(c, x):
    last = c
    kept = [(last := v * c) for v in x if v > 0]
    return last * np.sum(x) + len(kept)


def summed(c, x):
    return sum((y := c * v * v) for v in x) + y * c


def in_a_while_test(c, x):
    k = 0
    s = c
    t = 0.0
    while k < 3 and (t := s + x[k] ** 2) < 4.0:
        s = t * c
        k = k + 1
    return s + t


def helper(v, c):
    s = 0.0
    if c > 0 and (m := v[0] * c) > -10.0:
        s = m * v[1]
    return s


def through_a_helper(c, x):
    m = x[2]
    return helper(x, c) + m * c


CASES = [right_of_and, right_of_or, in_a_branch_of_a_choice, running_sum, filtered, summed,
         in_a_while_test, through_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("c", [0.6, -0.8])
def test_bound_where_the_operand_runs(f, c):
    check_both_and_jvp(f, c, X, T)


def test_second_order():
    check_hvp_in_x(running_sum, 0.6, X, T)


def test_generated_code_binds_the_name_in_the_branch():
    text = source(grad(right_of_and, wrt=1))
    assert "n = c * x_item_pow_2" in text.split("if bool_both:")[1].split("if ")[0]


def read_before(c, x):
    n = c
    y = n + (c > 0 and (n := x[0]))
    return y * x[1]


def in_a_comprehension_on_one_side(c, x):
    last = c
    n = len([(last := v) for v in x] if c > 0 else [])
    return last * n


@pytest.mark.parametrize("f, marker, why", [
    (read_before, "n := x", "whose name the statement reads before it"),
    (in_a_comprehension_on_one_side, "last := v", "that only one side of"),
])
def test_refused_where_the_order_cannot_be_kept(f, marker, why):
    lineno, offset, line = where_is(f, marker)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f, wrt=1)
    assert (info.value.lineno, info.value.offset) == (lineno, offset)
    assert why in str(info.value) and "on a line of its own" in str(info.value)


# --- the branch of `a and b`, `a if c else b` replays on the truth its test had when it ran ---
# (before, the reverse sweep tested `both` after the branch had rebound it to `b`: a right side
# that is zero lost its gradient, an array one raised; `c` rebound by its own branch likewise)


def and_of_a_value(c, x):
    y = c and x[0] * x[1]
    return y * x[2] + y


def and_of_an_array(c, x):
    y = c and x * 2.0
    return np.sum(y * x)


def choice_rebinding_its_test(c, x):
    k = x[0] > 0
    y = (k := x[1] * 0.0) if k else x[2]
    return (y + c) * x[1] + float(k)


@pytest.mark.parametrize("f, x", [
    (and_of_a_value, np.array([0.0, -1.3, 2.1])),
    (and_of_an_array, X),
    (choice_rebinding_its_test, X),
])
def test_the_branch_replays_on_the_truth_of_its_test(f, x):
    check_both_and_jvp(f, 0.6, x, T)
