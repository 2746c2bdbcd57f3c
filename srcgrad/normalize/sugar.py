"""Everyday syntax written in the few forms the later passes know; the first step of ``check``.

Requires: a parsed function (the differentiated one, a helper to inline, a local function).
Guarantees: every assignment has one target, a name, an indexed name or a tuple of names (a
nested or indexed part of a tuple target is unpacked into a fresh name first, the right-hand
side evaluated once, before any part is written); loop targets are names or tuples of names
(comprehensions read a nested part by index); loops have no ``else``; sets are made by
``set(...)``; ``:=`` is gone from every
place it is evaluated unconditionally (the condition of a ``while`` too); after a branch that
always ends in ``raise``, its ``else`` is no branch (it is the only way on); ``try`` ... ``finally``
is its body, then its ``finally`` block; ``try`` ... ``except`` is a branch on which path ran
(normalize/handlers.py). What stays
(``:=`` inside a lambda, a comprehension or the right side of ``and``/``or``/``if``-``else``) is
refused by ``CheckSupported``.

    (c, d), e = v              ->   c_d, e = v
                                    c, d = c_d
    a = b = f(x)               ->   a = f(x)
                                    b = a
    for v in xs:                    broke = False
        if v > m:                   for v in xs:
            break              ->       if v > m:
    else:                                   broke = True
        s = 0.0                             break
                                    if not broke:
                                        s = 0.0
    if (n := len(x)) > 2:      ->   n = len(x)
                                    if n > 2:
    if x.ndim != 1:                 if x.ndim != 1:
        raise ValueError("1-D") ->      raise ValueError("1-D")
    else:                           y = x * 2.0
        y = x * 2.0
"""

from __future__ import annotations

import builtins
import operator

import gast

from ..astutil import NodeTransformer, clone, local_names, walk
from ..emit import naming
from ..emit.naming import Namer
from . import handlers
from .setdefault_held import HeldSetdefault

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)


def run(fn_node, location=None, namespace=None):
    """The step: ``fn_node`` with its everyday syntax in the supported forms (see above);
    ``location`` places refusals, ``namespace`` recognizes a ``try`` srcgrad emitted."""
    return Sugar(fn_node, location, namespace).run(fn_node)


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _store(name):
    return gast.Name(name, gast.Store(), None, None)


