"""Adjoints and tangents of NumPy functions that copy, join, split, pad or reorder elements
(``take``, ``tile``, ``pad``, ``concatenate``, ``split``, ``diagonal``, ``sort``, ``diff``, ...),
and a few elementwise helpers (``astype`` as a function, the mask of ``clip``, the derivative of
``sinc``).

An adjoint takes the cotangent ``dy`` first and returns a contribution shaped like the operand it
is named after; functions that only copy elements share one scatter (``select_grad``), so repeated
copies accumulate.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedCaseError
from .containers import Cotangents
from .shapes import _float_array, _like, as_array, by_source, float_dtype, is_duck, reshape_like


def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``x.astype(dtype)``: as a function, so it can carry a rule."""
    if is_duck(x):
        return x.astype(dtype, casting=casting, copy=copy)
    return np.asarray(x).astype(dtype, order=order, casting=casting, subok=subok, copy=copy)


def discrete(dtype):
    """Whether values cast to ``dtype`` (an integer, a boolean) lose their gradient."""
    return not np.issubdtype(np.dtype(dtype), np.inexact)


def cast_grad(g, x, dtype):
    """The adjoint of ``astype(x, dtype)`` applied to ``g``: zero through an integer or boolean
    cast, else ``g`` in x's floating type."""
    if discrete(dtype):
        return np.zeros(np.shape(x), dtype=float_dtype(x))
    target = float_dtype(x)
    if np.iscomplexobj(g) and np.dtype(target).kind != "c":
        g = np.real(g)  # a real x through a complex cast: the real part, without a ComplexWarning
    return astype(g, target)


def cast_tangent(t, dtype):
    """The tangent of ``astype(x, dtype)`` along ``t``: zero through an integer or boolean cast."""
    if discrete(dtype):
        return np.zeros(np.shape(t), dtype=float_dtype(t))
    return astype(t, dtype)


def between(a, lo, hi):
    """1.0 where ``lo <= a <= hi`` (a bound of None is no bound), else 0.0: the mask of clip."""
    inside = np.ones(np.shape(a), dtype=bool)
    if lo is not None:
        inside = inside & (a >= lo)
    if hi is not None:
        inside = inside & (a <= hi)
    return inside.astype(float_dtype(a))


def clipped_low(a, lo, hi):
    """1.0 where ``np.clip(a, lo, hi)`` is ``lo`` (``a < lo``, and ``lo <= hi``: NumPy's clip is
    ``minimum(maximum(a, lo), hi)``, so a lower bound above the upper one gives the upper)."""
    low = np.zeros(np.shape(a), dtype=bool) | (a < lo)
    if hi is not None:
        low = low & (lo <= hi)
    return low.astype(float_dtype(a))


def clipped_high(a, lo, hi):
    """1.0 where ``np.clip(a, lo, hi)`` is ``hi``: ``maximum(a, lo) > hi``."""
    high = np.zeros(np.shape(a), dtype=bool) | ((a if lo is None else np.maximum(a, lo)) > hi)
    return high.astype(float_dtype(a))


_SINC_SERIES_BELOW = 1.0  # |x| below which the n-th derivative of sinc is read off its series


def _sinc_series(x, n):
    """``d^n/dx^n sinc(x)`` from ``sinc(x) = sum_m (-1)^m (pi x)^(2m) / (2m+1)!`` (|x| <= 1)."""
    total = np.zeros(np.shape(x), float_dtype(x))
    first = (n + 1) // 2
    for m in range(first, first + 24 + n):
        # d^n x^(2m) = (2m)! / (2m-n)! x^(2m-n), and (2m)! / (2m+1)! = 1 / (2m+1)
        coef = (-1) ** m * math.pi ** (2 * m) / ((2 * m + 1) * math.factorial(2 * m - n))
        total = total + coef * x ** (2 * m - n)
    return total


