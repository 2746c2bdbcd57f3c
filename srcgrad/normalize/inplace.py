"""Writes into arrays never reach an array the function does not own.

Requires: an A-normal-form body where ``y[i] = v`` reads ``y = setitem(y, i, v)``. Guarantees:
every array written in place was created inside the function. A parameter that is written into
is copied once, first, so the caller's array is never modified; a variable that may share memory
with another array (``y = x``, ``y = x[1:]``, ``y = x.T``) and is then written into is rejected
with a clear error instead of silently changing another value.

    def f(x):                      def f(x):
        x[0] = 0.0        ->           x = fresh_copy(x)
        return np.sum(x)               x = setitem(x, 0, 0.0)
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..errors import UnsupportedSyntaxError

# Functions whose result is a new array.
CREATORS = {
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity,
    runtime.fresh_copy, list, dict,
}


class CopyBeforeWrite:
    def __init__(self, ctx, setitem):
        self.ctx = ctx
        self.setitem = setitem

    def run(self, fn_node):
        written = {}
        sources = {}
        for node in gast.walk(fn_node):
            if isinstance(node, gast.Assign):
                target = node.targets[0].id
                if _calls(node.value, self.setitem):
                    written.setdefault(target, node.value)
                else:
                    sources.setdefault(target, []).append(node)
        if not written:
            return fn_node
        params = {a.id for a in fn_node.args.posonlyargs + fn_node.args.args
                  + fn_node.args.kwonlyargs}
        copies = []
        for var in sorted(written):
            for stmt in sources.get(var, []):
                if not self._owning(stmt.value):
                    _, line, _, text = self.ctx.location.of(stmt)
                    raise self.ctx.location.error(
                        UnsupportedSyntaxError,
                        written[var],
                        f"writing into `{var}`, which may share memory with another array "
                        f"(line {line}: {(text or '').strip()}); write into a copy instead "
                        f"(`{var} = ....copy()` or `np.array(...)`)",
                    )
            if var in params:
                helper = gast.Name(
                    self.ctx.global_name(runtime.fresh_copy, "fresh_copy"), gast.Load(), None, None
                )
                copy = gast.Assign(
                    [gast.Name(var, gast.Store(), None, None)],
                    gast.Call(helper, [gast.Name(var, gast.Load(), None, None)], []),
                    None,
                )
                copy.lineno = fn_node.body[0].lineno
                copies.append(copy)
        fn_node.body = copies + fn_node.body
        return fn_node

    def _owning(self, value):
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.List, gast.Tuple)):
            return True
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and func.attr == "copy":
                return True
            fn = self.ctx.namespace.resolve(func, self.ctx.local_names)
            return any(fn is c for c in CREATORS)
        return False


def _calls(value, name):
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == name
    )
