"""Cases that only a surviving mutant of ``rules/container_rules.py``'s templates showed untested
(docs/development.md, mutation testing; the session of mutants20i): the first derivatives of the
list, tuple, dict and field operations a user writes (``L + M``, ``L.insert``, ``o.a.b = v``,
``d.update``, ``L.extend``, ``d.get``, ``dataclasses.replace``, ``asdict``, ``tuple()``,
``[v] * n``, ``.values()``, ``.item()``, ``np.ndenumerate``, ``pop``, ``reverse``), each with
active and constant parts, in both modes (``grad`` against central differences, ``jvp`` against
the directional central difference), in float64; the second-order batteries are in
``tests/test_mutation_kills_tables.py``. Each kill re-planted: ``mutate_code.py --templates
container_rules --rerun`` of the surviving line fails a test here under it and passes on main.
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from test_mutation_kills_tables import Z4, Pair, _check

import srcgrad


@dataclasses.dataclass
class Outer:
    inner: object
    c: object


def concat_lists(z):
    L = [z[0], z[1] * z[2]]
    M = [z[3] ** 2, z[0] * z[3]]
    N = L + M
    return N[0] * N[3] + N[1] ** 2 + N[2] * z[1]


def concat_tuples(z):
    T = (z[0], z[1] * z[2]) + (z[3] ** 2,)
    return T[0] * T[2] + T[1] ** 2


def concat_constant_and_active(z):
    N = [1.5, 2.0] + [z[0] * z[1], z[2]]
    M = [z[3] ** 2] + [0.5]
    return N[2] * N[0] + N[3] ** 2 + M[0] * M[1] * z[0]


def list_insert(z):
    L = [z[0], z[1] * z[2]]
    L.insert(1, z[3] ** 2)
    L.insert(-1, 2.0)
    L.insert(0, z[0] * z[3])
    return L[0] * L[1] + L[2] ** 2 + L[3] * L[4]


def nested_field(z):
    o = Outer(Pair(z[0], z[1]), z[2])
    o.inner.a = z[3] * z[0]
    o.inner.b = 2.0
    return o.inner.a * o.c + o.inner.b * z[1] + o.c ** 2


def field_write(z):
    p = Pair(z[0], z[1] * z[2])
    p.a = z[3] ** 2
    q = Pair(1.0, 2.0)
    q.b = z[0] * z[1]
    return p.a * p.b + q.b ** 2 + q.a * z[2]


def dict_update(z):
    d = {"a": z[0], "b": z[1] * z[2]}
    d.update({"b": z[3] ** 2, "c": z[0] * z[3]})
    e = {"x": 1.0}
    e.update({"y": z[2]})
    return d["a"] * d["b"] + d["c"] ** 2 + e["y"] * e["x"] * z[1]


def list_extend(z):
    L = [z[0], z[1] * z[2]]
    L.extend([z[3] ** 2, 3.0])
    L.extend((z[0] * z[3],))
    M = [1.0]
    M.extend(z[1:3] * 2.0)
    return L[0] * L[2] + L[1] ** 2 + L[3] * L[4] + M[1] * M[2] * M[0]


def dict_get(z):
    d = {"a": z[0] * z[1], "b": z[2]}
    return d.get("a", z[3]) * d.get("c", z[3] ** 2) + d.get("b") ** 2 + d.get("c", 2.0) * z[0]


def replace_fields(z):
    p = Pair(z[0], z[1] * z[2])
    q = dataclasses.replace(p, a=z[3] ** 2)
    r = dataclasses.replace(Pair(1.0, 2.0), b=z[0])
    return q.a * q.b + p.a ** 2 + r.b * r.a * z[3]


def as_dict_and_vars(z):
    p = Pair(z[0], z[1] * z[2])
    d = dataclasses.asdict(p)
    return d["a"] * vars(p)["b"] + d["b"] ** 2 + vars(p)["a"] * z[3]


def tuple_list_repeat(z):
    T = tuple([z[0], z[1] * z[2]])
    L = list((z[3], z[0] ** 2))
    R = [z[1], z[2] * z[3]] * 2
    A = list(z[:2] * 3.0)
    return T[0] * L[1] + T[1] ** 2 + L[0] * R[3] + R[2] * R[1] + A[0] * A[1]


def dict_views(z):
    d = {"a": z[0], "b": z[1] * z[2], "c": z[3]}
    vals = list(d.values())
    items = list(d.items())
    return vals[0] * vals[2] + items[1][1] ** 2 + items[2][1] * vals[1]


def item_and_astype(z):
    kind = np.float64
    x = (z * z).astype(kind)
    return x[0] * z[1] + np.sum(x * z).item() + z[2:3].item() ** 2


def enumerate_elements(z):
    s = 0.0
    for idx, v in np.ndenumerate(z.reshape(2, 2)):
        s = s + v * (idx[0] + 1.0) * v
    return s


def pops(z):
    L = [z[0], z[1] * z[2], z[3]]
    v = L.pop(1)
    w = L.pop()
    d = {"a": z[0], "b": z[2] ** 2}
    u = d.pop("b")
    return v * w + L[0] ** 2 + u * d["a"]


def reverse_and_sort(z):
    L = [z[0], z[1] * z[2], z[3]]
    L.reverse()
    M = sorted([z[2], z[0] * 2.0, z[3] + 1.0])
    return L[0] * L[1] + L[2] ** 2 + M[0] * M[2] + M[1]


USER_CASES = [concat_lists, concat_tuples, concat_constant_and_active, list_insert, nested_field,
              field_write, dict_update, list_extend, dict_get, replace_fields, as_dict_and_vars,
              tuple_list_repeat, dict_views, item_and_astype, enumerate_elements, pops,
              reverse_and_sort]


def _check_shapes(f):
    """``_check``, and the tangent of the output has the output's shape and type: a zero of
    another structure where a part carries no tangent broadcasts to the right numbers."""
    _check(f, (Z4,), (0,))
    value, tangent = srcgrad.jvp(f)(Z4, np.cos(np.arange(4.0)))
    assert np.shape(tangent) == np.shape(value) and np.ndim(tangent) == 0, tangent


@pytest.mark.parametrize("f", USER_CASES, ids=lambda f: f.__name__)
def test_container_operations_at_first_order(f):
    _check_shapes(f)


# --- the same operations where a part is constant, unread or of another shape ---------------------
NT = collections.namedtuple("NT", "a b")


W2 = np.array([1.5, -0.5])


def constant_list_active_items(z):
    L = [1.0, 2.0]
    L.insert(1, z[0] ** 2)
    L.insert(-1, z[1] * z[2])
    M = [3.0]
    M.extend([z[3], z[0] * z[1]])
    N = [0.5] + [z[2] ** 2]
    d = {"k": 1.0}
    d.update({"j": z[1] * z[3]})
    return L[1] * L[2] + L[3] * L[0] + M[1] * M[2] + N[1] * N[0] + d["j"] ** 2


def unread_items(z):
    L = [z[0], z[1]]
    L.insert(0, z[2] * z[3])  # inserted, never read
    M = [z[3], z[0] ** 2]
    M.extend([z[1] * z[2]])  # extended, never read
    v = L.pop(-2)
    return L[-1] * v + M[0] * M[1]


def fields_of_another_shape(z):
    p = Pair(z, z[0])
    p.a = z[1:3] * 2.0  # the old value (4,) written over by a (2,) one
    q = Pair(z, z[1])
    q.a = np.ones(2)  # and by a constant
    return p.b * z[3] + np.sum(q.a * W2) * z[2] + np.sum(p.a * W2) * q.b


def namedtuple_replaced(z):
    p = NT(z[0], z[1] * z[2])
    q = p._replace(a=z[3] ** 2)
    return q.a * q.b + p.a ** 2


OTHER_CASES = [constant_list_active_items, unread_items, namedtuple_replaced]


@pytest.mark.parametrize("f", OTHER_CASES, ids=lambda f: f.__name__)
def test_container_operations_with_constant_unread_or_reshaped_parts(f):
    _check_shapes(f)


def written_pair(z):
    p = Pair(z[0], z[1] * z[2])
    p.a = z[3] ** 2
    return p


def test_the_gradient_of_a_written_object_from_a_seed_of_its_class():
    # vjp of an object written by a field write, the seed an instance of its class
    g = srcgrad.vjp(written_pair)(Z4, Pair(1.5, -2.0))
    np.testing.assert_allclose(g, [0.0, -2.0 * Z4[2], -2.0 * Z4[1], 3.0 * Z4[3]])


# --- a field written with an inactive value of another shape than the field held -----------------
# (rules/container_rules.py: the jvp templates of set_field, field_updated and replace_field passed
# the object before the write, so the field's tangent was zeros like the OLD value: a tangent of
# shape (3,) for a number, jacobian(method="fwd") a ValueError, or a ValueError of broadcasting;
# found by the surviving mutant `set_field_tangent(dobj, dvalue, y, name)`, which is the fix)
def constant_written_over_an_array(z):
    q = Pair(np.ones(3), z[1])
    q.a = 2.0
    return q.a * z[0] + q.b


def replaced_by_a_shorter_constant(z):
    r = dataclasses.replace(Pair(z, z[1]), a=np.ones(2))
    return np.sum(r.a * z[2:]) + r.b * z[0]


def nested_field_written_over(z):
    o = Outer(Pair(z, z[0]), z[2])
    o.inner.a = 0.5
    return o.inner.a * o.c + o.inner.b


@pytest.mark.parametrize("f", [constant_written_over_an_array, replaced_by_a_shorter_constant,
                               nested_field_written_over, fields_of_another_shape],
                         ids=lambda f: f.__name__)
def test_a_field_written_with_a_constant_of_another_shape(f):
    _check(f, (Z4,), (0,))
    assert np.shape(srcgrad.jvp(f)(Z4, np.ones(4))[1]) == ()
    np.testing.assert_allclose(srcgrad.jacobian(f, method="fwd")(Z4),
                               srcgrad.jacobian(f, method="rev")(Z4), rtol=1e-12)
