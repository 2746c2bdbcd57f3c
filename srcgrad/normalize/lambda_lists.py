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
(``lambda_2(x, f[1]) if f[0] == 0 else lambda_3(x)``). Such a list may also be passed to a
helper (``apply_all(fs, x)``): where the helper is inlined, its calls of the items are
rewritten the same way (``passed_to``), and a read of the list left after inlining (given to a
function that is not inlined) is an error (``check_reads``). A list used in any other way
(returned, printed, an item taken out) is left as it is, and its lambdas refused as values.
A name or display given, in a loop, a lambda that the loop makes anew with its default values
and only called after the loop holds ``(0, *defaults)`` too (``kept_past_trips``).
"""

from __future__ import annotations

import gast

from ..astutil import binding_counts, clone, walk
from ..emit.naming import LAMBDA
from ..errors import UnsupportedSyntaxError


def run(fn_node, namer, passed=None):
    """``fn_node`` with each list of lambdas (see above) holding their defaults; ``passed``
    gets, for each such list given to a helper (``apply_all(fs, x)``), what ``passed_to``
    needs to call its items in the helper's body."""
    if namer is None or not any(isinstance(n, gast.Lambda) for n in walk(fn_node)):
        return fn_node
    counts = binding_counts(fn_node)
    for name, (made, sites) in _lists(fn_node, counts).items():
        given = [] if passed is not None else None
        uses = _uses(fn_node, name, made, sites, given)
        if uses is None:
            continue
        functions = [namer.fresh(LAMBDA) for _ in sites]
        calls = [_call_of(item, call, _signatures(sites, functions)) for item, call in uses]
        if any(c is None for c in calls):
            continue
        if given:
            passed[name] = _signatures(sites, functions)
        defs = [gast.copy_location(gast.Assign([gast.Name(f, gast.Store(), None, None)],
                                               _without_defaults(lam), None), lam)
                for f, lam in zip(functions, sites)]
        # innermost first (`f(f(x))`: the outer call is built from the inner one rewritten)
        _rewrite(fn_node, uses, _signatures(sites, functions))
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


def _uses(fn_node, name, made, sites, given=None):
    """``[(item, call)]``: each call of an item of the list ``name`` (``f(x)`` of ``for f in
    fs``: item ``f``; ``fs[i](x)``: item ``fs[i]``), if every read of it is allowed (see the
    module's docstring), else None. ``given`` (a list): a read as an argument of a call of a
    name (a helper, ``apply_all(fs, x)``) is allowed too, and its calls gathered there."""
    allowed, uses = set(), []
    for n in walk(fn_node):
        if n is made:
            continue
        found = _use(n, name, sites, given)
        if found is None:
            return None
        allowed |= found[0]
        uses += found[1]
    reads = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name and (
        isinstance(n.ctx, gast.Load))]
    if not (uses or given) or any(id(n) not in allowed for n in reads):
        return None
    return uses


def _use(n, name, sites, given=None):
    """``(ids of the reads of name n allows, the calls of items it makes)``, or None for a loop
    over the list that does more than call its target."""
    appended = _appended(n, {name: None})
    if appended is not None and any(appended is s for s in sites):
        return {id(n.value.func.value)}, []
    args = _passed_on(n, name, given)
    if args:
        return args, []
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


def _passed_on(n, name, given):
    """The ids of the reads of ``name`` that ``n``, a call of a name (a helper's), passes as
    arguments, noted in ``given``; none where ``given`` is None."""
    if given is None or not (isinstance(n, gast.Call) and isinstance(n.func, gast.Name)) or (
            n.func.id == "len"):
        return set()
    args = {id(a) for a in n.args if isinstance(a, gast.Name) and a.id == name}
    if args:
        given.append(n)
    return args


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


def _signatures(sites, functions):
    """``[(function, number of parameters, number of defaults)]`` of the lambdas ``sites``
    (named ``functions``), the ``k``-th of which an item ``(k, *defaults)`` holds."""
    return [(fn, len(lam.args.args), len(lam.args.defaults))
            for lam, fn in zip(sites, functions)]


def _rewrite(fn_node, uses, signatures):
    """Each call of ``uses`` turned into the call of the lambda its item holds."""
    # innermost first (`f(f(x))`: the outer call is built from the inner one rewritten)
    for item, call in sorted(uses, key=lambda use: -_depth(use[1], fn_node)):
        _become(call, _call_of(item, call, signatures))


