"""Adjoints and tangents of ``np.linalg``: ``det``, ``slogdet``, ``solve``, ``cholesky``,
``eigh``, ``eigvalsh``, ``svd``, ``qr``, ``pinv``, ``matrix_power``, ``lstsq`` and the vector and
matrix norms.

Each works on stacks of matrices (the last two axes). Where a derivative exists only under a
condition (distinct eigenvalues or singular values, full rank) the docstring says so; where it
is not unique (the extra singular vectors of a
non-square ``svd`` with ``full_matrices``, ``qr`` of a wide matrix) the helper refuses it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedCaseError
from .reductions import chooser_grad
from .shapes import _expand, _like, as_array, by_source, is_duck, mT, unbroadcast


@by_source
def _sym(x):
    return 0.5 * (x + mT(x))


@by_source
def _eye_like(x):
    return np.eye(np.shape(x)[-1])


def det_vjp(dy, y, a):
    """The adjoint of ``np.linalg.det``: ``dy * det(a) * inv(a)^T``."""
    return (as_array(dy) * y)[..., None, None] * mT(np.linalg.inv(a))


def slogdet_vjp(dy, a):
    """The adjoint of ``np.linalg.slogdet``: only the log-determinant carries gradient."""
    dlog = dy[1]
    if dlog is None:
        return np.zeros(np.shape(a))
    return as_array(dlog)[..., None, None] * mT(np.linalg.inv(a))


def solve_vjp_b(dy, a, b):
    """The adjoint of ``np.linalg.solve(a, b)`` with respect to ``b``: solve with ``a^T``."""
    if np.ndim(b) == 1:
        g = np.linalg.solve(mT(a), as_array(dy)[..., None])[..., 0]
    else:
        g = np.linalg.solve(mT(a), dy)
    return unbroadcast(g, b)


def solve_vjp_a(dy, a, b, y):
    """The adjoint of ``x = np.linalg.solve(a, b)`` with respect to ``a``: ``-solve(a^T, dy) x^T``.
    """
    if np.ndim(b) == 1:
        gb = np.linalg.solve(mT(a), as_array(dy)[..., None])[..., 0]
        g = -gb[..., :, None] * as_array(y)[..., None, :]
    else:
        g = -np.linalg.solve(mT(a), dy) @ mT(y)
    return unbroadcast(g, a)


@by_source
def _lower_half(x):
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * x * _eye_like(x)


def _numpy_factor(y):
    """Refuse a Cholesky factor computed by Dask: ``np.linalg.cholesky`` of a Dask array runs
    ``dask.array.linalg.cholesky``, which returns the UPPER factor where NumPy returns the lower
    one, so NumPy's derivative would not be the derivative of what was computed."""
    if is_duck(y) and type(y).__module__.startswith("dask"):
        raise UnsupportedCaseError(
            "np.linalg.cholesky of a Dask array returns Dask's upper-triangular factor, not "
            "NumPy's lower one; srcgrad does not differentiate it: compute the factorization "
            "on a NumPy array (np.asarray(a)) or use a solve instead"
        )


@by_source
def cholesky_vjp(dy, y, upper=False):
    """The adjoint of ``np.linalg.cholesky`` (symmetric convention: the gradient is symmetric)."""
    _numpy_factor(y)
    low, dlow = (mT(y), mT(dy)) if upper else (y, dy)
    inv = np.linalg.inv(low)
    return _sym(mT(inv) @ _lower_half(mT(low) @ dlow) @ inv)


@by_source
def cholesky_jvp(y, da, upper=False):
    """The tangent of ``np.linalg.cholesky``: ``L Phi(L^-1 dA L^-T)``."""
    _numpy_factor(y)
    low = mT(y) if upper else y
    inv = np.linalg.inv(low)
    dlow = low @ _lower_half(inv @ _sym(da) @ mT(inv))
    return mT(dlow) if upper else dlow


