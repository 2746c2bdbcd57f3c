"""Desugar control flow into the structured subset the transforms handle.

Requires: a function accepted by ``CheckSupported``. Guarantees:
  * ``for`` loops iterate over ``range(...)`` only: ``for x in xs`` becomes
    ``for i in range(len(xs)): x = xs[i]`` (likewise ``enumerate`` and ``zip``), so the gradient of
    an iterated array flows through ordinary indexing;
  * ``break``, ``continue`` and ``return`` only appear as the last statement of a block: the
    statements that follow a jump inside an ``if`` move into the branches that fall through;
  * ``continue`` disappears (falling off the end of the body is the same thing);
  * the function has exactly one ``return``, the last statement; early returns assign a result
    variable and leave loops with a flag.

    for x in xs:                     for i in range(len(xs)):
        if x > 3:                        x = xs[i]
            break             ->         if x > 3:
        s = s + x                            break
                                         else:
                                             s = s + x
"""

from __future__ import annotations

import builtins

import gast

from .. import runtime
from ..astutil import NodeTransformer, Renamed, clone, located, ordered_walk, set_store, stored
from ..emit import naming
from . import lazy_iterators, moved_effects, skipped_sides


def _name(id_, ctx=None):
    return gast.Name(id_, ctx or gast.Load(), None, None)


def _assign(id_, value):
    return gast.Assign([_name(id_, gast.Store())], value, None)


def _call(fn, *args):
    return gast.Call(_name(fn), list(args), [])


def run(fn_node, ctx):
    """The pass: loops, branches and early exits in the few forms the transforms know."""
    return DesugarControl(ctx.namer, ctx.local_names, ctx).run(fn_node)


