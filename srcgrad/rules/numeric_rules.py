"""Rules for NumPy's numerical methods and ufunc methods (imported by numpy_rules.py).

``np.gradient``, ``np.trapezoid``, ``np.interp``, ``np.polyval``, ``np.polyfit``, ``np.unwrap``,
``np.cov``, ``np.corrcoef``, ``np.select``, ``np.rollaxis``, ``np.real_if_close`` and the
``reduce``/``accumulate`` methods of ``np.add``, ``np.multiply``, ``np.maximum``, ``np.minimum``.
Their helpers are in ``runtime/numerics.py``; where a template is written with NumPy functions
that have rules (``np.interp``'s, ``np.polyval``'s), it is differentiable again as it stands.

Conventions where the derivative is not unique:

* ``np.interp`` is piecewise linear: at a knot ``x == xp[k]`` the derivative with respect to
  ``x`` is the slope of the segment to its right (at the last knot, to its left), as in JAX;
  outside the range of ``xp`` it is 0. Not differentiated: ``xp`` and ``period`` (refused).
* ``np.unwrap`` adds multiples of ``period`` that are piecewise constant in ``p``: the derivative
  with respect to ``p`` is the identity (where a jump is exactly ``discont``, the one-sided one).
* ``np.maximum.accumulate`` (``minimum``): each running extreme comes from the first element that
  reached it: a tie goes to the earlier element, as ``np.maximum`` gives a tie to its first operand.
  ``np.maximum.reduce`` is ``np.max`` over axis 0 by default (ties split equally).
* ``np.trapezoid``'s ``dx`` is one number: the derivative with respect to an array ``dx`` (which
  NumPy multiplies into the averaged samples) is refused (``scalar_spacing``).
* ``np.gradient`` and ``np.polyfit`` are linear in ``f`` and ``y``; their spacings / sample points
  and weights are not differentiated (refused when they carry gradient).

Names: a template reads a parameter called ``y`` (``np.trapezoid``'s, ``np.cov``'s) as ``y_``
(``y`` is the result), and the tangent of ``x`` where ``dx`` is a parameter as ``d_x``.
"""

import numpy as np

from .. import runtime
from .registry import defrule, linear

_SPACINGS = "s0, s1, s2, s3"
_NO_SPACING = {
    s: "the derivative with respect to np.gradient's spacings is not implemented"
    for s in _SPACINGS.split(", ")
}

# --- finite differences, integrals, polynomials --------------------------------------------------
# np.gradient(f, *varargs): up to four spacings (scalars or coordinate arrays), one per axis.
linear(
    np.gradient,
    f"f, {_SPACINGS.replace(',', '=None,')}=None, *, axis=None, edge_order=1",
    vjp=f"gradient_vjp(dy, f, {_SPACINGS}, axis=axis, edge_order=edge_order)",
    jvp=f"gradient_jvp(df, {_SPACINGS}, axis=axis, edge_order=edge_order)",
    unsupported=_NO_SPACING,
)
# Linear in y and in x (through its differences) separately, and in dx when x is None.
defrule(
    np.trapezoid,
    "y, x=None, dx=1.0, axis=-1",
    vjp={
        "y": "trapezoid_grad(dy, y_, x, dx, axis)",
        "x": "trapezoid_grad_x(dy, y_, x, axis)",
        # (dx is one number: an array dx, whose gradient this is not, is refused)
        "dx": "unbroadcast(dy * np.trapezoid(y_, axis=axis), dx) if x is None and "
        "scalar_spacing(dx) else 0.0",
    },
    jvp={
        "y": "np.trapezoid(dy, x=x, dx=dx, axis=axis)",
        "x": "np.trapezoid(y_, x=d_x, axis=axis)",
        "dx": "ddx * np.trapezoid(y_, axis=axis) if x is None and scalar_spacing(dx) else "
        "np.zeros(np.shape(y))",
    },
)

