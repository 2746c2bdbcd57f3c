"""Helpers that the SciPy rule templates call (``rules/scipy_rules.py`` passes them via
``namespace=``).

Each helper computes one adjoint or tangent that does not fit in a one-line template: the
structure of a matrix a solver reads, the weights of a ``logsumexp``, the block-matrix Fréchet
derivative of ``expm`` (``odeint``'s are in ``odeint.py``). They are plain NumPy/SciPy, imported
only when SciPy is.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.signal
import scipy.special

from ..errors import NoRuleError
from .linalg import cholesky_jvp, cholesky_vjp, eigh_jvp, eigh_vjp
from .shapes import by_source, mT, unbroadcast


def no_gradient(function, param):
    """Raised by generated code where a rule knows no derivative: never a silent zero."""
    raise NoRuleError(
        f"srcgrad has no derivative of {function} with respect to `{param}`; pass it as a "
        f"constant (or wrap it in srcgrad.stop_gradient) to differentiate the other arguments"
    )


# --- scipy.special ------------------------------------------------------------------------------


@by_source
def _expand_reduced(v, ndim, axis, keepdims):
    """``v`` (the result of a reduction over ``axis``) with the reduced axes restored as size 1."""
    v = np.asarray(v)
    if axis is None:
        return np.reshape(v, (1,) * ndim)
    if keepdims:
        return v
    return np.expand_dims(v, _positive_axes(axis, ndim))


def _positive_axes(axis, ndim):
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % ndim for a in axes)


@by_source
def _logsumexp_weights(a, y, axis, b, keepdims):
    """``exp(a - logsumexp(a))`` over the broadcast shape of ``a`` and ``b``."""
    ndim = np.ndim(a) if b is None else max(np.ndim(a), np.ndim(b))
    return np.exp(np.asarray(a) - _expand_reduced(y, ndim, axis, keepdims)), ndim


@by_source
def logsumexp_vjp(dy, a, y, axis=None, b=None, keepdims=False, return_sign=False, wrt="a"):
    """The adjoint of ``logsumexp(a, axis, b, keepdims)`` with respect to ``a`` or ``b``:
    ``dy * b * exp(a - y)`` and ``dy * exp(a - y)``, summed back to each operand's shape."""
    if return_sign:
        no_gradient("scipy.special.logsumexp(..., return_sign=True)", wrt)
    w, ndim = _logsumexp_weights(a, y, axis, b, keepdims)
    g = _expand_reduced(dy, ndim, axis, keepdims) * w
    if wrt == "b":
        return unbroadcast(g, b)
    return unbroadcast(g if b is None else g * b, a)


@by_source
def logsumexp_jvp(t, a, y, axis=None, b=None, keepdims=False, return_sign=False, wrt="a"):
    """The tangent of ``logsumexp`` along the tangent ``t`` of ``a`` (or of ``b``)."""
    if return_sign:
        no_gradient("scipy.special.logsumexp(..., return_sign=True)", wrt)
    w, _ = _logsumexp_weights(a, y, axis, b, keepdims)
    if wrt == "a" and b is not None:
        w = w * b
    out = np.sum(t * w, axis=axis, keepdims=keepdims)
    return out if np.ndim(y) else out[()]


# --- scipy.linalg -------------------------------------------------------------------------------

_SYMMETRIC = {"sym", "her", "pos", "symmetric", "hermitian", "positive definite"}


@by_source
def structure(g, a, assume_a=None):
    """``g`` projected onto the entries a solver with ``assume_a`` reads from ``a``.

    Symmetric solvers read one triangle; their gradient is the symmetric one (the convention of
    ``numpy.linalg.cholesky``: exact for perturbations that keep ``a`` symmetric). Triangular,
    diagonal and tridiagonal solvers read only their band: the gradient elsewhere is zero. A
    banded solver finds its band from the values, so it reads every entry.
    """
    if assume_a in _SYMMETRIC:
        return 0.5 * (g + mT(g))
    if assume_a == "upper triangular":
        return np.triu(g)
    if assume_a == "lower triangular":
        return np.tril(g)
    if assume_a == "diagonal":
        return g * np.eye(np.shape(a)[-1])
    if assume_a == "tridiagonal":
        return np.triu(np.tril(g, 1), -1)
    # "banded": SciPy finds the band from the values of `a`, so an entry outside it, made
    # nonzero, widens the band and is read: the solve is that of the whole matrix
    return g


