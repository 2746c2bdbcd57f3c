"""Reading and writing array elements: the adjoint of ``x[index]`` and the helpers behind writes.

``getitem_grad`` and ``add_at`` scatter a cotangent into an index (repeated indices accumulate);
``setitem``, ``copy_item``, ``restore_item``, ``take_item`` and ``zero_item`` let generated code
write into an array, save what a write overwrites and restore it on the backward sweep;
``fresh_copy`` keeps the caller's argument intact; ``check_not_view`` and ``check_not_array`` refuse
aliasing srcgrad does not follow.
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ..errors import SrcgradError
from .containers import Cotangents, DictCotangents, add, copy_array, zeros_like
from .pytrees import kind_of
from .shapes import float_dtype, is_duck


def getitem_grad(dy, x, index):
    """The adjoint of ``x[index]``: zeros of x's shape with ``dy`` added at ``index``.

    Repeated integer indices accumulate (``np.add.at``), as the chain rule requires. For a tuple,
    list or dict ``x`` the result is sparse: ``None`` everywhere but at ``index``.
    """
    if isinstance(x, dict):
        return DictCotangents({index: dy})
    if isinstance(x, (tuple, list)):
        g = Cotangents([None] * len(x))
        if isinstance(index, slice):
            for i, d in zip(range(*index.indices(len(x))), dy):
                g[i] = d
        else:
            g[index] = dy
        return g
    if is_duck(dy) and _is_basic(index):
        # a lazy (Dask) zero array of x's shape, the slice assigned lazily
        g = np.zeros_like(dy, shape=np.shape(x), dtype=float_dtype(dy))
        g[index] = dy
        return g
    g = np.zeros(np.shape(x), dtype=float_dtype(dy))
    if _is_basic(index):
        if np.size(dy) == 0 and g[index].size == 0:
            return g  # nothing read: an empty list made an array, (0,), of an empty (0, 5)
        g[index] = dy
    else:
        np.add.at(g, index, dy)
    return g


def add_at(acc, index, dy):
    """``acc`` plus the adjoint of ``x[index]``, added in place into ``acc``.

    Generated code calls this only on an adjoint buffer it created itself, so the update touches
    nothing else; it keeps ``x[i]`` inside a loop O(1) per iteration instead of O(len(x)). A
    read-only ``acc`` (the broadcast view ``unreduce`` returns) is copied before the first update.
    """
    if type(acc) is np.ndarray and not acc.flags.writeable:
        acc = np.array(acc)
    if type(acc) is np.ndarray:
        if type(index) is int or _is_basic(index):
            acc[index] += dy
        else:
            np.add.at(acc, index, dy)
        return acc
    if isinstance(acc, (Cotangents, DictCotangents)):
        if isinstance(index, slice):
            for i, d in zip(range(*index.indices(len(acc))), dy):
                acc[i] = add(acc[i], d)
        else:
            acc[index] = add(acc.get(index) if isinstance(acc, dict) else acc[index], dy)
    elif _is_basic(index):
        acc[index] += dy
    else:
        np.add.at(acc, index, dy)
    return acc


def check_not_view(value, base, name, base_name):
    """Refuse a view of an array that the function writes into later (``r = M[0]; M[0, 1] = v``)."""
    if isinstance(value, np.ndarray) and np.may_share_memory(value, base):
        raise SrcgradError(
            f"`{name}` is a view of `{base_name}`, which is written into afterwards, so it "
            f"changes with the write: srcgrad does not follow that. Take a copy "
            f"(`{name} = {base_name}[...].copy()`)."
        )


def check_copied_array(value, name):
    """Refuse ``name.copy()`` (or ``copy.copy(name)``) of a list, tuple or dict holding arrays
    where the function writes in place into the copy's items (normalize/shallow_copies.py): the
    copy is shallow, its items are the argument's own arrays."""
    if isinstance(value, (list, tuple, dict)) and any(
            isinstance(v, np.ndarray) or isinstance(v, (list, tuple, dict))
            for v in (value.values() if isinstance(value, dict) else value)):
        raise SrcgradError(
            f"the copy of `{name}` made here is shallow (`{name}` is a {type(value).__name__}): "
            f"its items are the arrays of `{name}` itself, and the function writes into them in "
            f"place, which srcgrad does not follow. Copy the items too (`[v.copy() for v in "
            f"{name}]`, `copy.deepcopy({name})`), or write `v = v * s` instead of `v *= s`."
        )


def check_not_holding(value, base, name, base_name, followed=False):
    """Refuse a value that holds ``base``'s array (or a view of it) through a list, tuple or
    dict (``L = [y]; z = L[0]; y[0] = v; ... z``): it would change with a write into ``base``
    that srcgrad does not follow. ``base`` may be a list, tuple or dict itself, written into
    through an item (``L[0] *= v`` where ``z`` is ``L[0]``'s array: the state a checkpointed
    loop returns). With ``followed`` (``base`` is surely a list, dict or tuple, and an update
    in place of one of its items reaches every other holder of that item by identity,
    normalize/sharing.py), only a value that holds ``base`` itself, or a list or dict that
    ``base`` holds, is refused: a write into ``base``'s slots changes those, not its arrays."""
    if followed and not isinstance(base, np.ndarray):
        shared = {id(c) for c in _containers_in(base)}
        held = any(id(c) in shared for c in _containers_in(value))
    else:
        held = any(np.may_share_memory(part, written) for part in _arrays_in(value)
                   for written in _arrays_in(base))
    if held:
        raise SrcgradError(
            f"`{name}` refers to the array in `{base_name}` (through a list, tuple or "
            f"dict), which is written into afterwards, so it changes with the write: a "
            f"dependence srcgrad does not follow. Use a copy there (`{base_name}.copy()`)"
        )


