"""The helpers of a batched reverse sweep (srcgrad/batched.py): the sweep of a pullback run once
for ``k`` seeds, every cotangent an array of shape ``(k,) + shape`` whose row ``i`` is the value
the sweep computes for seed ``i``.

Each helper gives, row by row, what its per-seed counterpart gives (``unbroadcast``,
``cast_like``, ``matmul_vjp_right``, Python's arithmetic between a cotangent and a primal
value); where it cannot be sure of that (a complex value, an object, an unusual rank) it raises
:class:`Unbatched`, and the Jacobian calls the per-seed ``back`` once per seed instead. Only
real values are batched: a complex cotangent is conjugated on the way in and out.

Not re-exported from ``runtime``: generated code differentiated again never calls them (a
Jacobian is differentiated through its per-seed twin).
"""

from __future__ import annotations

import operator

import numpy as np

from ..errors import SrcgradError
from .boundary import jacobian_argument, stack_rows, unit_basis
from .shapes import float_dtype

OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "**": operator.pow}
ROWS_BYTES = 2**24  # the seeds of one batched sweep hold at most this much (16 MB)


class Unbatched(SrcgradError):
    """A batched sweep met what it cannot compute row by row exactly as the per-seed one (never
    reaches the user: the Jacobian then calls the per-seed sweep)."""


def _plain(x):
    """``x``, a primal value a cotangent meets: a real number or real array, else Unbatched."""
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind in "biuf":
        return x
    raise Unbatched(type(x).__name__)


def _lift(a, ndim):
    """The batched ``a`` with axes of length one after its first, so that each row has
    ``ndim`` axes: NumPy then broadcasts each row as the per-seed value would be."""
    extra = ndim - (a.ndim - 1)
    if extra <= 0:
        return a
    return a.reshape(a.shape[:1] + (1,) * extra + a.shape[1:])


def binop(op, a, b, a_many, b_many):
    """``a <op> b`` with either operand (or both) batched (``a_many``, ``b_many``)."""
    fn = OPERATORS[op]
    if a_many and b_many:
        ndim = max(a.ndim, b.ndim) - 1
        return fn(_lift(a, ndim), _lift(b, ndim))
    if a_many:
        b = _plain(b)
        return fn(_lift(a, np.ndim(b)), b)
    a = _plain(a)
    return fn(a, _lift(b, np.ndim(a)))


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
    """The seeds of ``out``'s sweep: one row per seed, each shaped like ``out``, all real."""
    _plain(out)
    if not isinstance(seeds, np.ndarray) or seeds.shape[1:] != np.shape(out) or (
            seeds.dtype.kind != "f"):
        raise Unbatched("seeds not shaped like the output")
    return seeds


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
    if where is not True or not shape or (dy.dtype.kind != "f"):
        raise Unbatched("a masked or scalar reduction")
    if axis is not None and not keepdims:
        axes = axis if isinstance(axis, tuple) else (axis,)
        dy = np.expand_dims(dy, tuple(a % len(shape) + 1 for a in axes))
    dy = _lift(dy, len(shape))
    return np.broadcast_to(dy, dy.shape[:1] + shape)


def cast_like(g, x):
    """``runtime.cast_like``: the rows in the dtype of ``x``'s gradients, shaped like ``x``."""
    x = _plain(x)
    if g.shape[1:] != np.shape(x) or g.dtype.kind != "f":
        raise Unbatched("a gradient not shaped like its argument")
    want = x.dtype if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "f" else (
        np.dtype(np.float64))
    return g.astype(want, copy=False)


def as_like(g, x):
    """``runtime.as_like`` of an array or number ``x``: ``cast_like``."""
    return cast_like(g, x)


def reshape_like(g, x, order="C"):
    """``runtime.reshape_like``: each row with the shape of ``x``."""
    if order != "C":
        raise Unbatched("a reshape in another order")
    return np.reshape(g, g.shape[:1] + np.shape(_plain(x)))


def _basic(index):
    if isinstance(index, tuple):
        return all(_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, slice) or (
        isinstance(index, (int, np.integer)) and not isinstance(index, bool))


def getitem_grad(dy, x, index):
    """``runtime.getitem_grad`` of an array read at a basic index (integers, slices, None,
    ``...``): zeros with each row of ``dy`` written at ``index`` of its row."""
    if not _basic(index):
        raise Unbatched("an advanced index")
    g = np.zeros(dy.shape[:1] + np.shape(_plain(x)), dtype=float_dtype(dy))
    at = (slice(None),) + (index if isinstance(index, tuple) else (index,))
    g[at] = _lift(dy, g[at].ndim - 1)
    return g


def add_at(acc, index, dy, dy_many):
    """``runtime.add_at`` at a basic index: each row of ``dy`` added at ``index`` of the row of
    a copy of ``acc`` (the per-seed helper updates a buffer its sweep owns)."""
    if not _basic(index) or acc.dtype.kind != "f":
        raise Unbatched("an advanced index")
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
        raise Unbatched("matmul ranks")
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
    raise Unbatched("matmul ranks")


def rows(back_many, back, value, x):
    """The Jacobian's rows: ``back_many`` (the batched sweep) over blocks of unit seeds, or, if
    it cannot run, ``back`` once per output element. Shape ``value.shape + x.shape``."""
    jacobian_argument(x)
    size, shape = int(np.size(value)), np.shape(value)
    if size > 1 and back_many is not None:
        block = max(1, min(size, ROWS_BYTES // (8 * max(size, int(np.size(x)), 1))))
        dtype = float_dtype(value)
        try:
            parts = []
            for lo in range(0, size, block):
                hi = min(size, lo + block)
                seeds = np.zeros((hi - lo, size), dtype=dtype)
                seeds[np.arange(hi - lo), np.arange(lo, hi)] = 1.0
                parts.append(back_many(seeds.reshape((hi - lo,) + shape)))
            out = parts[0] if len(parts) == 1 else np.concatenate(parts)
            return np.reshape(out, shape + np.shape(x))
        except Unbatched:
            pass
    return stack_rows([back(unit_basis(value, i)) for i in range(size)], value, x)


def count(seeds):
    """The number of seeds of a batched sweep."""
    return len(seeds)


HELPERS = {"binop": binop, "tile": tile, "add": add, "augmented": augmented,
           "check_seeds": check_seeds, "unbroadcast": unbroadcast, "unreduce": unreduce,
           "cast_like": cast_like, "as_like": as_like, "reshape_like": reshape_like,
           "getitem_grad": getitem_grad, "add_at": add_at, "copy_grad": copy_grad,
           "matmul_vjp_left": matmul_vjp_left, "matmul_vjp_right": matmul_vjp_right,
           "count": count}
