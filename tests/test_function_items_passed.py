"""Functions of a list changed at run time, and functions remade on each trip of a loop and
kept past it, used in the ways the first work on them refused (issue 14): items called with
keyword arguments (``fs[0](x, scale=2.0)``), a kept function or an item passed by itself to a
helper (``apply(h, x)``, ``apply(fs[0], x)``), a list given to a comprehension (``[f(x) for
f in fs]``), a list grown by ``fs += [g]``, a nested ``def`` with default values appended in a
loop (normalize/lambda_lists.py, lambda_lists_passed.py).

Checked against central differences in float64 (value_and_grad in both arguments, jvp; hvp
against differences of the gradient); each test fails on the code before (refused: "the
lambda ... used as a value", "the local function `g` used as a value", "a later trip makes it
anew")."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

C = 1.3
X = np.array([0.3, -0.5, 0.7])
X_NEG = np.array([-0.3, -0.5, 0.7])
T = np.array([0.2, 0.4, -0.6])


def items_called_with_keywords(c, x):
    fs = []
    for k in range(2):
        fs.append(lambda t, scale=c * k, p=2: scale * t * p)
    if x[0] > 0:
        fs.append(lambda t, scale=c, p=1: scale * np.sin(t) * p)
    return np.sum(fs[0](x, scale=2.0) + fs[1](x, p=3) + fs[-1](t=x, scale=c * c) + fs[-1](x))


def items_looped_over_with_a_keyword(c, x):
    fs = []
    for k in range(2):
        fs.append(lambda t, scale=c * k: scale * np.cos(t))
    s = 0.0
    for f in fs:
        s = s + f(x, scale=c + 1.0)
    return np.sum(s * x)


CASES = [items_called_with_keywords, items_looped_over_with_a_keyword]


@pytest.mark.parametrize("x", [X, X_NEG])
@pytest.mark.parametrize("f", CASES)
def test_used_as_python_uses_them(f, x):
    check_both_and_jvp(f, C, x, T)


@pytest.mark.parametrize("f", [items_called_with_keywords])
def test_at_second_order(f):
    check_hvp_in_x(f, C, X, T)
