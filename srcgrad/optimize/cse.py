"""Common subexpressions are computed once.

Requires: an A-normal-form body after SSA renaming (a name assigned outside control flow is
assigned once). Guarantees: within one statement list, a pure expression (arithmetic, a
subscript, an array attribute, a NumPy ufunc call) that repeats one computed earlier in the same
list, with none of its operands reassigned in between, is not computed again: the later name is
replaced by the earlier one everywhere. Both names must be assigned exactly once in the function,
so the replacement holds wherever the later name is read. Fewer temporaries means fewer
adjoints, fewer values saved in loops, and shapes that are provably equal (``x[i]`` read twice
is one value, so the broadcast analysis sees one shape). Where an update in place is found by
identity when it runs, a name put into a container or an object's field is never merged: it
must stay an array of its own.

    a = x[i]                      a = x[i]
    b = a ** 2                    b = a ** 2
    c = x[i]            ->        d = 1 - a
    d = 1 - c
"""

from __future__ import annotations

from collections import Counter

import gast
import numpy as np

from ..astutil import loaded, local_names, param_names, store_counts, stored, walk
from ..frontend.resolve import MISSING
from .licm import held_by_identity

# Attributes of an array that read it without computing anything new.
PURE_ATTRIBUTES = {"shape", "T", "ndim", "size", "real", "imag", "dtype", "mT"}


def run(fn_node, ctx):
    """The pass: a repeated pure expression is computed once."""
    return CommonSubexpressions(ctx.namespace, local_names(fn_node)).run(fn_node)


class CommonSubexpressions:
    def __init__(self, namespace, local_names):
        self.namespace = namespace
        self.local_names = local_names

    def run(self, fn_node):
        # a parameter is bound on entry: an assignment in a loop or branch is its second
        # (`for ...: t = P["c"]` leaves the argument in `a` after no trip)
        self.counts = store_counts(fn_node) + Counter(param_names(fn_node, packed=True))
        # (`L = [x * 2.0, x * 2.0]; a = L[0]; a += v` updates only the first)
        self.held = held_by_identity(fn_node, self.namespace, self.local_names)
        self.renames = {}
        fn_node.body = self._block(fn_node.body)
        if self.renames:
            for node in walk(fn_node):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    node.id = self._final(node.id)
        return fn_node

    def _final(self, var):
        while var in self.renames:
            var = self.renames[var]
        return var

    def _block(self, stmts):
        available = {}  # expression key -> (name holding its value, names the expression reads)
        kept = []
        for s in stmts:
            if isinstance(s, gast.Assign) and len(s.targets) == 1:
                target = s.targets[0]
                key = self._key(s.value) if isinstance(target, gast.Name) else None
                if key is not None:
                    hit = available.get(key)
                    if hit is not None and self.counts[target.id] == 1 and (
                            target.id not in self.held):
                        self.renames[target.id] = hit[0]
                        continue
                _forget(available, stored(s))
                if key is not None and self.counts[target.id] == 1:
                    reads = loaded(s.value)
                    if target.id not in reads:
                        available[key] = (target.id, reads)
            else:
                for field in ("body", "orelse"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list) and inner:
                        setattr(s, field, self._block(inner) or [gast.Pass()])
                _forget(available, stored(s))
            kept.append(s)
        return kept

    def _key(self, value):
        """A text that is equal for equal pure expressions (after renaming), else None."""
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            pass
        elif isinstance(value, gast.Subscript):
            if not isinstance(value.value, gast.Name):
                return None
        elif isinstance(value, gast.Attribute):
            if value.attr not in PURE_ATTRIBUTES or not isinstance(value.value, gast.Name):
                return None
        elif isinstance(value, gast.Call):
            if value.keywords or not self._ufunc(value.func):
                return None
        else:
            return None
        for n in walk(value):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                n.id = self._final(n.id)
            elif isinstance(n, (gast.Call, gast.Starred)) and n is not value:
                return None
        return gast.dump(value)

    def _ufunc(self, func):
        if not isinstance(func, (gast.Name, gast.Attribute)):
            return False
        fn = self.namespace.resolve(func, self.local_names)
        return fn is not MISSING and isinstance(fn, np.ufunc)


def _forget(available, names):
    for key, (held, reads) in list(available.items()):
        if held in names or reads & names:
            del available[key]
