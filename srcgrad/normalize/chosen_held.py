"""A parameter tested after an assignment on a run-time value, then held in a list, tuple, dict
or field; part of ``chosen_tests``.

Requires: ``chosen_tests.flagged`` has made the tests of the parameter ``g`` read its flag (or
none is left: ``chosen._held_tail``), and every value ``g`` may hold is known here (what the
call passed, None or a function, and each plain ``g = v`` of a value from outside the
function). Guarantees: where ``g`` is read other than to be called, passed or copied (``fs =
[g, np.sin]``, ``b.act = g``) in a statement of the block after which nothing assigns ``g``,
that statement and the rest of the block are written once per value ``g`` may hold there, each
reading that value where it read ``g`` and its own names for what it assigns; a number recorded
at each assignment picks the copy:

    def f(x, g=None):                       def f(x, g=None):
                                                g_which = 0
        if x[0] > 0:                            if x[0] > 0:
            g = np.cos             ->               g = np.cos
                                                    g_which = 1
        ...                                     ...
        fs = [g, np.sin]                        if g_which == 1:
        return apply_all(fs, x)                     fs_2 = [np.cos, np.sin]
                                                    return apply_all(fs_2, x)
                                                else:
                                                    fs_3 = [g_0, np.sin]
                                                    return apply_all(fs_3, x)

(``g_0``: the function the call passed, by a name of its own, or None.)
"""

from __future__ import annotations

import inspect

import gast

from ..astutil import clone, walk
from ..emit import naming
from ..frontend.resolve import MISSING
from .callables import is_callable_value


def dispatched_tail(body, name, entry, ctx, read, flag):
    """Rewrite ``body`` (statements, in place) as the module docstring says for the read
    ``read`` of the parameter ``name``, which holds ``entry`` where ``body`` starts; whether
    it could (``body`` is left as it was where not: no value known for each binding, or an
    assignment of ``name`` in the statement of ``read`` or after it)."""
    top = next((i for i, s in enumerate(body) if any(n is read for n in walk(s))), None)
    if top is None or any(_stores(s, name) for s in body[top:]):
        return False
    values = [gast.Constant(None, None) if entry is None else gast.Name(
        ctx.global_name(entry, name), gast.Load(), None, None)]
    which = ctx.namer.fresh(naming.WHICH.format(name))
    ctx.local_names.add(which)
    numbers = {}
    head = _numbered([clone(s) for s in body[:top]], name, which, values, numbers)
    if head is None:
        return False
    tail = body[top:]
    renamed = _assigned_only_in(tail, body[:top])
    if renamed & _closure_reads(body, ctx):
        return False  # (a lambda or nested def reads it: one name for all copies)
    live = sorted(_live(head, flag, values, numbers))
    branch = _copy(tail, name, values[live[-1]], renamed, ctx)
    for k in reversed(live[:-1]):
        test = gast.Compare(gast.Name(which, gast.Load(), None, None), [gast.Eq()],
                            [gast.Constant(k, None)])
        located(test, tail[0])  # (the copies keep their own lines)
        branch = [gast.copy_location(gast.If(test, _copy(tail, name, values[k], renamed, ctx),
                                             branch), tail[0])]
    start = gast.Assign([gast.Name(which, gast.Store(), None, None)], gast.Constant(0, None),
                        None)
    body[:] = [located(start, body[0]), *head, *branch]
    return True


def held_functions(fn_node, names, ctx):
    """The names of ``names`` (tested parameters) held in a list, tuple, set or dict display,
    a field (``b.act = g``) or an argument of a class (``Box(g)``), and assigned a function
    somewhere (``g = np.cos``, ``g = g or np.tanh``): parameters given a function or None."""
    held = set()
    for n in walk(fn_node):
        if isinstance(n, (gast.List, gast.Tuple, gast.Set)):
            held |= {e.id for e in n.elts if isinstance(e, gast.Name)}
        elif isinstance(n, gast.Dict):
            held |= {v.id for v in n.values if isinstance(v, gast.Name)}
        elif isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) and any(
                isinstance(t, (gast.Attribute, gast.Subscript)) for t in n.targets):
            held.add(n.value.id)
        elif isinstance(n, gast.Call) and inspect.isclass(ctx.namespace.resolve(
                n.func, ctx.local_names)):
            held |= {a.id for a in [*n.args, *(k.value for k in n.keywords)] if isinstance(
                a, gast.Name)}
    return {p for p in set(names) & held if _assigned_a_function(fn_node, p, ctx)}


def _assigned_a_function(fn_node, name, ctx):
    """Whether ``name`` is assigned a function somewhere: a value that is one (``g = np.cos``),
    or a side of ``or`` / ``and`` / ``if``-``else`` that is (``g = g or np.tanh``); not a
    function a computed value calls (``a = a + np.tanh(s)``)."""
    for s in walk(fn_node):
        if isinstance(s, gast.Assign) and any(_named(t, name) for t in s.targets):
            for n in _values(s.value):
                if isinstance(n, (gast.Name, gast.Attribute)) and not _named(n, name):
                    found = ctx.namespace.resolve(n, ctx.local_names)
                    if found is not MISSING and is_callable_value(found):
                        return True
    return False


