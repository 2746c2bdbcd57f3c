"""The tangents of forward mode: the one place they are written and read.

Requires: the variables assigned inside control flow (each of those keeps one tangent name on
every path). Guarantees: ``get`` reads the tangent of a variable as an expression; ``bind`` makes
the statements that give a variable its tangent -- a name or constant is aliased, not copied,
unless the variable lives in a branch or loop, or the name is a tangent that is reassigned later
(a tangent name about to be reassigned is copied first for the variables aliased to it);
``or_zeros`` reads a tangent or builds ``as_like(None, x)`` (zeros) for a value with none.

    bind("y", dx)            (nothing: current["y"] is the name dx)
    bind("z", dx * w)        dz = dx * w
"""

from __future__ import annotations

import gast

from .. import runtime
from .nodes import assign, call, name


class Tangents:
    def __init__(self, ctx, assigned_in_control):
        self.ctx = ctx
        self.assigned_in_control = assigned_in_control
        self.current = {}  # variable -> expression of its tangent (a name, after aliasing)
        self.names = {}  # variable -> the name its tangent is stored under

    def __contains__(self, var):
        return var in self.current

    def get(self, var):
        return self.current[var]

    def name(self, var):
        if var not in self.names:
            self.names[var] = self.ctx.namer.adjoint(var)
        return self.names[var]

    def seed(self, var, value):
        """``dvar = value`` as the first tangent of ``var``."""
        target = self.name(var)
        self.current[var] = name(target)
        return assign(target, value)

    def declare(self, var):
        """``var`` has a tangent under its own name (read in a loop before it is assigned)."""
        self.current.setdefault(var, name(self.name(var)))

    def or_zeros(self, atom):
        """The tangent of ``atom``, or a zero with its structure and dtype (``as_like``: a
        float32 number's is np.float32(0), a tuple's a tuple) where it has none; it may be
        returned as it is, an element of the output, so it has the form a user is given."""
        if isinstance(atom, gast.Name) and atom.id in self.current:
            return self.current[atom.id]
        return call(self.ctx, runtime.as_like, gast.Constant(None, None), atom)

    def bind(self, target, value, prelude):
        """Bind the tangent of ``target``; a name or constant is aliased unless ``target`` lives
        in a branch or loop, where its tangent needs one stable name on every path."""
        alias = isinstance(value, (gast.Name, gast.Constant)) and not prelude
        if isinstance(value, gast.Name) and any(
            self.names.get(v) == value.id for v in self.assigned_in_control
        ):
            alias = False  # that tangent is reassigned later (`s = a; a = 0.5`): copy it now
        if alias and target not in self.assigned_in_control:
            self.current[target] = value
            return []
        dname = self.name(target)
        kept = self._unalias(target, dname)
        self.current[target] = name(dname)
        return kept + prelude + [assign(dname, value)]

    def _unalias(self, target, dname):
        """Before ``dname`` is reassigned: the variables aliased to it (``v = y`` gave v the
        tangent name dy; ``y`` is not renamed when its array is written in place) get a copy of
        the name under their own, or they would read y's new tangent."""
        kept = []
        for var, expr in list(self.current.items()):
            if var != target and isinstance(expr, gast.Name) and expr.id == dname:
                own = self.name(var)
                if own != dname:
                    self.current[var] = name(own)
                    kept.append(assign(own, name(dname)))
        return kept
