"""A method that builds an object of its own class (``type(self)(...)``, ``self.__class__(...)``,
``t = type(self); t(...)``; issue 14), and operators of objects whose class only the inliner
knows (``q = self.p; r = -q``, ``q += w``).

Before, ``type(self)(...)`` was refused at transform time ("cannot resolve `type_self`", "does
not support the method `.__class__()`"), and ``-q`` / ``q += w`` of an object read from the
bound instance failed when the gradient ran ("an arithmetic operator given an object"). The
class of ``self`` is known where a method is inlined (checked at run time where it was
inferred), so these build that class. Values equal Python's, gradients (with respect to arrays
and to the objects, field by field) match central differences in float64, in reverse and
forward mode, and at second order.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import hessian_by_differences

import srcgrad

STEP = 1e-6
X = np.array([0.3, -0.7])


class V:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __neg__(self):
        return type(self)(-self.w, self.b)

    def __add__(self, other):
        return self.__class__(self.w + other.w, self.b * other.b)

    def __iadd__(self, other):
        return V(self.w * other.w, self.b)

    def scaled(self, s):
        made = type(self)
        return made(self.w * s, np.sin(self.b))


def made_by_methods(v, x):
    u = -v
    z = u + v.scaled(2.0)  # (the class of a method's result: `return made(...)`)
    return np.sum(z.w * x ** 2) + np.sum(z.b ** 2 * x)


@dataclass
class P:
    w: np.ndarray
    s: float = 1.0

    def __neg__(self):
        return type(self)(-self.w, self.s)

    def step(self, g):
        return self.__class__(w=self.w - 0.1 * g, s=self.s)

    @classmethod
    def like(cls, w):
        return cls(w * 2.0)


class Model:
    def __init__(self, p, v):
        self.p = p
        self.v = v

    def loss(self, x):
        q = self.p
        for _ in range(3):
            q = q.step(q.w * x)
        r = -q  # q's class is known from the instance only: inlined, not the operators pass
        k = P.like(x)
        e = self.v
        e += V(x, x)  # V.__iadd__, not __add__
        return np.sum(r.w * x) * r.s + np.sum(k.w * r.w) + np.sum(e.w * e.b)


def _field_numeric(f, args, leaf):
    """Central differences of ``f(*args)`` w.r.t. the array ``leaf(args)`` (a field of an
    object among ``args``), each element moved on a deep copy of the arguments."""
    g = np.zeros_like(leaf(args))
    for idx in np.ndindex(g.shape):
        moved = []
        for sign in (1.0, -1.0):
            new = copy.deepcopy(args)
            leaf(new)[idx] += sign * STEP
            moved.append(f(*new))
        g[idx] = (moved[0] - moved[1]) / (2 * STEP)
    return g


def test_a_method_building_an_object_of_its_own_class():
    v = V(np.array([1.0, 2.0]), np.array([0.5, 1.5]))
    before = copy.deepcopy(v)
    value, (gv, gx) = srcgrad.value_and_grad(made_by_methods, wrt=(0, 1))(v, X)
    np.testing.assert_allclose(value, made_by_methods(v, X), rtol=1e-13)
    assert type(gv) is V
    for name in ("w", "b"):
        expected = _field_numeric(made_by_methods, (v, X), lambda a, name=name: getattr(a[0], name))
        np.testing.assert_allclose(getattr(gv, name), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gx, numeric_grad(made_by_methods, (v, X), 1), rtol=1e-6)
    assert np.array_equal(v.w, before.w) and np.array_equal(v.b, before.b)
    t = V(np.array([0.3, 0.1]), np.array([-0.2, 0.4]))
    _, tangent = srcgrad.jvp(made_by_methods)(v, X, t)
    np.testing.assert_allclose(tangent, gv.w @ t.w + gv.b @ t.b, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.hessian(made_by_methods, wrt=1)(v, X),
                               hessian_by_differences(made_by_methods, (v, X), 1),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("how", ["bound", "wrt_self"])
def test_operators_of_objects_read_from_the_instance(how):
    model = Model(P(np.array([1.0, -2.0]), 1.5), V(np.array([0.7, 0.2]), np.array([2.0, -1.0])))
    x = np.array([0.4, 0.9])
    np.testing.assert_allclose(srcgrad.grad(model.loss)(x), numeric_grad(model.loss, (x,), 0),
                               rtol=1e-6)
    if how == "bound":
        _, t = srcgrad.jvp(model.loss)(x, np.array([1.0, -0.5]))
        np.testing.assert_allclose(t, numeric_grad(model.loss, (x,), 0) @ [1.0, -0.5],
                                   rtol=1e-6)
        return
    g = srcgrad.grad(Model.loss, wrt="self")(model, x)
    for part, name in (("p", "w"), ("v", "w"), ("v", "b")):
        expected = _field_numeric(Model.loss, (model, x),
                                  lambda a, p=part, n=name: getattr(getattr(a[0], p), n))
        np.testing.assert_allclose(getattr(getattr(g, part), name), expected, rtol=1e-6,
                                   atol=1e-8)
    m_plus, m_minus = copy.deepcopy(model), copy.deepcopy(model)
    m_plus.p.s += STEP
    m_minus.p.s -= STEP
    np.testing.assert_allclose(g.p.s, (m_plus.loss(x) - m_minus.loss(x)) / (2 * STEP),
                               rtol=1e-6)
