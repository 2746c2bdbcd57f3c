"""Lists of functions the function changes at run time and calls the items of; part of
``check``.

Requires: a parsed body, before ``check.extract_local_functions`` takes its lambdas out, and a
namer. Guarantees: a list ``fs`` bound once, to ``[]``, to a display of functions or to a
conditional expression choosing between such displays, that functions are appended to (or to
a comprehension of lambdas), and otherwise only looped over by a loop that only calls its
target, called by an item (``fs[i](x)``, ``g = fs[-1]; g(x)``) or measured (``len(fs)``),
holds instead of each function the values Python's function would keep: which of the
functions written it is, and its defaults, evaluated where the lambda is made (a factory's
arguments; nothing for a function known at transform time: ``lambda_list_sites``). Each call
of an item calls the function written there: a lambda is a local function inlined where it
is called (reading the variables Python's closure reads when it is called), given the
defaults the item holds for the parameters the call does not pass.

    fs = []                                    lambda_2 = lambda t, c: c * t
    for c in cs:                               fs = []
        fs.append(lambda t, c=c: c * t)  ->    for c in cs:
    for f in fs:                                   fs.append((0, c))
        s = s + f(x)                           for f in fs:
                                                   s = s + lambda_2(x, f[1])

Several functions in one list give a branch on which one an item holds
(``lambda_2(x, f[1]) if f[0] == 0 else np.sin(x)``). Such a list may also be passed to a
helper (``apply_all(fs, x)``): where the helper is inlined, its calls of the items are
rewritten the same way (``passed_to``), and a read of the list left after inlining (given to a
function that is not inlined) is an error (``check_reads``). A list used in any other way
(returned, printed) is left as it is, and its lambdas refused as values. A list of functions
known at transform time only looped over where it is made is left to ``chosen_loops``.
A name or display given, in a loop, a lambda that the loop makes anew with its default values
(or a factory's result) and only called, after the loop or by a later trip, holds
``(0, *defaults)`` too (``kept_past_trips``).
"""

from __future__ import annotations

from collections import Counter

import gast

from ..astutil import binding_counts, clone, walk
from ..emit.naming import FUNCTIONS, ITEM, LAMBDA, MADE, Namer
from ..errors import UnsupportedSyntaxError
from . import lambda_list_sites as kinds
from .chosen_loops import split_conditional_displays
from .lambda_lists_passed import (
    Whole,
    items_passed,
    name_items,
    passed_alone,
    reads_passed,
    whole_uses,
)


def run(fn_node, namer, passed=None, namespace=None, functions=frozenset()):
    """``fn_node`` with each list of lambdas (see above) holding their defaults; ``passed``
    gets, for each such list given to a helper (``apply_all(fs, x)``), what ``passed_to``
    needs to call its items in the helper's body. With ``namespace``, a list may also hold
    functions known at transform time and factories' results (``lambda_list_sites``); without
    (an inlined helper's body), only the names in ``functions`` hold functions."""
    if namer is None:
        return fn_node
    counts = binding_counts(fn_node)
    defined = kinds.defined_once(fn_node, counts) | set(functions)
    # (a name a nested def binds is no global's: a list holding it holds that def)
    counts += Counter(n.name for n in walk(fn_node) if isinstance(n, gast.FunctionDef) and (
        n is not fn_node))
    looped = kinds.looped_defs(fn_node, counts)
    kinds.extends_written(fn_node, lambda e: isinstance(e, gast.Name) and e.id in looped or (
        kinds.site_of(e, counts, namespace, defined) is not None))
    counts = binding_counts(fn_node) + Counter(
        n.name for n in walk(fn_node) if isinstance(n, gast.FunctionDef) and n is not fn_node)
    for name, (made, sites) in _lists(fn_node, counts, namespace, defined).items():
        _held_list(fn_node, name, made, sites, namer, passed)
    return fn_node


