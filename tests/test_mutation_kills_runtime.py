"""Cases that only a surviving mutant of a runtime helper showed untested (docs/development.md,
mutation testing): objects of classes registered with ``register_pytree``, containers and lists.

Each is a program a user can write, checked against central differences, exact values or the
refusal; the comment names the mutant of ``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import collections
import copy
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


@dataclasses.dataclass
class _Pair:
    a: np.ndarray
    b: np.ndarray


def _deepcopied_pair(x):
    y = x * 2.0
    q = copy.deepcopy(_Pair(y, y))
    q.a[0] += 1.0
    return np.sum(q.a * q.b)


def test_a_deep_copy_holding_one_array_in_two_fields_is_refused():
    # containers.shared_part: the fields of an object are looked into (with `elif not objects`
    # negated they were not, and the write through q.a that q.b sees went unfollowed)
    with pytest.raises(SrcgradError, match=r"the copy holds one ndarray in two places"):
        srcgrad.grad(_deepcopied_pair)(np.array([1.0, 2.0]))


def _joined_tuple(x):
    return (x,) + (np.sin(x),)


def test_the_tangent_of_a_joined_tuple_is_a_tuple():
    # lists.concat_tangent: the tangent of `tuple + tuple` is a tuple (a list with
    # `tuple(out)` dropped)
    x = np.array([1.0, 2.0])
    value, tangent = srcgrad.jvp(_joined_tuple)(x, np.array([1.0, -1.0]))
    assert type(value) is tuple and type(tangent) is tuple
    np.testing.assert_allclose(tangent[1], np.cos(x) * [1.0, -1.0], rtol=1e-12)


class _Squared:
    """A registered class with ``a2``, neither a child nor aux data (rebuilt by unflatten)."""

    def __init__(self, a, k):
        self.a, self.k, self.a2 = a, k, a * a


class _Link:
    def __init__(self, inner):
        self.inner = inner


class _Two:
    def __init__(self, p, q):
        self.p, self.q = p, q


srcgrad.register_pytree(_Squared, lambda o: ((o.a,), o.k),
                        lambda k, children: _Squared(children[0], k))
srcgrad.register_pytree(_Link, lambda o: ((o.inner,), None), lambda aux, ch: _Link(ch[0]))
srcgrad.register_pytree(_Two, lambda o: ((o.p, o.q), None), lambda aux, ch: _Two(*ch))

_A, _X = np.array([0.4, 0.2, 0.1]), np.array([1.0, 2.0, 3.0])


def _two_squared(o, x):
    return np.sum(np.sin(o.p.a2) * x) * o.p.k + np.sum(np.cos(o.q.a2) * x)


def _chain(n, link=_Link):
    c = _Squared(_A, 3)
    for _ in range(n):
        c = link(c)
    return c


def _down(n, key=None):
    def f(c, x):
        for _ in range(n):
            c = c.inner if key is None else c[key]
        return np.sum(np.sin(c.a2) * x)
    return f


def test_registered_objects_among_the_children_of_a_registered_object_are_rebuilt():
    # pytrees.rebuild_plan: the plans of both children (with `tuple(...)` dropped, `any(parts)`
    # consumed the first child's plan from a generator and the second took its place)
    o = _Two(_Squared(_A, 3), _Squared(2 * _A, 2))
    g = srcgrad.grad(_two_squared)(o, _X)
    assert type(g) is _Two and type(g.p) is _Squared
    np.testing.assert_allclose(
        g.p.a, numeric_grad(lambda a: _two_squared(_Two(_Squared(a, 3), o.q), _X), (_A,), 0),
        rtol=1e-6)
    np.testing.assert_allclose(
        g.q.a, numeric_grad(lambda a: _two_squared(_Two(o.p, _Squared(a, 2)), _X), (2 * _A,), 0),
        rtol=1e-6)


@pytest.mark.parametrize("key", [None, "n"], ids=["registered", "dicts"])
def test_a_chain_of_registered_objects_is_rebuilt_to_twelve_levels_then_refused(key):
    # pytrees.rebuild_plan: one level per registered child or dict item (`depth + 2`: refused
    # at 7 levels; `depth` kept: never bounded)
    want = numeric_grad(lambda a: np.sum(np.sin(a * a) * _X), (_A,), 0)
    link = _Link if key is None else (lambda c: {"n": c})
    g = srcgrad.grad(_down(7, key))(_chain(7, link), _X)
    for _ in range(7):
        g = g.inner if key is None else g[key]
    np.testing.assert_allclose(g.a, want, rtol=1e-6)
    if key is None:
        with pytest.raises(SrcgradError, match=r"the attributes \['a2'\] of a _Squared"):
            srcgrad.grad(_down(13))(_chain(13), _X)


class _Lenient:
    """A registered class whose ``__getattr__`` answers every missing attribute with None (a
    common "optional settings" object); its aux data is a tuple."""

    def __init__(self, w, tags=("a", 2)):
        self.w, self.tags = w, tags

    def __getattr__(self, name):
        return None


srcgrad.register_pytree(_Lenient, lambda o: ((o.w,), o.tags),
                        lambda tags, ch: _Lenient(ch[0], tags))


def _lenient_loss(o, x):
    return np.sum(np.sin(o.w) * x)


def test_a_registered_class_answering_every_attribute_and_a_tuple_of_aux_data():
    # pytrees.derived_names reads `__slots__` of the class (with `type(x)` -> x it read None
    # from __getattr__: a TypeError); pytrees._aux_values lists a tuple's items (`+` -> `-`)
    o, x = _Lenient(np.array([0.3, -0.7])), np.array([2.0, 0.5])
    g = srcgrad.grad(_lenient_loss)(o, x)
    assert type(g) is _Lenient and g.tags == ("a", 2)
    np.testing.assert_allclose(g.w, np.cos(o.w) * x, rtol=1e-12)


@dataclasses.dataclass
class _Held:
    v: np.ndarray


@dataclasses.dataclass
class _Mixed:
    w: np.ndarray
    n: int
    idx: np.ndarray
    inner: _Held


def _field_set(x):
    p = _Mixed(x, 3, np.array([0, 1]), _Held(x * 0.5))
    p.w = np.sin(x)
    return p


def test_the_tangent_of_an_object_after_a_field_write_keeps_its_kinds():
    # containers._has_tangent: after `p.w = ...` the tangent's other fields are a zero tangent
    # only where they can carry one: None for an int and an int array (`and` -> `or`: zeros of
    # the int array), the nested object's tangent for the object (`is not None` -> `is None`:
    # None for it, zeros for the int)
    x, dx = np.array([0.3, 0.8]), np.array([1.0, 2.0])
    _, t = srcgrad.jvp(_field_set)(x, dx)
    assert type(t) is _Mixed and t.n is None and t.idx is None and type(t.inner) is _Held
    np.testing.assert_allclose(t.w, np.cos(x) * dx, rtol=1e-12)
    np.testing.assert_allclose(t.inner.v, 0.5 * dx, rtol=1e-12)


def _get_after_pop(w, y):
    d = {"a": w, "b": 2.0 * w}
    v = d.pop("b")
    return d.get("b", y) * 3.0 + v


def _get_after_del(w, y):
    d = {"a": w, "b": 2.0 * w}
    del d["b"]
    return d.get("b", y) * 3.0 + d["a"]


@pytest.mark.parametrize("f, want", [(_get_after_pop, (2.0, 3.0)), (_get_after_del, (1.0, 3.0))],
                         ids=["pop", "del"])
def test_get_of_a_key_removed_before_sends_its_gradient_to_the_default(f, want):
    # lists.get_grad_dict: the default's cotangent does not reach the removed entry (under
    # `or` -> `and` the dict's cotangent gains an entry for the missing key, which pop_item_grad
    # and del's adjoint drop: listed as equivalent, and this checks it)
    assert srcgrad.grad(f, wrt=(0, 1))(1.5, 0.5) == pytest.approx(want, rel=1e-12)


@dataclasses.dataclass
class _WithTable:
    w: np.ndarray
    table: dict


def _asdict_with_a_dict(p, x):
    d = dataclasses.asdict(p)
    return np.sum(d["table"]["k"] * x) + np.sum(d["w"] ** 2)


def _asdict_entry(p):
    return dataclasses.asdict(p)["table"]["k"]


def test_asdict_of_a_dataclass_holding_a_dict():
    # containers._as_dict: a dict field becomes a dict of the same type (with `type(v)(...)`
    # dropped, a generator)
    p, x = _WithTable(np.array([0.5, 1.5]), {"k": np.array([2.0, -1.0])}), np.array([3.0, 4.0])
    g = srcgrad.grad(_asdict_with_a_dict)(p, x)
    assert type(g) is _WithTable and type(g.table) is dict
    np.testing.assert_allclose(g.table["k"], x, rtol=1e-12)
    np.testing.assert_allclose(g.w, 2 * p.w, rtol=1e-12)
    # _as_dict copies the dict field's values, as Python's asdict does (with `_as_dict(x)` ->
    # x the value shared memory with the argument)
    value = srcgrad.jvp(_asdict_entry)(p, p)[0]
    assert not np.shares_memory(value, p.table["k"]) and not np.shares_memory(
        _asdict_entry(p), p.table["k"])
    # as_dict_tangent of the dict field: the tangent's entries (branches swapped: none)
    t = _WithTable(np.array([1.0, 0.0]), {"k": np.array([0.5, 2.0])})
    assert srcgrad.jvp(_asdict_with_a_dict)(p, x, t)[1] == pytest.approx(9.5 + 1.0, rel=1e-12)


def _square_sum(x):
    return np.sum(x * x)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("make, kind", [
    (np.matrix, r"an np\.matrix"),
    (lambda a: np.ma.masked_array(a, mask=[[0, 1], [0, 0]]), r"a masked array \(np\.ma\)")],
    ids=["matrix", "masked"])
def test_the_refusal_of_an_array_whose_operators_differ_names_its_kind(make, kind):
    # containers.other_array_error: the message names what the argument is (with the branches
    # swapped a matrix was called a masked array)
    with pytest.raises(SrcgradError, match=f"an argument is {kind}, whose operations"):
        srcgrad.grad(_square_sum)(make(np.array([[1.0, 2.0], [3.0, 0.5]])))


@dataclasses.dataclass
class _WithPair:
    w: np.ndarray
    pair: tuple


def _asdict_pair(p):
    return dataclasses.asdict(p)["pair"]


def test_the_tangent_of_asdict_keeps_a_tuple_field_a_tuple():
    # containers.as_dict_tangent: a tuple field's tangent is a tuple (a list with
    # `type(obj)(items)` dropped)
    p = _WithPair(np.array([1.0]), (np.array([0.5, 1.0]), 2.0))
    value, tangent = srcgrad.jvp(_asdict_pair)(p, _WithPair(np.array([1.0]),
                                                            (np.array([1.0, -1.0]), 3.0)))
    assert type(value) is tuple and type(tangent) is tuple
    np.testing.assert_array_equal(tangent[0], [1.0, -1.0])
    assert tangent[1] == 3.0


class _Sequence:
    """A sequence of the user's: ``__getitem__`` and ``__len__``, no ``__iter__``."""

    def __init__(self, *values):
        self.values = list(values)

    def __getitem__(self, i):
        return self.values[i]

    def __len__(self):
        return len(self.values)


