"""The helpers of a batched reverse sweep (srcgrad/batched.py): the sweep of a pullback run once
for ``k`` seeds, every cotangent an array of shape ``(k,) + shape`` whose row ``i`` is the value
the sweep computes for seed ``i``.

Each helper gives, row by row, what its per-seed counterpart gives (``unbroadcast``,
``cast_like``, ``matmul_vjp_right``, Python's arithmetic between a cotangent and a primal
value); where it cannot be sure of that (a complex value, an object, an unusual rank) it raises
:class:`Unbatched`, and the Jacobian calls the per-seed ``back`` once per seed instead. Complex
seeds (of a complex output) are conjugated as ``check_seed`` conjugates each; a complex
cotangent inside the sweep is computed row by row as the per-seed one, and conjugated (or its
real part taken) where ``cast_like`` gives the gradient.

Not re-exported from ``runtime``: generated code differentiated again never calls them (a
Jacobian is differentiated through its per-seed twin).
"""

from __future__ import annotations

import operator

import numpy as np

from ..errors import SrcgradError
from . import products, shapes
from .boundary import jacobian_argument, stack_rows, unit_basis
from .containers import Cotangents, DictCotangents
from .products import _einsum_labels
from .reductions import _count, _expand
from .shapes import float_dtype

OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "**": operator.pow}
ROWS_BYTES = 2**24  # the seeds of one batched sweep hold at most this much (16 MB)


class Unbatched(SrcgradError):
    """A batched sweep met what it cannot compute row by row exactly as the per-seed one (never
    reaches the user: the Jacobian then calls the per-seed sweep)."""


def _plain(x):
    """``x``, a primal value a cotangent meets: a number or a numeric array, else Unbatched."""
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biufc":
        return x
    raise Unbatched(type(x).__name__)


def _lift(a, ndim):
    """The batched ``a`` with axes of length one after its first, so that each row has
    ``ndim`` axes: NumPy then broadcasts each row as the per-seed value would be."""
    extra = ndim - (a.ndim - 1)
    if extra <= 0:
        return a
    return a.reshape(a.shape[:1] + (1,) * extra + a.shape[1:])


def _rows(g):
    """``g``, a batched value: an array with one row per seed (a list's cotangents: Unbatched)."""
    if not isinstance(g, np.ndarray) or g.ndim == 0:
        raise Unbatched(type(g).__name__)
    return g


def binop(op, a, b, a_many, b_many):
    """``a <op> b`` with either operand (or both) batched (``a_many``, ``b_many``)."""
    fn = OPERATORS[op]
    a, b = _rows(a) if a_many else a, _rows(b) if b_many else b
    if a_many and b_many:
        ndim = max(a.ndim, b.ndim) - 1
        return fn(_lift(a, ndim), _lift(b, ndim))
    if a_many:
        b = _plain(b)
        return fn(_lift(a, np.ndim(b)), b)
    a = _plain(a)
    return fn(a, _lift(b, np.ndim(a)))


def matmul(a, b, a_many, b_many):
    """``a @ b`` with one operand batched (more than two axes per seed: row by row)."""
    if a_many == b_many:
        raise Unbatched("matmul of two cotangents")
    if np.ndim(b if a_many else a) > 2 or _rows(a if a_many else b).ndim > 3:
        return rowwise(operator.matmul, (a_many, b_many), a, b)
    if a_many:
        return np.matmul(a, _plain(b))
    if b.ndim == 3:
        return np.matmul(_plain(a), b)
    return np.matmul(b, _plain(a).T)


def tile(x, count):
    """A value the same for every seed (a zero before contributions are added), batched: a new
    array of ``count`` rows."""
    x = _plain(x)
    dtype = x.dtype if isinstance(x, (np.ndarray, np.generic)) else float_dtype(x)
    out = np.empty((count,) + np.shape(x), dtype=dtype)
    out[...] = x
    return out


def add(a, b, a_many, b_many, count):
    """``runtime.add`` (``None`` is zero) with batched operands."""
    if a is None or b is None:
        other, many = (b, b_many) if a is None else (a, a_many)
        if other is None:
            raise Unbatched("no cotangent")
        return other if many else tile(other, count)
    return binop("+", a, b, a_many, b_many)