@by_source
def _outer_last(g, x):
    """``g x^T`` for matrices, ``outer(g, x)`` for vectors (right-hand sides of a solve)."""
    if np.ndim(x) == np.ndim(g) and np.ndim(x) >= 2:
        return g @ mT(x)
    return np.asarray(g)[..., :, None] * np.asarray(x)[..., None, :]


def _transposed(trans):
    return trans in (1, 2, "T", "C")


@by_source
def solve_triangular_vjp(dy, a, b, y, trans=0, lower=False, unit_diagonal=False, wrt=0):
    """The adjoint of ``solve_triangular``: only the triangle read from ``a`` gets gradient."""
    g = scipy.linalg.solve_triangular(
        a, dy, trans=0 if _transposed(trans) else 1, lower=lower, unit_diagonal=unit_diagonal
    )
    if wrt == 1:
        return g
    ga = -_outer_last(g, y)
    if _transposed(trans):
        ga = mT(ga)
    ga = np.tril(ga) if lower else np.triu(ga)
    if unit_diagonal:
        ga = ga - ga * np.eye(np.shape(a)[-1])
    return ga


@by_source
def solve_triangular_jvp(a, y, da, trans=0, lower=False, unit_diagonal=False):
    """The tangent of ``x = solve_triangular(a, b)`` along ``da``: ``-op(a)^-1 op(da) x``."""
    da = np.tril(da) if lower else np.triu(da)
    if unit_diagonal:
        da = da - da * np.eye(np.shape(a)[-1])
    op = mT(da) if _transposed(trans) else da
    rhs = op @ y
    return -scipy.linalg.solve_triangular(
        a, rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal
    )


@by_source
def linalg_solve_vjp(dy, a, b, y, lower=False, assume_a=None, transposed=False, wrt=0):
    """The adjoint of ``x = scipy.linalg.solve(a, b)``: ``g = op(a)^-T dy``, ``da = -g x^T``."""
    g = scipy.linalg.solve(a, dy, lower=lower, assume_a=assume_a, transposed=not transposed)
    if wrt == 1:
        return g
    ga = -_outer_last(g, y)
    return structure(mT(ga) if transposed else ga, a, assume_a)


@by_source
def linalg_solve_jvp(a, y, da, lower=False, assume_a=None, transposed=False):
    """The tangent of ``x = scipy.linalg.solve(a, b)`` along ``da``: ``-op(a)^-1 op(da) x``."""
    da = structure(da, a, assume_a)
    op = mT(da) if transposed else da
    return -scipy.linalg.solve(
        a, op @ y, lower=lower, assume_a=assume_a, transposed=transposed
    )


@by_source
def cholesky_grad(dy, y, lower=False):
    """The adjoint of ``scipy.linalg.cholesky`` (symmetric convention, like NumPy's)."""
    return cholesky_vjp(dy, y, upper=not lower)


@by_source
def cholesky_tangent(y, da, lower=False):
    """The tangent of ``scipy.linalg.cholesky``."""
    return cholesky_jvp(y, da, upper=not lower)


@by_source
def cho_factor_vjp(dy, y, a, lower=False):
    """The adjoint of ``c, lower = cho_factor(a)``.

    ``c`` holds the factor in one triangle and ``a``'s other strict triangle unchanged (the part
    ``cho_solve`` never reads); the factor's gradient follows the symmetric convention.
    """
    dc = dy[0]
    if dc is None:
        return np.zeros(np.shape(a))
    c = y[0]
    if lower:
        return cholesky_vjp(np.tril(dc), np.tril(c), upper=False) + np.triu(dc, 1)
    return cholesky_vjp(np.triu(dc), np.triu(c), upper=True) + np.tril(dc, -1)


