"""Rules for the runtime helpers that build and take apart tuples, lists and dicts.

Generated code calls these (``elem``, ``add``, ``as_like``, ``list_append``); they need rules
because generated code is differentiated again for higher order.
"""

from .. import runtime
from ..runtime.writes import scatter_last
from .registry import defrule, linear, nondiff

WRITES = {"scatter_last": scatter_last}

# (as_like's rule is in runtime_rules.py.) The tangents not written here are the helper applied to
# the tangent (kinds.py).
linear(runtime.elem, "g, key, x", vjp={"g": "getitem_grad(dy, g, key)"})
# `add(a, b)` is linear in both jointly: its tangent is `da + db`, no one-argument call.
linear(runtime.add, "a, b", vjp=("dy", "dy"), jvp=("da", "db"))
linear(runtime.fresh_copy, "x", vjp="dy")
# A cast to an integer or boolean dtype carries no gradient: a static dtype makes the call a
# constant at transform time (analysis/casts.py), a dtype held in a variable is decided here.
linear(
    runtime.astype,
    "x, dtype, order='K', casting='unsafe', subok=True, copy=True",
    vjp={"x": "cast_grad(dy, x, dtype)"},
    jvp={"x": "cast_tangent(dx, dtype)"},
)
linear(runtime.cast_grad, "g, x, dtype", vjp={"g": "cast_grad(dy, g, dtype)"})
linear(runtime.cast_tangent, "t, dtype", vjp={"t": "cast_grad(dy, t, dtype)"})
# of repeated indices only the last write lands: `scatter_last` puts back what `take_item` read
linear(runtime.take_item, "d, index", vjp={"d": "scatter_last(dy, d, index)"}, namespace=WRITES)
# zero_item writes into its argument, and a tangent may be shared: the tangent copies first.
linear(runtime.zero_item, "d, index", vjp={"d": "zero_item(copy_array(dy), index)"},
       jvp={"d": "zero_item(copy_array(dd), index)"})
defrule(
    runtime.setitem,
    "x, index, value",
    vjp={"x": "zero_item(copy_array(dy), index)", "value": "take_item(dy, index)"},
    jvp={"x": "zero_item(copy_array(dx), index)", "value": "scatter_last(dvalue, x, index)"},
    namespace=WRITES,
)
defrule(
    runtime.restore_item,
    "x, index, value",
    vjp={"x": "zero_item(copy_array(dy), index)", "value": "take_item(dy, index)"},
    jvp={"x": "zero_item(copy_array(dx), index)", "value": "scatter_last(dvalue, x, index)"},
    namespace=WRITES,
)
linear(runtime.copy_item, "x, index", vjp={"x": "getitem_grad(dy, x, index)"})
linear(runtime.list_pop, "items", vjp={"items": "append_none(dy)"})
defrule(
    runtime.list_append,
    "items, value",
    vjp={"items": "append_grad_items(dy)", "value": "append_grad_value(dy, value)"},
    jvp={"*": "append_tangent(ditems, dvalue, value)"},
    kind="linear",
)

# Splitting optional arguments from the seed of a derived function: bookkeeping, no gradient.
nondiff(runtime.bind_optional)
# A shape reference built from values that broadcast together: it carries no gradient.
nondiff(runtime.shape_like)

# Jacobians and Hessians are generated code too: stacking their rows or columns is linear.
nondiff(runtime.unit_basis)
linear(runtime.stack_rows, "rows, value, x", vjp={"rows": "unstack_rows(dy, value, x)"})
linear(runtime.stack_columns, "columns, value, x",
       vjp={"columns": "unstack_columns(dy, value, x)"})
linear(runtime.unstack_rows, "d, value, x", vjp={"d": "stack_rows(dy, value, x)"})
linear(runtime.unstack_columns, "d, value, x", vjp={"d": "stack_columns(dy, value, x)"})
# single_output checks the primal; its tangent passes through unchecked (no second check).
linear(runtime.single_output, "value, name='f'", vjp={"value": "dy"},
       jvp={"value": "dvalue"})
# Refuses an in-place update of an aliased array; gives no gradient of its own.
nondiff(runtime.check_not_array)
nondiff(runtime.check_not_view)
linear(runtime.sum_tangent, "tangents", vjp={"tangents": "sum_grad(dy, tangents)"})
