"""Writes into an element of an element, ``x[i][j] = v``, and of an attribute, ``a.b[i] = v``
(issue 14): Python changes the inner list, dict or array in place, and every holder of it sees
the write. Each function's value is Python's on copies of the arguments; its gradient is checked
against central differences in float64 in reverse and forward mode, at second order where marked,
and the arguments are left unchanged.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import hessian_by_differences

import srcgrad
from srcgrad import SrcgradError, UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1, 0.5])


def lists_of_numbers(x):
    L = [[x[0], x[1]], [x[2], x[3]]]
    L[0][1] = L[1][0] * 3.0
    return L[0][0] * L[0][1] + L[1][1] ** 2


def list_of_arrays(x):
    L = [x * 1.0, x * 2.0]
    L[1][2] = x[0] ** 2
    L[0][1:3] = np.sin(L[1][2:])
    return np.sum(L[1] * L[0])


def array_in_a_field(x):
    n = SimpleNamespace(v=np.ones(4), w=x * x)
    n.v[1] = x[0] * x[2]
    n.w[0] = n.v[1] ** 2
    return np.sum(n.v * x) + np.sum(n.w)


def one_array_held_twice(x):  # both places and the variable see the write
    y = x * 2.0
    L = [y, y]
    L[0][1] = 5.0 * x[2] ** 2
    return np.sum(L[1] * x) + np.sum(y ** 2)


def read_through_another_name(x):
    L = [[x[0], x[1]], [x[2]]]
    r = L[0]
    L[0][1] = np.sin(x[3])
    return r[1] * x[0] + L[0][1]


def written_in_a_loop(x):
    M = [[x[i] * x[j] for j in range(2)] for i in range(2)]
    for i in range(2):
        M[i][i] = M[i][i] * np.cos(x[i])
        M[i][1 - i] += M[i][i]
    return sum(M[i][j] * x[j] for i in range(2) for j in range(2))


def three_levels_and_a_dict(x):
    D = {"a": [[x[0], x[1]], [x[2], x[3]]], "b": [x * 0.5]}
    D["a"][1][0] = D["a"][0][1] * x[3]
    D["b"][0][3] -= x[0] * x[1]
    return D["a"][1][0] ** 2 + np.sum(D["b"][0] ** 2)


def into_an_argument(x, p):
    p.v[1] = x[0] * x[2]
    p.L[0][0] = np.exp(x[1])
    return np.sum(p.v * x) + p.L[0][0] * p.L[0][1]


@dataclass
class Holder:
    v: np.ndarray
    L: list


P = Holder(v=np.array([1.0, 2.0, 3.0, 4.0]), L=[[0.5, 1.5]])


class _Recorder:
    def __init__(self):
        self.hist = []
        self.last = {}

    def step(self, h):
        self.hist.append(h)  # (was refused: "does not know whether it changes `self_hist`")
        self.last.update({"h": h})
        return np.tanh(h * 2.0)


def methods_of_a_fields_list(x):
    r = _Recorder()
    seen = r.hist  # another holder of the list: sees the appends, as in Python
    h = x
    for _ in range(2):
        h = r.step(h)
    r.hist.insert(0, x * 3.0)
    box = SimpleNamespace(inner=SimpleNamespace(L=[x[0]]))
    box.inner.L.extend([x[1], x[2]])
    box.inner.L.remove(x[1])
    return (np.sum(seen[0] * r.hist[1] * r.last["h"]) + len(seen)
            + box.inner.L[0] * box.inner.L[-1])


CASES = [lists_of_numbers, list_of_arrays, array_in_a_field, one_array_held_twice,
         read_through_another_name, written_in_a_loop, three_levels_and_a_dict,
         methods_of_a_fields_list]


def _python(f, args):
    return f(*copy.deepcopy(args))


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_element_of_an_element_written(f):
    args = (X,)
    value, g = srcgrad.value_and_grad(f)(*args)
    np.testing.assert_allclose(value, _python(f, args), rtol=1e-13)
    check_grad(f, args)
    v, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(v, _python(f, args), rtol=1e-13)
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, args, 0)), rtol=1e-6, atol=1e-8)


def test_an_element_of_an_element_written_at_second_order():
    f = one_array_held_twice
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


def test_an_element_of_an_element_updated_in_a_loop_at_second_order_is_refused():
    # `M[i][j] += v` updates the array M[i][j] in place for every holder of it, found by
    # identity when it runs (tests/test_hunt_reproducers.py: `a = ...; inner = [a, ...];
    # outer = [inner]; outer[0][0] += v` left `a` unchanged before); differentiating that
    # search again in a loop is refused, as for `vals[i] += ...` of a comprehension's list
    # (its first order is checked by test_an_element_of_an_element_written)
    with pytest.raises(srcgrad.SrcgradError, match="a derivative of this derivative"):
        srcgrad.hessian(written_in_a_loop)(X)


def test_an_element_of_an_arguments_field_written():
    before = copy.deepcopy(P)
    value, (gx, gp) = srcgrad.value_and_grad(into_an_argument, wrt=(0, 1))(X, P)
    np.testing.assert_allclose(value, _python(into_an_argument, (X, P)), rtol=1e-13)
    np.testing.assert_array_equal(P.v, before.v)  # the caller's objects are not changed
    assert P.L == before.L
    differences = numeric_grad(into_an_argument, (X, copy.deepcopy(P)), 0)
    np.testing.assert_allclose(gx, differences, rtol=1e-6, atol=1e-8)
    # written over before it is read: no gradient reaches p.v[1] or p.L[0][0]
    np.testing.assert_allclose(gp.v, [X[0], 0.0, X[2], X[3]], rtol=1e-13)
    np.testing.assert_allclose(gp.L[0][1], np.exp(X[1]), rtol=1e-13)
    assert not gp.L[0][0]
    _, t = srcgrad.jvp(into_an_argument)(X, P, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(into_an_argument, (X, copy.deepcopy(P)), 0)),
                               rtol=1e-6, atol=1e-8)


def a_row_of_a_matrix(x):
    A = np.outer(x, x)
    A[1][2] = 0.0
    return np.sum(A)


G = [[1.0, 2.0]]


def into_a_global(x):
    G[0][1] = x[0]
    return G[0][1] * x[1]


def test_a_row_of_a_2d_array_and_a_global_are_refused():
    with pytest.raises(SrcgradError, match=r"A\[1\]`, an array that views another.*A\[i, j\]"):
        srcgrad.grad(a_row_of_a_matrix)(X)
    with pytest.raises(UnsupportedSyntaxError, match="from outside the function") as info:
        srcgrad.grad(into_a_global)(X)
    assert "test_nested_writes.py" in str(info.value) and "G[0][1] = x[0]" in str(info.value)