def _root(node):
    """The name ``obj`` of ``obj.a.d`` (``d`` itself for a name), or None."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _loaded(node):
    """A copy of the name or field ``node``, read."""
    node = clone(node)
    for n in walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


def _located(stmt, where):
    for n in walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return stmt


class Sugar:
    def __init__(self, fn_node, location=None, namespace=None):
        self.fn_node, self.location, self.namespace = fn_node, location, namespace
        self.namer = Namer({n.id for n in walk(fn_node) if isinstance(n, gast.Name)}
                           | {fn_node.name})
        self.shadowed = {"list", "tuple"} & local_names(fn_node)  # (else the builtins)
        self.dicts = {a.id for a in fn_node.args.args + fn_node.args.kwonlyargs} | {
            n.targets[0].id for n in walk(fn_node) if isinstance(n, gast.Assign)
            and isinstance(n.targets[0], gast.Name) and (isinstance(
                n.value, (gast.Dict, gast.DictComp)) or (isinstance(n.value, gast.Call) and (
                    isinstance(n.value.func, gast.Name) and n.value.func.id == "dict")))}
        self.held = HeldSetdefault(fn_node, self.namer, self._setdefault_call)

    def _builtin(self, word):
        """The builtin ``word`` as generated code calls it: its own name, or a fresh one bound
        to it where the user's module binds ``word`` to something else."""
        found = getattr(builtins, word)
        if self.namespace is None or self.namespace.lookup(word) is found:
            return _load(word)
        fresh = self.namer.fresh(word)
        self.namespace.extras[fresh] = found
        return _load(fresh)

    def run(self, fn_node):
        fn_node.body = self.block(fn_node.body)
        for n in walk(fn_node):
            if isinstance(n, _COMPREHENSIONS):
                self._comprehension_targets(n)
        fn_node = _Sets(self._builtin).visit(fn_node)
        if self.namespace is not None:
            fn_node = _Getters(self.namespace, local_names(fn_node)).visit(fn_node)
        if not self.shadowed & {"list", "tuple"}:
            fn_node = _Spreads().visit(fn_node)
        if not any(isinstance(n, gast.Name) and n.id == "dict" and not isinstance(n.ctx, gast.Load)
                   for n in walk(fn_node)):
            fn_node = _DictCalls(self.namer).visit(fn_node)
        return fn_node

    def block(self, stmts):
        out = []
        stmts = list(stmts)
        for i, s in enumerate(stmts):
            for t in self.held.rewrite(s, stmts[i + 1:]) or [s]:
                self.held.outer.append((t, stmts[i + 1:]))
                out.extend(self.statement(t))
                self.held.outer.pop()
        return _raising_branches(out)

    def statement(self, s):
        if isinstance(s, gast.FunctionDef):
            return [s]
        if isinstance(s, gast.Try) and s.handlers:
            return handlers.desugar(self, s, self.location, self.namespace)
        pre = []
        if isinstance(s, gast.While):
            return self._while(s)
        for field in ("value", "test", "iter"):
            value = getattr(s, field, None)
            if isinstance(value, gast.expr):
                value = _Walrus(self, pre, s).hoist(value)
                setattr(s, field, _NamedArguments(self, pre, s).visit(value))
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                setattr(s, field, self.block(inner))
        if isinstance(s, gast.Try):
            for handler in s.handlers:
                handler.body = self.block(handler.body)
        if isinstance(s, gast.Try) and not s.handlers and not s.orelse:
            # `try: B finally: F` runs B then F (when B raises, F is skipped: the error goes on
            # to the caller of the derivative, which differentiates nothing further)
            return pre + s.body + s.finalbody
        setdefault = self._setdefault(s)
        if setdefault is not None:
            return pre + setdefault
        if isinstance(s, gast.Assign):
            return pre + self._assign(s)
        if isinstance(s, gast.For):
            return pre + self._for(s)
        return pre + [s]

    # --- assignments -----------------------------------------------------------------------
    def _assign(self, s):
        """One target per assignment, each a name, an indexed name or a tuple of names."""
        if len(s.targets) == 1:
            return self._split(s)
        first, rest = s.targets[0], s.targets[1:]
        if isinstance(first, gast.Name):
            # `a = b = v` is `a = v; b = a`: both hold the one value, as in Python
            s.targets = [first]
            out = self._split(s)
            source = first.id
        else:
            source = self.namer.fresh(naming.PACKED)
            out = [_located(gast.Assign([_store(source)], s.value, None), s)]
            out += self._split(_located(gast.Assign([first], _load(source), None), s))
        for t in rest:
            out += self._split(_located(gast.Assign([t], _load(source), None), s))
        return out

    def _split(self, s):
        target = s.targets[0]
        if isinstance(target, gast.List):
            target = s.targets[0] = gast.copy_location(gast.Tuple(target.elts, gast.Store()),
                                                       target)
        if not isinstance(target, gast.Tuple):
            return [s]
        starred = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if len(starred) == 1 and "list" not in self.shadowed:
            return self._starred(s, target, starred[0])
        if starred:
            return [s]
        later = []
        for i, e in enumerate(target.elts):
            if isinstance(e, gast.Name):
                continue
            part = self.namer.fresh(naming.JOINED(_target_names(e)) or naming.PACKED)
            target.elts[i] = gast.copy_location(_store(part), e)
            later += self._split(_located(gast.Assign([e], _load(part), None), s))
        return [s] + later

    def _starred(self, s, target, k):
        """``a, *m, b = v``: ``v`` made a list once (as Python iterates it once), its length
        checked as Python's, then ``a = p[0]``, ``m = p[1:-1]`` (a new list), ``b = p[-1]``."""
        elts = target.elts
        after = len(elts) - k - 1
        whole = self.namer.fresh(naming.JOINED(_target_names(target)) or naming.PACKED)
        listed = gast.Call(self._builtin("list"), [s.value], [])
        out = [_located(gast.Assign([_store(whole)], listed, None), s)]
        if k + after:
            short = gast.Compare(gast.Call(self._builtin("len"), [_load(whole)], []), [gast.Lt()],
                                 [gast.Constant(k + after, None)])
            error = gast.Call(self._builtin("ValueError"), [gast.Constant(
                f"not enough values to unpack (expected at least {k + after})", None)], [])
            out.append(_located(gast.If(short, [gast.Raise(error, None)], []), s))
        for i, e in enumerate(elts):
            if i < k:
                read = gast.Subscript(_load(whole), gast.Constant(i, None), gast.Load())
            elif i == k:
                upper = gast.Constant(-after, None) if after else None
                read = gast.Subscript(_load(whole), gast.Slice(gast.Constant(k, None), upper,
                                                               None), gast.Load())
                e = e.value
            else:
                read = gast.Subscript(_load(whole), gast.Constant(i - len(elts), None),
                                      gast.Load())
            out += self._split(_located(gast.Assign([e], read, None), s))
        return out

    def _setdefault(self, s):
        """``t = d.setdefault(k, v)`` (or the call alone) of a dict ``d`` the function makes
        or is given: ``k`` and ``v`` evaluated, ``if k not in d: d[k] = v``, ``t = d[k]``;
        its result used further, ``d.setdefault(k, []).append(v)``, ``d.setdefault(k,
        {})["a"] = w`` (``+=`` too), is ``d[k]`` after that (``d[k].append(v)``, ``d[k]["a"] =
        w``: the list or dict the dict holds, changed in place)."""
        site = self._setdefault_site(s)
        if site is None:
            return None
        call, parent = site
        held_dict = call.func.value  # a name, or a field (`obj.d`)
        d = _root(held_dict)
        out, atoms = [], []
        if isinstance(s, gast.Assign) and parent is not None and not isinstance(
                s.value, (gast.Constant, gast.Name)):  # (Python evaluates it first)
            held = self.namer.fresh(naming.describe(s.value))
            out.append(_located(gast.Assign([_store(held)], s.value, None), s))
            s.value = _load(held)
        for a in call.args + [gast.Constant(None, None)] * (2 - len(call.args)):
            if isinstance(a, (gast.Constant, gast.Name)) and (
                    not isinstance(a, gast.Name) or a.id != d):
                atoms.append(a)
                continue
            held = self.namer.fresh(naming.describe(a))
            out.append(_located(gast.Assign([_store(held)], a, None), s))
            atoms.append(_load(held))
        key, value = atoms
        absent = gast.Compare(clone(key), [gast.NotIn()], [_loaded(held_dict)])
        put = gast.Assign([gast.Subscript(_loaded(held_dict), clone(key), gast.Store())], value,
                          None)
        out.append(_located(gast.If(absent, [put], []), s))
        read = gast.copy_location(gast.Subscript(_loaded(held_dict), clone(key), gast.Load()),
                                  call)
        if parent is not None:
            parent.value = read
            out += self._assign(s) if isinstance(s, gast.Assign) else [s]
        elif isinstance(s, gast.Assign):
            out += self._assign(_located(gast.Assign(s.targets, read, None), s))
        return out

    def _setdefault_site(self, s):
        """``(call, parent)`` of the ``d.setdefault(...)`` call ``s`` starts with: its value
        (``parent`` None), or the node whose ``value`` it is (``d.setdefault(k, []).append``,
        a target ``d.setdefault(k, {})["a"]``); else None."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            heads = [s.value, s.targets[0]]
        elif isinstance(s, gast.AugAssign):
            heads = [s.target]
        elif isinstance(s, gast.Expr):
            heads = [s.value]
        else:
            return None
        if self._setdefault_call(heads[0]):
            return heads[0], None
        for head in heads:
            node = head.func if isinstance(head, gast.Call) else head
            while isinstance(node, (gast.Attribute, gast.Subscript)):
                if self._setdefault_call(node.value):
                    return node.value, node
                node = node.value
        return None

    def _setdefault_call(self, call):
        """Whether ``call`` is ``d.setdefault(k[, v])`` of a dict ``d`` the function makes or
        is given, or of a field (``obj.d``: a dict, as ``setdefault`` is a dict's method)."""
        held = call.func.value if isinstance(call, gast.Call) and isinstance(
            call.func, gast.Attribute) else None
        return (held is not None and call.func.attr == "setdefault" and (
                    isinstance(held, gast.Name) and held.id in self.dicts
                    or isinstance(held, gast.Attribute) and _root(held) is not None)
                and 1 <= len(call.args) <= 2
                and not call.keywords
                and not any(isinstance(a, gast.Starred) for a in call.args))

    # --- loops -----------------------------------------------------------------------------
    def _for(self, s):
        target = s.target
        if isinstance(target, gast.List):
            target = s.target = gast.copy_location(gast.Tuple(target.elts, gast.Store()), target)
        if isinstance(target, gast.Tuple) and not all(
            isinstance(e, gast.Name) for e in target.elts
        ) and not enumerate_zip(s):
            part = self.namer.fresh(naming.JOINED(_target_names(target)) or naming.PACKED)
            unpack = _located(gast.Assign([target], _load(part), None), s)
            s.target = gast.copy_location(_store(part), target)
            s.body = self._split(unpack) + s.body
        return self._else(s)

    def _while(self, s):
        s.body = self.block(s.body)
        s.orelse = self.block(s.orelse)
        pre = []
        test = _Walrus(self, pre, s).hoist(s.test)
        stmts = self._else(s)  # the loop's own breaks set the flag; the one added below does not
        if pre:
            # `while (n := f()) > 0:` assigns before every test: `while True:` with the
            # assignments and the test first in the body; failing the test is a plain `break`,
            # so an `else` block runs then, as in Python
            fail = _located(gast.If(gast.UnaryOp(gast.Not(), test), [gast.Break()], []), s)
            s.body = pre + [fail] + s.body
            test = gast.Constant(True, None)
        s.test = test
        return stmts

    def _else(self, loop):
        """``for``/``while`` ... ``else``: the ``else`` block after the loop, run unless the loop
        left by one of its own ``break`` statements (a flag set just before each)."""
        orelse, loop.orelse = loop.orelse, []
        if not orelse:
            return [loop]
        if not _own_breaks(loop.body):
            return [loop] + orelse
        flag = self.namer.fresh(naming.BROKE)
        loop.body = _flag_breaks(loop.body, flag, loop)
        init = _located(gast.Assign([_store(flag)], gast.Constant(False, None), None), loop)
        after = _located(gast.If(gast.UnaryOp(gast.Not(), _load(flag)), orelse, []), orelse[0])
        return [init, loop, after]

    # --- comprehensions --------------------------------------------------------------------
    def _comprehension_targets(self, comp):
        """``for i, (a, b) in ...`` in a comprehension: the pair is one name, ``a`` and ``b``
        read it by index in the element, the conditions and the later generators."""
        for k, gen in enumerate(comp.generators):
            target = gen.target
            if not isinstance(target, gast.Tuple) or all(
                isinstance(e, gast.Name) for e in target.elts
            ) or enumerate_zip(gen):
                continue
            reads = {}
            if isinstance(target, gast.Tuple) and any(
                isinstance(e, gast.Starred) for e in walk(target)
            ):
                continue
            for i, e in enumerate(target.elts):
                if isinstance(e, gast.Name):
                    continue
                part = self.namer.fresh(naming.JOINED(_target_names(e)) or naming.PACKED)
                target.elts[i] = gast.copy_location(_store(part), e)
                _index_reads(e, _load(part), reads)
            later = comp.generators[k + 1:]
            if any(n in reads for g in later for n in _target_names(g.target)):
                continue
            replace = _Substitute(reads)
            gen.ifs = [replace.visit(t) for t in gen.ifs]
            for g in later:
                g.iter = replace.visit(g.iter)
                g.ifs = [replace.visit(t) for t in g.ifs]
            for part in ("elt", "key", "value"):
                if hasattr(comp, part):
                    setattr(comp, part, replace.visit(getattr(comp, part)))


def enumerate_zip(loop):
    """``for i, (a, b) in enumerate(zip(xs, ys))`` (a loop or a comprehension's generator):
    ``normalize/control.py`` indexes each sequence itself."""
    target, it = loop.target, loop.iter
    return (
        isinstance(target, gast.Tuple) and len(target.elts) == 2
        and isinstance(target.elts[0], gast.Name) and isinstance(target.elts[1], gast.Tuple)
        and all(isinstance(e, gast.Name) for e in target.elts[1].elts)
        and _named_call(it, "enumerate") and len(it.args) == 1
        and _named_call(it.args[0], "zip")
        and len(it.args[0].args) == len(target.elts[1].elts)
        and not any(isinstance(a, gast.Starred) for a in it.args[0].args)
    )


def _named_call(node, name):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == name and not node.keywords)


