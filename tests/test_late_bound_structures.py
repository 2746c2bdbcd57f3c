"""A list, dict, object or array bound late in a loop body, written into after its binding, and
read in the next trip: before its first binding its adjoint has no structure, and the sweep's
zero for it was ``0.0``, which the adjoint of the write then indexed (``take_item(0.0, 0)``:
IndexError; a dict's key, an object's field, a list's ``len``: TypeError, AttributeError). The
zero is now ``zeros_like`` of the variable, which starts as None (``zeros_like(None)`` is
``0.0``): where it is bound, the sweep holds its value there (transform/adjoints.py
``zero_of``).

Checked against central differences in float64 (value_and_grad in both arguments, jvp; hvp and
pullback for some); each test fails on the code before (an error where Python runs)."""

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x, numeric_grad

from srcgrad import pullback

X = np.array([0.5, -1.2, 0.8])
T = np.array([0.3, -0.7, 0.2])


@dataclass
class Pair:
    a: object
    b: object


def a_list(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(L[1] * L[0])  # noqa: F821 (bound below, on the trip before)
        L = [x * (i + c), x]
        L[0] = L[0] * 2.0
    return s


def an_array(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(A[1] * A[0])  # noqa: F821 (bound below, on the trip before)
        A = np.stack([x * (i + c), x])
        A[0] = A[0] * 2.0
    return s


def a_dict(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(D["b"] * D["a"])  # noqa: F821 (bound below, on the trip before)
        D = {"a": x * (i + c), "b": x}
        D["a"] = D["a"] * 2.0
    return s


def a_dataclass(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(B.b * B.a)  # noqa: F821 (bound below, on the trip before)
        B = Pair(x * (i + c), x)
        B.a = B.a * 2.0
    return s


def a_namespace(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(B.b * B.a)  # noqa: F821 (bound below, on the trip before)
        B = SimpleNamespace(a=x * (i + c), b=x)
        B.a = B.a * 2.0
    return s


def read_on_one_trip(c, x):
    s = 0.0
    for i in range(4):
        if i == 1:  # (the other trips' branch made the zero: 0.0 before)
            s = s + np.sum(L[1] * L[0])  # noqa: F821 (bound below, on the trip before)
        L = [x * (i + c), x]
        L[0] = L[0] * 2.0
    return s


def appended(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(L[1] * L[-1])  # noqa: F821 (bound below, on the trip before)
        L = [x * (i + c), x]
        L.append(x * x)
    return s


def nested(c, x):
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(L[1][0] * L[0])  # noqa: F821 (bound below, on the trip before)
        L = [x * (i + c), [x, x * 2.0]]
        L[1][0] = L[1][0] * 3.0
    return s


def in_a_while_loop(c, x):
    s = 0.0
    i = 0
    while i < 3:
        if i > 0:
            s = s + np.sum(L[1] * L[0])  # noqa: F821 (bound below, on the trip before)
        L = [x * (i + c), x]
        L[0] = L[0] * 2.0
        i = i + 1
    return s


def bound_on_some_trips(c, x):
    s = 0.0
    for i in range(3):
        if i != 1:
            L = [x * (i + c), x]
            L[0] = L[0] * 2.0
        if i == 2:
            s = s + np.sum(L[0] * L[1])
    return s


CASES = [a_list, an_array, a_dict, a_dataclass, a_namespace, read_on_one_trip, appended, nested,
         in_a_while_loop, bound_on_some_trips]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_structure_bound_late_in_a_loop_body(f):
    check_both_and_jvp(f, 1.3, X, T)


@pytest.mark.parametrize("f", [a_list, a_dict, bound_on_some_trips], ids=lambda f: f.__name__)
def test_second_order(f):
    check_hvp_in_x(f, 1.3, X, T)


def test_pullback_twice():
    value, back = pullback(a_list, wrt=1)(1.3, X)
    want = numeric_grad(a_list, [1.3, X], 1)
    assert np.isclose(value, a_list(1.3, X))
    np.testing.assert_allclose(back(1.0), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(back(2.0), 2.0 * want, rtol=1e-6, atol=1e-9)
