"""Tuples and lists of functions known at transform time, some of them lambdas or nested defs
of the body (``LocalFunction``); part of ``callables``.

Requires: an A-normal-form body being inlined, and its ``StaticValues``. Guarantees: a tuple or
list of functions known here, assigned once and read only by ``len(fs)``, ``fs[k]``, ``for ...
in fs`` and as a helper's argument, is measured at transform time (``fold_length``: ``n =
len(fs)`` becomes ``n = 2``) and a loop over it is unrolled (``unrolled``), one copy of the
body per item, so each call names one function:

    fs = [make(a), make_def(b)]           fs = [make(a), make_def(b)]
    for fn in fs:                  ->     i_1 = 0
        y = fn(x)                         fn_1 = fs[0]
                                          y = fn_1(x)
                                          ...               (one copy per item)

A tuple of local functions a call passes is named first (``displays_named``), so that the
helper's loops over it are unrolled the same way.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import gast

from ..astutil import clone
from ..emit import naming


@dataclass(frozen=True)
class LocalFunction:
    """A lambda or nested def of the body (``inline`` inlines it by name), as a value held in a
    tuple, list or dict of the body: ``fs = (np.sin, sq); fs[1](x)`` calls ``sq``."""

    name: str


def unrolled(values, loop, namer, locals_):
    """``for fn in fs: body`` (as control.py writes it: ``for i in range(len(fs)): fn =
    fs[i]; ...``) over a list or tuple of functions known only here, where the inliner made
    them (``fs = [make(a), make_def(b)]`` of helpers returning a closure), ``fs`` assigned
    once and read by nothing else: one copy of ``body`` per item, its names ``fn`` and ``i``
    names of their own bound to ``fs[k]`` and ``k``, and ``fn``, ``i`` bound to the last
    after them, as Python leaves them. None for any other statement."""
    form = _loop_over_values(values, loop, locals_)
    if form is None:
        return None
    seq, index, target, count = form
    out = []
    for k in range(count):
        renames = {}
        for name in (index, target):
            renames[name] = namer.fresh(name)
            locals_.add(renames[name])
            values.stores[renames[name]] += 1
        out.append(_bound(renames[index], gast.Constant(k, None), loop))
        out.append(_bound(renames[target], gast.Subscript(
            gast.Name(seq, gast.Load(), None, None), gast.Constant(k, None), gast.Load()), loop))
        for stmt in loop.body[1:]:
            copy = clone(stmt)
            for n in gast.walk(copy):
                if isinstance(n, gast.Name) and n.id in renames:
                    n.id = renames[n.id]
            out.append(copy)
    return out + [_bound(index, gast.Constant(count - 1, None), loop), _bound(
        target, gast.Subscript(gast.Name(seq, gast.Load(), None, None),
                               gast.Constant(count - 1, None), gast.Load()), loop)]


def _bound(name, value, where):
    return gast.copy_location(gast.Assign([gast.Name(name, gast.Store(), None, None)], value,
                                          None), where)


def _loop_over_values(values, loop, locals_):
    """(``fs``, ``i``, ``fn``, the number of items) of ``for i in range(n): fn = fs[i]; ...``
    with ``n = len(fs)`` (or a number no larger), ``fs`` a list or tuple of functions known
    here that is only measured and indexed, no jump out of the body; else None."""
    form = _indexed_loop(loop) if values.root is not None else None
    if form is None:
        return None
    seq, index, target, bound = form
    held = _measured_functions(values, seq, locals_)
    sized = next((n for tree in values.trees() for n in gast.walk(tree) if isinstance(
        n, gast.Assign) and any(isinstance(t, gast.Name) and t.id == bound for t in n.targets)),
                 None)
    if held is None or sized is None or not (
            values.namespace.resolve(loop.iter.func, locals_) is range
            and all(values.stores[n] == 1 for n in (target, index, bound))):
        return None
    fold_length(values, sized, locals_)
    count = sized.value.value if isinstance(sized.value, gast.Constant) else None
    if type(count) is not int or not 0 <= count <= len(held):
        return None
    return seq, index, target, count


def displays_named(values, namer, locals_, call):
    """``functions = (np.sin, lambda_2)`` for each tuple of local functions ``call`` passes,
    then passed by that name, whose loops in the helper ``unrolled`` unrolls (as a list's)."""
    out = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, gast.Tuple) and local_functions_in(values.value(arg, locals_)):
            name = namer.fresh(naming.FUNCTIONS)
            locals_.add(name)
            values.stores[name] += 1
            out.append(gast.copy_location(_bound(name, arg, call), call))
            values.record(name, arg, locals_)
            call.args[i] = gast.Name(name, gast.Load(), None, None)
    return out