def augmented(op, a, b, a_many, b_many, count):
    """``a <op>= b``: the result keeps the shape of ``a`` (and, within a kind, its dtype)."""
    a = a if a_many else tile(a, count)
    out = binop(op, a, b, True, b_many)
    if out.shape != a.shape or out.dtype.kind != a.dtype.kind:
        raise Unbatched("an augmented assignment that changes its target's shape or kind")
    return out.astype(a.dtype, copy=False)


def check_seeds(seeds, out):
    """The seeds of ``out``'s sweep: one row per seed, each shaped like ``out``; complex seeds
    conjugated, as ``check_seed`` conjugates each."""
    _plain(out)
    if not isinstance(seeds, np.ndarray) or seeds.shape[1:] != np.shape(out) or (
            seeds.dtype.kind not in "fc"):
        raise Unbatched("seeds not shaped like the output")
    return np.conj(seeds) if seeds.dtype.kind == "c" else seeds


def unbroadcast(g, x):
    """``runtime.unbroadcast`` of each row of ``g`` to the shape of ``x``."""
    rows, shape = g.shape[1:], np.shape(x)
    if rows == shape:
        return g
    if not rows:  # a Python float's contribution is returned as it is, an array's spread
        raise Unbatched("a scalar contribution to an array")
    g = _lift(g, len(shape))
    full = np.broadcast_shapes(g.shape[1:], shape)
    if full != g.shape[1:]:
        g = np.broadcast_to(g, g.shape[:1] + full)
    lead = g.ndim - 1 - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(1, lead + 1)))
    axes = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and g.shape[i + 1] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def unreduce(dy, x, axis=None, keepdims=False, where=True):
    """``runtime.unreduce``: each row of ``dy`` spread over the reduced axes of ``x``."""
    shape = np.shape(x)
    if where is not True or not shape or (dy.dtype.kind not in "fc"):
        raise Unbatched("a masked or scalar reduction")
    if axis is not None and not keepdims:
        axes = axis if isinstance(axis, tuple) else (axis,)
        dy = np.expand_dims(dy, tuple(a % len(shape) + 1 for a in axes))
    dy = _lift(dy, len(shape))
    return np.broadcast_to(dy, dy.shape[:1] + shape)


def cast_like(g, x):
    """``runtime.cast_like``: the rows in the dtype of ``x``'s gradients, shaped like ``x``; a
    complex cotangent conjugated for a complex ``x``, its real part for a real one (as
    ``conj_leaf``)."""
    x = _plain(x)
    if g.shape[1:] != np.shape(x) or g.dtype.kind not in "fc":
        raise Unbatched("a gradient not shaped like its argument")
    if np.iscomplexobj(g):
        g = np.conj(g) if np.iscomplexobj(x) else np.real(g)
    want = x.dtype if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "fc" else (
        np.dtype(np.complex128 if isinstance(x, complex) else np.float64))
    if want.kind == "f" and g.dtype.kind == "c":
        raise Unbatched("an imaginary part")
    return g.astype(want, copy=False)


def as_like(g, x):
    """``runtime.as_like`` of an array or number ``x``: ``cast_like``."""
    return cast_like(g, x)


def reshape_like(g, x, order="C"):
    """``runtime.reshape_like``: each row with the shape of ``x``."""
    if order != "C":
        return rowwise(shapes.reshape_like, (True, False, False), g, x, order)
    return np.reshape(g, g.shape[:1] + np.shape(_plain(x)))


def _basic(index):
    if isinstance(index, tuple):
        return all(_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, slice) or (
        isinstance(index, (int, np.integer)) and not isinstance(index, bool))


