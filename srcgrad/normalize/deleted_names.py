"""``del`` in the user's function: item deletions written as pops, and reads after a ``del``.

Requires: a checked body (``check.CheckSupported``). Guarantees: ``del xs[i]`` and ``del xs[a:b]``
become the ``pop`` calls ``normalize/containers.py`` models (``del_items_as_pops``); no path reads
a name after a ``del`` of it without assigning it first (``ReadsAfterDel``: a ``NameError`` in
Python is an error at transform time, never a read of the value the name had); then the ``del``
statements themselves, which change no value, are dropped (``without_del``).

    del L[:1]       ->   for k in sorted(range(len(L[:]))[:1], reverse=True):
                             L.pop(k)
"""

from __future__ import annotations

import builtins
import itertools

import gast

from ..astutil import loaded, ordered_walk, param_names, stored, walk
from ..errors import UnsupportedSyntaxError


class ReadsAfterDel:
    """Which names a ``del`` may have unbound at each point (forward data flow, joined over
    branches, loops, ``break`` and ``continue``); reading one of them is an error."""

    def __init__(self, location, fn_node, local_functions):
        self.location = location
        args = fn_node.args
        params = args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
        self.locals = {a.id for a in params if a is not None} | stored(fn_node.body)
        self.locals |= set(local_functions)
        self.free = _free_names(local_functions)  # a call of a local function reads these
        self.jumps = []  # per enclosing loop: (states at a break, states at a continue)

    def run(self, body):
        self.block(body, {})

    def block(self, stmts, deleted):
        """``deleted`` maps each name a ``del`` may have unbound to that ``del``; the result is
        the map after the block, or None where the block never falls through."""
        for s in stmts:
            if deleted is None:
                return None
            deleted = self.stmt(s, deleted)
        return deleted

    def stmt(self, s, deleted):
        if isinstance(s, gast.Delete):
            deleted = dict(deleted)
            for n in ordered_walk(s):
                if isinstance(n, gast.Name):
                    if n.id not in self.locals:
                        raise self._error(n, f"`del {n.id}` of a name the function does not "
                                          f"assign")
                    if n.id in deleted:
                        raise self._error(
                            n, f"`del {n.id}` here, but `del {n.id}` on line "
                            f"{self._line(deleted[n.id])} may have deleted it already (Python "
                            f"would raise NameError)"
                        )
                    deleted[n.id] = s
            return deleted
        if isinstance(s, gast.If):
            self.reads(s.test, deleted)
            return _join(self.block(s.body, dict(deleted)), self.block(s.orelse, dict(deleted)))
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, deleted)
        if isinstance(s, (gast.Break, gast.Continue)):
            self.jumps[-1][isinstance(s, gast.Continue)].append(deleted)
            return None
        self.reads(s, deleted)
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
            self.check(s.target, deleted)
        if isinstance(s, gast.Return):
            return None
        targets = getattr(s, "targets", None) or [getattr(s, "target", None)]
        bound = {n.id for t in targets if t is not None for n in walk(t)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        return {k: v for k, v in deleted.items() if k not in bound}

    def loop(self, s, deleted):
        is_for = isinstance(s, gast.For)
        if is_for:
            self.reads(s.iter, deleted)
        rebound = {n.id for n in walk(s.target) if isinstance(n, gast.Name)} if is_for else ()
        entry = deleted
        while True:
            self.jumps.append(([], []))
            if not is_for:
                self.reads(s.test, entry)
            end = self.block(s.body, {k: v for k, v in entry.items() if k not in rebound})
            breaks, continues = self.jumps.pop()
            again = _join(entry, end, *continues)
            if again.keys() == entry.keys():
                break
            entry = again
        endless = not is_for and isinstance(s.test, gast.Constant) and bool(s.test.value)
        return _join(*breaks) if endless else _join(entry, *breaks)

    def reads(self, node, deleted):
        for n in _free_loads(node):
            self.check(n, deleted)
            for name in self.free.get(n.id, ()):
                if name in deleted:
                    raise self._error(
                        n, f"`{n.id}` reads `{name}`, but `del {name}` on line "
                        f"{self._line(deleted[name])} may have deleted it (Python would raise "
                        f"NameError)"
                    )

    def check(self, node, deleted):
        if node.id in deleted:
            raise self._error(
                node, f"`{node.id}` is read here, but `del {node.id}` on line "
                f"{self._line(deleted[node.id])} may have deleted it (Python would raise "
                f"NameError)"
            )

    def _line(self, node):
        return self.location.of(node)[1]

    def _error(self, node, message):
        return self.location.error(UnsupportedSyntaxError, node, message)


def _join(*states):
    """The names unbound on some path into a point reached from ``states`` (None: no path)."""
    live = [s for s in states if s is not None]
    if not live:
        return None
    out = {}
    for s in live:
        out.update(s)
    return out


def _free_loads(node, bound=frozenset()):
    """The ``Name`` loads in ``node`` of the function's own variables: a comprehension's loop
    variables are its own."""
    if isinstance(node, gast.Name):
        if isinstance(node.ctx, gast.Load) and node.id not in bound:
            yield node
        return
    if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
        inner = bound | {n.id for g in node.generators for n in walk(g.target)
                         if isinstance(n, gast.Name)}
        for i, g in enumerate(node.generators):
            yield from _free_loads(g.iter, bound if i == 0 else inner)
            for test in g.ifs:
                yield from _free_loads(test, inner)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                yield from _free_loads(getattr(node, part), inner)
        return
    for child in gast.iter_child_nodes(node):
        yield from _free_loads(child, bound)


def _free_names(local_functions):
    """local function -> the enclosing function's names it reads, through the local functions
    it calls too."""
    own = {}
    for name, fn in local_functions.items():
        params = param_names(fn, packed=True)
        own[name] = loaded(fn.body) - params - stored(fn.body)
    free = {name: set(names) for name, names in own.items()}
    changed = True
    while changed:
        changed = False
        for names in free.values():
            more = set().union(*(free[c] for c in names if c in free)) - names
            if more:
                names |= more
                changed = True
    return free


def del_items_as_pops(stmts, taken, namespace=None):
    """``del xs[i]`` is ``xs.pop(i)`` for its effect, for a list and for a dict (on an array both
    raise): written so, it is the container mutation ``normalize/containers.py`` models.
    ``del xs[a:b]`` (any slice) pops the indices it covers, last first (``taken``: the names
    in use, the loop's is another):

        del L[:1]       ->   for k in sorted(range(len(L[:]))[:1], reverse=True):
                                 L.pop(k)

    (``L[:]``: a dict raises Python's TypeError there.)"""
    out = []
    for s in stmts:
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                setattr(s, field, del_items_as_pops(inner, taken, namespace))
        if isinstance(s, gast.Delete) and all(_deletable_item(t) for t in s.targets):
            for t in s.targets:
                out.append(gast.copy_location(_popped(t, taken, namespace), s))
            continue
        out.append(s)
    return out


def _popped(t, taken, namespace=None):
    """The statement that pops what ``del t`` deletes (the builtins it calls under names of
    their own where ``namespace``, the user's, binds theirs to something else)."""
    def load(name):
        return gast.Name(name, gast.Load(), None, None)

    def builtin(word):
        found = getattr(builtins, word)
        if namespace is None or namespace.lookup(word) is found:
            return load(word)
        fresh = next(f"{word}_{n}" for n in itertools.count(1) if f"{word}_{n}" not in taken)
        taken.add(fresh)
        namespace.extras[fresh] = found
        return load(fresh)

    pop = gast.Attribute(load(t.value.id), "pop", gast.Load())
    if not isinstance(t.slice, gast.Slice):
        return gast.Expr(gast.copy_location(gast.Call(pop, [t.slice], []), t))
    k = next(f"deleted_{n}" for n in itertools.count() if f"deleted_{n}" not in taken)
    taken.add(k)
    whole = gast.Subscript(load(t.value.id), gast.Slice(None, None, None), gast.Load())
    indices = gast.Subscript(gast.Call(builtin("range"), [gast.Call(builtin("len"), [whole], [])],
                                       []), t.slice, gast.Load())
    order = gast.Call(builtin("sorted"), [indices], [gast.keyword("reverse",
                                                               gast.Constant(True, None))])
    body = gast.Expr(gast.copy_location(gast.Call(pop, [load(k)], []), t))
    loop = gast.For(gast.Name(k, gast.Store(), None, None), order, [gast.copy_location(body, t)],
                    [], None)
    for n in walk(loop):
        if hasattr(n, "lineno") or isinstance(n, (gast.expr, gast.stmt)):
            gast.copy_location(n, t)
    return loop


def _deletable_item(t):
    return (
        isinstance(t, gast.Subscript)
        and isinstance(t.value, gast.Name)
        and not isinstance(t.slice, gast.Tuple)
    )


def without_del(stmts):
    """``stmts`` with every ``del`` statement removed (a block left empty gets ``pass``)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Delete):
            continue
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner:
                kept = without_del(inner)
                setattr(s, field, kept or ([gast.Pass()] if field == "body" else []))
        out.append(s)
    return out
