"""In-place updates: the statements that change a value instead of binding a new one.

Requires: the :class:`Op` of every assignment. Guarantees: ``list_op`` names the list helper a
statement calls (``xs = list_append(xs, v)``, ``xs = list_pop(xs)``), ``is_setitem`` tells an
element write (``y = setitem(y, i, v)``); the reverse sweep undoes these element by element
instead of saving the whole value.
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import walk


def list_op(ops, stmt):
    """``runtime.list_append`` or ``runtime.list_pop`` when ``stmt`` calls it, else None."""
    op = ops.get(id(stmt))
    if op is not None and op.kind == "rule":
        if op.rule.fn is runtime.list_append or op.rule.fn is runtime.list_pop:
            return op.rule.fn
    return None


def is_setitem(ops, stmt):
    op = ops.get(id(stmt))
    return op is not None and op.kind == "rule" and op.rule.fn is runtime.setitem


def in_place_updates(ops, body):
    """The ids of the element writes and list updates in ``body``."""
    return {
        id(n) for n in walk(gast.Module(body, []))
        if isinstance(n, gast.Assign) and (list_op(ops, n) or is_setitem(ops, n))
    }