def _unpacked_sequence(s, x):
    a, b = s
    return a * b * x


def test_unpacking_a_sequence_argument_checks_its_length():
    # lists.check_unpacked: a sequence of another class is checked as a list of its items (with
    # `list(value)` dropped, the check called itself on it again: a RecursionError)
    assert srcgrad.grad(_unpacked_sequence, wrt=1)(_Sequence(1.0, 2.0), 1.5) == 2.0
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2\)"):
        srcgrad.grad(_unpacked_sequence, wrt=1)(_Sequence(1.0, 2.0, 3.0), 1.5)


@dataclasses.dataclass
class _Plain:
    w: np.ndarray


def _replaced_item(ps, x):
    q = dataclasses.replace(ps[0])
    return np.sum(q.w * x)


def test_replace_of_an_object_of_a_class_unknown_at_transform_time():
    # containers.replaced_copy: without a __post_init__ the copy is differentiated (with the
    # test negated it was refused)
    x = np.array([1.0, 2.0])
    g = srcgrad.grad(_replaced_item)([_Plain(np.array([0.5, 1.0]))], x)
    assert type(g[0]) is _Plain
    np.testing.assert_array_equal(g[0].w, x)


def _twice_held(p, x):
    ys = p["xs"] + p["xs"]
    return np.sum(ys[2] * x)


