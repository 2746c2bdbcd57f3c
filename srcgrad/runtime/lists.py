"""List and dict mutation as values, for generated code.

``normalize/containers.py`` rewrites ``hs.insert(0, v)`` into ``hs = list_insert(hs, 0, v)``:
each helper returns a *new* container, so a mutation is an ordinary assignment that the
transforms save, restore and differentiate like any other (a list holds references: copying
one is cheap next to the arrays it holds). Another name for the same list would not see the
change; ``normalize/inplace.py`` refuses writes through a container another name may hold.

Each helper's adjoint and tangent live next to it (rules in ``rules/container_rules.py``).
Cotangents of lists are ``runtime.Cotangents`` with ``None`` for a zero element; of dicts,
``runtime.DictCotangents`` where a missing key is zero.
"""

from __future__ import annotations

import numpy as np

from ..errors import (
    PythonAttributeError,
    PythonIndexError,
    PythonTypeError,
    PythonValueError,
    UnsupportedCaseError,
)
from .containers import Cotangents, DictCotangents, add, elem, not_iterated, zeros_like
from .shapes import float_dtype


def check_unpacked(value, count, text="v"):
    """Python's check of ``a, b = value``, which srcgrad reads by position (``value[0]``,
    ``value[1]``): a sequence of another length raises Python's error (the reads by position
    would take the first items silently); a dict (whose unpacking gives its keys), a set, an
    iterator or an object of a class that is no sequence is refused."""
    if isinstance(value, (tuple, list, np.ndarray, str, range)):
        given = len(value)
        if given > count:
            raise PythonValueError(f"too many values to unpack (expected {count})")
        if given < count:
            raise PythonValueError(
                f"not enough values to unpack (expected {count}, got {given})")
        return
    if isinstance(value, (dict, set, frozenset)) or not (
            hasattr(type(value), "__getitem__") and hasattr(type(value), "__len__")):
        raise UnsupportedCaseError(
            f"srcgrad unpacks `a, b = {text}` by position (`{text}[0]`, `{text}[1]`), and "
            f"`{text}` is a {type(value).__name__}, which Python unpacks by iterating it; unpack "
            f"a tuple or list (`a, b = tuple({text})`), or read the parts by name "
            f"(`a, b = {text}.a, {text}.b`)")
    check_unpacked(list(value), count)


def check_trips(index, count, *seqs):
    """Python's test at the end of trip ``index`` of ``for v in seq`` (of ``enumerate(seq)``,
    ``zip(*seqs)``), in a loop whose body may make a list longer or shorter: srcgrad runs the
    ``count`` trips the lengths gave when the loop began, Python goes on while the next
    position is in every sequence as it is now. Where they differ, Python's loop runs over
    other items than srcgrad's would: refused (a number from the trips srcgrad ran would be
    wrong)."""
    goes_on = all(index + 1 < len(s) for s in seqs)
    if goes_on != (index + 1 < count):
        now = ", ".join(str(len(s)) for s in seqs)
        raise UnsupportedCaseError(
            f"a `for` loop runs over a list that its body makes longer or shorter ({count} "
            f"items when the loop began, {now} after trip {index + 1}): Python's loop then runs "
            f"over the items as they are at each trip, srcgrad's over those it counted when the "
            f"loop began. Write the loop with an index, `k = 0; while k < len(xs): v = xs[k]; "
            f"k += 1; ...`, or loop over a copy (`for v in list(xs)`) if the new items are not "
            f"meant to be visited")


def check_reversed_trips(index, count, items, copy):
    """``check_trips`` of ``for v in reversed(items)``, which srcgrad runs over ``copy``, the
    items reversed when the loop began: Python's next trip reads position ``count - 2 - index``
    of ``items`` as it is now, if that position is in it; refused where that is not the
    item the copy holds next (the list made shorter, or an item put before it)."""
    if not isinstance(items, list):
        return
    at = count - 2 - index
    goes_on = 0 <= at < len(items)
    if goes_on != (index + 1 < count) or goes_on and items[at] is not copy[index + 1]:
        raise UnsupportedCaseError(
            f"a `for` loop runs over `reversed(xs)` of a list that its body changes before "
            f"the position it reads next ({count} items when the loop began, {len(items)} "
            f"after trip {index + 1}): Python's loop then reads other items than the ones "
            f"srcgrad's reads (those of the list when the loop began). Write the loop with an "
            f"index, `k = len(xs) - 1; while k >= 0: ...`, or loop over a copy "
            f"(`for v in reversed(list(xs))`)")