def _containers_in(value):
    """The lists and dicts ``value`` is or holds, through lists, tuples and dicts."""
    if isinstance(value, (list, tuple, dict)):
        if not isinstance(value, tuple):
            yield value
        for part in value.values() if isinstance(value, dict) else value:
            yield from _containers_in(part)


def _arrays_in(value):
    """The arrays ``value`` is or holds, through lists, tuples and dicts."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple, dict)):
        for part in value.values() if isinstance(value, dict) else value:
            yield from _arrays_in(part)


def check_not_array(value, name):
    """Refuse ``y += v`` on an array that another variable shares (``y = x; y += v``)."""
    if isinstance(value, np.ndarray):
        raise SrcgradError(
            f"`{name} += ...` updates an array in place that another variable of the function "
            f"shares (it was assigned from it, or is a view of it); srcgrad does not follow "
            f"such aliasing. Write `{name} = {name} + ...`, or make `{name}` a copy first."
        )
    return value


def fresh_copy(x):
    """A copy of an argument that the function writes into: the caller's value stays intact."""
    if isinstance(x, list):
        return list(x)
    if isinstance(x, dict):
        return dict(x)
    if kind_of(x) is not None:
        return copy.copy(x)  # an object: its fields are replaced, never written into
    return np.array(x, copy=True)


def setitem(a, index, value):
    """``a[index] = value``, as a value: generated code writes ``y = setitem(y, i, v)``. The
    ``ABSENT`` that ``copy_item`` saved for a new key deletes it (a restore that a second
    transform spells as a write)."""
    if value is ABSENT:
        del a[index]
    else:
        _check_list_slice(a, index, value)
        a[index] = value
    return a


def _check_list_slice(a, index, value):
    """``L[i:j] = values`` of a list must keep its length: the adjoints read the written items'
    cotangents back by the slice (``take_item``), which names other items once the list has
    grown or shrunk."""
    if isinstance(a, list) and isinstance(index, slice):
        count = len(range(*index.indices(len(a))))
        if len(value) != count:
            raise SrcgradError(
                f"a write into a slice of a list (`L[i:j] = ...`) puts {len(value)} items in "
                f"the place of {count}, which changes the list's length: srcgrad differentiates "
                f"it only while a slice write keeps the length. Write the items one by one, or "
                f"build the list with `append`, `insert` or a comprehension"
            )


class _Absent:
    """What ``copy_item`` saves for a key a dict does not have yet."""

    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()


def copy_item(a, index):
    """A copy of ``a[index]``: the values a write is about to overwrite (``ABSENT`` for a new
    key of a dict; an element of a list or dict is a reference, kept as it is)."""
    if isinstance(a, dict):
        return a.get(index, ABSENT)
    if isinstance(a, list):
        return a[index]
    return np.array(a[index], copy=True)


def restore_item(a, index, saved):
    """Put back values saved by ``copy_item``; returns ``a``."""
    if saved is ABSENT:
        del a[index]
    else:
        a[index] = saved
    return a


def take_item(d, index, like):
    """A copy of ``d[index]`` (never a view: ``d`` is updated in place afterwards); for a list or
    dict ``d`` with nothing there, zeros shaped as ``like`` (the value written there)."""
    if isinstance(d, (list, dict)):
        g = d.get(index) if isinstance(d, dict) else d[index]
        if g is None:
            return 0.0 if like is ABSENT else zeros_like(like)  # ABSENT: a key restored away
        return g
    if isinstance(d, NUMBERS):  # the cotangent of a 0-d array may be a number (`float(y)`'s)
        d = np.asarray(d)
    g = np.array(d[index], copy=True)
    if not _is_basic(index):
        # `y[[0, 0]] = v`: of repeated indices only the last write lands, so only it gets gradient
        positions = np.arange(math.prod(np.shape(d))).reshape(np.shape(d))[index]
        flat = positions.ravel()
        _, last_from_end = np.unique(flat[::-1], return_index=True)
        landed = np.zeros(flat.size, dtype=bool)
        landed[flat.size - 1 - last_from_end] = True
        g = np.where(landed.reshape(positions.shape), g, 0.0)
    return g[()]


def zero_item(d, index):
    """``d`` with zeros at ``index``, in place: the adjoint of values a write overwrote.

    A read-only ``d`` (the broadcast view ``unreduce`` returns) is copied first."""
    if isinstance(d, NUMBERS) or (isinstance(d, np.ndarray) and not d.flags.writeable):
        d = np.array(d)  # (a number: the cotangent of a 0-d array, `float(y)`'s)
    if isinstance(d, list) and isinstance(index, slice):
        d[index] = [None] * len(d[index])  # (a slice write keeps the length: setitem)
    else:
        d[index] = None if isinstance(d, (list, dict)) else 0.0
    return d


def zero_written(d, index, value):
    """The tangent ``d`` of ``x`` after ``x[index] = value`` of a value without tangent: a copy
    with zeros at ``index``. For a list or dict the zeros are like ``value`` (as in the tangent of
    a literal), never None: code reading the element's tangent computes with it."""
    d = copy_array(d)
    if value is ABSENT:
        d.pop(index, None)  # the restore of a new key: the key goes, with its tangent
    else:
        d[index] = zeros_like(value) if isinstance(d, (list, dict)) else 0.0
    return d


NUMBERS = (int, float, complex, np.generic)


def _is_basic(index):
    if isinstance(index, tuple):
        return all(_is_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))
