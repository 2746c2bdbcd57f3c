"""Resolve the names a function reads to Python objects, at transform time.

Requires: the function object. Guarantees: ``Namespace.lookup(name)`` finds a name in the
function's closure cells, then its globals, then builtins, exactly as Python would at call time;
``Namespace.resolve(expr, local_names)`` evaluates a dotted name such as ``np.linalg.norm`` to the
object it denotes, so rules are found by identity (``numpy.exp``) whatever the user imported it as.
"""

from __future__ import annotations

import builtins

import gast

MISSING = object()


class Namespace:
    def __init__(self, fn):
        self.fn = fn
        self.globals = getattr(fn, "__globals__", {})
        code = getattr(fn, "__code__", None)
        cells = getattr(fn, "__closure__", None) or ()
        freevars = code.co_freevars if code is not None else ()
        self.cells = dict(zip(freevars, cells))
        self.extras = {}  # names generated code adds (helpers, inlined callees' globals)

    def lookup(self, name):
        if name in self.extras:
            return self.extras[name]
        cell = self.cells.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                return MISSING
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, MISSING)

    def resolve(self, expr, local_names=()):
        """The object a dotted name denotes, or MISSING when it is not a static name."""
        if isinstance(expr, gast.Name):
            if expr.id in local_names:
                return MISSING
            return self.lookup(expr.id)
        if isinstance(expr, gast.Attribute):
            base = self.resolve(expr.value, local_names)
            if base is MISSING:
                return MISSING
            return getattr(base, expr.attr, MISSING)
        return MISSING