# np.interp(x, xp, fp) = fp[i0] (1 - t) + fp[i1] t inside the range, with t the position of x
# between its knots xp[i0] < xp[i1]; outside, fp's end value (or left/right). The knot indices
# are piecewise constant; t is written with differentiable operations.
_I0 = "interp_index(x, xp, 0, period)"
_I1 = "interp_index(x, xp, 1, period)"
_INSIDE = f"({_I1} > {_I0})"
_GAP = f"(np.take(xp, {_I1}) - np.take(xp, {_I0}) + ({_I1} == {_I0}))"
_T = f"(x - np.take(xp, {_I0})) / {_GAP} * {_INSIDE}"
_KEEP = "interp_keep(x, xp, left, right)"
_SLOPE = f"(np.take(fp, {_I1}) - np.take(fp, {_I0})) / {_GAP} * {_INSIDE}"
defrule(
    np.interp,
    "x, xp, fp, left=None, right=None, period=None",
    vjp={
        "x": f"dy * {_SLOPE}",
        # the adjoints of np.take(fp, i): sums into fp's knots, complex fp too
        "fp": f"select_grad(dy * {_KEEP} * (1 - {_T}), fp, np.take, {_I0}) + "
        f"select_grad(dy * {_KEEP} * {_T}, fp, np.take, {_I1})",
        "left": "unbroadcast(dy * interp_outside(x, xp, -1), left)",
        "right": "unbroadcast(dy * interp_outside(x, xp, 1), right)",
    },
    jvp={
        "x": f"dx * {_SLOPE}",
        "fp": f"{_KEEP} * (np.take(dfp, {_I0}) * (1 - {_T}) + np.take(dfp, {_I1}) * {_T})",
        "left": "dleft * interp_outside(x, xp, -1)",
        "right": "dright * interp_outside(x, xp, 1)",
    },
    unsupported={
        "xp": "the derivative with respect to the knots is not implemented",
        "period": "the derivative with respect to the period is not implemented",
    },
)
# polyval(p, x) = sum_k p[k] x ** (n - 1 - k); the constant term's power is left out of the
# product (x ** 0 would differentiate to 0 * x ** -1, NaN at x = 0).
_POWERS = "np.arange(poly_length(p) - 1, 0, -1)"
_DERIVATIVE = f"np.polyval(p[:-1] * {_POWERS}, x)"
defrule(
    np.polyval,
    "p, x",
    vjp={
        "p": f"np.append(np.sum(np.reshape(dy, (-1, 1)) * np.reshape(x, (-1, 1)) ** {_POWERS}, "
        "axis=0), np.sum(dy))",
        "x": f"dy * {_DERIVATIVE}",
    },
    jvp={"p": "np.polyval(dp, x)", "x": f"dx * {_DERIVATIVE}"},
)
linear(
    np.polyfit,
    "x, y, deg, rcond=None, full=False, w=None, cov=False",
    vjp={"y": "polyfit_grad(dy, x, deg, rcond=rcond, full=full, w=w, cov=cov)"},
    jvp={"y": "polyfit_tangent(x, dy, deg, rcond=rcond, full=full, w=w, cov=cov)"},
    unsupported={
        "x": "the derivative with respect to the sample points is not implemented",
        "w": "the derivative with respect to the weights is not implemented",
    },
)
# unwrap adds k * period with k piecewise constant: k = (y - p) / period, rounded.
defrule(
    np.unwrap,
    "p, discont=None, axis=-1, *, period=6.283185307179586",
    vjp={"p": "dy", "period": "np.sum(dy * np.round((y - p) / period))"},
    jvp={"p": "dp", "period": "dperiod * np.round((y - p) / period)"},
)

# --- statistics ---------------------------------------------------------------------------------
_COV = "rowvar=rowvar, bias=bias, ddof=ddof, fweights=fweights, aweights=aweights"
defrule(
    np.cov,
    "m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None",
    vjp={"m": f"cov_vjp(dy, m, y_, {_COV})", "y": f"cov_vjp(dy, m, y_, {_COV}, wrt=1)"},
    jvp={"m": f"cov_jvp(m, y_, dm, None, {_COV})", "y": f"cov_jvp(m, y_, None, dy, {_COV})"},
    unsupported={"aweights": "the derivative with respect to the weights is not implemented"},
)
defrule(
    np.corrcoef,
    "x, y=None, rowvar=True, *, dtype=None",
    vjp={"x": "corrcoef_vjp(dy, x, y_, rowvar)", "y": "corrcoef_vjp(dy, x, y_, rowvar, wrt=1)"},
    jvp={
        "x": "corrcoef_jvp(x, y_, dx, None, rowvar)",
        "y": "corrcoef_jvp(x, y_, None, dy, rowvar)",
    },
)

