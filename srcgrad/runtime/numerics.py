"""Adjoints and tangents of NumPy's numerical methods: ``np.gradient``, ``np.trapezoid``,
``np.interp``, ``np.polyval``/``np.polyfit``, ``np.cov``/``np.corrcoef``, ``np.select``,
``np.rollaxis``, the running extremes of ``np.maximum.accumulate``, ``np.linalg.eigvals`` and
``np.linalg.cond``.

Linear functions come in transposed pairs (``gradient_vjp`` / ``gradient_jvp``, ``polyfit_grad`` /
``polyfit_tangent``): the rule of each helper is the other one, so derivatives of any order stay
inside the pair. The small integer and mask helpers (``interp_index``, ``accumulate_source``) carry
no gradient: what they compute is piecewise constant.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedCaseError
from .linalg import norm_grad
from .shapes import by_source, mT, unbroadcast

# --- np.gradient --------------------------------------------------------------------------------


def _gradient_axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(int(a) % ndim for a in axes)


def _gradient_spacings(spacings, count):
    given = [s for s in spacings if s is not None]
    if not given:
        return [1.0] * count
    if len(given) == 1 and np.ndim(given[0]) == 0:
        return given * count
    return given


def gradient_jvp(t, s0=None, s1=None, s2=None, s3=None, *, axis=None, edge_order=1):
    """``np.gradient`` of the tangent ``t`` with the call's spacings (it is linear in ``f``)."""
    spacings = [s for s in (s0, s1, s2, s3) if s is not None]
    return np.gradient(t, *spacings, axis=axis, edge_order=edge_order)


def gradient_vjp(g, f, s0=None, s1=None, s2=None, s3=None, *, axis=None, edge_order=1):
    """The adjoint of ``np.gradient(f, s0, ..., axis=axis, edge_order=edge_order)``: ``g`` is one
    cotangent per differentiated axis (one array for one axis), None where none flowed."""
    shape = np.shape(f)
    axes = _gradient_axes(len(shape), axis)
    spacings = _gradient_spacings((s0, s1, s2, s3), len(axes))
    cotangents = [g] if len(axes) == 1 else list(g)
    out = np.zeros(shape)
    for ax, h, c in zip(axes, spacings, cotangents):
        if c is not None:
            out = out + _difference_transpose(np.asarray(c) + 0.0, h, ax, edge_order)
    return out


def _difference_transpose(c, h, axis, edge_order):
    """The transpose of np.gradient along one axis, applied to ``c``.

    Each output point i is a combination of at most three consecutive inputs (its window), so
    np.gradient of the three combs ``j % 3 == r`` gives every coefficient c[i, j] exactly: the
    comb of j's residue, read at i.
    """
    c = np.moveaxis(c, axis, -1)
    n = c.shape[-1]
    i = np.arange(n)
    combs = (i[None, :] % 3 == np.arange(3)[:, None]).astype(float)
    coefficients = np.gradient(combs, h, axis=1, edge_order=edge_order)
    start = np.clip(i - 1, 0, None)
    end = np.clip(i + 1, None, n - 1)
    start[-1], end[0] = n - 1 - edge_order, edge_order
    out = np.zeros(c.shape, dtype=c.dtype)
    for d in range(-2, 3):
        rows = i[(start <= i + d) & (i + d <= end)]
        cols = rows + d
        out[..., cols] += coefficients[cols % 3, rows] * c[..., rows]
    return np.moveaxis(out, -1, axis)


# --- np.trapezoid ---------------------------------------------------------------------------------


def _along(a_ndim, axis, n):
    shape = [1] * a_ndim
    shape[axis] = n
    return shape


def _pad_axis(v, axis, before, after):
    width = [(0, 0)] * np.ndim(v)
    width[axis] = (before, after)
    return np.pad(v, width)


def scalar_spacing(dx):
    """True for a scalar ``dx`` of ``np.trapezoid`` (a 0-d array too); an array ``dx`` (NumPy
    multiplies it into the averaged samples, broadcast) is refused where its gradient or tangent
    is taken: the rules treat ``dx`` as one number."""
    if np.ndim(dx) != 0:
        raise UnsupportedCaseError(
            "srcgrad differentiates np.trapezoid with respect to a scalar `dx` only; got an "
            f"array of shape {np.shape(dx)}"
        )
    return True


