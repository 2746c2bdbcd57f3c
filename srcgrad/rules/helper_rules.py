"""Rules for the helpers of the NumPy rule library (``prod_grad``, ``einsum_vjp``, ``solve_vjp_b``,
...), so that second derivatives through NumPy functions work: ``grad(grad(f))``, ``hessian(f)``
and ``hvp(f)`` differentiate generated code, which calls these helpers.

Every helper is linear in its cotangent (or tangent) argument, written ``g`` (or ``t``) here:
``dy`` is the template name of the cotangent of the helper's own result, and generated code passes
the argument positionally, so the rename is invisible. In that argument:

* the tangent is the helper applied to the tangent (``prod_grad(dg, a)``);
* the adjoint is the linear map the helper is the adjoint of: the primal operation
  (``np.diagonal`` for ``diagonal_grad``), the forward-mode helper of the same function
  (``cumprod_jvp`` for ``cumprod_grad``), or, for a reduction whose gradient is ``g`` spread with
  weights ``w``, ``reduce_jvp(w, dy)``: the sum over the reduced axes of ``w * dy``.

In the primal values they read, helpers are of three kinds:

* shape only (``unreduce(g, x)`` reads x's shape): no derivative, rightly;
* piecewise constant (the choice of ``max``, a sort's permutation, the ranks of a quantile): the
  derivative is 0 almost everywhere, so those parameters are not differentiable either;
* genuinely nonlinear (``prod_grad(g, a)`` depends on the products of ``a``): a template when
  there is one (helpers in ``runtime/higher_order.py``), else the parameter is listed in
  ``unsupported`` and differentiating through it is a ``NoRuleError`` at transform time, never a
  dropped term.

The helpers ``runtime/higher_order.py`` adds get rules too where they are linear, so third order
works wherever the third derivative of the NumPy function is not needed.
"""

from .. import runtime
from ..runtime import higher_order as helper_runtime
from .registry import defrule, linear, nondiff

NS = {
    "slice": slice,
    "int": int,
    **{k: v for k, v in vars(helper_runtime).items() if callable(v) and not k.startswith("_")},
}


def _rule(fn, signature, vjp, jvp=None, *, unsupported=None, kind="linear"):
    return defrule(
        fn, signature, vjp=vjp, jvp=jvp, kind=kind, namespace=NS, unsupported=unsupported
    )


def _reduction(fn, call, more=None):
    """Reverse templates of a helper ``fn(g, a, ...)`` equal to ``g`` spread over the reduced axes
    of ``a`` times weights that do not depend on ``g``: its adjoint in ``g`` sums ``weights * dy``
    over those axes. ``call`` is the helper's argument list after ``g``; ``more`` adds templates
    for other parameters. (Linear in ``g``: the tangent is the helper applied to ``dg``.)
    """
    vjp = {
        "g": f"reduce_jvp({fn.__name__}(np.ones_like(g), {call}), dy, axis=axis, "
        "keepdims=keepdims)"
    }
    return {**vjp, **(more or {})}


_THIRD = "third derivatives through {} are not implemented"

