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

import re

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import UnsupportedSyntaxError, grad

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


def apply(f, x):
    return np.sum(f(x) * x)


def apply_twice(f, x):
    return apply(f, x) * np.sum(f(2.0 * x))


def make(c):
    return lambda t: c * np.sin(t)


def lambda_kept_and_passed_by_itself(c, x):
    for k in range(3):
        g = lambda t, a=c * (k + 1): a * np.cos(t)  # noqa: E731
        if k == 1:
            h = g
    return apply(h, x) + apply_twice(h, x) + np.sum(h(x))


def factory_result_kept_and_passed_by_itself(c, x):
    for k in range(3):
        g = make(c * (k + 1.0))
        if k == 2:
            h = g
    return apply_twice(h, x) * c


def items_passed_by_themselves(c, x):
    fs = [np.sin]
    if x[0] > 0:
        fs.append(make(c))
    for k in range(2):
        fs.append(lambda t, a=c * k: a * t * t)
    s = apply(fs[0], x) + apply_twice(fs[-1], x)
    for i in range(len(fs)):
        if apply(fs[i], x) > 0:
            s = s + apply(fs[i], c * x)
    return s


def sum_of_squares(fs, x):
    return sum([np.sum(f(x) ** 2) for f in fs])


def given_to_comprehensions(c, x):
    fs = [np.sin]
    if x[0] > 0:
        fs.append(make(c))
    for k in range(2):
        fs.append(lambda t, a=c * (k + 1): a * t * t)
    s = sum(np.sum(f(x) * x) for f in fs if np.sum(f(x)) > -10.0)
    ys = {k: f(c * x) for f in fs for k in range(2)}
    return s + sum_of_squares(fs, x) + np.sum(ys[1]) * len([f(x) for f in fs])


def grown_by_plus_equals(c, x):
    fs = [np.sin]
    for k in range(2):
        fs += [lambda t, a=c * (k + 1): a * np.cos(t)]
    if x[0] > 0:
        fs += (make(c), np.tanh)
    fs = fs + [lambda t, b=c * c: b * t]  # (no other name holds the list: as `fs.extend`)
    s = 0.0
    for i in range(len(fs) - 1):  # (a loop over its indices, not over it)
        s = s + np.sum(fs[i](x))
    return sum_of_squares(fs, x) + np.sum(fs[-1](x)) + s


def nested_defs_with_defaults_appended_in_loops(c, x):
    fs = [np.cos]
    for k in range(2):
        def g(t, a=c * (k + 1), d=2.0):
            u = a * np.sin(t)
            return u * d + c
        fs.append(g)
    i = 0
    while i < 2:
        b = c * i

        def h(t, b=b):
            return b * t * t
        b = 5.0  # (the default is the value when the def runs)
        fs.append(h)
        i += 1
    return sum_of_squares(fs, x) + apply(fs[1], x) + np.sum(fs[2](x))


def tuple_rebound_in_a_branch(c, x):
    t = (np.sin, np.cos)
    if x[0] > 0:
        t = (np.tanh, lambda v, a=c: a * v * v)
    return sum_of_squares(t, x) + apply(t[-1], x)


def list_rebound_in_a_loop(c, x):
    fs = [np.sin]
    for k in range(2):
        if x[k] > 0:
            fs = [lambda v, a=c * (k + 1): a * np.cos(v), np.tanh]
    fs.append(make(c))
    return sum_of_squares(fs, x) + np.sum(fs[0](x))


def items_by_computed_indices(c, x):
    fs = [np.sin]
    if x[0] > 0:
        fs.append(make(c))
    for k in range(2):
        fs.append(lambda t, a=c * (k + 1): a * t)
    s = 0.0
    for i in range(len(fs) - 1):
        s = s + np.sum(fs[i + 1](x) * fs[i](x))
    g = fs[len(fs) - 2]
    return s + np.sum(g(x)) + apply(fs[-(len(fs) - 1)], x)


BRANCHED = [items_called_with_keywords, items_by_computed_indices, items_passed_by_themselves,
            given_to_comprehensions, grown_by_plus_equals, tuple_rebound_in_a_branch,
            list_rebound_in_a_loop]
STRAIGHT = [items_looped_over_with_a_keyword, lambda_kept_and_passed_by_itself,
            factory_result_kept_and_passed_by_itself,
            nested_defs_with_defaults_appended_in_loops]


@pytest.mark.parametrize("f, x", [(f, x) for f in BRANCHED for x in (X, X_NEG)] + [
    (f, X) for f in STRAIGHT])
def test_used_as_python_uses_them(f, x):
    # (the functions that branch on x[0] at a point taking each branch)
    check_both_and_jvp(f, C, x, T)


@pytest.mark.parametrize("f", [lambda_kept_and_passed_by_itself])
def test_at_second_order(f):
    check_hvp_in_x(f, C, X, T)


def keep(f, x):
    return [f, x]


def kept_and_stored_by_the_helper(c, x):
    for k in range(3):
        g = make(c * (k + 1.0))
        if k == 1:
            h = g
    return np.sum(keep(h, x)[0](x))


def item_passed_on_a_side_python_may_skip(c, x):
    fs = [np.sin]
    if x[0] > 0:
        fs.append(lambda t, a=c: a * t)
    return apply(fs[-1], x) if c > 0 else 0.0


def apply_scaled(a, f, x):
    return apply(f, x) * a


def item_index_rebound_by_the_call(c, x):
    fs = [np.sin]
    if x[0] > 0:
        fs.append(lambda t, a=c: a * t)
    i = 0
    return apply_scaled((i := len(fs) - 1), fs[i], x)  # (reads the item after the `:=`)


def kept_and_mapped(c, x):
    for k in range(3):
        g = make(c * (k + 1.0))
        if k == 1:
            h = g
    return np.sum(np.array(list(map(h, [x[0], x[1]]))))


@pytest.mark.parametrize("f, says", [
    (kept_and_stored_by_the_helper, "given to `keep` as `f`, which it assigns or reads"),
    (kept_and_mapped, "a function that holds values of its own (made anew on each trip"),
    (item_passed_on_a_side_python_may_skip, "used as a value here"),
    (item_index_rebound_by_the_call, "used as a value here")])
def test_other_uses_are_refused_where_they_are(f, says):
    with pytest.raises(UnsupportedSyntaxError, match=re.escape(says)):
        grad(f, wrt=1)(C, X)
