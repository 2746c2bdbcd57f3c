"""Generator expressions computed when Python computes them.

Requires: ``map(f, xs)`` and ``filter(f, xs)`` written as generator expressions
(``ContainerMethods``); an iterator bound to a name used at most once, where it is made
(``check.refuse_reused_iterators``). Guarantees: a generator expression a ``for`` loop runs over
is computed item by item in the loop, and one bound to a name is computed where it is used.

Python computes a generator expression's items when they are asked for: the items a loop runs
over after the body of the trip before (``for w in (f(v) for v in xs): xs.append(w)`` visits the
new items; ``for w in (v * c for v in xs): c = c + 1.0`` reads each trip's ``c``), and the items
of ``g = (v * c for v in xs)`` where ``g`` is used, reading what ``c`` and the items of ``xs`` are
then. Only its first iterable (``xs``) is taken where it is written. ``DesugarControl`` builds
the other comprehensions into lists before their statement, which is Python's order for them;
before that, these two forms are rewritten:

    for w in (f(v) for v in xs if c(v)):        for v_1 in xs:
        body                             ->         if c(v_1):
                                                        w = f(v_1)
                                                        body

    g = (f(v) for v in xs)               ->     g = xs
    ...                                         ...
    s = sum(g)                                  s = sum(f(v) for v in g)

A generator expression of several ``for`` clauses becomes nested loops only if the body has no
``break`` of its own (a break would leave the inner loop only): otherwise it is refused.
"""

from __future__ import annotations

from collections import Counter

import gast

from ..astutil import NodeTransformer, Renamed, clone, located, ordered_walk, set_store, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError


def named_where_used(fn_node):
    """``g = (... for v in xs)`` becomes ``g = xs``, and the one read of ``g`` the generator
    expression over ``g`` (a name bound once; check.refuse_reused_iterators refused a second
    read)."""
    made = _named_generators(fn_node)
    if not made:
        return fn_node
    reads = Counter(n.id for n in walk(fn_node) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Load) and n.id in made)
    moved = {}
    for name, stmt in made.items():
        if reads[name] > 1:
            continue
        comp = stmt.value
        moved[name] = comp
        stmt.value = comp.generators[0].iter
        comp.generators[0].iter = gast.copy_location(gast.Name(name, gast.Load(), None, None),
                                                     stmt.value)
    _MovedTo(moved).visit(fn_node)
    return fn_node


def _named_generators(fn_node):
    """Name -> its binding ``g = (... for ...)``, for each name bound once, to a generator."""
    stores = Counter(n.id for n in walk(fn_node) if isinstance(n, gast.Name)
                     and not isinstance(n.ctx, gast.Load))
    return {n.targets[0].id: n for n in walk(fn_node) if isinstance(n, gast.Assign) and len(
        n.targets) == 1 and isinstance(n.targets[0], gast.Name) and isinstance(
        n.value, gast.GeneratorExp) and stores[n.targets[0].id] == 1}


class _MovedTo(NodeTransformer):
    def __init__(self, moved):
        self.moved = moved

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.moved:
            comp = self.moved.pop(node.id)  # (read once: the generator expression moves there)
            return gast.copy_location(comp, node)
        return node


def fused_loop(loop, fresh, names_builtin, locals_, location=None):
    """``loop`` with its generator expressions (``for w in (...)``, ``for k, w in
    enumerate(...)``, a generator over a generator) computed item by item in it; refused where
    another iterator takes a generator's items as the loop asks (``zip((...), ys)``)."""
    while True:
        it = loop.iter
        if isinstance(it, gast.GeneratorExp):
            loop = fused(loop, fresh, location)
        elif _enumerated_generator(it, names_builtin) and isinstance(
                loop.target, gast.Tuple) and len(loop.target.elts) == 2:
            loop = fused(_counted(loop, fresh), fresh, location)
        else:
            break
    it = loop.iter
    lazy = [a for a in getattr(it, "args", ()) if isinstance(a, gast.GeneratorExp)]
    if lazy and isinstance(it.func, gast.Name) and any(
            names_builtin(it.func.id, word) for word in ("zip", "enumerate", "iter")) and any(
            _may_change(loop.body, comp, names_builtin, locals_) for comp in lazy):
        # (built first, as before, where the body changes nothing the generator reads)
        _refuse(loop, location, (
            f"srcgrad does not support a loop over `{it.func.id}(...)` of a generator "
            f"expression that reads what the loop's body changes (Python computes its items as "
            f"the loop asks for them, between the trips); loop over the generator expression "
            f"itself, or make a list of it first (`[... for ...]`)"))
    return loop


def _refuse(loop, location, what):
    if location is None:
        raise UnsupportedSyntaxError(what)
    raise location.error(UnsupportedSyntaxError, loop, what)


