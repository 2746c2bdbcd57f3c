"""Which variables hold a value before a statement runs.

Requires: a normalized body, the function's parameters and the in-place updates (``y =
setitem(y, i, v)``, list appends and pops: they change a value, they bind none). Guarantees: for
every statement, ``surely`` is the set of variables bound on every path to it, and ``maybe`` the
set bound on some path to it that runs no loop body twice -- that is, bound before the statement
runs for the first time. A loop may run zero times, so what its body binds is never sure after
it; a ``for`` target counts as maybe bound only (in the body too). The reverse sweep saves an old
value only where one may exist (and binds ``x = None`` first where the save may find ``x``
unbound), and zero-initialises an adjoint with ``zeros_like(x)`` only where ``x`` surely exists.

    def f(x, c):                before `if`:   surely {x, c}          maybe {x, c}
        if c:                   before `z = ...`: surely {x, c}       maybe {x, c, y}
            y = x
        z = x * 2
"""

from __future__ import annotations

import gast

from .dataflow import Dataflow


class SurelyDefined(Dataflow):
    def __init__(self, updates):
        super().__init__()
        self.updates = updates

    def transfer(self, stmt, facts):
        if isinstance(stmt, gast.Assign) and id(stmt) not in self.updates:
            return facts | {stmt.targets[0].id}
        return facts

    def join(self, first, second):
        return first & second


class MaybeDefined(SurelyDefined):
    def join(self, first, second):
        return first | second

    def enter_loop(self, loop, facts):
        if isinstance(loop, gast.For):
            return facts | {loop.target.id}
        return facts

    def loop(self, node, body, facts):
        # the first run of the body: a later run only adds values a save already finds there
        return self.join(facts, self.block(body, self.enter_loop(node, facts)))


class Definitions:
    """Both sets before every statement of a function's body."""

    def __init__(self, body, params, updates):
        params = frozenset(params)
        self._surely = SurelyDefined(updates)
        self._surely.block(body, params)
        self._maybe = MaybeDefined(updates)
        self._maybe.block(body, params)

    def surely(self, stmt):
        """None for a statement the analysis has not seen (one the transform added)."""
        return self._surely.before.get(id(stmt))

    def maybe(self, stmt):
        return self._maybe.before.get(id(stmt), frozenset())