@by_source
def cho_factor_jvp(y, da, lower=False):
    """The tangent of ``c, lower = cho_factor(a)``: ``(dc, None)``."""
    if lower:
        return (np.tril(cholesky_jvp(np.tril(y[0]), da, upper=False)) + np.triu(da, 1), None)
    return (np.triu(cholesky_jvp(np.triu(y[0]), da, upper=True)) + np.tril(da, -1), None)


@by_source
def _symmetric_solve_grad(g, x):
    """The symmetric gradient of ``x = A^-1 b`` w.r.t. ``A`` given ``g = A^-1 dy``."""
    m = _outer_last(g, x)
    return -0.5 * (m + mT(m))


@by_source
def cho_solve_vjp_c(dy, c_and_lower, y):
    """The adjoint of ``x = cho_solve((c, lower), b)`` with respect to the factor ``c``.

    ``A = L L^T`` (or ``U^T U``): the symmetric gradient in ``A`` is pulled back to the triangle
    of ``c`` that ``cho_solve`` reads.
    """
    c, lower = c_and_lower
    g = scipy.linalg.cho_solve(c_and_lower, dy)
    ga = _symmetric_solve_grad(g, y)
    if lower:
        return (np.tril(2 * ga @ np.tril(c)), None)
    return (np.triu(2 * np.triu(c) @ ga), None)


@by_source
def cho_solve_jvp_c(dc_and_lower, c_and_lower, y):
    """The tangent of ``cho_solve((c, lower), b)`` along the tangent of ``c``."""
    c, lower = c_and_lower
    dc = dc_and_lower[0]
    if lower:
        f, df = np.tril(c), np.tril(dc)
        da = df @ mT(f) + f @ mT(df)
    else:
        f, df = np.triu(c), np.triu(dc)
        da = mT(df) @ f + mT(f) @ df
    return -scipy.linalg.cho_solve(c_and_lower, da @ y)


def transpose_code(trans):
    """The ``trans`` argument of the transposed solve (``lu_solve``, ``solve_triangular``)."""
    return 0 if _transposed(trans) else 1


@by_source
def _block_upper(top_left, top_right):
    """``[[top_left, top_right], [0, top_left]]`` over the last two axes."""
    zeros = np.zeros(np.shape(top_left))
    top = np.concatenate((top_left, top_right), axis=-1)
    bottom = np.concatenate((zeros, top_left), axis=-1)
    return np.concatenate((top, bottom), axis=-2)


@by_source
def expm_frechet_block(a, e):
    """The Fréchet derivative of ``expm`` at ``a`` along ``e``: the top-right block of
    ``expm([[a, e], [0, a]])``."""
    n = np.shape(a)[-1]
    return scipy.linalg.expm(_block_upper(a, e))[..., :n, n:]


@by_source
def expm_vjp(dy, a):
    """The adjoint of ``expm``: the Fréchet derivative at ``a^T`` along ``dy``."""
    return expm_frechet_block(mT(a), dy)


@by_source
def eigh_grad(dy, y, a, lower=True, eigvals_only=False, subset_by_index=None,
              subset_by_value=None):
    """The adjoint of ``scipy.linalg.eigh`` (symmetric convention; distinct eigenvalues)."""
    if eigvals_only:
        _, v = scipy.linalg.eigh(
            a, lower=lower, subset_by_index=subset_by_index, subset_by_value=subset_by_value
        )
        g = v @ (np.asarray(dy)[..., None] * mT(v))
        return 0.5 * (g + mT(g))
    if subset_by_index is not None or subset_by_value is not None:
        no_gradient("scipy.linalg.eigh with a subset of eigenvectors", "a")
    return eigh_vjp(dy, y)


@by_source
def eigh_tangent(y, a, da, lower=True, eigvals_only=False, subset_by_index=None,
                 subset_by_value=None):
    if eigvals_only:
        _, v = scipy.linalg.eigh(
            a, lower=lower, subset_by_index=subset_by_index, subset_by_value=subset_by_value
        )
        m = mT(v) @ (0.5 * (da + mT(da))) @ v
        return np.diagonal(m, axis1=-2, axis2=-1)
    if subset_by_index is not None or subset_by_value is not None:
        no_gradient("scipy.linalg.eigh with a subset of eigenvectors", "a")
    return eigh_jvp(y, da)