# --- reductions ---------------------------------------------------------------------------------
_CALL = "a, axis=axis, keepdims=keepdims"
# Linear in g, not in a: no kind covers both, so both tangents are written.
_rule(
    runtime.prod_grad,
    "g, a, axis=None, keepdims=False",
    _reduction(runtime.prod_grad, _CALL, more={
        "a": "prod_grad_tangent(g, a, dy, axis=axis, keepdims=keepdims)",
    }),
    jvp={
        "g": "prod_grad(dg, a, axis=axis, keepdims=keepdims)",
        "a": "prod_grad_tangent(g, a, da, axis=axis, keepdims=keepdims)",
    },
    kind="general",
)
# prod_grad_tangent (and cumprod_hvp / cumprod_second below) are plain NumPy code marked
# ``by_source`` (runtime/higher_order.py): no rule, every order.
nondiff(helper_runtime.prod_layout, helper_runtime.row_shape)
# max/min/ptp: which elements are chosen is piecewise constant in `a` and the result.
_rule(
    runtime.chooser_grad,
    "g, a, result, axis=None, keepdims=False",
    _reduction(runtime.chooser_grad, "a, result, axis=axis, keepdims=keepdims"),
)
_rule(runtime.ptp_grad, "g, a, axis=None, keepdims=False", _reduction(runtime.ptp_grad, _CALL))
# var_grad(g, a) = g * 2 (a - mean(a)) / (n - ddof): bilinear. Centering is self-adjoint and g is
# constant along the reduced axes, so the adjoint in `a` is var_grad itself.
_rule(
    runtime.var_grad,
    "g, a, axis=None, ddof=0, keepdims=False",
    _reduction(runtime.var_grad, "a, axis=axis, ddof=ddof, keepdims=keepdims", more={
        "a": "var_grad(g, dy, axis=axis, ddof=ddof, keepdims=keepdims)",
    }),
    kind="bilinear",
)
# average_grad, average_weights_grad and average_weights_jvp are plain NumPy code marked
# ``by_source`` (runtime/reductions.py): no rule, every order (in the weights too).
nondiff(runtime.reductions.average_layout)
# reduce_jvp(partials, t) = sum(partials * t): bilinear.
_rule(
    runtime.reduce_jvp,
    "partials, t, axis=None, keepdims=False",
    vjp={
        "partials": "unbroadcast(unreduce(dy, t, axis=axis, keepdims=keepdims) * t, partials)",
        "t": "unreduce(dy, t, axis=axis, keepdims=keepdims) * partials",
    },
    kind="bilinear",
)
_rule(runtime.cumsum_grad, "g, a, axis=None", vjp={"g": "np.cumsum(dy, axis=axis)"})
# cumprod_grad(g, a) = J(a)^T g and cumprod_jvp(a, t) = J(a) t, with J the Jacobian of cumprod.
_rule(
    runtime.cumprod_grad,
    "g, a, axis=None",
    vjp={"g": "cumprod_jvp(a, dy, axis=axis)", "a": "cumprod_hvp(g, a, dy, axis=axis)"},
    jvp={"g": "cumprod_grad(dg, a, axis=axis)", "a": "cumprod_hvp(g, a, da, axis=axis)"},
    kind="general",
)
_rule(
    runtime.cumprod_jvp,
    "a, t, axis=None",
    vjp={"t": "cumprod_grad(dy, a, axis=axis)", "a": "cumprod_hvp(dy, a, t, axis=axis)"},
    jvp={"t": "cumprod_jvp(a, dt, axis=axis)", "a": "cumprod_second(a, t, da, axis=axis)"},
    kind="general",
)
_rule(
    runtime.quantile_grad,
    "g, a, q, axis=None, keepdims=False, method='linear'",
    vjp={"g": "quantile_jvp(a, dy, q, axis=axis, keepdims=keepdims, method=method)"},
    unsupported={"q": "np.quantile/np.percentile are not differentiated in q"},
)
_rule(
    runtime.quantile_jvp,
    "a, t, q, axis=None, keepdims=False, method='linear'",
    vjp={"t": "quantile_grad(dy, a, q, axis=axis, keepdims=keepdims, method=method)"},
    unsupported={"q": "np.quantile/np.percentile are not differentiated in q"},
)
_rule(
    runtime.trace_grad,
    "g, a, offset=0, axis1=0, axis2=1",
    vjp={"g": "np.trace(dy, offset=offset, axis1=axis1, axis2=axis2)"},
)
_rule(runtime.diff_grad, "g, a, n=1, axis=-1", vjp={"g": "np.diff(dy, n=n, axis=axis)"})
# diff_part_grad and diff_part_tangent are each other's adjoints (linear in g, t; the pieces give
# shapes only)
_PIECES = "a, n, axis, prepend, append, part"
_PIECES_SIG = "a, n=1, axis=-1, prepend=None, append=None, part=1"
_rule(runtime.diff_part_grad, "g, " + _PIECES_SIG, vjp={"g": f"diff_part_tangent(dy, {_PIECES})"})
_rule(runtime.diff_part_tangent, "t, " + _PIECES_SIG, vjp={"t": f"diff_part_grad(dy, {_PIECES})"})

