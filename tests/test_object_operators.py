"""Operators of dicts and of objects of the user's classes (normalize/operators.py).

Before, `d1 | d2` of dicts had no gradient (the merge dropped the values' gradients: zeros), and
`V(x) + V(x ** 2)` of a class whose `__add__` returns `V(a.a + 2 * b.a)` was differentiated as
`x + x ** 2` (1 + 2x for Python's 1 + 4x). Each program is checked against plain Python run on
copies, central differences, vjp and jvp; what srcgrad cannot see is refused.
"""

import collections

import numpy as np
import pytest
from sharing_check import check_all

from srcgrad import SrcgradError, UnsupportedSyntaxError, grad

X = np.array([0.5, -1.0, 2.0])


def merged_dicts(x):
    d1 = {"a": x[0]}
    d2 = {"b": x[1] ** 2, "a": x[2]}
    d = d1 | d2  # b's entries over a's: "a" is x[2]
    return d["a"] * d["b"]


def merged_in_place(x):
    d = {"a": x[0]}
    d |= {"b": x[1] ** 2}
    return d["a"] * d["b"]


@pytest.mark.parametrize("f", [merged_dicts, merged_in_place], ids=lambda f: f.__name__)
def test_dict_merges_differentiate_as_python_computes(f):
    # was: a gradient of zeros (`|` has no gradient: the merge dropped the values' gradients)
    check_all(f, (X,))


def test_a_merge_srcgrad_cannot_see_is_refused_at_transform_time():
    def f(p, q):
        d = p | q
        return d["a"] * d["b"]

    with pytest.raises(UnsupportedSyntaxError, match=r"`\|` given `p`") as e:
        grad(f)({"a": 1.5}, {"b": 2.0})
    assert "d = p | q" in str(e.value)


class Vec:
    """Operators of a class of the user's whose methods are not plain arithmetic."""

    def __init__(self, a):
        self.a = a

    def __add__(self, other):
        return Vec(self.a + 2.0 * other.a)

    def __sub__(self, other):
        return Vec(self.a * other.a)

    def __neg__(self):
        return Vec(-3.0 * self.a)

    def __iadd__(self, other):
        return Vec(self.a * 0.5 + other.a)

    def __getitem__(self, i):
        return self.a[i] ** 2


OFFSET = Vec(np.array([1.0, 2.0, 3.0]))


def added_objects(x):
    v = Vec(x) + Vec(x ** 2)
    return np.sum(v.a)


def object_operators(x):
    v = Vec(x)
    w = v - Vec(x * 3.0)
    u = -v
    v += Vec(x ** 2)
    return np.sum((OFFSET + u).a * w.a) + v[1] * v[2]


@pytest.mark.parametrize("f", [added_objects, object_operators], ids=lambda f: f.__name__)
def test_operators_of_objects_call_the_classes_methods(f):
    # was: `Vec(x) + Vec(x ** 2)` differentiated as `x + x ** 2` (1 + 2x for Python's 1 + 4x)
    check_all(f, (X,))


def test_an_operator_of_an_object_srcgrad_cannot_see_is_refused():
    def f(v, x):
        w = v + Vec(x)  # Vec defines no __radd__, and v's class is known only when it runs
        return np.sum(w.a)

    with pytest.raises(UnsupportedSyntaxError, match="__add__"):
        grad(f, wrt=1)(Vec(X), X)

    def g(v, w):
        return np.sum((v + w).a)  # neither class known at transform time

    with pytest.raises(SrcgradError, match="class Vec"):
        grad(g)(Vec(X), Vec(X ** 2))

    def h(x):
        return np.sum((-(Vec(x) - Vec(x))).a)  # `-` of the result of an operator

    # its class is told by `__sub__`'s `return Vec(...)` (refused when it ran before):
    # -3 * x * x
    np.testing.assert_allclose(grad(h)(X), -6.0 * X)


Pair = collections.namedtuple("Pair", "w b")


class Params(dict):
    pass


SCALES = Params(w=np.array([1.0, 2.0, 3.0]))


def indexed_namedtuple(x):
    q = Pair(x, 2.0)
    return np.sum(q[0] ** 2) * q[1] + np.sum(SCALES["w"] * x)


def test_builtin_methods_of_classes_of_yours_stay_what_they_were():
    # a namedtuple's `q[0]` and a dict subclass's `d["w"]` are tuple's and dict's own (no Python
    # source): they are read as elements, not made method calls (refused for a moment on main)
    check_all(indexed_namedtuple, (X,))