def caller_functions(body, inliner):
    """The names an inlined helper's ``body`` reads but does not bind that hold functions:
    the caller's local functions (``inliner``'s), and functions the names of the module (or
    srcgrad's own for a function passed) hold; not the caller's variables (the helper's
    parameters renamed)."""
    counts = binding_counts(body)
    found = set()
    for n in walk(body):
        if not isinstance(n, gast.Name) or counts[n.id] or n.id in found:
            continue
        if n.id in inliner.local_functions:
            found.add(n.id)
        elif n.id not in inliner.locals:
            value = inliner.namespace.resolve(gast.Name(n.id, gast.Load(), None, None))
            if callable(value) and not hasattr(value, "__array__"):
                found.add(n.id)
    return found


def _held_list(fn_node, name, made, sites, namer, passed):
    """The list ``name`` holding ``(k, ...)`` (``_hold``) if every read of it allows it; what
    its helpers need noted in ``passed`` (the list given, an item given by itself)."""
    given = [] if passed is not None else None
    kept, items = [], [] if passed is not None else None
    uses = _uses(fn_node, name, made, sites, given, kept, items)
    if uses is None or not (kept or given or items) and _left_to_chosen_loops(sites, uses):
        return
    signatures = _signatures(sites, [namer.fresh(LAMBDA) if site.kind == kinds.LAMBDA
                                     else None for site in sites])
    calls = [_call_of(item, call, signatures) for item, call in uses]
    if any(c is None for c in calls):
        return
    if given:
        passed[name] = signatures
    for read in kinds.names_read(signatures):
        namer.reserve(read)
    _hold(fn_node, name, made, uses, signatures)
    for named in name_items(fn_node, items or [], namer, ITEM.format(name)):
        passed[named] = Whole(signatures)


def _hold(fn_node, name, made, uses, signatures):
    """The list ``name`` (bound by ``made``) holding ``(k, ...)`` for each function written
    into it, its lambdas taken out to the top of ``fn_node``, and its items' ``uses`` the
    calls of the functions they hold."""
    defs = [gast.copy_location(kinds.taken_out(sig), sig.node)
            for sig in signatures if sig.kind == kinds.LAMBDA]
    _rewrite(fn_node, uses, signatures)
    for k, site in enumerate(signatures):
        kinds.become(site.node, kinds.held_def(k, site) if isinstance(
            site.node, gast.FunctionDef) else kinds.held(k, site))
    if isinstance(made.value, gast.IfExp):
        split_conditional_displays(fn_node, name)
    fn_node.body[:0] = defs


def _left_to_chosen_loops(sites, uses):
    """A list of functions known at transform time only (no local function), only looped over
    where it is made: ``chosen_loops`` branches on which function each item is (no tuples)."""
    return all(site.kind == kinds.STATIC and site.obj is not None for site in sites) and all(
        isinstance(item, gast.Name) for item, _ in uses)


def _lists(fn_node, counts, namespace, defined):
    """Name -> (its binding, the sites of the functions it is made of or appended) of each
    name bound once to ``[]``, to a comprehension of a lambda whose body reads no variable of
    the comprehension (Python's closure would read the comprehension's own), or to a display
    of functions (``lambda_list_sites``), or a conditional expression choosing between such
    displays, that some function is appended to (or that holds a lambda or a factory's
    result), or to a comprehension."""
    found, changed = {}, set()
    looped = kinds.looped_defs(fn_node, counts)  # (appended by name: like lambdas)
    for n in walk(fn_node):
        if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and counts[n.targets[0].id] == 1):
            continue
        value = n.value
        sites = _comprehension_sites(value, counts, namespace)
        if sites is None:
            sites = _display_sites(value, counts, namespace, defined)
        if sites is not None:
            found[n.targets[0].id] = (n, sites)
            if isinstance(value, (gast.IfExp, gast.ListComp)):
                changed.add(n.targets[0].id)
    tupled, rebound = _rebound(fn_node, counts, namespace, defined, found)
    changed |= rebound | _appended(fn_node, found, tupled, lambda e: kinds.def_site(
        looped[e.id]) if isinstance(e, gast.Name) and e.id in looped else kinds.site_of(
        e, counts, namespace, defined))
    return {name: entry for name, entry in found.items() if entry[1] and name in changed}


