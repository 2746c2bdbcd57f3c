"""Cases that only a surviving mutant of a runtime helper showed untested (docs/development.md,
mutation testing): objects of classes registered with ``register_pytree``, containers and lists.

Each is a program a user can write, checked against central differences, exact values or the
refusal; the comment names the mutant of ``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import collections
import dataclasses
import types

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad.errors import SrcgradError


class _Slotted:
    """A registered class with ``__slots__`` (no ``__dict__``): children ``w`` and ``b``."""

    __slots__ = ("w", "b", "tag")

    def __init__(self, w, b, tag="slotted"):
        self.w, self.b, self.tag = w, b, tag


srcgrad.register_pytree(_Slotted, lambda s: ((s.w, s.b), s.tag),
                        lambda tag, children: _Slotted(children[0], children[1], tag))


class _Scaled:
    """A registered class whose array ``scale`` is not a child (it goes with the aux data)."""

    def __init__(self, w, scale):
        self.w, self.scale = w, scale


srcgrad.register_pytree(_Scaled, lambda s: ((s.w,), s.scale),
                        lambda scale, children: _Scaled(children[0], scale))


def _slotted_loss(s, x):
    return np.sum(np.tanh(s.w * x) * s.b)


def _scaled_loss(s, x):
    return np.sum(np.sin(s.w * x) * s.scale)


def test_a_registered_class_with_slots_has_its_children_as_fields():
    # pytrees._attribute_names/checked_attribute: the children of a class with __slots__ are
    # found among its slots (mutants of the slot loop found none, or the non-child `tag`; with
    # `return True` -> False `.w` was refused as computed when read)
    s, x = _Slotted(np.array([0.5, -1.0]), np.array([2.0, 3.0])), np.array([1.5, 0.7])
    g = srcgrad.grad(_slotted_loss)(s, x)
    assert type(g) is _Slotted and g.tag == "slotted"
    np.testing.assert_allclose(g.w, numeric_grad(lambda w: _slotted_loss(_Slotted(w, s.b), x),
                                                 (s.w,), 0), rtol=1e-6)
    np.testing.assert_allclose(g.b, np.tanh(s.w * x), rtol=1e-12)
    t = _Slotted(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    value, tangent = srcgrad.jvp(_slotted_loss)(s, x, t)
    assert value == _slotted_loss(s, x)
    assert tangent == pytest.approx(g.w[0] + g.b[1], rel=1e-12)


def _static_scale(cls, s, x):
    """``scale``, flatten's aux data, is static, as in JAX (6180e06; it was an error, "reached
    the attributes ['scale'] ... not among the children"): the gradient holds w's and the
    primal's ``scale``."""
    g = srcgrad.grad(_scaled_loss)(s, x)
    assert type(g) is cls and g.scale is s.scale
    np.testing.assert_allclose(g.w, numeric_grad(lambda w: _scaled_loss(cls(w, s.scale), x),
                                                 (s.w,), 0), rtol=1e-6)


def test_a_gradient_reaching_an_attribute_that_is_no_child_is_static():
    # pytrees._attribute_names/rebuild: `scale` is held by the object but is not among the
    # children flatten returns: its aux data, a constant of the derivative
    s, x = _Scaled(np.array([0.5, -1.0]), np.array([2.0, 3.0])), np.array([1.5, 0.7])
    _static_scale(_Scaled, s, x)
    # the gradient with respect to x alone needs none of s's
    np.testing.assert_allclose(srcgrad.grad(_scaled_loss, wrt=1)(s, x),
                               np.cos(s.w * x) * s.w * s.scale, rtol=1e-12)


class _SlottedScaled:
    """A registered class with ``__slots__`` whose array ``scale`` is not a child."""

    __slots__ = ("w", "scale")

    def __init__(self, w, scale):
        self.w, self.scale = w, scale


srcgrad.register_pytree(_SlottedScaled, lambda s: ((s.w,), s.scale),
                        lambda scale, children: _SlottedScaled(children[0], scale))