def getitem_grad(dy, x, index):
    """``runtime.getitem_grad`` of an array read at a basic index (integers, slices, None,
    ``...``): zeros with each row of ``dy`` written at ``index`` of its row; of a dict, list or
    tuple read at one key: the batched ``dy`` at that key, nothing elsewhere."""
    if isinstance(x, dict):
        return DictCotangents({index: _rows(dy)})
    if isinstance(x, (tuple, list)):
        if isinstance(index, slice):
            raise Unbatched("a slice of a list")
        g = Cotangents([None] * len(x))
        g[index] = _rows(dy)
        return g
    if not _basic(index):
        return getitem_advanced(dy, x, index)
    g = np.zeros(dy.shape[:1] + np.shape(_plain(x)), dtype=float_dtype(dy))
    at = (slice(None),) + (index if isinstance(index, tuple) else (index,))
    g[at] = _lift(dy, g[at].ndim - 1)
    return g


def add_at(acc, index, dy, dy_many):
    """``runtime.add_at`` at a basic index: each row of ``dy`` added at ``index`` of the row of
    a copy of ``acc`` (the per-seed helper updates a buffer its sweep owns)."""
    if isinstance(acc, (Cotangents, DictCotangents)):
        if isinstance(index, slice) or not dy_many:
            raise Unbatched("a slice of a list, or a value the same for every seed")
        now = acc.get(index) if isinstance(acc, dict) else acc[index]
        acc[index] = _rows(dy) if now is None else binop("+", now, dy, True, True)
        return acc
    if not _basic(index):
        return add_at_advanced(acc, index, dy, dy_many)
    if acc.dtype.kind != "f":
        raise Unbatched("not a float cotangent")
    acc = np.array(acc, copy=True)
    at = (slice(None),) + (index if isinstance(index, tuple) else (index,))
    acc[at] += _lift(dy, acc[at].ndim - 1) if dy_many else _plain(dy)
    return acc


def copy_grad(g):
    """``runtime.copy_grad``: a batched gradient the caller owns."""
    return np.array(g, copy=True)


def matmul_vjp_left(dy, a, b):
    """``runtime.matmul_vjp_left`` row by row, for a matrix ``a`` (``a @ b``)."""
    a, b = _plain(a), _plain(b)
    if np.ndim(a) != 2 or np.ndim(b) not in (1, 2):
        return rowwise(products.matmul_vjp_left, (True, False, False), dy, a, b)
    if np.ndim(b) == 2:
        return dy @ b.T
    return dy[:, :, None] * b


def matmul_vjp_right(dy, a, b):
    """``runtime.matmul_vjp_right`` row by row, for a matrix or vector ``a`` and ``b``."""
    a, b = _plain(a), _plain(b)
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ dy
    if a_nd == 2 and b_nd == 1:
        return dy @ a
    if a_nd == 1 and b_nd == 2:
        return a[:, None] * dy[:, None, :]
    if a_nd == 1 and b_nd == 1:
        return dy[:, None] * a
    return rowwise(products.matmul_vjp_right, (True, False, False), dy, a, b)


def _at(index):
    """``index`` of one row as the index of every row (a full slice first); Unbatched where the
    advanced indices are not next to each other (NumPy would then move their axes first)."""
    index = index if isinstance(index, tuple) else (index,)
    if not _basic(index):
        fancy = [i for i, item in enumerate(index) if not _basic(item) or (
            isinstance(item, (int, np.integer)))]
        if fancy != list(range(fancy[0], fancy[-1] + 1)):
            raise Unbatched("advanced indices apart")
    return (slice(None),) + index


def _indexed_ndim(shape, at):
    """The number of axes of one row of ``x[index]`` (``at``: the index of every row)."""
    return np.broadcast_to(np.zeros(()), (1,) + tuple(shape))[at].ndim - 1


def getitem_advanced(dy, x, index):
    """``runtime.getitem_grad`` of an array read at an advanced index: each row of ``dy``
    added at ``index`` of its row (``np.add.at``: repeated positions accumulate)."""
    shape = np.shape(_plain(x))
    at = _at(index)
    g = np.zeros(dy.shape[:1] + shape, dtype=float_dtype(dy))
    np.add.at(g, at, _lift(_rows(dy), _indexed_ndim(shape, at)))
    return g


def add_at_advanced(acc, index, dy, dy_many):
    """``runtime.add_at`` at an advanced index, on a copy of ``acc``."""
    if acc.dtype.kind != "f":
        raise Unbatched("not a float cotangent")
    at = _at(index)
    acc = np.array(acc, copy=True)
    np.add.at(acc, at, _lift(_rows(dy), _indexed_ndim(acc.shape[1:], at)) if dy_many
              else _plain(dy))
    return acc