def _values(expr):
    """The expressions ``expr`` may evaluate to: itself, or its sides' of a choice."""
    if isinstance(expr, gast.BoolOp):
        return [v for e in expr.values for v in _values(e)]
    if isinstance(expr, gast.IfExp):
        return _values(expr.body) + _values(expr.orelse)
    return [expr]


def _named(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _stores(s, name):
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(
        n.ctx, (gast.Store, gast.Del)) for n in walk(s))


def _numbered(stmts, name, which, values, numbers):
    """``stmts`` with ``which = k`` after the ``k``-th plain assignment ``name = v`` (in
    program order; ``v`` appended to ``values``, ``numbers``: id of the assignment -> k), or
    None where ``name`` is bound otherwise."""
    out = []
    for s in stmts:
        stores = own_stores(s, name)
        if stores and not (isinstance(s, gast.Assign) and len(s.targets) == 1
                           and s.targets[0] is stores[0] and len(stores) == 1):
            return None
        if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block:
                inner = _numbered(block, name, which, values, numbers)
                if inner is None:
                    return None
                setattr(s, field, inner)
        for h in getattr(s, "handlers", None) or ():
            inner = _numbered(h.body, name, which, values, numbers)
            if inner is None:
                return None
            h.body = inner
        out.append(s)
        if stores:
            numbers[id(s)] = len(values)
            values.append(clone(s.value))
            mark = gast.Assign([gast.Name(which, gast.Store(), None, None)],
                               gast.Constant(len(values) - 1, None), None)
            out.append(located(mark, s))
    return out


def _live(head, flag, values, numbers):
    """The bindings that may hold where ``head`` ends: the last plain assignment of the block,
    or any binding in a statement since; after ``if flag: ...; name = v`` (the body's last
    binding, not nested), that one or any of those not None."""
    live = {0}
    for s in head:
        inside = {numbers[id(n)] for n in walk(s) if id(n) in numbers}
        own = [numbers[id(b)] for b in getattr(s, "body", ()) if id(b) in numbers]
        if id(s) in numbers:
            live = {numbers[id(s)]}
        elif isinstance(s, gast.If) and _flag_test(s.test, flag) and not s.orelse and own and (
                max(own) == max(inside)):
            live = {k for k in live if not _is_none(values[k])} | {max(own)}
        else:
            live |= inside
    return live


def _flag_test(test, flag):
    """Whether ``test`` is ``flag`` (whether the parameter holds None), under an even number of
    ``not`` (``not callable(g)`` is ``not not g_is_none``)."""
    negated = False
    while isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        test, negated = test.operand, not negated
    return flag is not None and not negated and _named(test, flag)


def _is_none(value):
    return isinstance(value, gast.Constant) and value.value is None


def _closure_reads(body, ctx):
    """The names the lambdas and nested defs of the function (``check`` took them out of the
    body) and of ``body`` read."""
    functions = [fn for fn, *_ in (getattr(ctx, "local_functions", None) or {}).values()]
    functions += [f for s in body for f in walk(s) if isinstance(f, (gast.Lambda,
                                                                     gast.FunctionDef))]
    return {n.id for f in functions for n in walk(f) if isinstance(n, gast.Name)}


def _assigned_only_in(tail, head):
    """The names the statements ``tail`` assign that ``head`` does not: each copy of the tail
    gets its own (so each is still assigned as often as before)."""
    def stored(stmts):
        return {n.id for s in stmts for n in walk(s) if isinstance(n, gast.Name) and isinstance(
            n.ctx, (gast.Store, gast.Del))}
    return stored(tail) - stored(head)


def _copy(tail, name, value, renamed, ctx):
    """A copy of ``tail`` reading ``value`` where it reads ``name``, its names ``renamed``
    fresh ones."""
    fresh = {n: ctx.namer.fresh(n) for n in sorted(renamed)}
    ctx.local_names.update(fresh.values())
    out = [clone(s) for s in tail]
    for s in out:
        for n in walk(s):
            for field, child in gast.iter_fields(n):
                if _read_of(child, name):
                    setattr(n, field, gast.copy_location(clone(value), child))
                elif isinstance(child, list):
                    child[:] = [gast.copy_location(clone(value), c) if _read_of(c, name) else c
                                for c in child]
            if isinstance(n, gast.Name) and n.id in fresh:
                n.id = fresh[n.id]
    return out


def _read_of(node, name):
    return isinstance(node, gast.Name) and node.id == name and isinstance(node.ctx, gast.Load)


def own_stores(s, name):
    """The ``Name`` nodes binding ``name`` in the statement ``s``, not in its nested
    statements (a loop's target, ``with ... as name`` are its own)."""
    compound = any(isinstance(v, list) and v and isinstance(v[0], gast.stmt)
                   for _, v in gast.iter_fields(s))
    own = [getattr(s, "target", None), *(i.optional_vars for i in getattr(s, "items", ()))]
    return [n for part in (own if compound else [s]) if part is not None for n in walk(part)
            if isinstance(n, gast.Name) and n.id == name and isinstance(
                n.ctx, (gast.Store, gast.Del))]


def located(stmt, where):
    for n in walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)):
            gast.copy_location(n, where)
    return stmt
