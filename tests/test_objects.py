"""Objects in differentiated code: attributes of structures (dataclasses, namedtuples,
SimpleNamespace, the user's classes, registered pytrees), methods, ``__call__``, properties,
staticmethods and classmethods, and bound methods as transform input.

Every gradient is compared with central differences in float64, in reverse and forward mode,
and at second order where the construct allows it.
"""

from __future__ import annotations

import copy
import runpy
import types
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import check_grad, numeric_grad
from second_order_check import check_second_order

import srcgrad
from srcgrad import SrcgradError, UnsupportedSyntaxError

STEP = 1e-6


# --- structures ---------------------------------------------------------------------------------
@dataclass
class Params:
    W: np.ndarray
    b: np.ndarray
    scale: float = 1.5
    n: int = 3
    label: str = "layer"


Pair = namedtuple("Pair", ["a", "b"])


class Box:
    """A user class registered as a pytree: its children are ``lo`` and ``hi``."""

    def __init__(self, lo, hi, name="box"):
        self.lo, self.hi, self.name = lo, hi, name


srcgrad.register_pytree(Box, lambda b: ((b.lo, b.hi), b.name),
                        lambda name, children: Box(children[0], children[1], name))


def _leaves(x, path=()):
    """(path, value) of every float leaf of a structure, for central differences."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, path + (("item", k),))
    elif isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        for i, v in enumerate(x):
            yield from _leaves(v, path + (("item", i),))
    elif isinstance(x, np.ndarray) or isinstance(x, float):
        yield path, x
    elif isinstance(x, (int, str, bool)) or x is None:
        return
    else:
        names = x._fields if hasattr(x, "_fields") else vars(x)
        for k in names:
            yield from _leaves(getattr(x, k), path + (("attr", k),))


def _get(x, path):
    for how, key in path:
        x = x[key] if how == "item" else getattr(x, key)
    return x


def _replaced(x, path, value):
    """A copy of structure ``x`` with the leaf at ``path`` replaced."""
    if not path:
        return value
    (how, key), rest = path[0], path[1:]
    if how == "item":
        if isinstance(x, dict):
            return {**x, key: _replaced(x[key], rest, value)}
        items = list(x)
        items[key] = _replaced(items[key], rest, value)
        return type(x)(items)
    if hasattr(x, "_fields"):
        return x._replace(**{key: _replaced(getattr(x, key), rest, value)})
    new = copy.copy(x)
    object.__setattr__(new, key, _replaced(getattr(x, key), rest, value))
    return new


def numeric(f, args, i):
    """Central differences of scalar ``f`` w.r.t. every float leaf of ``args[i]``: a dict by
    leaf path."""
    out = {}

    def at(path, value):
        new = list(args)
        new[i] = _replaced(args[i], path, value)
        return float(np.asarray(f(*new)).reshape(()))

    for path, leaf in _leaves(args[i]):
        if isinstance(leaf, float):
            out[path] = (at(path, leaf + STEP) - at(path, leaf - STEP)) / (2 * STEP)
            continue
        g = np.zeros_like(leaf)
        for idx in np.ndindex(leaf.shape):
            plus, minus = leaf.copy(), leaf.copy()
            plus[idx] += STEP
            minus[idx] -= STEP
            g[idx] = (at(path, plus) - at(path, minus)) / (2 * STEP)
        out[path] = g
    return out


def assert_matches(g, reference):
    for path, expected in reference.items():
        np.testing.assert_allclose(_get(g, path), expected, rtol=1e-6, atol=1e-8,
                                   err_msg=str(path))


def directional(f, args, i, tangent):
    """Central difference of ``f`` along ``tangent`` (a structure like ``args[i]``)."""
    def moved(sign):
        x = args[i]
        for path, t in _leaves(tangent):
            x = _replaced(x, path, _get(x, path) + sign * STEP * t)
        new = list(args)
        new[i] = x
        return f(*new)
    return (moved(1) - moved(-1)) / (2 * STEP)


RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 3))


def make_params():
    rng = np.random.default_rng(1)
    return Params(rng.normal(size=(3, 2)), rng.normal(size=2))


# --- attribute reads of structures --------------------------------------------------------------
def dataclass_loss(p, x):
    h = np.tanh(x[: p.n] @ p.W + p.b)  # an int field used as an int: no gradient
    return np.sum(h ** 2) * p.scale


def test_dataclass_gradient_is_the_same_dataclass():
    p = make_params()
    before = copy.deepcopy(p)
    g = srcgrad.grad(dataclass_loss)(p, X)
    assert type(g) is Params
    assert g.n is None and g.label is None  # no gradient for an int or a str
    assert_matches(g, numeric(dataclass_loss, (p, X), 0))
    assert np.array_equal(p.W, before.W) and p.scale == before.scale  # the caller's object


def test_dataclass_forward_mode_takes_a_structured_tangent():
    p = make_params()
    t = Params(RNG.normal(size=(3, 2)), RNG.normal(size=2), 0.7)
    value, tangent = srcgrad.jvp(dataclass_loss)(p, X, t)
    assert value == pytest.approx(dataclass_loss(p, X))
    assert tangent == pytest.approx(directional(dataclass_loss, (p, X), 0, t), rel=1e-6)


def test_jacobian_and_hessian_of_a_structure_are_refused():
    p = make_params()
    with pytest.raises(SrcgradError, match="not a Params"):
        srcgrad.hessian(dataclass_loss)(p, X)


def test_dataclass_second_order():
    p = make_params()
    h = srcgrad.hessian(dataclass_loss, wrt=1)(p, X)
    reference = numeric(lambda x: srcgrad.grad(dataclass_loss, wrt=1)(p, x)[1, 2], (X,), 0)
    np.testing.assert_allclose(h[1, 2], reference[()], rtol=1e-5, atol=1e-7)
    # forward over reverse with respect to the structure itself
    t = Params(RNG.normal(size=(3, 2)), RNG.normal(size=2), 0.0)
    hv = srcgrad.hvp(dataclass_loss)(p, X, t)
    g = srcgrad.grad(dataclass_loss)
    expected = directional(lambda q: g(q, X).W, (p,), 0, t)
    np.testing.assert_allclose(hv.W, expected, rtol=1e-5, atol=1e-7)


def pair_loss(pair, x):
    return np.sum(np.sin(pair.a * x) + pair[1] * x ** 2)


def test_namedtuple_fields_by_name_and_position():
    pair = Pair(RNG.normal(size=3), 0.5)
    g = srcgrad.grad(pair_loss)(pair, X)
    assert type(g) is Pair
    assert_matches(g, numeric(pair_loss, (pair, X), 0))
    _, t = srcgrad.jvp(pair_loss)(pair, X, Pair(np.ones(3), 2.0))
    assert t == pytest.approx(directional(pair_loss, (pair, X), 0, Pair(np.ones(3), 2.0)))


def namespace_loss(cfg, w):
    return np.sum((w - cfg.target) ** 2) + cfg.reg * np.sum(w ** 2)


def test_simple_namespace_and_a_config_object():
    cfg = types.SimpleNamespace(target=RNG.normal(size=3), reg=0.1, name="cfg")
    w = RNG.normal(size=3)
    g = srcgrad.grad(namespace_loss)(cfg, w)
    assert type(g) is types.SimpleNamespace and g.name is None
    assert_matches(g, numeric(namespace_loss, (cfg, w), 0))
    gw = srcgrad.grad(namespace_loss, wrt=1)(cfg, w)
    np.testing.assert_allclose(gw, numeric(namespace_loss, (cfg, w), 1)[()], rtol=1e-6)


def nested_loss(params, x):
    total = 0.0
    for layer in params["layers"]:
        x = np.tanh(x @ layer.W + layer.b)
        total = total + np.sum(layer.W ** 2)
    return np.sum(x) + params["box"].hi * total - params["box"].lo


def test_nested_structures_and_a_registered_class():
    rng = np.random.default_rng(5)
    params = {"layers": [Params(rng.normal(size=(3, 3)), rng.normal(size=3)) for _ in range(2)],
              "box": Box(0.3, 0.2)}
    g = srcgrad.grad(nested_loss)(params, X)
    assert type(g["layers"][1]) is Params and type(g["box"]) is Box
    assert g["box"].name == "box"  # aux data comes back through unflatten
    assert_matches(g, numeric(nested_loss, (params, X), 0))
    tangent = {"layers": [Params(np.ones((3, 3)), np.ones(3)) for _ in range(2)],
               "box": Box(1.0, -1.0)}
    _, t = srcgrad.jvp(nested_loss)(params, X, tangent)
    assert t == pytest.approx(directional(nested_loss, (params, X), 0, tangent), rel=1e-6)


# --- classes: methods, __call__, properties, staticmethods, classmethods ------------------------
class Dense:
    def __init__(self, W, b, act=True):
        self.p = Params(W, b)
        self.act = act

    def __call__(self, x):
        z = x @ self.p.W + self.p.b
        if self.act:
            return self.activation(z)
        return z

    @staticmethod
    def activation(z):
        return np.tanh(z)


class MLP:
    layers: list[Dense]
    scale_factor = 0.5  # a class attribute: a constant, no gradient

    def __init__(self, layers, reg=0.01):
        self.layers = layers
        self.reg = reg

    @property
    def scale(self):
        return self.scale_factor * 2.0

    @classmethod
    def penalty(cls, v):
        return np.sum(v ** 2)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x * self.scale

    def loss(self, x, y):
        out = self.forward(x)
        r = 0.0
        for layer in self.layers:
            r = r + self.penalty(layer.p.W)
        return np.mean((out - y) ** 2) + self.reg * r


def make_mlp(seed=0):
    rng = np.random.default_rng(seed)
    return MLP([Dense(rng.normal(size=(3, 4)), rng.normal(size=4)),
                Dense(rng.normal(size=(4, 1)), rng.normal(size=1), act=False)])


Y = RNG.normal(size=(4, 1))


def test_bound_method_counts_parameters_after_self():
    model = make_mlp()
    g = srcgrad.grad(model.loss)(X, Y)
    np.testing.assert_allclose(g, numeric(model.loss, (X, Y), 0)[()], rtol=1e-6, atol=1e-8)
    gy = srcgrad.grad(model.loss, wrt=1)(X, Y)
    np.testing.assert_allclose(gy, numeric(model.loss, (X, Y), 1)[()], rtol=1e-6, atol=1e-8)
    value, t = srcgrad.jvp(model.loss)(X, Y, np.ones_like(X))
    assert value == pytest.approx(model.loss(X, Y))
    assert t == pytest.approx(np.sum(g), rel=1e-9)


def test_bound_method_second_order():
    model = make_mlp()
    h = srcgrad.hessian(model.loss)(X, Y)
    v = RNG.normal(size=X.shape)
    hv = srcgrad.hvp(model.loss)(X, Y, v)
    np.testing.assert_allclose(np.tensordot(h, v, axes=2), hv, rtol=1e-8, atol=1e-10)
    g = srcgrad.grad(model.loss)
    expected = (g(X + STEP * v, Y) - g(X - STEP * v, Y)) / (2 * STEP)
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("how", ["bound", "unbound"])
def test_gradient_with_respect_to_self_is_the_object_structure(how):
    model = make_mlp()
    if how == "bound":
        g = srcgrad.grad(model.loss, wrt="self")(X, Y)
    else:  # the class of the layers comes from the annotation `layers: list[Dense]`
        g = srcgrad.grad(MLP.loss, wrt="self")(model, X, Y)
    assert type(g) is MLP and type(g.layers[0]) is Dense and type(g.layers[0].p) is Params
    assert g.layers[0].act is None  # a bool: no gradient
    assert_matches(g, numeric(MLP.loss, (model, X, Y), 0))


def test_forward_mode_with_respect_to_self():
    model = make_mlp()
    tangent = copy.deepcopy(model)
    for layer in tangent.layers:
        layer.p.W = np.ones_like(layer.p.W)
        layer.p.b = np.zeros_like(layer.p.b)
    tangent.reg = 0.0
    _, t = srcgrad.jvp(MLP.loss, wrt="self")(model, X, Y, tangent)
    assert t == pytest.approx(directional(MLP.loss, (model, X, Y), 0, tangent), rel=1e-6)


def test_each_instance_its_own_derivative_and_the_current_values():
    a, b = make_mlp(0), make_mlp(1)
    ga = srcgrad.grad(a.loss)
    before = ga(X, Y)
    a.layers[0].p.W = a.layers[0].p.W * 2.0  # the derivative reads the object when called
    np.testing.assert_allclose(ga(X, Y), numeric(a.loss, (X, Y), 0)[()], rtol=1e-6, atol=1e-8)
    assert not np.allclose(ga(X, Y), before)
    np.testing.assert_allclose(srcgrad.grad(b.loss)(X, Y), numeric(b.loss, (X, Y), 0)[()],
                               rtol=1e-6, atol=1e-8)


class OtherDense(Dense):
    def __call__(self, x):
        return x @ self.p.W


def test_a_layer_of_another_class_is_refused_at_call_time():
    model = make_mlp()
    g = srcgrad.grad(model.loss)
    model.layers[1] = OtherDense(model.layers[1].p.W, model.layers[1].p.b)
    with pytest.raises(SrcgradError, match="inlined the methods of Dense for an object that is "
                                           "now a OtherDense"):
        g(X, Y)


class Shape:
    def __init__(self, r):
        self.r = r

    @property
    def area(self):
        return np.pi * self.r ** 2


def area_of(shape):
    return shape.area


def area_annotated(shape: Shape):
    return shape.area


def test_property_of_an_unknown_class_is_refused_not_differentiated_as_data():
    with pytest.raises(SrcgradError, match="a property"):
        srcgrad.grad(area_of)(Shape(1.5))
    with pytest.raises(SrcgradError, match="a property"):
        srcgrad.jvp(area_of)(Shape(1.5), Shape(1.0))


def test_property_of_an_annotated_parameter_is_inlined():
    g = srcgrad.grad(area_annotated)(Shape(1.5))
    assert type(g) is Shape and g.r == pytest.approx(2 * np.pi * 1.5)


# --- objects built and written in the function -------------------------------------------------
@dataclass
class State:
    h: np.ndarray
    c: float
    steps: int = 0


def cell(s, x):
    h = np.tanh(s.h * x + s.c)
    return State(h, s.c * 2.0, s.steps + 1)


def unrolled(x, h0):
    s = State(h0, 0.5)
    for _ in range(3):
        s = cell(s, x)
    out = State(s.h, s.c)
    out.h = out.h * 2.0  # a write into an object the function built
    out.c += np.sum(out.h)
    return out.c


def test_structures_built_in_the_function():
    h0 = RNG.normal(size=3)
    x = RNG.normal(size=3)
    g = srcgrad.grad(unrolled, wrt=(0, 1))(x, h0)
    np.testing.assert_allclose(g[0], numeric(unrolled, (x, h0), 0)[()], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g[1], numeric(unrolled, (x, h0), 1)[()], rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(unrolled, wrt=1)(x, h0, np.ones(3))
    assert t == pytest.approx(np.sum(g[1]), rel=1e-9)
    hv = srcgrad.hvp(unrolled)(x, h0, np.ones(3))
    expected = directional(srcgrad.grad(unrolled), (x, h0), 0, np.ones(3))
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-7)


def test_structured_output_seed_and_tangent():
    s = State(RNG.normal(size=3), 0.3, 4)
    x = RNG.normal(size=3)
    seed = State(RNG.normal(size=3), 2.0, 0)

    def projected(s):
        out = cell(s, x)
        return np.sum(out.h * seed.h) + out.c * seed.c

    g = srcgrad.vjp(cell)(s, x, seed)
    assert type(g) is State
    assert_matches(g, numeric(projected, (s,), 0))
    tangent = State(RNG.normal(size=3), 1.0, 0)
    value, t = srcgrad.jvp(cell)(s, x, tangent)
    assert type(t) is State and value.steps == 5
    expected = directional(lambda q: cell(q, x).h, (s,), 0, tangent)
    np.testing.assert_allclose(t.h, expected, rtol=1e-6, atol=1e-8)
    assert t.c == pytest.approx(2.0)
    with pytest.raises(srcgrad.NonScalarOutputError):
        srcgrad.grad(cell)(s, x)


def write_argument(p, x):
    p.W = p.W * 2  # into a copy: the caller's object stays as it was
    p.scale += 1.0
    return np.sum(p.W * x) * p.scale


def test_writing_an_argument_attribute_writes_a_copy():
    p = make_params()
    before = copy.deepcopy(p)
    x = np.ones((3, 2))
    g = srcgrad.grad(write_argument)(p, x)
    assert np.array_equal(p.W, before.W) and p.scale == before.scale

    def fresh(p, x):  # Python itself changes the caller's object: each call on its own copy
        return write_argument(copy.deepcopy(p), x)

    assert_matches(g, numeric(fresh, (p, x), 0))
    gx = srcgrad.grad(write_argument, wrt=1)(p, x)
    np.testing.assert_allclose(gx, numeric(fresh, (p, x), 1)[()], rtol=1e-6)


class Accumulator:
    def __init__(self, start):
        self.total = start

    def add(self, v):
        self.total = self.total + v * v
        return self


def accumulate(x):
    acc = Accumulator(0.0)
    for i in range(3):
        acc.add(x * i)
    ns = types.SimpleNamespace(total=acc.total, scale=2.0)
    return np.sum(ns.total) * ns.scale


def test_an_object_built_with_its_init_and_changed_by_its_methods():
    x = RNG.normal(size=3)
    g = srcgrad.grad(accumulate)(x)
    np.testing.assert_allclose(g, numeric(accumulate, (x,), 0)[()], rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(accumulate)(x, np.ones(3))
    assert t == pytest.approx(np.sum(g), rel=1e-9)


def namespace_written_in_a_loop(x):
    state = types.SimpleNamespace(h=x * 1.0, c=0.0)
    for _ in range(3):
        state.h = np.tanh(state.h * 1.5)
        state.c = state.c + np.sum(state.h)
    return state.c


def test_a_namespace_written_in_a_loop():
    # its fields written in a loop make it active as a whole: the empty namespace it starts
    # from was a call of SimpleNamespace without a rule (NoRuleError without a line)
    x = RNG.normal(size=3)
    g = srcgrad.grad(namespace_written_in_a_loop)(x)
    np.testing.assert_allclose(g, numeric(namespace_written_in_a_loop, (x,), 0)[()], rtol=1e-6,
                               atol=1e-8)


GLOBAL_ACC = Accumulator(1.0)


def alias_then_write(x):
    s = State(x, 1.0)
    t = s
    s.h = x * 2.0
    return np.sum(t.h)


def write_global(x):
    GLOBAL_ACC.add(x)
    return np.sum(x)


@pytest.mark.parametrize("f, line", [(alias_then_write, "t = s"),
                                     (write_global, "self.total = self.total + v * v")])
def test_writes_another_name_would_see_are_refused_with_the_line(f, line):
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcgrad.grad(f)(np.ones(3))
    assert line in str(info.value)


def test_generated_code_of_a_bound_method_is_readable():
    model = make_mlp()
    assert_golden("objects_bound_method.py", srcgrad.source(srcgrad.grad(model.loss)))


def test_example_mlp_class_trains_with_the_gradient_of_its_model():
    path = Path(__file__).parent.parent / "examples" / "mlp_class.py"
    example = runpy.run_path(str(path), run_name="example")
    result = example["main"](quiet=True, steps=40)
    assert result["last"] < result["first"]
    model, x, onehot = result["model"], result["x"][:40], result["onehot"][:40]
    g = result["dloss"](x, onehot)
    layer, g_layer = model.layers[1], g.layers[1]
    assert type(g_layer.params) is type(layer.params) and g_layer.activation is None
    W = layer.params.W
    for idx in [(0, 0), (3, 7), (31, 31)]:
        old = W[idx]
        W[idx] = old + STEP
        up = model.loss(x, onehot)
        W[idx] = old - STEP
        down = model.loss(x, onehot)
        W[idx] = old
        assert g_layer.params.W[idx] == pytest.approx((up - down) / (2 * STEP), rel=1e-5, abs=1e-8)


@dataclass
class Sized:
    size: float
    w: np.ndarray


def sized_argument(c, x):
    return np.sum(c.w * x) * c.size


def sized_built(x):
    c = Sized(x[0] * 2.0, x)
    return np.sum(c.w) * c.size


def test_a_field_named_like_an_array_attribute_is_refused_not_dropped():
    c, x = Sized(2.0, np.ones(2)), np.ones(2)
    with pytest.raises(SrcgradError, match="field `size`"):
        srcgrad.grad(sized_argument)(c, x)
    with pytest.raises(SrcgradError, match="field `size`"):
        srcgrad.jvp(sized_argument)(c, x, Sized(1.0, np.ones(2)))
    with pytest.raises(srcgrad.NoRuleError, match="`size`"):
        srcgrad.grad(sized_built)


def built_box(lo, hi):
    box = Box(lo * 2.0, hi)
    return box.hi * box.lo


def test_a_registered_class_built_in_the_function():
    g = srcgrad.grad(built_box, wrt=(0, 1))(0.3, 1.7)
    assert g[0] == pytest.approx(2.0 * 1.7) and g[1] == pytest.approx(0.6)
    _, t = srcgrad.jvp(built_box)(0.3, 1.7, 1.0)
    assert t == pytest.approx(3.4)


class Scaled:
    """A registered class whose aux data (``k``) is a float the function reads."""

    def __init__(self, a, k):
        self.a, self.k = a, k


srcgrad.register_pytree(Scaled, lambda o: ((o.a,), o.k), lambda k, ch: Scaled(ch[0], k))


def reads_aux_data(b, x):
    return np.sum(np.sin(b.a) * x) * b.k


def test_the_aux_data_of_a_registered_class_is_static():
    # was "a gradient reached the attributes ['k'] ... not among the children" when it ran:
    # the aux data is static, as in JAX, and the gradient is unflatten(aux, child gradients)
    b, x = Scaled(np.array([0.4, 0.2, 0.1]), 3.0), np.array([0.5, -1.0, 2.0])
    g = srcgrad.grad(reads_aux_data)(b, x)
    assert isinstance(g, Scaled) and g.k == 3.0
    want = numeric_grad(lambda a: reads_aux_data(Scaled(a, 3.0), x), (b.a,), 0)
    np.testing.assert_allclose(g.a, want, rtol=1e-6, atol=1e-9)
    t = Scaled(np.array([0.3, -0.2, 0.5]), 3.0)
    _, jt = srcgrad.jvp(reads_aux_data)(b, x, t)
    assert jt == pytest.approx(float(want @ t.a), rel=1e-6)
    h = srcgrad.hvp(reads_aux_data)(b, x, t)
    step = 1e-6
    grad_a = lambda a: srcgrad.grad(reads_aux_data)(Scaled(a, 3.0), x).a  # noqa: E731
    np.testing.assert_allclose(h.a, (grad_a(b.a + step * t.a) - grad_a(b.a - step * t.a))
                               / (2 * step), rtol=1e-5, atol=1e-7)


def update_array_field(x):
    s = State(x * 1.0, 2.0)
    h = s.h
    s.h += x  # Python updates the array in place: `h` holds it too and sees the change
    return np.sum(s.h * h) * s.c


def test_augmented_assignment_of_an_array_field_updates_every_holder():
    check_grad(update_array_field, (np.array([0.5, -1.5]),))


def test_a_derivative_specialized_for_classes_is_not_stored_on_disk():
    from srcgrad.emit import diskcache

    before = dict(diskcache.STATS)
    model = make_mlp(7)
    srcgrad.grad(model.loss, wrt=1)  # inlines Dense.__call__ found through the instance
    assert diskcache.STATS["stored"] == before["stored"]
    assert diskcache.STATS["loaded"] == before["loaded"]


def test_a_bound_method_derivative_says_what_it_is_and_pickles():
    import pickle

    model = make_mlp()
    g = srcgrad.grad(model.loss)
    assert repr(g) == "<grad of MLP.loss wrt 'x'>"
    again = pickle.loads(pickle.dumps(g))
    np.testing.assert_allclose(again(X, Y), g(X, Y))


# --- methods of objects a call passes inside an argument, with no annotation -------------------
@dataclass
class Affine:
    W: np.ndarray
    b: np.ndarray

    def affine(self, v):
        return self.W @ v + self.b


class Sine:
    """Another class with a method of the same name: the call specializes again."""

    def __init__(self, s):
        self.s = s

    def affine(self, v):
        return np.sin(v) * self.s


class Gain:
    def __init__(self, s):
        self.s = s

    def __call__(self, v):
        return self.s * np.tanh(v)


Stack = namedtuple("Stack", ["ps", "act"])


def first_layer(x, P):
    return np.sum(np.tanh(P.ps[0].affine(x)) ** 2) * P.c


def every_layer(x, P):
    h = x
    for lay in P.ps:
        h = np.tanh(lay.affine(h))
    return np.sum(h * h)


def every_item(x, P):
    h = x
    for lay in P["ps"]:
        h = np.tanh(lay.affine(h))
    return np.sum(h * h)


def apply_layer(lay, v):
    return lay.affine(v)


def helper_bound_method_and_callable_field(x, P):
    f = P.ps[1].affine
    return np.sum(P.act(apply_layer(P.ps[0], f(x))))


def callable_objects_in_a_loop(x, P):
    h = x
    for act in P.acts:
        h = act(h)
    return np.sum(h * x)


def method_of_the_argument_itself(x, P):
    return np.sum(np.sin(P.affine(x)) * x)


def _passed():
    rng = np.random.default_rng(5)
    W, b = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)
    ns = types.SimpleNamespace
    return [
        (first_layer, ns(ps=[Affine(W, b)], c=0.7)),
        (every_item, {"ps": (Affine(W, b), Affine(W.T, 0.5 * b))}),
        (every_layer, ns(ps=[Affine(W, b), Affine(W.T, 0.5 * b)])),
        (helper_bound_method_and_callable_field, Stack([Affine(W, b), Affine(W.T, b)], Gain(1.5))),
        (method_of_the_argument_itself, Affine(W, b)),
        (callable_objects_in_a_loop, ns(acts=[Gain(1.5), Gain(0.5)])),
    ]


@pytest.mark.parametrize("case", range(len(_passed())))
def test_methods_of_objects_inside_an_unannotated_argument(case):
    """Was refused ("annotate the parameter with its class"): the derivative is generated when
    called, for the classes of the objects the argument holds (a class check guards each
    inlined method); gradient and tangent with respect to the argument have its structure."""
    f, P = _passed()[case]
    x = RNG.normal(size=3)
    before = copy.deepcopy(P)
    gx, gP = srcgrad.grad(f, wrt=(0, 1))(x, P)
    np.testing.assert_allclose(gx, numeric(f, (x, P), 0)[()], rtol=1e-6, atol=1e-8)
    assert type(gP) is type(P)
    assert_matches(gP, numeric(f, (x, P), 1))
    assert all(np.array_equal(a, b) for (_, a), (_, b) in zip(_leaves(P), _leaves(before)))
    tangent = _replaced(P, (), P)
    for path, leaf in _leaves(P):
        tangent = _replaced(tangent, path, np.ones_like(leaf))
    value, t = srcgrad.jvp(f, wrt=1)(x, P, tangent)
    assert value == pytest.approx(f(x, P), rel=1e-12)
    assert t == pytest.approx(directional(f, (x, P), 1, tangent), rel=1e-6)
    check_second_order(f, [x, P], 0)


def test_objects_of_another_class_give_another_derivative():
    x = RNG.normal(size=3)
    df = srcgrad.grad(first_layer)
    for lay in (Affine(np.eye(3), np.ones(3)), Sine(0.5), Affine(2.0 * np.eye(3), np.zeros(3))):
        P = types.SimpleNamespace(ps=[lay], c=0.7)
        np.testing.assert_allclose(df(x, P), numeric(first_layer, (x, P), 0)[()], rtol=1e-6,
                                   atol=1e-8)
        assert f"check_class(P_ps_item, {type(lay).__name__})" in srcgrad.source(df)


def test_objects_of_two_classes_in_a_loop_call_each_its_own_method():
    P = types.SimpleNamespace(ps=[Affine(np.eye(3), np.ones(3)), Sine(0.5)])
    x = RNG.normal(size=3)
    np.testing.assert_allclose(srcgrad.grad(every_layer)(x, P), numeric(every_layer, (x, P), 0)[()],
                               rtol=1e-6, atol=1e-8)


def test_an_argument_whose_methods_are_not_called_keeps_one_derivative():
    df = srcgrad.grad(lambda x, P: np.sum(P.ps[0].W @ x))  # no method: generated at once
    assert "def " in srcgrad.source(df)


@dataclass
class _Shifted:
    W: np.ndarray
    b: np.ndarray

    def affine(self, v):
        return self.W @ v + self.b


def _field_updated_then_method(x, P):
    h = np.tanh(x)
    P.b += 0.5 * h  # P = field_updated(P, "b", ...): still the argument's object
    return np.sum(np.tanh(P.affine(h * P.b)) ** 2)


def test_a_method_of_an_unannotated_argument_after_an_update_of_its_field():
    # refused ("the method `.affine()` here") since the update lost the trace to the parameter
    x = np.array([0.3, -0.5, 0.8])
    P = _Shifted(np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7], [1.0, 0.1, 0.2]]),
                 np.array([0.1, -0.2, 0.3]))
    before = copy.deepcopy(P)
    g = srcgrad.grad(_field_updated_then_method)(x, P)
    np.testing.assert_array_equal(P.b, before.b)
    step = 1e-6
    expected = [(_field_updated_then_method(x + step * e, copy.deepcopy(P))
                 - _field_updated_then_method(x - step * e, copy.deepcopy(P))) / (2 * step)
                for e in np.eye(3)]
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-9)