def _require(items, kinds, method):
    """Python's error for a method the object does not have (an array has no ``insert``)."""
    if not isinstance(items, kinds):
        kind = type(items).__name__
        raise PythonAttributeError(f"'{kind}' object has no attribute '{method}'")


def _position(n, index):
    """Where ``list.insert(index, v)`` puts v in a list of length n."""
    if index < 0:
        index += n
    return min(max(index, 0), n)


def _cotangents(dy, n):
    """``dy`` (None: all zero) as a list of n element cotangents."""
    return [None] * n if dy is None else list(dy)


def list_insert(items, index, value):
    """``items.insert(index, value)`` as a value."""
    _require(items, list, "insert")
    out = list(items)
    out.insert(index, value)
    return out


def insert_grad_items(dy, items, index):
    if dy is None:
        return None
    p = _position(len(items), index)
    return Cotangents(list(dy[:p]) + list(dy[p + 1 :]))


def insert_grad_value(dy, items, index, value):
    if dy is None:
        return zeros_like(value)
    return elem(dy, _position(len(items), index), value)


def _tangents(ditems, items):
    """The element tangents of ``items`` (``ditems`` None: all zero) with zeros in place of
    None: a tangent list is read like the list (``np.array(dacc)``, ``sum(dacc)``), so unlike a
    cotangent list it has no None elements."""
    if ditems is None:
        return [zeros_like(v) for v in items]
    return [zeros_like(v) if d is None else d for d, v in zip(ditems, items)]


def insert_tangent(ditems, dvalue, items, index, value):
    out = _tangents(ditems, items)
    out.insert(_position(len(items), index), zeros_like(value) if dvalue is None else dvalue)
    return out


def _list_position(n, index):
    k = index + n if index < 0 else index
    if not 0 <= k < n:
        raise PythonIndexError("pop index out of range")
    return k


def pop_item(items, index):
    """``del items[index]`` (``items.pop(index)`` for its effect) as a value."""
    if not isinstance(items, (list, dict)):
        kind = type(items).__name__
        raise PythonTypeError(f"'{kind}' object doesn't support item deletion")
    out = dict(items) if isinstance(items, dict) else list(items)
    del out[index]
    return out


def pop_item_grad(dy, items, index):
    if dy is None:
        return None
    if isinstance(items, dict):
        return DictCotangents({k: v for k, v in dy.items() if k != index})
    k = _list_position(len(items), index)
    return Cotangents(list(dy[:k]) + [None] + list(dy[k:]))


def pop_item_tangent(ditems, items, index):
    if ditems is None:
        return None
    if isinstance(items, dict):
        return {k: v for k, v in ditems.items() if k != index}
    out = list(ditems)
    del out[_list_position(len(items), index)]
    return out


def list_extend(items, values):
    """``items.extend(values)`` as a value."""
    _require(items, list, "extend")
    return list(items) + list(values)


def extend_grad_items(dy, items):
    return None if dy is None else Cotangents(list(dy[: len(items)]))


def extend_grad_values(dy, items, values):
    if dy is None:
        return zeros_like(values)
    parts = list(dy[len(items) :])
    if isinstance(values, np.ndarray):
        # extending by an array adds its rows
        rows = [zeros_like(v) if d is None else d for d, v in zip(parts, values)]
        return np.stack(rows) if rows else zeros_like(values)
    if isinstance(values, (list, tuple)):
        return Cotangents(parts)
    raise PythonTypeError(f"srcgrad differentiates extend() by a list, tuple or array, not "
                    f"{type(values).__name__}")


