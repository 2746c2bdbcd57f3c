"""Cases that only a surviving mutant of ``srcgrad/runtime/lists.py`` or ``pytrees.py`` showed
untested (docs/development.md, mutation testing): list and dict methods in forward mode, with
inactive parts, and read at second order.

Each is a program a user can write, checked against central differences or plain Python; the
comment names the mutant of ``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad.errors import SrcgradError

X = np.array([1.0, 2.0])
T = np.array([1.0, 0.25])


def _along(f, x, t, h=1e-6):
    """The central difference of f at x along t."""
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def _check_jvp(f, x=X, t=T):
    value, tangent = srcgrad.jvp(f)(x, t)
    assert value == pytest.approx(f(x), rel=1e-12)
    assert np.shape(tangent) == np.shape(value)
    assert tangent == pytest.approx(_along(f, x, t), rel=1e-6)


def _insert_a_constant(x):
    xs = [x * 2.0]
    xs.insert(0, np.ones(2) * 3.0)
    return np.sum(xs[0] * xs[1])


def _update_by_an_active_dict(x):
    d = {"a": np.ones(2) * 2.0}
    d.update({"b": x * 3.0})
    return np.sum(d["a"] * d["b"])


def _items_one_of_them_constant(x):
    d = {"a": x, "b": np.ones(2) * 2.0}
    s = 0.0
    for _, v in d.items():
        s = s + np.sum(v * v)
    return s


@pytest.mark.parametrize("f", [_insert_a_constant, _update_by_an_active_dict,
                               _items_one_of_them_constant], ids=lambda f: f.__name__)
def test_the_tangent_of_an_inactive_part_is_zero(f):
    # lists.insert_tangent (`zeros_like(value)` dropped: the inserted constant was its own
    # tangent), update_tangent (`zeros_like(d)` dropped: the constant dict was), items_tangent
    # (`zeros_like(v)` dropped: the constant value was)
    _check_jvp(f)


def _delete_first(xs):
    del xs[0]
    return np.sum(xs[0] * xs[1])


def test_the_tangent_of_a_list_after_del_leaves_the_callers_tangent_alone():
    # lists.pop_item_tangent: `list(ditems)` dropped deleted from the caller's tangent list
    xs = [np.array([1.0, 2.0]), np.array([3.0, 4.0]), np.array([5.0, 6.0])]
    dxs = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])]
    value, tangent = srcgrad.jvp(_delete_first)(xs, dxs)
    assert len(xs) == 3 and len(dxs) == 3 and dxs[0][0] == 1.0
    assert value == 39.0 and tangent == pytest.approx(3 * 1 + 4 * 1 + 5 * 0 + 6 * 1, rel=1e-12)


def _sorted_keys(d):
    s = 0.0
    for k in sorted(d):
        s = s * 2.0 + np.sum(d[k])
    return s


def test_sorted_of_a_dict_sorts_its_keys():
    # lists.sort_keys: `list(items)` dropped read the dict at 0, 1 (a KeyError)
    d = {"b": np.array([1.0]), "a": np.array([2.0])}
    g = srcgrad.grad(_sorted_keys)(d)
    assert list(g) == ["b", "a"] and g["a"][0] == 2.0 and g["b"][0] == 1.0


def _item_squared(x):
    return x.item() ** 2


def test_the_tangent_of_an_item_is_a_float():
    # lists.item (branches swapped): `item(dx)`, the tangent of `x.item()`, was dx's array
    value, tangent = srcgrad.jvp(_item_squared)(np.array([1.5]), np.array([2.0]))
    assert type(value) is float and type(tangent) is float and tangent == 6.0


def _cubes_of_the_values(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for v in d.values():
        s = s + v**3
    return s


def _get_with_an_active_default(x):
    d = {"a": x * x}
    return x * d.get("b", 3.0 * x) + x * d.get("a", x)


@pytest.mark.parametrize("f, second", [(_cubes_of_the_values, lambda x: 54.0 * x),
                                       (_get_with_an_active_default, lambda x: 6.0 + 6.0 * x)],
                         ids=["values", "get"])
def test_reverse_over_reverse_of_dict_methods(f, second):
    # lists.dict_to_values (`Cotangents(...)` dropped: a generator for a list), default_part
    # (`zeros_like` dropped: the key's value became the default's cotangent)
    x = 1.5
    d2 = srcgrad.grad(srcgrad.grad(f))(x)
    assert d2 == pytest.approx(second(x), rel=1e-12)
    assert d2 == pytest.approx(numeric_grad(srcgrad.grad(f), (x,), 0), rel=1e-6)


class _Held:
    """A registered class whose child ``_w`` is read through the property ``w``."""

    def __init__(self, w):
        self._w = w

    @property
    def w(self):
        return self._w


srcgrad.register_pytree(_Held, lambda s: ((s._w,), None), lambda _, children: _Held(children[0]))


def _held_loss(s, x):
    return np.sum(np.sin(s.w * x))


def test_a_property_that_returns_a_child_of_a_registered_class():
    # pytrees.checked_attribute: `.w` is no instance attribute but the child flatten returns
    # (its mutants refused it as "computed when read (a property?)", or failed to unpack);
    # containers.attr_of took it for static data: its tangent was 0.0 (fixed: the tangent's
    # child at that position). Its gradient cannot go back through unflatten: refused.
    s = _Held(np.array([0.5, -1.0]))
    value, tangent = srcgrad.jvp(_held_loss)(s, X, _Held(T))
    assert value == _held_loss(s, X)
    assert tangent == pytest.approx(np.cos(s.w * X) * X @ T, rel=1e-12)
    assert tangent == pytest.approx(_along(lambda w: _held_loss(_Held(w), X), s.w, T), rel=1e-6)
    with pytest.raises(SrcgradError, match=r"reached the attributes \['w'\] of a _Held, which "):
        srcgrad.grad(_held_loss)(s, X)


def _extend_by_a_dict(d):
    xs = [d["a"]]
    xs.extend(d)
    return np.sum(xs[0]) * len(xs)


def test_extend_by_a_dict_is_refused_in_the_gradient():
    # lists.extend_grad_values: the message (with the call dropped, the text was d's gradient)
    d = {"a": np.array([1.0, 2.0]), "b": np.array([3.0])}
    assert _extend_by_a_dict(d) == 9.0
    with pytest.raises(TypeError, match=r"extend\(\) by a list, tuple or array, not dict\n"):
        srcgrad.grad(_extend_by_a_dict)(d)


@dataclasses.dataclass
class _Added:
    """A dataclass with its own ``__add__``: a sum of cotangents must not call it."""

    w: np.ndarray
    b: float

    def __add__(self, other):
        return _Added(self.w + other.w, self.b + other.b)


def _over_objects(vs, x):
    s = 0.0
    for v in vs:
        s = s + np.sum(v.w * x) * v.b
    return s


def test_cotangents_of_objects_whose_class_adds_add_by_field():
    # containers.add (`or` -> `and`): an object's cotangent given as the object plus one as a
    # dict went to the class's own __add__ ('DictCotangents' object has no attribute 'w')
    v = _Added(np.array([0.5, 1.5]), 2.0)
    g = srcgrad.grad(_over_objects)([v, v], X)
    for part in g:
        assert type(part) is _Added
        np.testing.assert_allclose(part.w, v.b * X, rtol=1e-12)
        assert part.b == pytest.approx(np.sum(v.w * X), rel=1e-12)


_Pt = collections.namedtuple("_Pt", "a b")


def _namedtuple_built(x):
    p = _Pt(x, 2.0 * x)
    return p.a * p.b**2


def test_reverse_over_reverse_of_a_namedtuple_built_inside():
    # containers.attr_of of a namedtuple's cotangent, a list by position
    d2 = srcgrad.grad(srcgrad.grad(_namedtuple_built))(1.5)
    assert d2 == pytest.approx(24.0 * 1.5, rel=1e-12)


@dataclasses.dataclass
class _Inner:
    u: np.ndarray


@dataclasses.dataclass
class _Outer:
    w: np.ndarray
    inner: _Inner
    rest: list


def _through_asdict(p, x):
    d = dataclasses.asdict(p)
    return np.sum(d["w"] * x) * np.sum(d["inner"]["u"]) + np.sum(d["rest"][1] * x)


def _asdict_field(p):
    return dataclasses.asdict(p)["w"]


def test_asdict_of_nested_dataclasses_and_lists():
    # containers.as_dict_grad: the dict cotangents of nested dataclasses and a list field;
    # _as_dict: asdict copies the arrays, as Python's does (deepcopy dropped: the value shared
    # memory with the argument)
    p = _Outer(np.array([0.5, 1.5]), _Inner(np.array([1.0, -2.0])),
               [np.array([3.0]), np.array([0.25, 4.0])])
    g = srcgrad.grad(_through_asdict)(p, X)
    assert type(g) is _Outer and type(g.inner) is _Inner
    np.testing.assert_allclose(g.w, X * np.sum(p.inner.u), rtol=1e-12)
    np.testing.assert_allclose(g.inner.u, np.full(2, np.sum(p.w * X)), rtol=1e-12)
    np.testing.assert_allclose(g.rest[1], X, rtol=1e-12)
    assert not np.any(g.rest[0])
    value, tangent = srcgrad.jvp(_asdict_field)(p, _Outer(T, _Inner(T), [T[:1], T]))
    assert not np.shares_memory(value, p.w) and not np.shares_memory(_asdict_field(p), p.w)
    np.testing.assert_array_equal(value, p.w)
    np.testing.assert_array_equal(tangent, T)


def _appending_through_a_function(x, act):
    hs = []
    for _ in range(3):
        x = act(x) * x
        hs.append(x)
    return np.sum(hs[1])


def test_linearize_of_a_loop_it_cannot_split_given_a_function_is_refused():
    # transform.linearize._unsplit_refusal: the loop interleaves primal and tangent, so each
    # call would rerun the jvp, which a function given as an argument does not allow (with the
    # call dropped the raise of a string was a TypeError); jvp itself works
    with pytest.raises(SrcgradError, match=r"which is called with functions, is not supported "
                                           r"here: a loop or branch interleaves the primal"):
        srcgrad.linearize(_appending_through_a_function)(X, np.tanh)
    value, tangent = srcgrad.jvp(_appending_through_a_function)(X, np.tanh, T)
    assert value == _appending_through_a_function(X, np.tanh)
    f = lambda x: _appending_through_a_function(x, np.tanh)  # noqa: E731
    assert tangent == pytest.approx(_along(f, X, T), rel=1e-6)


def _list_reads_and_extremes(x):
    xs = [x, 2.0 * x]
    xs.append(x * x)
    return xs[0] * xs[2] + xs[-2] ** 2 + max(xs) * min(xs)


def test_reverse_over_reverse_of_list_reads_max_and_min():
    # the rules of the helpers runtime.add_at (a list's element cotangents summed) and
    # containers.max_of/min_of/pick_extreme, read at second order: recorded checks for
    # tests/mutate_rules.py (runtime_rules; it records this module by default)
    for x in (1.2, 2.5):  # max(xs) is 2x, then x * x; min(xs) is x
        want = 6.0 * x + 8.0 + (6.0 * x if x > 2.0 else 4.0)
        d2 = srcgrad.grad(srcgrad.grad(_list_reads_and_extremes))(x)
        assert d2 == pytest.approx(want, rel=1e-12)
        assert d2 == pytest.approx(
            numeric_grad(srcgrad.grad(_list_reads_and_extremes), (x,), 0), rel=1e-6)
    # forward over reverse reads their tangent rules (at 1.2 the largest tangent, 2.4 of x * x,
    # is not that of the largest item, 2x: the tangent is picked where the items are largest)
    hvp = srcgrad.jvp(srcgrad.grad(_list_reads_and_extremes))
    assert hvp(2.5, 1.0)[1] == pytest.approx(38.0, rel=1e-12)
    assert hvp(1.2, 1.0)[1] == pytest.approx(19.2, rel=1e-12)


def _dots(x):
    # matrix by matrix, matrix by vector (np.dot, @, np.inner): the adjoints of
    # the products' adjoints read an operand for its number of dimensions only, which differs
    # between the operands here
    v = np.sin(x[1])
    return (np.sum(np.dot(x, np.sin(x).T) ** 2) + np.sum(np.dot(x, v) ** 2)
            + np.sum((x @ v) ** 3) + np.sum(np.inner(x, v) ** 2))


def test_reverse_over_reverse_of_dot():
    # the rules of runtime.products.dot_vjp_left/dot_vjp_right, matmul_vjp_right and inner's
    # (the products' adjoints), read by reverse over reverse: recorded checks for
    # tests/mutate_rules.py (runtime_rules; `dot_vjp_left(g, y, dy)` for `(g, a, dy)` passed a
    # case of two matrices)
    x = np.array([[0.5, -1.0, 0.3], [1.2, 0.4, -0.7]])
    w = np.cos(np.arange(6.0)).reshape(2, 3)
    df = srcgrad.grad(_dots)

    def h(z):
        return np.sum(df(z) * w)

    np.testing.assert_allclose(srcgrad.grad(h)(x), numeric_grad(h, (x,), 0), rtol=1e-6,
                               atol=1e-8)


def _extended(x):
    xs = [x]
    xs.extend([x * x])
    return xs[0] * xs[1]


def test_third_order_of_extend():
    # lists.drop_prefix, the adjoint of prefix_zeros (itself extend_grad_values' adjoint): read
    # by reverse over reverse over reverse only (x**3: 6)
    assert srcgrad.grad(srcgrad.grad(srcgrad.grad(_extended)))(1.5) == pytest.approx(6.0, rel=1e-12)


def _written_and_returned(x):
    y = x * 2.0
    y[0] = np.sin(y[1]) * y[0]
    return np.sum(y * y), y


def _written(x):
    return _written_and_returned(x)[1]


def test_a_returned_array_written_into_is_the_value_the_primal_left():
    # transform.reverse._as_returned: the sweep puts back the element the write overwrote, so
    # the returned array is kept first (killed: `in in_place` -> `not in in_place`)
    x = np.array([0.5, 1.5, -1.0])
    want = _written(x.copy())
    (value, aux), g = srcgrad.value_and_grad(_written_and_returned, has_aux=True)(x)
    np.testing.assert_array_equal(aux, want)
    assert value == _written_and_returned(x.copy())[0]
    np.testing.assert_allclose(g, numeric_grad(lambda z: _written_and_returned(z)[0], (x,), 0),
                               rtol=1e-6)
    y, back = srcgrad.pullback(_written)(x)
    back(np.ones(3))
    np.testing.assert_array_equal(y, want)