@by_source
def _gaps(w):
    """``1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    diff = w[..., None, :] - w[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


@by_source
def eigh_vjp(dy, y):
    """The adjoint of ``np.linalg.eigh`` for symmetric input with distinct eigenvalues."""
    w, v = y
    dw, dv = dy
    inner = np.zeros(np.shape(v))
    if dw is not None:
        inner = inner + as_array(dw)[..., None] * _eye_like(v)
    if dv is not None:
        inner = inner + _gaps(w) * (mT(v) @ dv)
    return _sym(v @ inner @ mT(v))


@by_source
def eigh_jvp(y, da):
    """The tangent of ``np.linalg.eigh``: ``(diag(V^T dA V), V (F * V^T dA V))``."""
    w, v = y
    m = mT(v) @ _sym(da) @ v
    return np.diagonal(m, axis1=-2, axis2=-1), v @ (_gaps(w) * m)


@by_source
def eigvalsh_vjp(dy, a, UPLO="L"):
    """The adjoint of ``np.linalg.eigvalsh``: ``V diag(dy) V^T``."""
    _, v = np.linalg.eigh(a, UPLO)
    return _sym(v @ (as_array(dy)[..., None] * mT(v)))


@by_source
def eigvalsh_jvp(a, da, UPLO="L"):
    """The tangent of ``np.linalg.eigvalsh``: ``diag(V^T dA V)``."""
    _, v = np.linalg.eigh(a, UPLO)
    return np.diagonal(mT(v) @ _sym(da) @ v, axis1=-2, axis2=-1)


@by_source
def _svd_parts(y, a, full_matrices, compute_uv):
    if compute_uv:
        u, s, vt = y
        m, n = np.shape(a)[-2:]
        if full_matrices and m != n:
            raise UnsupportedCaseError(
                "srcgrad differentiates np.linalg.svd of a non-square matrix only with "
                "full_matrices=False (the extra singular vectors are not unique)"
            )
        return u, s, vt
    return np.linalg.svd(a, full_matrices=False)


@by_source
def svd_vjp(dy, y, a, full_matrices=True, compute_uv=True):
    """The adjoint of ``np.linalg.svd`` for distinct nonzero singular values (Townsend 2016)."""
    u, s, vt = _svd_parts(y, a, full_matrices, compute_uv)
    du, ds, dvt = dy if compute_uv else (None, dy, None)
    v = mT(vt)
    f = _gaps(s * s)
    core = np.zeros(np.shape(u)[:-2] + (s.shape[-1], s.shape[-1]))
    if ds is not None:
        core = core + as_array(ds)[..., None] * _eye_like(core)
    g = 0.0
    if du is not None:
        ut_du = mT(u) @ du
        core = core + (f * (ut_du - mT(ut_du))) * s[..., None, :]
        g = g + (np.eye(np.shape(u)[-2]) - u @ mT(u)) @ du / s[..., None, :] @ vt
    if dvt is not None:
        dv = mT(dvt)
        vt_dv = vt @ dv
        core = core + s[..., :, None] * (f * (vt_dv - mT(vt_dv)))
        g = g + (u / s[..., None, :]) @ mT(dv) @ (np.eye(np.shape(v)[-2]) - v @ vt)
    return u @ core @ vt + g


@by_source
def svd_jvp(y, a, da, full_matrices=True, compute_uv=True):
    """The tangent of ``np.linalg.svd`` (reduced, distinct nonzero singular values)."""
    u, s, vt = _svd_parts(y, a, full_matrices, compute_uv)
    v = mT(vt)
    p = mT(u) @ da @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1)
    if not compute_uv:
        return ds
    f = _gaps(s * s)
    sp, ps = s[..., :, None] * p, p * s[..., None, :]
    omega_u = f * (ps + mT(ps))  # U^T dU = F o (P S + S P^T)
    omega_v = f * (sp + mT(sp))  # V^T dV = F o (S P + P^T S)
    du = u @ omega_u + (np.eye(np.shape(u)[-2]) - u @ mT(u)) @ da @ v / s[..., None, :]
    dv = v @ omega_v + (np.eye(np.shape(v)[-2]) - v @ vt) @ mT(da) @ u / s[..., None, :]
    return du, ds, mT(dv)


@by_source
def _qr_parts(y, a, mode):
    if mode not in ("reduced", "r"):
        raise UnsupportedCaseError(f"srcgrad differentiates np.linalg.qr with mode 'reduced' or "
                                  f"'r'; got mode={mode!r}")
    m, n = np.shape(a)[-2:]
    if m < n:
        raise UnsupportedCaseError(
            f"srcgrad differentiates np.linalg.qr of an m x n matrix with m >= n; got {m} x {n}"
        )
    return y if mode == "reduced" else (np.linalg.qr(a)[0], y)


@by_source
def qr_vjp(dy, y, a, mode="reduced"):
    """The adjoint of ``np.linalg.qr`` for m >= n and full column rank."""
    q, r = _qr_parts(y, a, mode)
    dq, dr = dy if mode == "reduced" else (None, dy)
    dq = np.zeros(np.shape(q)) if dq is None else dq
    dr = np.zeros(np.shape(r)) if dr is None else dr
    m = r @ mT(dr) - mT(dq) @ q
    copyltu = np.tril(m) + mT(np.tril(m, -1))
    return mT(np.linalg.solve(r, mT(dq + q @ copyltu)))


@by_source
def qr_jvp(y, a, da, mode="reduced"):
    """The tangent of ``np.linalg.qr`` for m >= n and full column rank."""
    q, r = _qr_parts(y, a, mode)
    c = mT(np.linalg.solve(mT(r), mT(mT(q) @ da)))
    lower = np.tril(c, -1)
    omega = lower - mT(lower)
    dr = (c - omega) @ r
    if mode == "r":
        return dr
    dq = mT(np.linalg.solve(mT(r), mT(da))) - q @ (c - omega)
    return dq, dr


@by_source
def pinv_vjp(dy, y, a):
    """The adjoint of ``np.linalg.pinv`` for a matrix of constant rank (Golub and Pereyra)."""
    eye_m, eye_n = np.eye(np.shape(a)[-2]), np.eye(np.shape(a)[-1])
    return (
        -mT(y) @ dy @ mT(y)
        + (eye_m - a @ y) @ mT(dy) @ y @ mT(y)
        + mT(y) @ y @ mT(dy) @ (eye_n - y @ a)
    )


@by_source
def pinv_jvp(y, a, da):
    """The tangent of ``np.linalg.pinv`` for a matrix of constant rank."""
    eye_m, eye_n = np.eye(np.shape(a)[-2]), np.eye(np.shape(a)[-1])
    return (
        -y @ da @ y
        + y @ mT(y) @ mT(da) @ (eye_m - a @ y)
        + (eye_n - y @ a) @ mT(da) @ mT(y) @ y
    )


@by_source
def _power_sum(base, d, k):
    """``sum_j base^j d base^(k-1-j)`` over ``j < k`` (k >= 1), by the recurrence
    ``S_(m+1) = base S_m + d base^m``: the derivative of ``base^k`` along ``d``."""
    total = d
    power = np.zeros(np.shape(base)) + _eye_like(base)
    for _ in range(k - 1):
        power = power @ base
        total = base @ total + d @ power
    return total


@by_source
def matrix_power_vjp(dy, a, n):
    """The adjoint of ``np.linalg.matrix_power(a, n)``: ``sum_k (a^T)^k dy (a^T)^(n-1-k)``."""
    if n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        inv = np.linalg.inv(a)
        return -mT(inv) @ _power_sum(mT(inv), dy, -n) @ mT(inv)
    return _power_sum(mT(a), dy, n)


@by_source
def matrix_power_jvp(a, da, n):
    """The tangent of ``np.linalg.matrix_power(a, n)``."""
    if n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        inv = np.linalg.inv(a)
        return _power_sum(inv, -inv @ da @ inv, -n)
    return _power_sum(a, da, n)


@by_source
def lstsq_vjp(dy, a, b, y, wrt=0):
    """The adjoint of ``np.linalg.lstsq`` for full-rank ``a`` (wrt=0: ``a``, wrt=1: ``b``).

    The solution ``x = pinv(a) b`` and the residuals carry gradient; the rank does not.
    """
    dx, dres, _, ds = dy
    x = y[0]
    b2 = np.reshape(b, (np.shape(b)[0], -1))
    x2 = np.reshape(x, (np.shape(x)[0], -1))
    ga, gb = np.zeros(np.shape(a)), np.zeros(b2.shape)
    if dx is not None:
        dx2 = np.reshape(dx, x2.shape)
        p = np.linalg.pinv(a)
        gb = gb + mT(p) @ dx2
        ga = ga + pinv_vjp(dx2 @ mT(b2), p, a)
    if dres is not None and math.prod(np.shape(y[1])):
        residual = b2 - a @ x2
        weighted = 2.0 * residual * np.reshape(dres, (1, -1))
        gb = gb + weighted
        ga = ga - weighted @ mT(x2)
    if ds is not None:
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ga = ga + u @ (as_array(ds)[:, None] * vt)
    if wrt == 0:
        return ga
    return np.reshape(gb, np.shape(b))


@by_source
def lstsq_jvp(a, b, y, da, db):
    """The tangent of ``np.linalg.lstsq`` for full-rank ``a``: of the solution ``x``, of the
    residuals ``sum((b - a x)**2)`` and of the singular values of ``a`` (the rank has none).

    One call takes both tangents (``None`` for an inactive one), so the tuple is never summed
    with another (``+`` would concatenate). Plain NumPy code marked ``by_source``.
    """
    x, residuals = y[0], y[1]
    p = np.linalg.pinv(a)
    dx = np.zeros(np.shape(x))
    change = np.zeros(np.shape(b))
    ds = None
    if da is not None:
        dx = dx + pinv_jvp(p, a, da) @ b
        change = change - da @ x
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ds = np.diagonal(mT(u) @ da @ mT(vt), axis1=-2, axis2=-1)
    if db is not None:
        dx = dx + p @ db
        change = change + db
    dres = np.zeros(np.shape(residuals))  # empty when there are no residuals
    if np.size(residuals):
        change = change - a @ dx
        dres = np.reshape(2.0 * np.sum((b - a @ x) * change, axis=0), np.shape(residuals))
    return dx, dres, None, ds


def _vector_norm_grad(dy, x, y, ord, axis, keepdims):
    ndim = np.ndim(x)
    d = _expand(dy, ndim, axis, keepdims)
    yk = _expand(y, ndim, axis, keepdims)
    if ord is None or ord == 2:
        return d * x / np.where(yk == 0, 1.0, yk)
    if ord in (np.inf, -np.inf):
        return chooser_grad(dy, np.abs(x), y, axis, keepdims) * np.sign(x)
    if ord == 0:
        return np.zeros(np.shape(x))
    if ord == 1:
        return d * np.sign(x)
    safe = np.where(yk == 0, 1.0, yk)
    return d * np.sign(x) * np.abs(x) ** (ord - 1) / safe ** (ord - 1)


def _matrix_norm_grad(dy, x, y, ord, axis, keepdims):
    ndim = np.ndim(x)
    rows, cols = (a % ndim for a in axis)
    if ord in (None, "fro"):
        return _vector_norm_grad(dy, x, y, 2, (rows, cols), keepdims)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    d = as_array(_expand(dy, ndim, axis, keepdims))
    d = np.moveaxis(d, (rows, cols), (-2, -1)) if d.ndim == ndim else d
    if ord in ("nuc", 2, -2):
        u, s, vt = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            g = u @ vt
        else:
            k = 0 if ord == 2 else s.shape[-1] - 1
            g = u[..., :, k : k + 1] @ vt[..., k : k + 1, :]
        g = d * g
    elif ord in (1, -1, np.inf, -np.inf):
        over = -2 if ord in (1, -1) else -1
        sums = np.sum(np.abs(xm), axis=over, keepdims=True)
        pick = np.max(sums, axis=-1 if over == -2 else -2, keepdims=True) if ord in (
            1, np.inf) else np.min(sums, axis=-1 if over == -2 else -2, keepdims=True)
        chosen = sums == pick
        g = d * np.sign(xm) * chosen / np.sum(chosen, axis=(-2, -1), keepdims=True)
    else:
        raise UnsupportedCaseError(f"srcgrad does not differentiate the matrix norm ord={ord!r}")
    return np.moveaxis(g, (-2, -1), (rows, cols))


def norm_grad(dy, x, y, ord=None, axis=None, keepdims=False):
    """The adjoint of ``np.linalg.norm`` for every vector and matrix ``ord``.

    At zero the 2-norm's gradient is 0; ties of the inf-norms split the gradient equally.
    """
    if np.ndim(x) == 0:
        return _like(dy * np.sign(x), x)
    if isinstance(axis, int):
        axis = (axis,)
    if axis is None and ord is not None and np.ndim(x) == 2:
        axis = (0, 1)
    if axis is not None and len(axis) == 2:
        return _matrix_norm_grad(dy, x, y, ord, axis, keepdims)
    if axis is None and ord not in (None, 2):
        axis = (0,)
    return _vector_norm_grad(dy, x, y, ord, axis, keepdims)


def vector_norm_grad(dy, x, y, axis=None, keepdims=False, ord=2):
    """The adjoint of ``np.linalg.vector_norm`` (any axes, as one vector)."""
    return _vector_norm_grad(dy, x, y, ord, axis, keepdims)


def matrix_norm_grad(dy, x, y, keepdims=False, ord="fro"):
    """The adjoint of ``np.linalg.matrix_norm`` over the last two axes."""
    return _matrix_norm_grad(dy, x, y, ord, (-2, -1), keepdims)