@pytest.mark.parametrize("cls", [_Scaled, _SlottedScaled], ids=lambda c: c.__name__)
def test_an_attribute_that_is_no_child_is_static_data(cls):
    # pytrees.checked_attribute: a slot of a registered class is data the object holds (its
    # gradient was refused as "computed when read (a property?)"); containers.attr_of: its
    # tangent is zero (a tangent built by unflatten holds the primal's `scale`, which was taken
    # for the tangent: jvp 1.6257 for 2.1951)
    s, x = cls(np.array([0.5, -1.0]), np.array([2.0, 3.0])), np.array([1.5, 0.7])
    _static_scale(cls, s, x)
    t = np.array([1.0, -0.5])
    value, tangent = srcgrad.jvp(_scaled_loss)(s, x, cls(t, s.scale))
    assert value == _scaled_loss(s, x)
    expected = numeric_grad(lambda w: _scaled_loss(cls(w, s.scale), x), (s.w,), 0) @ t
    assert tangent == pytest.approx(expected, rel=1e-6)


@dataclasses.dataclass
class _Linear:
    w: np.ndarray
    c: float
    rest: tuple = ()


def _linear_loss(p, x):
    return np.sum(p.w * x)


def test_a_float_field_that_gets_no_gradient_gets_a_zero_even_when_it_is_zero():
    # pytrees._differentiable: a float field the function does not read gets 0.0, an empty tuple
    # its empty structure (with a test replaced by the field's own truth, a field holding 0.0 or
    # () got None)
    x = np.array([0.5, 1.5])
    for c in (0.0, 3.0):
        g = srcgrad.grad(_linear_loss)(_Linear(np.array([1.0, 2.0]), c), x)
        assert type(g) is _Linear and g.c == 0.0 and type(g.c) is float and g.rest == ()
        np.testing.assert_array_equal(g.w, x)


def _integer_array_in_a_field_updated(x):
    P = types.SimpleNamespace(ps=[types.SimpleNamespace(h=np.array([1, 2]))])
    P.ps[0].h += 1
    return np.sum(P.ps[0].h * x)


def test_an_inner_field_holding_an_integer_array_updated_is_refused_naming_its_dtype():
    # pytrees.check_updated_in_place: the message names the array's dtype (mutants of the
    # ' of ' + dtype part raised a TypeError or dropped it)
    with pytest.raises(SrcgradError, match=r"`P\.ps\[0\]\.h` holds a ndarray of int64: srcgrad "
                                           r"follows an augmented assignment"):
        srcgrad.grad(_integer_array_in_a_field_updated)(np.array([0.5, 1.5]))


def _tuple_made_a_list(x):
    t = tuple([x[0], x[1]])
    L = list(t)
    L.append(x[2])
    return t[0] * L[2] + L[1]


def _sorted_twice(x):
    L = sorted([x[0], x[1], x[2]])
    M = sorted([x[2], x[0]], reverse=True)
    return L[0] * M[0] + L[2] * M[1]


@pytest.mark.parametrize("f", [_tuple_made_a_list, _sorted_twice], ids=lambda f: f.__name__)
def test_lists_made_from_a_tuple_and_sorted(f):
    # lists.as_list: `list(t)` is a new list (with `list(...)` dropped the tuple itself was
    # appended to: AttributeError); lists.sort_keys: the order of the keys (dropped: TypeError)
    x = np.array([0.5, -1.3, 2.0])
    g = srcgrad.grad(f)(x)
    np.testing.assert_allclose(g, numeric_grad(f, (x,), 0), rtol=1e-6, atol=1e-9)
    t = np.array([1.0, 0.5, -2.0])
    assert srcgrad.jvp(f)(x, t)[1] == pytest.approx(g @ t, rel=1e-12)


def _inserted(x):
    L = [x[0] * x[1], x[1]]
    L.insert(1, x[2] * x[0])
    return L[0] * L[1] + L[2] * L[1] * x[2]


def _extended(x):
    L = [x[0] * x[2]]
    L.extend([x[1] * x[1], x[2]])
    return L[0] * L[1] * L[2] + L[1]


def _dict_values_and_get(x):
    d = {"a": x[0] * x[1], "b": x[2] * x[2]}
    vs = list(d.values())
    return vs[0] * vs[1] + d.get("c", x[1] * x[0]) * d.get("a", 2.0)


def _dict_items(x):
    d = {"a": x[0] * x[1], "b": x[2] * x[2]}
    its = list(d.items())
    return its[0][1] * its[1][1] + its[1][1] * x[0]