def take_item(d, index, like):
    """``runtime.take_item`` of an array at a basic index: a copy of each row's part."""
    if not _basic(index):
        raise Unbatched("the last of repeated writes")
    return np.array(_rows(d)[_at(index)], copy=True)


def zero_item(d, index):
    """``runtime.zero_item``: zeros at ``index`` of each row, in place (a read-only ``d``
    copied first)."""
    d = _rows(d)
    if not d.flags.writeable:
        d = np.array(d)
    d[_at(index)] = 0.0
    return d


def copy_array(a):
    """``runtime.copy_array`` of a batched array."""
    return np.array(_rows(a), dtype=float_dtype(a), copy=True)


def _like(g, x):
    """``shapes._like`` row by row: each row shaped like ``x`` (a number's rows real unless it
    is complex)."""
    if g.dtype.kind not in "fc":
        raise Unbatched("not a float cotangent")
    if np.iscomplexobj(g) and not isinstance(x, np.ndarray) and not np.iscomplexobj(x):
        g = np.real(g)
    return np.reshape(g, g.shape[:1] + np.shape(x))


def elem(dy, key, x, count):
    """``runtime.elem`` of a batched list, tuple or dict cotangent."""
    if dy is None:
        return tile(_zeros(x), count)
    g = dy.get(key) if isinstance(dy, dict) else dy[key]
    return tile(_zeros(x), count) if g is None else _rows(g)


def _zeros(x):
    x = _plain(x)
    return np.zeros(np.shape(x), dtype=float_dtype(x))


def stack_grad(dy, arrays, axis=0):
    """``runtime.stack_grad``: each row taken apart along the stacked axis."""
    dy = _rows(dy)
    axis = axis % (dy.ndim - 1) + 1
    return Cotangents(_like(np.take(dy, i, axis=axis), _plain(x)) for i, x in enumerate(arrays))


def concatenate_grad(dy, arrays, axis=0):
    """``runtime.concatenate_grad``: each row cut into one piece per array."""
    dy = _rows(dy)
    if axis is None:
        dy, shapes, axis = dy.reshape(len(dy), -1), [(np.size(_plain(x)),) for x in arrays], 1
    else:
        shapes, axis = [np.shape(_plain(x)) for x in arrays], axis % (dy.ndim - 1) + 1
    ends = np.cumsum([s[axis - 1] for s in shapes]).tolist()
    lead = (slice(None),) * axis
    pieces = [dy[lead + (slice(a, b),)] for a, b in zip([0] + ends[:-1], ends)]
    return Cotangents(_like(p, x) for p, x in zip(pieces, arrays))


def chooser_grad(dy, a, y, axis=None, keepdims=False):
    """``runtime.chooser_grad`` (max, min): each row of ``dy`` split among the elements equal to
    the result, as the per-seed helper splits it."""
    dy, a, y = _rows(dy), _plain(a), _plain(y)
    ndim = np.ndim(a)
    if ndim == 0:
        raise Unbatched("a maximum of a number")
    yk = _expand(y, ndim, axis, keepdims)
    chosen = a == yk
    if np.isnan(yk).any():
        chosen |= np.isnan(a) & np.isnan(yk)
    if keepdims:
        dyk = dy
    elif axis is None:
        dyk = dy.reshape(dy.shape[:1] + (1,) * ndim)
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        dyk = np.expand_dims(dy, tuple(k % ndim + 1 for k in axes))
    if np.count_nonzero(chosen) * _count(np.shape(a), axis) == chosen.size:
        return dyk * chosen
    return dyk * chosen / np.maximum(np.sum(chosen, axis=axis, keepdims=True), 1)


def dot_vjp_left(dy, a, b):
    """``runtime.dot_vjp_left`` for arrays of one or two axes (``matmul_vjp_left``)."""
    if not (1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2):
        return rowwise(products.dot_vjp_left, (True, False, False), dy, a, b)
    if np.ndim(a) == 1:
        return _like(dy @ _plain(b).T if np.ndim(b) == 2 else dy[:, None] * _plain(b), a)
    return matmul_vjp_left(dy, a, b)


