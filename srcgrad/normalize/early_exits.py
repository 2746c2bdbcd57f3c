"""``break`` and ``continue`` of a loop over functions that is unrolled; part of
``unpacking.unroll_function_loops``.

Requires: the copies of a loop's body, one per item, as ``unpacking`` makes them (the loop has
no ``else``). Guarantees: the copies run as the loop's trips would: a ``break`` (at the loop's
own level: not one of a loop inside) skips the rest of its copy and every copy after it, a
``continue`` the rest of its copy; the statements after a branch that may jump run under the
flags it sets.

    for f in (np.sin, np.cos):        stopped = False
        x = f(x)                      left = False
        if x[0] > 5.0:          ->    x = np.sin(x)
            break                     if x[0] > 5.0:
                                          left = True
                                          stopped = True
                                      if not stopped:
                                          left = False
                                          x = np.cos(x)
                                          ...
"""

from __future__ import annotations

import gast

from ..emit.naming import LOOP_LEFT, LOOP_STOPPED

_LOOPS = (gast.For, gast.While)


def jumps(stmts):
    """Whether ``stmts`` (a loop's body) hold a ``break`` or ``continue`` of that loop."""
    return any(_jumps(s) for s in stmts)


def unrolled(copies, fresh, where):
    """The statements running ``copies`` (lists of statements) in order, as the trips of a loop
    (see the module's docstring); ``fresh(stem)`` names the flags."""
    if not any(jumps(c) for c in copies):
        return [s for c in copies for s in c]
    left, stopped = fresh(LOOP_LEFT), fresh(LOOP_STOPPED)
    out = [_set(stopped, False, where)]
    for k, body in enumerate(copies):
        trip = [_set(left, False, where)] + _lowered(body, left, stopped, where)
        out += trip if k == 0 else [gast.copy_location(gast.If(
            gast.UnaryOp(gast.Not(), gast.Name(stopped, gast.Load(), None, None)), trip, []),
            where)]
    return out


def _jumps(node):
    """Whether ``node`` holds a ``break``/``continue`` not inside a loop of its own."""
    if isinstance(node, (gast.Break, gast.Continue)):
        return True
    if isinstance(node, _LOOPS) or not isinstance(node, gast.stmt):
        return False
    return any(_jumps(s) for f in ("body", "orelse", "finalbody") for s in getattr(
        node, f, None) or () if isinstance(s, gast.stmt)) or any(
        _jumps(s) for h in getattr(node, "handlers", None) or () for s in h.body)


def _lowered(stmts, left, stopped, where):
    """``stmts`` with each jump setting the flags, and the statements after a statement that
    may jump run only when it did not."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, gast.Break):
            return out + [_set(left, True, s), _set(stopped, True, s)]
        if isinstance(s, gast.Continue):
            return out + [_set(left, True, s)]
        if not _jumps(s):
            out.append(s)
            continue
        for field_ in ("body", "orelse"):
            setattr(s, field_, _lowered(getattr(s, field_), left, stopped, where))
        s.body = s.body or [gast.Pass()]
        out.append(s)
        rest = _lowered(stmts[i + 1:], left, stopped, where)
        if rest:
            out.append(gast.copy_location(gast.If(
                gast.UnaryOp(gast.Not(), gast.Name(left, gast.Load(), None, None)), rest, []),
                where))
        return out
    return out


def _set(name, value, where):
    return gast.copy_location(gast.Assign([gast.Name(name, gast.Store(), None, None)],
                                          gast.Constant(value, None), None), where)


def only_ifs(stmts):
    """Whether every jump of ``stmts`` sits in ``if`` statements (not in a ``try`` or ``with``,
    which refuse a jump out of them)."""
    for s in stmts:
        if isinstance(s, _LOOPS) or not _jumps(s):
            continue
        if isinstance(s, (gast.Break, gast.Continue)):
            continue
        if not isinstance(s, gast.If) or not (only_ifs(s.body) and only_ifs(s.orelse)):
            return False
    return True