def fold_length(values, stmt, locals_):
    """``n = len(fs)`` of a tuple or list of functions known here (one a lambda or nested def
    reading the function's variables) that is only measured and indexed: ``n = 2``, so that
    ``fs`` is read no more where its items are called by constant indices (and its local
    functions are no values the derivative holds)."""
    value = getattr(stmt, "value", None)
    if not (isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) and len(
            value.args) == 1 and isinstance(value.args[0], gast.Name) and not value.keywords
            and values.namespace.resolve(value.func, locals_) is len):
        return
    held = _measured_functions(values, value.args[0].id, locals_)
    if held is not None:
        stmt.value = gast.copy_location(gast.Constant(len(held), None), value)


def _measured_functions(values, seq, locals_):
    """The tuple or list of functions known here ``seq`` holds (some local functions among
    them), assigned once and read only by ``len(seq)``, ``seq[k]``, ``for ... in seq`` and as
    an argument of a helper (``apply_all(fs, x)``: its body, once inlined, is read too); else
    None. A read left once every call is inlined keeps the list, whose local functions are
    then refused as values (``local_functions.refuse_values``)."""
    held = values.value(gast.Name(seq, gast.Load(), None, None), locals_)
    if not (isinstance(held, (list, tuple)) and local_functions_in(held)) or (
            values.stores[seq] != 1 or values.root is None):
        return None
    trees = values.trees()
    allowed = _measuring_reads(values, trees, locals_)
    if any(isinstance(n, gast.Name) and n.id == seq and isinstance(n.ctx, gast.Load)
           and id(n) not in allowed for tree in trees for n in gast.walk(tree)):
        return None
    return held


def _measuring_reads(values, trees, locals_):
    """The ids of the expressions of ``trees`` that ``len(e)``, ``e[k]``, ``for ... in e`` and
    a call of a helper read."""
    allowed = set()
    for n in (n for tree in trees for n in gast.walk(tree)):
        if isinstance(n, gast.Call) and len(n.args) == 1 and getattr(n.func, "id", "") == "len":
            allowed.add(id(n.args[0]))
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            allowed.add(id(n.value))
        elif isinstance(n, gast.For):
            allowed.add(id(n.iter))
        elif isinstance(n, gast.Call) and _helper(values, n.func, locals_):
            allowed |= {id(a) for a in n.args} | {id(k.value) for k in n.keywords}
    return allowed


def _helper(values, func, locals_):
    """Whether ``func`` is a Python function of the user's (inlined where it is called)."""
    found = values.value(func, locals_)
    return isinstance(found, LocalFunction) or (inspect.isfunction(found) and not getattr(
        found, "__module__", "").startswith(("numpy", "scipy", "srcgrad")))


def _indexed_loop(loop):
    """(``fs``, ``i``, ``fn``, ``n``) of ``for i in range(n): fn = fs[i]; ...`` with no jump
    out of its body and no ``else``, or None."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name) and isinstance(
            loop.iter, gast.Call) and len(loop.iter.args) == 1 and isinstance(
            loop.iter.args[0], gast.Name)) or loop.orelse or not loop.body:
        return None
    first = loop.body[0]
    item = getattr(first, "value", None)
    if not (isinstance(first, gast.Assign) and isinstance(first.targets[0], gast.Name)
            and isinstance(item, gast.Subscript) and isinstance(item.value, gast.Name)
            and isinstance(item.slice, gast.Name) and item.slice.id == loop.target.id):
        return None
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in gast.walk(loop)):
        return None
    return item.value.id, loop.target.id, first.targets[0].id, loop.iter.args[0].id


def local_functions_in(value):
    """The names of the local functions ``value`` is or holds (in tuples, lists, dicts)."""
    if isinstance(value, LocalFunction):
        return [value.name]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in local_functions_in(v)]
    return []


def holds_own_values(found):
    """Whether a local function ``(FunctionDef, location)`` holds values of its own: defaults
    evaluated where it is made, or the variables of the helper that made it."""
    node = found[0] if found is not None else None
    return node is not None and (getattr(node, "frozen", False) or bool(
        node.args.defaults) or any(d is not None for d in node.args.kw_defaults))
