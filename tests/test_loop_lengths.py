"""A ``for`` loop over a list that its own body makes longer or shorter.

Python's loop over a list tests, at the end of each trip, whether the next position is in the
list as it is then: a loop that appends to the list it runs over (a worklist) visits the new
items too. srcgrad runs the trips the length gave when the loop began; the two agree unless the
body resizes that list. Such a loop ends each trip with Python's own test
(normalize/loop_lengths.py, runtime ``check_trips``), which refuses the run where the trips
differ. Each refused case gave a wrong value and gradient without an error before (the trips of
the list's first length only).

The loops that stay as they were (another list appended to, the list grown on its last trip
only under a test that is then false, a copy looped over, an index in a ``while``) are checked
against central differences, in reverse and forward mode and at second order."""

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

from srcgrad import grad, hvp, jvp
from srcgrad.errors import SrcgradError

X = np.array([0.3, -0.7])
T = np.array([0.4, 0.9])


def appended_while_looped(x):
    vs = [x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) < 3:
            vs.append(np.sin(v))
    return s


def _grow(ws, v):
    ws.append(np.cos(v))


def appended_by_a_helper(x):
    vs = [x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) < 3:
            _grow(vs, v)
    return s


def appended_to_a_dict_item(x):
    d = {"a": [x]}
    s = 0.0
    for v in d["a"]:
        s = s + np.sum(v * v)
        if len(d["a"]) < 3:
            d["a"].append(np.cos(v))
    return s


def enumerated(x):
    vs = [x]
    s = 0.0
    for k, v in enumerate(vs):
        s = s + np.sum(v * v)
        if k < 2:
            vs.append(np.cos(v))
    return s


def zipped(x):
    vs = [x, 2 * x]
    ws = [x, 3 * x, 4 * x]
    s = 0.0
    for v, w in zip(vs, ws):
        s = s + np.sum(v * w)
        if len(vs) < 3:
            vs.append(np.sin(v))
    return s


def extended_by_plus_equals(x):
    vs = [x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) < 3:
            vs += [np.cos(v)]
    return s


def _visit(vs, v):
    if len(vs) < 3:
        vs.append(np.sin(v))
    return np.sum(v * v)


def in_a_comprehension(x):
    vs = [x]
    return sum([_visit(vs, v) for v in vs])


def shifted_while_reversed(x):
    vs = [x, 2 * x, 3 * x]
    s = 0.0
    for v in reversed(vs):
        s = s + np.sum(v * v)
        vs.insert(0, np.sin(v))
        vs.pop()
    return s


def popped_early(x):
    vs = [x, 2 * x, 3 * x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) == 3:
            del vs[2]
    return s


RESIZED = [appended_while_looped, appended_by_a_helper, appended_to_a_dict_item, enumerated,
           zipped, extended_by_plus_equals, in_a_comprehension, shifted_while_reversed,
           popped_early]
REFUSED = "makes longer or shorter|changes before|written into in the loop"  # (the last: pop)


@pytest.mark.parametrize("f", RESIZED)
def test_a_loop_over_a_list_its_body_resizes_is_refused(f):
    f(X)  # (Python runs it)
    with pytest.raises(SrcgradError, match=REFUSED):
        grad(f)(X)
    with pytest.raises(SrcgradError, match=REFUSED):
        jvp(f)(X, T)


def another_list_appended(x):
    vs = [x, 2 * x]
    out = []
    for v in vs:
        out.append(np.sin(v) * v)
    return np.sum(out[0] * out[1])


def grown_under_a_false_test(x):
    vs = [x, 2 * x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) > 5:
            vs.append(v)
    return s


def a_copy_looped_over(x):
    vs = [x, 2 * x]
    s = 0.0
    for v in list(vs):
        s = s + np.sum(v * v)
        vs.append(np.sin(v))
    return s + np.sum(vs[-1])


def an_index_in_a_while(x):
    vs = [x]
    s = 0.0
    k = 0
    while k < len(vs):
        v = vs[k]
        k += 1
        s = s + np.sum(v * v)
        if len(vs) < 3:
            vs.append(np.sin(v))
    return s


def appended_while_reversed(x):
    vs = [x, 2 * x, 3 * x]
    s = 0.0
    for v in reversed(vs):
        s = s + np.sum(v * v)
        vs.append(np.sin(v))
    return s


@pytest.mark.parametrize("f", [another_list_appended, grown_under_a_false_test,
                               a_copy_looped_over, an_index_in_a_while,
                               appended_while_reversed])
def test_a_loop_whose_trips_stay_python_s(f):
    check_grad(f, (X,))
    want = numeric_grad(f, [X], 0)
    np.testing.assert_allclose(jvp(f)(X, T)[1], want @ T, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("f", [an_index_in_a_while, appended_while_reversed])
def test_a_loop_whose_trips_stay_python_s_at_second_order(f):
    eps = 1e-5
    df = grad(f)
    np.testing.assert_allclose(hvp(f)(X, T), (df(X + eps * T) - df(X - eps * T)) / (2 * eps),
                               rtol=1e-5, atol=1e-8)
