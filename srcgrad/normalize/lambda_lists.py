"""Lists of lambdas the function builds and calls the items of; part of ``check``.

Requires: a parsed body, before ``check.extract_local_functions`` takes its lambdas out, and a
namer. Guarantees: a list ``fs`` bound once, to ``[]`` that only lambdas are appended to or to
a comprehension of lambdas, and otherwise only looped over by a loop that only calls its
target, called by an item (``fs[i](x)``) or measured (``len(fs)``), holds instead of each
lambda the values Python's lambda would keep: which of the lambdas written it is, and its
defaults, evaluated where the lambda is made. Each call of an item calls the lambda written
there, a local function inlined where it is called (reading the variables Python's closure
reads when it is called), given the defaults the item holds for the parameters the call does
not pass.

    fs = []                                    lambda_2 = lambda t, c: c * t
    for c in cs:                               fs = []
        fs.append(lambda t, c=c: c * t)  ->    for c in cs:
    for f in fs:                                   fs.append((0, c))
        s = s + f(x)                           for f in fs:
                                                   s = s + lambda_2(x, f[1])

Several lambdas appended to one list give a branch on which one an item holds
(``lambda_2(x, f[1]) if f[0] == 0 else lambda_3(x)``). A list used in any other way (passed,
returned, printed, an item taken out) is left as it is, and its lambdas refused as values.
"""

from __future__ import annotations

import gast

from ..astutil import binding_counts, clone, walk
from ..emit.naming import LAMBDA


def run(fn_node, namer):
    """``fn_node`` with each list of lambdas (see above) holding their defaults."""
    if namer is None or not any(isinstance(n, gast.Lambda) for n in walk(fn_node)):
        return fn_node
    counts = binding_counts(fn_node)
    for name, (made, sites) in _lists(fn_node, counts).items():
        uses = _uses(fn_node, name, made, sites)
        if uses is None:
            continue
        functions = [namer.fresh(LAMBDA) for _ in sites]
        calls = [_call_of(item, call, sites, functions) for item, call in uses]
        if any(c is None for c in calls):
            continue
        defs = [gast.copy_location(gast.Assign([gast.Name(f, gast.Store(), None, None)],
                                               _without_defaults(lam), None), lam)
                for f, lam in zip(functions, sites)]
        # innermost first (`f(f(x))`: the outer call is built from the inner one rewritten)
        for item, call in sorted(uses, key=lambda use: -_depth(use[1], fn_node)):
            _become(call, _call_of(item, call, sites, functions))
        for k, lam in enumerate(sites):
            _become(lam, _held(k, lam))
        fn_node.body[:0] = defs
    return fn_node


def _lists(fn_node, counts):
    """Name -> (its binding, the lambdas it is made of or appended) of each name bound once to
    ``[]`` or to a comprehension of a lambda whose body reads no variable of the
    comprehension (Python's closure would read the comprehension's own)."""
    found = {}
    for n in walk(fn_node):
        if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and counts[n.targets[0].id] == 1):
            continue
        value = n.value
        if isinstance(value, gast.List) and not value.elts:
            found[n.targets[0].id] = (n, [])
        elif isinstance(value, gast.ListComp) and isinstance(value.elt, gast.Lambda) and len(
                value.generators) == 1 and _plain(value.elt):
            own = {t.id for t in walk(value.generators[0].target) if isinstance(t, gast.Name)}
            params = {a.id for a in value.elt.args.args}
            if not own & (_read(value.elt.body) - params):
                found[n.targets[0].id] = (n, [value.elt])
    for n in walk(fn_node):
        lam = _appended(n, found)
        if lam is not None:
            found[n.value.func.value.id][1].append(lam)
    return {name: entry for name, entry in found.items() if entry[1]}


