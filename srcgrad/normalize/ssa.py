"""Give every redefinition of a variable in straight-line code a fresh name.

Requires: a body in A-normal form. Guarantees: outside compound statements, no variable is
assigned twice, so every value the adjoint sweep reads is still available when it is needed,
without saving anything.

    x = x * 2          x_2 = x * 2
    y = np.sin(x)  ->  y = np.sin(x_2)
"""

from __future__ import annotations

import gast


class SSARename(gast.NodeTransformer):
    def __init__(self, namer):
        self.namer = namer
        self.current = {}

    def run(self, fn_node):
        args = fn_node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.current[a.id] = a.id
        for stmt in fn_node.body:
            if isinstance(stmt, gast.Assign):
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
        if isinstance(node.ctx, gast.Load) and node.id in self.current:
            node.id = self.current[node.id]
        return node