def sinc_nth(x, n):
    """The ``n``-th derivative of ``np.sinc`` at ``x`` (n >= 1), exact at 0 and near it.

    Near 0 (``|x| < 1``) from the power series, elsewhere from the recurrence that Leibniz's rule
    gives for ``x sinc(x) = sin(pi x) / pi``:
    ``x f^(k) + k f^(k-1) = pi^(k-1) sin(pi x + k pi / 2)``.
    """
    x = _float_array(x)
    small = np.abs(x) < _SINC_SERIES_BELOW
    near = np.where(small, x, 0.0)
    far = np.where(small, 1.0, x)
    d = np.sinc(far)
    for k in range(1, n + 1):
        d = (math.pi ** (k - 1) * np.sin(math.pi * far + k * math.pi / 2) - k * d) / far
    return np.where(small, _sinc_series(near, n), d)


def diagonal_grad(dy, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.diagonal``: ``dy`` written onto that diagonal of zeros."""
    n = np.shape(dy)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    if is_duck(dy):
        # an array that is not written into (a lazy Dask array): a product with the one-hot
        # matrices of the diagonal's positions
        shape = np.shape(a)
        onehot = np.zeros((n, shape[axis1], shape[axis2]), dtype=float_dtype(dy))
        onehot[np.arange(n), rows, cols] = 1.0
        product = np.tensordot(dy, onehot, axes=([np.ndim(dy) - 1], [0]))
        return np.moveaxis(product, (-2, -1), (axis1 % len(shape), axis2 % len(shape)))
    g = np.zeros(np.shape(a), dtype=float_dtype(dy))
    view = np.moveaxis(g, (axis1, axis2), (-2, -1))
    view[..., rows, cols] = dy
    return g


def trace_grad(dy, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.trace``: ``dy`` on every element of the diagonal."""
    n = np.diagonal(a, offset, axis1, axis2).shape[-1]
    dy = as_array(dy)
    return diagonal_grad(np.broadcast_to(dy[..., None], dy.shape + (n,)), a, offset, axis1, axis2)


def diag_grad(dy, v, k=0):
    """The adjoint of ``np.diag``: extract the diagonal, or place it, whichever ``diag`` did not."""
    if np.ndim(v) == 1:
        return np.diag(dy, k)
    return diagonal_grad(dy, v, k)


def _scatter(dy, x, positions):
    """Sum ``dy`` into the positions of ``x``'s elements it was copied from (-1: from none)."""
    positions = np.ravel(positions)
    # an array of another library is computed here: np.bincount has no lazy (Dask) form
    d = np.ravel(_float_array(np.asarray(dy) if is_duck(dy) else dy))
    keep = positions >= 0
    size = int(np.prod(np.shape(x)))
    g = np.bincount(positions[keep], weights=np.real(d[keep]), minlength=size)
    if np.iscomplexobj(d):  # np.bincount sums real weights only
        g = g + 1j * np.bincount(positions[keep], weights=np.imag(d[keep]), minlength=size)
    return _like(g, x)


def select_grad(dy, x, fn, *args, **kwargs):
    """The adjoint of a function that only copies elements of ``x`` (take, tile, repeat, ...).

    ``fn`` is applied to the positions of x's elements; each element of ``dy`` is then added back
    to the position it was copied from, so repeated copies accumulate.
    """
    positions = np.arange(int(np.prod(np.shape(x)))).reshape(np.shape(x))
    return _scatter(dy, x, fn(positions, *args, **kwargs))


PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def pad_grad(dy, array, pad_width, mode="constant"):
    """The adjoint of ``np.pad`` for the modes that copy elements."""
    if mode not in PAD_MODES:
        raise UnsupportedCaseError(
            f"srcgrad differentiates np.pad with mode in {PAD_MODES}; got mode={mode!r}"
        )
    positions = np.arange(int(np.prod(np.shape(array)))).reshape(np.shape(array))
    if mode in ("constant", "empty"):
        padded = np.pad(positions, pad_width, mode="constant", constant_values=-1)
    else:
        padded = np.pad(positions, pad_width, mode=mode)
    return _scatter(dy, array, padded)


def _split_back(dy, arrays, shapes, axis):
    ends = np.cumsum([s[axis] for s in shapes]).tolist()
    lead = (slice(None),) * (axis % np.ndim(dy))
    # slices, not np.split (which Dask does not implement): views of dy, as np.split's are
    pieces = [dy[lead + (slice(a, b),)] for a, b in zip([0] + ends[:-1], ends)]
    return Cotangents(_like(p, x) for p, x in zip(pieces, arrays))


def concatenate_grad(dy, arrays, axis=0):
    """The adjoint of ``np.concatenate``: ``dy`` cut into one piece per array."""
    if axis is None:
        return _split_back(np.ravel(dy), arrays, [(math.prod(np.shape(x)),) for x in arrays], 0)
    return _split_back(dy, arrays, [np.shape(x) for x in arrays], axis)


def stack_grad(dy, arrays, axis=0):
    """The adjoint of ``np.stack``: ``dy`` taken apart along the new axis."""
    return Cotangents(_like(np.take(dy, i, axis=axis), x) for i, x in enumerate(arrays))


def hstack_grad(dy, arrays):
    """The adjoint of ``np.hstack``."""
    shapes = [np.shape(np.atleast_1d(x)) for x in arrays]
    return _split_back(dy, arrays, shapes, 0 if len(shapes[0]) == 1 else 1)


def vstack_grad(dy, arrays):
    """The adjoint of ``np.vstack``."""
    return _split_back(dy, arrays, [np.shape(np.atleast_2d(x)) for x in arrays], 0)


def dstack_grad(dy, arrays):
    """The adjoint of ``np.dstack``."""
    return _split_back(dy, arrays, [np.shape(np.atleast_3d(x)) for x in arrays], 2)


def column_stack_grad(dy, arrays):
    """The adjoint of ``np.column_stack``: 1-d arrays were columns."""
    shapes = [np.shape(x) if np.ndim(x) > 1 else (math.prod(np.shape(x)), 1) for x in arrays]
    return _split_back(dy, arrays, shapes, 1)


def split_grad(dy, ary, indices_or_sections, axis=0):
    """The adjoint of ``np.split`` / ``np.array_split``: the pieces' cotangents put back together.

    ``dy`` holds one cotangent per piece, None for a piece that carries no gradient.
    """
    positions = np.arange(int(np.prod(np.shape(ary)))).reshape(np.shape(ary))
    pieces = np.array_split(positions, indices_or_sections, axis=axis)
    g = np.zeros(np.shape(ary), dtype=float_dtype(*[d for d in dy if d is not None] or [0.0]))
    for piece, d in zip(pieces, dy):
        if d is not None:
            g.flat[np.ravel(piece)] += np.ravel(d)
    return _like(g, ary)


def hsplit_grad(dy, ary, indices_or_sections):
    """The adjoint of ``np.hsplit``: split along axis 1, or 0 for a 1-d array."""
    return split_grad(dy, ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0)


def diff_grad(dy, a, n=1, axis=-1):
    """The adjoint of ``np.diff``: ``-diff`` of ``dy`` padded with a zero at both ends, n times."""
    pad = [(0, 0)] * np.ndim(dy)
    pad[axis] = (1, 1)
    for _ in range(n):
        dy = -np.diff(np.pad(dy, pad), axis=axis)
    return dy


def _diff_pieces(a, axis, prepend, append):
    """The shapes of the pieces ``np.diff`` joins along ``axis`` before differencing, in order
    (prepend, a, append): a number is broadcast to ``a``'s shape with one element along ``axis``
    (as NumPy does); None for a piece not given."""
    shapes = []
    for value in (prepend, a, append):
        if value is None:
            shapes.append(None)
        elif np.ndim(value) == 0:
            shape = list(np.shape(a))
            shape[axis] = 1
            shapes.append(tuple(shape))
        else:
            shapes.append(np.shape(value))
    return shapes


def diff_part_grad(dy, a, n=1, axis=-1, prepend=None, append=None, part=1):
    """The adjoint of ``np.diff(a, n, axis, prepend=prepend, append=append)`` with respect to
    piece ``part`` (0 prepend, 1 a, 2 append): the adjoint of the difference of the joined array,
    the piece's slice of it, summed back to a number where the piece is one."""
    shapes = _diff_pieces(a, axis, prepend, append)
    full = diff_grad(dy, None, n=n, axis=axis)
    start = sum(s[axis] for s in shapes[:part] if s is not None)
    index = [slice(None)] * np.ndim(full)
    index[axis] = slice(start, start + shapes[part][axis])
    piece = full[tuple(index)]
    value = (prepend, a, append)[part]
    return np.sum(piece) if np.ndim(value) == 0 else piece


def diff_part_tangent(t, a, n=1, axis=-1, prepend=None, append=None, part=1):
    """The tangent of ``np.diff(a, n, axis, prepend=prepend, append=append)`` from piece ``part``
    alone: the difference of the joined pieces with ``t`` in that piece's place and zeros in the
    others (the adjoint of ``diff_part_grad``)."""
    pieces = []
    for k, shape in enumerate(_diff_pieces(a, axis, prepend, append)):
        if shape is not None:
            pieces.append(np.broadcast_to(t, shape) if k == part else np.zeros(shape))
    return np.diff(np.concatenate(pieces, axis=axis), n=n, axis=axis)


def leading_ones(v, ndim):
    """``v`` reshaped to ``ndim`` dimensions by leading axes of length 1 (NumPy's ``ndmin``, as
    ``np.logspace`` makes its arguments before it inserts the samples' axis)."""
    return np.reshape(v, (1,) * (ndim - np.ndim(v)) + np.shape(v))


@by_source
def vander_slope(x, N=None, increasing=False):
    """The derivative of each column of ``np.vander(x, N, increasing)`` in ``x``: ``k x^(k-1)``
    for the column of power ``k`` (exactly 0 for the constant column, 1 for the linear one).
    Plain NumPy code marked ``by_source``: its derivatives are those of this code."""
    n = np.size(x) if N is None else N
    if n <= 1:
        return np.zeros((np.size(x), n))
    powers = np.vander(x, n - 1, increasing=True) * np.arange(1.0, n)
    slope = np.concatenate((np.zeros((np.size(x), 1)), powers), axis=1)
    return slope if increasing else np.flip(slope, axis=1)


@by_source
def ediff1d_grad(dy, ary, to_end=None, to_begin=None, part=1):
    """The adjoint of ``np.ediff1d(ary, to_end, to_begin)`` (``to_begin``, the differences of
    the flattened ``ary``, ``to_end``, joined) with respect to ``to_begin`` (part 0), ``ary``
    (1) or ``to_end`` (2). Plain NumPy code marked ``by_source``."""
    first = 0 if to_begin is None else np.size(to_begin)
    last = np.size(dy) - (0 if to_end is None else np.size(to_end))
    if part == 0:
        return reshape_like(dy[:first], to_begin)
    if part == 2:
        return reshape_like(dy[last:], to_end)
    return reshape_like(diff_grad(dy[first:last], np.ravel(ary)), ary)


def permutation_grad(dy, a, y, axis=-1):
    """The adjoint of a function that reorders ``a`` along ``axis`` into ``y`` (sort, partition).

    The i-th smallest element of ``y`` came from the i-th smallest element of ``a``.
    """
    if axis is None:
        return _like(permutation_grad(np.ravel(dy), np.ravel(a), np.ravel(y), 0), a)
    source = np.argsort(a, axis=axis, kind="stable")
    target = np.argsort(y, axis=axis, kind="stable")
    g = np.zeros(np.shape(a), dtype=float_dtype(dy))
    np.put_along_axis(g, source, np.take_along_axis(as_array(dy), target, axis=axis), axis)
    return g


def linspace_grad(dy, num=50, endpoint=True, axis=0, start=True):
    """The adjoint of ``np.linspace`` for ``start`` (or ``stop`` with start=False)."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    w = 1.0 - t if start else t
    shape = [1] * np.ndim(dy)
    shape[axis] = num
    return np.sum(dy * w.reshape(shape), axis=axis)


def stack_cotangents(dy, x, axis=0):
    """The adjoint of ``np.unstack``: the pieces' cotangents stacked again (None: zeros)."""
    pieces = [np.zeros(np.shape(np.take(x, 0, axis=axis))) if d is None else d for d in dy]
    return np.stack(pieces, axis=axis)


def permute_like(da, a, y, axis=-1):
    """The tangent of a reordering of ``a`` into ``y`` (sort, partition): ``da`` reordered alike."""
    if axis is None:
        return permute_like(np.ravel(da), np.ravel(a), np.ravel(y), 0)
    source = np.argsort(a, axis=axis, kind="stable")
    target = np.argsort(y, axis=axis, kind="stable")
    t = np.zeros(np.shape(y), dtype=float_dtype(da))
    np.put_along_axis(t, target, np.take_along_axis(as_array(da), source, axis=axis), axis)
    return t