def _target_names(target):
    return [n.id for n in walk_in_order(target) if isinstance(n, gast.Name)]


def walk_in_order(node):
    """The nodes of ``node`` depth first, in source order."""
    yield node
    for child in gast.iter_child_nodes(node):
        yield from walk_in_order(child)


def _index_reads(target, whole, reads):
    """``reads[name]``: the expression ``whole[i][j]...`` each name of ``target`` unpacks to."""
    if isinstance(target, gast.Name):
        reads[target.id] = whole
        return
    for i, e in enumerate(target.elts):
        item = gast.Subscript(clone(whole), gast.Constant(i, None), gast.Load())
        _index_reads(e, item, reads)


class _Substitute(NodeTransformer):
    def __init__(self, reads):
        self.reads = reads

    def visit_Name(self, node):
        if node.id in self.reads and isinstance(node.ctx, gast.Load):
            return gast.copy_location(clone(self.reads[node.id]), node)
        return node

    def visit_Lambda(self, node):
        return node


def _own_breaks(stmts):
    """Whether a loop body has a ``break`` of its own (not one of a nested loop's)."""
    for s in stmts:
        if isinstance(s, gast.Break):
            return True
        if isinstance(s, (gast.For, gast.While, gast.FunctionDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            if _own_breaks(getattr(s, field, None) or []):
                return True
        if isinstance(s, gast.Try) and any(_own_breaks(h.body) for h in s.handlers):
            return True
    return False


def _flag_breaks(stmts, flag, loop):
    out = []
    for s in stmts:
        if isinstance(s, gast.Break):
            out.append(_located(gast.Assign([_store(flag)], gast.Constant(True, None), None), s))
            out.append(s)
            continue
        if not isinstance(s, (gast.For, gast.While, gast.FunctionDef)):
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list):
                    setattr(s, field, _flag_breaks(inner, flag, loop))
            if isinstance(s, gast.Try):
                for h in s.handlers:
                    h.body = _flag_breaks(h.body, flag, loop)
        out.append(s)
    return out


def _always_raises(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, gast.Raise):
        return True
    return isinstance(last, gast.If) and _always_raises(last.body) and _always_raises(last.orelse)


def _raising_branches(stmts):
    """After an ``if`` whose one branch always raises, the other branch is no branch: its
    statements follow the ``if`` (the test is negated when it is the first branch that goes on).
    Statements after a ``raise`` never run and go."""
    out = []
    for s in stmts:
        out.append(s)
        if isinstance(s, gast.Raise):
            break
        if not isinstance(s, gast.If) or not s.orelse or getattr(s, "try_branch", False):
            continue
        if _always_raises(s.body):
            rest, s.orelse = s.orelse, []
            out.extend(rest)
        elif _always_raises(s.orelse):
            rest, s.body = s.body, s.orelse
            s.orelse = []
            s.test = gast.copy_location(gast.UnaryOp(gast.Not(), s.test), s.test)
            out.extend(rest)
    return out


class _NamedArguments(NodeTransformer):
    """``sorted(f(x), key=k)`` and ``divmod(a * b, c)``: each argument they read twice once they
    are written with what has rules (``normalize/containers.py``) is first given a name."""

    READ_TWICE = {"sorted": 1, "divmod": 2}

    def __init__(self, owner, pre, stmt):
        self.owner = owner
        self.pre = pre
        self.stmt = stmt

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        count = self.READ_TWICE.get(func.id) if isinstance(func, gast.Name) else None
        if count is None or any(isinstance(a, gast.Starred) for a in node.args):
            return node
        for i, a in enumerate(node.args[:count]):
            if not isinstance(a, (gast.Name, gast.Constant)):
                name = self.owner.namer.fresh(naming.describe(a))
                self.pre.append(_located(gast.Assign([_store(name)], a, None), self.stmt))
                node.args[i] = gast.copy_location(_load(name), a)
        return node

    def visit_Lambda(self, node):
        return node

    def _comprehension(self, node):
        return node  # evaluated once per item: not hoisted out

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _comprehension
    visit_BoolOp = visit_IfExp = _comprehension


class _Sets(NodeTransformer):
    """``{a, b}`` is ``set([a, b])`` and ``{f(v) for v in xs}`` is ``set([f(v) for v in xs])``:
    a set is made by the builtin, which has no gradient rule, so a set of values that carry
    gradient is refused by activity analysis, and a set of indices or labels just works."""

    def __init__(self, builtin):
        self.builtin = builtin  # Sugar._builtin

    def visit_Set(self, node):
        self.generic_visit(node)
        return self._set(gast.List(node.elts, gast.Load()), node)

    def visit_SetComp(self, node):
        self.generic_visit(node)
        return self._set(gast.ListComp(node.elt, node.generators), node)

    def _set(self, items, node):
        call = gast.Call(self.builtin("set"), [gast.copy_location(items, node)], [])
        return _located(gast.copy_location(call, node), node)


class _Spreads(NodeTransformer):
    """``{**d, "c": v}`` is ``({} | d) | {"c": v}`` (a new dict, later entries over earlier
    ones), ``[*L, v]`` is ``list(L) + [v]`` and ``(*t, v)`` is ``tuple(t) + (v,)``: forms with
    rules, evaluated in Python's order."""

    def visit_Dict(self, node):
        self.generic_visit(node)
        if all(k is not None for k in node.keys):
            return node
        parts, keys, values = [], [], []
        for k, v in zip(node.keys, node.values):
            if k is not None:
                keys.append(k)
                values.append(v)
                continue
            if keys or not parts:
                parts.append(gast.Dict(keys, values))
                keys, values = [], []
            parts.append(v)
        if keys:
            parts.append(gast.Dict(keys, values))
        return self._joined(parts, gast.BitOr(), node)

    def visit_List(self, node):
        return self._display(node, gast.List, "list")

    def visit_Tuple(self, node):
        return self._display(node, gast.Tuple, "tuple")

    def _display(self, node, kind, builtin):
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load) or not any(
                isinstance(e, gast.Starred) for e in node.elts):
            return node
        parts, items = [], []
        for e in node.elts:
            if not isinstance(e, gast.Starred):
                items.append(e)
                continue
            if items:
                parts.append(kind(items, gast.Load()))
                items = []
            parts.append(gast.Call(_load(builtin), [e.value], []))
        if items:
            parts.append(kind(items, gast.Load()))
        return self._joined(parts, gast.Add(), node)

    @staticmethod
    def _joined(parts, op, node):
        out = parts[0]
        for part in parts[1:]:
            out = gast.BinOp(out, op, part)
        return _located(gast.copy_location(out, node), node)