def extend_tangent(ditems, dvalues, items, values):
    return _tangents(ditems, items) + _tangents(dvalues, values)


def list_reverse(items):
    """``items.reverse()`` as a value."""
    _require(items, list, "reverse")
    return list(items)[::-1]


def reverse_grad(dy):
    return None if dy is None else Cotangents(list(dy)[::-1])


def sort_order(items, reverse=False):
    """The permutation ``items.sort(reverse=...)`` applies (stable, like the sort itself)."""
    _require(items, list, "sort")
    return sorted(range(len(items)), key=items.__getitem__, reverse=reverse)


def list_permute(items, order):
    """``[items[k] for k in order]``: a list reordered."""
    return [items[k] for k in order]


def permute_grad(dy, order):
    if dy is None:
        return None
    out = [None] * len(order)
    for j, k in enumerate(order):
        out[k] = dy[j]
    return Cotangents(out)


def permute_tangent(ditems, order):
    return None if ditems is None else [ditems[k] for k in order]


def list_index(items, value):
    """``items.index(value)`` (no gradient: a position)."""
    _require(items, (list, tuple), "index")
    return items.index(value)


def list_count(items, value):
    _require(items, (list, tuple), "count")
    return items.count(value)


def clear_items(items):
    """``items.clear()`` as a value: an empty container of the same kind."""
    _require(items, (list, dict), "clear")
    return type(items)()


def dict_update(d, other):
    """``d.update(other)`` as a value."""
    _require(d, dict, "update")
    out = dict(d)
    out.update(other)
    return out


def update_grad_target(dy, other):
    if dy is None:
        return None
    return DictCotangents({k: v for k, v in dy.items() if k not in other})


def update_grad_source(dy, other):
    if dy is None:
        return None
    return DictCotangents({k: dy.get(k) for k in other})


def update_tangent(dd, dother, d, other):
    out = dict(zeros_like(d) if dd is None else dd)
    out.update(zeros_like(other) if dother is None else dother)
    return out


def dict_keys(d):
    """``list(d.keys())``: the keys carry no gradient."""
    _require(d, dict, "keys")
    return list(d)


def dict_values(d):
    """``list(d.values())``."""
    _require(d, dict, "values")
    return list(d.values())


def values_grad(dy, d):
    if dy is None:
        return None
    return DictCotangents(zip(d, dy))


def values_tangent(dd, d):
    if dd is None:
        return None
    return [dd.get(k) if dd.get(k) is not None else zeros_like(v) for k, v in d.items()]


def dict_items(d):
    """``list(d.items())``."""
    _require(d, dict, "items")
    return list(d.items())


def items_grad(dy, d):
    if dy is None:
        return None
    return DictCotangents(
        (k, None if pair is None else pair[1]) for k, pair in zip(d, dy)
    )


def items_tangent(dd, d):
    if dd is None:
        return None
    return [(None, dd.get(k) if dd.get(k) is not None else zeros_like(v)) for k, v in d.items()]


def dict_get(d, key, default=None):
    """``d.get(key, default)``."""
    _require(d, dict, "get")
    return d.get(key, default)


def get_grad_dict(dy, d, key):
    if dy is None or key not in d:
        return None
    return DictCotangents({key: dy})


def get_grad_default(dy, d, key, default):
    if dy is None or key in d:
        return zeros_like(default)
    return dy


def get_tangent(dd, ddefault, d, key, default):
    if key in d:
        g = None if dd is None else dd.get(key)
        return zeros_like(d[key]) if g is None else g
    return zeros_like(default) if ddefault is None else ddefault


def iteration_sequence(seq):
    """What a ``for`` loop runs over, indexable: a dict's keys, the items of an iterator
    (``np.ndindex``); a list, tuple, array or range is itself."""
    if isinstance(seq, (list, tuple, np.ndarray, range)):
        return seq
    return list(seq)


def sequence_grad(dy, seq):
    if isinstance(seq, (list, tuple, np.ndarray)):
        return dy
    if not isinstance(seq, (dict, range)) and _carries(dy):
        raise not_iterated(seq)
    return None  # a dict's keys, an iterator of indices: no gradient