class DesugarControl:
    def __init__(self, namer, locals_, ctx=None):
        self.namer = namer
        self.locals = locals_
        self.ctx = ctx

    def run(self, fn_node):
        lazy_iterators.named_where_used(fn_node)
        body = self._comprehensions(fn_node.body)
        body = self._loops(body)
        self.retval = None
        self.returned = None
        body = self._returns_in_loops(body, depth=0)
        body = self._nest(body)
        body = self._single_exit(body)
        fn_node.body = body
        return fn_node

    # --- comprehensions ------------------------------------------------------------------------
    def _comprehensions(self, stmts):
        """``[f(v) for v in xs if c(v)]`` becomes a loop appending to a fresh list, before the
        statement that uses it; ``sum(f(v) for v in xs)`` a loop adding into a fresh total."""
        out = []
        namespace = self.ctx.namespace if self.ctx is not None else None
        stmts = [t for u in stmts for t in skipped_sides.lowered(
            u, self.namer, self.locals, namespace) or [u]]
        for s in stmts:
            if isinstance(s, gast.For):
                # (its items computed as the loop asks for them: normalize/lazy_iterators.py)
                s = lazy_iterators.fused_loop(s, self._fresh_local, self._names_builtin,
                                              set(self.locals), self.ctx and self.ctx.location)
                out.extend(getattr(s, "before", ()))  # (a count, ``enumerate``'s)
                s.before = []
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    setattr(s, field, self._comprehensions(inner))
            hoisted = []
            if isinstance(s, (gast.For, gast.While, gast.If)):
                # `for v in map(f, xs)` is a loop over a comprehension: the iterable is replaced
                field = "iter" if isinstance(s, gast.For) else "test"
                self._refuse_moved_effects(gast.Expr(getattr(s, field)))
                setattr(s, field, _HoistComprehensions(self, hoisted).visit(getattr(s, field)))
            else:
                self._refuse_moved_effects(s)
                _HoistComprehensions(self, hoisted).visit(s)
                if _built_into(s, hoisted):
                    # `rows = [... for ...]`: built into `rows` itself, not into a fresh list
                    # `rows` is then bound to (another name for it: writes into `rows` would
                    # be writes into a list that name shares)
                    hoisted = Renamed({s.value.id: s.targets[0].id}).visit(
                        gast.Module(hoisted, [])).body
                    out.extend(hoisted)
                    continue
            out.extend(hoisted)
            out.append(s)
        return out

    def _fresh_local(self, name):
        fresh = self.namer.fresh(name)
        self.locals.add(fresh)
        return fresh

    def _refuse_moved_effects(self, s):
        if self.ctx is not None:
            moved_effects.refuse(s, self.ctx.namespace, self.locals, self.ctx.location)

    def _expand(self, comp, as_sum):
        """Statements computing ``comp`` into a fresh name, and that name."""
        stem = naming.TOTAL if as_sum else naming.ITEMS
        result = self.namer.fresh(naming.MAPPING if isinstance(comp, gast.DictComp) else stem)
        self.locals.add(result)
        renames = {}
        for gen in comp.generators:
            for n in ordered_walk(gen.target):
                if isinstance(n, gast.Name):
                    renames[n.id] = self.namer.fresh(n.id)
                    self.locals.add(renames[n.id])
        rename = Renamed(renames)
        if isinstance(comp, gast.DictComp):  # {k: v for ...}: d = {}; d[k] = v in the loop
            key, value = rename.visit(clone(comp.key)), rename.visit(clone(comp.value))
            item = gast.Subscript(_name(result), key, gast.Store())
            inner = [gast.Assign([item], value, None)]
            init = _assign(result, gast.Dict([], []))
        elif as_sum:
            elt = rename.visit(clone(comp.elt))
            total = gast.BinOp(_name(result), gast.Add(), elt)
            inner = [_assign(result, total)]
            init = _assign(result, gast.Constant(0, None))
        else:
            elt = rename.visit(clone(comp.elt))
            append = gast.Attribute(_name(result), "append", gast.Load())
            inner = [gast.Expr(gast.Call(append, [elt], []))]
            init = _assign(result, gast.List([], gast.Load()))
        for i, gen in reversed(list(enumerate(comp.generators))):
            for cond in reversed(gen.ifs):
                inner = [gast.If(rename.visit(clone(cond)), inner, [])]
            it = gen.iter if i == 0 else rename.visit(clone(gen.iter))
            target = rename.visit(clone(gen.target))
            set_store(target)
            inner = [gast.For(target, it, inner, [], None)]
        stmts = located([init] + inner, comp)
        return stmts, result

    # --- for loops over sequences ------------------------------------------------------------
    def _loops(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                s.body = self._loops(s.body)
            if isinstance(s, gast.If):
                s.body = self._loops(s.body)
                s.orelse = self._loops(s.orelse)
            if isinstance(s, gast.For) and not self._is_range(s.iter):
                out.extend(self._index_loop(s))
            elif isinstance(s, gast.For) and s.target.id in stored(s.body):
                # `for i in ...: i = ...`: iterate a fresh name, so the loop index stays intact
                index = self.namer.fresh(naming.LOOP_INDEX.format(s.target.id))
                self.locals.add(index)
                rebind = gast.Assign([s.target], _name(index), None)
                s.body = located([rebind], s) + s.body
                s.target = _name(index, gast.Store())
                out.append(s)
            else:
                out.append(s)
        return out

    def _is_range(self, node):
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and node.func.id == "range"
            and "range" not in self.locals
            and not node.keywords
        )

    def _builtin_call(self, node, name):
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Name)
            and self._names_builtin(node.func.id, name)
            and not node.keywords
        )

    def _names_builtin(self, found, word):
        """Whether the name ``found`` calls the builtin ``word``: ``word`` itself unless the
        function or its module binds it to something else (a module's own `zip` is no builtin),
        or the name srcgrad gave the builtin there (``_call_builtin``)."""
        if found in self.locals:
            return False
        if self.ctx is None:
            return found == word
        return self.ctx.namespace.lookup(found) is getattr(builtins, word)

    def _call_builtin(self, word, *args):
        """A call of the builtin ``word`` in generated code, by the name ``ctx.global_name``
        gives it (another where the user's module binds ``word`` to its own function)."""
        if self.ctx is not None:
            word = self.ctx.global_name(getattr(builtins, word), word)
        return _call(word, *args)

    def _sequence(self, expr, pre, body=()):
        """A name holding ``expr``, evaluated once before the loop (a name the body reassigns
        is copied first: the loop goes on over the original sequence)."""
        if isinstance(expr, gast.Name) and expr.id not in stored(list(body)):
            return expr.id
        seq = self.namer.fresh(naming.SEQ)
        self.locals.add(seq)
        if self._made_indexable(expr):
            # a comprehension's set, dict or iterator (ContainerMethods): bound first, so that
            # alias checks see that seq holds it, as for a loop
            pre.append(gast.copy_location(_assign(seq, expr.args[0]), expr))
            expr.args[0] = _name(seq)
        pre.append(gast.copy_location(_assign(seq, expr), expr))
        return seq

    def _made_indexable(self, expr):
        """Whether ``expr`` is ``iteration_sequence(it)``."""
        helper = self.ctx.named(runtime.iteration_sequence) if self.ctx is not None else None
        return helper is not None and isinstance(expr, gast.Call) and isinstance(
            expr.func, gast.Name) and expr.func.id == helper and len(expr.args) == 1 and (
            not expr.keywords)

    def _index_loop(self, loop):
        pre = []
        target, it = loop.target, loop.iter
        index = self.namer.fresh(naming.INDEX)
        self.locals.add(index)
        reads = []
        if _is_enumerate(it, self._names_builtin) and isinstance(target, gast.Tuple):
            if len(target.elts) != 2:
                return [loop]
            counter, item = target.elts
            start = it.args[1] if len(it.args) > 1 else (
                it.keywords[0].value if it.keywords else None
            )
            count = _name(index) if start is None else gast.BinOp(_name(index), gast.Add(), start)
            reads.append(gast.Assign([counter], count, None))
            if isinstance(item, gast.Tuple):  # for i, (a, b) in enumerate(zip(xs, ys))
                seqs = [self._sequence(a, pre, loop.body) for a in it.args[0].args]
                for t, seq in zip(item.elts, seqs):
                    reads.append(gast.Assign([t], self._item(seq, index), None))
                bound = self._shortest(seqs)
            else:
                seq = self._sequence(it.args[0], pre, loop.body)
                reads.append(gast.Assign([item], self._item(seq, index), None))
                bound, seqs = self._call_builtin("len", _name(seq)), [seq]
        elif self._builtin_call(it, "zip") and isinstance(target, gast.Tuple):
            if len(it.args) != len(target.elts):
                return [loop]
            seqs = [self._sequence(a, pre, loop.body) for a in it.args]
            for t, seq in zip(target.elts, seqs):
                reads.append(gast.Assign([t], self._item(seq, index), None))
            bound = self._shortest(seqs)
        else:
            if self._builtin_call(it, "reversed") and len(it.args) == 1:
                # reversed(xs) is xs[::-1], which ranges, lists and arrays all index and measure
                backwards = gast.Slice(None, None, gast.Constant(-1, None))
                it = gast.copy_location(gast.Subscript(it.args[0], backwards, gast.Load()), it)
            seq = self._sequence(it, pre, loop.body)
            # (``reversed(xs)``, written ``xs[::-1]`` by ContainerMethods: a copy; Python's over xs)
            live = getattr(loop, "reversed_of", None)
            seqs = ("reversed", live, seq) if live else [seq]
            reads.append(gast.Assign([target], self._item(seq, index), None))
            bound = self._call_builtin("len", _name(seq))
        located(reads, loop)
        header = gast.copy_location(self._call_builtin("range", bound), it)
        new = gast.For(_name(index, gast.Store()), header, reads + loop.body, loop.orelse, None)
        new.runs_over = seqs  # (loop_lengths: Python's own test of each trip's end)
        gast.copy_location(new, loop)
        return pre + [new]

    def _shortest(self, seqs):
        """``len`` of the shortest of ``seqs`` (names), where ``zip`` stops."""
        lens = [self._call_builtin("len", _name(s)) for s in seqs]
        bound = lens[0]
        for other in lens[1:]:
            bound = self._call_builtin("min", bound, other)
        return bound

    @staticmethod
    def _item(seq, index):
        return gast.Subscript(_name(seq), _name(index), gast.Load())

    # --- returns inside loops -----------------------------------------------------------------
    def _result_names(self):
        if self.retval is None:
            self.retval = self.namer.fresh(naming.RESULT)
            self.returned = self.namer.fresh(naming.RETURNED)
            self.locals.update((self.retval, self.returned))

    def _returns_in_loops(self, stmts, depth):
        out = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)) and _contains(s.body, gast.Return):
                self._result_names()
                s.body = self._returns_in_loops(s.body, depth + 1)
                if depth == 0:
                    init = _assign(self.returned, gast.Constant(False, None))
                    out.append(gast.copy_location(init, s))
                out.append(s)
                jump = gast.Return(_name(self.retval)) if depth == 0 else gast.Break()
                check = gast.If(_name(self.returned), [gast.copy_location(jump, s)], [])
                out.append(gast.copy_location(check, s))
                continue
            if isinstance(s, gast.If):
                s.body = self._returns_in_loops(s.body, depth)
                s.orelse = self._returns_in_loops(s.orelse, depth)
            if isinstance(s, gast.Return) and depth > 0:
                value = s.value if s.value is not None else gast.Constant(None, None)
                out.extend(
                    located(
                        [
                            _assign(self.retval, value),
                            _assign(self.returned, gast.Constant(True, None)),
                            gast.Break(),
                        ],
                        s,
                    )
                )
                continue
            out.append(s)
        return out

    # --- continuation nesting -----------------------------------------------------------------
    def _nest(self, stmts):
        out = []
        for i, s in enumerate(stmts):
            if isinstance(s, (gast.For, gast.While)):
                s.body = self._drop_continue(self._nest(s.body))
            if isinstance(s, gast.If):
                rest = stmts[i + 1 :]
                if rest and (_may_jump(s.body) or _may_jump(s.orelse)):
                    s.body = self._nest(self._append(s.body, rest))
                    s.orelse = self._nest(self._append(s.orelse, rest))
                    out.append(s)
                    return out
                s.body = self._nest(s.body)
                s.orelse = self._nest(s.orelse)
            out.append(s)
            if isinstance(s, (gast.Return, gast.Break, gast.Continue)):
                return out  # statements after a jump never run
        return out

    @staticmethod
    def _append(block, rest):
        if block and isinstance(block[-1], (gast.Return, gast.Break, gast.Continue)):
            return block
        return list(block) + clone(rest)

    def _drop_continue(self, stmts):
        if stmts and isinstance(stmts[-1], gast.Continue):
            stmts = stmts[:-1]
        for s in stmts:
            if isinstance(s, gast.If):
                s.body = self._drop_continue(s.body) or [gast.Pass()]
                s.orelse = self._drop_continue(s.orelse)
        return stmts

    # --- one exit -------------------------------------------------------------------------------
    def _single_exit(self, body):
        if len([n for n in _walk_stmts(body) if isinstance(n, gast.Return)]) == 1 and isinstance(
            body[-1], gast.Return
        ):
            return body
        self._result_names()
        returns = [n for n in _walk_stmts(body) if isinstance(n, gast.Return)]
        last = body[-1] if isinstance(body[-1], gast.Return) else returns[-1]

        def replace(stmts):
            out = []
            for s in stmts:
                if isinstance(s, gast.Return):
                    value = s.value if s.value is not None else gast.Constant(None, None)
                    if not (isinstance(value, gast.Name) and value.id == self.retval):
                        out.append(gast.copy_location(_assign(self.retval, value), s))
                    continue
                if isinstance(s, gast.If):
                    s.body = replace(s.body) or [gast.Pass()]
                    s.orelse = replace(s.orelse)
                elif isinstance(s, (gast.For, gast.While)):
                    s.body = replace(s.body)
                out.append(s)
            return out

        body = replace(body)
        ret = gast.Return(_name(self.retval))
        return body + [gast.copy_location(ret, last)]


