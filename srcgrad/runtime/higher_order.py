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
from .products import convolve_vjp, correlate_vjp, cross_vjp, einsum_vjp, kron_vjp
from .reductions import cumprod_jvp
from .shapes import (
    _expand,
    _float_array,
    _last,
    _like,
    as_array,
    broadcast_like,
    float_dtype,
)

# --- reductions -----------------------------------------------------------------------------


def prod_grad_tangent(g, a, t, axis=None, keepdims=False):
    """The derivative of ``prod_grad(g, a)`` in ``a`` along ``t``: ``g`` times the tangent of the
    products of the other factors. Exact where ``a`` has zeros (no division).

    The Hessian of a product is symmetric and ``g`` is constant along the reduced axes, so this is
    also the adjoint of that derivative applied to a cotangent ``t``.
    """
    if np.ndim(a) == 0:
        return _like(0.0 * _float_array(t), a)
    merged, back = _last(_float_array(a), axis)
    dmerged, _ = _last(np.broadcast_to(_float_array(t), np.shape(a)), axis)
    ones = np.ones(merged.shape[:-1] + (1,), merged.dtype)
    zeros = np.zeros_like(ones)
    lead = np.concatenate([ones, merged[..., :-1]], axis=-1)
    dlead = np.concatenate([zeros, dmerged[..., :-1]], axis=-1)
    trail = np.concatenate([ones, merged[..., :0:-1]], axis=-1)
    dtrail = np.concatenate([zeros, dmerged[..., :0:-1]], axis=-1)
    before = np.cumprod(lead, axis=-1)
    after = np.cumprod(trail, axis=-1)[..., ::-1]
    dbefore = cumprod_jvp(lead, dlead, -1)
    dafter = cumprod_jvp(trail, dtrail, -1)[..., ::-1]
    return back(dbefore * after + before * dafter) * _expand(g, np.ndim(a), axis, keepdims)


def _front(x, axis):
    return np.moveaxis(_float_array(x), axis, 0)


def cumprod_second(a, t, v, axis=None):
    """The second derivative of ``np.cumprod(a, axis)`` along ``t`` and ``v``, exact at zeros.

    From ``T_i = T_(i-1) a_i + y_(i-1) t_i`` (the tangent), ``S_i = S_(i-1) a_i + T_(i-1) v_i +
    V_(i-1) t_i`` where ``V`` is the tangent along ``v``.
    """
    if axis is None:
        return cumprod_second(np.ravel(a), np.ravel(t), np.ravel(v), 0)
    a0, t0, v0 = _front(a, axis), _front(t, axis), _front(v, axis)
    tt = cumprod_jvp(a0, t0, 0)
    vv = cumprod_jvp(a0, v0, 0)
    s = np.zeros(np.broadcast_shapes(a0.shape, t0.shape, v0.shape))
    for i in range(1, len(a0)):
        s[i] = s[i - 1] * a0[i] + tt[i - 1] * v0[i] + vv[i - 1] * t0[i]
    return np.moveaxis(s, 0, axis)


def cumprod_hvp(g, a, v, axis=None):
    """``sum_i g_i d2y_i/da da . v`` for ``y = np.cumprod(a, axis)``: the derivative of
    ``cumprod_grad(g, a)`` in ``a`` along ``v`` and, the Hessian being symmetric, its adjoint.

    The adjoint, in ``t``, of the recurrences of :func:`cumprod_second`; exact at zeros.
    """
    if axis is None:
        return _like(cumprod_hvp(np.ravel(g), np.ravel(a), np.ravel(v), 0), a)
    g0, a0, v0 = _front(g, axis), _front(a, axis), _front(v, axis)
    y = np.cumprod(a0, axis=0)
    vv = cumprod_jvp(a0, v0, 0)
    shape = np.broadcast_shapes(g0.shape, a0.shape, v0.shape)
    sbar = np.array(np.broadcast_to(g0, shape))
    tbar = np.zeros(shape, float_dtype(g0, a0, v0))
    out = np.zeros(shape, tbar.dtype)
    for i in range(len(a0) - 1, 0, -1):
        out[i] = vv[i - 1] * sbar[i] + y[i - 1] * tbar[i]
        sbar[i - 1] += a0[i] * sbar[i]
        tbar[i - 1] += v0[i] * sbar[i] + a0[i] * tbar[i]
    out[0] = tbar[0]
    return np.moveaxis(out, 0, axis)


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


