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
# `add(a, b)` is linear in both jointly: its tangent is `add(da, db)` (an inactive one None), not
# `da + db`: an array cotangent of a list (np.array(L)'s) meets the list's sparse cotangents
# there, which NumPy's `+` would make an array of None objects (ValueError at second order).
linear(runtime.add, "a, b", vjp=("dy", "dy"), jvp={"*": "add(da, db)"})
linear(runtime.fresh_copy, "x", vjp="dy")
linear(runtime.replaced_copy, "obj", vjp="dy")
linear(runtime.deep_copy, "obj", vjp="dy")
linear(runtime.shallow_copy, "obj", vjp="dy")
# `obj.name` of a structure (runtime/pytrees.py) is linear in obj; its tangent is the same
# attribute of obj's tangent, checked to be data of obj and not a property computed from it.
linear(getattr, "obj, name", vjp={"obj": "attr_grad(dy, obj, name)"},
       jvp={"obj": "attr_of(dobj, obj, name)"})
linear(runtime.attr_grad, "g, obj, name", vjp={"g": "attr_of(dy, obj, name)"})
linear(runtime.attr_of, "g, obj, name", vjp={"g": "attr_grad(dy, obj, name)"})
nondiff(runtime.check_class, runtime.check_updated_in_place, runtime.new_instance,
        runtime.has_class, runtime.check_held_method, runtime.is_held_method,
        runtime.check_method_of, runtime.bound_method_of)
nondiff(runtime.try_begin, runtime.try_which, runtime.try_error, runtime.restore_tape,
        runtime.tape_grew,
        runtime.cut_list, runtime.tape_size)
linear(runtime.structure_tangent, "like, parts", vjp={"parts": "attr_parts(dy, like)"},
       jvp={"parts": "structure_tangent(like, dparts)"})
linear(runtime.attr_parts, "g, like", vjp={"g": "structure_tangent(like, dy)"})
# `obj.name = value` as a value (normalize/containers.py): linear in obj and value jointly
linear(runtime.set_field, "obj, name, value",
       vjp={"obj": "field_cleared(dy, obj, name)", "value": "attr_of(dy, y, name)"},
       jvp={"*": "set_field_tangent(dobj, dvalue, y, name)"})
linear(runtime.field_cleared, "g, obj, name", vjp={"g": "field_cleared(dy, obj, name)"})
# `a.b.c = value` (normalize/containers.py): the same, on the inner object
linear(runtime.field_updated, "obj, name, value",
       vjp={"obj": "field_cleared(dy, obj, name)", "value": "attr_of(dy, y, name)"},
       jvp={"*": "set_field_tangent(dobj, dvalue, y, name)"})


def _fields_as_dict(fn):
    """``fn(obj)``, a new dict of an object's fields, is linear; its gradient ``fn_grad(g,
    obj)`` (a dict back to the object's structure) and its tangent ``fn_tangent(dobj, obj)``
    are each other's transposes, each linear in its first argument."""
    grad, tangent = f"{fn.__name__}_grad", f"{fn.__name__}_tangent"
    linear(fn, "obj", vjp={"obj": f"{grad}(dy, obj)"}, jvp={"obj": f"{tangent}(dobj, obj)"})
    linear(getattr(runtime, grad), "g, obj", vjp={"g": f"{tangent}(dy, obj)"},
           jvp={"g": f"{grad}(dg, obj)"})
    linear(getattr(runtime, tangent), "dobj, obj", vjp={"dobj": f"{grad}(dy, obj)"},
           jvp={"dobj": f"{tangent}(ddobj, obj)"})


_fields_as_dict(runtime.as_dict)
# `vars(obj)` read at once (normalize/containers.py): a new dict of the instance attributes
_fields_as_dict(runtime.own_fields)
# `dataclasses.replace(obj, a=v)`, `obj._replace(a=v)`: a new object with one field replaced
linear(runtime.replace_field, "obj, name, value",
       vjp={"obj": "field_cleared(dy, obj, name)", "value": "attr_of(dy, y, name)"},
       jvp={"*": "replace_field_tangent(dobj, dvalue, y, name)"})
linear(runtime.replace_field_tangent, "dobj, dvalue, obj, name",
       vjp={"dobj": "field_cleared(dy, obj, name)", "dvalue": "attr_of(dy, obj, name)"},
       jvp={"*": "replace_field_tangent(ddobj, ddvalue, obj, name)"})