# --- norms: g * phi(x, norm), phi elementwise in x, or g * U diag(e) V^T (singular values) ------
# Only the ords of singular values take the partials that may go through an SVD: for a literal
# ord the conditional folds (optimize/fold.py), so derivatives of the other norms do not carry
# (nor differentiate again) the SVD branch.
_SINGULAR = "('nuc', 2, -2)"
for _fn, _sig, _args, _axis, _kind in (
    (runtime.norm_grad, "g, x, nrm, ord=None, axis=None, keepdims=False",
     "ord=ord, axis=axis, keepdims=keepdims", "axis", "norm"),
    (runtime.vector_norm_grad, "g, x, nrm, axis=None, keepdims=False, ord=2",
     "axis=axis, keepdims=keepdims, ord=ord", "axis", "vector"),
    (runtime.matrix_norm_grad, "g, x, nrm, keepdims=False, ord='fro'",
     "keepdims=keepdims, ord=ord", "(-2, -1)", "matrix"),
):
    _partials = f"ord=ord, axis={_axis}, keepdims=keepdims, kind={_kind!r}"
    _name = _fn.__name__
    _rule(
        _fn,
        _sig,
        vjp={
            "g": f"reduce_jvp({_name}(np.ones_like(g), x, nrm, {_args}), dy, axis={_axis}, "
            "keepdims=keepdims)",
            "x": f"dy * norm_grad_dx(g, x, nrm, {_partials}) if ord not in {_SINGULAR} else "
            f"norm_grad_x_vjp(dy, g, x, nrm, {_partials})",
            "nrm": f"reduce_jvp(norm_grad_dnorm(g, x, nrm, {_partials}), dy, axis={_axis}, "
            "keepdims=keepdims)",
        },
        jvp={
            "g": f"{_name}(dg, x, nrm, {_args})",
            "x": f"dx * norm_grad_dx(g, x, nrm, {_partials}) if ord not in {_SINGULAR} else "
            f"norm_grad_x_jvp(dx, g, x, nrm, {_partials})",
            "nrm": f"norm_grad_dnorm(g * dnrm, x, nrm, {_partials})",
        },
        kind="general",
    )

# --- elementwise helpers ------------------------------------------------------------------------
nondiff(runtime.between, runtime.clipped_low, runtime.clipped_high, runtime.inverse_permutation)
# never left in generated code (normalize/methods.py rewrites it); raises if it were
nondiff(runtime.replaced)
# the Dask check of the decompositions' helpers, and as_array, which they read arrays through
nondiff(runtime.linalg._numpy_factor)
linear(runtime.shapes.as_array, "x", vjp="dy", jvp="dx")
# the n-th derivative of sinc: its derivative is the next one (every order, exact at 0)
_rule(runtime.sinc_nth, "x, n", vjp={"x": "dy * sinc_nth(x, n + 1)"}, kind="elementwise")

# --- shape ----------------------------------------------------------------------------------------
_rule(runtime.mT, "x", vjp={"x": "mT(dy)"})
_rule(runtime.reshape_like, "g, x, order='C'", vjp={"g": "reshape_like(dy, g, order=order)"})
_rule(
    runtime.diagonal_grad,
    "g, a, offset=0, axis1=0, axis2=1",
    vjp={"g": "np.diagonal(dy, offset=offset, axis1=axis1, axis2=axis2)"},
)
_rule(runtime.diag_grad, "g, v, k=0", vjp={"g": "np.diag(dy, k=k)"})
# select_grad(g, x, fn, *args, **kwargs): every NumPy rule passes one argument after fn and at
# most `axis` and `mode`; `...` marks a keyword not given (the helpers leave it out).
_SELECT = "x, fn, arg, axis=..., mode=..."
_SELECTED = "x, fn, arg, axis=axis, mode=mode"
# (select_grad passes `...` on to fn; select_scatter leaves it out, so tangents use the latter.)
for _scatter in (runtime.select_grad, helper_runtime.select_scatter):
    _rule(
        _scatter,
        "g, " + _SELECT,
        vjp={"g": f"select_gather(dy, {_SELECTED})"},
        jvp={"g": f"select_scatter(dg, {_SELECTED})"},
    )