class _Getters(NodeTransformer):
    """``getattr(o, "a")`` is ``o.a`` and ``setattr(o, "a", v)`` is ``o.a = v`` (the name a
    constant); ``operator.itemgetter(k)(t)`` is ``t[k]`` (``itemgetter(j, k)(t)``, ``t`` a
    name: ``(t[j], t[k])``) and ``operator.attrgetter("a.b")(o)`` is ``o.a.b``."""

    def __init__(self, namespace, locals_):
        self.namespace, self.locals = namespace, locals_

    def _is(self, func, fn):
        return self.namespace.resolve(func, self.locals) is fn

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, gast.Call) and self._is(call.func, setattr) and len(
                call.args) == 3 and not call.keywords and _field_name(call.args[1]):
            self.generic_visit(node)
            obj, name, value = call.args
            target = gast.copy_location(gast.Attribute(obj, name.value, gast.Store()), call)
            return _located(gast.copy_location(gast.Assign([target], value, None), node), node)
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        args, inner = node.args, node.func
        if any(isinstance(a, gast.Starred) for a in args) or node.keywords:
            return node
        if len(args) == 2 and _field_name(args[1]) and self._is(inner, getattr):
            return _located(gast.copy_location(
                gast.Attribute(args[0], args[1].value, gast.Load()), node), node)
        if not (isinstance(inner, gast.Call) and len(args) == 1 and inner.args
                and not inner.keywords):
            return node
        reads = self._getter_reads(inner, args[0])
        if reads is None:
            return node
        out = reads[0] if len(reads) == 1 else gast.Tuple(reads, gast.Load())
        return _located(gast.copy_location(out, node), node)

    def _getter_reads(self, getter, obj):
        """What ``getter(obj)`` reads, ``getter`` an ``itemgetter`` / ``attrgetter`` call made
        there, one read per key; None for any other call."""
        keys = getter.args
        if any(isinstance(k, gast.Starred) for k in keys) or (
                len(keys) > 1 and not isinstance(obj, gast.Name)):
            return None  # (the object evaluated once)
        if self._is(getter.func, operator.itemgetter):
            return [gast.Subscript(clone(obj), k, gast.Load()) for k in keys]
        if not self._is(getter.func, operator.attrgetter) or not all(
                isinstance(k, gast.Constant) and isinstance(k.value, str) and all(
                    p.isidentifier() for p in k.value.split(".")) for k in keys):
            return None
        reads = []
        for k in keys:
            read = clone(obj)
            for part in k.value.split("."):
                read = gast.Attribute(read, part, gast.Load())
            reads.append(read)
        return reads


