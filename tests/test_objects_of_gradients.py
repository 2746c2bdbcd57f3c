"""Differentiating again through a gradient that is an object (a namedtuple or a dataclass
argument's gradient has its class), with a field of it read: the cotangent of that field read
is the seed of the inner gradient's vjp. Checked against central differences of the inner
gradient (float64), in reverse and in forward mode; also a class registered as a pytree."""

import collections
import dataclasses

import numpy as np
import pytest

import srcgrad

P = collections.namedtuple("P", "a b")


@dataclasses.dataclass
class D:
    a: object
    b: object


class R:
    """A class registered as a pytree (issue 14): its gradient is rebuilt by unflatten."""

    def __init__(self, a, b):
        self.a, self.b = a, b


srcgrad.register_pytree(R, lambda r: ((r.a, r.b), None), lambda aux, children: R(*children))


def _f(p):
    return np.sum(np.sin(p.a) * p.b ** 2)


def _field_a_of_namedtuple(x):
    return np.sum(srcgrad.grad(_f)(P(x, 2.0 * x + 1.0)).a ** 2)


def _fields_of_dataclass(x):
    g = srcgrad.grad(_f)(D(x, 2.0 * x + 1.0))
    return np.sum(g.a * g.b)


def _field_b_of_registered(x):
    return np.sum(srcgrad.grad(_f)(R(np.cos(x), x * x)).b)


def _central(h, x, eps=1e-6):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (h(x + e) - h(x - e)) / (2 * eps)
    return out


X = np.array([0.3, -0.7, 1.1])
T = np.array([0.2, 0.5, -0.4])


@pytest.mark.parametrize("h", [_field_a_of_namedtuple, _fields_of_dataclass,
                               _field_b_of_registered])
def test_a_field_of_an_object_gradient_differentiated_again(h):
    # was refused: "the vjp seed is a Cotangents (a dict), but the output is a P/D"
    want = _central(h, X)
    np.testing.assert_allclose(srcgrad.grad(h)(X), want, rtol=1e-6, atol=1e-8)
    value, tangent = srcgrad.jvp(h)(X, T)
    assert value == pytest.approx(h(X), rel=1e-12)
    assert tangent == pytest.approx(want @ T, rel=1e-6)


def test_the_repro_of_a_namedtuple_field():
    # h(x) = grad(f)(P(x, 2x)).a = (2x)**2, whose derivative is 8x: 12 at 1.5, as Python says
    def f(p):
        return p.a * p.b ** 2

    def h(x):
        return srcgrad.grad(f)(P(x, 2.0 * x)).a

    assert srcgrad.grad(h)(1.5) == pytest.approx(12.0, rel=1e-12)


def test_a_seed_of_another_structure_is_still_refused():
    def f(p):
        return D(p.a * p.b, p.b)

    with pytest.raises(srcgrad.SrcgradError, match="the vjp seed is a dict, but the output is a D"):
        srcgrad.vjp(f)(D(1.0, 2.0), {"a": 1.0, "b": 1.0})
