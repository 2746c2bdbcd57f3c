"""A comprehension on a side of ``and`` / ``or`` / ``x if c else y`` that Python may skip,
built only where Python builds it; part of ``control``.

``control`` builds each comprehension into a loop before the statement that holds it. On a side
of ``and`` / ``or`` / a choice, Python builds it only when it evaluates that side: built first,
a comprehension that raises (``xs[5]`` of a short list) or changes a value in place would do so
where Python never does. Where such a choice is the statement's whole value (``r = a if c else
[...]``, ``return flag and [...]``, an expression statement), the statement becomes an ``if``
that binds the value on each side, so the comprehension is the whole value of its side's
statement and is built there, as Python builds it.

Requires: a statement of the body, before its comprehensions are built. Guarantees: the same
values in the same order (the test evaluated once, first; the chosen side then, as Python);
``if t:`` reads a name no side rebinds (anf takes its truth first anyway).

    r = x if n == 0 else [xs[5] for k in ks]   ->   if n == 0:
                                                        either = x
                                                    else:
                                                        either = [xs[5] for k in ks]
                                                    r = either
    r = flag and [f(v) for v in vs]            ->   both = flag
                                                    if both:
                                                        both_2 = [f(v) for v in vs]
                                                    else:
                                                        both_2 = both
                                                    r = both_2
"""

from __future__ import annotations

import gast

from ..astutil import walk
from ..emit.naming import BOTH, EITHER
from .lambda_list_sites import become
from .moved_effects import CHANGING

_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)


def lowered(s, namer, local_names, namespace=None):
    """``s`` as statements that build a comprehension on a side Python may skip only on that
    side (see above), or None where ``s`` holds no such choice as its whole value, nor (with
    ``namespace``) inside a value whose other parts only compute (``_inner_choices``)."""
    value = _choice(s)
    if value is None:
        return _inner_lowered(s, namer, local_names, namespace)
    stmts, name = _chosen(value, namer, local_names)
    if isinstance(s, gast.Expr):
        return stmts
    s.value = gast.copy_location(gast.Name(name, gast.Load(), None, None), value)
    return stmts + [s]


def _inner_lowered(s, namer, local_names, namespace):
    """``s`` whose choices with a comprehension on a side (``r = (a or [...]) * 2.0 + b``)
    are each bound before it, in the order Python evaluates them, where every other part of
    its value only computes: names, constants, operators, items, fields, and calls of NumPy,
    ``math`` and builtin functions that change nothing (evaluated after those choices then,
    not before: the same values); else None."""
    if namespace is None or not (isinstance(s, gast.Assign) and len(s.targets) == 1 or (
            isinstance(s, (gast.Return, gast.Expr)))) or s.value is None:
        return None
    choices = _outer_choices(s.value)
    if not choices or not _only_computes(s.value, choices, namespace, local_names):
        return None
    out = []
    for choice in choices:
        stmts, name = _chosen(choice, namer, local_names)
        out += stmts
        become(choice, gast.copy_location(gast.Name(name, gast.Load(), None, None), choice))
    return out + [s]


def _outer_choices(value):
    """The choices of ``value`` with a comprehension on a side Python may skip that no other
    such choice holds, in the order ``walk`` meets them."""
    found = []
    for n in walk(value):
        if _skippable(n) and not any(any(m is n for m in walk(f)) for f in found):
            found.append(n)
    return found


def _skippable(n):
    sides = [n.body, n.orelse] if isinstance(n, gast.IfExp) else n.values[1:] if isinstance(
        n, gast.BoolOp) else []
    return any(isinstance(m, _COMPREHENSIONS) for side in sides for m in walk(side))


def _only_computes(value, choices, namespace, local_names):
    """Whether the parts of ``value`` outside ``choices`` only compute (see above)."""
    inside = {id(m) for c in choices for m in walk(c)}
    for n in walk(value):
        if id(n) in inside:
            continue
        if isinstance(n, (gast.NamedExpr, gast.Lambda, gast.Await, gast.Yield) + _COMPREHENSIONS):
            return False
        if isinstance(n, gast.Call) and not _computes(n, namespace, local_names):
            return False
    return True