def trapezoid_grad(g, a, x=None, dx=1.0, axis=-1):
    """The adjoint of ``np.trapezoid(a, x, dx, axis)`` with respect to ``a``: the cotangent
    spread with the rule's weights (half the spacing on each side of a point). Linear in ``g``,
    and in ``x`` (or ``dx``)."""
    ndim = np.ndim(a)
    axis = axis % ndim
    n = np.shape(a)[axis]
    if x is None:
        d = np.full(_along(ndim, axis, max(n - 1, 0)), dx, dtype=float)
    elif np.ndim(x) == 1:
        d = np.reshape(np.diff(x), _along(ndim, axis, n - 1))
    else:
        d = np.diff(x, axis=axis)
    weights = 0.5 * (_pad_axis(d, axis, 1, 0) + _pad_axis(d, axis, 0, 1))
    return unbroadcast(np.expand_dims(g, axis) * weights, a)


def trapezoid_grad_x(g, a, x, axis=-1):
    """The adjoint of ``np.trapezoid(a, x, axis=axis)`` with respect to the sample points ``x``
    (the integral is linear in them: this does not depend on x's value). Bilinear in g and a."""
    a = np.asarray(a)
    axis = axis % a.ndim
    moved = np.moveaxis(a, axis, -1)
    mean = np.moveaxis(0.5 * (moved[..., 1:] + moved[..., :-1]), -1, axis)
    gd = np.expand_dims(g, axis) * mean
    gx = _pad_axis(gd, axis, 1, 0) - _pad_axis(gd, axis, 0, 1)
    if np.ndim(x) == 1:
        n = np.shape(x)[0]
        return np.sum(np.reshape(np.moveaxis(gx, axis, -1), (-1, n)), axis=0)
    return unbroadcast(gx, x)


# --- np.interp ------------------------------------------------------------------------------------


def interp_index(x, xp, side, period=None):
    """The knot to the left (``side`` 0) or right (1) of each point of ``np.interp(x, xp, fp)``;
    both the first knot below the range and the last above it. At a knot, the segment to its
    right (the last knot: to its left)."""
    if period is not None:
        raise UnsupportedCaseError("srcgrad differentiates np.interp without `period` only")
    xp = np.asarray(xp)
    n = xp.shape[0]
    x = np.asarray(x)
    lo = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(n - 2, 0))
    index = lo + side if n > 1 else lo
    index = np.where(x < xp[0], 0, index)
    return np.where((x > xp[-1]) | np.isnan(x), n - 1, index)


def interp_keep(x, xp, left=None, right=None):
    """1.0 where ``np.interp`` reads fp (inside the range, or outside it without left/right)."""
    x, xp = np.asarray(x), np.asarray(xp)
    below = (x < xp[0]) & (left is not None)
    above = (x > xp[-1]) & (right is not None)
    return 1.0 - (below | above)


def interp_outside(x, xp, side):
    """1.0 where ``x`` is below the range of ``xp`` (``side`` -1) or above it (1)."""
    x, xp = np.asarray(x), np.asarray(xp)
    return 1.0 * (x < xp[0]) if side < 0 else 1.0 * (x > xp[-1])


# --- np.polyval / np.polyfit ---------------------------------------------------------------------


def poly_length(p):
    """The number of coefficients of the 1-D polynomial ``p`` (srcgrad differentiates those)."""
    if np.ndim(p) != 1:
        raise UnsupportedCaseError(
            f"srcgrad differentiates np.polyval with 1-D coefficients only; got shape {np.shape(p)}"
        )
    return np.shape(p)[0]


def _polyfit_only_coefficients(full, cov):
    if full or cov is not False:
        raise UnsupportedCaseError(
            "srcgrad differentiates np.polyfit's coefficients only (full=False, cov=False)"
        )


def polyfit_tangent(x, t, deg, rcond=None, full=False, w=None, cov=False):
    """The tangent of ``np.polyfit(x, y, deg)`` along the tangent ``t`` of ``y``: it is linear
    in ``y``."""
    _polyfit_only_coefficients(full, cov)
    return np.polyfit(x, t, deg, rcond=rcond, w=w)


