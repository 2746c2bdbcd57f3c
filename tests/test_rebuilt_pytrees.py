"""A registered class's attribute that is neither a child nor aux data (``self.a2 = a * a`` of
``__init__``), read by the function differentiated with respect to the object: JAX's function
sees the object ``unflatten(aux, children)`` builds, so the derivative flows through the user's
``unflatten`` (and the ``__init__`` it calls); an ``unflatten`` that sets the children alone
leaves the attribute missing (``AttributeError`` where it is read). srcgrad does the same
(srcgrad/rebuilding.py); it refused these at run time before. The JAX numbers below were
measured with jax 0.10.2 (x64) on the same program."""

import dataclasses
import inspect
import types

import numpy as np
import pytest
from gradcheck import numeric_grad

from srcgrad import (
    SrcgradError,
    grad,
    hvp,
    jvp,
    linearize,
    pullback,
    register_pytree,
    source,
    value_and_grad,
    vjp,
)

A, X = np.array([0.4, 0.2, 0.1]), np.array([1.0, 2.0, 3.0])
JAX_VALUE = 0.8078891249700431
JAX_GRAD = np.array([2.36934548, 2.39808026, 1.79991])


class Squared:
    def __init__(self, a, k):
        self.a, self.k, self.a2 = a, k, a * a  # a2: neither a child nor aux data

    def scaled(self, x):
        return np.sum(np.sin(self.a2) * x) * self.k


register_pytree(Squared, lambda o: ((o.a,), o.k), lambda k, children: Squared(children[0], k))


class Bare:
    def __init__(self, a, k):
        self.a, self.k, self.a2 = a, k, a * a


def _bare_unflatten(k, children):
    o = object.__new__(Bare)  # no __init__: no a2
    o.a, o.k = children[0], k
    return o


register_pytree(Bare, lambda o: ((o.a,), o.k), _bare_unflatten)


def reads_a2(b, x):
    return np.sum(np.sin(b.a2) * x) * b.k


def calls_a_method(b, x):
    return b.scaled(x)


def in_a_dict(p, x):
    return reads_a2(p["box"], x) + np.sum(p["w"] * x)


def in_a_list(ps, x):
    return reads_a2(ps[0], x) * reads_a2(ps[1], x)


def in_a_namespace(p, x):
    return reads_a2(p.box, x)


def of_the_child(a, x, k=3):
    return reads_a2(Squared(a, k), x)


def test_the_attribute_follows_the_children_in_every_mode():
    b, t = Squared(A, 3), Squared(np.array([1.0, 0.0, 0.0]), 3)
    want = numeric_grad(of_the_child, (A, X), 0)
    np.testing.assert_allclose(want, JAX_GRAD, rtol=1e-7)
    g = grad(reads_a2)(b, X)
    assert type(g) is Squared and g.k == 3
    np.testing.assert_allclose(g.a, want, rtol=1e-6)
    value, g = value_and_grad(reads_a2)(b, X)
    assert np.isclose(value, JAX_VALUE, rtol=1e-14)
    np.testing.assert_allclose(g.a, want, rtol=1e-6)
    np.testing.assert_allclose(vjp(reads_a2)(b, X, 1.0).a, want, rtol=1e-6)
    np.testing.assert_allclose(pullback(reads_a2)(b, X)[1](1.0).a, want, rtol=1e-6)
    value, tangent = jvp(reads_a2)(b, X, t)  # before: the refusal (and 0.0 before that)
    assert np.isclose(value, JAX_VALUE, rtol=1e-14) and np.isclose(tangent, want[0], rtol=1e-6)
    assert np.isclose(linearize(reads_a2)(b, X)[1](t), want[0], rtol=1e-6)


def test_second_order_through_unflatten():
    # JAX: hessian of the child, first row [5.61747274, 0, 0]
    b, t = Squared(A, 3), Squared(np.array([1.0, 0.0, 0.0]), 3)
    h = hvp(reads_a2)(b, X, t)
    step = 1e-5
    row = (numeric_grad(of_the_child, (A + [step, 0, 0], X), 0)
           - numeric_grad(of_the_child, (A - [step, 0, 0], X), 0)) / (2 * step)
    np.testing.assert_allclose(h.a, row, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h.a, [5.61747274, 0.0, 0.0], atol=1e-7)


