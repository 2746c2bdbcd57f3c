"""Helpers for NumPy's in-place functions, rewritten as element writes by
``normalize/inplace_calls.py`` (rules: ``rules/inplace_rules.py``).

``np.put(a, ind, v)`` writes ``v`` into ``a`` at flat positions; generated code spells it as the
element write it is, ``a[put_index(a, ind, 'raise')] = np.take(v, put_sources(v, ind))``, so the
overwritten values are saved and restored like those of any ``a[i] = v``, and the gradient of
``v`` goes through ``np.take``'s rule (repeated sources accumulate). The index helpers here only
compute positions, so they carry no gradient.

``ufunc_at(ufunc, a, indices, b)`` is ``ufunc.at`` on a copy: a new array, never ``a`` itself.
``np.add.at`` and ``np.subtract.at`` do not need it (they are ``a + scatter``, written with rules
that exist already); ``multiply``, ``divide``, ``maximum`` and ``minimum`` combine repeated indices
non-linearly, and their adjoints below follow the order NumPy applies them in.
"""

from __future__ import annotations

import numpy as np

from ..errors import NumPyIndexError, NumPyValueError, UnsupportedCaseError
from .indexing import ABSENT, getitem_grad
from .shapes import float_dtype, unbroadcast

# ufuncs whose ``.at`` is differentiated through ``ufunc_at``
AT_UFUNCS = (np.multiply, np.divide, np.maximum, np.minimum)


def _unravel(flat, shape):
    if not shape:
        return ()
    return np.unravel_index(flat, shape)


def put_index(a, ind, mode="raise"):
    """The index ``a[...]`` that ``np.put(a, ind, v, mode)`` writes at, as unravelled positions."""
    size = np.size(a)
    flat = np.asarray(ind, dtype=np.intp)
    if mode == "wrap":
        flat = flat % size
    elif mode == "clip":
        flat = np.clip(flat, 0, size - 1)
    else:
        if np.any((flat < -size) | (flat >= size)):
            bad = flat[(flat < -size) | (flat >= size)].ravel()[0]
            raise NumPyIndexError(f"index {bad} is out of bounds for axis 0 with size {size}")
        flat = np.where(flat < 0, flat + size, flat)
    return _unravel(flat, np.shape(a))


def _cycle(values, count, shape, what):
    n = np.size(values)
    if n == 0:
        if count == 0:
            return np.zeros(shape, dtype=np.intp)
        raise NumPyValueError(f"{what}: cannot place values from an empty array")
    return (np.arange(count, dtype=np.intp) % n).reshape(shape)


def put_sources(v, ind):
    """Which element of ``np.ravel(v)`` each position of ``np.put(a, ind, v)`` receives: ``v`` is
    repeated as often as needed."""
    return _cycle(v, np.size(ind), np.shape(ind), "put")


def mask_index(a, mask):
    """The positions of ``a`` where ``mask`` (of a's size) is true, in C order."""
    flat = np.flatnonzero(np.asarray(mask))
    return _unravel(flat, np.shape(a))


def place_sources(vals, mask):
    """``np.place(arr, mask, vals)`` takes the first values, repeated, in order of the mask."""
    count = int(np.count_nonzero(mask))
    return _cycle(vals, count, (count,), "place")


def putmask_sources(values, mask):
    """``np.putmask(a, mask, values)`` sets ``a.flat[n] = values.flat[n % values.size]``."""
    flat = np.flatnonzero(np.asarray(mask))
    n = np.size(values)
    if n == 0:
        if flat.size == 0:
            return flat
        raise NumPyValueError("putmask: values must not be empty")
    return flat % n


def diagonal_index(a, wrap=False):
    """The positions ``np.fill_diagonal(a, val, wrap)`` writes, as an index into ``a``."""
    shape = np.shape(a)
    if len(shape) < 2:
        raise NumPyValueError("array must be at least 2-d")
    if len(shape) == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if not all(n == shape[0] for n in shape):
            raise NumPyValueError("All dimensions of input must be of equal length")
        step = 1 + np.cumprod(shape[:-1]).sum()
        end = None
    flat = np.arange(np.size(a), dtype=np.intp)[:end:step]
    return _unravel(flat, shape)


def diagonal_sources(val, index):
    """Which element of ``np.ravel(val)`` each diagonal position receives (repeated as needed)."""
    count = np.size(index[0]) if index else 1
    return _cycle(val, count, (count,), "fill_diagonal")


def along_axis_index(arr, indices, axis):
    """The fancy index ``np.put_along_axis(arr, indices, values, axis)`` writes at."""
    shape = np.shape(arr)
    indices = np.asarray(indices)
    if axis is None:
        if indices.ndim != 1:
            raise NumPyValueError("when axis=None, `indices` must have a single dimension.")
        return _unravel(np.where(indices < 0, indices + np.size(arr), indices), shape)
    ndim = len(shape)
    if indices.ndim != ndim:
        raise NumPyValueError("`indices` and `arr` must have the same number of dimensions")
    axis = axis + ndim if axis < 0 else axis
    index = []
    for k, n in enumerate(shape):
        if k == axis:
            index.append(indices)
        else:
            fancy = [1] * ndim
            fancy[k] = n
            index.append(np.arange(n).reshape(fancy))
    return tuple(index)