def _computes(call, namespace, local_names):
    """A call of a NumPy, ``math`` or builtin function that changes nothing (no ``out=``)."""
    try:
        fn = namespace.resolve(call.func, local_names)
    except Exception:  # noqa: BLE001 - what resolves to nothing is no such function
        return False
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    name = getattr(fn, "__name__", "")
    return module in ("numpy", "math", "builtins") and name not in CHANGING and name not in (
        "print", "setattr", "delattr", "exec", "eval", "input", "open", "next") and not any(
        k.arg == "out" for k in call.keywords)


def _choice(s):
    """The whole value of ``s`` (``t = v`` of one name or item, ``return v``, ``v``) if it is
    a choice with a comprehension on a side Python may skip, else None."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 or isinstance(s, (
            gast.Return, gast.Expr)):
        value = s.value
    else:
        return None
    if isinstance(value, gast.IfExp):
        sides = [value.body, value.orelse]
    elif isinstance(value, gast.BoolOp):
        sides = value.values[1:]
    else:
        return None
    return value if any(isinstance(n, _COMPREHENSIONS) for side in sides
                        for n in walk(side)) else None


def _chosen(value, namer, local_names):
    """``(statements, name)``: statements binding ``name`` to the choice ``value`` as Python
    evaluates it (each side a statement of its own)."""
    def bound(name, v):
        return gast.copy_location(gast.Assign([gast.Name(name, gast.Store(), None, None)], v,
                                              None), value)

    def fresh(stem):
        name = namer.fresh(stem)
        local_names.add(name)
        return name

    if isinstance(value, gast.IfExp):
        name = fresh(EITHER)
        return [gast.copy_location(gast.If(value.test, [bound(name, value.body)], [
            bound(name, value.orelse)]), value)], name
    stem = BOTH if isinstance(value.op, gast.And) else EITHER
    first, name = fresh(stem), fresh(stem)
    rest = value.values[1] if len(value.values) == 2 else gast.copy_location(
        gast.BoolOp(value.op, value.values[1:]), value)
    test = gast.Name(first, gast.Load(), None, None)
    taken, kept = [bound(name, rest)], [bound(name, gast.Name(first, gast.Load(), None, None))]
    body, orelse = (taken, kept) if isinstance(value.op, gast.And) else (kept, taken)
    return [bound(first, value.values[0]), gast.copy_location(
        gast.If(test, body, orelse), value)], name


def built_where_evaluated(stmt, comp):
    """Whether ``control`` builds ``comp``, on a side of a choice in ``stmt``, only where
    Python evaluates it: every choice around it is the whole value of ``stmt`` or of a side
    lowered so (``lowered``)."""
    value = _choice(stmt)
    return value is not None and _only_where_evaluated(value, comp)


def _only_where_evaluated(value, comp):
    if isinstance(value, gast.IfExp):
        if _holds(value.test, comp):
            return _no_choice_around(value.test, comp)
        return _only_where_evaluated(value.body if _holds(value.body, comp) else value.orelse,
                                     comp)
    if isinstance(value, gast.BoolOp):
        if _holds(value.values[0], comp):
            return _no_choice_around(value.values[0], comp)
        rest = value.values[1] if len(value.values) == 2 else gast.BoolOp(value.op,
                                                                          value.values[1:])
        return _only_where_evaluated(rest, comp)
    return _no_choice_around(value, comp)


def _holds(node, comp):
    return any(n is comp for n in walk(node))


def _no_choice_around(node, comp):
    """Whether no ``and`` / ``or`` / choice in ``node`` holds ``comp`` on a side it may skip."""
    for n in walk(node):
        if isinstance(n, gast.BoolOp) and any(_holds(v, comp) for v in n.values[1:]) or (
                isinstance(n, gast.IfExp) and (_holds(n.body, comp) or _holds(n.orelse, comp))):
            return False
    return True
