"""Reverse mode: a primal sweep followed by an adjoint sweep in reverse statement order.

Requires: an A-normal-form body ending in ``return atom`` (control flow desugared by
``normalize.control``), the active variables, and the :class:`Op` of every assignment.
Guarantees: a function that runs the primal once, then accumulates adjoints statement by
statement in reverse; only active variables get adjoints; the first contribution to an adjoint
assigns it, later ones add; a contribution that is just a name is aliased, not copied, where that
is safe (straight-line code); each adjoint block starts with a ``# grad of:`` comment quoting the
source line; broadcasting contributions are summed back with ``unbroadcast``.

Control flow keeps its shape. An ``if`` is replayed from its (saved) condition; a ``for`` over a
``range`` whose bounds never change runs backwards over ``reversed(range(...))``; any other loop
counts its trips and the adjoint loop runs that many times. A variable that is overwritten inside
control flow has its old value pushed on a plain list (``x_saved``) before the overwrite and
popped back after the adjoint of that statement, but only when the adjoint sweep actually reads
that variable (to-be-recorded analysis); everything else is neither copied nor saved. An
iteration that saves several values (temporaries the sweep reads, old values it overwrites once
per iteration) pushes them as one tuple (``loop_saved``) at its end, popped at the start of its
adjoint.

    def f(x, y):                 def df(x, y):
        q = x + y                    q = x + y
        return q * y      ->         q_times_y = q * y
                                     # grad of: return q * y
                                     dq_times_y = unit_seed(q_times_y)
                                     dq = unbroadcast(dq_times_y * y, q)
                                     # grad of: q = x + y
                                     dx = unbroadcast(dq, x)
                                     return dx
"""

from __future__ import annotations

import builtins
import itertools
import operator

import gast

from .. import runtime
from ..analysis.containers import container_suspects
from ..analysis.definitions import Definitions
from ..analysis.integers import Integers, integer_index
from ..analysis.loops import (
    breaks,
    indexed_reads,
    iteration_temporaries,
    whole_reads,
)
from ..analysis.shapes import BroadcastShapes
from ..analysis.updates import in_place_updates, is_setitem, list_op
from ..astutil import clone, param_names, store_counts, stored
from ..emit import naming
from ..emit.unparse import comment
from ..normalize.ssa import compound_assigned
from ..rules.registry import Role
from .templates import bind_template, instantiate

_MARKER = "__srcgrad_marker__"

# Helpers whose result is always a new array no other name holds.
FRESH = (runtime.zeros_like, runtime.getitem_grad, runtime.unreduce, runtime.mean_grad)
# Of those, the ones that return a read-only broadcast view: `zero_item` and `add_at` copy it
# before their first update, and `+=` never updates it.
READ_ONLY = (runtime.unreduce, runtime.mean_grad)


def name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)


def _marker(kind, var, ident):
    args = [gast.Constant(kind, None), gast.Constant(var, None), gast.Constant(ident, None)]
    return gast.Expr(gast.Call(name(_MARKER), args, []))


def _marker_args(stmt):
    if (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Call)
        and isinstance(stmt.value.func, gast.Name)
        and stmt.value.func.id == _MARKER
    ):
        return tuple(a.value for a in stmt.value.args)
    return None


def _plus(a, b):
    return b if a is None else gast.BinOp(a, gast.Add(), b)


def _uses_result(template):
    """Whether a rule template reads the primal result ``y``."""
    return bool(template.reads(Role.RESULT))


def run(fn_node, ctx):
    """The pass: the reverse-mode derivative (modes "grad", "value_and_grad", "vjp").

    Reads ``ctx.ops`` and ``ctx.active``; sets ``ctx.out_name``, ``ctx.defaults`` (dropped when
    the seed parameter is appended), ``ctx.assigned_in_control`` and, for the passes after it,
    ``ctx.shape_sets`` and ``ctx.adjoint_names``.
    """
    ctx.out_name = ctx.namer.derived(fn_node.name, ctx.mode)
    ctx.defaults = list(fn_node.args.defaults)
    ctx.assigned_in_control = compound_assigned(fn_node.body, ctx.in_place_calls)
    reverse = ReverseAD(
        ctx, ctx.ops, ctx.active, ctx.source_lines, ctx.mode, ctx.wrt, ctx.out_name,
        ctx.as_tuple, ctx.assigned_in_control, optimize=ctx.optimize,
    )
    fn_node = reverse.run(fn_node)
    ctx.shape_sets = reverse.shape_sets
    ctx.adjoint_names = reverse.adj_names
    return fn_node


