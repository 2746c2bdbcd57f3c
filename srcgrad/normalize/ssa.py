"""Give every redefinition of a variable in straight-line code a fresh name.

Requires: a body in A-normal form. Guarantees: a variable assigned only outside compound
statements is assigned once, so every value of it the adjoint sweep reads is still available
when it is needed, without saving anything. Variables assigned inside an ``if`` or a loop keep
their name everywhere; the reverse transform saves their overwritten values instead.

    x = x * 2          x_2 = x * 2
    y = np.sin(x)  ->  y = np.sin(x_2)
"""

from __future__ import annotations

import gast

from ..astutil import NodeTransformer, ordered_walk


def run(fn_node, ctx):
    """The pass: straight-line redefinitions get fresh names."""
    return SSARename(ctx.namer, ctx.in_place_calls).run(fn_node)


class SSARename(NodeTransformer):
    def __init__(self, namer, in_place=()):
        self.namer = namer
        self.in_place = in_place
        self.current = {}

    def run(self, fn_node):
        args = fn_node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.current[a.id] = a.id
        self.fixed = compound_assigned(fn_node.body, self.in_place)
        for stmt in fn_node.body:
            if isinstance(stmt, gast.Assign) and stmt.targets[0].id not in self.fixed:
                stmt.value = self.visit(stmt.value)
                target = stmt.targets[0]
                if target.id in self.current:
                    new = self.namer.version(target.id)
                else:
                    new = target.id
                self.current[target.id] = new
                target.id = new
            else:
                self.visit(stmt)
        return fn_node

    def visit_Name(self, node):
        if node.id in self.fixed:
            return node
        if isinstance(node.ctx, gast.Load) and node.id in self.current:
            node.id = self.current[node.id]
        return node


def compound_assigned(body, in_place=()):
    """Names assigned inside an ``if``, ``for`` or ``while`` (loop targets included), and names
    updated in place by the helpers named in ``in_place`` (``y = setitem(y, i, v)``)."""
    names = set()
    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for node in ordered_walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    names.add(node.id)
    for node in ordered_walk(gast.Module(body, [])):
        if (
            isinstance(node, gast.Assign)
            and isinstance(node.value, gast.Call)
            and isinstance(node.value.func, gast.Name)
            and node.value.func.id in in_place
        ):
            names.add(node.targets[0].id)
    return names