def passed_to(helper, bound, lists, location):
    """``{parameter: signatures}`` of the parameters of ``helper`` (its parsed tree, before it
    is inlined; ``bound``: its ``(parameter, argument)`` pairs) given a list of lambdas that
    holds ``(which, defaults)`` (``lists``, from ``run``): each call of an item in its body
    becomes the call of the lambda it holds, as in the function that made the list. A helper
    that rebinds the parameter or reads it otherwise than by ``len``, calling its items, a
    loop calling them or passing it on to a helper is an error at its line."""
    found = {}
    counts = binding_counts(helper)  # (its parameters are bound by the call: none here)
    for param, value in bound:
        if not (isinstance(value, gast.Name) and value.id in lists):
            continue
        uses = _uses(helper, param, None, [], []) if counts[param] == 0 else None
        calls = None if uses is None else [_call_of(i, c, lists[value.id]) for i, c in uses]
        if calls is None or any(c is None for c in calls):
            raise location.error(UnsupportedSyntaxError, helper, (
                f"srcgrad does not support a list of lambdas with default values (made by "
                f"appending them, or by a comprehension) given to `{helper.name}` as "
                f"`{param}`, which it assigns or reads otherwise than by `len({param})`, "
                f"calling its items with the arguments they take (`for f in {param}: f(x)`, "
                f"`{param}[i](x)`), or passing it on to a helper: read the list that way, or "
                f"loop over it where it is made"))
        _rewrite(helper, uses, lists[value.id])
        found[param] = lists[value.id]
    return found


def check_reads(fn_node, lists, location):
    """A list of lambdas holding ``(which, defaults)`` read, once every helper it was given to
    is inlined, otherwise than by ``len``, an item, a loop, its own appends or another name
    for it (given to a function that is not inlined, ``print(fs)``) is an error: its items
    are no functions."""
    names = _aliases(fn_node, set(lists))
    allowed = _reads_allowed(fn_node, names)
    for n in walk(fn_node):
        if isinstance(n, gast.Name) and n.id in names and isinstance(n.ctx, gast.Load) and (
                id(n) not in allowed):
            raise location.error(UnsupportedSyntaxError, n, (
                "srcgrad does not support a list of lambdas with default values (made by "
                "appending them, or by a comprehension) given to a function it does not "
                "inline, or used otherwise than by calling its items: its items hold the "
                "lambdas' default values; loop over it and call them"))


def _aliases(fn_node, names):
    """``names`` and the names bound to one of them (a helper's parameter, a loop's
    sequence)."""
    while True:
        more = {n.targets[0].id for n in walk(fn_node) if isinstance(n, gast.Assign) and (
            isinstance(n.targets[0], gast.Name)) and _same_list(n.value, names)} - names
        if not more:
            return names
        names = names | more


def _reads_allowed(fn_node, names):
    """The ids of the expressions ``len``, an item, a loop and the binding of one of ``names``
    to another read."""
    allowed = set()
    for n in walk(fn_node):
        if isinstance(n, gast.Call) and getattr(n.func, "id", "") == "len":
            allowed |= {id(a) for a in n.args}
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            allowed.add(id(n.value))
        elif isinstance(n, gast.For):
            allowed.add(id(n.iter))
        elif isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name) and (
                n.targets[0].id in names) and _same_list(n.value, names):
            allowed |= {id(a) for a in walk(n.value) if isinstance(a, gast.Name)}
    return allowed


def _same_list(value, names):
    """Whether ``value`` is one of the lists ``names`` (``fs``, ``iteration_sequence(fs)``,
    ``list_append(fs, item)`` of its own appends, as the desugaring writes them)."""
    if isinstance(value, gast.Call) and getattr(value.func, "id", "") in (
            "iteration_sequence", "list_append") and value.args:
        value = value.args[0]
    return isinstance(value, gast.Name) and value.id in names


def _call_of(item, call, signatures):
    """The call of the lambda ``item`` holds (a branch on which one, for several), or None
    where the call passes what a lambda cannot take."""
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    options = []
    for fn, count, defaults in signatures:
        given = len(call.args)
        first_default = count - defaults
        if not first_default <= given <= count:
            return None
        held = [gast.Subscript(clone(item), gast.Constant(1 + i - first_default, None),
                               gast.Load()) for i in range(given, count)]
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


