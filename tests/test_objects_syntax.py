"""Object-oriented syntax of issue 14 beyond plain methods: ``super()``, ``try``/``except``,
augmented assignment to attributes, methods reached through structures, bound methods as
values, ``dataclasses.replace``/``asdict``, ``namedtuple._replace`` and ``vars``.

Every gradient is compared with central differences in float64, in reverse and forward mode,
and at second order where the construct allows it; every refusal is checked for its location.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import hessian_by_differences

import srcgrad
from srcgrad import UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1, 0.5])


def check_all(f, args=(X,), second=False):
    """grad against differences, jvp along ones, and (optionally) second order, in argument 0."""
    check_grad(f, args)
    tangent = np.ones_like(args[0])
    value, t = srcgrad.jvp(f)(*args, tangent)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(t, numeric_grad(f, args, 0).ravel() @ tangent.ravel(),
                               rtol=1e-6, atol=1e-8)
    if second:  # forward over reverse against differences of the gradient
        np.testing.assert_allclose(srcgrad.hessian(f)(*args), hessian_by_differences(f, args),
                                   rtol=1e-5, atol=1e-6)


def refused(f, args, *fragments):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(f)(*args)
    text = str(info.value)
    assert __file__.split("/")[-1] in text and "^" in text, text
    for fragment in fragments:
        assert fragment in text, text
    return text


# --- super() ------------------------------------------------------------------------------------
class Base:
    def __init__(self, w):
        self.w = w

    def f(self, x):
        return np.sin(x) * self.w


class Sub(Base):
    def __init__(self, w, c):
        super().__init__(w)
        self.c = c

    def f(self, x):
        return super().f(x) + self.c * x * x


class Left(Base):
    def f(self, x):
        return super().f(x) * 2.0


class Right(Base):
    def f(self, x):
        return super(Right, self).f(x) + x ** 3


class Diamond(Left, Right):
    def f(self, x):
        return super().f(x) - x  # Left.f, whose super() is Right.f (the object's order)


class Model(Sub):
    def loss(self, x):
        return np.sum(super().f(x) * self.w)


def super_in_methods(x):
    s = Sub(2.0, 0.5)
    return np.sum(s.f(x))


def super_in_a_diamond(x):
    d = Diamond(1.5)
    return np.sum(d.f(x))


def super_on_an_argument_free_object(x):
    m = Model(1.25, 0.5)
    return m.loss(x)


@pytest.mark.parametrize("f", [super_in_methods, super_on_an_argument_free_object])
def test_super_calls_are_inlined(f):
    check_all(f, second=f is super_in_methods)


def test_super_in_a_diamond_follows_the_objects_order():
    d = Diamond(1.5)
    want = (np.sin(X) * 1.5 + X ** 3) * 2.0 - X
    np.testing.assert_allclose(d.f(X), want)
    g = srcgrad.grad(super_in_a_diamond)(X)
    np.testing.assert_allclose(g, (np.cos(X) * 1.5 + 3 * X ** 2) * 2.0 - 1.0, rtol=1e-12)


def test_super_in_a_transformed_bound_method():
    m = Model(1.25, 0.5)
    check_grad(m.loss, (X,))
    gm = srcgrad.grad(Model.loss, wrt="self")(m, X)
    # loss = sum((sin(x) w + c x^2) w)
    np.testing.assert_allclose(gm.w, np.sum(2 * 1.25 * np.sin(X) + 0.5 * X * X), rtol=1e-12)
    np.testing.assert_allclose(gm.c, np.sum(X * X * 1.25), rtol=1e-12)


class Odd(Base):
    def f(self, x):
        parent = super()
        return parent.f(x)


def test_super_as_a_value_is_refused():
    refused(lambda x: np.sum(Odd(1.0).f(x)), (X,), "`super()` used as a value", "Base.f(self")
