"""``f(*xs)`` of a list appended to in a branch (also in a loop over a range of constants):
the lengths it may have at the call are known when the code is read, and the call chooses, by
``len(xs)``, the call spelled out for that length (normalize/appended_spreads.py); a dict
filled at the same keys in both branches is spelled out as one. Against central differences
(value_and_grad in both arguments, jvp) at points taking each branch; each test fails on the
code before (refused at the ``*``)."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import grad, source

X = np.array([0.7, -1.3, 2.1])
X_OTHER = np.array([-0.4, 0.9, 1.5])
T = np.array([0.3, -0.5, 0.8])


def _three(a, b, c=1.0):
    return a * b + c * a


def _total(*vs):
    s = 0.0
    for v in vs:
        s = s + v * v
    return s


def lengths_of_two_branches(c, x):
    xs = [x[0]]
    if x[1] > 0:
        xs.append(x[1] * c)
        xs.append(c)
    else:
        xs.append(x[2])
    y = xs[0] if len(xs) > 2 else 1.0
    return _three(*xs) * y + _total(*xs, c)


def appended_in_a_branch_in_a_loop(c, x):
    xs = [c]
    for k in range(3):
        if x[k] > 0:
            xs.append(x[k] * c)
    return _total(*xs, *xs) + len(xs)


def keys_written_in_both_branches(c, x):
    kw = {"a": x[0]}
    if x[1] > 0:
        kw["b"] = x[1] * c
    else:
        kw["b"] = c
    return _three(**kw)


CASES = [lengths_of_two_branches, appended_in_a_branch_in_a_loop,
         keys_written_in_both_branches]


@pytest.mark.parametrize("x", [X, X_OTHER])
@pytest.mark.parametrize("f", CASES)
def test_spelled_out_for_each_length(f, x):
    check_both_and_jvp(f, 0.6, x, T)


def test_second_order():
    check_hvp_in_x(lengths_of_two_branches, 0.6, X_OTHER, T)


def test_generated_code_chooses_by_the_length():
    text = source(grad(lengths_of_two_branches, wrt=1))
    assert "len_xs_2 = len(xs)" in text and "len_xs_2_eq_2 = len_xs_2 == 2" in text