linear(runtime.set_field_tangent, "dobj, dvalue, obj, name",
       vjp={"dobj": "field_cleared(dy, obj, name)",
            "dvalue": "attr_of(dy, set_field(obj, name, dvalue), name)"},
       jvp={"*": "set_field_tangent(ddobj, ddvalue, obj, name)"})
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
linear(runtime.take_item, "d, index, like", vjp={"d": "scatter_last(dy, d, index)"},
       namespace=WRITES)
# zero_item writes into its argument, and a tangent may be shared: the tangent copies first.
linear(runtime.zero_item, "d, index", vjp={"d": "zero_item(copy_array(dy), index)"},
       jvp={"d": "zero_item(copy_array(dd), index)"})
# the tangent of a container after a write: zeros (not None) where the written value has none
linear(runtime.zero_written, "d, index, value", vjp={"d": "zero_item(copy_array(dy), index)"},
       jvp={"d": "zero_written(dd, index, value)"})
defrule(
    runtime.setitem,
    "x, index, value",
    vjp={"x": "zero_item(copy_array(dy), index)", "value": "take_item(dy, index, value)"},
    jvp={"x": "zero_written(dx, index, value)", "value": "scatter_last(dvalue, x, index)"},
    namespace=WRITES,
)
defrule(
    runtime.restore_item,
    "x, index, value",
    vjp={"x": "zero_item(copy_array(dy), index)", "value": "take_item(dy, index, value)"},
    jvp={"x": "zero_written(dx, index, value)", "value": "scatter_last(dvalue, x, index)"},
    namespace=WRITES,
)
linear(runtime.copy_item, "x, index", vjp={"x": "getitem_grad(dy, x, index)"})
linear(runtime.list_pop, "items", vjp={"items": "append_none(dy)"})
linear(runtime.popped, "items", vjp={"items": "append_none(dy)"})
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
nondiff(runtime.of_shape)

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
nondiff(runtime.check_not_holding)
nondiff(runtime.check_copied_array)  # a shallow copy written into (normalize/shallow_copies.py)
nondiff(runtime.check_unpacked)  # Python's error for `a, b = v` of another length
nondiff(runtime.check_trips, runtime.check_reversed_trips)  # a loop over a list it resizes
linear(runtime.sum_tangent, "tangents", vjp={"tangents": "sum_grad(dy, tangents)"})

# List and dict mutation as values (normalize/containers.py): each returns a new container.
# Their tangents stay written: `*` ones are jointly linear in two arguments (no one-argument
# call), and the others' tangent may be None (nothing flowed) where the function would fail, or
# needs the primal (a dict's keys, an iterator that is not a list), hence the `_tangent` helpers.
linear(runtime.list_insert, "items, index, value",
       vjp={"items": "insert_grad_items(dy, items, index)",
            "value": "insert_grad_value(dy, items, index, value)"},
       jvp={"*": "insert_tangent(ditems, dvalue, items, index, value)"})
linear(runtime.pop_item, "items, index", vjp={"items": "pop_item_grad(dy, items, index)"},
       jvp={"items": "pop_item_tangent(ditems, items, index)"})
linear(runtime.list_extend, "items, iterable",
       vjp={"items": "extend_grad_items(dy, items)",
            "iterable": "extend_grad_values(dy, items, iterable)"},
       jvp={"*": "extend_tangent(ditems, diterable, items, iterable)"})
linear(runtime.concat_sequence, "items, iterable",
       vjp={"items": "extend_grad_items(dy, items)",
            "iterable": "extend_grad_values(dy, items, iterable)"},
       jvp={"*": "concat_tangent(ditems, diterable, items, iterable)"})
linear(runtime.repeat_sequence, "items, n", vjp={"items": "repeat_grad(dy, items, n)"},
       jvp={"items": "repeat_tangent(ditems, items, n)"})
linear(runtime.list_reverse, "items", vjp={"items": "reverse_grad(dy)"},
       jvp={"items": "reverse_grad(ditems)"})
linear(runtime.list_permute, "items, order", vjp={"items": "permute_grad(dy, order)"},
       jvp={"items": "permute_tangent(ditems, order)"})
nondiff(runtime.enter_context, runtime.exit_context, runtime.sort_keys, runtime.sort_order,
        runtime.list_index, runtime.list_count, runtime.clear_items,
        runtime.dict_keys)