@pytest.mark.parametrize("f", [_inserted, _extended, _dict_values_and_get, _dict_items],
                         ids=lambda f: f.__name__)
def test_reverse_over_reverse_through_list_and_dict_methods(f):
    # the adjoints of the list/dict adjoint helpers (lists.insert_zero, only_at, pad_cotangents,
    # dict_to_values, default_part, dict_to_items), which no test ran: the Hessian by reverse
    # over reverse against differences of the gradient (insert_zero's `dy is None` negated and
    # default_part's `key in mapping` negated gave wrong Hessians; the others raised TypeErrors)
    x = np.array([0.5, -1.3, 2.0])
    grad = srcgrad.grad(f)
    e = 1e-5
    numeric = np.stack([(grad(x + e * u) - grad(x - e * u)) / (2 * e) for u in np.eye(3)])
    np.testing.assert_allclose(srcgrad.jacobian(grad, method="rev")(x), numeric, rtol=1e-6,
                               atol=1e-8)


@dataclasses.dataclass
class _Inner:
    a: np.ndarray
    pair: tuple


_Named = collections.namedtuple("_Named", "u v")


@dataclasses.dataclass
class _Outer:
    w: np.ndarray
    inner: _Inner
    named: _Named


def _through_asdict(x):
    o = _Outer(x * 2.0, _Inner(np.sin(x), (x[0], x[1] * 3.0)), _Named(x[2], x * x))
    d = dataclasses.asdict(o)
    return (np.sum(d["w"] * d["inner"]["a"]) + d["inner"]["pair"][1] * d["named"][0]
            + np.sum(d["named"][1]))


def test_dataclasses_asdict_of_nested_objects_in_both_modes():
    # containers.as_dict_tangent, run by no test: the tangent of asdict(o) for a dataclass
    # holding a dataclass, a tuple and a namedtuple (with `kind == "namedtuple"` negated the
    # namedtuple's tangent was built from one argument: TypeError)
    x = np.array([0.5, -1.3, 2.0])
    g = srcgrad.grad(_through_asdict)(x)
    np.testing.assert_allclose(g, numeric_grad(_through_asdict, (x,), 0), rtol=1e-6)
    t = np.array([1.0, 0.5, -2.0])
    assert srcgrad.jvp(_through_asdict)(x, t)[1] == pytest.approx(g @ t, rel=1e-10)


def _dict_sum(d):
    return np.sum(d["a"] + d["b"])


def _dict_weighted(d, x):
    return np.sum(d["a"] * x) + np.sum(d["b"] * x)


def _fields_sum(p):
    return np.sum(p.a + p.b)


@dataclasses.dataclass
class _AB:
    a: np.ndarray
    b: np.ndarray


@pytest.mark.parametrize("f, args, kind", [
    (_dict_sum, (), dict), (_dict_weighted, (np.array([3.0, 4.0]),), dict),
    (_fields_sum, (), _AB), (_fields_sum, (), types.SimpleNamespace)],
    ids=["sum", "weighted", "dataclass", "namespace"])
def test_the_gradient_of_a_dict_is_arrays_the_caller_owns(f, args, kind):
    # containers.copy_grad of a dict copies each value (with `copy_grad(v)` -> v the caller got
    # unreduce's read-only broadcast view: `g["a"] += 10` raised "output array is read-only");
    # of an object, each field (with `copy_grad(value)` -> value in its rebuild, the same)
    d = {"a": np.array([0.5, -1.0]), "b": np.array([2.0, 3.0])}
    if kind is not dict:
        g = srcgrad.grad(f)(kind(**d))
        assert type(g) is kind
        g.a += 10.0
        np.testing.assert_array_equal(g.a, [11.0, 11.0])
        np.testing.assert_array_equal(g.b, [1.0, 1.0])
        return
    g = srcgrad.grad(f)(d, *args)
    want = {k: v.copy() for k, v in g.items()}
    g["a"] += 10.0
    np.testing.assert_array_equal(g["b"], want["b"])
    assert not any(np.shares_memory(v, a) for v in g.values() for a in [*args, *d.values()])
    back = srcgrad.pullback(f)(d, *args)[1]
    first = back(1.0)
    first["a"] += 5.0
    np.testing.assert_array_equal(back(1.0)["a"], want["a"])


