"""A comprehension on a side of ``and`` / ``or`` / ``x if c else y`` that Python may skip, in a
choice that is the statement's whole value, is built only on that side, as Python builds it
(normalize/skipped_sides.py). Before, ``control`` built it before the statement on every path:
``xs[5]`` of a short list raised an IndexError where Python runs; a comprehension calling a
function that changes a value in place, or holding a ``:=``, was refused.

Checked against central differences in float64 (value_and_grad in both arguments, jvp); each
test fails on the code before (IndexError, or refused)."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import grad, source

X = np.array([0.3, -0.5, 0.7])
T = np.array([0.2, 0.4, -0.6])


def bump(y, v):
    y[0] = y[0] + v
    return v


def raises_on_the_side_skipped(c, x):
    xs = [x[0]]
    r = x[1] * c if c > 0 else sum([xs[5] for k in range(2)])
    return r * x[2]


def changes_on_the_side_skipped(c, x):
    y = x * 1.0
    r = c > 10.0 or [bump(y, c * k) for k in range(2)]
    return np.sum(y * y) * c + 0.0 * len(r)


def changes_on_the_side_taken(c, x):
    y = x * 1.0
    r = c > 0 and c < 10.0 and [bump(y, c * k) for k in range(1, 3)]
    return np.sum(y * y) * c + len(r or [])


def returned_from_a_branch(c, x):
    y = x * 1.0
    if c > 0:
        return np.sum(y) * c or sum(bump(y, c * k) for k in range(2))
    return np.sum(y * y)


def binds_in_a_comprehension_on_one_side(c, x):
    last = c
    ys = [(last := v * c) for v in x] if c > 0 else []
    return last * np.sum(np.array(ys))


def inside_a_larger_expression(c, x):
    xs = [x[0], x[1]]
    y = np.sum(x * x) * c + (c < 0.9 or sum([xs[5] for k in range(2)])) * x[2]
    return y + max(c, 0.5) * (x[0] if c > 0 else sum(v for v in xs[7:9])) + len(xs)


CASES = [raises_on_the_side_skipped, inside_a_larger_expression, changes_on_the_side_skipped,
         changes_on_the_side_taken,
         returned_from_a_branch, binds_in_a_comprehension_on_one_side]


@pytest.mark.parametrize("c", [0.7, -0.6])
@pytest.mark.parametrize("f", CASES)
def test_built_on_its_side_only(f, c):
    if f is raises_on_the_side_skipped and c < 0:
        with pytest.raises(IndexError):  # (Python takes that side there: its own error)
            f(c, X)
        with pytest.raises(IndexError):
            grad(f, wrt=1)(c, X)
        return
    check_both_and_jvp(f, c, X, T)


def test_at_second_order():
    check_hvp_in_x(changes_on_the_side_taken, 0.7, X, T)


def test_generated_code_builds_it_in_the_branch():
    text = source(grad(raises_on_the_side_skipped, wrt=1))
    before, branch = text.split("if ", 1)
    assert "xs[5]" not in before
    assert "xs[5]" in branch.split("else:", 1)[1].split("r = ", 1)[0]
