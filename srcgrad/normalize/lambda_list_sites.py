"""What a list of functions changed at run time holds for each function put into it, and how
a call of an item calls that function; part of ``lambda_lists``.

Requires: the function as parsed (``check``), its binding counts, and its namespace (for the
factories). Guarantees: each function written into the list (a site) is one of

- a lambda: the item holds ``(k, *defaults)``, its default values evaluated where it is made,
  and a call of the item calls the lambda taken out (``lambda_2(x, f[1])``), which reads the
  variables it captures when it is called, as Python's closure does;
- a function known at transform time, a name the function does not bind or an attribute of
  one (``np.sin``), or a local function defined once, outside loops (``sq``): the item holds
  ``(k,)``, a call of it calls that function (``np.sin(x)``, ``sq(x)``);
- the result of a factory, a function of the user's whose body only makes a function and
  returns it (``def make(c): return lambda t: c * t``): the item holds ``(k, *arguments)``,
  and a call of it calls the factory again with them (``make(f[1])(x)``), which makes the
  same closure: the factory computes nothing else (no assignment), so the function reads the
  very objects Python's closure holds.

    fs = [np.sin]                          fs = [(0,)]
    fs.append(lambda t, a=c: a * t)   ->   fs.append((1, c))
    fs.append(make(c))                     fs.append((2, c))
"""

from __future__ import annotations

import inspect
from collections import Counter
from typing import NamedTuple

import gast

from ..astutil import clone, param_names, store_counts, walk
from ..errors import SrcgradError
from ..frontend.source import parse_function


class Site(NamedTuple):
    node: object  # what is written: a Lambda (or a def), a name, a call of a factory
    kind: str  # LAMBDA, STATIC or FACTORY
    function: object  # the lambda's name once taken out; the function's or factory's expression
    count: int | None  # a lambda's parameters (None: the call passes what it passes)
    held: int  # how many values the item holds after ``k``: defaults, factory arguments
    obj: object = None  # what a static or factory expression names
    params: tuple = ()  # a lambda's parameters' names (a call may pass them by keyword)


LAMBDA, STATIC, FACTORY = "lambda", "static", "factory"


def site_of(expr, counts, namespace, defined=frozenset()):
    """The site ``expr`` is (its lambda's name not yet given), or None. ``defined``: the local
    functions defined once, outside loops (``sq`` of ``def sq(v)``): called by their name."""
    if isinstance(expr, gast.Lambda):
        a = expr.args
        if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg:
            return None
        return Site(expr, LAMBDA, None, len(a.args), len(a.defaults),
                    params=tuple(p.id for p in a.args))
    if isinstance(expr, gast.Name) and expr.id in defined:
        return Site(expr, STATIC, clone(expr), None, 0)
    if _static_looking(expr, counts, in_helper=namespace is None):
        obj = namespace.resolve(expr) if namespace is not None else None
        if namespace is not None and not callable(obj):
            return None
        return Site(expr, STATIC, clone(expr), None, 0, obj)
    if isinstance(expr, gast.Call) and namespace is not None and not expr.keywords and not any(
            isinstance(a, gast.Starred) for a in expr.args) and _static_looking(
            expr.func, counts):
        obj = namespace.resolve(expr.func)
        if is_factory(obj, len(expr.args)):
            return Site(expr, FACTORY, clone(expr.func), None, len(expr.args), obj)
    return None


def defined_once(fn_node, counts):
    """The names of the local functions ``fn_node`` defines once, outside loops (``def sq`` or
    ``sq = lambda ...``)."""
    in_loops = {id(n) for loop in walk(fn_node) if isinstance(loop, (gast.For, gast.While))
                for n in walk(loop)}
    defs = Counter(n.name for n in walk(fn_node) if isinstance(n, gast.FunctionDef) and (
        n is not fn_node))
    found = set()
    for n in walk(fn_node):
        if id(n) in in_loops or n is fn_node:
            continue
        if isinstance(n, gast.FunctionDef) and defs[n.name] == 1 and counts[n.name] == 0:
            found.add(n.name)
        elif isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name) and isinstance(n.value, gast.Lambda) and (
                counts[n.targets[0].id] == 1 and defs[n.targets[0].id] == 0):
            found.add(n.targets[0].id)
    return found