def test_a_list_concatenated_where_srcgrad_cannot_see_it_is_refused():
    # containers._as_like: the gradient of a list of 2 came out with 4 items: refused (with
    # `type(x)` -> x in the message, an AttributeError)
    x = np.array([1.0, 2.0])
    with pytest.raises(SrcgradError, match=r"gradient of a list of 2 elements came out with 4"):
        srcgrad.grad(_twice_held)({"xs": [x, x]}, x)



def _repeated_tuple(x):
    return (x, np.sin(x)) * 2


def test_the_tangent_of_a_repeated_tuple_is_a_tuple():
    # lists.repeat_tangent: the tangent of `tuple * n` is a tuple (branches swapped: a list)
    x = np.array([1.0, 2.0])
    value, tangent = srcgrad.jvp(_repeated_tuple)(x, np.array([1.0, -1.0]))
    assert type(value) is tuple and type(tangent) is tuple and len(tangent) == 4
    np.testing.assert_allclose(tangent[3], np.cos(x) * [1.0, -1.0], rtol=1e-12)


def _updated(d, x):
    d.update({"b": x * 2.0})
    return np.sum(d["a"] * d["b"])


def _inserted_inside(x):
    L = [x[0], x[1]]
    L.insert(1, x[2])
    return L[0] * L[1] * L[2] + L[0]