linear(runtime.dict_update, "mapping, other",
       vjp={"mapping": "update_grad_target(dy, other)", "other": "update_grad_source(dy, other)"},
       jvp={"*": "update_tangent(dmapping, dother, mapping, other)"})
linear(runtime.dict_values, "mapping", vjp={"mapping": "values_grad(dy, mapping)"},
       jvp={"mapping": "values_tangent(dmapping, mapping)"})
linear(runtime.dict_items, "mapping", vjp={"mapping": "items_grad(dy, mapping)"},
       jvp={"mapping": "items_tangent(dmapping, mapping)"})
linear(runtime.dict_get, "mapping, key, default=None",
       vjp={"mapping": "get_grad_dict(dy, mapping, key)",
            "default": "get_grad_default(dy, mapping, key, default)"},
       jvp={"*": "get_tangent(dmapping, ddefault, mapping, key, default)"})
linear(runtime.iteration_sequence, "iterable", vjp={"iterable": "sequence_grad(dy, iterable)"},
       jvp={"iterable": "sequence_tangent(diterable, iterable)"})
linear(runtime.ndenumerate_items, "a", vjp={"a": "ndenumerate_grad(dy, a)"},
       jvp={"a": "ndenumerate_tangent(da, a)"})
linear(runtime.as_list, "iterable", vjp={"iterable": "as_list_grad(dy, iterable)"},
       jvp={"iterable": "as_list_tangent(diterable, iterable)"})
linear(runtime.as_tuple, "iterable", vjp={"iterable": "as_list_grad(dy, iterable)"},
       jvp={"iterable": "as_tuple_tangent(diterable, iterable)"})
# x.item(): the one element, linear in x
linear(runtime.item, "x", vjp={"x": "item_grad(dy, x)"}, jvp={"x": "item(dx)"})

# The adjoint helpers above are linear in their cotangent ``g``: rules for higher order.
_SELF_ADJOINT = {
    "reverse_grad": ("g", "reverse_grad(dy)"),
    "repeat_grad": ("g, items, n", "repeat_tangent(dy, items, n)"),
    "repeat_tangent": ("g, items, n", "repeat_grad(dy, items, n)"),
    "update_grad_target": ("g, other", "update_grad_target(dy, other)"),
    "update_grad_source": ("g, other", "update_grad_source(dy, other)"),
    "sequence_grad": ("g, iterable", "sequence_grad(dy, iterable)"),
    "sequence_tangent": ("g, iterable", "sequence_tangent(dy, iterable)"),
    "pop_item_grad": ("g, items, index", "remove_position(dy, items, index)"),
    "remove_position": ("g, items, index", "pop_item_grad(dy, items, index)"),
    "pop_item_tangent": ("g, items, index", "pop_item_grad(dy, items, index)"),
    "insert_grad_items": ("g, items, index", "insert_zero(dy, items, index)"),
    "insert_zero": ("g, items, index", "insert_grad_items(dy, items, index)"),
    "insert_grad_value": ("g, items, index, value", "only_at(dy, items, index)"),
    "only_at": ("g, items, index", "insert_grad_value(dy, items, index, 0.0)"),
    "extend_grad_items": ("g, items", "pad_cotangents(dy, g)"),
    "pad_cotangents": ("g, like", "extend_grad_items(dy, g)"),
    "extend_grad_values": ("g, items, iterable", "prefix_zeros(as_list(dy), items)"),
    "permute_grad": ("g, order", "permute_tangent(dy, order)"),
    "permute_tangent": ("g, order", "permute_grad(dy, order)"),
    "values_grad": ("g, mapping", "dict_to_values(dy, mapping)"),
    "items_grad": ("g, mapping", "dict_to_items(dy, mapping)"),
    "get_grad_dict": ("g, mapping, key", "value_at_key(dy, mapping, key)"),
    "get_grad_default": ("g, mapping, key, default", "default_part(dy, mapping, key, default)"),
    "ndenumerate_grad": ("g, a", "ndenumerate_items_of(dy, a)"),
    "as_list_grad": ("g, iterable", "as_list_tangent(dy, iterable)"),
    "as_list_tangent": ("g, iterable", "as_list_grad(dy, iterable)"),
    "as_tuple_tangent": ("g, iterable", "as_list_grad(dy, iterable)"),
    "item_grad": ("g, x", "item(dy)"),
    "values_tangent": ("g, mapping", "values_grad(dy, mapping)"),
    "items_tangent": ("g, mapping", "items_grad(dy, mapping)"),
    "ndenumerate_tangent": ("g, a", "ndenumerate_grad(dy, a)"),
    "ndenumerate_items_of": ("g, a", "ndenumerate_grad(dy, a)"),
    "dict_to_items": ("g, mapping", "items_grad(dy, mapping)"),
    "dict_to_values": ("g, mapping", "values_grad(dy, mapping)"),
    "value_at_key": ("g, mapping, key", "get_grad_dict(dy, mapping, key)"),
    "default_part": ("g, mapping, key, default", "get_grad_default(dy, mapping, key, default)"),
    "prefix_zeros": ("g, items", "drop_prefix(dy, items)"),
    "drop_prefix": ("g, items", "prefix_zeros(dy, items)"),
}
for _name, (_signature, _vjp) in _SELF_ADJOINT.items():
    linear(getattr(runtime, _name), _signature, vjp={"g": _vjp})