def sequence_tangent(dseq, seq):
    """The tangent of ``iteration_sequence(seq)``: ``dseq`` for a sequence; for a dict, whose
    keys carry no tangent, None at each position (a key read as ``k = keys[i]`` at second order,
    where the key travels in a saved tuple with values that have tangents)."""
    if isinstance(seq, (list, tuple, np.ndarray)):
        return dseq
    if isinstance(seq, dict):
        return [None] * len(seq)
    if dseq is not None and not isinstance(seq, range):
        raise not_iterated(seq)
    return None


def _carries(d):
    """Whether a cotangent (a list of them, a tuple, a dict) holds a nonzero value."""
    if isinstance(d, (list, tuple)):
        return any(_carries(v) for v in d)
    if isinstance(d, dict):
        return any(_carries(v) for v in d.values())
    if d is None or isinstance(d, (str, bool)):
        return False
    try:
        return bool(np.any(np.asarray(d) != 0))
    except (TypeError, ValueError):
        return True  # an object's cotangent


def ndenumerate_items(a):
    """``list(np.ndenumerate(a))``: (index, element) pairs."""
    return list(np.ndenumerate(a))


def ndenumerate_grad(dy, a):
    g = np.zeros(np.shape(a), dtype=float_dtype(a))
    if dy is not None:
        for (index, _), pair in zip(np.ndenumerate(a), dy):
            if pair is not None and pair[1] is not None:
                g[index] += pair[1]
    return g


def ndenumerate_tangent(da, a):
    """The tangents of the (index, element) pairs: an index has none (None, not the index: it
    was read as the index's tangent, so `v * idx[1]` gained `v * idx[1]` in jvp)."""
    return [(None, (0.0 if da is None else da[index])) for index, _ in np.ndenumerate(a)]


def concat_sequence(items, values):
    """``items + values`` of two lists or two tuples (``hs = hs + [h]``, ``hs += [h]``)."""
    if not (isinstance(items, (list, tuple)) and type(items) is type(values)):
        raise PythonTypeError(
            f"srcgrad concatenates two lists or two tuples here, not {type(items).__name__} "
            f"and {type(values).__name__}")
    return items + values


def concat_tangent(ditems, dvalues, items, values):
    out = extend_tangent(ditems, dvalues, items, values)
    return tuple(out) if isinstance(items, tuple) else out


def repeat_sequence(items, n):
    """``items * n`` (or ``n * items``) of a list or tuple: its items n times over, the same
    objects (an array repeated is one array held n times)."""
    if not isinstance(items, (list, tuple)):
        raise PythonTypeError(f"srcgrad repeats a list or tuple here, not {type(items).__name__}")
    return items * n


def repeat_grad(dy, items, n):
    """The adjoint of ``repeat_sequence``: each item's cotangent is the sum of its copies'."""
    if dy is None:
        return None
    k = len(items)
    out = [None] * k
    for j, d in enumerate(dy):
        out[j % k] = add(out[j % k], d)
    return Cotangents(out)


def repeat_tangent(ditems, items, n):
    """The tangent of ``repeat_sequence`` (and the adjoint of ``repeat_grad``): the tangents
    repeated."""
    if ditems is None:
        return None
    out = _tangents(ditems, items) * n
    return tuple(out) if isinstance(items, tuple) else out


def as_list(iterable):
    """``list(iterable)``: a new list (a dict's keys, an array's rows)."""
    return list(iterable)


def enter_context(manager):
    """``with manager as v``: ``v``, once the manager is entered."""
    return manager.__enter__()


def exit_context(manager):
    """The end of a ``with`` block that did not raise."""
    manager.__exit__(None, None, None)


def as_tuple(iterable):
    """``tuple(iterable)``: a new tuple (a list's items, an array's rows)."""
    return tuple(iterable)


def as_tuple_tangent(diterable, iterable):
    tangent = as_list_tangent(diterable, iterable)
    return None if tangent is None else tuple(tangent)


