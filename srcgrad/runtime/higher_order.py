"""Helpers that the rules of the runtime helpers call (``rules/helper_rules.py`` passes them via
``namespace=``), for derivatives of generated code: second order and beyond.

A runtime helper such as ``prod_grad(dy, a)`` is linear in its cotangent ``dy``, so most of its own
rules are other helpers applied to a different cotangent. What does not fit in a one-line template
lives here: the derivative of a helper with respect to the primal values it reads (the Hessian of
``prod`` and ``cumprod``, exact at zeros; the partials of a norm's gradient), and the adjoints of
helpers that scatter (``select_grad``, ``pad_grad``) or take a list of cotangents apart
(``concatenate_grad``, ``split_grad``).

Naming: ``<helper>_tangent`` is the derivative of ``<helper>`` in a primal argument along a
direction; ``<helper>_partner`` the adjoint of a bilinear helper in the operand it does not
differentiate; ``..._adjoint`` / ``gather`` / ``join`` the adjoint in the cotangent argument.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCaseError
from .arrays import (
    PAD_MODES,
    column_stack_grad,
    concatenate_grad,
    dstack_grad,
    hstack_grad,
    select_grad,
    stack_grad,
    vstack_grad,
)
from .containers import Cotangents, zeros_like
from .linalg import svd_jvp, svd_vjp
from .products import convolve_vjp, correlate_vjp, cross_vjp, einsum_jvp, einsum_vjp, kron_vjp
from .reductions import cumprod_jvp
from .shapes import (
    _axes,
    _float_array,
    as_array,
    broadcast_like,
    by_source,
    float_dtype,
    mT,
)

# --- reductions -----------------------------------------------------------------------------


def prod_layout(a, axis, keepdims):
    """How :func:`prod_grad_tangent` lays out ``a``: ``(order, merged, moved, inverse, kept)``
    -- the transposition that moves the reduced axes last, the shape with those merged into one,
    the transposed shape, the transposition back, and the product's shape with the reduced axes
    kept as size 1. No derivative."""
    shape = np.shape(a)
    reduced = _axes(axis, len(shape))
    order = [i for i in range(len(shape)) if i not in reduced] + list(reduced)
    moved = tuple(shape[i] for i in order)
    merged = moved[: len(shape) - len(reduced)] + (-1,)
    kept = tuple(1 if i in reduced else n for i, n in enumerate(shape))
    return tuple(order), merged, moved, tuple(np.argsort(order).tolist()), kept


@by_source
def prod_grad_tangent(g, a, t, axis=None, keepdims=False):
    """The derivative of ``prod_grad(g, a)`` in ``a`` along ``t``: ``g`` times the tangent of the
    products of the other factors. Exact where ``a`` has zeros (no division).

    The Hessian of a product is symmetric and ``g`` is constant along the reduced axes, so this is
    also the adjoint of that derivative applied to a cotangent ``t``. Plain NumPy code marked
    ``by_source``: its own derivatives are derivatives of this code (every order).
    """
    if np.ndim(a) == 0:
        return 0.0 * t
    order, merged_shape, moved, inverse, kept = prod_layout(a, axis, keepdims)
    merged = np.reshape(np.transpose(a, order), merged_shape)
    dmerged = np.reshape(np.transpose(np.broadcast_to(t, np.shape(a)), order), merged_shape)
    ones = np.ones(np.shape(merged)[:-1] + (1,), float_dtype(a, t))
    zeros = np.zeros(np.shape(merged)[:-1] + (1,), float_dtype(a, t))
    lead = np.concatenate([ones, merged[..., :-1]], axis=-1)
    dlead = np.concatenate([zeros, dmerged[..., :-1]], axis=-1)
    trail = np.concatenate([ones, merged[..., :0:-1]], axis=-1)
    dtrail = np.concatenate([zeros, dmerged[..., :0:-1]], axis=-1)
    before = np.cumprod(lead, axis=-1)
    after = np.cumprod(trail, axis=-1)[..., ::-1]
    dbefore = cumprod_jvp(lead, dlead, -1)
    dafter = cumprod_jvp(trail, dtrail, -1)[..., ::-1]
    both = np.transpose(np.reshape(dbefore * after + before * dafter, moved), inverse)
    return both * np.reshape(g, kept)


def row_shape(*values):
    """The broadcast shape of ``values`` without its first axis. No derivative."""
    return np.broadcast_shapes(*(np.shape(v) for v in values))[1:]


@by_source
def cumprod_second(a, t, v, axis=None):
    """The second derivative of ``np.cumprod(a, axis)`` along ``t`` and ``v``, exact at zeros.

    From ``T_i = T_(i-1) a_i + y_(i-1) t_i`` (the tangent), ``S_i = S_(i-1) a_i + T_(i-1) v_i +
    V_(i-1) t_i`` where ``V`` is the tangent along ``v``. Plain NumPy code marked ``by_source``.
    """
    ax = 0 if axis is None else axis
    if axis is None:
        a = np.ravel(a)
        t = np.ravel(t)
        v = np.ravel(v)
    a0 = np.moveaxis(a, ax, 0)
    t0 = np.moveaxis(t, ax, 0)
    v0 = np.moveaxis(v, ax, 0)
    tt = cumprod_jvp(a0, t0, 0)
    vv = cumprod_jvp(a0, v0, 0)
    rows = [np.zeros(row_shape(a0, t0, v0), float_dtype(a0, t0, v0))]
    for i in range(1, len(a0)):
        rows.append(rows[i - 1] * a0[i] + tt[i - 1] * v0[i] + vv[i - 1] * t0[i])
    return np.moveaxis(np.stack(rows), 0, ax)


@by_source
def cumprod_hvp(g, a, v, axis=None):
    """``sum_i g_i d2y_i/da da . v`` for ``y = np.cumprod(a, axis)``: the derivative of
    ``cumprod_grad(g, a)`` in ``a`` along ``v`` and, the Hessian being symmetric, its adjoint.

    The adjoint, in ``t``, of the recurrences of :func:`cumprod_second`, run backwards with
    ``S_(i-1) = g_(i-1) + a_i S_i`` (the cotangent of the products) and ``B_(i-1) = v_i S_i +
    a_i B_i`` (of their tangents); exact at zeros. Plain NumPy code marked ``by_source``.
    """
    ax = 0 if axis is None else axis
    flat = a
    if axis is None:
        g = np.ravel(g)
        flat = np.ravel(a)
        v = np.ravel(v)
    g0 = np.moveaxis(g, ax, 0)
    a0 = np.moveaxis(flat, ax, 0)
    v0 = np.moveaxis(v, ax, 0)
    y = np.cumprod(a0, axis=0)
    vv = cumprod_jvp(a0, v0, 0)
    n = len(a0)
    zero = np.zeros(row_shape(g0, a0, v0), float_dtype(g0, a0, v0))
    s = g0[n - 1] + zero
    b = zero
    rows = []
    for i in range(n - 1, 0, -1):
        rows.append(vv[i - 1] * s + y[i - 1] * b)
        s_before = g0[i - 1] + a0[i] * s
        b = v0[i] * s + a0[i] * b
        s = s_before
    rows.append(b)
    out = np.moveaxis(np.stack(rows)[::-1], 0, ax)
    if axis is None:
        return np.reshape(out, np.shape(a))
    return out


# --- norms ----------------------------------------------------------------------------------


def _norm_case(x, ord, axis, kind):
    """How ``norm_grad`` (kind "norm"), ``vector_norm_grad`` ("vector") or ``matrix_norm_grad``
    ("matrix") treat their input: ("scalar" | "vector" | "matrix", ord, axis)."""
    if kind == "matrix":
        return "matrix", ord, (-2, -1)
    if kind == "vector":
        return "vector", ord, axis
    if np.ndim(x) == 0:
        return "scalar", ord, axis
    if isinstance(axis, int):
        axis = (axis,)
    if axis is None and ord is not None and np.ndim(x) == 2:
        axis = (0, 1)
    if axis is not None and len(axis) == 2:
        return "matrix", ord, axis
    if axis is None and ord not in (None, 2):
        axis = (0,)
    return "vector", ord, axis


def singular_layout(x, ord, axis, keepdims, kind):
    """For the matrix norms of singular values (ord ``'nuc'``, 2, -2), whose gradient
    ``norm_grad(g, x)`` is ``g * U diag(e) V^T`` (``e`` all ones for ``'nuc'``, picking the
    largest or the smallest singular value for 2 and -2): ``(rows, cols, shape, e)`` -- the
    matrix axes of ``x``, the shape that puts ``g`` in line with ``x`` and ``e``. None for every
    other norm (their gradient is elementwise in ``x``). No derivative."""
    case, p, axes = _norm_case(x, ord, axis, kind)
    if case != "matrix" or p not in ("nuc", 2, -2):
        return None
    ndim = np.ndim(x)
    rows, cols = (a % ndim for a in axes)
    shape = tuple(1 if i in (rows, cols) else n for i, n in enumerate(np.shape(x)))
    k = min(np.shape(x)[rows], np.shape(x)[cols])
    e = np.ones(k) if p == "nuc" else np.eye(k)[0 if p == 2 else k - 1]
    return rows, cols, shape, e


@by_source
def singular_norm_vjp(w, g, x, ord=None, axis=None, keepdims=False, kind="norm"):
    """The adjoint of ``x -> norm_grad(g, x, nrm)`` applied to ``w`` for the norms of
    ``singular_layout``: the adjoint of ``np.linalg.svd`` for the cotangents of ``U diag(e) V^T``
    (distinct nonzero singular values). Plain NumPy code marked ``by_source``."""
    rows, cols, shape, e = singular_layout(x, ord, axis, keepdims, kind)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    z = np.moveaxis(np.reshape(g, shape) * w, (rows, cols), (-2, -1))
    u, s, vt = np.linalg.svd(xm, full_matrices=False)
    du = (z @ mT(vt)) * e
    dvt = np.reshape(e, (-1, 1)) * (mT(u) @ z)
    gx = svd_vjp((du, None, dvt), (u, s, vt), xm, full_matrices=False)
    return np.moveaxis(gx, (-2, -1), (rows, cols))


@by_source
def singular_norm_jvp(t, g, x, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``x -> norm_grad(g, x, nrm)`` along ``t`` for the norms of
    ``singular_layout``, by the tangent of ``np.linalg.svd``. Plain NumPy code, ``by_source``."""
    rows, cols, shape, e = singular_layout(x, ord, axis, keepdims, kind)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    tm = np.moveaxis(t, (rows, cols), (-2, -1))
    u, s, vt = np.linalg.svd(xm, full_matrices=False)
    du, _, dvt = svd_jvp((u, s, vt), xm, tm, full_matrices=False)
    dm = (du * e) @ vt + (u * e) @ dvt
    return np.reshape(g, shape) * np.moveaxis(dm, (-2, -1), (rows, cols))