_rule(helper_runtime.select_gather, "w, " + _SELECT, vjp={"w": f"select_scatter(dy, {_SELECTED})"})
_rule(
    runtime.pad_grad,
    "g, array, pad_width, mode='constant'",
    vjp={"g": "pad_gather(dy, pad_width, mode=mode)"},
)
_rule(
    helper_runtime.pad_gather,
    "w, pad_width, mode='constant'",
    vjp={"w": "pad_grad(dy, w, pad_width, mode=mode)"},
)
_rule(
    runtime.permutation_grad,
    "g, a, result, axis=-1",
    vjp={"g": "permute_like(dy, a, result, axis=axis)"},
)
_rule(
    runtime.permute_like,
    "t, a, result, axis=-1",
    vjp={"t": "permutation_grad(dy, a, result, axis=axis)"},
)
_rule(
    runtime.linspace_grad,
    "g, num=50, endpoint=True, axis=0, start=True",
    vjp={"g": "linspace_tangent(dy, num=num, endpoint=endpoint, axis=axis, start=start)"},
)
_rule(runtime.leading_ones, "v, ndim", vjp={"v": "reshape_like(dy, v)"})
_rule(
    helper_runtime.linspace_tangent,
    "t, num=50, endpoint=True, axis=0, start=True",
    vjp={"t": "linspace_grad(dy, num=num, endpoint=endpoint, axis=axis, start=start)"},
)

# --- sequences of arrays: cotangents are lists (Cotangents), None for a zero piece ---------------
for _fn, _how, _axis in (
    (runtime.concatenate_grad, "concatenate", True),
    (runtime.stack_grad, "stack", True),
    (runtime.hstack_grad, "hstack", False),
    (runtime.vstack_grad, "vstack", False),
    (runtime.dstack_grad, "dstack", False),
    (runtime.column_stack_grad, "column_stack", False),
):
    _sig, _kw = ("g, arrays, axis=0", ", axis=axis") if _axis else ("g, arrays", "")
    _rule(_fn, _sig, vjp={"g": f"join_cotangents(dy, arrays, {_how!r}{_kw})"})
_rule(
    helper_runtime.join_cotangents,
    "pieces, arrays, how='concatenate', axis=0",
    vjp={"pieces": "split_cotangents(dy, arrays, how, axis=axis)"},
)
_rule(
    helper_runtime.split_cotangents,
    "g, arrays, how='concatenate', axis=0",
    vjp={"g": "join_cotangents(dy, arrays, how, axis=axis)"},
)
_rule(
    runtime.split_grad,
    "g, ary, indices_or_sections, axis=0",
    vjp={"g": "split_pieces(dy, indices_or_sections, axis=axis)"},
)
_rule(
    runtime.hsplit_grad,
    "g, ary, indices_or_sections",
    vjp={"g": "split_pieces(dy, indices_or_sections, axis=int(np.ndim(ary) > 1))"},
)
_rule(
    helper_runtime.split_pieces,
    "w, indices_or_sections, axis=0",
    vjp={"w": "split_grad(dy, w, indices_or_sections, axis=axis)"},
)
_rule(
    runtime.stack_cotangents,
    "pieces, x, axis=0",
    vjp={"pieces": "unstack_pieces(dy, axis=axis)"},
)
_rule(helper_runtime.unstack_pieces, "w, axis=0", vjp={"w": "stack_cotangents(dy, w, axis=axis)"})

# --- containers -----------------------------------------------------------------------------
_rule(runtime.sum_grad, "g, items", vjp={"g": "sum_grad_adjoint(dy, g, items)"})
_rule(helper_runtime.sum_grad_adjoint, "w, g, items", vjp={"w": "sum_grad(dy, items)"})
_rule(runtime.append_grad_value, "g, value", vjp={"g": "getitem_grad(dy, g, -1)"})
_rule(runtime.append_grad_items, "g", vjp={"g": "getitem_grad(dy, g, slice(None, -1, None))"})
_rule(runtime.append_none, "g", vjp={"g": "append_grad_items(dy)"})

