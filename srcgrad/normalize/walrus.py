"""``:=`` that is evaluated only sometimes: kept in the expression for ``anf``, which binds the
name where the operand runs; refused where that order cannot be kept.

Requires: a statement after ``sugar`` (which took the ``:=`` evaluated on every run of the
statement out into an assignment of its own before it). Guarantees: each ``:=`` left in the
statement is on the right of ``and`` / ``or``, in a branch of ``a if c else b``, or in a
comprehension, and reading its name anywhere in the statement comes after it in evaluation
order; ``anf`` then emits ``n = v`` in the branch (or loop) that evaluates it, as Python binds
``n`` only when that operand runs (a comprehension's ``:=`` binds in the function, as
Python's does).

    s = x[0] > 0 and (n := x[1] * 2.0)   ->   s = x[0] > 0
                                              if s:
                                                  n = x[1] * 2.0
                                                  s = n
"""

from __future__ import annotations

import gast

from ..astutil import walk
from ..errors import UnsupportedSyntaxError
from .skipped_sides import built_where_evaluated

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)


def refuse_misordered(fn_node, location):
    """Each statement of ``fn_node`` as ``_refuse_misordered`` checks it."""
    for stmt in walk(fn_node):
        if isinstance(stmt, gast.stmt):
            _refuse_misordered(stmt, location)


def _refuse_misordered(stmt, location):
    """Raise an ``UnsupportedSyntaxError`` for a ``:=`` of ``stmt`` whose name the statement reads
    before it in source order (``anf`` reads a name where the expression is evaluated, after
    the ``:=`` has rebound it), or that a comprehension in a branch holds (``control`` builds
    that comprehension before the statement, where it would run on both branches)."""
    parts = [v for field, v in gast.iter_fields(stmt)
             if field not in ("body", "orelse", "finalbody", "handlers")]
    nodes = [n for p in parts for n in _nodes(p)]
    for n in nodes:
        if not isinstance(n, gast.NamedExpr):
            continue
        name, here = n.target.id, (n.lineno, n.col_offset)
        if any(isinstance(r, gast.Name) and r.id == name and isinstance(r.ctx, gast.Load)
               and (r.lineno, r.col_offset) < here for r in nodes):
            raise location.error(
                UnsupportedSyntaxError, n, f"srcgrad does not support an assignment expression "
                f"(`{name} := ...`) whose name the statement reads before it; assign it on a "
                "line of its own before")
    _refuse_in_a_branch(stmt, parts, location)


def _refuse_in_a_branch(stmt, parts, location):
    """Raise for a ``:=`` of a comprehension on a side of a choice of ``stmt`` that ``control``
    builds before the statement (not the whole value of a side: ``skipped_sides``)."""
    for p in parts:
        for branch in _branches(p):
            for comp in (c for c in walk(branch) if isinstance(c, _COMPREHENSIONS)):
                inner = next((w for w in walk(comp) if isinstance(w, gast.NamedExpr)), None)
                if inner is not None and not built_where_evaluated(stmt, comp):
                    raise location.error(
                        UnsupportedSyntaxError, inner, "srcgrad does not support an assignment "
                        "expression (`:=`) in a comprehension that only one side of `and` / "
                        "`or` / `if`-`else` evaluates; build the list on a line of its own, in "
                        "an `if` statement")


def _nodes(part):
    if isinstance(part, list):
        return [n for p in part if isinstance(p, gast.AST) for n in walk(p)]
    return list(walk(part)) if isinstance(part, gast.AST) else []


def _branches(part):
    """The operands of ``part`` evaluated only sometimes."""
    for n in _nodes(part):
        if isinstance(n, gast.BoolOp):
            yield from n.values[1:]
        elif isinstance(n, gast.IfExp):
            yield n.body
            yield n.orelse