# --- choosing and moving ------------------------------------------------------------------------
defrule(
    np.select,
    "condlist, choicelist, default=0",
    vjp={
        "choicelist": "select_choice_grad(dy, condlist, choicelist)",
        "default": "unbroadcast(dy * select_default_mask(condlist), default)",
    },
    jvp={
        "choicelist": "select_tangent(condlist, dchoicelist, y)",
        "default": "ddefault * select_default_mask(condlist) + np.zeros(np.shape(y))",
    },
    kind="linear",
)
linear(
    np.rollaxis,
    "a, axis, start=0",
    vjp="np.moveaxis(dy, rollaxis_destination(np.ndim(a), axis, start), axis)",
)
# The identity on real input; on complex input whose imaginary part is negligible, the real part.
# The cotangent in a's dtype (cast_like, conjugated back: cast_like is the boundary's, which
# conjugates; with it alone a complex a got the conjugate, 0.86 wrong); of a real y, its real part.
linear(
    np.real_if_close,
    "a, tol=100",
    vjp="conj_like(cast_like(dy if np.iscomplexobj(y) else np.real(dy), a), a)",
    jvp="da if np.iscomplexobj(y) else np.real(da)",
)

# --- ufunc methods ------------------------------------------------------------------------------
# ufunc.reduce is the reduction over axis 0 by default; ufunc.accumulate the running one.
_REDUCE = "array, axis=0, dtype=None, out=None, keepdims=False"
defrule(
    np.add.reduce,
    _REDUCE + ", initial=0, where=True",
    vjp={
        "array": "unreduce(dy, array, axis=axis, keepdims=keepdims, where=where)",
        "initial": "np.sum(dy)",
    },
    jvp={
        "array": "np.add.reduce(darray, axis=axis, keepdims=keepdims, where=where)",
        "initial": "dinitial + np.zeros(np.shape(y))",
    },
    kind="linear",
)
defrule(
    np.multiply.reduce,
    _REDUCE,
    vjp="prod_grad(dy, array, axis=axis, keepdims=keepdims)",
    jvp="reduce_jvp(prod_grad(np.ones_like(y), array, axis=axis, keepdims=keepdims), darray, "
    "axis=axis, keepdims=keepdims)",
)
for _extreme in (np.maximum, np.minimum):
    defrule(
        _extreme.reduce,
        _REDUCE,
        vjp="chooser_grad(dy, array, y, axis=axis, keepdims=keepdims)",
        jvp="reduce_jvp(chooser_grad(np.ones_like(y), array, y, axis=axis, keepdims=keepdims), "
        "darray, axis=axis, keepdims=keepdims)",
    )
    _source = f"accumulate_source(array, y, axis, {_extreme is np.maximum})"
    defrule(
        _extreme.accumulate,
        "array, axis=0, dtype=None, out=None",
        vjp=f"select_grad(dy, array, np.take_along_axis, {_source}, axis=axis)",
        jvp=f"np.take_along_axis(darray, {_source}, axis=axis)",
    )
defrule(
    np.add.accumulate,
    "array, axis=0, dtype=None, out=None",
    vjp="cumsum_grad(dy, array, axis=axis)",
    jvp="np.add.accumulate(darray, axis=axis)",
    kind="linear",
)
defrule(
    np.multiply.accumulate,
    "array, axis=0, dtype=None, out=None",
    vjp="cumprod_grad(dy, array, axis=axis)",
    jvp="cumprod_jvp(array, darray, axis=axis)",
)