# --- products -------------------------------------------------------------------------------------
# (The transposes of tensordot and inner, like matmul's, are declared in runtime_rules.py.)

# einsum_vjp(g, subscripts, k, x...) is linear in g and in every operand but x_k, of which it
# reads only the shape; the tangents are written out (einsum_vjp_tangent is 0 for j == k).
_EINSUM = ("x0", "x1", "x2", "x3", "x4", "x5")
_OPS = "x0, " + ", ".join(f"{x}={x}" for x in _EINSUM[1:])
_rule(
    runtime.einsum_vjp,
    "g, subscripts, k, x0, x1=None, x2=None, x3=None, x4=None, x5=None",
    vjp={
        "g": f"einsum_jvp(subscripts, k, dy, {_OPS})",
        **{x: f"einsum_vjp_partner(g, subscripts, k, {j}, dy, {_OPS})"
           for j, x in enumerate(_EINSUM)},
    },
    jvp={
        "g": f"einsum_vjp(dg, subscripts, k, {_OPS})",
        **{x: f"einsum_vjp_tangent(g, subscripts, k, {j}, d{x}, {_OPS})"
           for j, x in enumerate(_EINSUM)},
    },
    kind="general",
)
_rule(
    runtime.einsum_jvp,
    "subscripts, k, t, x0, x1=None, x2=None, x3=None, x4=None, x5=None",
    vjp={
        "t": f"einsum_vjp(dy, subscripts, k, {_OPS})",
        **{x: f"einsum_vjp_partner(dy, subscripts, k, {j}, t, {_OPS})"
           for j, x in enumerate(_EINSUM)},
    },
    jvp={
        "t": f"einsum_jvp(subscripts, k, dt, {_OPS})",
        **{x: f"einsum_jvp_tangent(subscripts, k, t, {j}, d{x}, {_OPS})"
           for j, x in enumerate(_EINSUM)},
    },
    kind="general",
)
# Helpers with a `wrt` argument: the adjoint in g puts the cotangent in operand `wrt`; in the
# other operand see runtime.higher_order._partner. Linear in g and in the operand that is not
# `wrt`, constant in operand `wrt` (its shape only): no kind says which operand that is at
# transform time, so the tangents are written out (`_tangent` gives 0 for operand `wrt`).
for _fn, _sig, _kw in (
    (runtime.kron_vjp, "g, a, b, wrt=0", "wrt=wrt"),
    (runtime.cross_vjp, "g, a, b, wrt=0, axisa=-1, axisb=-1, axisc=-1, axis=None",
     "wrt=wrt, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis"),
    (runtime.convolve_vjp, "g, a, v, mode='full', wrt=0", "mode=mode, wrt=wrt"),
    (runtime.correlate_vjp, "g, a, v, mode='valid', wrt=0", "mode=mode, wrt=wrt"),
):
    _name = _fn.__name__
    _a, _b = _sig.split(", ")[1:3]
    _rule(
        _fn,
        _sig,
        vjp={
            "g": f"{_name}_adjoint(dy, {_a}, {_b}, {_kw})",
            _a: f"{_name}_partner(g, {_a}, {_b}, dy, {_kw}, param=0)",
            _b: f"{_name}_partner(g, {_a}, {_b}, dy, {_kw}, param=1)",
        },
        jvp={
            "g": f"{_name}(dg, {_a}, {_b}, {_kw})",
            _a: f"{_name}_tangent(g, {_a}, {_b}, d{_a}, {_kw}, param=0)",
            _b: f"{_name}_tangent(g, {_a}, {_b}, d{_b}, {_kw}, param=1)",
        },
        kind="general",
    )