def _norm_partials(g, x, nrm, ord, axis, keepdims, kind):
    """``(d/dx, d/dnorm)`` of the factor ``norm_grad`` multiplies each element's cotangent by,
    both times ``g`` and shaped like ``x``; the norm is held fixed in the first, ``x`` in the
    second. Zero where the gradient is piecewise constant (1-, inf-, 0-norms)."""
    case, ord, axis = _norm_case(x, ord, axis, kind)
    x = _float_array(x)
    zeros = np.zeros(x.shape)
    if case == "scalar":
        return zeros, zeros
    if case == "matrix":
        if ord in (None, "fro"):
            ord = 2
        elif ord in (1, -1, np.inf, -np.inf):
            return zeros, zeros
        else:
            raise UnsupportedCaseError(
                f"srcgrad has no second derivative of the matrix norm ord={ord!r} (it needs the "
                f"derivative of the singular vectors)"
            )
    if ord is None:
        ord = 2
    if ord in (0, 1, np.inf, -np.inf):
        return zeros, zeros
    ndim = x.ndim
    gk = _expand(g, ndim, axis, keepdims)
    yk = _expand(nrm, ndim, axis, keepdims)
    safe = np.where(yk == 0, 1.0, yk)
    if ord == 2:
        return gk / safe + zeros, -gk * x / (safe * safe)
    ax = np.abs(x)
    dx = gk * (ord - 1) * ax ** (ord - 2) / safe ** (ord - 1)
    dnorm = -gk * (ord - 1) * np.sign(x) * ax ** (ord - 1) / safe**ord
    return dx, dnorm