def polyfit_grad(g, x, deg, rcond=None, full=False, w=None, cov=False):
    """The adjoint of ``np.polyfit(x, y, deg)`` with respect to ``y``: the transpose of the
    least-squares solution NumPy computes (scaled Vandermonde matrix, the same rank cutoff)."""
    _polyfit_only_coefficients(full, cov)
    x = np.asarray(x) + 0.0
    if rcond is None:
        rcond = len(x) * np.finfo(x.dtype).eps
    lhs = np.vander(x, int(deg) + 1)
    if w is not None:
        lhs = lhs * np.asarray(w)[:, None]
    scale = np.sqrt(np.sum(lhs * lhs, axis=0))
    u, s, vt = np.linalg.svd(lhs / scale, full_matrices=False)
    keep = s > rcond * s[0]
    g = np.asarray(g) + 0.0
    column = (slice(None),) + (None,) * (g.ndim - 1)
    inner = (vt[keep] @ (g / scale[column])) / s[keep][column]
    out = u[:, keep] @ inner
    return out if w is None else out * np.asarray(w)[column]


# --- np.cov / np.corrcoef ---------------------------------------------------------------------


def _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights):
    """The variables as rows (m's, then y's), the weights (None), the divisor, and how many
    rows are m's."""
    if np.iscomplexobj(m) or np.iscomplexobj(y):
        raise UnsupportedCaseError(
            "srcgrad differentiates np.cov and np.corrcoef of real data only"
        )
    rows = []
    for v in (m, y):
        if v is not None:
            v = np.array(v, ndmin=2, dtype=float)
            rows.append(v.T if not rowvar and v.shape[0] != 1 else v)
    X = np.concatenate(rows, axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    if fweights is not None:
        w = np.asarray(fweights, dtype=float)
    if aweights is not None:
        w = np.asarray(aweights, dtype=float) if w is None else w * aweights
    if w is None:
        fact = X.shape[1] - ddof
    else:
        w_sum = np.sum(w)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * np.sum(w * aweights) / w_sum
    return X, w, max(fact, 0.0), rows[0].shape[0]


def _centered(X, w):
    return X - np.average(X, axis=1, weights=w)[:, None]


def _unstack(G, m, other, rowvar, count, wrt):
    part = G[:count] if wrt == 0 else G[count:]
    v = m if wrt == 0 else other
    if not rowvar and np.array(v, ndmin=2).shape[0] != 1:
        part = part.T
    return np.reshape(part, np.shape(v))


def cov_vjp(g, m, other=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
            wrt=0):
    """The adjoint of ``np.cov(m, other)`` with respect to ``m`` (``wrt`` 0) or ``other`` (1):
    ``(G + G^T) Xc W / fact`` for the centered variables Xc (the centering drops out)."""
    X, w, fact, count = _cov_parts(m, other, rowvar, bias, ddof, fweights, aweights)
    k = X.shape[0]
    G = np.reshape(np.asarray(g, dtype=float), (k, k))
    Xc = _centered(X, w)
    full = (G + G.T) @ (Xc if w is None else Xc * w) / fact
    return _unstack(full, m, other, rowvar, count, wrt)


def cov_jvp(m, other, dm, dother, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The tangent of ``np.cov(m, other)`` along ``dm`` and ``dother`` (None: inactive)."""
    X, w, fact, count = _cov_parts(m, other, rowvar, bias, ddof, fweights, aweights)
    dm = np.zeros(np.shape(m)) if dm is None else dm
    dother = None if other is None else np.zeros(np.shape(other)) if dother is None else dother
    dX, _, _, _ = _cov_parts(dm, dother, rowvar, bias, ddof, None, None)
    Xc, dXc = _centered(X, w), _centered(dX, w)
    half = dXc @ (Xc if w is None else Xc * w).T / fact
    return np.squeeze(half + half.T)


# corrcoef's helpers are plain NumPy code marked ``by_source``, calling np.cov and cov_vjp /
# cov_jvp (which have rules): their derivatives are derivatives of this code, at every order.


@by_source
def _corr_parts(x, other, rowvar):
    c = np.cov(x, other, rowvar)
    if np.ndim(c) == 0:
        return c, None
    return c, np.sqrt(np.diag(c))


@by_source
def corrcoef_vjp(g, x, other=None, rowvar=True, wrt=0):
    """The adjoint of ``np.corrcoef``, through that of ``np.cov``: ``R = C / (s s^T)`` with ``s``
    the standard deviations, the square roots of C's diagonal."""
    c, s = _corr_parts(x, other, rowvar)
    if s is None:  # one variable: R = C / C = 1
        if wrt == 0:
            return np.zeros(np.shape(x))
        return np.zeros(np.shape(other))
    outer = np.outer(s, s)
    r = c / outer
    gc = g / outer
    gs = -(np.sum(g * r, axis=1) + np.sum(g * r, axis=0)) / s
    gc = gc + np.diag(gs / (2 * s))
    return cov_vjp(gc, x, other, rowvar, wrt=wrt)


@by_source
def corrcoef_jvp(x, other, dx, dother, rowvar=True):
    """The tangent of ``np.corrcoef(x, other)`` along ``dx`` and ``dother`` (None: inactive)."""
    c, s = _corr_parts(x, other, rowvar)
    if s is None:
        return 0.0 * c
    dc = cov_jvp(x, other, dx, dother, rowvar)
    outer = np.outer(s, s)
    scaled = np.diag(dc) / (2 * s * s)
    return dc / outer - c / outer * (np.reshape(scaled, (-1, 1)) + np.reshape(scaled, (1, -1)))


# --- np.select ----------------------------------------------------------------------------------


def _select_masks(condlist):
    """Where each choice is taken (the first true condition), and where the default is."""
    taken = np.zeros(np.broadcast_shapes(*(np.shape(c) for c in condlist)), dtype=bool)
    masks = []
    for c in condlist:
        masks.append(np.asarray(c, dtype=bool) & ~taken)
        taken = taken | c
    return masks, ~taken


def select_default_mask(condlist):
    """1.0 where ``np.select(condlist, ...)`` gives its default."""
    return 1.0 * _select_masks(condlist)[1]


def select_choice_grad(g, condlist, choicelist):
    """The adjoint of ``np.select`` with respect to each choice: ``g`` where it is taken (None
    for a choice that is None: a tangent not given)."""
    masks, _ = _select_masks(condlist)
    return [
        None if choice is None else unbroadcast(g * mask, choice)
        for mask, choice in zip(masks, choicelist)
    ]


def select_tangent(condlist, tangents, like):
    """The tangent of ``np.select`` along the choices' tangents (None: inactive)."""
    masks, _ = _select_masks(condlist)
    out = np.zeros(np.shape(like))
    for mask, t in zip(masks, tangents):
        if t is not None:
            out = out + mask * t
    return out


# --- axes and running extremes ------------------------------------------------------------------


def rollaxis_destination(ndim, axis, start):
    """Where ``np.rollaxis(a, axis, start)`` puts ``axis``: ``np.moveaxis(a, axis, <this>)``."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    return start - 1 if axis < start else start


def accumulate_source(a, y, axis, greater):
    """For ``np.maximum.accumulate`` (``greater``; np.minimum: not), the index along ``axis`` of
    the element each result comes from: the first that reached the running extreme (a tie goes
    to the earlier element, as ``np.maximum`` gives a tie to its first operand; a NaN is taken
    where it appears)."""
    a, y = np.moveaxis(np.asarray(a), axis, -1), np.moveaxis(np.asarray(y), axis, -1)
    before = y[..., :-1]
    later = a[..., 1:]
    beats = later > before if greater else later < before
    beats = beats | (np.isnan(later) & ~np.isnan(before))
    n = a.shape[-1]
    index = np.where(beats, np.arange(1, n), 0)
    start = np.zeros(a.shape[:-1] + (1,), dtype=int)
    source = np.maximum.accumulate(np.concatenate([start, index], axis=-1), axis=-1)
    return np.moveaxis(source, -1, axis)


# --- np.linalg.eigvals / np.linalg.cond ---------------------------------------------------------


def eig_vectors(a, values):
    """Eigenvectors of ``a`` (columns) in the order of the eigenvalues ``values`` NumPy returned
    (distinct eigenvalues: where they repeat, a derivative does not exist).

    Its rule differentiates them in ``a`` (``values`` only orders them) in the gauge
    ``diag(V^-1 dV) = 0``, each column changing only across the others: only expressions that
    do not change when the columns are scaled (``V^-T diag(g) V^T``) may be differentiated
    through it.
    """
    w, v = np.linalg.eig(a)
    if not np.allclose(w, values):
        order = np.argmin(np.abs(np.asarray(values)[..., :, None] - w[..., None, :]), axis=-1)
        v = np.take_along_axis(v, order[..., None, :], axis=-1)
    return v


@by_source
def _eig_gaps(values):
    """``F[i, j] = 1 / (values[j] - values[i])`` off the diagonal, 0 on it."""
    diff = np.expand_dims(values, -2) - np.expand_dims(values, -1)
    eye = np.eye(np.shape(values)[-1]) > 0.5
    return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


@by_source
def eig_vectors_jvp(a, v, values, da):
    """The tangent of :func:`eig_vectors` along ``da``: ``V (F o (V^-1 da V))``."""
    inner = np.linalg.inv(v) @ da @ v
    return v @ (_eig_gaps(values) * inner)


@by_source
def eig_vectors_vjp(w, a, v, values):
    """The adjoint of :func:`eig_vectors` (the holomorphic transpose of its tangent):
    ``V^-T (F o (V^T w)) V^T``; for a real ``a``, its real part."""
    out = mT(np.linalg.inv(v)) @ (_eig_gaps(values) * (mT(v) @ w)) @ mT(v)
    if np.iscomplexobj(a):
        return out
    return np.real(out)


# eigvals' helpers are plain NumPy code marked ``by_source``, through eig_vectors and eigvals
# (which have rules): their derivatives are derivatives of this code, at every order.


@by_source
def eigvals_vjp(g, a, values):
    """The adjoint of ``np.linalg.eigvals``: ``V^-T diag(g) V^T`` with ``a = V diag(values) V^-1``,
    the holomorphic transpose; for a real ``a``, its real part (the gradient of the real and
    imaginary parts of the eigenvalues alike)."""
    v = eig_vectors(a, values)
    out = mT(np.linalg.inv(v)) @ (np.expand_dims(g, -1) * mT(v))
    if np.iscomplexobj(a):
        return out
    return np.real(out)


@by_source
def eigvals_jvp(a, values, da):
    """The tangent of ``np.linalg.eigvals``: the diagonal of ``V^-1 da V``."""
    v = eig_vectors(a, values)
    t = np.diagonal(np.linalg.inv(v) @ da @ v, axis1=-2, axis2=-1)
    if np.iscomplexobj(values):
        return t
    return np.real(t)


# cond's helpers are plain NumPy code marked ``by_source`` (through np.linalg.svd, inv and norm
# and norm_grad, which have rules): their derivatives are derivatives of this code, every order.


@by_source
def _cond_parts(x, p):
    inverse = np.linalg.inv(x)
    n1 = np.linalg.norm(x, p, axis=(-2, -1))
    n2 = np.linalg.norm(inverse, p, axis=(-2, -1))
    return inverse, n1, n2


@by_source
def _cond_svd_weights(s, p):
    """d(cond)/ds for the 2-norm condition number s_max / s_min (``p=-2``: its inverse)."""
    k = np.shape(s)[-1]
    first, last = np.eye(k)[0], np.eye(k)[k - 1]
    hi, lo = s[..., :1], s[..., k - 1:]
    if p == -2:
        return last / hi - first * lo / hi**2
    return first / lo - last * hi / lo**2


@by_source
def cond_vjp(g, x, p=None):
    """The adjoint of ``np.linalg.cond``: through the extreme singular values for ``p`` None, 2,
    -2 (they must be simple), else through ``norm(x, p) * norm(inv(x), p)``."""
    if p is None or p == 2 or p == -2:
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        ws = np.expand_dims(g, -1) * _cond_svd_weights(s, p)
        return (u * np.expand_dims(ws, -2)) @ vt
    inverse, n1, n2 = _cond_parts(x, p)
    axes = (-2, -1)
    direct = norm_grad(g * n2, x, n1, ord=p, axis=axes)
    through = norm_grad(g * n1, inverse, n2, ord=p, axis=axes)
    return direct - mT(inverse) @ through @ mT(inverse)


@by_source
def cond_jvp(x, dx, p=None):
    """The tangent of ``np.linalg.cond`` along ``dx``."""
    if p is None or p == 2 or p == -2:
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        ds = np.einsum("...ji,...jk,...ik->...i", u, dx, vt)
        return np.sum(_cond_svd_weights(s, p) * ds, axis=-1)
    inverse, n1, n2 = _cond_parts(x, p)
    axes = (-2, -1)
    one = np.ones(np.shape(n1))
    dn1 = np.sum(norm_grad(one, x, n1, ord=p, axis=axes) * dx, axis=axes)
    dinverse = -inverse @ dx @ inverse
    dn2 = np.sum(norm_grad(one, inverse, n2, ord=p, axis=axes) * dinverse, axis=axes)
    return dn1 * n2 + n1 * dn2