def _multiplied_at(a, b):
    y = a * 1.5
    np.multiply.at(y, [0, 2, 0, 0, 1], b)
    return np.sum(y * np.array([1.0, -2.0, 3.0]))


def _divided_at(a, b):
    y = a * 1.5
    np.divide.at(y, [1, 1, 0, 1], b)
    return np.sum(y * np.array([1.0, -2.0, 3.0]))


@pytest.mark.parametrize("f, n", [(_multiplied_at, 5), (_divided_at, 4)],
                         ids=["multiply", "divide"])
def test_a_ufunc_at_with_an_index_repeated_three_times(f, n):
    # writes._others_product groups the occurrences of each position (with `sorted_pos[:-1]`
    # -> `[:-2]` the groups were found wrong: a broadcast error for three or more occurrences)
    a, b = np.array([0.5, -1.2, 2.0]), np.array([1.3, 0.7, -0.4, 2.1, 0.9])[:n]
    for i in (0, 1):
        g = srcgrad.grad(f, wrt=i)(a, b)
        np.testing.assert_allclose(g, numeric_grad(f, (a, b), i), rtol=1e-6, atol=1e-9)
        t = np.ones_like((a, b)[i])
        assert srcgrad.jvp(f, wrt=i)(a, b, t)[1] == pytest.approx(g @ t, rel=1e-9)


_TIED = np.array([float((7 * i) % 3) for i in range(41)])  # 0, 1, 2 repeated: ranks tie


def _two_quantiles(a):
    return np.sum(np.quantile(a, [0.3, 0.75]) * np.array([1.0, 2.0]))


def test_a_quantile_at_tied_elements_goes_to_the_earlier_of_them():
    # reductions.quantile_grad: the rank's gradient goes to the element a stable sort puts there
    # (docs/numpy.md); with `argsort(kind="stable")` -> `argsort()` NumPy's default sort (not
    # stable for 41 elements) gave the 0.75 quantile's gradient to a later tied element
    a = _TIED.copy()
    order = sorted(range(a.size), key=lambda i: a[i])  # Python's sort is stable
    want = np.zeros(a.size)
    want[order[12]] += 1.0  # 0.3 * 40 and 0.75 * 40 are whole ranks
    want[order[30]] += 2.0
    np.testing.assert_array_equal(srcgrad.grad(_two_quantiles)(a), want)
    t = np.linspace(-1.0, 1.0, a.size)
    assert srcgrad.jvp(_two_quantiles)(a, t)[1] == pytest.approx(want @ t, rel=1e-12)
    np.testing.assert_array_equal(a, _TIED)


def test_digamma_and_trigamma_against_scipy():
    # runtime.special (the derivatives of math.lgamma): the asymptotic series from 12 on, the
    # reflection below 1/2 (mutants of both survived the rows, whose points miss them)
    special = pytest.importorskip("scipy.special")
    from srcgrad.runtime.special import digamma, trigamma

    x = np.array([12.0, 12.5, 30.0, 3.7, 0.3, -2.5, -0.75])
    # (the series' own error at 12 is about 1e-12 for trigamma; a mutant dropping its last terms
    # of digamma's series was off by 2e-9)
    np.testing.assert_allclose(digamma(x), special.digamma(x), rtol=1e-12)
    np.testing.assert_allclose(trigamma(x), special.polygamma(1, x), rtol=1e-11)
    assert digamma(0.3) == pytest.approx(special.digamma(0.3), rel=1e-12)  # a float in, out


@dataclasses.dataclass
class _Layer:
    w: np.ndarray
    act: object = np.tanh
    tags: frozenset = frozenset({"a"})
    span: range = range(2)


def _layer_loss(p, x):
    return np.sum(np.tanh(p.w * x))


def test_fields_holding_a_function_a_set_or_a_range_get_no_gradient():
    # pytrees._differentiable: a field that is neither float data nor a structure gets None
    # (with `kind_of(value) is not None` -> `value is not None` they got 0.0, 0.0 and zeros)
    x = np.array([0.5, 1.5])
    p = _Layer(np.array([1.0, 2.0]))
    g = srcgrad.grad(_layer_loss)(p, x)
    assert type(g) is _Layer and (g.act, g.tags, g.span) == (None, None, None)
    np.testing.assert_allclose(g.w, x / np.cosh(p.w * x) ** 2, rtol=1e-12)


