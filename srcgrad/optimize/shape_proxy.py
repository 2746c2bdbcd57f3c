"""Values read only for their shape are not kept: the shape is rebuilt from what they broadcast.

Requires: a generated function and the symbolic broadcast shapes of its straight-line variables
(``analysis/shapes.py``). Guarantees: where a variable's only reads are as the shape reference of
an adjoint helper (``unbroadcast(g, t)``, ``unreduce(g, t)``, ``mean_grad(g, t)``,
``getitem_grad(g, t, i)``), and its shape is the broadcast of arguments and single-assignment
variables, those reads use ``shape_like(a, b)`` -- a zero-strided view of that shape, costing no
memory -- so the variable, and whatever only fed it, becomes dead code for ``DeadCode``.

    l = np.logaddexp(0.0, z)                   # (removed by dead-code elimination)
    t = l - y * z                              # (removed)
    dt = mean_grad(1.0, t)            ->       dt = mean_grad(1.0, shape_like(y, z))
"""

from __future__ import annotations

from collections import Counter

import gast

from .. import runtime
from ..astutil import store_counts

# helper -> positions of arguments it reads only for their shape
SHAPE_ONLY = {
    runtime.unbroadcast: (1,),
    runtime.unreduce: (1,),
    runtime.mean_grad: (1,),
}


class ShapeProxies:
    def __init__(self, ctx, shape_sets, fixed):
        self.ctx = ctx
        self.shape_sets = shape_sets
        self.fixed = fixed

    def run(self, fn_node):
        self.replaced = 0  # shape references replaced by this run
        args = fn_node.args
        params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        counts = store_counts(fn_node)
        helpers = {
            self.ctx.global_name(fn, fn.__name__): positions for fn, positions in SHAPE_ONLY.items()
        }
        shape_reads = {}
        for node in gast.walk(fn_node):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                positions = helpers.get(node.func.id, ())
                for i, a in enumerate(node.args):
                    if i in positions and isinstance(a, gast.Name):
                        shape_reads.setdefault(a.id, []).append((node, i))
        reads = Counter(
            n.id for n in gast.walk(fn_node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        )
        for var, uses in shape_reads.items():
            only_shape = reads[var] == len(uses)  # every read of var is a shape reference
            if not only_shape or var in params or counts[var] != 1 or var in self.fixed:
                continue
            members = self.shape_sets.get(var)
            if members is None or any(
                m not in params and (counts[m] != 1 or m in self.fixed) for m in members
            ):
                continue
            for call, i in uses:
                call.args[i] = self._proxy(members)
                self.replaced += 1
        return fn_node

    def _proxy(self, members):
        if not members:
            return gast.Constant(0.0, None)
        helper = gast.Name(
            self.ctx.global_name(runtime.shape_like, "shape_like"), gast.Load(), None, None
        )
        names = [gast.Name(m, gast.Load(), None, None) for m in sorted(members)]
        return gast.Call(helper, names, [])
