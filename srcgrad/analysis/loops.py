"""Facts about one loop body that the reverse sweep needs.

Requires: a normalized loop and the :class:`Op` of its assignments. Guarantees:
``breaks`` tells a body that may leave early; ``iteration_temporaries`` lists the variables whose
value at the end of an iteration is the one that iteration's adjoint reads (saved once per
iteration, together); ``indexed_reads`` are the active variables read as ``x[...]`` (their
adjoints are updated element by element); ``whole_reads`` are the names read other than as
``x[index]`` (an adjoint stays a zeros buffer updated by element only if its variable is not
among them).

    for i in range(n):        iteration temporaries: t      indexed reads: x
        t = x[i] * 2          whole reads: i, t, s
        s = s + t
"""

from __future__ import annotations

import gast

from ..astutil import loaded, ordered_walk, walk
from .updates import is_setitem, list_op


def breaks(stmts):
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, gast.If) and (breaks(s.body) or breaks(s.orelse)):
            return True
    return False


def iteration_temporaries(loop, ops, compound_assigned, counts, params):
    """Variables assigned inside control flow exactly once, at the top level of the loop body,
    before any read of them (``counts``: how many times each name is assigned in the function).
    """
    target = getattr(getattr(loop, "target", None), "id", None)
    read, out = set(), []
    for s in loop.body:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            read |= loaded(s.value)
            var = s.targets[0].id
            if (
                var in compound_assigned
                and counts[var] == 1
                and var not in params
                and var not in read
                and var != target
                and not is_setitem(ops, s)
                and not list_op(ops, s)
            ):
                out.append(var)
        else:
            read |= loaded(s)
    return out


def indexed_reads(body, ops, active):
    """Active variables read by ``x[...]`` in active statements of ``body``."""
    out = set()
    for n in ordered_walk(gast.Module(body, [])):
        if isinstance(n, gast.Assign) and id(n) in ops and n.targets[0].id in active:
            value = n.value
            if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
                if value.value.id in active:
                    out.add(value.value.id)
    return out


def whole_reads(body):
    """Names ``body`` reads other than as the ``x`` of a statement ``y = x[index]``."""
    tree = gast.Module(body, [])
    as_item = {
        id(n.value.value) for n in walk(tree)
        if isinstance(n, gast.Assign) and isinstance(n.value, gast.Subscript)
    }
    return {
        n.id for n in walk(tree)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in as_item
    }