def test_update_and_insert_keep_the_items_around_them():
    # lists.dict_update: a new dict (with `dict(d)` dropped the caller's dict gained "b");
    # lists.insert_grad_items: the cotangents before the inserted item (dropped: x[0]'s was lost)
    d, x = {"a": np.array([1.0, 2.0])}, np.array([0.5, 0.5])
    gd, gx = srcgrad.grad(_updated, wrt=(0, 1))(d, x)
    assert list(d) == ["a"]
    np.testing.assert_array_equal(gd["a"], [1.0, 1.0])
    np.testing.assert_array_equal(gx, [2.0, 4.0])
    x = np.array([0.5, -1.3, 2.0])
    np.testing.assert_allclose(srcgrad.grad(_inserted_inside)(x), [-1.6, 1.0, -0.65], rtol=1e-12)


def _enumerated_squares(M):
    s = 0.0
    for _, v in np.ndenumerate(M):
        s = s + v * v * M[0, 0]
    return s


def test_forward_over_reverse_through_ndenumerate():
    # lists.ndenumerate_tangent: an element whose array has no tangent gets 0.0 (1.0: a wrong
    # Hessian); the Hessian by forward over reverse against differences of the gradient
    M = np.array([[0.5, 1.5], [-2.0, 0.3]])
    g, e = srcgrad.grad(_enumerated_squares), 1e-5
    numeric = np.stack([(g(M + e * u.reshape(2, 2)) - g(M - e * u.reshape(2, 2))) / (2 * e)
                        for u in np.eye(4)]).reshape(4, 4).T
    H = srcgrad.jacobian(g, method="fwd")(M).reshape(4, 4)
    np.testing.assert_allclose(H, numeric, rtol=1e-6, atol=1e-8)


@dataclasses.dataclass
class _Shaped:
    shape: np.ndarray