def kept_past_trips(fn_node, local_functions, remade):
    """``fn_node`` where a name is given, in a loop, a local function that the loop makes
    anew on each trip (``remade``: one whose default values the trip evaluates, ``g = lambda
    t, c=a * k: c * t``) and is only called (``if k == 0: h = g`` then ``h(x)`` after the
    loop): the name holds what Python's function would keep, which of the functions it was
    given and its defaults then (``h = (0, c_default)``), and each call of it calls that
    function with them (``g(x, h[1])``), as a list of lambdas does (``run``). So for a
    tuple, list or dict display holding such functions (``d = {"f": g}``) whose items are
    only called by constant keys (``d["f"](x)``). Only for a name bound once, and called
    after the loops that bind it."""
    counts = binding_counts(fn_node)
    for name in sorted(counts):
        binds = [n for n in walk(fn_node) if isinstance(n, gast.Assign) and any(
            isinstance(t, gast.Name) and t.id == name for t in n.targets)]
        if len(binds) != 1 or counts[name] != 1 or len(binds[0].targets) != 1:
            continue
        held = _held_functions(binds[0].value, name, local_functions, remade)
        calls = _kept_calls(fn_node, name, binds[0], held) if held else None
        if calls is None:
            continue
        for item, call, signature in sorted(calls, key=lambda c: -_depth(c[1], fn_node)):
            _become(call, _call_of(item, call, [signature]))
        for key, (fn, _, _) in held.items():
            node = local_functions[fn][0]
            _put(binds[0], key, gast.Tuple([gast.Constant(0, None)] + [
                clone(d) for d in node.args.defaults], gast.Load()))
    return fn_node


def _kept_calls(fn_node, name, bind, held):
    """``[(item, call, signature)]`` of the calls of the functions ``held`` that ``name``
    (bound by ``bind``) holds, if every read of ``name`` calls it or an item of it after the
    loops that bind it (a tuple read by a later trip is no value the transform follows yet),
    else None."""
    loops = [n for n in walk(fn_node) if isinstance(n, (gast.For, gast.While)) and any(
        b is bind for b in walk(n))]
    inside = {id(d) for loop in loops for d in walk(loop)}
    reads = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name and (
        isinstance(n.ctx, gast.Load))]
    called = [n for n in walk(fn_node) if isinstance(n, gast.Call) and id(
        n) not in inside and _key(n.func, name) is not None]
    calls = [(n.func, n, held[_key(n.func, name)]) for n in called
             if _key(n.func, name) in held]  # (the display's other items: as they are)
    if len(called) != len(reads) or any(_call_of(i, c, [s]) is None for i, c, s in calls):
        return None
    return calls


_WHOLE = ()  # the key of a name given the function itself (``h = g``)


def _held_functions(value, name, local_functions, remade):
    """``{key: signature}`` of the functions of ``remade`` that ``value`` is (key
    ``_WHOLE``) or holds at constant keys of a display, if it holds nothing else there
    but values; else {}."""
    def remade_here(v):
        return isinstance(v, gast.Name) and v.id in remade and v.id != name and _plain(
            local_functions[v.id][0])

    if isinstance(value, gast.Dict) and all(isinstance(k, gast.Constant) for k in value.keys):
        items = [(k.value, v) for k, v in zip(value.keys, value.values)]
    elif isinstance(value, (gast.Tuple, gast.List)):
        items = list(enumerate(value.elts))
        if any(isinstance(v, gast.Starred) for _, v in items):
            return {}
    else:
        items = [(_WHOLE, value)]
    return {k: _signatures([local_functions[v.id][0]], [v.id])[0]
            for k, v in items if remade_here(v)}


def _key(func, name):
    """The key of ``name`` that the callee ``func`` reads (``_WHOLE`` for ``name`` itself)."""
    if isinstance(func, gast.Name) and func.id == name:
        return _WHOLE
    if isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name) and (
            func.value.id == name) and isinstance(func.slice, gast.Constant):
        return func.slice.value
    return None


def _put(bind, key, held):
    """``bind``'s value, or its item at ``key``, replaced by ``held``."""
    value = bind.value
    if key == _WHOLE:
        bind.value = gast.copy_location(held, value)
    elif isinstance(value, gast.Dict):
        i = [k.value for k in value.keys].index(key)
        value.values[i] = gast.copy_location(held, value.values[i])
    else:
        value.elts[key] = gast.copy_location(held, value.elts[key])
