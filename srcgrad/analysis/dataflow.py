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

from ..astutil import ordered_walk


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


def assigned_values(fn_node):
    """``{name: [the values of its plain bindings name = value]}`` (the flow-insensitive
    closures below read a function's names through these)."""
    values = {}
    for n in ordered_walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            values.setdefault(n.targets[0].id, []).append(n.value)
    return values


def least_names(bindings, makes):
    """The least set of names closed under "some value bound to the name ``makes`` it, given
    the set so far" (``bindings``: name -> values): ``a = []; b = a`` -> {a, b}."""
    names = set()
    while True:
        more = {v for v, values in bindings.items()
                if v not in names and any(makes(x, names) for x in values)}
        if not more:
            return names
        names |= more


def greatest_kinds(bindings, kind_of, start=True):
    """The greatest map name -> kind such that every value bound to the name
    (``bindings``: name -> values, None for a binding other than ``name = value``) is of that
    one kind, as ``kind_of(value, map so far)`` says (None: no kind). Every name starts with
    the kind ``start`` and is re-kinded or dropped until the map stops changing:
    ``d = {}; d = d | e`` keeps ``d`` a dict, where a least fixed point would never admit it."""
    names = {v: start for v, values in bindings.items()
             if values and all(x is not None for x in values)}
    while True:
        kinds = {}
        for v in names:
            found = {kind_of(x, names) for x in bindings[v]}
            if len(found) == 1 and None not in found:
                kinds[v] = found.pop()
        if kinds == names:
            return names
        names = kinds


def item_values(fn_node, added, unknown=()):
    """``{name: [the values held as its items]}`` for the names every plain binding of which is
    a list, tuple or dict display, or adds an item to the name itself (``added(value, name)``:
    the value added, as ``L = list_append(L, v)`` adds v, else None); the names ``unknown``
    (bound otherwise: a parameter, a loop's target) are absent."""
    items = {}
    for name, values in assigned_values(fn_node).items():
        if name in unknown:
            continue
        held = []
        for v in values:
            if isinstance(v, (gast.List, gast.Tuple)):
                held += v.elts
            elif isinstance(v, gast.Dict):
                held += v.values
            elif added(v, name) is not None:
                held.append(added(v, name))
            else:
                break
        else:
            items[name] = held
    return items


def number_kind(value, numbers):
    """``True`` when ``value`` is surely a number, given the names ``numbers`` (a constant, a
    name of them, an arithmetic operation of them), else None: a ``greatest_kinds`` kind."""
    if isinstance(value, gast.Constant):
        return True if type(value.value) in (int, float, bool) else None
    if isinstance(value, gast.Name):
        return True if value.id in numbers else None
    if isinstance(value, gast.BinOp):
        sides = (number_kind(value.left, numbers), number_kind(value.right, numbers))
        return True if sides == (True, True) else None
    return None