class ReverseAD:
    """Builds the gradient function of one normalized function.

    ``mode`` is "grad" (return the gradients), "value_and_grad" (return the value too) or "vjp"
    (the cotangent of the output is an extra last parameter).
    """

    def __init__(
        self, ctx, ops, active, source_lines, mode, wrt, out_name, as_tuple, fixed, optimize=True
    ):
        self.ctx = ctx
        self.ops = ops
        self.active = active
        self.source_lines = source_lines
        self.mode = mode
        self.wrt = wrt
        self.out_name = out_name
        self.as_tuple = as_tuple or len(wrt) > 1
        self.fixed = fixed  # variables assigned inside control flow: saved, restored, killed
        self.optimize = optimize  # False: no shape-based unbroadcast elision, no in-place adds
        self.adj = {}
        self.adj_names = {}
        self.stmts = []
        self.last_line = None
        self.in_compound = False
        self.reinit = set()
        self.ids = itertools.count()
        self.save_ids = {}  # id(statement) -> marker id of the save before it
        self.loops = {}  # id(loop) -> (reversible, trip counter name)
        self.none_init = []
        self.depth = 0
        self.owned = set()  # adjoints holding an array made here: safe to update in place
        self.read_only = set()  # of those, adjoints that may hold a read-only view: no `+=`
        # adjoints made by zeros_like and since updated only element by element, where
        # `dx[i] += g` is safe even for a list (no element is shared with another adjoint)
        self.zeroed = set()
        self.containers = set()  # variables that may hold a tuple, list or dict
        self.item_index = {}  # marker id -> index expression, for saves of overwritten elements
        # Loop temporaries assigned once per iteration are saved together, one tuple per
        # iteration, instead of one push and pop each.
        self.per_iteration = set()
        self.iteration_vars = {}  # marker id -> variables saved per iteration
        self.save_iteration = {}  # save marker id -> the iteration whose tuple holds the value
        self.before = {}  # save marker id -> variable holding the value until the tuple is made
        self.iteration_ids = {}  # id(loop) -> marker id

    def run(self, fn_node):
        primal, ret = fn_node.body[:-1], fn_node.body[-1]
        out = ret.value
        args = fn_node.args
        self.params = param_names(fn_node)
        seed_param = self.ctx.namer.fresh(naming.SEED) if self.mode == "vjp" else None

        self.containers = container_suspects(fn_node.body, self.ops)
        self.store_counts = store_counts(fn_node)
        self.integers = Integers(self._resolves).run(fn_node, self.params)
        updates = in_place_updates(self.ops, fn_node.body)
        self.definitions = Definitions(fn_node.body, self.params, updates)
        self.shapes, self.shape_sets, self.shape_refs = {}, {}, {}
        if self.optimize:
            analysis = BroadcastShapes(self.ops)
            self.shapes = analysis.run(fn_node.body)
            self.shape_sets = analysis.final
            self.shape_refs = analysis.references
        primal = self.primal_block(primal)
        self.stmts = []
        self._seed(out, seed_param)
        sweep = self._flush(ret.lineno)
        sweep += self.adjoint_block(fn_node.body[:-1])

        grads = [self._final(p) for p in self.wrt]
        result = gast.Tuple(grads, gast.Load()) if self.as_tuple else grads[0]
        if self.mode == "value_and_grad":
            if isinstance(out, gast.Name) and out.id in self.fixed:
                # the sweep restores overwritten variables: keep the value before it starts
                value = self.ctx.namer.fresh(naming.VALUE.format(out.id))
                primal.append(assign(value, out))
                out = name(value)
            result = gast.Tuple([out, result], gast.Load())
        body = self._finalize(primal, sweep)
        fn_node.body = body + [gast.Return(result)]
        fn_node.name = self.out_name
        if seed_param is not None:
            args.args.append(gast.Name(seed_param, gast.Param(), None, None))
            args.defaults = []
        return fn_node

    # --- helpers --------------------------------------------------------------------------------
    def _final(self, param):
        """The gradient returned for ``param``, with the structure of the argument."""
        g = self.adj.get(param)
        if g is None:
            return self._zeros(param)
        if param in self.containers:
            return self._call(runtime.as_like, g, name(param))
        return g

    def _helper(self, fn):
        return name(self.ctx.global_name(fn, fn.__name__))

    def _call(self, fn, *args):
        return gast.Call(self._helper(fn), list(args), [])

    def _zeros(self, var):
        return self._call(runtime.zeros_like, name(var))

    def _flush(self, lineno):
        """The statements gathered for one source line, under its ``# grad of:`` comment."""
        if not self.stmts:
            return []
        stmts, self.stmts = self.stmts, []
        if lineno == self.last_line:
            return stmts
        self.last_line = lineno
        return [comment("grad of: " + self._line(lineno))] + stmts

    def _line(self, lineno):
        return self.source_lines[lineno - 1].strip() if lineno else "?"

    def _adjoint_name(self, var):
        if var not in self.adj_names:
            self.adj_names[var] = self.ctx.namer.adjoint(var)
        return self.adj_names[var]

    def accumulate(self, var, contrib, may_alias=False):
        """Add ``contrib`` to the adjoint of ``var``: the single place gradients accumulate."""
        current = self.adj.get(var)
        target = self._adjoint_name(var)
        self.zeroed.discard(var)
        if isinstance(contrib, gast.Name) and contrib.id != target:
            self._shared(contrib.id)
        if current is None:
            if isinstance(contrib, gast.Name) and (
                contrib.id == target or (may_alias and not self.in_compound)
            ):
                self.adj[var] = contrib
                self.owned.discard(var)
                return
            value = contrib
            fresh = self._fresh(contrib)
        elif var in self.containers:
            value = self._call(runtime.add, current, contrib)
            fresh = False
        elif (
            self.optimize
            and var in self.owned
            and var not in self.read_only
            and isinstance(current, gast.Name)
            and current.id == target
        ):
            # a buffer no other name refers to: add into it
            self.stmts.append(
                gast.AugAssign(gast.Name(target, gast.Store(), None, None), gast.Add(), contrib)
            )
            return
        else:
            value = gast.BinOp(current, gast.Add(), contrib)
            fresh = True
        self.stmts.append(assign(target, value))
        self.adj[var] = name(target)
        if fresh:
            self.owned.add(var)
        else:
            self.owned.discard(var)
        if self._fresh(value, READ_ONLY):
            self.read_only.add(var)
        elif fresh and not self.in_compound:
            # (inside a branch or loop, another path may still hold the view: stays may-be)
            self.read_only.discard(var)

    def _shared(self, adjoint_name):
        """``adjoint_name`` is now also held by another name: its buffer is no longer private."""
        for v, n in self.adj_names.items():
            if n == adjoint_name:
                self.owned.discard(v)
                self.zeroed.discard(v)

    def _fresh(self, expr, helpers=FRESH):
        """Whether ``expr`` is a new array, never one the caller or another adjoint holds
        (made by one of ``helpers``, or by arithmetic when those are ``FRESH``)."""
        if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
            return helpers is FRESH
        if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name):
            if expr.func.id == self.ctx.global_name(runtime.unbroadcast, "unbroadcast"):
                # returns its argument, or a new sum of it
                return bool(expr.args) and self._fresh(expr.args[0], helpers)
            return any(
                expr.func.id == self.ctx.global_name(fn, fn.__name__) for fn in helpers
            )
        return False

    def _set_zero(self, var, sure=None):
        """``dvar = zeros_like(var)``: a fresh zero adjoint.

        Where ``var`` may not exist (it is assigned only on some paths, and this is not one of
        them), the zero is ``0.0``: such an adjoint is only ever read on a path that defines it.
        """
        zero = self._zero_of(var, sure)
        self.stmts.append(assign(self._adjoint_name(var), zero))
        self.adj[var] = name(self._adjoint_name(var))
        if not isinstance(zero, gast.Constant):
            self.owned.add(var)
            self.zeroed.add(var)

    def _zero_of(self, var, sure):
        if sure is None or var in sure:
            return self._zeros(var)
        return gast.Constant(0.0, None)

    # --- the primal sweep ---------------------------------------------------------------------
    def _save(self, var, stmt, iteration=None):
        """A save marker before ``stmt`` overwrites ``var``, when its old value may exist.

        ``iteration``: the marker id of the loop iteration that runs ``stmt`` exactly once; the
        old value then travels in that iteration's tuple instead of a list of its own."""
        if var not in self.fixed or var in self.per_iteration:
            return []
        if var not in self.definitions.maybe(stmt):
            if self.depth == 0:
                return []
            self.none_init.append(var)
        ident = next(self.ids)
        self.save_ids[id(stmt)] = ident
        if iteration is not None:
            self.save_iteration[ident] = iteration
        return [_marker("save", var, ident)]

    def primal_block(self, stmts, iteration=None):
        out = []
        for s in stmts:
            if (
                isinstance(s, gast.Assign)
                and list_op(self.ops, s)
                and s.targets[0].id in self.fixed
            ):
                # a list growing or shrinking in place: undone element by element in the sweep
                ident = next(self.ids)
                self.save_ids[id(s)] = ident
                if list_op(self.ops, s) is runtime.list_pop:
                    out.append(_marker("save_last", s.targets[0].id, ident))
                out.append(s)
            elif isinstance(s, gast.Assign) and is_setitem(self.ops, s):
                ident = next(self.ids)
                self.save_ids[id(s)] = ident
                self.item_index[ident] = self.ops[id(s)].args["index"]
                out += [_marker("save_item", s.targets[0].id, ident), s]
            elif isinstance(s, gast.Assign):
                out += self._save(s.targets[0].id, s, iteration) + [s]
            elif isinstance(s, gast.If):
                s.body = self.primal_block(s.body)
                s.orelse = self.primal_block(s.orelse)
                out.append(s)
            elif isinstance(s, (gast.For, gast.While)):
                out += self._primal_loop(s)
            else:
                out.append(s)
        return out

    def _primal_loop(self, loop):
        is_for = isinstance(loop, gast.For)
        reversible = (
            is_for
            and all(
                isinstance(a, gast.Constant)
                or (isinstance(a, gast.Name) and a.id not in self.fixed)
                for a in loop.iter.args
            )
            and loop.target.id not in stored(loop.body)
            and not breaks(loop.body)
        )
        prefix = []
        pre = []
        trips = None
        if not reversible:
            trips = self.ctx.namer.fresh(naming.TRIPS)
            self.fixed.add(trips)
            init = assign(trips, gast.Constant(0, None))
            pre = self._save(trips, init) + [init]
            step = gast.BinOp(name(trips), gast.Add(), gast.Constant(1, None))
            prefix.append(assign(trips, step))
            self.save_ids[id(loop)] = self.save_ids.pop(id(init), None)
        self.depth += 1
        if is_for and not reversible:
            ident = next(self.ids)
            self.save_ids[id(loop.target)] = ident
            prefix.append(_marker("save", loop.target.id, ident))
        suffix = []
        iteration = None
        if not breaks(loop.body):
            # one tuple per iteration: its temporaries, and the values it overwrites (a loop
            # that may break has no last-iteration end: it keeps the per-statement saves)
            temporaries = iteration_temporaries(
                loop, self.ops, self.fixed, self.store_counts, self.params
            )
            self.per_iteration |= set(temporaries)
            iteration = next(self.ids)
            self.iteration_vars[iteration] = temporaries
            self.iteration_ids[id(loop)] = iteration
            suffix = [_marker("save_iteration", "", iteration)]
        loop.body = prefix + self.primal_block(loop.body, iteration) + suffix
        self.depth -= 1
        self.loops[id(loop)] = (reversible, trips)
        return pre + [loop]

    # --- the adjoint sweep --------------------------------------------------------------------
    def adjoint_block(self, stmts):
        out = []
        for s in reversed(stmts):
            out += self.adjoint_stmt(s)
        return out

    def adjoint_stmt(self, s):
        if isinstance(s, gast.Assign):
            if id(s) not in self.ops:
                return []  # bookkeeping the transform added (trip counters)
            restore = None
            ident = self.save_ids.get(id(s))
            if ident is not None and list_op(self.ops, s):
                self._adjoint_assign(s, None)
                code = self._flush(s.lineno)
                kind = "restore_last" if list_op(self.ops, s) is runtime.list_pop else "undo_append"
                code.append(_marker(kind, s.targets[0].id, ident))
                return code
            if ident is not None and is_setitem(self.ops, s):
                self._adjoint_setitem(s)
                code = self._flush(s.lineno)
                code.append(_marker("restore_item", s.targets[0].id, ident))
                return code
            if ident is not None:
                restore = _marker("restore", s.targets[0].id, ident)
            restore = self._adjoint_assign(s, restore)
            code = self._flush(s.lineno)
            if restore is not None:
                code.append(restore)
            return code
        if isinstance(s, gast.If):
            return self._adjoint_if(s)
        if isinstance(s, (gast.For, gast.While)):
            return self._adjoint_loop(s)
        return []

    def _adjoint_assign(self, stmt, restore):
        """Adjoint statements of ``stmt``; returns the restore marker if still to be emitted.

        In ``x = x * k`` the operand is the old ``x`` and the result the new one: the result is
        held in a temporary and the old value restored before the rule reads its operands.
        """
        target = stmt.targets[0].id
        dt = self.adj.get(target)
        contribs = {}
        if dt is not None and target in self.active:
            op = self.ops[id(stmt)]
            if op.kind == "copy":
                contribs[op.args["x"].id] = dt
            elif op.kind == "rule" and self._in_place_item(op, dt):
                pass
            elif op.kind == "rule":
                result = name(target)
                reads_old = restore is not None and any(
                    isinstance(a, gast.Name) and a.id == target for a in op.args.values()
                )
                if reads_old:
                    if _uses_result(op.rule.vjp()):
                        held = self.ctx.namer.fresh(naming.NEW.format(target))
                        self.stmts.append(assign(held, name(target)))
                        result = name(held)
                    self.stmts.append(restore)
                    restore = None
                contribs = self._contributions(op, result, dt, stmt)
            elif op.kind in ("tuple", "dict"):
                for key, element in op.args.items():
                    if isinstance(element, gast.Name) and element.id in self.active:
                        index = (
                            clone(op.node.keys[int(key)]) if op.kind == "dict"
                            else gast.Constant(int(key), None)
                        )
                        part = self._call(runtime.elem, dt, index, name(element.id))
                        contribs[element.id] = _plus(contribs.get(element.id), part)
        self.adj.pop(target, None)  # the value before this statement has its own adjoint
        self.owned.discard(target)
        self.zeroed.discard(target)
        may_alias = target not in self.fixed
        for var, c in contribs.items():
            if var != target:
                self.accumulate(var, c, may_alias)
        if target in contribs:
            self.accumulate(target, contribs[target], may_alias)
        if target in self.reinit and target not in self.adj:
            self._set_zero(target)
        return restore

    def _adjoint_setitem(self, stmt):
        """``y[index] = value``: the value gets ``dy[index]``, and ``dy[index]`` becomes zero,
        because the elements the write overwrote no longer reach the output."""
        target = stmt.targets[0].id
        op = self.ops[id(stmt)]
        index, value = op.args["index"], op.args["value"]
        d = self.adj.get(target)
        if d is None or target not in self.active:
            return
        if isinstance(value, gast.Name) and value.id in self.active:
            part = self._call(runtime.take_item, d, index)
            part = self._call(runtime.unbroadcast, part, name(value.id))
            self.accumulate(value.id, part)
        own = self._adjoint_name(target)
        buffer = d if target in self.owned else self._call(runtime.copy_array, d)
        self.stmts.append(assign(own, self._call(runtime.zero_item, buffer, index)))
        self.adj[target] = name(own)
        self.owned.add(target)
        self.zeroed.discard(target)

    def _in_place_item(self, op, dt):
        """``x[index]`` into an adjoint buffer owned here: ``dx = add_at(dx, index, dy)``."""
        if op.rule.fn is not operator.getitem or not self.optimize:
            return False
        x = op.args["x"]
        if not isinstance(x, gast.Name):
            return False
        if x.id not in self.owned or x.id not in self.active:
            return False
        acc = name(self._adjoint_name(x.id))
        index = op.args["index"]
        if x.id in self.zeroed and integer_index(index, self.integers):
            # a zeros_like buffer and an integer index: a plain in-place add
            item = gast.Subscript(acc, clone(index), gast.Store())
            self.stmts.append(gast.AugAssign(item, gast.Add(), dt))
            return True
        call = self._call(runtime.add_at, acc, index, dt)
        self.stmts.append(assign(acc.id, call))
        return True

    def _resolves(self, func, fn):
        return self.ctx.namespace.resolve(func, self.ctx.local_names) is fn

    def _contributions(self, op, result, dt, stmt):
        rule = op.rule
        template = rule.vjp()
        wanted = [
            p for p in template.outputs
            if isinstance(op.args.get(p), gast.Name) and op.args[p].id in self.active
        ]
        if not wanted:
            return {}
        env = bind_template(template, op.args, result=result, cotangent=dt)
        prelude, exprs = instantiate(template, env, self.ctx, wanted)
        self.stmts.extend(prelude)
        contribs = {}
        for p in wanted:
            contrib = exprs[p]
            var = op.args[p].id
            if rule.broadcast and self._may_broadcast(op, p, stmt):
                reference = name(self.shape_refs.get(id(stmt), {}).get(p, var))
                if self.shapes.get(id(stmt), ({}, None))[0].get(p) == frozenset():
                    reference = gast.Constant(0.0, None)  # a number: any number's shape
                contrib = self._call(runtime.unbroadcast, contrib, reference)
            contribs[var] = contrib if var not in contribs else gast.BinOp(
                contribs[var], gast.Add(), contrib
            )
        return contribs

    def _may_broadcast(self, op, param, stmt):
        """Whether another operand may have broadcast this one to a larger shape."""
        known = self.shapes.get(id(stmt))
        if known is not None:
            operands, result = known
            return operands.get(param) != result
        params = op.rule.signature.parameters
        others = [
            op.args[p] for p, spec in params.items()
            if p != param and p in op.args and spec.default is spec.empty
        ]
        return any(not isinstance(o, gast.Constant) for o in others)

    # --- control flow -------------------------------------------------------------------------
    def _materialize(self, node):
        """Give every adjoint the compound statement touches a variable of its own."""
        touched = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        for var in sorted(touched & set(self.adj)):
            own = self._adjoint_name(var)
            current = self.adj[var]
            if not (isinstance(current, gast.Name) and current.id == own):
                if isinstance(current, gast.Name):
                    self._shared(current.id)
                self.stmts.append(assign(own, current))
                self.adj[var] = name(own)
                self.owned.discard(var)
                self.zeroed.discard(var)

    def _enter(self):
        saved = (self.in_compound, self.last_line)
        self.in_compound = True
        self.last_line = None
        return saved

    def _leave(self, saved):
        self.in_compound, _ = saved
        self.last_line = None

    def _adjoint_if(self, s):
        self._materialize(s)
        head = self._flush(s.lineno)
        saved = self._enter()
        entry, entry_owned, entry_zeroed = dict(self.adj), set(self.owned), set(self.zeroed)
        body = self.adjoint_block(s.body)
        after_body, owned_body, zeroed_body = dict(self.adj), set(self.owned), set(self.zeroed)
        self.adj, self.owned, self.zeroed = dict(entry), entry_owned, entry_zeroed
        orelse = self.adjoint_block(s.orelse)
        after_orelse, owned_orelse = dict(self.adj), set(self.owned)
        self.zeroed &= zeroed_body
        self._leave(saved)
        joined = set(after_body) | set(after_orelse)
        kept = {
            v: entry[v] for v in joined
            if v in entry and after_body.get(v) is entry[v] and after_orelse.get(v) is entry[v]
        }
        sure = self.definitions.surely(s)
        for var in sorted(joined - set(after_body)):
            body.append(assign(self._adjoint_name(var), self._zero_of(var, sure)))
            owned_body.discard(var)
        for var in sorted(joined - set(after_orelse)):
            orelse.append(assign(self._adjoint_name(var), self._zero_of(var, sure)))
            owned_orelse.discard(var)
        self.adj = {v: kept.get(v) or name(self._adjoint_name(v)) for v in joined}
        self.owned = owned_body & owned_orelse
        self.zeroed &= self.owned
        if not body and not orelse:
            return head
        return self._headed(head, s.lineno, gast.If(s.test, body or [gast.Pass()], orelse))

    def _headed(self, head, lineno, stmt):
        """``stmt`` under its ``# grad of:`` comment (which ``head`` may already carry)."""
        line = [] if head else [comment("grad of: " + self._line(lineno))]
        self.last_line = None
        return head + line + [stmt]

    def _dry_run(self, body, entry):
        """The set of adjoints assigned after the reverse of ``body``, starting from ``entry``."""
        state = (
            self.adj, self.stmts, self.last_line, self.in_compound, self.owned, self.zeroed
        )
        self.adj = {v: name(self._adjoint_name(v)) for v in entry}
        self.owned = set(self.owned)
        self.zeroed = set(self.zeroed)
        self.stmts = []
        self.in_compound = True
        self.adjoint_block(body)
        result = set(self.adj)
        self.adj, self.stmts, self.last_line, self.in_compound, self.owned, self.zeroed = state
        return result

    def _adjoint_loop(self, loop):
        reversible, trips = self.loops[id(loop)]
        self._materialize(loop)
        body = loop.body
        # Iterate the body's reverse to a fixed point: adjoints that some iteration assigns are
        # zero-initialised before the loop; adjoints an iteration kills are re-zeroed in place.
        start = set(self.adj)
        entry = set(start)
        while True:
            exit_ = self._dry_run(body, entry)
            if exit_ <= entry:
                break
            entry |= exit_
        pre_init = entry - start
        killed = entry - exit_
        for var in sorted(pre_init):
            self._set_zero(var, self.definitions.surely(loop))
        sure = self.definitions.surely(loop) or set()
        for var in sorted(indexed_reads(body, self.ops, self.active) - stored(body) - self.owned):
            if var in self.adj and var in sure:
                # a private copy, so that `x[i]` in the loop can accumulate in place
                own = self._adjoint_name(var)
                self.stmts.append(assign(own, self._call(runtime.copy_array, name(own))))
                self.owned.add(var)
        head = self._flush(loop.lineno)
        # every iteration runs the same code: a buffer stays zeroed only if the body updates it
        # element by element alone
        self.zeroed -= whole_reads(body)

        before = dict(self.adj)
        saved = self._enter()
        outer_reinit = self.reinit
        self.reinit = self.reinit | killed
        adjoint_body = self.adjoint_block(body)
        self.reinit = outer_reinit
        self._leave(saved)
        after = self.adj
        self.adj = {v: name(self._adjoint_name(v)) for v in entry}
        for v in entry:
            if v in before and after.get(v) is before[v]:
                self.adj[v] = before[v]  # untouched by the loop: keep its alias
        self.owned &= entry
        self.zeroed &= self.owned

        if id(loop) in self.iteration_ids:
            pop = _marker("restore_iteration", "", self.iteration_ids[id(loop)])
            adjoint_body = [pop] + adjoint_body
        if reversible:
            header = gast.Call(self._helper(builtins.reversed), [loop.iter], [])
            new = gast.For(loop.target, header, adjoint_body or [gast.Pass()], [], None)
            return self._headed(head, loop.lineno, new)
        restore = []
        if isinstance(loop, gast.For):
            restore = [_marker("restore", loop.target.id, self.save_ids[id(loop.target)])]
        counter = gast.Call(self._helper(builtins.range), [name(trips)], [])
        target = gast.Name(self.ctx.namer.fresh(naming.DISCARD), gast.Store(), None, None)
        new = gast.For(target, counter, restore + adjoint_body or [gast.Pass()], [], None)
        code = self._headed(head, loop.lineno, new)
        ident = self.save_ids.get(id(loop))
        if ident is not None:
            code.append(_marker("restore", trips, ident))
        return code

    def _iteration_marker(self, args, read, stacks):
        """``loop_saved.append((a, b))`` at the end of an iteration, ``a, b = loop_saved.pop()``
        at the start of its adjoint: only the temporaries the sweep reads."""
        kind, _, ident = args
        kept = self._kept_temporaries(ident, read)
        kept += [old for save, old in self.before.items() if self.save_iteration[save] == ident]
        if not kept:
            return []
        key = ("iteration", ident)
        if key not in stacks:
            stacks[key] = self.ctx.namer.fresh(naming.LOOP_SAVED)
        stack = stacks[key]
        if kind == "save_iteration":
            values = name(kept[0]) if len(kept) == 1 else gast.Tuple(
                [name(v) for v in kept], gast.Load()
            )
            push = gast.Attribute(name(stack), "append", gast.Load())
            return [gast.Expr(gast.Call(push, [values], []))]
        pop = gast.Call(gast.Attribute(name(stack), "pop", gast.Load()), [], [])
        targets = [gast.Name(v, gast.Store(), None, None) for v in kept]
        target = targets[0] if len(targets) == 1 else gast.Tuple(targets, gast.Store())
        return [gast.Assign([target], pop, None)]

    def _kept_temporaries(self, iteration, read):
        """The iteration's temporaries the sweep reads: the ones its tuple carries."""
        return [v for v in self.iteration_vars[iteration] if v in read]

    # --- seeding and finishing ----------------------------------------------------------------
    def _seed(self, out, seed_param):
        out_active = isinstance(out, gast.Name) and out.id in self.active
        if seed_param is not None:
            check = self._call(runtime.check_seed, name(seed_param), out)
        else:
            if out_active and self.shape_sets.get(out.id) == frozenset():
                # a scalar by construction (a full reduction): no check, and the seed is 1.0
                self.adj[out.id] = gast.Constant(1.0, None)
                return
            check = self._call(runtime.unit_seed, out)
        if out_active:
            self.stmts.append(assign(self._adjoint_name(out.id), check))
            self.adj[out.id] = name(self._adjoint_name(out.id))
        else:
            self.stmts.append(gast.Expr(check))

    def _finalize(self, primal, sweep):
        """Turn save/restore markers into list pushes and pops where the sweep reads the value."""
        read = set()
        for s in sweep:
            for n in gast.walk(s):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    read.add(n.id)
        for s in gast.walk(gast.Module(sweep, [])):
            args = _marker_args(s)
            if args is not None and args[0] == "restore_item" and args[1] in read:
                index = self.item_index[args[2]]
                read |= {n.id for n in gast.walk(index) if isinstance(n, gast.Name)}
        stacks = {}
        in_tuples = set()
        # Old values go into their iteration's tuple when that makes one push out of several;
        # a lone value keeps its own list (`x_saved`), which is as fast and reads better.
        members = {}
        for s in gast.walk(gast.Module(primal, [])):
            args = _marker_args(s)
            if args and args[0] == "save" and args[2] in self.save_iteration and args[1] in read:
                members.setdefault(self.save_iteration[args[2]], []).append(args[2])
        tupled = set()
        for iteration, saves in members.items():
            if len(self._kept_temporaries(iteration, read)) + len(saves) > 1:
                tupled.update(saves)

        def rewrite(stmts):
            out = []
            for s in stmts:
                args = _marker_args(s)
                if args is not None and args[0] in ("save_iteration", "restore_iteration"):
                    out.extend(self._iteration_marker(args, read, stacks))
                    continue
                if args is not None:
                    kind, var, _ = args
                    if var not in read:
                        continue
                    if kind in ("save", "restore") and args[2] in tupled:
                        # the old value rides in the iteration's tuple
                        if args[2] not in self.before:
                            self.before[args[2]] = self.ctx.namer.fresh(naming.OLD.format(var))
                        old = self.before[args[2]]
                        pair = (old, var) if kind == "save" else (var, old)
                        out.append(assign(pair[0], name(pair[1])))
                        in_tuples.add(var)
                        continue
                    if kind == "undo_append":
                        out.append(assign(var, self._call(runtime.list_pop, name(var))))
                        continue
                    if var not in stacks:
                        stacks[var] = self.ctx.namer.fresh(naming.SAVED.format(var))
                    if kind == "save_last":
                        last = gast.Subscript(name(var), gast.Constant(-1, None), gast.Load())
                        push = gast.Attribute(name(stacks[var]), "append", gast.Load())
                        out.append(gast.Expr(gast.Call(push, [last], [])))
                    elif kind == "restore_last":
                        stack = gast.Attribute(name(stacks[var]), "pop", gast.Load())
                        call = self._call(runtime.list_append, name(var), gast.Call(stack, [], []))
                        out.append(assign(var, call))
                    elif kind in ("save_item", "restore_item"):
                        index = clone(self.item_index[args[2]])
                        if kind == "save_item":
                            saved = self._call(runtime.copy_item, name(var), index)
                            push = gast.Attribute(name(stacks[var]), "append", gast.Load())
                            out.append(gast.Expr(gast.Call(push, [saved], [])))
                        else:
                            pop = gast.Call(
                                gast.Attribute(name(stacks[var]), "pop", gast.Load()), [], []
                            )
                            call = self._call(runtime.restore_item, name(var), index, pop)
                            out.append(assign(var, call))
                    elif kind == "save":
                        push = gast.Attribute(name(stacks[var]), "append", gast.Load())
                        out.append(gast.Expr(gast.Call(push, [name(var)], [])))
                    else:
                        pop = gast.Attribute(name(stacks[var]), "pop", gast.Load())
                        out.append(assign(var, gast.Call(pop, [], [])))
                    continue
                for field in ("body", "orelse"):
                    inner = getattr(s, field, None)
                    if isinstance(inner, list) and inner:
                        empty = [gast.Pass()] if field == "body" else []
                        setattr(s, field, rewrite(inner) or empty)
                out.append(s)
            return out

        primal = rewrite(primal)
        sweep = rewrite(sweep)
        inits = [assign(v, gast.Constant(None, None)) for v in dict.fromkeys(self.none_init)
                 if v in stacks or v in in_tuples]
        inits += [assign(stack, gast.List([], gast.Load())) for stack in stacks.values()]
        return inits + primal + sweep