def test_the_value_is_the_rebuilt_objects_as_in_jax():
    # a2 changed after __init__: JAX's differentiated function sees unflatten's object, whose
    # a2 is recomputed (value 0.8079); an argument not differentiated is passed as it is (7.418)
    b = Squared(A, 3)
    b.a2 = np.array([9.0, 9.0, 9.0])
    value, g = value_and_grad(reads_a2)(b, X)
    assert np.isclose(value, JAX_VALUE, rtol=1e-14)
    np.testing.assert_allclose(g.a, JAX_GRAD, rtol=1e-7)
    value, gx = value_and_grad(reads_a2, wrt=1)(b, X)
    assert np.isclose(value, 7.4181327343516195, rtol=1e-14)
    np.testing.assert_allclose(gx, 3 * np.sin(9.0) * np.ones(3), rtol=1e-12)
    assert b.a2[0] == 9.0  # the caller's object is left as it was


def test_nested_in_dicts_lists_and_through_methods():
    b, b2 = Squared(A, 3), Squared(2 * A, 2)
    want = numeric_grad(of_the_child, (A, X), 0)
    np.testing.assert_allclose(grad(calls_a_method)(b, X).a, want, rtol=1e-6)
    np.testing.assert_allclose(grad(Squared.scaled, wrt="self")(b, X).a, want, rtol=1e-6)
    g = grad(in_a_dict)({"box": b, "w": 0.5 * X}, X)
    np.testing.assert_allclose(g["box"].a, want, rtol=1e-6)
    np.testing.assert_allclose(g["w"], X, rtol=1e-12)
    g = grad(in_a_list)([b, b2], X)
    second = numeric_grad(lambda a, x: in_a_list([b, Squared(a, 2)], x), (2 * A, X), 0)
    np.testing.assert_allclose(g[1].a, second, rtol=1e-6)


def test_an_unflatten_without_init_leaves_the_attribute_missing_as_in_jax():
    bare = Bare(A, 3)
    np.testing.assert_allclose(grad(lambda_free_reads_child)(bare, X).a, X)  # a2 not read
    for call, line in ((lambda: grad(reads_a2)(bare, X), "return np.sum(np.sin(b.a2) * x)"),
                       (lambda: jvp(reads_a2)(bare, X, bare), "return np.sum(np.sin(b.a2) * x)")):
        with pytest.raises(AttributeError, match="'Bare' object has no attribute 'a2'") as e:
            call()
        note = "\n".join(getattr(e.value, "__notes__", []))
        assert __file__ in note and line in note


def lambda_free_reads_child(b, x):
    return np.sum(b.a * x)


@dataclasses.dataclass
class Config:
    box: object
    w: np.ndarray


@dataclasses.dataclass(frozen=True)
class Frozen:
    box: object


def in_a_config(p, x):
    return reads_a2(p.box, x) + np.sum(p.w * x)


def test_held_in_a_field_of_a_namespace_dataclass_or_object():
    # was refused when it ran ("not among the children"): the object holding it is copied
    # with the field rebuilt
    want = numeric_grad(of_the_child, (A, X), 0)
    t = Squared(np.array([1.0, 0.0, 0.0]), 3)
    box = Squared(A, 3)
    p = types.SimpleNamespace(box=box)
    g = grad(in_a_namespace)(p, X)
    np.testing.assert_allclose(g.box.a, want, rtol=1e-6)
    assert np.isclose(jvp(in_a_namespace)(p, X, types.SimpleNamespace(box=t))[1], want[0])
    assert p.box is box and box.a2[0] == A[0] ** 2  # the caller's objects as they were
    g = grad(in_a_config)(Config(box, 0.5 * X), X)
    assert type(g) is Config
    np.testing.assert_allclose(g.box.a, want, rtol=1e-6)
    np.testing.assert_allclose(g.w, X)
    # a frozen dataclass cannot be copied so: rebuilt by dataclasses.replace (was refused when
    # it ran, "only for such an object that is a differentiated argument")
    value, g = value_and_grad(in_a_namespace)(Frozen(box), X)
    assert type(g) is Frozen and np.isclose(value, in_a_namespace(Frozen(box), X))
    np.testing.assert_allclose(g.box.a, want, rtol=1e-6)
    assert np.isclose(jvp(in_a_namespace)(Frozen(box), X, Frozen(t))[1], want[0])
    step = 1e-5
    plus, minus = (grad(in_a_namespace)(Frozen(Squared(A + e * t.a, 3)), X).box.a
                   for e in (step, -step))
    np.testing.assert_allclose(hvp(in_a_namespace)(Frozen(box), X, Frozen(t)).box.a,
                               (plus - minus) / (2 * step), rtol=1e-6, atol=1e-8)