# --- ufunc.at ---------------------------------------------------------------------------------
def ufunc_at(ufunc, a, indices, b):
    """``ufunc.at(a, indices, b)`` applied to a copy of ``a``; returns the copy."""
    out = np.array(a, dtype=np.result_type(a, b), copy=True)
    ufunc.at(out, indices, b)
    return out


def _occurrences(a, indices, b):
    """Flat positions in ``a`` of each occurrence ``ufunc.at`` applies, in NumPy's order, and
    ``b`` broadcast to them (both raveled)."""
    positions = np.arange(np.size(a)).reshape(np.shape(a))[indices]
    values = np.broadcast_to(b, np.shape(positions))
    return np.ravel(positions), np.ravel(values)


def _others_product(positions, values):
    """For each occurrence, the product of the other values applied at the same position."""
    out = np.ones(values.shape, dtype=float_dtype(values))
    order = np.argsort(positions, kind="stable")
    sorted_pos = positions[order]
    starts = np.flatnonzero(np.r_[True, sorted_pos[1:] != sorted_pos[:-1]])
    ends = np.r_[starts[1:], sorted_pos.size]
    for s, e in zip(starts, ends):
        if e - s < 2:
            continue
        group = values[order[s:e]]
        before = np.r_[1.0, np.cumprod(group[:-1])]
        after = np.r_[np.cumprod(group[::-1][:-1])[::-1], 1.0]
        out[order[s:e]] = before * after
    return out


def _winners(a, y, positions, values):
    """Which occurrence (or ``a`` itself) supplied each result of ``maximum.at`` /
    ``minimum.at``: ties go to the value applied first, ``a`` before any occurrence."""
    a_flat, y_flat = np.ravel(a), np.ravel(y)
    kept = a_flat == y_flat
    candidate = (values == y_flat[positions]) & ~kept[positions]
    chosen = np.zeros(values.shape, dtype=bool)
    where = np.flatnonzero(candidate)
    _, first = np.unique(positions[where], return_index=True)
    chosen[where[first]] = True
    return kept.reshape(np.shape(a)), chosen


def _factor(ufunc, positions, values, size):
    """The product of the values applied at each position (divide: of their reciprocals)."""
    factor = np.ones(size, dtype=float_dtype(values))
    np.multiply.at(factor, positions, values if ufunc is np.multiply else 1.0 / values)
    return factor


def ufunc_at_grad_a(dy, ufunc, a, indices, b, y):
    """The adjoint of ``ufunc_at`` in ``a``."""
    positions, values = _occurrences(a, indices, b)
    if ufunc is np.multiply or ufunc is np.divide:
        factor = _factor(ufunc, positions, values, np.size(a))
        return dy * factor.reshape(np.shape(a))
    kept, _ = _winners(a, y, positions, values)
    return dy * kept


def ufunc_at_grad_b(dy, ufunc, a, indices, b, y):
    """The adjoint of ``ufunc_at`` in ``b``, summed back to ``b``'s shape."""
    positions, values = _occurrences(a, indices, b)
    shape = _shape_of(a, indices)
    dy_flat = np.ravel(np.broadcast_to(dy, np.shape(a)))
    a_flat = np.ravel(a)
    if ufunc is np.multiply:
        g = dy_flat[positions] * a_flat[positions] * _others_product(positions, values)
    elif ufunc is np.divide:
        inverse = 1.0 / values
        g = -dy_flat[positions] * a_flat[positions] * _others_product(positions, inverse)
        g = g * inverse * inverse
    else:
        _, chosen = _winners(a, y, positions, values)
        g = np.where(chosen, dy_flat[positions], 0.0)
    return unbroadcast(g.reshape(shape), b)


def ufunc_at_tangent(ufunc, a, indices, b, y, da, db):
    """The tangent of ``ufunc_at`` along ``da`` and ``db`` (either may be None)."""
    positions, values = _occurrences(a, indices, b)
    size = np.size(a)
    out = np.zeros(size, dtype=float_dtype(y))
    if ufunc is np.multiply or ufunc is np.divide:
        if da is not None:
            factor = _factor(ufunc, positions, values, size)
            out += np.ravel(np.broadcast_to(da, np.shape(a))) * factor
        if db is not None:
            dvalues = np.ravel(np.broadcast_to(db, _shape_of(a, indices)))
            a_flat = np.ravel(a)
            if ufunc is np.multiply:
                part = a_flat[positions] * _others_product(positions, values) * dvalues
            else:
                inverse = 1.0 / values
                part = -a_flat[positions] * _others_product(positions, inverse) * inverse
                part = part * inverse * dvalues
            np.add.at(out, positions, part)
        return out.reshape(np.shape(a))
    kept, chosen = _winners(a, y, positions, values)
    if da is not None:
        out += np.ravel(np.broadcast_to(da, np.shape(a)) * kept)
    if db is not None:
        dvalues = np.ravel(np.broadcast_to(db, _shape_of(a, indices)))
        np.add.at(out, positions[chosen], dvalues[chosen])
    return out.reshape(np.shape(a))


