"""Cases that only a surviving mutant of a runtime helper showed untested (docs/development.md,
mutation testing; the run of srcgrad/runtime/ of the session of 2026-12-04, seed 2409):
structures (objects, registered classes, dicts, lists, tuples) and their copies.

Each is a program a user can write, checked against central differences, exact values or the
refusal; the comment names the mutant of ``tests/mutate_code.py`` it kills (each re-planted:
``mutate_code.py --rerun`` of the surviving line fails this test under it).
"""

from __future__ import annotations

import copy
import dataclasses
import types

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad.errors import SrcgradError


class _TwoSlots:
    """A registered class with ``__slots__`` (no ``__dict__``)."""

    __slots__ = ("w", "b")

    def __init__(self, w, b):
        self.w, self.b = w, b


srcgrad.register_pytree(_TwoSlots, lambda s: ((s.w, s.b), None),
                        lambda aux, children: _TwoSlots(*children))


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


@pytest.mark.parametrize("key", [None, "n", 0], ids=["registered", "dicts", "lists"])
def test_a_chain_of_registered_objects_is_rebuilt_to_twelve_levels_then_refused(key):
    # pytrees.rebuild_plan: one level per registered child or dict item (`depth + 2`: refused
    # at 7 levels; `depth` kept: never bounded)
    want = numeric_grad(lambda a: np.sum(np.sin(a * a) * _X), (_A,), 0)
    link = _Link if key is None else (lambda c: {"n": c}) if key == "n" else (lambda c: [c])
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
    # pytrees.check_static: its tangent is refused too (with `any(...)` dropped, a generator
    # is true: a zero tangent for a2, which depends on the child a)
    dp = _FrozenHolder(np.array([1.0, 0.0, 0.0]))
    object.__setattr__(dp, "inner", _Squared(np.array([1.0, 0.0, 0.0]), 3))
    with pytest.raises(SrcgradError, match=r"a tangent reached the attributes \['a2'\]"):
        srcgrad.jvp(_frozen_inner)(p, _X, dp)
    for key, link in (("n", lambda c: {"n": c}), (0, lambda c: [c]),
                      (None, lambda c: types.SimpleNamespace(inner=c))):
        with pytest.raises(SrcgradError, match=r"the attributes \['a2'\] of a _Squared"):
            srcgrad.grad(_down(13, key))(_chain(13, link), _X)


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


def _inactive_field_written(x):
    p = _Mixed(x, 3, np.array([0, 1]), _Held(x * 0.5))
    p.w = np.ones(2)
    return p


def test_a_field_written_with_an_inactive_value_has_a_zero_tangent():
    # containers.set_field_tangent: the field's tangent is zeros (with `dvalue is None` ->
    # `is not None`: None)
    x = np.array([0.5, -1.5])
    _, t = srcgrad.jvp(_inactive_field_written)(x, np.array([1.0, 2.0]))
    assert type(t.w) is np.ndarray and not np.any(t.w)


def test_a_deep_copy_of_a_slotted_object_holding_one_array_twice_is_refused():
    # containers.shared_part: the slots of an object are looked into (with the slots' values
    # dropped, the shared array went unseen)
    def f(x):
        y = x * 2.0
        q = copy.deepcopy(_TwoSlots(y, y))
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


@dataclasses.dataclass
class _Labelled:
    w: np.ndarray
    n: int
    name: str
    z: object = None


def _weights_only(p):
    return np.sum(p.w * 2.0)


def test_fields_that_cannot_carry_a_gradient_get_none_when_nothing_flows():
    # pytrees.rebuild/_differentiable: an int, a str and None field get None, not zeros (the
    # `or value is None` -> `and` survivor of _differentiable is equivalent: its later tests
    # answer False for them too)
    g = srcgrad.grad(_weights_only)(_Labelled(np.array([1.0, 2.0]), 3, "a"))
    assert type(g) is _Labelled and g.n is None and g.name is None and g.z is None
    np.testing.assert_array_equal(g.w, [2.0, 2.0])


def _copied_twice_held(x):
    o = types.SimpleNamespace(w=x * 2.0)
    pair = copy.deepcopy([o, o])
    return np.sum(pair[0].w * pair[1].w)


def test_a_deep_copy_holding_one_object_twice():
    # containers.shared_part: an object met twice is looked into once (with `seen.add` dropped
    # its arrays were met twice: refused)
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(srcgrad.grad(_copied_twice_held)(x), 8.0 * x, rtol=1e-12)
