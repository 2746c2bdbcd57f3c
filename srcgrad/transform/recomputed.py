"""What a pullback's ``back`` would compute again on every call, computed once by the primal.

Requires: the primal and the sweep of a pullback (transform/pullback.py), before the sweep
becomes ``back``. Guarantees: a call of a NumPy ufunc in the sweep whose arguments are values the
primal left (constants, names the sweep never rebinds, or the values a loop's sweep pops from
its stack and the names it restores from them) is evaluated where the primal had those values:

- in a loop, at the ``append`` that saves them: its value goes onto the stack beside them, and
  the sweep pops it instead of calling the ufunc (``np.cos(theta)`` of every trip, for example);
- elsewhere, at the end of the primal, bound to a new name ``back`` reads; there also the
  arithmetic (``+ - *``) on such values alone (``1 - y * y``, the derivative of
  ``y = np.tanh(x)``).

The value is the same call on the same objects, so ``back`` computes what it computed before;
the vjp (which runs its sweep once) is unchanged. A stack saved or popped at more than one place,
and any call inside a branch or a nested loop of the sweep, is left alone.

    for i in range(n):                        for i in range(n):
        ...                                       ...
        saved.append((x_old,))        ->          saved.append((x_old, np.cos(x_old)))
    def back(seed):                           def back(seed):
        for i in reversed(range(n)):              for i in reversed(range(n)):
            (x_old,) = saved.pop()                    (x_old, cos_x) = saved.pop()
            x = x_old                                 x = x_old
            dx = dx * np.cos(x)                       dx = dx * cos_x
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from ..astutil import walk
from ..emit.unparse import is_comment
from .nodes import assign


def run(primal, sweep, ctx, surely):
    """Move the sweep's recomputations into the primal (statements changed in place; the
    assignments of the straight-line ones are appended to ``primal``). ``surely``: the names
    bound when the primal ends (the parameters, its top-level assignments)."""
    local = _bound(primal + sweep, (gast.Store, gast.Del))
    ufunc = _ufunc_test(ctx, local | surely)
    for loop in [n for n in walk(gast.Module(sweep, [])) if isinstance(n, gast.For)]:
        _loop(loop, primal, sweep, ufunc, ctx)
    # names the sweep never rebinds (its `del` comes after its reads), bound when the primal
    # ends and never deleted there
    kept = surely - _bound(sweep, gast.Store) - _bound(primal, gast.Del)
    held = {}
    for stmt in sweep:
        if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Return, gast.Expr)):
            continue
        for call in _calls(stmt, ufunc) + _arithmetic(stmt, ufunc, kept):
            if not _read(call) <= kept:
                continue
            key = gast.dump(call)
            if key not in held:
                held[key] = ctx.namer.temp(call)
                primal.append(assign(held[key], copy.deepcopy(call)))
                kept.add(held[key])  # (an arithmetic part holding the call reads it)
            _replace(stmt, call, held[key])


# (not / or **: Python raises on a float divided by zero, so the primal would raise where only
# a call of back did)
ARITHMETIC = (gast.Add, gast.Sub, gast.Mult)


def _bound(stmts, kinds):
    return {n.id for n in walk(gast.Module(stmts, []))
            if isinstance(n, gast.Name) and isinstance(n.ctx, kinds)}


def _ufunc_test(ctx, local):
    """Whether a call is of a NumPy ufunc (by a module attribute the function does not
    rebind), with positional arguments only."""
    def test(node):
        func = node.func
        if (node.keywords or not isinstance(func, gast.Attribute)
                or not isinstance(func.value, gast.Name) or func.value.id in local):
            return False
        module = ctx.namespace.lookup(func.value.id)
        return module is np and isinstance(getattr(np, func.attr, None), np.ufunc)
    return test


def _calls(stmt, ufunc):
    """The ufunc calls of ``stmt`` whose arguments are names or constants."""
    return [n for n in walk(stmt) if isinstance(n, gast.Call) and ufunc(n) and n.args and all(
        isinstance(a, (gast.Name, gast.Constant)) for a in n.args)]


def _read(node):
    """The names ``node`` reads as values (not the module of a ufunc it calls)."""
    if isinstance(node, gast.Call):
        return set().union(*map(_read, node.args))
    if isinstance(node, gast.Name):
        return {node.id}
    return set().union(*map(_read, gast.iter_child_nodes(node)))


def _arithmetic(stmt, ufunc, kept):
    """The largest parts of ``stmt`` that are arithmetic (``+ - *``, unary minus, ufunc calls)
    on the names in ``kept`` and constants, with at least one such name: ``1 - y * y`` of the
    adjoint of ``y = np.tanh(x)``."""
    found = []

    def of_kept(node):
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, gast.Name):
            return node.id in kept
        if isinstance(node, gast.BinOp):
            return type(node.op) in ARITHMETIC and of_kept(node.left) and of_kept(node.right)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, gast.USub) and of_kept(node.operand)
        return isinstance(node, gast.Call) and node in calls and all(map(of_kept, node.args))

    def visit(node):
        if isinstance(node, (gast.BinOp, gast.UnaryOp)) and of_kept(node) and _read(node):
            found.append(node)
            return
        for child in gast.iter_child_nodes(node):
            visit(child)

    calls = _calls(stmt, ufunc)
    visit(stmt)
    return found


def _replace(stmt, call, name):
    for node in walk(stmt):
        for field, value in gast.iter_fields(node):
            if value is call:
                setattr(node, field, gast.Name(name, gast.Load(), None, None))
            elif isinstance(value, list):
                value[:] = [gast.Name(name, gast.Load(), None, None) if v is call else v
                            for v in value]


def _loop(loop, primal, sweep, ufunc, ctx):
    """One loop of the sweep that starts by popping a stack the primal pushes once."""
    body = [s for s in loop.body if not is_comment(s)]
    pair = _stack(body, primal, sweep)
    if pair is None:
        return
    saved, targets = pair
    alias = {t.id: s.id for t, s in zip(targets, saved)}  # sweep name -> the primal's
    held = {}
    for stmt in body[1:]:
        if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr)):
            for call in _calls(stmt, ufunc):
                forward = _in_primal(call, alias)
                if forward is None:
                    continue
                key = gast.dump(forward)
                if key not in held:
                    held[key] = ctx.namer.temp(call)
                    saved.append(forward)
                    targets.append(gast.Name(held[key], gast.Store(), None, None))
                _replace(stmt, call, held[key])
        _follow(stmt, alias)


def _stack(body, primal, sweep):
    """The elements the primal pushes (names) and the names the loop pops them into, when the
    loop's body starts with the only pop of a stack the primal pushes once."""
    if not body or not _is_pop(body[0]):
        return None
    stack = body[0].value.func.value.id
    pushes = [n for n in walk(gast.Module(primal, [])) if _is_push(n, stack)]
    uses = [n for n in walk(gast.Module(sweep, [])) if isinstance(n, gast.Name)
            and n.id == stack]
    if len(pushes) != 1 or len(uses) != 1:
        return None
    saved, targets = pushes[0].args[0].elts, body[0].targets[0].elts
    if len(saved) != len(targets) or not all(isinstance(e, gast.Name) for e in saved):
        return None
    return saved, targets


def _in_primal(call, alias):
    """``call`` with the primal's names of the popped values, or None if it reads another."""
    if not all(a.id in alias for a in call.args if isinstance(a, gast.Name)):
        return None
    forward = copy.deepcopy(call)
    for a in forward.args:
        if isinstance(a, gast.Name):
            a.id = alias[a.id]
    return forward


def _follow(stmt, alias):
    """``alias`` after ``stmt``: ``y = y_old`` restores a popped value, any other binding
    ends one."""
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)
            and stmt.value.id in alias):
        alias[stmt.targets[0].id] = alias[stmt.value.id]
        return
    for name in _bound([stmt], (gast.Store, gast.Del)):
        alias.pop(name, None)


def _is_pop(stmt):
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Tuple)
            and all(isinstance(t, gast.Name) for t in stmt.targets[0].elts)
            and isinstance(stmt.value, gast.Call) and not stmt.value.args
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop"
            and isinstance(stmt.value.func.value, gast.Name))


def _is_push(node, stack):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == "append" and isinstance(node.func.value, gast.Name)
            and node.func.value.id == stack and len(node.args) == 1
            and isinstance(node.args[0], gast.Tuple))