def _field_name(node):
    return isinstance(node, gast.Constant) and isinstance(node.value, str) and (
        node.value.isidentifier())


class _DictCalls(NodeTransformer):
    """``dict(a=x, b=y)`` is ``{"a": x, "b": y}``, ``dict([(k, v), ...])`` is ``{k: v, ...}``,
    ``dict(zip(ks, vs))`` is ``{k: v for k, v in zip(ks, vs)}`` and ``dict((k, v) for ...)`` a
    dict comprehension: forms with rules, in the order Python evaluates them. Any other call of
    ``dict`` (a mapping or pairs known only when it runs, ``**``) is left alone (no rule)."""

    def __init__(self, namer):
        self.namer = namer

    def visit_Call(self, node):
        self.generic_visit(node)
        if not (isinstance(node.func, gast.Name) and node.func.id == "dict"):
            return node
        if any(k.arg is None for k in node.keywords) or len(node.args) > 1:
            return node
        keys, values = [], []
        if node.args:
            pairs = self._pairs(node.args[0])
            if pairs is None:
                if node.keywords:
                    return node
                return self._comprehension(node.args[0], node) or node
            keys, values = pairs
        keys += [gast.copy_location(gast.Constant(k.arg, None), k.value) for k in node.keywords]
        values += [k.value for k in node.keywords]
        return _located(gast.copy_location(gast.Dict(keys, values), node), node)

    @staticmethod
    def _pairs(arg):
        """The keys and values of a list or tuple literal of pairs, or None."""
        if not isinstance(arg, (gast.List, gast.Tuple)):
            return None
        if not all(isinstance(e, gast.Tuple) and len(e.elts) == 2 for e in arg.elts):
            return None
        return [e.elts[0] for e in arg.elts], [e.elts[1] for e in arg.elts]

    def _comprehension(self, arg, node):
        """``{k: v for k, v in zip(...)}`` for ``dict(zip(a, b))``; a dict comprehension for a
        generator of pairs; None otherwise."""
        if isinstance(arg, gast.GeneratorExp) and isinstance(arg.elt, gast.Tuple) and len(
                arg.elt.elts) == 2:
            made = gast.DictComp(arg.elt.elts[0], arg.elt.elts[1], arg.generators)
            return _located(gast.copy_location(made, node), node)
        if not (_named_call(arg, "zip") and len(arg.args) == 2 and not arg.keywords
                and not any(isinstance(a, gast.Starred) for a in arg.args)):
            return None
        k, v = self.namer.fresh(naming.DICT_KEY), self.namer.fresh(naming.DICT_VALUE)
        target = gast.Tuple([_store(k), _store(v)], gast.Store())
        loop = gast.comprehension(target, arg, [], 0)
        made = gast.DictComp(_load(k), _load(v), [loop])
        return _located(gast.copy_location(made, node), node)


class _Walrus(NodeTransformer):
    """``(n := v)`` where it is evaluated unconditionally: ``n = v`` before the statement and
    ``n`` in its place. Not when the statement reads ``n`` before the ``:=`` in source order."""

    def __init__(self, owner, pre, stmt):
        self.owner = owner
        self.pre = pre
        self.stmt = stmt

    def hoist(self, expr):
        if not any(isinstance(n, gast.NamedExpr) for n in walk(expr)):
            return expr
        self.expr = expr
        return self.visit(expr)

    def visit_NamedExpr(self, node):
        node.value = self.visit(node.value)
        name = node.target.id
        if self._read_before(name, node):
            return node
        self.pre.append(_located(gast.Assign([_store(name)], node.value, None), node))
        return gast.copy_location(_load(name), node)

    def _read_before(self, name, node):
        here = (node.lineno, node.col_offset)
        return any(
            isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
            and (n.lineno, n.col_offset) < here
            for n in walk(self.expr)
        )

    def visit_BoolOp(self, node):
        node.values[0] = self.visit(node.values[0])
        return node

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        return node

    def visit_Lambda(self, node):
        return node

    def _comprehension(self, node):
        node.generators[0].iter = self.visit(node.generators[0].iter)
        return node

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _comprehension