# --- scipy.signal -------------------------------------------------------------------------------


@by_source
def _full_cotangent(dy, shape1, shape2):
    """``dy`` of a convolution placed, centered, in a cotangent of the ``'full'`` result (the
    ``'same'`` and ``'valid'`` results are centered crops of the full one)."""
    full = tuple(n + m - 1 for n, m in zip(shape1, shape2))
    dy = np.asarray(dy)
    if dy.shape == full:
        return dy
    starts = [(f - d) // 2 for f, d in zip(full, dy.shape)]
    return np.pad(dy, [(s, f - d - s) for s, f, d in zip(starts, full, dy.shape)])


@by_source
def convolve_grad(dy, in1, in2, mode="full", method="auto", wrt=0):
    """The adjoint of ``scipy.signal.convolve(in1, in2, mode)`` w.r.t. ``in1`` (0) or ``in2``."""
    g = _full_cotangent(dy, np.shape(in1), np.shape(in2))
    other = in2 if wrt == 0 else in1
    # SciPy's correlate conjugates its second operand; the adjoint (in the convention of
    # generated code, runtime/complex_values.py) correlates with the operand itself
    return scipy.signal.correlate(g, np.conj(other), mode="valid", method=method)


@by_source
def _flip(a):
    return np.flip(a, axis=tuple(range(np.ndim(a))))


@by_source
def correlate_grad(dy, in1, in2, mode="full", method="auto", wrt=0):
    """The adjoint of ``scipy.signal.correlate``: ``correlate(a, v) = convolve(a, conj(flip(v)))``
    (a conjugate's cotangent is the conjugate of the cotangent)."""
    g = convolve_grad(dy, in1, np.conj(_flip(in2)), mode, method, wrt)
    return g if wrt == 0 else np.conj(_flip(g))


# --- scipy.stats --------------------------------------------------------------------------------


def _dirichlet_filled(x, alpha):
    """Whether ``x`` gives only K - 1 components (the last is ``1 - sum``). No derivative."""
    return np.shape(x)[0] == np.shape(alpha)[0] - 1


@by_source
def _dirichlet_full(x, alpha):
    """``x`` with its last component filled in (``1 - sum``) when only K - 1 are given."""
    if _dirichlet_filled(x, alpha):
        return np.concatenate((x, 1 - np.sum(x, axis=0, keepdims=True)), axis=0), True
    return x, False


@by_source
def _column(v, ndim):
    return np.reshape(v, np.shape(v) + (1,) * (ndim - 1))


@by_source
def dirichlet_vjp(dy, x, alpha, wrt="x"):
    """The adjoint of ``dirichlet.logpdf(x, alpha)`` (components along the first axis of x).

    Plain NumPy/SciPy code marked ``by_source``: its derivatives are derivatives of this code."""
    x = np.asarray(x)
    alpha = np.asarray(alpha)
    xf, filled = _dirichlet_full(x, alpha)
    if wrt == "alpha":
        psi = scipy.special.digamma(alpha) - scipy.special.digamma(np.sum(alpha))
        logx = np.reshape(np.log(xf), (np.shape(xf)[0], -1))
        return logx @ np.ravel(dy * np.ones(np.shape(xf)[1:])) - psi * np.sum(dy)
    g = _column(alpha - 1, np.ndim(xf)) / xf * dy
    if filled:
        g = g[:-1] - g[-1:]
    return g


@by_source
def dirichlet_jvp(t, x, alpha, wrt="x"):
    """The tangent of ``dirichlet.logpdf(x, alpha)`` along the tangent ``t`` of one argument."""
    x = np.asarray(x)
    alpha = np.asarray(alpha)
    xf, filled = _dirichlet_full(x, alpha)
    if wrt == "alpha":
        psi = scipy.special.digamma(alpha) - scipy.special.digamma(np.sum(alpha))
        return np.tensordot(t, np.log(xf) - _column(psi, np.ndim(xf)), axes=(0, 0))
    if filled:
        t = np.concatenate((t, -np.sum(t, axis=0, keepdims=True)), axis=0)
    return np.sum(_column(alpha - 1, np.ndim(xf)) / xf * t, axis=0)


def mvn_layout(x, mean, cov):
    """SciPy's view of a multivariate normal call ``(x, mean, cov)``: ``(d, shape, batch, out)``
    -- the dimension, the shape of the samples ``(..., d)`` that ``x`` is read as, the shape of
    one value per sample (``(..., 1)``) and the shape of the (squeezed) result. No derivative."""
    xshape = np.shape(x)
    if mean is not None:
        d = int(np.size(mean))
    else:
        d = np.shape(cov)[-1] if np.ndim(cov) else (xshape[-1] if xshape else 1)
    if not xshape:
        shape = (1,)
    elif len(xshape) == 1:
        shape = (xshape[0], 1) if d == 1 else (1, xshape[0])
    else:
        shape = tuple(xshape)
    return d, shape, shape[:-1] + (1,), tuple(n for n in shape[:-1] if n != 1)


@by_source
def _mvn_cov(cov, d):
    """The full ``d x d`` covariance of a scalar, diagonal (1-d) or full ``cov``."""
    if np.ndim(cov) == 0:
        return cov * np.eye(d)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return cov


@by_source
def _mvn_solved(x, mean, cov):
    """``(c, s)``: the full covariance and ``s = c^-1 (x - mean)`` per sample."""
    d, shape, _, _ = mvn_layout(x, mean, cov)
    r = np.reshape(x, shape)
    if mean is not None:
        r = r - np.reshape(mean, (d,))
    c = _mvn_cov(cov, d)
    s = np.reshape(mT(np.linalg.solve(c, mT(np.reshape(r, (-1, d))))), shape)
    return c, s


@by_source
def _reduce_cov(g, cov):
    """A symmetric gradient in the full covariance, in the form ``cov`` was given."""
    if np.ndim(cov) == 0:
        return np.trace(g)
    if np.ndim(cov) == 1:
        return np.diagonal(g) * 1.0  # a fresh array, not a read-only view
    return g


# The helpers of multivariate_normal are plain NumPy code marked ``by_source``: their derivatives
# are derivatives of this code, at every order.


@by_source
def mvn_vjp(dy, x, mean, cov, wrt="x"):
    """The adjoint of ``multivariate_normal.logpdf(x, mean, cov)``: with ``r = x - mean`` and
    ``s = cov^-1 r``, ``dx = -s``, ``dmean = s``, ``dcov = (s s^T - cov^-1) / 2`` per sample."""
    d, shape, batch, _ = mvn_layout(x, mean, cov)
    c, s = _mvn_solved(x, mean, cov)
    w = np.reshape(dy, batch)
    if wrt == "x":
        return np.reshape(-w * s, np.shape(x))
    if wrt == "mean":
        return np.reshape(np.sum(np.reshape(w * s, (-1, d)), axis=0), np.shape(mean))
    flat_s = np.reshape(s, (-1, d))
    flat_w = np.reshape(w, (-1, 1))
    g = 0.5 * (mT(flat_s * flat_w) @ flat_s - np.sum(flat_w) * np.linalg.inv(c))
    return _reduce_cov(g, cov)


@by_source
def mvn_jvp(t, x, mean, cov, wrt="x"):
    """The tangent of ``multivariate_normal.logpdf`` along the tangent ``t`` of one argument."""
    d, shape, _, out_shape = mvn_layout(x, mean, cov)
    c, s = _mvn_solved(x, mean, cov)
    if wrt == "x":
        out = -np.sum(s * np.reshape(t, shape), axis=-1)
    elif wrt == "mean":
        out = np.sum(s * np.reshape(t, (d,)), axis=-1)
    else:
        dc = _mvn_cov(t, d)
        dc = 0.5 * (dc + mT(dc))
        out = 0.5 * (np.einsum("...i,ij,...j->...", s, dc, s) - np.trace(np.linalg.solve(c, dc)))
    return np.reshape(out, out_shape)