@dataclasses.dataclass
class _HoldsShaped:
    inner: _Shaped


def _nested_shape(p):
    return np.sum(p.inner.shape * 2.0)


@dataclasses.dataclass(frozen=True)
class _FrozenHolder:
    w: np.ndarray
    inner: object = dataclasses.field(init=False, default=None)


def _frozen_inner(p, x):
    return np.sum(np.sin(p.inner.a2) * x) + np.sum(p.w)


def test_structures_checked_and_planned_all_the_way_down():
    # pytrees.check_structure looks into the fields of a field (with `check_structure(v)` -> v
    # jvp did not refuse the nested field named `shape`); _fields_plan: a frozen dataclass whose
    # field is no __init__ field is not rebuilt by `replace` (with `all(...)` dropped: a
    # ValueError of dataclasses.replace); rebuild_plan: a chain of dicts, lists or objects'
    # fields (_fields_plan) is bounded too
    p = _HoldsShaped(_Shaped(np.array([1.0, 2.0])))
    with pytest.raises(SrcgradError, match=r"has a field `shape` holding a ndarray"):
        srcgrad.jvp(_nested_shape)(p, _HoldsShaped(_Shaped(np.array([1.0, 0.0]))))
    p = _FrozenHolder(np.array([1.0, 2.0, 3.0]))
    object.__setattr__(p, "inner", _Squared(_A, 3))
    with pytest.raises(SrcgradError, match=r"the attributes \['a2'\] of a _Squared"):
        srcgrad.grad(_frozen_inner)(p, _X)
    for key, link in (("n", lambda c: {"n": c}), (0, lambda c: [c]),
                      (None, lambda c: types.SimpleNamespace(inner=c))):
        with pytest.raises(SrcgradError, match=r"the attributes \['a2'\] of a _Squared"):
            srcgrad.grad(_down(13, key))(_chain(13, link), _X)


def _two_weighted(xs, w):
    return np.sum(xs[0] * w) + np.sum(xs[1] * w)


def test_the_gradient_of_a_list_holds_no_array_twice():
    # containers._as_like / copy_grad: two items whose gradients are one array (w * 1 here)
    # come out as arrays of their own
    xs, w = [np.array([1.0, 2.0]), np.array([3.0, 4.0])], np.array([0.5, -1.0])
    g = srcgrad.grad(_two_weighted)(xs, w)
    assert not np.shares_memory(g[0], g[1])
    g[0] += 1.0
    np.testing.assert_array_equal(g[1], w)


_C128 = np.array([1.0 + 2.0j, 0.5 - 1.0j])


def _real_of_a_complex128_product(z):
    return np.sum(np.real(z * _C128))


def test_a_complex64_argument_gets_a_complex64_gradient():
    # containers._in_dtype_of: a complex128 cotangent of a complex64 argument is cast to
    # complex64 (with the castable kinds of real and complex swapped it stayed complex128)
    z = np.array([1 + 1j, 2 - 1j], dtype=np.complex64)
    g = srcgrad.grad(_real_of_a_complex128_product)(z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, np.conj(_C128), rtol=1e-7)


def _tuple_sum(t):
    return np.sum(t[0]) + np.sum(t[1])


def _replaced_first(ps):
    return dataclasses.replace(ps[0])


def test_copies_made_where_python_makes_them():
    # containers.copy_grad of a tuple copies each array (with `copy_grad(v)` -> v the caller
    # got unreduce's read-only views); replaced_copy: `replace` makes a new object (with
    # `copy.copy` dropped, the argument itself)
    g = srcgrad.grad(_tuple_sum)((np.array([1.0, 2.0]), np.array([3.0])))
    g[0][0] += 1.0
    np.testing.assert_array_equal(g[0], [2.0, 1.0])
    ps = [_Plain(np.array([0.5, 1.0]))]
    value, tangent = srcgrad.jvp(_replaced_first)(ps, [_Plain(np.array([1.0, 0.0]))])
    assert type(value) is _Plain and value is not ps[0]
    np.testing.assert_array_equal(tangent.w, [1.0, 0.0])