def _appended(stmt, found):
    """The lambda of ``fs.append(lambda ...)`` of a name in ``found``, else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
            and call.func.value.id in found and len(call.args) == 1 and not call.keywords
            and isinstance(call.args[0], gast.Lambda) and _plain(call.args[0])):
        return call.args[0]
    return None


def _plain(lam):
    """A lambda of positional parameters only (defaults allowed)."""
    a = lam.args
    return not (a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg)


def _read(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)}


def _uses(fn_node, name, made, sites):
    """``[(item, call)]``: each call of an item of the list ``name`` (``f(x)`` of ``for f in
    fs``: item ``f``; ``fs[i](x)``: item ``fs[i]``), if every read of it is allowed (see the
    module's docstring), else None."""
    allowed, uses = set(), []
    for n in walk(fn_node):
        if n is made:
            continue
        found = _use(n, name, sites)
        if found is None:
            return None
        allowed |= found[0]
        uses += found[1]
    reads = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name and (
        isinstance(n.ctx, gast.Load))]
    if not uses or any(id(n) not in allowed for n in reads):
        return None
    return uses


def _use(n, name, sites):
    """``(ids of the reads of name n allows, the calls of items it makes)``, or None for a loop
    over the list that does more than call its target."""
    appended = _appended(n, {name: None})
    if appended is not None and any(appended is s for s in sites):
        return {id(n.value.func.value)}, []
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "len":
        return {id(a) for a in n.args}, []
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Subscript) and isinstance(
            n.func.value, gast.Name) and n.func.value.id == name and isinstance(
            n.func.slice, (gast.Name, gast.Constant)):
        return {id(n.func.value)}, [(n.func, n)]
    if isinstance(n, gast.For) and isinstance(n.iter, gast.Name) and n.iter.id == name:
        calls = _target_calls(n)
        return None if calls is None else ({id(n.iter)}, calls)
    return set(), []


def _target_calls(loop):
    """The calls of the target of ``for f in fs`` in its body, if ``f`` is only called there
    (and not bound again), else None."""
    if not isinstance(loop.target, gast.Name) or loop.orelse:
        return None
    f = loop.target.id
    body = gast.Module(loop.body, [])
    called = [n for n in walk(body) if isinstance(n, gast.Call) and isinstance(
        n.func, gast.Name) and n.func.id == f]
    callees = {id(c.func) for c in called}
    if any(isinstance(n, gast.Name) and n.id == f and id(n) not in callees for n in walk(body)):
        return None
    return [(c.func, c) for c in called]


def _call_of(item, call, sites, functions):
    """The call of the lambda ``item`` holds (a branch on which one, for several), or None
    where the call passes what a lambda cannot take."""
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    options = []
    for lam, fn in zip(sites, functions):
        params, defaults = lam.args.args, lam.args.defaults
        given = len(call.args)
        first_default = len(params) - len(defaults)
        if not first_default <= given <= len(params):
            return None
        held = [gast.Subscript(clone(item), gast.Constant(1 + i - first_default, None),
                               gast.Load()) for i in range(given, len(params))]
        options.append(gast.Call(gast.Name(fn, gast.Load(), None, None),
                                 [clone(a) for a in call.args] + held, []))
    out = options[-1]
    for k in range(len(options) - 2, -1, -1):
        test = gast.Compare(gast.Subscript(clone(item), gast.Constant(0, None), gast.Load()),
                            [gast.Eq()], [gast.Constant(k, None)])
        out = gast.IfExp(test, options[k], out)
    return gast.copy_location(out, call)


def _depth(node, root):
    """How many calls enclose the call ``node`` in ``root``."""
    inside = [c for c in walk(root) if isinstance(c, gast.Call) and c is not node and any(
        n is node for n in walk(c))]
    return len(inside)


def _held(k, lam):
    """What the list holds for the lambda ``lam`` (the ``k``-th written): ``(k, *defaults)``."""
    return gast.copy_location(gast.Tuple([gast.Constant(k, None)] + list(lam.args.defaults),
                                         gast.Load()), lam)


def _without_defaults(lam):
    args = clone(lam.args)
    args.defaults = []
    return gast.Lambda(args, clone(lam.body))


def _become(node, new):
    """``node`` turned into ``new`` in place (its parent keeps pointing at it)."""
    node.__class__ = new.__class__
    for attr in list(vars(node)):
        if attr not in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            delattr(node, attr)
    for attr in new._fields:
        setattr(node, attr, getattr(new, attr))
