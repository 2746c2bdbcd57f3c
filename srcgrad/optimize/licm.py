"""Loop-invariant code motion: compute once, before the loop, what every iteration recomputes.

Requires: an A-normal-form body. Guarantees: a statement ``t = <pure operation>`` at the top level
of a loop body moves in front of the loop when none of its operands changes inside the loop and
``t`` is assigned nowhere else. Besides saving the work, this keeps such values out of the
reverse sweep's stacks: a hoisted value is never overwritten, so it is never saved.

    for i in range(n):                c_times_k = 0.01 * k
        c_times_k = 0.01 * k    ->    for i in range(n):
        x = x - c_times_k * x             x = x - c_times_k * x
"""

from __future__ import annotations

import gast

from .. import rules, runtime
from ..astutil import loaded, local_names, param_names, store_counts, stored
from ..frontend.resolve import MISSING

_MARKERS = (runtime.try_begin, runtime.try_which, runtime.try_error)


def run(fn_node, ctx):
    """The pass: loop-invariant statements move before their loop."""
    return HoistInvariants(ctx.namespace, local_names(fn_node)).run(fn_node)


class HoistInvariants:
    def __init__(self, namespace, local_names):
        self.namespace = namespace
        self.locals = local_names

    def run(self, fn_node):
        self.store_counts = store_counts(fn_node)
        # a parameter is bound on entry: an assignment in the loop is its second
        self.params = param_names(fn_node)
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
        changed = stored(loop)
        hoisted = []
        kept = []
        for s in loop.body:
            if (
                isinstance(s, gast.Assign)
                and self.store_counts[s.targets[0].id] == 1
                and s.targets[0].id not in self.params
                and not (loaded(s.value) & changed)
                and self._pure(s.value)
            ):
                hoisted.append(s)
                changed.discard(s.targets[0].id)
            else:
                kept.append(s)
        loop.body = kept or [gast.Pass()]
        return hoisted

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
