"""Loop-invariant code motion: compute once, before the loop, what every iteration recomputes.

Requires: an A-normal-form body. Guarantees: a statement ``t = <pure operation>`` at the top level
of a loop body moves in front of the loop when none of its operands changes inside the loop and
``t`` is assigned nowhere else. Besides saving the work, this keeps such values out of the
reverse sweep's stacks: a hoisted value is never overwritten, so it is never saved.

    for i in range(n):                c_times_k = 0.01 * k
        c_times_k = 0.01 * k    ->    for i in range(n):
        x = x - c_times_k * x             x = x - c_times_k * x

Where an update in place is found by identity when it runs (``shared_positions``,
normalize/sharing.py), a value the loop puts into a list, dict, tuple or object's field stays in
the loop: hoisted, every trip would put the same array there (``L.append(x * 2.0)``), and
``a = L[0]; a += v`` would update all of them.
"""

from __future__ import annotations

import gast

from .. import rules, runtime
from ..astutil import loaded, local_names, param_names, store_counts, stored, walk
from ..frontend.resolve import MISSING

_MARKERS = (runtime.try_begin, runtime.try_which, runtime.try_error)


def run(fn_node, ctx):
    """The pass: loop-invariant statements move before their loop."""
    return HoistInvariants(ctx.namespace, local_names(fn_node), ctx.helpers.get("setitem")).run(
        fn_node)


class HoistInvariants:
    def __init__(self, namespace, local_names, setitem=None):
        self.namespace = namespace
        self.locals = local_names
        self.setitem = setitem  # the name element writes call (`y = setitem(y, i, v)`)

    def run(self, fn_node):
        self.store_counts = store_counts(fn_node)
        # a parameter is bound on entry: an assignment in the loop is its second
        self.params = param_names(fn_node)
        self.bindings = {}
        for n in walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                self.bindings.setdefault(n.targets[0].id, []).append(n.value)
        self.held = held_by_identity(fn_node, self.namespace, self.locals)
        fn_node.body = self._block(fn_node.body)
        return fn_node

    def _block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, gast.If):
                s.body = self._block(s.body)
                s.orelse = self._block(s.orelse)
            if isinstance(s, (gast.For, gast.While)):
                s.body = self._block(s.body)
                out.extend(self._hoist(s))
            out.append(s)
        return out

    def _hoist(self, loop):
        # a name that may be a view of an array the loop writes into changes with it
        changed = stored(loop) | self._views_of(self._written(loop))
        hoisted = []
        kept = []
        for s in loop.body:
            if (
                isinstance(s, gast.Assign)
                and self.store_counts[s.targets[0].id] == 1
                and s.targets[0].id not in self.params
                and s.targets[0].id not in self.held
                and not (loaded(s.value) & changed)
                and self._pure(s.value)
            ):
                hoisted.append(s)
                changed.discard(s.targets[0].id)
            else:
                kept.append(s)
        loop.body = kept or [gast.Pass()]
        return hoisted

    def _written(self, loop):
        """The arrays the loop writes into by element (``y = setitem(y, i, v)``)."""
        return {n.targets[0].id for n in walk(loop) if isinstance(n, gast.Assign)
                and isinstance(n.targets[0], gast.Name) and isinstance(n.value, gast.Call)
                and isinstance(n.value.func, gast.Name) and n.value.func.id == self.setitem}

    def _views_of(self, written):
        """The names bound (anywhere) from an expression rooted at one of ``written`` or at such
        a name, transitively: ``w = M[0]``, ``v = y.T``, ``r = np.reshape(y, s)`` (conservative:
        any call of one)."""
        out = set(written)
        grown = True
        while grown:
            grown = False
            for name, values in self.bindings.items():
                if name not in out and any(_root(v) in out for v in values):
                    out.add(name)
                    grown = True
        return out - set(written)

    def _pure(self, value):
        if isinstance(value, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(value, gast.Attribute):
            return value.attr in ("T", "shape", "ndim", "size", "dtype")
        if isinstance(value, gast.Call):
            fn = self.namespace.resolve(value.func, self.locals)
            # a `try` marker stays where the branch it starts is (emit/handlers.py)
            return fn is not MISSING and fn is not print and rules.lookup(fn) is not None and (
                fn not in _MARKERS)
        return False


def held_by_identity(fn_node, namespace, locals_):
    """Where an update in place is found by identity when it runs (``shared_positions``, and a
    checkpointed loop's step, which updates its state in place in a copy that keeps what is one
    array one: ``L = [x * 1.0]; z = x * 1.0`` merged made ``O = L[0]; O *= 0.9`` scale ``z``
    too, checkpoint.py), the names an assignment puts into a list, dict, tuple or an object's
    field: each must stay the array it was made as (not hoisted out of a loop, not merged with
    an equal one); else none."""
    from ..normalize.aliasing import checkpointed_loop_fn

    by_identity = (runtime.shared_positions, checkpointed_loop_fn())
    if not any(isinstance(n, gast.Call) and any(
            namespace.resolve(n.func, locals_) is f for f in by_identity) for n in walk(fn_node)):
        return set()
    return held_names(fn_node, namespace, locals_)


def held_names(fn_node, namespace, locals_):
    """The names an assignment puts into a list, dict, tuple or an object's field."""
    holding = (runtime.list_append, runtime.list_insert, runtime.list_extend, runtime.setitem,
               runtime.dict_update, runtime.set_field, runtime.replace_field, runtime.put_shared,
               runtime.field_updated)
    out = set()
    for n in walk(fn_node):
        if not isinstance(n, gast.Assign):
            continue
        value = n.value
        if isinstance(value, (gast.List, gast.Tuple)):
            items = value.elts
        elif isinstance(value, gast.Dict):
            items = value.values
        elif isinstance(value, gast.Call) and any(
                namespace.resolve(value.func, locals_) is h for h in holding):
            items = value.args[1:]
        else:
            continue
        out |= {e.id for e in items if isinstance(e, gast.Name)}
    return out


def _root(value):
    """The name an expression reads its array from: ``M`` of ``M[0]``, ``M.T``, ``M.reshape()``,
    ``np.ravel(M)``, ``np.einsum("ij->ji", M)``; None for anything else."""
    while True:
        if isinstance(value, gast.Name):
            return value.id
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            value = value.value
        elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and (
                not isinstance(value.func.value, gast.Name) or value.func.value.id != "np"):
            value = value.func.value
        elif isinstance(value, gast.Call) and value.args:
            # np.einsum("ij->ji", M) is a view of its one operand
            value = value.args[1] if isinstance(value.args[0], gast.Constant) and len(
                value.args) == 2 else value.args[0]
        else:
            return None
