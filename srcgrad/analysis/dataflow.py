"""One small dataflow solver for structured bodies, which the analyses here are built on.

Requires: a normalized body (assignments, expressions, ``if``, ``for``, ``while``). Guarantees:
facts flow through the body forward (or backward, for ``backward = True``): an ``if`` joins what
its two branches produce, a loop joins the facts at its entry with those after its body until they
stop changing (the body may run any number of times, zero included), and ``before`` records the
facts on entry to every statement (on the last pass over it). A subclass says what one simple
statement does to the facts (``transfer``), how paths meet (``join``: union by default) and what
entering a loop body binds (``enter_loop``). Facts are immutable values compared with ``==``.

An analysis that ignores statement order (a flow-insensitive one) runs the whole body as if it
were repeated (``repeated``), which reaches the least fixed point of its rules.

    class Assigned(Dataflow):              body:  a = x * 2      Assigned().block(body,
        def transfer(self, stmt, facts):          if c:                         frozenset())
            return facts | stored(stmt)               b = a      ->  {a, b}
"""

from __future__ import annotations

import gast


class Dataflow:
    backward = False

    def __init__(self):
        self.before = {}  # id(statement) -> the facts on entry to it

    def transfer(self, stmt, facts):
        """The facts after the simple statement ``stmt`` (an assignment, an expression)."""
        return facts

    def join(self, first, second):
        """The facts where two paths meet."""
        return first | second

    def enter_loop(self, loop, facts):
        """The facts at the top of ``loop``'s body (a ``for`` binds its target there)."""
        return facts

    def block(self, stmts, facts):
        for stmt in reversed(stmts) if self.backward else stmts:
            facts = self.statement(stmt, facts)
        return facts

    def statement(self, stmt, facts):
        self.before[id(stmt)] = facts
        if isinstance(stmt, gast.If):
            return self.join(self.block(stmt.body, facts), self.block(stmt.orelse, facts))
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, stmt.body, facts)
        return self.transfer(stmt, facts)

    def loop(self, node, body, facts):
        """The facts after ``body`` runs any number of times, starting from ``facts``."""
        head = facts
        while True:
            after = self.join(head, self.block(body, self.enter_loop(node, head)))
            if after == head:
                return head
            head = after

    def repeated(self, body, facts):
        """The facts that hold everywhere once ``body``'s statements may run in any order."""
        return self.loop(None, body, facts)
