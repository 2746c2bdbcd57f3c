"""Rules for the helpers NumPy's in-place functions are rewritten with (``runtime/writes.py``).

The index helpers only compute positions: no gradient. ``ufunc_at`` (``np.multiply.at`` and
friends on a copy) has first-order rules; its adjoint helpers have none, so a second derivative
through it stops with a ``NoRuleError`` at transform time.
"""

from ..runtime import writes as ir
from .registry import defrule, linear, nondiff

NS = {k: v for k, v in vars(ir).items() if callable(v) and not k.startswith("_")}

nondiff(
    ir.put_index,
    ir.put_sources,
    ir.mask_index,
    ir.place_sources,
    ir.putmask_sources,
    ir.diagonal_index,
    ir.diagonal_sources,
    ir.along_axis_index,
    ir.write_dtype,
)
defrule(
    ir.ufunc_at,
    "ufunc, a, indices, b",
    vjp={
        "a": "ufunc_at_grad_a(dy, ufunc, a, indices, b, y)",
        "b": "ufunc_at_grad_b(dy, ufunc, a, indices, b, y)",
    },
    jvp={
        "a": "ufunc_at_tangent(ufunc, a, indices, b, y, da, None)",
        "b": "ufunc_at_tangent(ufunc, a, indices, b, y, None, db)",
    },
    namespace=NS,
)

# `scatter_last` writes g at index (the last of repeated positions lands): the adjoint of
# `take_item`, which reads back what landed, and the tangent of an element write in its value.
linear(ir.scatter_last, "g, x, index", vjp={"g": "take_item(dy, index, g)"}, namespace=NS)

# A value written into an array whose dtype is known only at run time (normalize/integer_writes.py):
# the write truncates it for an integer or boolean array, so its derivative is zero there. (Not
# "linear": `written(dv, dtype)` is dv, the truncation's zero is not; the tangent is written.)
defrule(
    ir.written, "v, dtype", vjp={"v": "written_grad(dy, dtype)"},
    jvp={"v": "written_grad(dv, dtype)"}, namespace=NS,
)
linear(ir.written_grad, "g, dtype", vjp={"g": "written_grad(dy, dtype)"}, namespace=NS)
# `array_only(a, what)` is a copy of `a` (or an error for a list): linear; its tangent is the
# derived `array_only(da, what)`, a copy too, so a later write into the tangent of `a` cannot
# reach it (the tangent passed through as `da` made hvp of `x.sort()` on an argument permuted).
linear(ir.array_only, "a, what", vjp={"a": "dy"}, namespace=NS)
# `x op= v` computed as `x = x op v` (normalize/sharing.py): `inplace_target` checks the shape and
# reads x's dtype, `kept_dtype` casts the result back to it (a truncation for an integer x).
nondiff(ir.inplace_target)
nondiff(ir.exact_target)
defrule(
    ir.kept_dtype, "v, dtype", vjp={"v": "written_grad(dy, dtype)"},
    jvp={"v": "kept_dtype_tangent(dv, dtype)"}, namespace=NS,
)
linear(ir.kept_dtype_tangent, "t, dtype", vjp={"t": "written_grad(dy, dtype)"}, namespace=NS)
