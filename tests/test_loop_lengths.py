"""A ``for`` loop over a list that its own body makes longer or shorter.

Python's loop over a list tests, at the end of each trip, whether the next position is in the
list as it is then: a loop that appends to the list it runs over (a worklist) visits the new
items too. srcgrad runs the trips the length gave when the loop began; the two agree unless the
body resizes that list. Such a loop ends each trip with Python's own test
(normalize/loop_lengths.py, runtime ``check_trips``), which refuses the run where the trips
differ. Each refused case gave a wrong value and gradient without an error before (the trips of
the list's first length only).

A generator expression (``map``, ``filter``) computes its items when they are asked for: a loop
over one runs its clauses as loops (normalize/lazy_iterators.py), so that the body of a trip
comes before the next item is computed (it read ``c`` as the loop began, and the list's first
length, before), and one bound to a name is computed where it is used (it was computed where it
was made, before the changes between).

The loops that stay as they were (another list appended to, the list grown on its last trip
only under a test that is then false, a copy looped over, an index in a ``while``) are checked
against central differences, in reverse and forward mode and at second order."""

import numpy as np
import pytest
from gradcheck import check_grad, check_jvp_and_hvp, numeric_grad

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


class _Bag:
    def __init__(self, items):
        self.items = items


def inserted_while_reversed_by_a_field(x):
    b = _Bag([x, 2 * x, 3 * x])
    s = 0.0
    for v in reversed(b.items):
        s = s + np.sum(v * v)
        b.items.insert(0, np.sin(v))
    return s


def popped_early(x):
    vs = [x, 2 * x, 3 * x]
    s = 0.0
    for v in vs:
        s = s + np.sum(v * v)
        if len(vs) == 3:
            del vs[2]
    return s


def mapped_while_appended(x):
    vs = [x]
    s = 0.0
    for w in map(np.cos, vs):
        s = s + np.sum(w * w)
        if len(vs) < 3:
            vs.append(np.sin(w))
    return s


def generated_while_appended(x):
    vs = [x]
    s = 0.0
    for w in (np.cos(v) for v in vs):
        s = s + np.sum(w * w)
        if len(vs) < 3:
            vs.append(np.sin(w))
    return s


def filtered_while_appended(x):
    vs = [x]
    s = 0.0
    for v in filter(lambda t: True, vs):
        s = s + np.sum(v * v)
        if len(vs) < 3:
            vs.append(np.sin(v))
    return s


RESIZED = [appended_while_looped, appended_by_a_helper, appended_to_a_dict_item, enumerated,
           zipped, extended_by_plus_equals, in_a_comprehension, shifted_while_reversed,
           popped_early, inserted_while_reversed_by_a_field, mapped_while_appended,
           generated_while_appended,
           filtered_while_appended]
REFUSED = "makes longer or shorter|changes before|written into in the loop"  # (the last: pop)


@pytest.mark.parametrize("f", RESIZED)
def test_a_loop_over_a_list_its_body_resizes_is_refused(f):
    f(X)  # (Python runs it)
    with pytest.raises(SrcgradError, match=REFUSED):
        grad(f)(X)
    if f in (appended_while_looped, generated_while_appended):  # (forward mode: the same check)
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


def read_late_by_a_named_generator(x):
    c = 2.0
    gen = (v * c for v in [x, 2 * x])
    c = 5.0
    return sum(np.sum(np.sin(w)) for w in gen)


def read_late_by_a_loop_over_a_generator(x):
    c = 2.0
    out = 0.0
    for w in (np.sin(v * c) for v in [x, 2 * x]):
        out = out + np.sum(w)
        c = c + 1.0
    return out


def read_late_by_a_loop_over_a_named_map(x):
    c = 2.0
    m = map(lambda v: np.sin(v * c), [x, 2 * x, x * x])
    out = 0.0
    for k, w in enumerate(m):
        out = out + np.sum(w) * (k + 1)
        c = c * 0.5
    return out


def two_clauses_read_late(x):
    c = 1.0
    out = 0.0
    for w in (np.sin(a * b * c) for a in [x, 2 * x] for b in [1.0, -0.5]):
        out = out + np.sum(w)
        c = c + 0.5
    return out


@pytest.mark.parametrize("f", [read_late_by_a_named_generator,
                               read_late_by_a_loop_over_a_generator,
                               read_late_by_a_loop_over_a_named_map, two_clauses_read_late])
def test_a_generator_computes_its_items_when_python_does(f):
    check_grad(f, (X,))
    np.testing.assert_allclose(jvp(f)(X, T)[1], numeric_grad(f, [X], 0) @ T, rtol=1e-6,
                               atol=1e-9)


def two_clauses_broken_out_of(x):
    out = 0.0
    for w in (a * b for a in [x, 2 * x] for b in [1.0, -0.5]):
        out = out + np.sum(w)
        if out > 100.0:
            break
    return out


def test_a_break_out_of_a_loop_over_a_generator_of_two_clauses_is_refused():
    with pytest.raises(SrcgradError, match="write the nested loops themselves"):
        grad(two_clauses_broken_out_of)(X)


def zipped_with_a_generator(x):
    out = 0.0
    for w, c in zip((np.sin(v) for v in [x, 2 * x]), [1.0, 2.0]):
        out = out + np.sum(w) * c
    return out


def zipped_with_a_generator_it_changes(x):
    c = 1.0
    out = 0.0
    for w, e in zip(map(lambda v: np.sin(v * c), [x, 2 * x]), [1.0, 2.0]):
        out = out + np.sum(w) * e
        c = c + 1.0
    return out


def test_a_loop_over_zip_of_a_generator():
    check_grad(zipped_with_a_generator, (X,))  # (nothing it reads changes: built first)
    with pytest.raises(SrcgradError, match="make a list of it first"):
        grad(zipped_with_a_generator_it_changes)(X)


def index_held_while_counting(x):  # (`i and v`: i may be M[1, i]'s value, so held by M)
    M = np.stack([x, 2.0 * x, x * x])
    s = 0.0
    for i, e in enumerate(x):
        M[1, i] = (i and np.sum(x))
        M *= 0.5
        s = s + e
    return np.sum(M * M) + s


def range_index_held(x):
    M = np.stack([x, 2.0 * x])
    s = 0.0
    for i in range(2):
        M[1, i] = (i and np.sum(x))
        M *= 0.5
        s = s + i
    return np.sum(M * M) + s


@pytest.mark.parametrize("f", [index_held_while_counting, range_index_held])
def test_a_range_index_holds_no_array_updated_in_place(f):
    # the index is an int: no holder of M's object to update (forward mode read the index's
    # tangent before any statement made it: UnboundLocalError; the enumerate form since the
    # loop's check_trips(i, ...) reads the index after `M *= 0.5`)
    check_grad(f, (X,))
    check_jvp_and_hvp(f, X, T, jvp_atol=1e-9)
