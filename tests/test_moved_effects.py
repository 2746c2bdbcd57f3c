"""A comprehension is built before its statement, on every path (normalize/control.py): one
that calls a function of the user's which changes a value in place is refused unless it is the
statement's whole value (or the whole value of a side of a choice that is the statement's
whole value: built on that side only, normalize/skipped_sides.py). On 130a340 both programs
below gave wrong values and gradients, no error: `skipped_branch` the value 3.63 for Python's
0.83 (`bump` ran though `flag` is False), `before_the_left_operand` 7.93 for 5.13 (`bump` ran
before `np.sum(y * y)`)."""

import numpy as np
import pytest
from gradcheck import check_grad

import srcgrad
from srcgrad import UnsupportedSyntaxError

X = np.array([0.3, 0.5, 0.7])


def bump(y, v):
    y[0] = y[0] + v
    return v


def bump_through_a_view(y, v):
    t = y[0:2]
    t[0] = t[0] + v
    return v


def through_a_view(x):
    y = x * 1.0
    s = np.sum(y * y) + sum(bump_through_a_view(y, x[2]) for k in range(2))
    return s + np.sum(y)


def skipped_branch(x):
    y = x * 1.0
    flag = x[1] > 10.0
    r = flag and [bump(y, x[2]) for k in range(2)]
    return np.sum(y * y) + 0.0 * len(r or [])


def before_the_left_operand(x):
    y = x * 1.0
    s = np.sum(y * y) + sum(bump(y, x[2]) for k in range(2))
    return s + np.sum(y)


def whole_value(x):
    y = x * 1.0
    s = sum(bump(y, x[2]) for k in range(2))
    return s + np.sum(y * y)


def scratch(w, b):
    t = np.zeros(3)
    t[0] = np.sum(w * b)
    t += w
    return np.sum(t * t)


def pure_in_a_larger_expression(x):
    return 0.1 * np.sum(x ** 2) + sum(scratch(x, b) for b in [x, 2.0 * x])


def _count(items):
    return len(items)


def skipped_inside_a_call(x):
    y = x * 1.0
    flag = x[1] > 10.0
    r = _count(flag and [bump(y, x[2]) for k in range(2)] or [])
    return np.sum(y * y) + 0.0 * r


def skipped_inside_a_builtin_call(x):
    y = x * 1.0
    flag = x[1] > 0.1
    r = len(flag and [bump(y, x[2]) for k in range(2)] or [])
    return np.sum(y * y) + 0.5 * r


@pytest.mark.parametrize("f", [skipped_inside_a_call, before_the_left_operand, through_a_view],
                         ids=lambda f: f.__name__)
def test_a_comprehension_calling_a_changing_function_inside_an_expression_is_refused(f):
    with pytest.raises(UnsupportedSyntaxError, match="calling `bump\\w*`, which changes a") as e:
        srcgrad.grad(f)(X)
    assert "test_moved_effects.py" in str(e.value)


@pytest.mark.parametrize("f", [whole_value, pure_in_a_larger_expression, skipped_branch,
                               skipped_inside_a_builtin_call],
                         ids=lambda f: f.__name__)
def test_the_whole_value_or_a_function_writing_only_its_own_arrays_works(f):
    check_grad(f, (X,))