class _HoistComprehensions(NodeTransformer):
    def __init__(self, owner, hoisted):
        self.owner = owner
        self.hoisted = hoisted

    def visit_Lambda(self, node):
        return node

    def visit_Call(self, node):
        if (
            isinstance(node.func, gast.Name)
            and node.func.id == "sum"
            and "sum" not in self.owner.locals
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], gast.GeneratorExp)
        ):
            comp = node.args[0]
            comp.generators[0].iter = self.visit(comp.generators[0].iter)
            stmts, name = self.owner._expand(comp, as_sum=True)
            self.hoisted.extend(self.owner._comprehensions(stmts))
            return gast.copy_location(_name(name), node)
        self.generic_visit(node)
        return node

    def _list(self, node):
        # Only the first iterable is evaluated out here; comprehensions nested in the element or
        # the conditions run inside the loop, once per item, with the loop's own variables.
        node.generators[0].iter = self.visit(node.generators[0].iter)
        stmts, name = self.owner._expand(node, as_sum=False)
        self.hoisted.extend(self.owner._comprehensions(stmts))
        return gast.copy_location(_name(name), node)

    visit_ListComp = _list
    visit_GeneratorExp = _list
    visit_DictComp = _list


def _built_into(s, hoisted):
    """Whether ``s`` is ``t = items``, ``items`` the list (or dict, or total) the hoisted
    statements build, and ``t`` a name they never read or bind."""
    if not (hoisted and isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
        return False
    built, target = s.value.id, s.targets[0].id
    names = {n.id for n in ordered_walk(gast.Module(hoisted, [])) if isinstance(n, gast.Name)}
    return built in names and target not in names and isinstance(
        hoisted[0], gast.Assign) and isinstance(hoisted[0].targets[0], gast.Name) and (
        hoisted[0].targets[0].id == built)


def _is_enumerate(node, names_builtin):
    if not (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and names_builtin(node.func.id, "enumerate")
    ):
        return False
    keywords_ok = all(k.arg == "start" for k in node.keywords)
    return keywords_ok and 1 <= len(node.args) + len(node.keywords) <= 2 and len(node.args) >= 1


def _walk_stmts(stmts):
    for s in stmts:
        yield s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                yield from _walk_stmts(inner)


def _contains(stmts, kind):
    return any(isinstance(s, kind) for s in _walk_stmts(stmts))


def _may_jump(stmts):
    """Whether a block may leave by break, continue or return (not counting nested loops)."""
    for s in stmts:
        if isinstance(s, (gast.Return, gast.Break, gast.Continue)):
            return True
        if isinstance(s, gast.If) and (_may_jump(s.body) or _may_jump(s.orelse)):
            return True
        if isinstance(s, (gast.For, gast.While)) and _contains(s.body, gast.Return):
            return True
    return False