def dot_vjp_right(dy, a, b):
    """``runtime.dot_vjp_right`` for arrays of one or two axes (``matmul_vjp_right``)."""
    if not (1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2):
        return rowwise(products.dot_vjp_right, (True, False, False), dy, a, b)
    return matmul_vjp_right(dy, a, b)


def einsum_vjp(dy, subscripts, k, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """``runtime.einsum_vjp``: where operand ``k``'s labels are distinct and each is in the
    output or another operand at its size, one einsum with a label for the seeds; else the
    per-seed helper once per row."""
    operands = [_plain(x) for x in (x0, x1, x2, x3, x4, x5) if x is not None]
    shapes = [np.shape(x) for x in operands]
    labels, output = _einsum_labels(subscripts, shapes)
    target, others = labels[k], [j for j in range(len(operands)) if j != k]
    sizes = {c: n for j in others for c, n in zip(labels[j], shapes[j])}
    sizes.update(zip(output, _rows(dy).shape[1:]))
    if len(set(target)) != len(target) or any(sizes.get(c) != n
                                               for c, n in zip(target, shapes[k])):
        # a diagonal, a summed or a broadcast label: the per-seed helper, row by row
        args = (dy, subscripts, k, x0, x1, x2, x3, x4, x5)
        return rowwise(products.einsum_vjp, (True,) + (False,) * 8, *args)
    taken = set(output).union(*labels)
    seeds = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba"
                 if c not in taken)
    spec = ",".join([seeds + output] + [labels[j] for j in others]) + "->" + seeds + target
    return np.einsum(spec, dy, *(operands[j] for j in others))


def cumsum_grad(dy, a, axis=None):
    """``runtime.cumsum_grad``: each row summed from the other end along its axis (the rows of
    ``axis=None`` flattened first)."""
    dy = _rows(dy)
    if axis is None:
        flat = dy.reshape(len(dy), -1)
        return _like(np.flip(np.cumsum(np.flip(flat, 1), axis=1), 1), a)
    if dy.ndim == 1:
        raise Unbatched("a cumulative sum of a number")
    axis = axis % (dy.ndim - 1) + 1
    return _like(np.flip(np.cumsum(np.flip(dy, axis), axis=axis), axis), a)


def getitem(dy, index):
    """``dy[index]`` of a batched array: the same index in every row; of a list of cotangents
    at an integer: its item (batched)."""
    if type(dy) is Cotangents:
        if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
            raise Unbatched("a slice of a list")
        return dy[index]
    return _rows(dy)[_at(index)]


def _double(x):
    """Whether ``x`` is no NumPy value of a floating dtype narrower than float64 (complex128)."""
    dtype = getattr(x, "dtype", None)
    return not isinstance(dtype, np.dtype) or dtype.kind not in "fc" or dtype.itemsize >= 8 * (
        1 + (dtype.kind == "c"))


def rowwise(fn, many, *args, **kwargs):
    """``fn(*args, **kwargs)`` of a function without a batched twin (a pure helper, a NumPy
    function), called once per row with the batched arguments (``many``) read at that row: the
    per-seed call itself, while the rest of the sweep runs once for all seeds. A list of
    cotangents (``Cotangents``, each item batched or None) is read item by item, and one
    returned is stacked item by item. Rows that are numbers beside a value of less than double
    precision (a row is a NumPy scalar where the per-seed value may be a Python float, which
    NumPy promotes differently), and results that are not NumPy values (a Python float, None)
    or not alike from row to row are Unbatched."""
    arrays = [a for m, arg in zip(many, args) if m for a in _parts(arg)]
    count = len(arrays[0]) if arrays else 0
    if not arrays or any(len(a) != count for a in arrays) or (
            any(a.ndim < 2 for a in arrays) and not all(map(_double, args))):
        raise Unbatched("rows that are numbers beside a value of less than double precision")
    out = [fn(*[_row(a, i) if m else a for a, m in zip(args, many)], **kwargs)
           for i in range(count)]
    name = getattr(fn, "__name__", fn)
    if type(out[0]) is Cotangents and all(type(o) is Cotangents and len(o) == len(out[0])
                                          for o in out):
        return Cotangents(_stacked(list(items), name) for items in zip(*out))
    return _stacked(out, name)


