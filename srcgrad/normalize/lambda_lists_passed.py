"""One function that holds values of its own passed to a helper by itself; part of
``lambda_lists``.

Requires: a function kept past its trip (``h = g`` in a loop that makes ``g`` anew, holding
``(0, *defaults)``: ``lambda_lists.kept_past_trips``) or an item of a list of functions
changed at run time (``fs[i]``, holding ``(k, ...)``: ``lambda_lists.run``), given by itself
as an argument of a call of a helper. Guarantees: the argument is a name holding that tuple
(an item is named just before the statement of the call: ``fs_item = fs[0]``), noted in
``ctx.lambda_lists`` as a ``Whole``; where the helper is inlined, each call of its parameter
calls the function the tuple says (``passed_to``), as a call of an item of a list does.

    h = g                                  h = (0, c_default)
    ...                             ->     ...
    apply(h, x)                            apply(h, x)    # def apply(f, x): lambda_2(x, f[1])
"""

from __future__ import annotations

import gast

from ..astutil import walk


class Whole(list):
    """The signatures of the functions a name may hold by itself (not a list of them)."""


def passed_alone(fn_node, name):
    """The calls of a name or a dotted name (a helper's, not ``len``) that pass ``name`` by
    itself as a positional argument."""
    return [c for c in walk(fn_node) if _a_helper(c) and getattr(c.func, "id", None) != name and (
        any(isinstance(a, gast.Name) and a.id == name for a in c.args))]


def _a_helper(call):
    """A call of a name or a dotted name, not ``len`` (a list's allowed read)."""
    return isinstance(call, gast.Call) and isinstance(call.func, (gast.Name, gast.Attribute)) and (
        getattr(call.func, "id", None) != "len")


def items_passed(fn_node, call, is_item):
    """The items (``fs[0]``, ``is_item``) ``call`` of a helper passes by themselves, if each
    can be named just before the statement of the call (Python reads it there: the call is
    no part of a lambda, a comprehension, a ``while`` test or a side of ``and``, ``or``,
    ``if``-``else`` Python may skip, and the statement rebinds no name by ``:=`` before it
    reads the item), else None."""
    items = [a for a in call.args if is_item(a)] if _a_helper(call) else []
    if not items:
        return None
    return items if statement_of(fn_node, call) is not None else None


_SOMETIMES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
              gast.IfExp, gast.BoolOp, gast.NamedExpr)


def statement_of(fn_node, call):
    """``(statements, i)``: the block and the place of the statement that evaluates ``call``
    once, before anything else it holds may change (a plain statement, an ``if`` test, a
    ``for`` sequence), else None."""
    for stmts in _blocks(fn_node):
        for i, s in enumerate(stmts):
            head = [s.test] if isinstance(s, gast.If) else [s.iter] if isinstance(
                s, gast.For) else [] if hasattr(s, "body") else [s]
            if any(c is call for h in head for c in walk(h)):
                return (stmts, i) if _surely(head, call) else None
    return None


def _blocks(fn_node):
    """The blocks of statements of ``fn_node`` (not of a nested def's)."""
    for n in walk(fn_node):
        if n is not fn_node and isinstance(n, (gast.FunctionDef, gast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list):
                yield stmts


def _surely(head, call):
    """Whether the parts ``head`` of a statement evaluate ``call`` on every run, and rebind no
    name by ``:=``."""
    sometimes = [m for h in head for m in walk(h) if isinstance(m, _SOMETIMES)]
    return not any(isinstance(m, gast.NamedExpr) for m in sometimes) and not any(
        c is call for m in sometimes for c in walk(m))


def reads_passed(calls, name):
    """How many reads of ``name`` the ``calls`` pass (``apply(h, h)``: two)."""
    return sum(1 for c in calls for a in c.args if isinstance(a, gast.Name) and a.id == name)


def name_items(fn_node, given, namer, stem):
    """Each item of ``given`` (``[(call, item)]``) named just before the statement of its call
    (``fs_item = fs[0]``), the call passing that name; the names."""
    names = []
    for call, item in given:
        stmts, i = statement_of(fn_node, call)
        named = namer.fresh(stem)
        stmts.insert(i, gast.copy_location(gast.Assign(
            [gast.Name(named, gast.Store(), None, None)], item, None), call))
        call.args = [gast.Name(named, gast.Load(), None, None) if a is item else a
                     for a in call.args]
        names.append(named)
    return names


def whole_uses(helper, name, given):
    """``[(callee, call)]`` of the calls of ``name`` in ``helper``, if ``name`` is read only to
    be called or passed on by itself to another helper (noted in ``given``) and no lambda or
    nested def reads it, else None."""
    reads = [r for r in walk(helper) if isinstance(r, gast.Name) and r.id == name and (
        isinstance(r.ctx, gast.Load))]
    calls = [c for c in walk(helper) if isinstance(c, gast.Call) and isinstance(
        c.func, gast.Name) and c.func.id == name]
    on = passed_alone(helper, name)
    nested = [f for f in walk(helper) if isinstance(f, (gast.Lambda, gast.FunctionDef)) and (
        f is not helper)]
    if len(calls) + reads_passed(on, name) != len(reads) or any(
            isinstance(r, gast.Name) and r.id == name for f in nested for r in walk(f)):
        return None
    given += on
    return [(c.func, c) for c in calls]