def looped(b, x):
    s = np.sum(b.a2)
    for k in range(4):
        s = s + np.sum(np.sin(b.a2 * x) * k) * s
    return s


def test_with_checkpoint():
    # was refused when it ran ("only for such an object that is a differentiated argument"):
    # the checkpointed derivative rebuilds the object too
    want = numeric_grad(lambda a, x: looped(Squared(a, 3), x), (A, X), 0)
    np.testing.assert_allclose(grad(looped, checkpoint=2)(Squared(A, 3), X).a, want, rtol=1e-6)


class Scaled:
    def __init__(self, w):
        self.w = w

    def loss(self, x):
        return np.sum(np.sin(self.w * x) * x)


def test_transforms_of_a_bound_method_that_reads_attributes_keep_its_instance():
    # hvp(model.loss) of a method reading `self.w` called the tangent without `self` (a
    # TypeError) after the derivatives that may rebuild were introduced; and `inspect` sees the
    # derivative's own parameters
    m = Scaled(np.array([0.5, 1.5, -1.0]))
    v = np.array([1.0, -0.5, 0.25])
    step = 1e-5
    want = (grad(m.loss)(X + step * v) - grad(m.loss)(X - step * v)) / (2 * step)
    np.testing.assert_allclose(hvp(m.loss)(X, v), want, rtol=1e-6, atol=1e-8)
    assert str(inspect.signature(grad(reads_a2))) == "(b, x)"
    assert "def dreads_a2(b, x):" in source(grad(reads_a2))
    assert "def dloss(self, x):" in source(grad(m.loss))


def test_specialize_of_a_derivative_that_reads_attributes():
    # grad of a function reading attributes is a Rebuilding since c7bf7f6, which
    # srcgrad.specialize refused ("takes a derivative srcgrad generated as Python code") for
    # any object argument (the random programs' Fields); it specializes the derivative that
    # runs where nothing is rebuilt, and a call rebuilding a registered object runs its own
    from srcgrad import specialize

    ns = types.SimpleNamespace(a2=A * A, k=3)
    df = specialize(grad(reads_a2))
    for _ in range(2):
        np.testing.assert_allclose(df(ns, X).a2, np.cos(A * A) * X * 3, rtol=1e-12)
    np.testing.assert_allclose(df(Squared(A, 3), X).a, JAX_GRAD, rtol=1e-7)


class SetSorted:
    def __init__(self, a):
        self.a, self.a2 = a, np.array(sorted(set(a)))  # a set of values with gradient


class NpSorted:
    def __init__(self, a):
        self.a, self.a2 = a, np.sort(a)  # the same attribute, written with what has a rule


for _cls in (SetSorted, NpSorted):
    register_pytree(_cls, lambda o: ((o.a,), None), lambda aux, children, c=_cls: c(*children))


def reads_sorted(b, x):
    return np.sum(b.a2 * x)


def test_an_unflatten_srcgrad_cannot_differentiate_and_its_workaround():
    # docs/supported.md: refused when the gradient runs; write __init__ with what srcgrad
    # differentiates (np.sort for sorted(set(...)))
    with pytest.raises(SrcgradError, match="could not differentiate that here"):
        grad(reads_sorted)(SetSorted(A), X)
    got = grad(reads_sorted)(NpSorted(A), X).a
    np.testing.assert_allclose(got, numeric_grad(lambda a, x: reads_sorted(NpSorted(a), x),
                                                 (A, X), 0), rtol=1e-6)