def names_read(sites):
    """The names the calls of ``sites``' functions read (``np`` of ``np.sin``, ``make``): to
    reserve where a helper calls them, which the function's own text may no longer name (an
    ANF temporary named ``make`` would hide the factory)."""
    return {n.id for site in sites if site.kind != LAMBDA for n in walk(site.function)
            if isinstance(n, gast.Name)}


def lambda_site(node, name):
    """The site of a lambda or def ``node`` taken out as ``name``."""
    return Site(node, LAMBDA, name, len(node.args.args), len(node.args.defaults),
                params=tuple(p.id for p in node.args.args))


def _static_looking(expr, counts, in_helper=False):
    """A name the function never binds, or an attribute of one (``np.sin``); not a bare name
    in an inlined helper's body (the caller's value: its functions are ``defined``)."""
    if in_helper and isinstance(expr, gast.Name):
        return False
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Name) and counts[expr.id] == 0


def held(k, site):
    """What the list holds for ``site``, the ``k``-th function written into it."""
    if site.kind == LAMBDA:
        rest = list(site.node.args.defaults)
    elif site.kind == FACTORY:
        rest = list(site.node.args)
    else:
        rest = []
    return gast.copy_location(gast.Tuple([gast.Constant(k, None)] + rest, gast.Load()),
                              site.node)


def call_of(site, item, args, keywords=()):
    """The call of the function ``item`` (holding ``site``'s values) with ``args`` and
    ``keywords``, or None where a lambda cannot take them. A lambda's parameters that the
    call passes neither way get the defaults the item holds, by name (the keywords stay
    where the call writes them: Python evaluates them in that order)."""
    def held_value(i):
        return gast.Subscript(clone(item), gast.Constant(1 + i, None), gast.Load())

    args = [clone(a) for a in args]
    keywords = [gast.keyword(k.arg, clone(k.value)) for k in keywords]
    if site.kind == STATIC:
        return gast.Call(clone(site.function), args, keywords)
    if site.kind == FACTORY:
        made = gast.Call(clone(site.function), [held_value(i) for i in range(site.held)], [])
        return gast.Call(made, args, keywords)
    first_default = site.count - site.held
    named = {k.arg for k in keywords}
    if len(args) > site.count or None in named or not named <= set(
            site.params[len(args):]):
        return None
    if not keywords:
        if len(args) < first_default:
            return None
        defaults = [held_value(i - first_default) for i in range(len(args), site.count)]
        return gast.Call(gast.Name(site.function, gast.Load(), None, None), args + defaults, [])
    missing = [i for i in range(len(args), site.count) if site.params[i] not in named]
    if any(i < first_default for i in missing):
        return None
    keywords += [gast.keyword(site.params[i], held_value(i - first_default)) for i in missing]
    return gast.Call(gast.Name(site.function, gast.Load(), None, None), args, keywords)


_LIBRARIES = ("numpy", "math")  # (their functions are no factories of the user's)


def is_factory(obj, given):
    """Whether ``obj`` is a function of the user's, called with ``given`` positional
    arguments, whose body only defines and returns a lambda or a def of its own, reading its
    parameters as they are (no assignment: a value computed from an argument that the caller
    changes in place later would be computed anew; constant default values):
    calling it again with the same arguments makes the same function, holding the same
    objects."""
    if not _takes(obj, given):
        return False
    try:
        node = parse_function(obj).node
    except (SrcgradError, OSError, SyntaxError):  # (no source: no factory srcgrad follows)
        return False
    *body, last = node.body
    defs = {s.name for s in body if isinstance(s, gast.FunctionDef)}
    if not isinstance(last, gast.Return) or not (isinstance(last.value, gast.Lambda) or (
            isinstance(last.value, gast.Name) and last.value.id in defs)):
        return False
    made = [s for s in body if isinstance(s, gast.FunctionDef)] + [
        v for v in [last.value] if isinstance(v, gast.Lambda)]
    return all(isinstance(s, gast.FunctionDef) or isinstance(s, gast.Expr) and isinstance(
        s.value, gast.Constant) for s in body) and all(_fixed(f) for f in made)