def norm_power(x, ord, axis, keepdims, kind):
    """``(p, shape)`` for the partials of ``norm_grad``: the vector norm's power ``p`` (0 where
    the gradient is piecewise constant: 1-, inf-, 0-norms, the matrix -1-norm, a scalar), and
    the shape that puts the norm (reduced over its axes) back in line with ``x``. No
    derivative."""
    case, p, axes = _norm_case(x, ord, axis, kind)
    if case == "scalar":
        return 0, ()
    if case == "matrix":
        if p in (None, "fro"):
            p = 2
        elif p not in (1, -1, np.inf, -np.inf):  # the norms of singular values: not elementwise
            raise UnsupportedCaseError(f"internal error: norm_power of the matrix norm ord={p!r}")
    if p is None:
        p = 2
    if p in (0, 1, np.inf, -np.inf) or (p == -1 and case == "matrix"):
        return 0, ()  # (the vector -1-norm, 1 / sum(1 / |x|), is smooth: the general case)
    ndim = np.ndim(x)
    axes = (axes,) if isinstance(axes, int) else axes
    reduced = range(ndim) if axes is None else [a % ndim for a in axes]
    return p, tuple(1 if i in reduced else n for i, n in enumerate(np.shape(x)))


# The partials of norm_grad(g, x, nrm) = g * phi(x, nrm): plain NumPy code marked ``by_source``,
# so their own derivatives (third order of a norm and up) are derivatives of this code.


