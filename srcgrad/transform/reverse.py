"""Reverse mode: a primal sweep followed by an adjoint sweep in reverse statement order.

Requires: an A-normal-form body ending in ``return atom`` (control flow desugared by
``normalize.control``), the active variables, and the :class:`Op` of every assignment.
Guarantees: a function that runs the primal once, then accumulates adjoints statement by
statement in reverse; only active variables get adjoints; the first contribution to an adjoint
assigns it, later ones add; a contribution that is just a name is aliased, not copied, where that
is safe (straight-line code); each adjoint block starts with a ``# grad of:`` comment quoting the
source line; broadcasting contributions are summed back with ``unbroadcast``.

Three parts make the transform. The primal sweep is recorded on a :class:`~.tape.Tape`, which
saves what control flow overwrites and lowers each save and its restore to a push and a pop; the
adjoints live in one :class:`~.adjoints.Adjoints`, the one place they are read and written; and
the adjoint sweep here walks the statements backwards, asking each rule's template for its
contributions. Control flow keeps its shape: an ``if`` is
replayed from its (saved) condition; a ``for`` over a ``range`` whose bounds never change runs
backwards over ``reversed(range(...))``; any other loop counts its trips and the adjoint loop runs
that many times. The adjoints a loop's iterations assign are found first by sweeping its body on
trial until that set stops growing: they are zeroed before the loop, and those an iteration kills
are zeroed again where it does.

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
import operator

import gast
import numpy as np

from .. import runtime
from ..analysis import realness
from ..analysis.containers import built_objects, container_suspects
from ..analysis.definitions import Definitions
from ..analysis.integers import Integers, integer_index
from ..analysis.loops import (
    indexed_reads,
    whole_reads,
)
from ..analysis.realness import OPAQUE, may_be_complex, output_leaves, widening
from ..analysis.shapes import BroadcastShapes
from ..analysis.updates import in_place_updates
from ..astutil import clone, ordered_walk, param_names, stored, walk
from ..emit import naming
from ..emit.unparse import comment
from ..errors import SrcgradError
from ..normalize import recursion
from ..normalize.ssa import compound_assigned
from ..rules.registry import Role
from . import tape
from .adjoints import Adjoints
from .nodes import assign, call, helper, name
from .templates import bind_template, instantiate

SEEDED = ("vjp", "split", "pullback")  # modes given the cotangent of the output (a parameter,
# a yield, back's parameter)


def _known_real(kind):
    """Whether an argument kind (``analysis/argkinds.py``) is a real number or array."""
    if not kind:
        return False
    return kind[0] in ("float", "int") or np.dtype(kind[-1]).kind in "biuf"


def _plus(a, b):
    return b if a is None else gast.BinOp(a, gast.Add(), b)


def _overwritten(keys, i):
    """Whether a later constant key of a dict literal equals key ``i`` (Python's equality: ``1``,
    ``1.0`` and ``True`` are one key), so the value at ``i`` is not in the dict."""
    key = keys[i]
    if not isinstance(key, gast.Constant):
        return False
    return any(isinstance(k, gast.Constant) and k.value == key.value and hash(k.value) == hash(
        key.value) for k in keys[i + 1:])


def _uses_result(template):
    """Whether a rule template reads the primal result ``y``."""
    return bool(template.reads(Role.RESULT))


def run(fn_node, ctx):
    """The pass: the reverse-mode derivative (modes "grad", "value_and_grad", "vjp", "split").

    Reads ``ctx.ops`` and ``ctx.active``; sets ``ctx.out_name``, ``ctx.defaults`` (dropped when
    the seed parameter is appended), ``ctx.assigned_in_control`` and, for the passes after it,
    ``ctx.shape_sets`` and ``ctx.adjoint_names``.
    """
    ctx.out_name = ctx.namer.derived(fn_node.name, ctx.mode)
    ctx.defaults = list(fn_node.args.defaults)
    ctx.assigned_in_control = compound_assigned(fn_node.body, ctx.in_place_calls)
    reverse = ReverseAD(ctx)
    fn_node = reverse.run(fn_node)
    ctx.shape_sets = reverse.shape_sets
    ctx.adjoint_names = reverse.adjoints.names
    return fn_node


class ReverseAD:
    """Builds the gradient function of one normalized function.

    ``mode`` is "grad" (return the gradients), "value_and_grad" (return the value too) or "vjp"
    (the cotangent of the output is an extra last parameter).
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.ops = ctx.ops
        self.active = ctx.active
        self.source_lines = ctx.source_lines
        self.mode = ctx.mode
        self.wrt = ctx.wrt
        self.out_name = ctx.out_name
        self.as_tuple = ctx.as_tuple or len(ctx.wrt) > 1
        # saved, restored and killed, not renamed (the set grows by the trip counters made here)
        self.assigned_in_control = ctx.assigned_in_control
        self.optimize = ctx.optimize  # False: no shape-based unbroadcast elision, no in-place adds
        self.adjoints = None  # the Adjoints of the sweep, made by run()
        self.in_place = False  # adds into adjoint buffers in place (set by _analyse)
        self.stmts = []  # the adjoint statements of the source line being swept
        self.commented_line = None  # the source line the last ``# grad of:`` comment quotes
        self.rezero = set()  # adjoints a loop iteration kills: zeroed again where that happens
        self.tape = None  # the Tape of the primal sweep, made by run()
        self.yield_marks = {}  # id of a marked `seed = yield value` -> value (_yields_back)
        self.output_leaves = OPAQUE  # what decides whether the output is complex (_analyse)
        self.widening = None  # where a complex argument may widen a real buffer (_analyse)

    def run(self, fn_node):
        primal, ret = fn_node.body[:-1], fn_node.body[-1]
        self.params = param_names(fn_node)
        seed_param = self.ctx.namer.fresh(naming.SEED) if self.mode in SEEDED else None
        self.ctx.seed = seed_param
        if self.ctx.split_used:
            recursion.specialize(fn_node, self.ctx)
        self._analyse(fn_node)
        kept = self._keep_arguments(fn_node.body)
        self._yields_back(primal)
        primal = self.tape.record(primal)
        self.stmts = []
        self._seed(ret.value, seed_param)
        sweep = self._flush(ret.lineno)
        sweep += self.adjoint_block(fn_node.body[:-1])
        result = self._result(ret.value, primal)
        if self.mode == "split":
            # the value goes out and the seed comes in between the primal and the sweep
            out = self._as_returned(ret.value, primal, naming.VALUE)
            primal.append(assign(seed_param, gast.Yield(out)))
            seed_param = None
        lowered = self.tape.lower(primal, sweep, self.adjoints.named_zeros)
        fn_node.body = kept + lowered + [gast.Return(result)]
        fn_node.name = self.out_name
        if seed_param is not None and self.mode == "vjp":
            fn_node.args.args.append(gast.Name(seed_param, gast.Param(), None, None))
            fn_node.args.defaults = []
        return fn_node

    def _analyse(self, fn_node):
        """The analyses the sweep consults, and its tape and adjoints."""
        containers = container_suspects(fn_node.body, self.ops)
        self.objects = built_objects(fn_node.body, self.ops)
        # in-place adds (`dx += g`) into adjoint buffers, unless a value may be complex: a complex
        # contribution cannot be added into the real buffer of a real variable
        self.in_place = self.optimize and not may_be_complex(fn_node.body)
        self.adjoints = Adjoints(self.ctx, self._emit, containers, self.in_place)
        out = fn_node.body[-1].value
        # and where a complex argument may bring a complex contribution to a real buffer
        self.widening = None if not self.in_place else widening(
            fn_node.body, self.params, self.ctx.namespace, self.ctx.local_names,
            out.id if isinstance(out, gast.Name) else None, self.mode not in SEEDED,
            [p for p in self.params if _known_real(self.ctx.kinds.get(p))])
        # read before the tape rewrites the body (see _check_real)
        self.output_leaves = OPAQUE if not isinstance(out, gast.Name) else output_leaves(
            fn_node.body, out.id, self.params, self.ctx.namespace, self.ctx.local_names)
        self.integers = Integers(self._resolves).run(fn_node, self.params)
        updates = in_place_updates(self.ops, fn_node.body)
        self.definitions = Definitions(fn_node.body, self.params, updates)
        self.tape = tape.Tape(self.ctx, fn_node, self.definitions)
        self.adjoints.structured = frozenset(containers | self.objects | self.tape.item_written)
        self.shapes, self.shape_sets, self.shape_refs = {}, {}, {}
        if self.optimize:
            analysis = BroadcastShapes(self.ops, self.ctx.kinds, self.integers)
            self.shapes = analysis.run(fn_node.body)
            self.shape_sets = analysis.final
            self.shape_refs = analysis.references

    def _keep_arguments(self, body):
        """``x_arg = x`` for each differentiated parameter the body rebinds anywhere: its gradient
        takes structure and dtype from the argument as passed, not from what ``x`` holds after
        the sweep (``x = 0.5`` in a branch left a float32 argument a Python float gradient)."""
        rebound = stored(body) | {
            node.id for node in walk(body)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Del)
        }
        kept = []
        for p in self.wrt:
            if p in rebound:
                self.adjoints.arguments[p] = self.ctx.namer.fresh(naming.ARGUMENT.format(p))
                kept.append(assign(self.adjoints.arguments[p], name(p)))
        return kept

    def _result(self, out, primal):
        """What the derived function returns: the gradients, after the value if asked for."""
        grads = [self.adjoints.final(p) for p in self.wrt]
        result = gast.Tuple(grads, gast.Load()) if self.as_tuple else grads[0]
        if self.mode == "value_and_grad":
            out = self._as_returned(out, primal, naming.VALUE)
            result = gast.Tuple([out, result], gast.Load())
        if self.ctx.aux is not None:  # has_aux: ((value, aux), g) or (g, aux)
            aux = self._as_returned(self.ctx.aux, primal, naming.AUX)
            if self.mode == "value_and_grad":
                result.elts[0] = gast.Tuple([result.elts[0], aux], gast.Load())
            else:
                result = gast.Tuple([result, aux], gast.Load())
        return result

    def _as_returned(self, value, primal, pattern):
        """``value`` as the primal left it: the sweep restores overwritten variables and puts
        back the elements a write overwrote, so a returned value they touch is kept (or, when
        written into, copied) before the sweep starts."""
        if not isinstance(value, gast.Name):
            return value
        in_place = self.ctx.in_place_calls
        written = any(
            isinstance(s, gast.Assign) and s.targets[0].id == value.id
            and isinstance(s.value, gast.Call) and getattr(s.value.func, "id", None) in in_place
            for s in ordered_walk(gast.Module(primal, []))
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
        )
        if not written and value.id not in self.assigned_in_control:
            return value
        kept = self.ctx.namer.fresh(pattern.format(value.id))
        primal.append(assign(kept, self._call(runtime.fresh_copy, value) if written else value))
        return name(kept)

    # --- helpers --------------------------------------------------------------------------------
    def _emit(self, stmt):
        self.stmts.append(stmt)

    def _call(self, fn, *args):
        return call(self.ctx, fn, *args)

    def _flush(self, lineno):
        """The statements gathered for one source line, under its ``# grad of:`` comment."""
        if not self.stmts:
            return []
        stmts, self.stmts = self.stmts, []
        if lineno == self.commented_line:
            return stmts
        self.commented_line = lineno
        return [comment("grad of: " + self._line(lineno), lineno)] + stmts

    def _line(self, lineno):
        return self.source_lines[lineno - 1].strip() if lineno else "?"

    # --- the adjoint sweep --------------------------------------------------------------------
    def adjoint_block(self, stmts):
        out = []
        for s in reversed(stmts):
            out += self.adjoint_stmt(s)
        return out

    def adjoint_stmt(self, s):
        if id(s) in self.yield_marks:
            return self._adjoint_yield(s)
        if isinstance(s, gast.Assign):
            if id(s) not in self.ops:
                return []  # bookkeeping the transform added (trip counters)
            entry = self.tape.saves.get(id(s))
            if entry is not None and entry.kind in (tape.Kind.LAST, tape.Kind.APPEND):
                self._adjoint_assign(s, None)
                return self._flush(s.lineno) + [tape.restore(entry)]
            if entry is not None and entry.kind is tape.Kind.ITEM:
                self._adjoint_setitem(s)
                return self._flush(s.lineno) + [tape.restore(entry)]
            restore = None if entry is None else tape.restore(entry)
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

    def _yields_back(self, primal):
        """``seed = yield value`` of a split derivative differentiated in its split form
        (marked by ``normalize/recursion.mark_yields``) is written back in the primal."""
        self.yield_marks = {}
        for s in primal:
            op = self.ops.get(id(s)) if isinstance(s, gast.Assign) else None
            if op is not None and getattr(op.rule, "marks_yield", False):
                self.yield_marks[id(s)] = s.value.args[0]
                s.value = gast.Yield(s.value.args[0])

    def _adjoint_yield(self, s):
        """The adjoint of ``seed = yield value``: the seed's cotangent goes out, the value's
        comes in, whether or not they are active (the caller takes every step:
        ``runtime.split2_back``, ``split2_finish``)."""
        target = s.targets[0].id
        value = self.yield_marks[id(s)]
        dt = self.adjoints.get(target)
        self.adjoints.forget(target)
        got = self.ctx.namer.fresh(naming.SENT.format(target))
        out = clone(dt) if dt is not None else gast.Constant(None, None)
        self._emit(assign(got, gast.Yield(out)))
        if isinstance(value, gast.Name) and value.id in self.active:
            self.adjoints.accumulate(value.id, name(got), target not in self.assigned_in_control)
        return self._flush(s.lineno)

    def _adjoint_assign(self, stmt, restore):
        """Adjoint statements of ``stmt``; returns the restore marker if still to be emitted.

        In ``x = x * k`` the operand is the old ``x`` and the result the new one: the result is
        held in a temporary and the old value restored before the rule reads its operands.
        """
        target = stmt.targets[0].id
        dt = self.adjoints.get(target)
        contribs = {}
        if dt is None and getattr(getattr(self.ops.get(id(stmt)), "rule", None), "takes_step",
                                  False):
            dt = gast.Constant(None, None)  # a step sent: the cotangent of what it sent comes
        if dt is not None and target in self.active:
            op = self.ops[id(stmt)]
            if op.kind == "copy":
                contribs[op.args["x"].id] = dt
            elif op.kind == "rule" and not self._in_place_item(op, dt, stmt):
                restore, result = self._restore_before_rule(op, target, restore)
                contribs = self._contributions(op, result, dt, stmt)
            elif op.kind in ("tuple", "dict"):
                contribs = self._element_contributions(op, dt)
        self.adjoints.forget(target)
        may_alias = target not in self.assigned_in_control
        for var, c in contribs.items():
            if var != target:
                self.adjoints.accumulate(var, c, may_alias, self._widens(var, stmt))
        if target in contribs:
            self.adjoints.accumulate(target, contribs[target], may_alias,
                                     self._widens(target, stmt))
        if target in self.rezero and self.adjoints.get(target) is None:
            if restore is not None:  # the zero of the value before: `hs = []` in a loop,
                # `a = x * 2.0` making an array of a float `a`
                self.stmts.append(restore)
                restore = None
            self.adjoints.set_zero(target)
        return restore

    def _restore_before_rule(self, op, target, restore):
        """``(restore still to emit, the result's expression)`` for a rule applied to ``target``:
        when it reads the old ``target``, the old value comes back first (the new one kept in a
        temporary if the rule reads the result)."""
        result = name(target)
        reads_old = restore is not None and any(
            isinstance(a, gast.Name) and a.id == target for a in op.args.values()
        )
        if not reads_old:
            return restore, result
        if _uses_result(op.rule.vjp()):
            held = self.ctx.namer.fresh(naming.NEW.format(target))
            self.stmts.append(assign(held, name(target)))
            result = name(held)
        self.stmts.append(restore)
        return None, result

    def _element_contributions(self, op, dt):
        """``elem(dt, key, x)`` for every active element ``x`` of a tuple, list or dict."""
        contribs = {}
        for key, element in op.args.items():
            if op.kind == "dict" and _overwritten(op.node.keys, int(key)):
                continue  # `{"a": u, "a": v}` holds v only: u gets no gradient
            if isinstance(element, gast.Name) and element.id in self.active:
                index = (
                    clone(op.node.keys[int(key)]) if op.kind == "dict"
                    else gast.Constant(int(key), None)
                )
                part = self._call(runtime.elem, dt, index, name(element.id))
                contribs[element.id] = self._plus(element.id, contribs.get(element.id), part)
        return contribs

    def _plus(self, var, a, b):
        """``a + b``, two contributions to the adjoint of ``var``: ``add(a, b)`` where ``var``
        may hold a structure (``(P, P)``: an object's cotangents have no ``+``)."""
        if a is None or var not in self.adjoints.containers:
            return _plus(a, b)
        return self._call(runtime.add, a, b)

    def _adjoint_setitem(self, stmt):
        """``y[index] = value``: the value gets ``dy[index]``, and ``dy[index]`` becomes zero,
        because the elements the write overwrote no longer reach the output."""
        target = stmt.targets[0].id
        op = self.ops[id(stmt)]
        index, value = op.args["index"], op.args["value"]
        d = self.adjoints.get(target)
        if d is None or target not in self.active:
            return
        if isinstance(value, gast.Name) and value.id in self.active:
            # (`value` shapes the zeros where a list or dict cotangent holds nothing)
            part = self._call(runtime.take_item, d, index, name(value.id))
            if not (isinstance(index, gast.Constant) and isinstance(index.value, str)) and (
                    value.id not in self.objects):
                # (a dict's item holds the value as written, and so does a list's item an
                # object built here: an object's cotangent, a dict, is no operand of a
                # broadcasting operator)
                part = self._call(runtime.unbroadcast, part, name(value.id))
            if value.id == target:
                # `y[...] = y`, `np.copyto(y, y)`: the value is the array before the write, so
                # its part is taken (a copy: zeroing may write into the buffer) before the
                # written elements are zeroed, and added to what remains after
                held = self.ctx.namer.adjoint(naming.OLD.format(target))
                self.adjoints.emit(assign(held, self._call(runtime.copy_array, part)))
                self.adjoints.zero_item(target, index)
                self.adjoints.accumulate(target, name(held))
                return
            self.adjoints.accumulate(value.id, part, widen=self._widens(value.id, stmt))
        self.adjoints.zero_item(target, index)

    def _widens(self, var, stmt):
        """Whether a contribution of ``stmt`` to the adjoint of ``var`` is added out of place:
        it may be complex where that adjoint is real (``realness.Widening``)."""
        if self.widening is None:
            return False
        reads = realness.value_names(stmt.value)
        return self.widening.widens(var, {stmt.targets[0].id}, reads)

    def _in_place_item(self, op, dt, stmt):
        """``x[index]`` into an adjoint buffer owned here: ``dx = add_at(dx, index, dy)``."""
        if op.rule.fn is not operator.getitem or not self.in_place:
            return False
        x = op.args["x"]
        if not isinstance(x, gast.Name) or x.id not in self.active or self._widens(x.id, stmt):
            return False
        index = op.args["index"]
        # an element that may be an object (a list of layers) is added with `add` (add_at):
        # the zero of an object another path gives it is an object, which `+=` cannot add
        element = stmt.targets[0].id if isinstance(stmt.targets[0], gast.Name) else None
        integer = x.id in self.adjoints.zeroed and integer_index(index, self.integers) and (
            element not in self.adjoints.containers)
        return self.adjoints.add_to_item(x.id, index, dt, integer)

    def _resolves(self, func, fn):
        return self.ctx.namespace.resolve(func, self.ctx.local_names) is fn

    def _contributions(self, op, result, dt, stmt):
        rule = op.rule
        template = rule.vjp()
        wanted = [
            p for p in template.outputs
            if isinstance(op.args.get(p), gast.Name) and op.args[p].id in self.active
        ]
        moved = self._moved_step(rule, wanted, stmt)
        if not wanted:
            return {}
        env = bind_template(template, op.args, result=result, cotangent=dt)
        prelude, exprs = instantiate(template, env, self.ctx, wanted + moved)
        for p in moved:  # taken on the handle: `ds = s + take(s, dy)`
            exprs["s"] = gast.BinOp(exprs["s"], gast.Add(), exprs[p])
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
            contribs[var] = self._plus(var, contribs.get(var), contrib)
        return contribs

    def _moved_step(self, rule, wanted, stmt):
        """``["after"]`` when the adjoint of ``y = got_j(s, after)`` (a step read, its
        cotangent ``dy`` to be sent at step J, ``rules/derived.Step``) must send it through the
        handle ``s``: ``after`` is a constant (``got_j(s, None)``: what a step of the order
        below read with a zero token) or inactive, so the send it carries would be dropped and
        step J taken with a zero cotangent (fourth order through a recursion was wrong so: the
        cotangent of what step 7 gave never reached step 10). A send that neither operand can
        carry is an internal error, never a silently zero cotangent."""
        if not getattr(rule, "sends_step", False) or "after" in wanted:
            return []
        if "s" not in wanted:
            raise SrcgradError(f"internal error: the cotangent of a step read at line "
                               f"{stmt.lineno} would be dropped (neither its split derivative "
                               f"nor its token is active)")
        return ["after"]

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
        self.adjoints.materialize({n.id for n in walk(node) if isinstance(n, gast.Name)})

    def _enter(self):
        saved = (self.adjoints.inside_control, self.commented_line)
        self.adjoints.inside_control = True
        self.commented_line = None
        return saved

    def _leave(self, saved):
        self.adjoints.inside_control, _ = saved
        self.commented_line = None

    def _adjoint_if(self, s):
        self._materialize(s)
        head = self._flush(s.lineno)
        saved = self._enter()
        entry = self.adjoints.snapshot()
        body = self.adjoint_block(s.body)
        after_body = self.adjoints.snapshot()
        self.adjoints.reset(entry)
        orelse = self.adjoint_block(s.orelse)
        self._leave(saved)
        self.adjoints.join_branches(entry, after_body, body, orelse, self.definitions.surely(s))
        if not body and not orelse:
            return head
        return self._headed(head, s.lineno, gast.If(s.test, body or [gast.Pass()], orelse))

    def _headed(self, head, lineno, stmt):
        """``stmt`` under its ``# grad of:`` comment (which ``head`` may already carry)."""
        line = [] if head else [comment("grad of: " + self._line(lineno), lineno)]
        self.commented_line = None
        return head + line + [stmt]

    def _dry_run(self, body, entry):
        """The set of adjoints assigned after the reverse of ``body``, starting from ``entry``."""
        state = self.stmts, self.commented_line
        self.stmts = []
        trial = self.adjoints.trial(entry)
        self.adjoint_block(body)
        result = set(self.adjoints.current)
        self.adjoints.end_trial(trial)
        self.stmts, self.commented_line = state
        return result

    def _loop_adjoints(self, body):
        """``(entry, killed)``: the adjoints live at the start of every reversed iteration, and
        those an iteration kills. The reverse of the body runs on trial until the set of
        adjoints it leaves stops growing."""
        entry = set(self.adjoints.current)
        while True:
            exit_ = self._dry_run(body, entry)
            if exit_ <= entry:
                return entry, entry - exit_
            entry |= exit_

    def _adjoint_loop(self, loop):
        reversible, trips = self.tape.loops[id(loop)]
        self._materialize(loop)
        body = loop.body
        # adjoints that some iteration assigns are zero-initialised before the loop; adjoints an
        # iteration kills are re-zeroed in place
        start = set(self.adjoints.current)
        entry, killed = self._loop_adjoints(body)
        surely = self.definitions.surely(loop)
        for var in sorted(entry - start):
            self.adjoints.set_zero(var, surely)
        indexed = indexed_reads(body, self.ops, self.active) - stored(body)
        self.adjoints.private_copies(indexed, surely or set())
        head = self._flush(loop.lineno)
        # every iteration runs the same code: a buffer stays zeroed only if the body updates it
        # element by element alone
        self.adjoints.zeroed -= whole_reads(body)

        before = dict(self.adjoints.current)
        owned_before = set(self.adjoints.owned)
        zeroed_before = set(self.adjoints.zeroed)
        saved = self._enter()
        outer_rezero = self.rezero
        self.rezero = self.rezero | killed
        adjoint_body = self.adjoint_block(body)
        self.rezero = outer_rezero
        self._leave(saved)
        self.adjoints.leave_loop(entry, before, owned_before, zeroed_before)
        if id(loop) in self.tape.iterations:
            adjoint_body = [tape.restore(self.tape.iterations[id(loop)])] + adjoint_body
        return self._reversed_loop(loop, reversible, trips, head, adjoint_body)

    def _reversed_loop(self, loop, reversible, trips, head, adjoint_body):
        """The loop that runs ``adjoint_body`` once per iteration of ``loop``, last first."""
        if reversible:
            header = gast.Call(helper(self.ctx, builtins.reversed), [loop.iter], [])
            new = gast.For(loop.target, header, adjoint_body or [gast.Pass()], [], None)
            return self._headed(head, loop.lineno, new)
        restore = []
        if isinstance(loop, gast.For):
            restore = [tape.restore(self.tape.saves[id(loop.target)])]
        counter = gast.Call(helper(self.ctx, builtins.range), [name(trips)], [])
        target = gast.Name(self.ctx.namer.fresh(naming.DISCARD), gast.Store(), None, None)
        new = gast.For(target, counter, restore + adjoint_body or [gast.Pass()], [], None)
        code = self._headed(head, loop.lineno, new)
        entry = self.tape.saves.get(id(loop))
        if entry is not None:
            code.append(tape.restore(entry))
        return code

    # --- seeding ------------------------------------------------------------------------------
    def _seed(self, out, seed_param):
        out_active = isinstance(out, gast.Name) and out.id in self.active
        if seed_param is not None:
            check = self._call(runtime.check_seed, name(seed_param), out)
        else:
            if out_active and self.shape_sets.get(out.id) == frozenset():
                # a scalar by construction (a full reduction): the seed is 1.0, and the output
                # need not be computed to be checked
                self._check_real(out)
                self.adjoints.seed(out.id, gast.Constant(1.0, None))
                return
            check = self._call(runtime.unit_seed, out)
        if out_active:
            self.adjoints.seed(out.id, check)
        else:
            self.stmts.append(gast.Expr(check))

    def _check_real(self, out):
        """The check that the output ``out``, seeded without ``unit_seed``, is real: of what its
        type follows from (``analysis/realness.py``; none where it is real by construction,
        none of the parameters a specialized derivative knows are real), or of ``out`` itself
        (computed then) when its type follows from nothing a check can read."""
        leaves = self.output_leaves
        if leaves is OPAQUE:
            leaves = [out.id]
        leaves = [n for n in leaves if not _known_real(self.ctx.kinds.get(n))]
        if leaves:
            self.stmts.append(gast.Expr(self._call(runtime.check_real, *map(name, leaves))))