def _takes(obj, given):
    """Whether ``obj`` is a plain function of the user's that ``given`` positional arguments
    call (no ``*args``, ``**kwargs``, keyword-only parameters; no generator)."""
    if not inspect.isfunction(obj) or obj.__module__ in _LIBRARIES:
        return False
    code = obj.__code__
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR):
        return False
    return not code.co_kwonlyargcount and (
        code.co_argcount - len(obj.__defaults__ or ()) <= given <= code.co_argcount)


def _fixed(made):
    """Whether the def or lambda ``made`` by a factory has no decorator, ``nonlocal`` or
    ``global``, and only constants as default values: the same each time the factory runs."""
    defaults = [d for d in made.args.defaults + made.args.kw_defaults if d is not None]
    return not getattr(made, "decorator_list", None) and not any(
        isinstance(n, (gast.Nonlocal, gast.Global)) for n in walk(made)) and all(
        isinstance(d, gast.Constant) or isinstance(d, gast.UnaryOp) and isinstance(
            d.operand, gast.Constant) for d in defaults)


def extends_written(fn_node, function):
    """``fn_node`` where ``fs += [g, h]`` (or a tuple display), or ``fs = fs + [g, h]`` where
    no other name holds the list and no loop over it holds the statement, of functions
    (``function(g)``) of a name bound otherwise once, by a statement of the function's own
    block before it, to a list (a display, ``[]``, a comprehension or a choice between
    displays) is ``fs.extend([g, h])``: the same change of the same list as Python's, or one
    nobody sees apart from it, so the list is bound once (``lambda_lists``)."""
    stores = store_counts(fn_node)
    grown = [(i, n, name, added) for i, n, name, added in _grown(fn_node)
             if all(function(e) for e in added.elts)]
    for name in {g[2] for g in grown} - set(param_names(fn_node, packed=True)):
        mine = [(i, n, added) for i, n, target, added in grown if target == name]
        if stores[name] != len(mine) + 1 or not _made_before(fn_node, name, mine):
            continue
        for _, n, added in mine:
            become(n, gast.Expr(gast.Call(gast.Attribute(gast.Name(
                name, gast.Load(), None, None), "extend", gast.Load()), [added], [])))
    return fn_node


def _made_before(fn_node, name, grown):
    """Whether a statement of the function's block before every one of ``grown`` binds
    ``name`` to a list, and, for ``fs = fs + [...]``, nothing holds the list apart."""
    made = [i for i, s in enumerate(fn_node.body) if isinstance(s, gast.Assign) and len(
        s.targets) == 1 and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name
        and _a_list(s.value)]
    if len(made) != 1 or any(i <= made[0] for i, _, _ in grown):
        return False
    return not any(isinstance(n, gast.Assign) for _, n, _ in grown) or not _held_apart(
        fn_node, name)


def _grown(fn_node):
    """``[(i, statement, name, display)]`` of each ``name += display`` (``name = name + [...]``)
    in the ``i``-th statement of the function's block (not in a nested def: there it binds the
    def's own name)."""
    nested = {id(n) for d in walk(fn_node) if isinstance(d, gast.FunctionDef) and (
        d is not fn_node) for n in walk(d)}
    found = [(i, n) + _added(n) for i, s in enumerate(fn_node.body) for n in walk(s)
             if id(n) not in nested and _added(n) is not None]
    return [g for g in found if not any(isinstance(e, gast.Starred) for e in g[3].elts)]


def _added(n):
    """``(name, display)`` of ``name += display`` or ``name = name + [...]``, else None."""
    if isinstance(n, gast.AugAssign) and isinstance(n.op, gast.Add) and isinstance(
            n.target, gast.Name) and isinstance(n.value, (gast.List, gast.Tuple)):
        return n.target.id, n.value
    if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
            n.targets[0], gast.Name) and isinstance(n.value, gast.BinOp) and isinstance(
            n.value.op, gast.Add) and isinstance(n.value.left, gast.Name) and (
            n.value.left.id == n.targets[0].id) and isinstance(n.value.right, gast.List):
        return n.targets[0].id, n.value.right
    return None