def _shape_of(a, indices):
    return np.shape(np.arange(np.size(a)).reshape(np.shape(a))[indices])


def scatter_last(g, x, index):
    """Zeros shaped like ``x`` with ``g`` written at ``index`` (``z[index] = g``): of repeated
    positions the last write lands. The tangent of the element write ``x[index] = value`` in
    ``value``, and the adjoint of ``take_item``. For a list or dict ``x``: ``g`` at that
    element, nothing elsewhere."""
    if g is ABSENT:
        return None  # the tangent of a key's ABSENT save: the restore deletes the key
    if isinstance(x, (list, tuple, dict)):
        return getitem_grad(g, x, index)
    z = np.zeros(np.shape(x), dtype=float_dtype(g))
    z[index] = g
    return z


# --- writes into arrays whose dtype is known only at run time ---------------------------------
def write_dtype(y):
    """The dtype a value written into ``y`` is cast to: ``y.dtype`` for an array, else None (a
    list or dict keeps what it is given)."""
    return y.dtype if isinstance(y, np.ndarray) else None


def _truncates(dtype):
    return dtype is not None and (np.issubdtype(dtype, np.integer) or dtype == np.bool_)


def written(v, dtype):
    """``v``, about to be written into an array of ``dtype``: the write casts it, so for an
    integer or boolean ``dtype`` it carries no gradient (rule: ``written_grad``)."""
    return v


def written_grad(g, dtype):
    """The cotangent (or tangent) ``g`` of a value written into an array of ``dtype``: zero when
    the write truncates it to an integer or boolean, else ``g`` itself."""
    if _truncates(dtype):
        return np.zeros(np.shape(g), dtype=float_dtype(g))
    return g


def array_only(a, what):
    """A copy of ``a``, an array sorted in place by ``what`` (``xs.sort()``); a list or tuple
    there is refused: srcgrad rewrote the call as an array's, not knowing the argument's type.

    A copy, not ``a`` itself: the sort then writes into ``a``, and the permutation (and, at
    second order, its tangent) must be read from the values before the write."""
    if isinstance(a, (list, tuple)):
        raise UnsupportedCaseError(
            f"srcgrad differentiates `{what}` of an array, and it was given a "
            f"{type(a).__name__}; write `{what.split('.')[0]} = np.{what.split('.')[1][:-2]}"
            f"({what.split('.')[0]})` instead, or pass an array"
        )
    return np.array(a, copy=True)


# --- `x op= v`: NumPy writes the result into the array x ----------------------------------------
def inplace_target(x, v):
    """The dtype ``x op= v`` casts its result to: ``x.dtype`` when ``x`` is an array (NumPy
    writes into it), else None (a number, a list: ``x`` is rebound). Raises NumPy's error when
    ``v`` would broadcast the array ``x`` to a larger shape (``y = x * 1.0; y += np.outer(x, x)``):
    ``x = x op v``, which srcgrad computes, would silently make a new, larger array."""
    if not isinstance(x, np.ndarray):
        return None
    shape = v.shape if type(v) is np.ndarray else np.shape(v)  # (the common case first)
    if shape != x.shape and shape:
        wide = np.broadcast_shapes(x.shape, shape)
        if wide != x.shape:
            raise NumPyValueError(f"non-broadcastable output operand with shape {x.shape} doesn't "
                             f"match the broadcast shape {wide}")
    return x.dtype


def exact_target(x, v, size_only=False):
    """``inplace_target`` for ``out=x`` of a reduction, a scan, ``np.dot``, ``np.take``, a
    ufunc's ``reduce``/``accumulate``...: NumPy requires ``x`` to have the result's own shape (for
    ``np.round``, its size) and raises otherwise, where broadcasting ``v`` into ``x`` would give a
    value (``np.sum(M, axis=0, out=g)`` with ``g`` of shape (1, 3) or (2, 3))."""
    shape = np.shape(v)
    if isinstance(x, np.ndarray) and (np.size(v) != x.size if size_only else shape != x.shape):
        raise NumPyValueError(f"`out=` of shape {x.shape} for a result of shape {shape}: NumPy "
                              f"requires the result's own {'size' if size_only else 'shape'}")
    return inplace_target(x, v)


def kept_dtype(v, dtype):
    """``v``, the result of ``x op= v``, in x's dtype (``inplace_target``; None: x was no
    array): a ``same_kind`` cast as NumPy's write does (float32 stays float32, an int array given
    floats raises NumPy's casting error)."""
    if dtype is None or getattr(v, "dtype", None) == dtype:
        return v
    return np.asarray(v).astype(dtype, casting="same_kind")


def kept_dtype_tangent(t, dtype):
    """The tangent of ``kept_dtype(v, dtype)`` along ``t``: zero through a cast to an integer or
    boolean dtype (as its adjoint, ``written_grad``), else ``t`` in that dtype."""
    if dtype is None or t is None or getattr(t, "dtype", None) == dtype:
        return t
    if _truncates(dtype):
        return np.zeros(np.shape(t), dtype=float_dtype(t))
    return np.asarray(t).astype(dtype)