# The tangent helpers of forward mode are linear in their tangents (jointly: written, one call).
linear(runtime.appended_tangent, "ditems, dvalue, value",
       vjp={"ditems": "append_grad_items(dy)", "dvalue": "append_grad_value(dy, value)"},
       jvp={"*": "appended_tangent(dditems, ddvalue, value)"})
linear(runtime.insert_tangent, "ditems, dvalue, items, index, value",
       vjp={"ditems": "insert_grad_items(dy, items, index)",
            "dvalue": "insert_grad_value(dy, items, index, value)"},
       jvp={"*": "insert_tangent(dditems, ddvalue, items, index, value)"})
linear(runtime.extend_tangent, "ditems, dvalues, items, values",
       vjp={"ditems": "extend_grad_items(dy, items)",
            "dvalues": "extend_grad_values(dy, items, values)"},
       jvp={"*": "extend_tangent(dditems, ddvalues, items, values)"})
linear(runtime.concat_tangent, "ditems, dvalues, items, values",
       vjp={"ditems": "extend_grad_items(dy, items)",
            "dvalues": "extend_grad_values(dy, items, values)"},
       jvp={"*": "concat_tangent(dditems, ddvalues, items, values)"})
linear(runtime.update_tangent, "dd, dother, d, other",
       vjp={"dd": "update_grad_target(dy, other)", "dother": "update_grad_source(dy, other)"},
       jvp={"*": "update_tangent(ddd, ddother, d, other)"})
linear(runtime.get_tangent, "dd, ddefault, d, key, default",
       vjp={"dd": "get_grad_dict(dy, d, key)", "ddefault": "get_grad_default(dy, d, key, default)"},
       jvp={"*": "get_tangent(ddd, dddefault, d, key, default)"})

# x += v seen by every other holder of x's object (normalize/sharing.py): where is found by
# identity (no gradient); putting x there is linear in the holder and in x jointly (written: no
# one-argument call); its adjoint helpers are linear in g (derived).
nondiff(runtime.shared_positions, runtime.check_element_written, runtime.element_written,
        runtime.check_argument_parts, runtime.check_arguments_apart)  # (an argument holding
# one array twice, or sharing one with another argument, written into: an error)
nondiff(runtime.steps_layout, runtime.sums_layout)  # how a loop's steps are summed
linear(runtime.put_shared, "holder, where, value",
       vjp={"holder": "put_shared_grad_holder(dy, where, holder)",
            "value": "put_shared_grad_value(dy, holder, where, value)"},
       jvp={"*": "put_shared_tangent(dholder, dvalue, holder, where, value)"})
linear(runtime.put_shared_grad_holder, "g, where, holder=None",
       vjp={"g": "put_shared_grad_holder(dy, where, g)"})
linear(runtime.put_shared_grad_value, "g, holder, where, value",
       vjp={"g": "put_at_paths(dy, holder, where, value)"})
linear(runtime.put_at_paths, "g, holder, where, value",
       vjp={"g": "put_shared_grad_value(dy, holder, where, value)"})
linear(runtime.put_shared_tangent, "dholder, dvalue, holder, where, value",
       vjp={"dholder": "put_shared_grad_holder(dy, where, holder)",
            "dvalue": "put_shared_grad_value(dy, holder, where, value)"},
       jvp={"*": "put_shared_tangent(ddholder, ddvalue, holder, where, value)"})
