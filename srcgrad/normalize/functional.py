"""Rewrite the in-place helpers of generated code into forms that are safe to differentiate.

Requires: a parsed function (generated code is input too). Guarantees: calls that update an
adjoint buffer in place become functional, so a second transform never sees a value change under
it: ``add_at(acc, i, g)`` becomes ``add(acc, getitem_grad(g, acc, i))``, ``zero_item(d, i)``
zeroes a copy, and ``restore_item(y, i, v)`` is the element write ``setitem(copy_array(y), i, v)``
it is, into a copy.
First-order code keeps the fast in-place forms; only code that is differentiated again pays.
"""

from __future__ import annotations

import gast

from .. import runtime
from ..frontend.resolve import MISSING


def run(fn_node, ctx):
    """The pass: in-place helper calls of generated code become functional ones."""
    return FunctionalHelpers(ctx).run(fn_node)


class FunctionalHelpers(gast.NodeTransformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def run(self, fn_node):
        return self.visit(fn_node)

    def _ref(self, fn):
        return gast.Name(self.ctx.global_name(fn, fn.__name__), gast.Load(), None, None)

    def visit_Call(self, node):
        self.generic_visit(node)
        fn = self.ctx.namespace.resolve(node.func, self.ctx.local_names)
        if fn is MISSING or node.keywords:
            return node
        if fn is runtime.add_at and len(node.args) == 3:
            acc, index, g = node.args
            scatter = gast.Call(self._ref(runtime.getitem_grad), [g, acc, index], [])
            return gast.copy_location(gast.Call(self._ref(runtime.add), [acc, scatter], []), node)
        if fn is runtime.zero_item and len(node.args) == 2:
            buffer, index = node.args
            if not (isinstance(buffer, gast.Call) and self._is(buffer.func, runtime.copy_array)):
                copied = gast.Call(self._ref(runtime.copy_array), [buffer], [])
                node.args = [copied, index]
            return node
        if fn is runtime.restore_item and len(node.args) == 3:
            # the restore writes into a copy: the array it restores may have come from a save
            # stack (`y = y_saved.pop()`), which a second transform cannot prove unshared
            buffer, index, saved = node.args
            copied = gast.Call(self._ref(runtime.copy_array), [buffer], [])
            return gast.copy_location(
                gast.Call(self._ref(runtime.setitem), [copied, index, saved], []), node
            )
        if fn is runtime.restore_item:
            node.func = self._ref(runtime.setitem)
        return node

    def _is(self, func, fn):
        return self.ctx.namespace.resolve(func, self.ctx.local_names) is fn