def sort_keys(items, keys=None, reverse=False):
    """The permutation ``sorted(items, key=..., reverse=...)`` applies, from the keys (the items
    themselves without a key): stable, like ``sorted``."""
    keys = list(items) if keys is None else list(keys)
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def item(x):
    """``x.item()``: the one element of an array (or NumPy scalar) as a Python number."""
    return x.item() if hasattr(x, "item") else x


def item_grad(dy, x):
    """The cotangent of ``x`` from that of ``x.item()``: ``x``'s shape, filled with ``dy``."""
    if isinstance(x, np.ndarray):
        return np.full(x.shape, dy, dtype=np.result_type(x.dtype, np.float64))
    return dy


def as_list_grad(dy, iterable):
    if dy is None or isinstance(iterable, dict):
        return None
    if not isinstance(iterable, (list, tuple, np.ndarray)):
        if isinstance(iterable, range) or not _carries(dy):
            return None
        raise not_iterated(iterable)
    if isinstance(iterable, np.ndarray):
        rows = [zeros_like(v) if d is None else d for d, v in zip(dy, iterable)]
        return np.stack(rows) if rows else zeros_like(iterable)
    return Cotangents(dy)


def as_list_tangent(diterable, iterable):
    if diterable is None or isinstance(iterable, dict):
        return None
    if not isinstance(iterable, (list, tuple, np.ndarray)):
        raise not_iterated(iterable)
    return list(diterable)


# --- adjoints of the adjoint helpers above (higher order): each is linear in its cotangent ---


def remove_position(g, items, index):
    """The adjoint of inserting a zero at ``index`` (``pop_item_grad``): drop that element."""
    return pop_item_tangent(g, items, index)


def insert_zero(dy, items, index):
    """The adjoint of ``insert_grad_items``: a zero where the insert put the value."""
    if dy is None:
        return None
    out = list(dy)
    out.insert(_position(len(items), index), None)
    return Cotangents(out)


def only_at(dy, items, index):
    """The adjoint of ``insert_grad_value``: ``dy`` at the inserted position, zero elsewhere."""
    out = [None] * (len(items) + 1)
    out[_position(len(items), index)] = dy
    return Cotangents(out)


def pad_cotangents(dy, g):
    """The adjoint of a prefix ``g[:n]``: ``dy`` then zeros to ``g``'s length."""
    if dy is None:
        return None
    return Cotangents(list(dy) + [None] * (len(g) - len(dy)))


def prefix_zeros(dy, items):
    """The adjoint of ``extend_grad_values``: zeros for the first ``len(items)`` elements."""
    if dy is None:
        return None
    return Cotangents([None] * len(items) + list(dy))


def dict_to_values(dy, mapping):
    """The adjoint of ``values_grad``: the cotangents in the dict's order."""
    if dy is None:
        return None
    return Cotangents(dy.get(k) for k in mapping)


def dict_to_items(dy, mapping):
    """The adjoint of ``items_grad``."""
    if dy is None:
        return None
    return Cotangents(Cotangents([None, dy.get(k)]) for k in mapping)


def value_at_key(dy, mapping, key):
    """The adjoint of ``get_grad_dict``."""
    if dy is None or key not in mapping:
        return zeros_like(mapping.get(key, 0.0))
    g = dy.get(key)
    return zeros_like(mapping[key]) if g is None else g


def default_part(dy, mapping, key, default):
    """The adjoint of ``get_grad_default``."""
    if dy is None or key in mapping:
        return zeros_like(mapping.get(key, 0.0))
    return dy


def ndenumerate_items_of(dy, a):
    """The adjoint of ``ndenumerate_grad``: (None, element of ``dy``) pairs (an index has no
    cotangent)."""
    return [(None, dy[index]) for index, _ in np.ndenumerate(a)]


def drop_prefix(dy, items):
    """The adjoint of ``prefix_zeros``: the elements after the first ``len(items)``."""
    if dy is None:
        return None
    return Cotangents(list(dy)[len(items):])