def _may_change(body, comp, names_builtin, locals_):
    """Whether ``body`` may change what ``comp`` reads: binds or writes into a name it reads,
    calls a method of one of the function's own (``locals_``), passes one to a function, calls
    a function of the user's (which may write into anything), or updates in place (``+=``)."""
    own = {n.id for gen in comp.generators for n in walk(gen.target) if isinstance(n, gast.Name)}
    reads = {n.id for n in walk(comp) if isinstance(n, gast.Name) and n.id not in own}
    for n in walk(body):
        if isinstance(n, gast.AugAssign) or isinstance(n, gast.Name) and not isinstance(
                n.ctx, gast.Load) and n.id in reads:
            return True
        if isinstance(n, gast.Call) and _may_write(n, reads, names_builtin, locals_):
            return True
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
            return True
    return False


def _may_write(call, reads, names_builtin, locals_):
    """Whether ``call`` may write into what ``reads`` names: a method of one of the function's
    own, a call given one, or a function of the user's."""
    root = call.func
    while isinstance(root, (gast.Attribute, gast.Subscript)):
        root = root.value
    if not isinstance(root, gast.Name) or root.id in reads & locals_:
        return True
    if any(isinstance(a, gast.Name) and a.id in reads for a in call.args):
        return True
    return isinstance(call.func, gast.Name) and not names_builtin(call.func.id, call.func.id)


def _enumerated_generator(it, names_builtin):
    """Whether ``it`` is ``enumerate((... for ...))`` (``start=`` a constant or a name)."""
    return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and names_builtin(
        it.func.id, "enumerate") and len(it.args) in (1, 2) and isinstance(
        it.args[0], gast.GeneratorExp) and all(k.arg == "start" for k in it.keywords) and (
        len(it.args) + len(it.keywords) <= 2) and all(
        isinstance(a, (gast.Constant, gast.Name)) for a in it.args[1:] + [
            k.value for k in it.keywords])


def _counted(loop, fresh):
    """``for k, w in enumerate(gen, start)`` as ``n = start; for w in gen: k = n; n = n + 1;
    ...``: the loop over the generator itself, its count kept by hand (``n = start`` is put
    before it by the caller: ``loop.before``)."""
    it = loop.iter
    start = it.args[1] if len(it.args) > 1 else (
        it.keywords[0].value if it.keywords else gast.Constant(0, None))
    count = fresh(naming.COUNT)
    counter, item = loop.target.elts
    step = [gast.Assign([counter], gast.Name(count, gast.Load(), None, None), None), gast.Assign(
        [gast.Name(count, gast.Store(), None, None)],
        gast.BinOp(gast.Name(count, gast.Load(), None, None), gast.Add(),
                   gast.Constant(1, None)), None)]
    new = located([gast.For(item, it.args[0], step + loop.body, loop.orelse, None)], loop)[0]
    first = gast.copy_location(gast.Assign([gast.Name(count, gast.Store(), None, None)],
                                           clone(start), None), loop)
    new.before = getattr(loop, "before", []) + [first]
    return new


def fused(loop, fresh, location=None):
    """``loop``, a ``for`` over a generator expression, as loops over its ``for`` clauses (see
    above); ``fresh(name)`` names the generator's own variables anew (its scope is its own)."""
    comp = loop.iter
    if len(comp.generators) > 1 and _breaks(loop.body):
        _refuse(loop, location, (
            "srcgrad does not support `break` in a loop over a generator expression of several "
            "`for` clauses (Python computes its items as the loop asks for them, between the "
            "trips); write the nested loops themselves"))
    renames = {}
    for gen in comp.generators:
        for n in ordered_walk(gen.target):
            if isinstance(n, gast.Name):
                renames[n.id] = fresh(n.id)
    rename = Renamed(renames)
    item = gast.Assign([loop.target], rename.visit(clone(comp.elt)), None)
    inner = [gast.copy_location(item, comp.elt)] + loop.body
    for i, gen in reversed(list(enumerate(comp.generators))):
        for cond in reversed(gen.ifs):
            inner = [gast.copy_location(gast.If(rename.visit(clone(cond)), inner, []), cond)]
        it = gen.iter if i == 0 else rename.visit(clone(gen.iter))
        target = rename.visit(clone(gen.target))
        set_store(target)
        inner = [gast.copy_location(gast.For(target, it, inner, [], None), loop)]
    outer = inner[0]
    outer.orelse = loop.orelse
    outer.before = getattr(loop, "before", [])
    return located([outer], loop)[0]


def _breaks(body):
    """Whether ``body`` has a ``break`` of the loop it is the body of (not of a loop in it)."""
    for s in body:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, (gast.For, gast.While)):
            if _breaks(s.orelse):
                return True
            continue
        for field in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and not isinstance(s, gast.FunctionDef) and _breaks(
                    [t for t in inner if isinstance(t, gast.stmt)] + [
                        b for h in inner if isinstance(h, gast.ExceptHandler) for b in h.body]):
                return True
    return False
