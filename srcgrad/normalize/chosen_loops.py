"""Loops over a list of functions that the function changes at run time, dispatched on each item.

Requires: the function as parsed (``chosen.run`` calls ``dispatch`` before desugaring).
Guarantees: a list ``fs`` of the function's own, made only of displays of functions known at
transform time (``[np.sin]``, ``[np.sin] if flag else [np.cos]``), changed only by
``append``, ``insert``, ``extend`` or ``+=`` of such functions (in branches and loops too) and
read only by ``len(fs)``, is
looped over (``for f in fs``) by a loop whose body reads ``f`` only there: each trip branches
on which of those functions the item is, and the body calls that one by its name, so the
inliner knows what each call is:

    fs = [np.sin]                        fs = [np.sin]
    if x[0] > 0:                         if x[0] > 0:
        fs.append(np.cos)                    fs.append(np.cos)
    for f in fs:               ->        for f in fs:
        s = s + f(x)                         if f is np.sin:
                                                 s = s + np.sin(x)
                                             else:
                                                 s = s + np.cos(x)

The last branch takes no test: every item is one of the functions listed. A display chosen
by a conditional expression is assigned in an ``if`` statement instead, so each path makes a
list of its own. Any other use of ``fs`` (passed, indexed, aliased, returned) or of ``f``
after the loop leaves the loop as it is (resolved, or refused at its line, as before).
"""

from __future__ import annotations

import copy

import gast

from ..astutil import clone, walk
from ..frontend.resolve import MISSING
from . import chosen_fields
from .callables import is_callable_value

CHANGES = ("append", "insert", "extend")


def dispatch(fn_node, ctx):
    """Rewrite ``fn_node``'s loops over such lists in place (see the module docstring)."""
    loops = [n for n in walk(fn_node) if isinstance(n, gast.For) and isinstance(
        n.target, gast.Name) and isinstance(n.iter, gast.Name)]
    for loop in loops:
        functions = _functions_of(fn_node, loop.iter.id, ctx)
        if functions and _read_only_in(fn_node, loop) and loop.target.id not in (
                chosen_fields.local_function_reads(ctx)):
            loop.body = _dispatched(loop, functions)
            split_conditional_displays(fn_node, loop.iter.id)


def _functions_of(fn_node, name, ctx):
    """[(expression, object)] of the functions the list ``name`` may hold, each object once,
    or None where ``name`` is not such a list."""
    found, uses = [], 0
    for n in walk(fn_node):
        use = _use(n, name, found, ctx)
        if use is None:
            return None
        uses += use
    if uses != sum(1 for n in walk(fn_node) if _is(n, name)) or not found:
        return None
    known = []
    for expr in found:
        obj = ctx.namespace.resolve(expr, ctx.local_names)
        if obj is MISSING or not is_callable_value(obj):
            return None
        if all(obj is not o for _, o in known):
            known.append((expr, obj))
    return known


def _use(n, name, found, ctx):
    """1 where the node ``n`` is a use of the list ``name`` allowed here (the functions it
    adds to ``found``), None where it is a use that is not, else 0."""
    if isinstance(n, gast.Assign) and any(_is(t, name) for t in n.targets):
        ok = len(n.targets) == 1 and _displays(n.value, found)
    elif isinstance(n, gast.AugAssign) and _is(n.target, name):
        ok = isinstance(n.op, gast.Add) and _displays(n.value, found)
    elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and _is(
            n.func.value, name):
        ok = _changed_by(n, found)
    else:
        return 1 if isinstance(n, gast.For) and _is(n.iter, name) or _measured(
            n, name, ctx) else 0
    return 1 if ok else None


def _measured(node, name, ctx):
    """``len(fs)``."""
    return isinstance(node, gast.Call) and len(node.args) == 1 and _is(node.args[0], name) and (
        isinstance(node.func, gast.Name)) and node.func.id not in ctx.local_names and (
        ctx.namespace.resolve(node.func, ctx.local_names) is len)


def _is(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _displays(value, found):
    """Whether ``value`` is a list or tuple display of static-looking names (``np.sin``), or
    a conditional expression choosing between such displays; their items go to ``found``."""
    if isinstance(value, gast.IfExp):
        return _displays(value.body, found) and _displays(value.orelse, found)
    if not isinstance(value, (gast.List, gast.Tuple)):
        return False
    if not all(_static_looking(e) for e in value.elts):
        return False
    found.extend(value.elts)
    return True


def _static_looking(expr):
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Name)


def _changed_by(call, found):
    """Whether ``call`` is ``fs.append(g)``, ``fs.insert(i, g)`` or ``fs.extend([g, h])``."""
    args = call.args
    if call.keywords or call.func.attr not in CHANGES:
        return False
    if call.func.attr == "extend":
        return len(args) == 1 and _displays(args[0], found)
    item = args[-1] if len(args) == (2 if call.func.attr == "insert" else 1) else None
    if item is None or not _static_looking(item):
        return False
    found.append(item)
    return True


def _read_only_in(fn_node, loop):
    """Whether the loop's target is named nowhere but in the loop, and never assigned in its
    body."""
    inside = {id(n) for n in walk(loop)}
    target = loop.target.id
    if any(_is(n, target) for f in walk(loop) if isinstance(f, (gast.Lambda, gast.FunctionDef))
           for n in walk(f)):
        return False  # (a lambda or nested def reads the last item when it is called)
    named = [n for n in walk(fn_node) if _is(n, target)]
    return all(id(n) in inside for n in named) and not any(
        isinstance(n.ctx, gast.Store) for s in loop.body for n in walk(s) if _is(n, target))


def _dispatched(loop, functions):
    """The loop's body as a branch on which of ``functions`` its target holds."""
    target = loop.target.id
    branch = None
    for expr, _ in reversed(functions):
        body = [_substituted(copy.deepcopy(s), target, expr) for s in loop.body]
        if branch is None:
            branch = body
            continue
        test = gast.Compare(gast.Name(target, gast.Load(), None, None), [gast.Is()],
                            [clone(expr)])
        branch = [gast.copy_location(gast.If(test, body, branch), loop.body[0])]
    return branch


def _substituted(stmt, target, expr):
    """``stmt`` with the reads of ``target`` replaced by ``expr``."""

    class Substitute(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == target and isinstance(node.ctx, gast.Load):
                return gast.copy_location(clone(expr), node)
            return node

    return Substitute().visit(stmt)


def split_conditional_displays(fn_node, name):
    """``fs = [a] if c else [b]`` as ``if c: fs = [a]`` / ``else: fs = [b]``: a list of each
    path's own."""
    for n in walk(fn_node):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list):
                setattr(n, field, [_as_branch(s, name) for s in stmts])


def _as_branch(stmt, name):
    if not (isinstance(stmt, gast.Assign) and _is(stmt.targets[0], name) and isinstance(
            stmt.value, gast.IfExp)):
        return stmt
    value = stmt.value
    paths = [gast.copy_location(gast.Assign([clone(stmt.targets[0])], v), stmt)
             for v in (value.body, value.orelse)]
    return gast.copy_location(gast.If(value.test, [_as_branch(paths[0], name)],
                                      [_as_branch(paths[1], name)]), stmt)