def _second_item_unused(xs):
    s = 0.0
    for i in range(2):
        if i == 0:
            s = s + np.sum(xs[i] * xs[i])
    return s


def _list_of_a_range(x):
    return x * list(range(3))[2]


def _extended_by_an_array(x):
    L = [x[0] * 2.0]
    L.extend(x * x)
    return L[0] * L[2]


def _inactive_field_written(x):
    p = _Mixed(x, 3, np.array([0, 1]), _Held(x * 0.5))
    p.w = np.ones(2)
    return p


def test_zeros_ranges_and_rows_of_lists():
    # containers.set_field_tangent: a field written with an inactive value has a zero tangent
    # (with `dvalue is None` -> `is not None`: None). The other checks (zeros for an unused
    # array item, `list(range(3))` read against an active value, an array extended into a
    # list) hold under the survivors of _as_like, as_list_grad and extend_grad_values too
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    g = srcgrad.grad(_second_item_unused)(xs)
    assert type(g[1]) is np.ndarray and g[1].shape == (2,) and not np.any(g[1])
    np.testing.assert_array_equal(g[0], [2.0, 4.0])
    assert srcgrad.grad(_list_of_a_range)(1.5) == 2.0
    x = np.array([0.5, -1.5])
    g = srcgrad.grad(_extended_by_an_array)(x)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, numeric_grad(_extended_by_an_array, (x,), 0), rtol=1e-6)
    _, t = srcgrad.jvp(_inactive_field_written)(x, np.array([1.0, 2.0]))
    assert type(t.w) is np.ndarray and not np.any(t.w)


def test_a_deep_copy_of_a_slotted_object_holding_one_array_twice_is_refused():
    # containers.shared_part: the slots of an object are looked into (with the slots' values
    # dropped, the shared array went unseen)
    def f(x):
        y = x * 2.0
        q = copy.deepcopy(_Slotted(y, y))
        q.w[0] += 1.0
        return np.sum(q.w * q.b)

    with pytest.raises(SrcgradError, match=r"the copy holds one ndarray in two places"):
        srcgrad.grad(f)(np.array([1.0, 2.0]))


@dataclasses.dataclass
class _Posted:
    w: np.ndarray

    def __post_init__(self):
        self.w2 = self.w * 2.0


def _replaced_posted(ps, x):
    return np.sum(dataclasses.replace(ps[0]).w * x)


def _replaced_unknown_field(ps, x):
    return np.sum(dataclasses.replace(ps[0], v=x).w * x)


def test_replace_of_an_object_of_a_class_unknown_at_transform_time_refused_as_python_does():
    # containers.replaced_copy: with a __post_init__, srcgrad's refusal (with the raise's call
    # dropped, a TypeError); replace_field: an unknown field is Python's TypeError, its message
    x = np.array([1.0, 2.0])
    with pytest.raises(SrcgradError, match=r"`dataclasses.replace` with a `__post_init__`"):
        srcgrad.grad(_replaced_posted)([_Posted(np.array([0.5, 1.0]))], x)
    with pytest.raises(TypeError, match=r"got an unexpected keyword argument 'v'"):
        srcgrad.grad(_replaced_unknown_field)([_Plain(np.array([0.5, 1.0]))], x)


@dataclasses.dataclass
class _Listed:
    items: list


def _asdict_in_a_list(p, x):
    return np.sum(dataclasses.asdict(p)["items"][0]["v"] * x)


def test_asdict_turns_a_dataclass_inside_a_list_field_into_a_dict():
    # containers._as_dict: the items of a plain list are converted too, as Python's asdict does
    # (with `kind is None` -> `is not None` the list was deep-copied, its dataclass kept)
    p, x = _Listed([_Held(np.array([1.0, 2.0]))]), np.array([3.0, 4.0])
    g = srcgrad.grad(_asdict_in_a_list)(p, x)
    assert type(g) is _Listed and type(g.items[0]) is _Held
    np.testing.assert_array_equal(g.items[0].v, x)