def _parts(arg):
    """The batched arrays of a batched argument: itself, or a list of cotangents' items."""
    if type(arg) is Cotangents:
        return [_rows(a) for a in arg if a is not None]
    return [_rows(arg)]


def _row(arg, i):
    """Row ``i`` of a batched argument (of each item of a list of cotangents)."""
    if type(arg) is Cotangents:
        return Cotangents(None if a is None else a[i] for a in arg)
    return arg[i]


def _stacked(rows, name):
    """The rows of a result, stacked: each a NumPy value of one shape and dtype (all None:
    None)."""
    if all(r is None for r in rows):
        return None
    if not all(isinstance(r, (np.ndarray, np.generic)) for r in rows):
        raise Unbatched(f"a {type(rows[0]).__name__} of {name}")
    if len({(np.shape(r), r.dtype) for r in rows}) != 1:
        raise Unbatched(f"rows of {name} of different shapes or dtypes")
    return np.stack(rows)


def rows(back_many, back, value, x):
    """The Jacobian's rows: ``back_many`` (the batched sweep) over blocks of unit seeds, or, if
    it cannot run, ``back`` once per output element. Shape ``value.shape + x.shape``."""
    return rows_of(back_many, back, value, (x,), lambda g: (g,))[0]


def rows_of(back_many, back, value, xs, parts=tuple):
    """``rows`` of a sweep returning one gradient per argument of ``xs`` (``parts`` splits what
    ``back`` and ``back_many`` return into them): one Jacobian per argument."""
    for x in xs:
        jacobian_argument(x)
    # a complex output's rows from real seeds would be the real parts of the Jacobian's rows
    # (the per-seed path refuses it in unit_basis; the batched one must too)
    jacobian_argument(value)
    size, shape = int(np.size(value)), np.shape(value)
    if size > 1 and back_many is not None:
        widest = max([size] + [int(np.size(x)) for x in xs])
        block = max(1, min(size, ROWS_BYTES // (8 * widest)))
        dtype = float_dtype(value)
        try:
            blocks = []
            for lo in range(0, size, block):
                hi = min(size, lo + block)
                seeds = np.zeros((hi - lo, size), dtype=dtype)
                seeds[np.arange(hi - lo), np.arange(lo, hi)] = 1.0
                blocks.append(parts(back_many(seeds.reshape((hi - lo,) + shape))))
            return [np.reshape(b[0] if len(b) == 1 else np.concatenate(b), shape + np.shape(x))
                    for b, x in zip(zip(*blocks), xs)]
        except Unbatched:
            pass
    grads = [parts(back(unit_basis(value, i))) for i in range(size)]
    return [stack_rows([g[k] for g in grads], value, x) for k, x in enumerate(xs)]


def count(seeds):
    """The number of seeds of a batched sweep."""
    return len(seeds)


HELPERS = {"binop": binop, "matmul": matmul, "tile": tile, "add": add, "augmented": augmented,
           "check_seeds": check_seeds, "unbroadcast": unbroadcast, "unreduce": unreduce,
           "cast_like": cast_like, "as_like": as_like, "reshape_like": reshape_like,
           "getitem_grad": getitem_grad, "add_at": add_at, "copy_grad": copy_grad,
           "matmul_vjp_left": matmul_vjp_left, "matmul_vjp_right": matmul_vjp_right,
           "count": count, "elem": elem, "stack_grad": stack_grad,
           "concatenate_grad": concatenate_grad, "chooser_grad": chooser_grad,
           "dot_vjp_left": dot_vjp_left, "dot_vjp_right": dot_vjp_right, "einsum_vjp": einsum_vjp,
           "take_item": take_item, "zero_item": zero_item, "copy_array": copy_array,
           "cumsum_grad": cumsum_grad, "getitem": getitem, "rowwise": rowwise, "index": np.s_}