def _appended(fn_node, found, tupled, site_of):
    """The names of ``found`` that functions are appended to (inserted, extended: their
    sites, ``site_of``, added to its entry); one of ``tupled`` appended to is dropped (a
    tuple has no ``append``: Python's error)."""
    changed = set()
    for n in walk(fn_node):
        added = _added(n, found)
        if added and n.value.func.value.id in tupled:
            del found[n.value.func.value.id]
            continue
        sites = [site_of(e) for e in added or ()]
        if added and all(site is not None for site in sites):
            found[n.value.func.value.id][1].extend(sites)
            changed.add(n.value.func.value.id)
    return changed


def _rebound(fn_node, counts, namespace, defined, found):
    """Each name bound more than once, every time to a list or tuple display of functions
    (``t = (np.sin, np.cos)``, then ``t = (np.tanh, np.cos)`` in a branch), noted in
    ``found`` with the sites of all its displays; ``{name: whether a display is a tuple}``."""
    binds = {}
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name):
            binds.setdefault(n.targets[0].id, []).append(n)
    rebound = {}
    for name, made in binds.items():
        if not 1 < len(made) == counts[name] or not all(isinstance(
                b.value, (gast.List, gast.Tuple)) for b in made):
            continue
        sites = [_display_sites(b.value, counts, namespace, defined, tuples=True) for b in made]
        if all(s is not None for s in sites):
            found[name] = (made[0], [site for some in sites for site in some])
            rebound[name] = any(isinstance(b.value, gast.Tuple) for b in made)
    return {name for name, tupled in rebound.items() if tupled}, set(rebound)


def _comprehension_sites(value, counts, namespace):
    """The site of the lambda of a comprehension of one lambda whose body reads no variable
    of the comprehension (Python's closure would read the comprehension's own), else None."""
    if not (isinstance(value, gast.ListComp) and isinstance(value.elt, gast.Lambda) and len(
            value.generators) == 1 and _plain(value.elt)):
        return None
    own = {t.id for t in walk(value.generators[0].target) if isinstance(t, gast.Name)}
    params = {a.id for a in value.elt.args.args}
    if own & (_read(value.elt.body) - params):
        return None
    return [kinds.site_of(value.elt, counts, namespace)]


def _display_sites(value, counts, namespace, defined, tuples=False):
    """The sites of a list display of functions (or of a conditional expression choosing
    between such displays; ``tuples``: a tuple display too), else None."""
    if isinstance(value, gast.IfExp):
        body = _display_sites(value.body, counts, namespace, defined)
        orelse = _display_sites(value.orelse, counts, namespace, defined)
        return None if body is None or orelse is None or namespace is None else body + orelse
    if not isinstance(value, (gast.List, gast.Tuple) if tuples else gast.List):
        return None
    sites = [kinds.site_of(e, counts, namespace, defined) for e in value.elts]
    return None if any(s is None for s in sites) else sites