# --- linear algebra -------------------------------------------------------------------------------
_INV = "np.linalg.inv(a)"
# det_vjp(g, det, a) = g det inv(a)^T; d inv(a)^T = -inv^T da^T inv^T.
_rule(
    runtime.det_vjp,
    "g, det, a",
    vjp={
        "g": f"det * np.sum(dy * mT({_INV}), axis=(-2, -1))",
        "det": f"g * np.sum(dy * mT({_INV}), axis=(-2, -1))",
        "a": f"-mT({_INV}) @ mT(dy) @ det_vjp(g, det, a)",
    },
    jvp={
        "g": "det_vjp(dg, det, a)",
        "det": "det_vjp(g, ddet, a)",
        "a": f"-mT({_INV}) @ mT(da) @ det_vjp(g, det, a)",
    },
    kind="general",
)
_rule(
    runtime.slogdet_vjp,
    "g, a",
    vjp={
        "g": f"getitem_grad(np.sum(dy * mT({_INV}), axis=(-2, -1)), g, 1)",
        "a": f"-mT({_INV}) @ mT(dy) @ slogdet_vjp(g, a)",
    },
    jvp={"g": "slogdet_vjp(dg, a)", "a": f"-mT({_INV}) @ mT(da) @ slogdet_vjp(g, a)"},
    kind="general",
)
# solve_vjp_b(g, a, b) = solve(a^T, g) and solve_vjp_a(g, a, b, x) = -solve(a^T, g) x^T, summed
# back over broadcast batch axes; with F = solve(a^T, g), dF = -solve(a^T, da^T F).
_F = "solve_like(mT(a), g, b)"
_rule(
    runtime.solve_vjp_b,
    "g, a, b",
    vjp={"g": "solve_like(a, dy, b)", "a": "solve_vjp_a(g, a, b, solve_like(a, dy, b))"},
    jvp={
        "g": "solve_vjp_b(dg, a, b)",
        "a": f"-solve_vjp_b(vec_matmul(mT(da), {_F}, b), a, b)",
    },
    kind="general",
)
_rule(
    runtime.solve_vjp_a,
    "g, a, b, x",
    vjp={
        "g": "-solve_like(a, vec_matmul(dy, x, b), b)",
        "x": f"-vec_matmul(mT(dy), {_F}, b)",
        "a": "solve_vjp_a(g, a, b, -solve_like(a, vec_matmul(dy, x, b), b))",
    },
    jvp={
        "g": "solve_vjp_a(dg, a, b, x)",
        "x": "solve_vjp_a(g, a, b, dx)",
        "a": f"-solve_vjp_a(vec_matmul(mT(da), {_F}, b), a, b, x)",
    },
    kind="general",
)
_rule(
    helper_runtime.solve_like,
    "a, w, b",
    vjp={"w": "unbroadcast(solve_like(mT(a), dy, b), w)", "a": "solve_vjp_a(dy, a, b, y)"},
    jvp={"w": "solve_like(a, dw, b)", "a": "-solve_like(a, vec_matmul(da, y, b), b)"},
    kind="general",
)
_rule(
    helper_runtime.vec_matmul,
    "m, v, b",
    vjp={
        "m": "unbroadcast(vec_outer(dy, v, b), m)",
        "v": "unbroadcast(vec_matmul(mT(m), dy, b), v)",
    },
    kind="bilinear",
)

# Decompositions (cholesky, eigh, eigvalsh, svd, qr, pinv, matrix_power): their helpers in
# runtime/linalg.py are plain NumPy code marked ``by_source``, differentiated by their source at
# every order (no rule here).

# --- third order: the helpers above that helper_runtime adds -------------------------------------
_rule(
    helper_runtime.vec_outer,
    "w, v, b",
    vjp={
        "w": "unbroadcast(vec_matmul(dy, v, b), w)",
        "v": "unbroadcast(vec_matmul(mT(dy), w, b), v)",
    },
    kind="bilinear",
)
# norm_grad_dx / norm_grad_dnorm are plain NumPy code marked ``by_source``: no rule, every order;
# they read the case of a norm (vector, matrix, ord, axes) from the arguments, a derivative of none
nondiff(helper_runtime.norm_power, helper_runtime.singular_layout)
# The products' _adjoint/_partner/_tangent helpers (kron, cross, convolve, correlate, einsum) are
# plain NumPy code marked ``by_source`` (runtime/higher_order.py): no rule, every order.
nondiff(helper_runtime.einsum_zeros, helper_runtime.einsum_given)