class _ArrayLike:
    """A class with ``__array__`` only (no ``__array_function__``): an array of another kind,
    not a structure of fields."""

    def __init__(self, w):
        self.w = w

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.w, dtype=dtype)


def _array_like_loss(p, x):
    return np.sum(p.w * x)


def test_an_attribute_of_an_object_with___array___is_refused():
    # pytrees.kind_of: `__array__` alone makes an array, not an object (with `or` -> `and` its
    # `.w` got a gradient); checked_attribute: the refusal (with its call dropped, a TypeError)
    with pytest.raises(SrcgradError, match=r"srcgrad has no gradient for the attribute `\.w` "
                                           r"of a _ArrayLike: differentiable attributes are"):
        srcgrad.grad(_array_like_loss)(_ArrayLike(np.array([0.5, 1.5])), np.array([1.0, 2.0]))


def _insert_into_an_array(x):
    a = x * 2.0
    a.insert(0, x[0])
    return np.sum(a)


def test_insert_into_an_array_is_python_s_attribute_error():
    # lists._require: the message names the type (with `type(...).__name__` dropped, the array)
    with pytest.raises(AttributeError, match=r"^'ndarray' object has no attribute 'insert'"):
        srcgrad.grad(_insert_into_an_array)(np.array([0.5, 1.5]))


def _item_squared(x):
    return x.item() ** 2


def test_the_item_of_a_one_element_argument():
    # lists.item: the value is a Python float (branches swapped: the array itself);
    # lists.item_grad: the gradient has the argument's shape (condition negated: a float)
    x = np.array([1.5])
    value, g = srcgrad.value_and_grad(_item_squared)(x)
    assert type(value) is float and value == 2.25
    assert type(g) is np.ndarray and g.shape == (1,) and g[0] == 3.0
    assert srcgrad.jvp(_item_squared)(x, np.array([2.0]))[1] == 6.0


def _enumerated_complex(z):
    s = 0.0
    for idx, v in np.ndenumerate(z):
        s = s + np.real(v * v) * (idx[0] + 1.0)
    return s


def _enumerated_pairs(M):
    pairs = list(np.ndenumerate(M))
    return pairs[0][1] * pairs[3][1]


def test_ndenumerate_of_a_complex_array_and_pairs_read_by_position():
    # lists.ndenumerate_grad: the gradient in the array's dtype (with `dtype=` dropped, a real
    # array: the imaginary parts were lost), and pairs that get no cotangent (with `and` -> `or`,
    # a TypeError)
    M = np.array([[0.5, 1.5], [-2.0, 0.3]])
    z = M + 1j * M[::-1]
    g = srcgrad.grad(_enumerated_complex)(z)
    np.testing.assert_allclose(g, 2 * np.conj(z) * np.array([[1.0], [2.0]]), rtol=1e-12)
    g = srcgrad.grad(_enumerated_pairs)(M)
    np.testing.assert_allclose(g, numeric_grad(_enumerated_pairs, (M,), 0), rtol=1e-6)
    np.testing.assert_array_equal(g, [[0.3, 0.0], [0.0, 0.5]])


def test_a_field_written_on_a_namedtuple_is_refused_as_immutable():
    # runtime.containers.set_field: the message names a namedtuple as immutable (with the test
    # swapped it said "of a Point")
    Point = collections.namedtuple("Point", "a b")

    def f(x):
        p = Point(x, x)
        p.a = x * 2.0
        return p.a

    with pytest.raises(SrcgradError, match=r"writing `\.a` of an immutable namedtuple"):
        srcgrad.grad(f)(1.0)


def test_an_element_of_no_cotangent_is_zeros():
    # runtime.containers.elem: a None cotangent of the container gives zeros of the element
    # (with `zeros_like` dropped it gave the element itself); a missing key or a None item too
    from srcgrad.runtime.containers import elem

    x = np.array([1.5, -2.0])
    for dy, key in ((None, 0), ({"b": 1.0}, "a"), ([None, 2.0], 0)):
        g = elem(dy, key, x)
        assert np.shape(g) == (2,) and not np.any(g)
    assert elem([x, 2.0], 1, 3.0) == 2.0