# ufunc.outer(a, b) applies the ufunc to every pair: the result has shape a.shape + b.shape. A
# sum over b's axes of the result is a tensordot with ones (and over a's, likewise).
_OVER_B = "reshape_like(np.tensordot(dy, {}, axes=np.ndim(b)), a)"
_OVER_A = "reshape_like(np.tensordot({}, dy, axes=np.ndim(a)), b)"
defrule(
    np.multiply.outer,
    "a, b",
    vjp=(_OVER_B.format("b"), _OVER_A.format("a")),
    jvp=("np.multiply.outer(da, b)", "np.multiply.outer(a, db)"),
    kind="bilinear",
)
for _ufunc, _sign in ((np.add, ""), (np.subtract, "-")):
    defrule(
        _ufunc.outer,
        "a, b",
        vjp=(_OVER_B.format("np.ones(np.shape(b))"),
             _sign + _OVER_A.format("np.ones(np.shape(a))")),
        jvp=(f"np.{_ufunc.__name__}.outer(da, np.zeros(np.shape(b)))",
             f"np.{_ufunc.__name__}.outer(np.zeros(np.shape(a)), db)"),
        kind="linear",
    )

# --- the helpers' own rules (derivatives of derivatives) ------------------------------------------
# Each linear helper's adjoint is its partner: gradient_vjp <-> gradient_jvp, polyfit_grad <->
# polyfit_tangent, select_choice_grad <-> select_tangent; trapezoid_grad is linear in g and in the
# sample points, trapezoid_grad_x bilinear in g and the integrand. cov's helpers are bilinear
# in the cotangent (or tangent) and the data, and each one's rules are the other one with the
# data replaced by a cotangent or tangent (zeros for the part that has none).
_GRADIENT = f"{_SPACINGS}, axis=axis, edge_order=edge_order"
_GRADIENT_SIG = f"{_SPACINGS.replace(',', '=None,')}=None, *, axis=None, edge_order=1"
linear(
    runtime.gradient_vjp,
    "g, f, " + _GRADIENT_SIG,
    vjp={"g": f"gradient_jvp(dy, {_GRADIENT})"},
    jvp={"g": f"gradient_vjp(dg, f, {_GRADIENT})"},
    unsupported=_NO_SPACING,
)
linear(
    runtime.gradient_jvp,
    "t, " + _GRADIENT_SIG,
    vjp=f"gradient_vjp(dy, t, {_GRADIENT})",
    jvp=f"gradient_jvp(dt, {_GRADIENT})",
    unsupported=_NO_SPACING,
)
defrule(
    runtime.trapezoid_grad,
    "g, a, x=None, dx=1.0, axis=-1",
    vjp={
        "g": "np.trapezoid(dy, x=x, dx=dx, axis=axis)",
        "x": "trapezoid_grad_x(np.ones_like(g), dy * np.expand_dims(g, axis), x, axis)",
        "dx": "np.sum(dy * trapezoid_grad(g, a, None, 1.0, axis)) if x is None and "
        "scalar_spacing(dx) else 0.0",
    },
    jvp={
        "g": "trapezoid_grad(dg, a, x, dx, axis)",
        "x": "trapezoid_grad(g, a, d_x, 1.0, axis)",
        "dx": "trapezoid_grad(g, a, None, ddx, axis) if x is None else np.zeros(np.shape(y))",
    },
)
defrule(
    runtime.trapezoid_grad_x,
    "g, a, x, axis=-1",
    vjp={"g": "np.trapezoid(a, x=dy, axis=axis)", "a": "trapezoid_grad(g, a, dy, 1.0, axis)"},
    jvp={"g": "trapezoid_grad_x(dg, a, x, axis)", "a": "trapezoid_grad_x(g, da, x, axis)"},
    kind="bilinear",
)
_POLYFIT = "x, deg, rcond=None, full=False, w=None, cov=False"
_POLYFIT_ARGS = "x, deg, rcond=rcond, full=full, w=w, cov=cov"
_NO_POINTS = {
    "x": "the derivative with respect to the sample points is not implemented",
    "w": "the derivative with respect to the weights is not implemented",
}
linear(
    runtime.polyfit_grad,
    "g, " + _POLYFIT,
    vjp={"g": f"polyfit_tangent({_POLYFIT_ARGS.replace('x, deg', 'x, dy, deg')})"},
    jvp={"g": f"polyfit_grad(dg, {_POLYFIT_ARGS})"},
    unsupported=_NO_POINTS,
)
linear(
    runtime.polyfit_tangent,
    "x, t, deg, rcond=None, full=False, w=None, cov=False",
    vjp={"t": f"polyfit_grad(dy, {_POLYFIT_ARGS})"},
    jvp={"t": f"polyfit_tangent({_POLYFIT_ARGS.replace('x, deg', 'x, dt, deg')})"},
    unsupported=_NO_POINTS,
)
linear(
    runtime.select_choice_grad,
    "g, condlist, choicelist",
    vjp={"g": "select_tangent(condlist, dy, g)"},
    jvp={"g": "select_choice_grad(dg, condlist, choicelist)"},
)
linear(
    runtime.select_tangent,
    "condlist, tangents, like",
    vjp={"tangents": "select_choice_grad(dy, condlist, tangents)"},
    jvp={"tangents": "select_tangent(condlist, dtangents, like)"},
)
_Y0 = "None if other is None else np.zeros(np.shape(other))"
_M0 = "np.zeros(np.shape(m))"
_UNWEIGHTED = {"aweights": "the derivative with respect to the weights is not implemented"}
defrule(
    runtime.cov_vjp,
    "g, m, other=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, wrt=0",
    vjp={
        "g": f"cov_jvp(m, other, dy, None, {_COV}) if wrt == 0 else "
        f"cov_jvp(m, other, None, dy, {_COV})",
        "m": f"cov_vjp(g, dy, {_Y0}, {_COV}) if wrt == 0 else cov_vjp(g, {_M0}, dy, {_COV})",
        "other": f"cov_vjp(g, dy, {_Y0}, {_COV}, wrt=1) if wrt == 0 else "
        f"cov_vjp(g, {_M0}, dy, {_COV}, wrt=1)",
    },
    jvp={
        "g": f"cov_vjp(dg, m, other, {_COV}, wrt=wrt)",
        "m": f"cov_vjp(g, dm, {_Y0}, {_COV}, wrt=wrt)",
        "other": f"cov_vjp(g, {_M0}, dother, {_COV}, wrt=wrt)",
    },
    unsupported=_UNWEIGHTED,
)
_DM = "(np.zeros(np.shape(m)) if dm is None else dm)"
_DY = "(None if other is None else np.zeros(np.shape(other)) if dother is None else dother)"
defrule(
    runtime.cov_jvp,
    "m, other, dm, dother, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None",
    vjp={
        "m": f"cov_vjp(dy, {_DM}, {_DY}, {_COV})",
        "other": f"cov_vjp(dy, {_DM}, {_DY}, {_COV}, wrt=1)",
        "dm": f"cov_vjp(dy, m, other, {_COV})",
        "dother": f"cov_vjp(dy, m, other, {_COV}, wrt=1)",
    },
    jvp={
        "m": f"cov_jvp(d_m, {_Y0}, dm, dother, {_COV})",
        "other": f"cov_jvp({_M0}, d_other, dm, dother, {_COV})",
        "dm": f"cov_jvp(m, other, ddm, None, {_COV})",
        "dother": f"cov_jvp(m, other, None, ddother, {_COV})",
    },
    unsupported=_UNWEIGHTED,
)
# corrcoef_vjp/jvp, cond_vjp/jvp and eigvals_vjp/jvp are plain NumPy code marked ``by_source``
# (runtime/numerics.py): no rule, every order. They read eigenvectors through eig_vectors, whose
# rule is in the gauge diag(V^-1 dV) = 0 (they use them only where column scales cancel).
defrule(
    runtime.eig_vectors,
    "a, values",
    vjp={"a": "eig_vectors_vjp(dy, a, y, values)"},
    jvp={"a": "eig_vectors_jvp(a, y, values, da)"},
)