def norm_grad_dx(g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``norm_grad(g, x, nrm)`` in ``x`` (``nrm`` held fixed), elementwise."""
    return _norm_partials(g, x, nrm, ord, axis, keepdims, kind)[0]


def norm_grad_dnorm(g, x, nrm, ord=None, axis=None, keepdims=False, kind="norm"):
    """The derivative of ``norm_grad(g, x, nrm)`` in ``nrm``, spread over ``x``'s shape."""
    return _norm_partials(g, x, nrm, ord, axis, keepdims, kind)[1]


def sinc_derivative_dx(x, s):
    """d/dx of ``sinc_derivative(x, s) = (cos(pi x) - s) / x`` with ``s`` held fixed.

    At ``x = 0``, where the helper is 0 by convention, the value is ``sinc''(0) = -pi^2 / 3``, so
    that the derivative along ``s = sinc(x)`` (the only way generated code calls the helper) is
    exact there too: ``sinc'(0) = 0`` makes the path through ``s`` vanish.
    """
    x = _float_array(x)
    zero = x == 0
    safe = np.where(zero, 1.0, x)
    first = (np.cos(np.pi * safe) - s) / safe
    return np.where(zero, -np.pi**2 / 3, (-np.pi * np.sin(np.pi * safe) - first) / safe)


def sinc_derivative_ds(x):
    """d/ds of ``sinc_derivative(x, s)``: ``-1 / x`` (0 at ``x = 0``, where the helper is 0)."""
    x = _float_array(x)
    zero = x == 0
    return np.where(zero, 0.0, -1.0 / np.where(zero, 1.0, x))


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


def _put(operands, i, value):
    operands = list(operands)
    operands[i] = value
    return operands


def _partner(vjp, g, operands, wrt, param, w, **kwargs):
    """The adjoint in ``operands[param]`` of ``vjp(g, *operands, wrt=wrt)``, applied to ``w``.

    ``vjp(g, ops, k)`` is the gradient of ``<g, E(ops)>`` in ``ops[k]``, linear in every other
    operand: its adjoint in ``ops[j]`` is ``vjp(g, ops with ops[k] = w, j)``. In ``ops[wrt]`` itself
    it only reads a shape, so that adjoint is zero.
    """
    if param == wrt:
        return zeros_like(operands[param])
    return vjp(g, *_put(operands, wrt, w), wrt=param, **kwargs)


def _tangent(vjp, g, operands, wrt, param, t, **kwargs):
    """The derivative of ``vjp(g, *operands, wrt=wrt)`` in ``operands[param]`` along ``t``."""
    if param == wrt:
        return zeros_like(operands[wrt])
    return vjp(g, *_put(operands, param, t), wrt=wrt, **kwargs)


def kron_vjp_adjoint(w, a, b, wrt=0):
    """The adjoint of ``kron_vjp(., a, b, wrt)``: ``np.kron`` with operand ``wrt`` set to ``w``."""
    return np.kron(*_put((a, b), wrt, w))


def kron_vjp_partner(g, a, b, w, wrt=0, param=1):
    """The adjoint of ``kron_vjp(g, a, b, wrt)`` in operand ``param``, applied to ``w``."""
    return _partner(kron_vjp, g, (a, b), wrt, param, w)


def kron_vjp_tangent(g, a, b, t, wrt=0, param=1):
    """The derivative of ``kron_vjp(g, a, b, wrt)`` in operand ``param`` along ``t``."""
    return _tangent(kron_vjp, g, (a, b), wrt, param, t)


def cross_vjp_adjoint(w, a, b, wrt=0, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``cross_vjp(., a, b, wrt, ...)``: ``np.cross``, operand ``wrt`` = ``w``."""
    return np.cross(*_put((a, b), wrt, w), axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


def cross_vjp_partner(g, a, b, w, wrt=0, param=1, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``cross_vjp(g, a, b, wrt, ...)`` in operand ``param``, applied to ``w``."""
    return _partner(cross_vjp, g, (a, b), wrt, param, w, axisa=axisa, axisb=axisb, axisc=axisc,
                    axis=axis)


def cross_vjp_tangent(g, a, b, t, wrt=0, param=1, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The derivative of ``cross_vjp(g, a, b, wrt, ...)`` in operand ``param`` along ``t``."""
    return _tangent(cross_vjp, g, (a, b), wrt, param, t, axisa=axisa, axisb=axisb, axisc=axisc,
                    axis=axis)


def convolve_vjp_adjoint(w, a, v, mode="full", wrt=0):
    """The adjoint of ``convolve_vjp(., a, v, mode, wrt)``: the convolution with operand ``wrt``
    replaced by ``w``."""
    return np.convolve(*_put((a, v), wrt, w), mode=mode)


def convolve_vjp_partner(g, a, v, w, mode="full", wrt=0, param=1):
    """The adjoint of ``convolve_vjp(g, a, v, mode, wrt)`` in operand ``param``, applied to w."""
    return _partner(convolve_vjp, g, (a, v), wrt, param, w, mode=mode)


def convolve_vjp_tangent(g, a, v, t, mode="full", wrt=0, param=1):
    """The derivative of ``convolve_vjp(g, a, v, mode, wrt)`` in operand ``param`` along ``t``."""
    return _tangent(convolve_vjp, g, (a, v), wrt, param, t, mode=mode)


def correlate_vjp_adjoint(w, a, v, mode="valid", wrt=0):
    """The adjoint of ``correlate_vjp(., a, v, mode, wrt)``."""
    return np.correlate(*_put((a, v), wrt, w), mode=mode)


def correlate_vjp_partner(g, a, v, w, mode="valid", wrt=0, param=1):
    """The adjoint of ``correlate_vjp(g, a, v, mode, wrt)`` in operand ``param``, applied to w."""
    return _partner(correlate_vjp, g, (a, v), wrt, param, w, mode=mode)


def correlate_vjp_tangent(g, a, v, t, mode="valid", wrt=0, param=1):
    """The derivative of ``correlate_vjp(g, a, v, mode, wrt)`` in operand ``param`` along ``t``."""
    return _tangent(correlate_vjp, g, (a, v), wrt, param, t, mode=mode)


def _operands(x0, x1, x2, x3, x4, x5):
    return [x for x in (x0, x1, x2, x3, x4, x5) if x is not None]


def _einsum_vjp(g, *operands, wrt, subscripts):
    return einsum_vjp(g, subscripts, wrt, *operands)


def einsum_vjp_partner(g, subscripts, k, j, w, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The adjoint of ``einsum_vjp(g, subscripts, k, x0, ...)`` in operand ``j``, applied to ``w``:
    ``einsum_vjp`` in operand ``j`` with operand ``k`` replaced by ``w`` (zero for ``j == k``)."""
    operands = _operands(x0, x1, x2, x3, x4, x5)
    return _partner(_einsum_vjp, g, operands, k, j, w, subscripts=subscripts)


def einsum_vjp_tangent(g, subscripts, k, j, t, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The derivative of ``einsum_vjp(g, subscripts, k, x0, ...)`` in operand ``j`` along ``t``."""
    operands = _operands(x0, x1, x2, x3, x4, x5)
    return _tangent(_einsum_vjp, g, operands, k, j, t, subscripts=subscripts)


def einsum_jvp_tangent(subscripts, k, t, j, u, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The derivative of ``einsum_jvp(subscripts, k, t, x0, ...)`` in operand ``j`` along ``u``:
    the einsum with operand ``k`` replaced by ``t`` and operand ``j`` by ``u`` (zero for ``j == k``,
    which ``einsum_jvp`` does not read)."""
    operands = _put(_operands(x0, x1, x2, x3, x4, x5), k, t)
    if j == k:
        return np.zeros(np.shape(np.einsum(subscripts, *operands)))
    return np.einsum(subscripts, *_put(operands, j, u))


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
