"""Adjoints and tangents of NumPy reductions and scans: ``prod``, ``max``/``min`` and
``ptp``, ``var``, ``cumsum``/``cumprod``, ``average``, ``quantile`` (``sum`` and ``mean`` are in
``shapes``).

Each adjoint takes the cotangent ``dy`` first and returns a contribution with the shape of the
operand it is named after; a Python scalar operand gets a Python float back. Products and
cumulative products are exact at zeros; ties of ``max``/``min`` split the gradient equally.
"""

from __future__ import annotations

import numpy as np

from .shapes import (
    _axes,
    _count,
    _expand,
    _float_array,
    _last,
    _like,
    as_array,
    by_source,
    is_duck,
    mean_grad,
    unbroadcast,
)


def prod_grad(dy, a, axis=None, keepdims=False):
    """The adjoint of a product: ``dy`` times the product of the other factors (exact at zeros)."""
    if np.ndim(a) == 0:
        return _like(dy, a)
    merged, back = _last(_float_array(a), axis)
    ones = np.ones(merged.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, merged[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, merged[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return back(before * after) * _expand(dy, np.ndim(a), axis, keepdims)


def chooser_grad(dy, a, y, axis=None, keepdims=False):
    """The adjoint of max/min: ``dy`` split equally among the elements equal to the result ``y``."""
    if np.ndim(a) == 0:
        return _like(dy, a)
    ndim = np.ndim(a)
    yk = _expand(y, ndim, axis, keepdims)
    chosen = a == yk
    dyk = _expand(dy, ndim, axis, keepdims)
    if is_duck(chosen):
        # a lazy array: no data-dependent test may force its computation
        chosen = chosen | (np.isnan(a) & np.isnan(yk))
        return dyk * chosen / np.maximum(np.sum(chosen, axis=axis, keepdims=True), 1)
    if np.isnan(yk).any():
        chosen |= np.isnan(a) & np.isnan(yk)  # a NaN maximum chose the NaNs
    # Every reduced slice holds its own maximum, so one chosen element per slice in all means
    # no ties anywhere: nothing to split (a whole-array count is much cheaper than per slice).
    if np.count_nonzero(chosen) * _count(np.shape(a), axis) == chosen.size:
        return dyk * chosen
    count = np.sum(chosen, axis=axis, keepdims=True)
    return dyk * chosen / np.maximum(count, 1)


def ptp_grad(dy, a, axis=None, keepdims=False):
    """The adjoint of ``np.ptp``: ``dy`` to the maxima, ``-dy`` to the minima."""
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return chooser_grad(dy, a, hi, axis, keepdims) - chooser_grad(dy, a, lo, axis, keepdims)


def var_grad(dy, a, axis=None, ddof=0, keepdims=False):
    """The adjoint of ``np.var``: ``2 dy (a - mean) / (N - ddof)``."""
    if np.ndim(a) == 0:
        return _like(0.0 * dy, a)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    n = _count(np.shape(a), axis)
    return _expand(dy, np.ndim(a), axis, keepdims) * 2.0 * centered / (n - ddof)


def cumsum_grad(dy, a, axis=None):
    """The adjoint of a cumulative sum: a cumulative sum from the other end."""
    if axis is None:
        flat = np.ravel(dy)
        return _like(np.cumsum(flat[::-1])[::-1], a)
    # a number's cumulative sum along an axis has one element: the gradient is a number again
    return _like(np.flip(np.cumsum(np.flip(dy, axis), axis=axis), axis), a)


def cumprod_grad(dy, a, axis=None):
    """The adjoint of a cumulative product, exact when ``a`` has zeros.

    With ``P_j`` the product of the elements before ``j``, ``grad_j = P_j * S_j`` where
    ``S_j = dy_j + a_(j+1) * S_(j+1)`` runs backwards along the axis.
    """
    if axis is None:
        return _like(cumprod_grad(np.ravel(dy), np.ravel(a), 0), a)
    a0 = np.moveaxis(_float_array(a), axis, 0)
    d0 = np.moveaxis(_float_array(dy), axis, 0)
    # the rows stacked, not written into a buffer: a lazy (Dask) array cannot be written into
    rows = [d0[-1]]
    for j in range(len(a0) - 2, -1, -1):
        rows.append(d0[j] + a0[j + 1] * rows[-1])
    s = np.stack(rows[::-1])
    before = np.cumprod(np.concatenate([np.ones_like(a0[:1]), a0[:-1]]), axis=0)
    return np.moveaxis(before * s, 0, axis)


def average_layout(a, axis, weights, keepdims):
    """``(shape, kept)`` for ``np.average(a, axis, weights)``: the shape that lines the weights
    up with ``a`` (1-d weights along ``axis``) and the result's shape with the reduced axes kept
    as size 1. No derivative."""
    ndim, wshape = np.ndim(a), np.shape(weights)
    shape = wshape
    if wshape != np.shape(a):
        shape = [1] * ndim
        shape[axis] = wshape[0]
    reduced = _axes(axis, ndim)
    kept = tuple(1 if i in reduced else n for i, n in enumerate(np.shape(a)))
    return tuple(shape), kept


# The helpers of np.average are plain NumPy code marked ``by_source``: their derivatives (in the
# weights too) are derivatives of this code, at every order.


@by_source
def average_grad(dy, a, axis=None, weights=None, keepdims=False):
    """The adjoint of ``np.average`` with respect to ``a``: ``dy w / sum(w)``."""
    if weights is None:
        return mean_grad(dy, a, axis, keepdims)
    shape, kept = average_layout(a, axis, weights, keepdims)
    w = np.reshape(weights, shape)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    return np.reshape(dy, kept) * w / total


@by_source
def average_weights_grad(dy, a, y, axis=None, weights=None, keepdims=False):
    """The adjoint of ``np.average`` with respect to ``weights``: ``dy (a - y) / sum(w)``."""
    shape, kept = average_layout(a, axis, weights, keepdims)
    w = np.reshape(weights, shape)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    g = np.reshape(dy, kept) * (a - np.reshape(y, kept)) / total
    return np.reshape(unbroadcast(g, w), np.shape(weights))


def _ranks(q, n, method):
    """``(lo, hi, frac)``: ``np.quantile(a, q, method=method)`` of ``n`` values is
    ``(1 - frac) * s[lo] + frac * s[hi]`` of the sorted values ``s``, for every method NumPy has
    (each picks two neighbouring ranks and a weight that depend on ``q`` and ``n`` only). Read
    off NumPy for the other methods: the quantile of ``0, 1, ..., n - 1`` is ``lo + frac``."""
    q = np.asarray(q, dtype=float)
    if method == "linear":
        pos = q * (n - 1)
    else:
        pos = np.asarray(np.quantile(np.arange(n, dtype=float), q, method=method), dtype=float)
    lo = np.minimum(np.floor(pos).astype(int), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    return lo, hi, pos - lo


def quantile_grad(dy, a, q, axis=None, keepdims=False, method="linear"):
    """The adjoint of ``np.quantile`` (the interpolation ``method`` uses between two ranks)."""
    merged, back = _last(a, axis)
    n = merged.shape[-1]
    order = np.argsort(merged, axis=-1, kind="stable")
    q = np.asarray(q, dtype=float)
    g = np.zeros(q.shape + merged.shape)
    lo, hi, frac = _ranks(q, n, method)
    dq = as_array(dy)
    if keepdims:
        reduced = _axes(axis, np.ndim(a))
        dq = np.squeeze(dq, axis=tuple(q.ndim + r for r in reduced))
    for qi in np.ndindex(q.shape):
        d = dq[qi]
        for rank, weight in ((lo[qi], 1.0 - frac[qi]), (hi[qi], frac[qi])):
            src = order[..., rank : rank + 1]
            np.put_along_axis(
                g[qi], src, np.take_along_axis(g[qi], src, -1) + (d * weight)[..., None], -1
            )
    return _like(np.sum([back(gq) for gq in g.reshape((-1,) + merged.shape)], axis=0), a)


def reduce_jvp(partials, dx, axis=None, keepdims=False):
    """The tangent of a reduction whose partial derivatives are ``partials``."""
    return np.sum(partials * dx, axis=axis, keepdims=keepdims)


def cumprod_jvp(a, da, axis=None):
    """The tangent of a cumulative product, exact when ``a`` has zeros."""
    if axis is None:
        return cumprod_jvp(np.ravel(a), np.ravel(da), 0)
    a0 = np.moveaxis(_float_array(a), axis, 0)
    d0 = np.moveaxis(_float_array(da), axis, 0)
    y = np.cumprod(a0, axis=0)
    t = np.empty_like(d0)
    t[0] = d0[0]
    for i in range(1, len(a0)):
        t[i] = t[i - 1] * a0[i] + y[i - 1] * d0[i]
    return np.moveaxis(t, 0, axis)


def quantile_jvp(a, da, q, axis=None, keepdims=False, method="linear"):
    """The tangent of ``np.quantile``: the same interpolation of the tangents of the two ranks."""
    merged, _ = _last(a, axis)
    dmerged, _ = _last(da, axis)
    n = merged.shape[-1]
    order = np.argsort(merged, axis=-1, kind="stable")
    ranked = np.take_along_axis(dmerged, order, axis=-1)
    lo, hi, frac = _ranks(q, n, method)
    t = np.moveaxis(ranked[..., lo] * (1 - frac) + ranked[..., hi] * frac, range(-np.ndim(q), 0),
                    range(np.ndim(q)))
    if keepdims:
        reduced = _axes(axis, np.ndim(a))
        t = np.expand_dims(t, tuple(np.ndim(q) + r for r in reduced))
    return t


@by_source
def average_weights_jvp(a, y, dweights, axis=None, weights=None, keepdims=False):
    """The tangent of ``np.average`` from its weights: ``sum((a - y) dw) / sum(w)``."""
    shape, kept = average_layout(a, axis, weights, keepdims)
    w = np.reshape(weights, shape)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=keepdims)
    centered = a - np.reshape(y, kept)
    return np.sum(centered * np.reshape(dweights, shape), axis=axis, keepdims=keepdims) / total
