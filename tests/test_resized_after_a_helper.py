"""A list passed to a helper that loops over it (or reads an item), then appended to in place
and read again: the helper's loop runs over another name for the list (``seq = vs_2``,
``seq_2 = iteration_sequence(seq)``), and the sweep read that name after the append, at its new
length: "cannot add the cotangents of sequences of different lengths (1 and 2)" where Python
runs. The sweep now undoes the append (``list_pop``) wherever it reads the list under another
name (transform/tape.py, normalize/aliasing.py), and code differentiated again gives those
names the popped list too (normalize/functional.py).

The same aliasing made wrong values without an error: a list a helper returns (``ws =
ident(vs)``), changed in length through ``vs`` and read through ``ws``; now refused at the
user's line, as ``ws = vs`` is (normalize/inplace.py).

Checked against central differences in float64 (value_and_grad in both arguments, jvp; hvp for
the ones that run at second order); each test fails on the code before."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x

from srcgrad import UnsupportedSyntaxError, value_and_grad

X = np.array([0.5, -1.2, 0.8])
T = np.array([0.3, -0.7, 0.2])


def total(vs, x):
    s = 0.0
    for v in vs:
        s = s + np.sum(v * x)
    return s


def first(vs, x):
    return np.sum(vs[0] * x)


def ident(vs):
    return vs


def looped_then_appended(c, x):
    vs = [x]
    s = total(vs, x)
    vs.append(x * c)
    return s + total(vs, x) * 2.0


def indexed_then_appended(c, x):
    vs = [x]
    s = first(vs, x)
    vs.append(x * c)
    return s + first(vs, x) * total(vs, x)


def appended_in_a_branch(c, x):
    vs = [x, np.sin(x)]
    s = total(vs, x)
    if x[0] > 0:
        vs.append(x * c)
    return s + total(vs, x)


def appended_in_a_loop_after(c, x):
    s = 0.0
    vs = [x]
    for k in range(2):
        s = s + total(vs, x)
        if x[0] > 0:
            vs.append(x * c * (k + 1.0))
    return s + total(vs, x)


def apply_all(fs, x):
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) ** 2)
    return s


def make_def(c, d=0.5):
    def inner(t, p=2):
        return (np.exp(c) + d) * t ** p
    return inner


def twice(fs, x):
    return apply_all(fs, x) * 2.0


def functions_appended_in_a_loop(c, x):
    # objects14g's mini-hunt (/work/notes/objects14g-hunt-gen.py seed 1): a list of
    # functions, the same cause
    sq = lambda v: c * v * v  # noqa: E731
    s = 0.0
    fs = []
    for _ in range(2):
        fs.append(sq)
        s = s + apply_all(fs, x)
    if x[0] > 0:
        fs.append(make_def(c))
    fs.append(sq)
    s = s + twice(fs, x)
    return s + len(fs)


CASES = [looped_then_appended, indexed_then_appended, appended_in_a_branch,
         appended_in_a_loop_after, functions_appended_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_list_resized_after_a_helper_read_it(f):
    check_both_and_jvp(f, 1.3, X, T)


@pytest.mark.parametrize("f", [looped_then_appended, appended_in_a_loop_after],
                         ids=lambda f: f.__name__)
def test_second_order(f):
    # (the second: the helper's loop names bound in a branch of a loop, None first)
    check_hvp_in_x(f, 1.3, X, T)


def returned_then_appended(c, x):
    vs = [x, x * 2.0]
    ws = ident(vs)
    vs.append(x * c)
    return np.sum(ws[-1] * x)


def returned_then_popped(c, x):
    vs = [x, x * 2.0]
    ws = ident(vs)
    vs.pop()
    return np.sum(ws[-1] * x) + len(ws)


def returned_then_looped(c, x):
    vs = [x]
    ws = ident(vs)
    s = 0.0
    for v in ws:
        s = s + np.sum(v * x)
    vs.append(x * c)
    return s + total(ws, x)


@pytest.mark.parametrize("f", [returned_then_appended, returned_then_popped,
                               returned_then_looped], ids=lambda f: f.__name__)
def test_a_list_a_helper_returns_changed_through_another_name_is_refused(f):
    # (wrong values and gradients without an error before: the append was lost)
    with pytest.raises(UnsupportedSyntaxError, match=r"(?s)`ws` refers to .* `vs`.*"
                       r"ws = ident\(vs\)"):
        value_and_grad(f, wrt=(0, 1))(1.3, X)