@by_source
def norm_grad_x_vjp(w, g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The adjoint of ``x -> norm_grad(g, x, nrm)`` (``nrm`` held fixed) applied to ``w``."""
    if singular_layout(x, ord, axis, keepdims, kind) is not None:
        return singular_norm_vjp(w, g, x, ord, axis, keepdims, kind)
    return w * norm_grad_dx(g, x, nrm, ord, axis, keepdims, kind)


@by_source
def norm_grad_x_jvp(t, g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``norm_grad(g, x, nrm)`` in ``x`` along ``t`` (``nrm`` held fixed)."""
    if singular_layout(x, ord, axis, keepdims, kind) is not None:
        return singular_norm_jvp(t, g, x, ord, axis, keepdims, kind)
    return t * norm_grad_dx(g, x, nrm, ord, axis, keepdims, kind)


@by_source
def norm_grad_dx(g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``norm_grad(g, x, nrm)`` in ``x`` (``nrm`` held fixed), elementwise."""
    p, shape = norm_power(x, ord, axis, keepdims, kind)
    if p == 0:
        return np.zeros(np.shape(x))
    gk = np.reshape(g, shape)
    yk = np.reshape(nrm, shape)
    safe = np.where(yk == 0, 1.0, yk)
    if p == 2:
        return gk / safe + np.zeros(np.shape(x))
    return gk * (p - 1) * np.abs(x) ** (p - 2) / safe ** (p - 1)


@by_source
def norm_grad_dnorm(g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``norm_grad(g, x, nrm)`` in ``nrm``, spread over ``x``'s shape (zero
    for the norms of singular values, whose gradient does not read ``nrm``)."""
    if singular_layout(x, ord, axis, keepdims, kind) is not None:
        return np.zeros(np.shape(x))
    p, shape = norm_power(x, ord, axis, keepdims, kind)
    if p == 0:
        return np.zeros(np.shape(x))
    gk = np.reshape(g, shape)
    yk = np.reshape(nrm, shape)
    safe = np.where(yk == 0, 1.0, yk)
    if p == 2:
        return -gk * x / (safe * safe)
    return -gk * (p - 1) * np.sign(x) * np.abs(x) ** (p - 1) / safe**p


# --- helpers that copy elements -----------------------------------------------------------------


def _selection_kwargs(axis, mode):
    kwargs = {}
    if axis is not Ellipsis:
        kwargs["axis"] = axis
    if mode is not Ellipsis:
        kwargs["mode"] = mode
    return kwargs


def select_gather(w, x, fn, arg, axis=..., mode=...):
    """The adjoint of ``select_grad(., x, fn, arg, ...)``: ``fn`` applied to ``w`` (shaped like
    ``x``) copies the elements back where ``fn`` copied them. ``...`` marks an argument not given.
    """
    w = np.reshape(_float_array(w), np.shape(x))
    return fn(w, arg, **_selection_kwargs(axis, mode))


def select_scatter(g, x, fn, arg, axis=..., mode=...):
    """``select_grad(g, x, fn, arg, axis=axis, mode=mode)`` without the arguments not given."""
    return select_grad(g, x, fn, arg, **_selection_kwargs(axis, mode))


def pad_gather(w, pad_width, mode="constant"):
    """The adjoint of ``pad_grad(., array, pad_width, mode)``: ``w`` padded as the array was, with
    zeros where the padding was a constant."""
    if mode not in PAD_MODES:
        raise UnsupportedCaseError(
            f"srcgrad differentiates np.pad with mode in {PAD_MODES}; got mode={mode!r}"
        )
    w = _float_array(w)
    if mode in ("constant", "empty"):
        return np.pad(w, pad_width, mode="constant")
    return np.pad(w, pad_width, mode=mode)


# --- helpers of sequences of arrays ---------------------------------------------------------------

_JOINS = {"hstack": np.hstack, "vstack": np.vstack, "dstack": np.dstack,
          "column_stack": np.column_stack}
_SPLITS = {"hstack": hstack_grad, "vstack": vstack_grad, "dstack": dstack_grad,
           "column_stack": column_stack_grad}


def join_cotangents(pieces, arrays, how="concatenate", axis=0):
    """The adjoint of ``concatenate_grad`` / ``stack_grad`` / ``hstack_grad`` ... (``how``): the
    pieces' cotangents put together as ``np.<how>`` put the arrays together (None: zeros)."""
    filled = [
        np.zeros(np.shape(x), float_dtype(x)) if p is None else _float_array(p)
        for p, x in zip(pieces, arrays)
    ]
    if how == "concatenate":
        if axis is None:
            return np.concatenate([np.ravel(p) for p in filled])
        return np.concatenate(filled, axis=axis)
    if how == "stack":
        return np.stack(filled, axis=axis)
    return _JOINS[how](filled)


def split_cotangents(g, arrays, how="concatenate", axis=0):
    """``concatenate_grad``, ``stack_grad``, ``hstack_grad`` ... as ``how`` says: the adjoint of
    :func:`join_cotangents`."""
    if how == "concatenate":
        return concatenate_grad(g, arrays, axis)
    if how == "stack":
        return stack_grad(g, arrays, axis)
    return _SPLITS[how](g, arrays)


def split_pieces(w, indices_or_sections, axis=0):
    """The adjoint of ``split_grad``: ``w`` cut into the pieces ``np.array_split`` makes."""
    pieces = np.array_split(_float_array(w), indices_or_sections, axis=axis)
    return Cotangents(np.array(p) for p in pieces)


def unstack_pieces(w, axis=0):
    """The adjoint of ``stack_cotangents``: ``w`` taken apart along ``axis``."""
    return Cotangents(np.array(p) for p in np.moveaxis(_float_array(w), axis, 0))


def sum_grad_adjoint(w, g, items):
    """The adjoint of ``sum_grad(g, items)``: the items' cotangents broadcast to ``g`` and added."""
    total = zeros_like(g)
    for d in w:
        if d is not None:
            total = total + broadcast_like(d, g)
    return total


def linspace_tangent(t, num=50, endpoint=True, axis=0, start=True):
    """The tangent of ``np.linspace`` from ``start`` (or ``stop``, start=False): the adjoint of
    ``linspace_grad``."""
    weights = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    weights = 1.0 - weights if start else weights
    t = _float_array(t)
    ndim = t.ndim + 1
    shape = [num if i == axis % ndim else 1 for i in range(ndim)]
    return np.expand_dims(t, axis) * weights.reshape(shape)


# --- products: the operand an adjoint does not differentiate ------------------------------------
# Plain NumPy code marked ``by_source``: derivatives of generated code that calls them look into
# their source, whose calls (``kron_vjp``, ``np.kron``, ``einsum_vjp`` ...) have rules that call
# these helpers again, so every order works. Each is linear in its cotangent and tangent
# arguments; the product's own operands enter through the product helpers they call.


@by_source
def _zeros_of(x):
    return np.zeros(np.shape(x), float_dtype(x))


@by_source
def kron_vjp_adjoint(w, a, b, wrt=0):
    """The adjoint of ``kron_vjp(., a, b, wrt)``: ``np.kron`` with operand ``wrt`` set to ``w``."""
    if wrt == 0:
        return np.kron(w, b)
    return np.kron(a, w)


@by_source
def kron_vjp_partner(g, a, b, w, wrt=0, param=1):
    """The adjoint of ``kron_vjp(g, a, b, wrt)`` in operand ``param``, applied to ``w``.

    ``kron_vjp(g, a, b, k)`` is the gradient of ``<g, kron(a, b)>`` in operand ``k``, linear in
    the other operand: its adjoint in operand ``j`` is ``kron_vjp(g, ., j)`` with operand ``k``
    set to ``w``. Of operand ``k`` itself it reads only the shape: that adjoint is zero.
    """
    if param == wrt:
        return _zeros_of(a if param == 0 else b)
    if wrt == 0:
        return kron_vjp(g, w, b, 1)
    return kron_vjp(g, a, w, 0)


@by_source
def kron_vjp_tangent(g, a, b, t, wrt=0, param=1):
    """The derivative of ``kron_vjp(g, a, b, wrt)`` in operand ``param`` along ``t``."""
    if param == wrt:
        return _zeros_of(a if wrt == 0 else b)
    if wrt == 0:
        return kron_vjp(g, a, t, 0)
    return kron_vjp(g, t, b, 1)


@by_source
def cross_vjp_adjoint(w, a, b, wrt=0, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``cross_vjp(., a, b, wrt, ...)``: ``np.cross``, operand ``wrt`` = ``w``."""
    if wrt == 0:
        return np.cross(w, b, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    return np.cross(a, w, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


@by_source
def cross_vjp_partner(g, a, b, w, wrt=0, param=1, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``cross_vjp(g, a, b, wrt, ...)`` in operand ``param``, applied to ``w``."""
    if param == wrt:
        return _zeros_of(a if param == 0 else b)
    if wrt == 0:
        return cross_vjp(g, w, b, 1, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    return cross_vjp(g, a, w, 0, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


@by_source
def cross_vjp_tangent(g, a, b, t, wrt=0, param=1, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The derivative of ``cross_vjp(g, a, b, wrt, ...)`` in operand ``param`` along ``t``."""
    if param == wrt:
        return _zeros_of(a if wrt == 0 else b)
    if wrt == 0:
        return cross_vjp(g, a, t, 0, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)
    return cross_vjp(g, t, b, 1, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


@by_source
def convolve_vjp_adjoint(w, a, v, mode="full", wrt=0):
    """The adjoint of ``convolve_vjp(., a, v, mode, wrt)``: the convolution with operand ``wrt``
    replaced by ``w``."""
    if wrt == 0:
        return np.convolve(w, v, mode=mode)
    return np.convolve(a, w, mode=mode)


@by_source
def convolve_vjp_partner(g, a, v, w, mode="full", wrt=0, param=1):
    """The adjoint of ``convolve_vjp(g, a, v, mode, wrt)`` in operand ``param``, applied to w."""
    if param == wrt:
        return _zeros_of(a if param == 0 else v)
    if wrt == 0:
        return convolve_vjp(g, w, v, mode, 1)
    return convolve_vjp(g, a, w, mode, 0)


@by_source
def convolve_vjp_tangent(g, a, v, t, mode="full", wrt=0, param=1):
    """The derivative of ``convolve_vjp(g, a, v, mode, wrt)`` in operand ``param`` along ``t``."""
    if param == wrt:
        return _zeros_of(a if wrt == 0 else v)
    if wrt == 0:
        return convolve_vjp(g, a, t, mode, 0)
    return convolve_vjp(g, t, v, mode, 1)


@by_source
def correlate_vjp_adjoint(w, a, v, mode="valid", wrt=0):
    """The adjoint of ``correlate_vjp(., a, v, mode, wrt)``."""
    if wrt == 0:
        return np.correlate(w, v, mode=mode)
    return np.correlate(a, w, mode=mode)


@by_source
def correlate_vjp_partner(g, a, v, w, mode="valid", wrt=0, param=1):
    """The adjoint of ``correlate_vjp(g, a, v, mode, wrt)`` in operand ``param``, applied to w."""
    if param == wrt:
        return _zeros_of(a if param == 0 else v)
    if wrt == 0:
        return correlate_vjp(g, w, v, mode, 1)
    return correlate_vjp(g, a, w, mode, 0)


@by_source
def correlate_vjp_tangent(g, a, v, t, mode="valid", wrt=0, param=1):
    """The derivative of ``correlate_vjp(g, a, v, mode, wrt)`` in operand ``param`` along ``t``."""
    if param == wrt:
        return _zeros_of(a if wrt == 0 else v)
    if wrt == 0:
        return correlate_vjp(g, a, t, mode, 0)
    return correlate_vjp(g, t, v, mode, 1)


# einsum: the operands x0 .. x5 (None: not given), operand k the one differentiated. Replacing
# operand j is written out, one branch per position, so that the code stays differentiable.


def einsum_zeros(i, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """Zeros shaped like operand ``i`` of an einsum (0.0 for an operand not given: the tangent
    code of the helpers below also runs the branches of operands that are None). No derivative."""
    x = (x0, x1, x2, x3, x4, x5)[i]
    return 0.0 if x is None else np.zeros(np.shape(x), float_dtype(x))


def einsum_given(i, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """Whether operand ``i`` of an einsum is given (not None). No derivative."""
    return (x0, x1, x2, x3, x4, x5)[i] is not None


@by_source
def einsum_vjp_partner(g, subscripts, k, j, w, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The adjoint of ``einsum_vjp(g, subscripts, k, x0, ...)`` in operand ``j``, applied to ``w``:
    ``einsum_vjp`` in operand ``j`` with operand ``k`` replaced by ``w`` (zero for ``j == k``)."""
    if j == k or not einsum_given(j, x0, x1, x2, x3, x4, x5):
        return einsum_zeros(j, x0, x1, x2, x3, x4, x5)
    if k == 0:
        x0 = w
    elif k == 1:
        x1 = w
    elif k == 2:
        x2 = w
    elif k == 3:
        x3 = w
    elif k == 4:
        x4 = w
    else:
        x5 = w
    return einsum_vjp(g, subscripts, j, x0, x1, x2, x3, x4, x5)


@by_source
def einsum_vjp_tangent(g, subscripts, k, j, t, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The derivative of ``einsum_vjp(g, subscripts, k, x0, ...)`` in operand ``j`` along ``t``."""
    if j == k or not einsum_given(j, x0, x1, x2, x3, x4, x5):
        return einsum_zeros(k, x0, x1, x2, x3, x4, x5)
    if j == 0:
        x0 = t
    elif j == 1:
        x1 = t
    elif j == 2:
        x2 = t
    elif j == 3:
        x3 = t
    elif j == 4:
        x4 = t
    else:
        x5 = t
    return einsum_vjp(g, subscripts, k, x0, x1, x2, x3, x4, x5)


@by_source
def einsum_jvp_tangent(subscripts, k, t, j, u, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The derivative of ``einsum_jvp(subscripts, k, t, x0, ...)`` in operand ``j`` along ``u``:
    the einsum with operand ``k`` replaced by ``t`` and operand ``j`` by ``u`` (zero for ``j == k``,
    which ``einsum_jvp`` does not read)."""
    if j == k or not einsum_given(j, x0, x1, x2, x3, x4, x5):
        return _zeros_of(einsum_jvp(subscripts, k, t, x0, x1, x2, x3, x4, x5))
    if j == 0:
        x0 = u
    elif j == 1:
        x1 = u
    elif j == 2:
        x2 = u
    elif j == 3:
        x3 = u
    elif j == 4:
        x4 = u
    else:
        x5 = u
    return einsum_jvp(subscripts, k, t, x0, x1, x2, x3, x4, x5)


# --- linear algebra ---------------------------------------------------------------------------


def solve_like(a, w, b):
    """``np.linalg.solve(a, w)`` with ``w`` read as ``b`` is read: a (stack of) vector(s) when ``b``
    is 1-d, a (stack of) matrix(ces) otherwise."""
    if np.ndim(b) == 1:
        return np.linalg.solve(a, as_array(w)[..., None])[..., 0]
    return np.linalg.solve(a, w)


def vec_matmul(m, v, b):
    """``m @ v`` with ``v`` read as a vector when ``b`` is 1-d (see :func:`solve_like`)."""
    if np.ndim(b) == 1:
        return (m @ as_array(v)[..., None])[..., 0]
    return m @ v


def vec_outer(w, v, b):
    """The adjoint of ``m -> vec_matmul(m, v, b)`` applied to ``w``: ``w v^T`` per matrix."""
    if np.ndim(b) == 1:
        return as_array(w)[..., :, None] * as_array(v)[..., None, :]
    return w @ np.swapaxes(v, -1, -2)