def _held_apart(fn_node, name):
    """Whether another name may hold the list ``name`` (``gs = fs``, a lambda's default, a
    display holding it) or a loop over it may hold a rebinding of it: ``fs = fs + [g]`` then
    makes a new list where ``fs.extend`` would change the one they see."""
    for n in walk(fn_node):
        if isinstance(n, gast.For) and any(isinstance(m, gast.Name) and m.id == name
                                           for m in walk(n.iter)) and not _measured(n.iter, name):
            return True
        if isinstance(n, (gast.List, gast.Tuple, gast.Dict, gast.Set, gast.arguments)) or (
                isinstance(n, gast.Assign) and not isinstance(n.value, gast.BinOp)):
            values = n.values if isinstance(n, gast.Dict) else n.defaults if isinstance(
                n, gast.arguments) else [n.value] if isinstance(n, gast.Assign) else n.elts
            if any(isinstance(v, gast.Name) and v.id == name for v in values):
                return True
    return False


def _measured(iterated, name):
    """``range(len(fs))``, ``range(len(fs) - 1)``: a loop over indices, not over the list."""
    if not (isinstance(iterated, gast.Call) and isinstance(iterated.func, gast.Name) and (
            iterated.func.id == "range")):
        return False
    lens = {id(c.args[0]) for c in walk(iterated) if isinstance(c, gast.Call) and getattr(
        c.func, "id", None) == "len" and len(c.args) == 1}
    return all(id(m) in lens for m in walk(iterated) if isinstance(m, gast.Name) and (
        m.id == name))


def _a_list(value):
    """Whether ``value`` always makes a list: a display, a comprehension, a choice of them."""
    if isinstance(value, gast.IfExp):
        return _a_list(value.body) and _a_list(value.orelse)
    return isinstance(value, (gast.List, gast.ListComp))


def become(node, new):
    """``node`` turned into ``new`` in place (its parent keeps pointing at it)."""
    node.__class__ = new.__class__
    for attr in list(vars(node)):
        if attr not in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            delattr(node, attr)
    for attr in new._fields:
        setattr(node, attr, getattr(new, attr))


def looped_defs(fn_node, counts):
    """``{name: def}`` of each nested ``def`` in a loop, of positional parameters, with default
    values (made anew each trip), no decorator, ``nonlocal`` or ``global``, that binds its name
    alone and whose name is read once: where it is appended to a list of functions, it is a
    site like a lambda (``def_site``)."""
    in_loops = [d for loop in walk(fn_node) if isinstance(loop, (gast.For, gast.While))
                for d in walk(loop) if isinstance(d, gast.FunctionDef)]
    reads = Counter(n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load))
    defs = Counter(d.name for d in walk(fn_node) if isinstance(d, gast.FunctionDef))
    return {d.name: d for d in in_loops if defs[d.name] == 1 and counts[d.name] == 1 and reads[
        d.name] == 1 and _plain_def(d)}


def _plain_def(d):
    """A def of positional parameters with default values, no decorator, ``nonlocal`` or
    ``global``."""
    a = d.args
    return not d.decorator_list and a.defaults and not (
        a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg) and not any(
        isinstance(n, (gast.Nonlocal, gast.Global)) for n in walk(d))


def def_site(node):
    """The site of a nested ``def`` appended by its name (``looped_defs``): like a lambda's,
    the item holding its defaults as they are where the ``def`` runs (``held_def``)."""
    return Site(node, LAMBDA, None, len(node.args.args), len(node.args.defaults),
                params=tuple(p.id for p in node.args.args))


def written(site, e):
    """Whether ``e``, written into a list, is ``site``'s function (a def's: its name)."""
    return e is site.node or isinstance(site.node, gast.FunctionDef) and isinstance(
        e, gast.Name) and e.id == site.node.name


def held_def(k, site):
    """``site``'s ``def`` statement as the binding of its name to what the list holds for it
    (``g = (k, *defaults)``): its default values evaluated where Python evaluates them."""
    return gast.Assign([gast.Name(site.node.name, gast.Store(), None, None)], held(k, site),
                       None)


def taken_out(site):
    """The function of a lambda or ``def`` site, named ``site.function``, without its default
    values (the item holds them; each call passes them)."""
    args = clone(site.node.args)
    args.defaults = []
    if isinstance(site.node, gast.FunctionDef):
        return gast.FunctionDef(site.function, args, clone(site.node.body), [], None, None)
    return gast.Assign([gast.Name(site.function, gast.Store(), None, None)],
                       gast.Lambda(args, clone(site.node.body)), None)