def _added(stmt, found):
    """The functions written into a list of ``found`` by ``fs.append(g)``, ``fs.insert(i,
    g)`` or ``fs.extend([g, h])``, else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name) and call.func.value.id in found
            and not call.keywords):
        return None
    method, args = call.func.attr, call.args
    if method == "append" and len(args) == 1:
        return [args[0]]
    if method == "insert" and len(args) == 2:
        return [args[1]]
    if method == "extend" and len(args) == 1 and isinstance(args[0], (gast.List, gast.Tuple)):
        elts = args[0].elts
        return None if any(isinstance(e, gast.Starred) for e in elts) else elts
    return None


def _plain(lam):
    """A lambda of positional parameters only (defaults allowed)."""
    a = lam.args
    return not (a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg)


def _read(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)}


def _uses(fn_node, name, made, sites, given=None, kept=None, items=None):
    """``[(item, call)]``: each call of an item of the list ``name`` (``f(x)`` of ``for f in
    fs``: item ``f``; ``fs[i](x)``: item ``fs[i]``; ``g(x)`` of ``g = fs[i]``, ``g`` bound
    once and only called, noted in ``kept``), if every read of it is allowed (see the
    module's docstring), else None. ``given`` (a list): a read as an argument of a call of a
    name (a helper, ``apply_all(fs, x)``) is allowed too, and its calls gathered there; so
    an item passed by itself (``apply(fs[0], x)``), gathered in ``items``."""
    allowed, uses = set(), []
    counts = binding_counts(fn_node)
    for n in walk(fn_node):
        if n is made:
            continue
        found = _item_named(fn_node, n, name, counts, kept)
        if found is None:
            found = _aliased(fn_node, n, name, sites, counts, kept)
        if found is None and items is not None:
            found = _item_passed(fn_node, n, name, items)
        if found is None:
            found = _use(n, name, sites, given)
        if found is None:
            return None
        allowed |= found[0]
        uses += found[1]
    reads = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name and (
        isinstance(n.ctx, gast.Load))]
    if not (uses or given or items) or any(id(n) not in allowed for n in reads):
        return None
    return uses


def _item_passed(fn_node, n, name, items):
    """For a call of a helper passing items of ``name`` by themselves (``apply(fs[0], x)``,
    ``lambda_lists_passed.items_passed``): (the reads of ``name``, no call), the ``(call,
    item)`` pairs noted in ``items``; else None."""
    passing = items_passed(fn_node, n, lambda a: _an_item(a, name))
    if passing is None:
        return None
    items += [(n, a) for a in passing]
    return {id(a.value) for a in passing}, []


def _use(n, name, sites, given=None):
    """``(ids of the reads of name n allows, the calls of items it makes)``, or None for a loop
    over the list that does more than call its target."""
    added = _added(n, {name: None})
    if added and all(any(kinds.written(s, e) for s in sites) for e in added):
        return {id(n.value.func.value)}, []
    args = _passed_on(n, name, given)
    if args:
        return args, []
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "len":
        return {id(a) for a in n.args}, []
    if isinstance(n, gast.Call) and _an_item(n.func, name):
        return {id(n.func.value)}, [(n.func, n)]
    if isinstance(n, gast.For) and isinstance(n.iter, gast.Name) and n.iter.id == name:
        calls = _target_calls(n)
        return None if calls is None else ({id(n.iter)}, calls)
    if isinstance(n, _COMPREHENSIONS):
        return _comprehension_calls(n, name)
    return set(), []


_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)


def _comprehension_calls(comp, name):
    """For a comprehension over ``name`` (``[f(x) for f in fs]``) whose target is only called
    in what follows it, as a loop's (``_target_calls``): (the reads of ``name``, the calls);
    ``(set(), [])`` for one over no such list; None otherwise."""
    allowed, calls = set(), []
    for i, gen in enumerate(comp.generators):
        if not (isinstance(gen.iter, gast.Name) and gen.iter.id == name):
            continue
        rest = ([comp.key, comp.value] if isinstance(comp, gast.DictComp) else [comp.elt]) + [
            c for g in comp.generators[i:] for c in g.ifs] + [g.iter for g in comp.generators[
                i + 1:]]
        found = _target_calls(gast.For(gen.target, gen.iter, [gast.Expr(e) for e in rest], [],
                                       None))
        if found is None or any(isinstance(t, gast.Name) and t.id == gen.target.id for g in (
                comp.generators[i + 1:]) for t in walk(g.target)):
            return None
        allowed.add(id(gen.iter))
        calls += found
    return allowed, calls


def _an_item(expr, name):
    """``fs[i]``, ``fs[0]``, ``fs[-1]``, ``fs[i + 1]``, ``fs[len(fs) - 1]`` of the list
    ``name``: an index of names, integers, ``len`` of a name and arithmetic (read again by
    the call it becomes: the same value each time)."""
    return isinstance(expr, gast.Subscript) and isinstance(expr.value, gast.Name) and (
        expr.value.id == name) and _plain_index(expr.slice)


def _plain_index(index):
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
        return _plain_index(index.operand)
    if isinstance(index, gast.BinOp) and isinstance(index.op, (
            gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
        return _plain_index(index.left) and _plain_index(index.right)
    if isinstance(index, gast.Call):
        return isinstance(index.func, gast.Name) and index.func.id == "len" and len(
            index.args) == 1 and isinstance(index.args[0], gast.Name) and not index.keywords
    return isinstance(index, gast.Name) or isinstance(index, gast.Constant) and type(
        index.value) is int


def _item_named(fn_node, n, name, counts, kept):
    """For ``g = fs[i]``, ``g`` bound there only and only called: (the read of ``fs``, the
    calls of ``g``), ``g`` noted in ``kept``; else None."""
    if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
            n.targets[0], gast.Name) and _an_item(n.value, name)):
        return None
    g = n.targets[0].id
    calls = _only_called(fn_node, g)
    if counts[g] != 1 or calls is None:
        return None
    if kept is not None:
        kept.append(g)
    return {id(n.value.value)}, [(c.func, c) for c in calls]


def _aliased(fn_node, n, name, sites, counts, kept):
    """For ``gs = fs``, ``gs`` bound there only and read only as the list is (not passed to a
    helper): (the read of ``fs``, the calls of items through ``gs``), or, ``gs`` read
    otherwise, no read allowed (``fs`` is then no such list); else None."""
    if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
            n.targets[0], gast.Name) and isinstance(n.value, gast.Name) and (
            n.value.id == name) and counts[n.targets[0].id] == 1):
        return None
    uses = _uses(fn_node, n.targets[0].id, n, sites, None, kept)
    if uses is not None and kept is not None:
        kept.append(n.targets[0].id)  # (not left to chosen_loops, which follows no alias)
    return (set(), []) if uses is None else ({id(n.value)}, uses)


def _only_called(fn_node, g):
    """The calls of ``g`` in ``fn_node``, if ``g`` is read only to be called and no lambda or
    nested def reads it, else None."""
    reads = [r for r in walk(fn_node) if isinstance(r, gast.Name) and r.id == g and (
        isinstance(r.ctx, gast.Load))]
    calls = [c for c in walk(fn_node) if isinstance(c, gast.Call) and isinstance(
        c.func, gast.Name) and c.func.id == g]
    nested = [f for f in walk(fn_node) if isinstance(f, (gast.Lambda, gast.FunctionDef)) and (
        f is not fn_node)]
    if len(calls) != len(reads) or any(isinstance(r, gast.Name) and r.id == g
                                       for f in nested for r in walk(f)):
        return None
    return calls


def _passed_on(n, name, given):
    """The ids of the reads of ``name`` that ``n``, a call of a name or a dotted name (a
    helper's, ``tools.apply_all``), passes as arguments, noted in ``given``; none where
    ``given`` is None (one that is not inlined is refused by ``check_reads``)."""
    if given is None or not (isinstance(n, gast.Call) and isinstance(
            n.func, (gast.Name, gast.Attribute))) or getattr(n.func, "id", None) == "len":
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
    """The sites ``sites`` (or lambdas and defs), a lambda's named as in ``functions``, the
    ``k``-th of which an item ``(k, ...)`` holds (``lambda_list_sites``)."""
    return [kinds.lambda_site(site, fn) if not isinstance(site, kinds.Site) else
            site._replace(function=fn) if site.kind == kinds.LAMBDA else site
            for site, fn in zip(sites, functions)]


def _rewrite(fn_node, uses, signatures):
    """Each call of ``uses`` turned into the call of the lambda its item holds."""
    # innermost first (`f(f(x))`: the outer call is built from the inner one rewritten)
    for item, call in sorted(uses, key=lambda use: -_depth(use[1], fn_node)):
        kinds.become(call, _call_of(item, call, signatures))


def passed_to(helper, bound, lists, location, renames):
    """``{parameter: signatures}`` of the parameters of ``helper`` (its parsed tree, its
    locals renamed apart by ``renames``, before it is inlined; ``bound``: its ``(parameter,
    argument)`` pairs) given a list of functions that holds ``(which, ...)`` (``lists``, from
    ``run``): each call of an item in its body becomes the call of the function it holds, as
    in the function that made the list (whose names the call reads: the helper's names are
    renamed by then). A helper that rebinds the parameter or reads it otherwise than by
    ``len``, calling its items, a loop calling them or passing it on to a helper is an error
    at its line."""
    found = {}
    counts = binding_counts(helper)  # (its parameters are bound by the call: none here)
    for param, value in bound:
        if not (isinstance(value, gast.Name) and value.id in lists):
            continue
        name = renames.get(param, param)
        whole = isinstance(lists[value.id], Whole)
        uses = None if counts[name] else whole_uses(helper, name, []) if whole else _uses(
            helper, name, None, [], [])
        calls = None if uses is None else [_call_of(i, c, lists[value.id]) for i, c in uses]
        if whole and (calls is None or any(c is None for c in calls)):
            raise location.error(UnsupportedSyntaxError, helper, (
                f"srcgrad does not support a function that holds values of its own (made "
                f"anew on each trip of a loop, or an item of a list of functions changed at "
                f"run time) given to `{helper.name}` as `{param}`, which it assigns or reads "
                f"otherwise than by calling it with the arguments it takes or passing it on "
                f"to a helper by itself: call it there, or call it where it is made"))
        if calls is None or any(c is None for c in calls):
            raise location.error(UnsupportedSyntaxError, helper, (
                f"srcgrad does not support a list of functions changed at run time (lambdas "
                f"with default values made by appending them or by a comprehension, functions "
                f"appended in a branch or a loop, factories' results) given to `{helper.name}` as "
                f"`{param}`, which it assigns or reads otherwise than by `len({param})`, "
                f"calling its items with the arguments they take (`for f in {param}: f(x)`, "
                f"`{param}[i](x)`), or passing it on to a helper: read the list that way, or "
                f"loop over it where it is made"))
        _rewrite(helper, uses, lists[value.id])
        found[name] = lists[value.id]
    return found


def check_reads(fn_node, lists, location):
    """A list of lambdas holding ``(which, defaults)`` read, once every helper it was given to
    is inlined, otherwise than by ``len``, an item, a loop, its own appends or another name
    for it (given to a function that is not inlined, ``print(fs)``) is an error: its items
    are no functions."""
    names = _aliases(fn_node, set(lists))
    wholes = _aliases(fn_node, {k for k, v in lists.items() if isinstance(v, Whole)})
    allowed = _reads_allowed(fn_node, names)
    for n in walk(fn_node):
        if not (isinstance(n, gast.Name) and n.id in names and isinstance(n.ctx, gast.Load) and (
                id(n) not in allowed)):
            continue
        raise location.error(UnsupportedSyntaxError, n, _WHOLE_READ if n.id in wholes else (
            _LIST_READ))


_LIST_READ = (
    "srcgrad does not support a list of functions changed at run time (lambdas with default "
    "values made by appending them or by a comprehension, functions appended in a branch or a "
    "loop, factories' results) given to a function it does not inline, or used otherwise than "
    "by calling its items: its items hold which function each is and the values it keeps; loop "
    "over it and call them")
_WHOLE_READ = (
    "srcgrad does not support a function that holds values of its own (made anew on each trip "
    "of a loop, or an item of a list of functions changed at run time) given to a function it "
    "does not inline (`map`, `sorted`, a recursive helper) or used otherwise than by calling "
    "it: it holds which function it is and the values it keeps; call it, or pass it to a "
    "helper that calls it")


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
    ``list_append(fs, item)`` of its own appends, inserts and extends, as the desugaring
    writes them)."""
    if isinstance(value, gast.Call) and getattr(value.func, "id", "") in (
            "iteration_sequence", "list_append", "list_insert", "list_extend") and value.args:
        value = value.args[0]
    return isinstance(value, gast.Name) and value.id in names


def _call_of(item, call, signatures):
    """The call of the lambda ``item`` holds (a branch on which one, for several), or None
    where the call passes what a lambda cannot take."""
    if any(isinstance(a, gast.Starred) for a in call.args):
        return None
    options = [kinds.call_of(site, item, call.args, call.keywords) for site in signatures]
    if any(option is None for option in options):
        return None
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


def kept_past_trips(fn_node, local_functions, remade, namespace=None, passed=None):
    """``fn_node`` where a name is given, in a loop, a local function that the loop makes
    anew on each trip (``remade``: one whose default values the trip evaluates, ``g = lambda
    t, c=a * k: c * t``) and is only called (``if k == 0: h = g`` then ``h(x)`` after the
    loop): the name holds what Python's function would keep, which of the functions it was
    given and its defaults then (``h = (0, c_default)``), and each call of it calls that
    function with them (``g(x, h[1])``), as a list of lambdas does (``run``). So for a
    tuple, list or dict display holding such functions (``d = {"f": g}``) whose items are
    only called by constant keys (``d["f"](x)``). Only for a name bound once. A factory's
    result made in a loop (``g = make(a * k)``, ``namespace``: the function's) is kept the
    same way: ``g_made = (0, a * k)`` before ``g = make(g_made[1])``, ``h = g_made``, and
    ``h(x)`` calls ``make(h[1])(x)`` (``lambda_list_sites``). Such a name may also be given
    to a helper in a list or tuple display of it (``apply_all([h], x)``): the display gets
    a name of its own, ``passed`` (``ctx.lambda_lists``) says what it holds, and the helper's
    calls of its items call the function (``passed_to``)."""
    counts = binding_counts(fn_node)
    factories = _factory_results(fn_node, counts, namespace)
    namer = Namer({n.id for n in walk(fn_node) if isinstance(n, gast.Name)} | (
        set(local_functions)) | {fn_node.name})
    made = {}
    for name in sorted(counts):
        binds = [n for n in walk(fn_node) if isinstance(n, gast.Assign) and any(
            isinstance(t, gast.Name) and t.id == name for t in n.targets)]
        if len(binds) != 1 or counts[name] != 1 or len(binds[0].targets) != 1:
            continue
        held = _held_functions(binds[0].value, name, local_functions, remade, factories)
        displays, alone = _passed_whole(fn_node, name, held, passed)
        calls = _kept_calls(fn_node, name, held, sum(len(d.elts) for d, _, _ in displays) + (
            reads_passed(alone, name))) if held else None
        if calls is None:
            continue
        if alone:
            passed[name] = Whole([held[_WHOLE]])
        for item, call, signature in sorted(calls, key=lambda c: -_depth(c[1], fn_node)):
            kinds.become(call, _call_of(item, call, [signature]))
        for display, call, stmts in displays:
            passed[_named(display, call, stmts, namer)] = [held[_WHOLE]]
        _keep(fn_node, binds[0], held, local_functions, factories, made, namer)
    return fn_node


def _passed_whole(fn_node, name, held, passed):
    """``(displays, calls)`` passing ``name``, holding one function (``held``), to helpers:
    in a list or tuple display of it (``_displays_passed``), by itself (``passed_alone``)."""
    if passed is None or set(held) != {_WHOLE}:
        return [], []
    return _displays_passed(fn_node, name), passed_alone(fn_node, name)


def _keep(fn_node, bind, held, local_functions, factories, made, namer):
    """``bind``'s value (or its items at the keys of ``held``) holding which function it is
    and the values it keeps: a lambda's defaults, a factory's arguments (``made``: the name
    of each factory's result kept so far)."""
    for key, site in held.items():
        if site.kind == kinds.FACTORY:
            g = site.node.id
            if g not in made:
                made[g] = _made_apart(fn_node, factories[g][0], namer.fresh(MADE.format(g)))
            _put(bind, key, gast.Name(made[g], gast.Load(), None, None))
            continue
        node = local_functions[site.function][0]
        _put(bind, key, gast.Tuple([gast.Constant(0, None)] + [
            clone(d) for d in node.args.defaults], gast.Load()))


def _named(display, call, stmts, namer):
    """The name ``display``, an argument of ``call`` in the block ``stmts``, is given just
    before the statement of the call, which then passes that name."""
    listed = namer.fresh(FUNCTIONS)
    stmts.insert(next(i for i, s in enumerate(stmts) if any(n is call for n in walk(s))),
                 gast.copy_location(gast.Assign([gast.Name(listed, gast.Store(), None, None)],
                                                display, None), call))
    call.args = [gast.Name(listed, gast.Load(), None, None) if a is display else a
                 for a in call.args]
    return listed


def _displays_passed(fn_node, name):
    """``[(display, call, statements)]`` of each list or tuple display of only ``name``
    (``[h]``) given to a call of a name (a helper's: ``apply_all([h], x)``) in a plain
    statement (or the test of an ``if``) of the block ``statements``."""
    found = []
    for n in walk(fn_node):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(n, field, None)
            if not isinstance(stmts, list) or n is not fn_node and isinstance(n, gast.FunctionDef):
                continue
            for s in stmts:
                top = [s.test] if isinstance(s, gast.If) else [] if isinstance(
                    s, (gast.For, gast.While, gast.With, gast.Try)) else [s]
                found += [(a, c, stmts) for t in top for c in walk(t) if isinstance(
                    c, gast.Call) and isinstance(c.func, gast.Name) for a in c.args if isinstance(
                    a, (gast.List, gast.Tuple)) and a.elts and all(
                    isinstance(e, gast.Name) and e.id == name for e in a.elts)]
    return found


def _factory_results(fn_node, counts, namespace):
    """``{g: (its binding, its site)}`` of each name bound once, in a loop, to a factory's
    result (``g = make(a * k)``, ``lambda_list_sites``)."""
    found = {}
    for loop in walk(fn_node):
        if not isinstance(loop, (gast.For, gast.While)):
            continue
        for n in walk(loop):
            if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                    n.targets[0], gast.Name) and counts[n.targets[0].id] == 1:
                site = kinds.site_of(n.value, counts, namespace) if isinstance(
                    n.value, gast.Call) else None
                if site is not None and site.kind == kinds.FACTORY:
                    found[n.targets[0].id] = (n, site)
    return found


def _made_apart(fn_node, bind, made):
    """``made = (0, *arguments)`` before ``bind`` (``g = make(...)``), which then calls the
    factory with them; ``made``."""
    call = bind.value
    value = gast.Tuple([gast.Constant(0, None)] + call.args, gast.Load())
    call.args = [gast.Subscript(gast.Name(made, gast.Load(), None, None),
                                gast.Constant(1 + i, None), gast.Load())
                 for i in range(len(value.elts) - 1)]
    keep = gast.copy_location(gast.Assign([gast.Name(made, gast.Store(), None, None)], value,
                                          None), bind)
    for n in walk(fn_node):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(n, field, None)
            if isinstance(stmts, list) and any(s is bind for s in stmts):
                stmts.insert(next(i for i, s in enumerate(stmts) if s is bind), keep)
                return made
    return made


def _kept_calls(fn_node, name, held, displayed=0):
    """``[(item, call, signature)]`` of the calls of the functions ``held`` that ``name``
    holds, if every read of ``name`` calls it or an item of it (after the loops that bind it,
    or in a later trip: the tuple it holds is that trip's), but the ``displayed`` reads of it
    in displays passed to helpers, else None."""
    reads = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name and (
        isinstance(n.ctx, gast.Load))]
    called = [n for n in walk(fn_node) if isinstance(n, gast.Call) and _key(
        n.func, name) is not None]
    calls = [(n.func, n, held[_key(n.func, name)]) for n in called
             if _key(n.func, name) in held]  # (the display's other items: as they are)
    if len(called) + displayed != len(reads) or any(
            _call_of(i, c, [s]) is None for i, c, s in calls):
        return None
    return calls


_WHOLE = ()  # the key of a name given the function itself (``h = g``)


def _held_functions(value, name, local_functions, remade, factories):
    """``{key: signature}`` of the functions of ``remade`` (or factories' results in a loop,
    ``factories``) that ``value`` is (key ``_WHOLE``) or holds at constant keys of a display,
    if it holds nothing else there but values; else {}."""
    def remade_here(v):
        return isinstance(v, gast.Name) and v.id in remade and v.id != name and _plain(
            local_functions[v.id][0])

    def signature(v):
        if v.id in factories:
            return factories[v.id][1]._replace(node=v)
        return _signatures([local_functions[v.id][0]], [v.id])[0]

    if isinstance(value, gast.Dict) and all(isinstance(k, gast.Constant) for k in value.keys):
        items = [(k.value, v) for k, v in zip(value.keys, value.values)]
    elif isinstance(value, (gast.Tuple, gast.List)):
        items = list(enumerate(value.elts))
        if any(isinstance(v, gast.Starred) for _, v in items):
            return {}
    else:
        items = [(_WHOLE, value)]
    return {k: signature(v) for k, v in items if remade_here(v) or isinstance(
        v, gast.Name) and v.id in factories and v.id != name}


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
