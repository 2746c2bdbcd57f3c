"""Forward mode: the primal with each active statement followed by the statement of its tangent.

Requires: an A-normal-form body ending in ``return atom``, the active variables and the
:class:`Op` of every assignment (the same front half as reverse mode). Guarantees: one function
that takes the tangents of the ``wrt`` arguments as an extra last parameter and returns the value
and its tangent (or the tangent alone). Tangents are the sum of the rule's per-operand
contributions for the active operands only; an inactive operand contributes nothing and nothing is
built for it. The tangents of one source line follow its primal statements under a
``# tangent of:`` comment quoting that line. Tangents are read and bound through one
:class:`~.tangents.Tangents`: a tangent that is just a name is aliased, not copied. An output
that does not depend on ``wrt`` has the tangent ``zeros_like(output)``.

    def f(x, w):                    def f_jvp(x, w, tangent):
        y = np.sin(x) * w               dx = check_tangent(tangent, x)
        return y              ->        sin_x = np.sin(x)
                                        y = sin_x * w
                                        # tangent of: y = np.sin(x) * w
                                        dsin_x = dx * np.cos(x)
                                        dy = dsin_x * w
                                        return (y, dy)
"""

from __future__ import annotations

import builtins
import inspect

import gast

from .. import runtime
from ..astutil import NodeTransformer, clone, ordered_walk, stored
from ..emit import naming
from ..emit.unparse import comment
from ..errors import NoRuleError
from ..normalize.ssa import compound_assigned
from ..rules.derived import Splitter, SplitterN, Step, jvp_pair, split_jvp, split_n_jvp
from ..rules.kinds import Kind
from ..rules.registry import Role
from .nodes import assign, call, name
from .tangents import Tangents
from .templates import bind_template, instantiate


def run(fn_node, ctx):
    """The pass: the forward-mode derivative (modes "jvp", with the value, and "tangent").

    Reads ``ctx.ops`` and ``ctx.active``; sets ``ctx.out_name`` and ``ctx.defaults`` (dropped
    when the tangent parameter is appended).
    """
    ctx.out_name = ctx.namer.derived(fn_node.name, ctx.mode)
    if ctx.plain_defaults:  # every parameter given (rules/derived.JvpPair)
        fn_node.args.defaults = []
    ctx.defaults = list(fn_node.args.defaults)
    forward = ForwardAD(ctx)
    return forward.run(fn_node)


class ForwardAD:
    """Builds the forward-mode (JVP) function of one normalized function.

    Mode "jvp" returns ``(value, tangent)``; mode "tangent" only the tangent (a Hessian-vector
    product is the tangent of a gradient).
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.ops = ctx.ops
        self.active = ctx.active
        self.source_lines = ctx.source_lines
        self.wrt = ctx.wrt
        self.out_name = ctx.out_name
        self.as_tuple = ctx.as_tuple or len(ctx.wrt) > 1
        self.with_value = ctx.mode in ("jvp", "linearize")
        self.tangents = None  # the Tangents of the function, made by run()

    def run(self, fn_node):
        body, ret = fn_node.body[:-1], fn_node.body[-1]
        tangent = self.ctx.seed = self.ctx.namer.fresh(naming.TANGENT)
        self.tangents = Tangents(self.ctx, compound_assigned(fn_node.body))
        seeds = self._seed_inputs(tangent)
        args = fn_node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.id in self.active and a.id not in self.wrt:
                # an argument outside `wrt` that an active value flows into (`M[i] = a`) starts
                # with a zero tangent
                self.tangents.name(a.id)  # (named before the helper is: a fixed order)
                seeds.append(self.tangents.seed(a.id, self._call(runtime.zeros_like, name(a.id))))
        # Reads of such a variable inside a loop may textually precede its assignments.
        for var in sorted(self.tangents.assigned_in_control & self.active):
            self.tangents.declare(var)
        new_body = seeds + self._block(body)
        out = ret.value
        if isinstance(out, gast.Name) and out.id in self.tangents.current:
            dout = self.tangents.current[out.id]
        else:
            # an output no tangent reached: zeros of its structure (a tuple stays a tuple)
            dout = self._call(runtime.as_like, gast.Constant(None, None), out)
        result = gast.Tuple([out, dout], gast.Load()) if self.with_value else dout
        fn_node.body = new_body + [gast.Return(result)]
        fn_node.name = self.out_name
        if self.ctx.mode != "linearize":  # its split (transform/linearize.py) takes the tangent
            args = fn_node.args
            args.args.append(gast.Name(tangent, gast.Param(), None, None))
            args.defaults = []
        return fn_node

    # --- building blocks ------------------------------------------------------------------------
    def _call(self, fn, *args):
        return call(self.ctx, fn, *args)

    def _line(self, lineno):
        return self.source_lines[lineno - 1].strip() if lineno else "?"

    # --- inputs ---------------------------------------------------------------------------------
    def _seed_inputs(self, tangent):
        """Bind the tangent of every ``wrt`` argument, checking its shape against the argument."""
        stmts = []
        for i, param in enumerate(self.wrt):
            given = name(tangent)
            if self.as_tuple:
                given = gast.Subscript(given, gast.Constant(i, None), gast.Load())
            label = gast.Constant(param, None)
            check = self._call(runtime.check_tangent, given, name(param), label)
            if param in self.active:
                stmts.append(self.tangents.seed(param, check))
            else:
                stmts.append(gast.Expr(check))
        return stmts

    # --- the body -------------------------------------------------------------------------------
    def _block(self, body):
        """Primal statements in order; the tangents of a source line follow its last statement.

        A tangent is deferred to the end of its line's run of statements only while no later
        primal statement of the run rebinds a name the deferred tangents read. Compound statements
        keep their structure, with tangents interleaved inside their blocks.
        """
        out = []
        pending = []
        state = {"line": None, "commented": None}

        def flush():
            if pending:
                self._comment(out, state)
                out.extend(pending)
                pending.clear()

        for stmt in body:
            lineno = getattr(stmt, "lineno", None)
            if not isinstance(stmt, (gast.Assign, gast.Expr)):
                flush()
                state["line"] = lineno
                out.append(self._compound(stmt))
                continue
            if lineno != state["line"] or _rebinds(stmt, pending):
                flush()
                state["line"] = lineno
            split = self._split_form(stmt) if isinstance(stmt, gast.Assign) else None
            if split is not None:
                before, primal, after = split
            elif not (isinstance(stmt, gast.Assign) and stmt.targets[0].id in self.active):
                out.append(stmt)
                continue
            else:
                before, primal, after = self._tangent_of(stmt)
            if before:
                flush()
                self._comment(out, state)
                out.extend(before)
            out.extend(primal)
            pending.extend(after)
        flush()
        return out

    def _comment(self, out, state):
        if state["commented"] != state["line"]:
            out.append(comment("tangent of: " + self._line(state["line"]), state["line"]))
            state["commented"] = state["line"]

    def _compound(self, stmt):
        if isinstance(stmt, gast.If):
            stmt.body = self._block(stmt.body) or [gast.Pass()]
            stmt.orelse = self._block(stmt.orelse)
        elif isinstance(stmt, (gast.For, gast.While)):
            stmt.body = self._block(stmt.body) or [gast.Pass()]
        return stmt

    def _tangent_of(self, stmt):
        """``(tangent statements before, primal statements, tangent statements after)``.

        A statement that overwrites one of its own operands (``x = np.sin(x)`` in a loop) gets its
        tangent first, or, when the tangent reads the result, computes the result into a fresh
        name first.
        """
        target = stmt.targets[0].id
        op = self.ops[id(stmt)]
        paired = self._recursive_pair(stmt, op, target)
        if paired is not None:
            # the call reads the operands' tangents: those still pending come first
            return [paired[0][0]], paired[0][1:], paired[1]
        operands = {a.id for a in op.args.values() if isinstance(a, gast.Name)}
        if target not in operands:
            return [], [stmt], self._tangent_stmts(op, target, name(target))
        if not self._needs_result(op):
            return self._tangent_stmts(op, target, None), [stmt], []
        result = self.ctx.namer.fresh(target)
        first = assign(result, stmt.value)
        first.lineno = stmt.lineno
        tangent = self._tangent_stmts(op, target, name(result))
        rebind = assign(target, name(result))
        rebind.lineno = stmt.lineno
        return [], [first], tangent + [rebind]

    def _split_form(self, stmt):
        """``(before, primal, after)`` of the statements of a split recursive call in code
        forward mode differentiates (a gradient whose Hessian-vector product is asked for, the
        split derivative of a level below), active or not: the call starts the jvp of the
        callee's split derivative, the seed goes in with its tangent, a yield gives out the
        value with its tangent (``rules/derived.SplitJvp``, ``runtime/recursion.py``). None for
        any other statement."""
        op = self.ops.get(id(stmt))
        fn = getattr(op.rule, "fn", None) if op is not None else None
        if isinstance(fn, Splitter):
            return self._split_start(stmt, op, fn)
        if isinstance(fn, SplitterN):
            return self._steps_start(stmt, op, fn)
        if isinstance(fn, Step):
            return self._step(stmt, op, fn)
        if fn is runtime.recursion_send:
            return self._split_send(stmt, op)
        if getattr(op.rule, "marks_yield", False) if op is not None else False:
            return self._split_yield(stmt)
        return None

    def _bind_if_active(self, target, tangent):
        return self.tangents.bind(target, tangent, []) if target in self.active else []

    def _split_start(self, stmt, op, splitter_):
        target = stmt.targets[0].id
        if splitter_.wrt is None:
            raise self.ctx.location.error(NoRuleError, op.node, _UNSPECIALIZED)
        given = [p for p in splitter_.signature.parameters if isinstance(op.args.get(p), gast.Name)
                 and op.args[p].id in self.tangents]
        if given:
            tangents = [self.tangents.get(op.args[p].id) for p in given]
        else:  # no argument carries a tangent: the seed may (zeros for the arguments)
            given = list(splitter_.wrt)
            tangents = [self._call(runtime.zeros_like, op.args[p]) for p in given]
        # the started Split holds the value's tangent: it is its own tangent
        return self._started(stmt, target, split_jvp(splitter_, tuple(given)), tangents,
                             "split_jvp")

    def _steps_start(self, stmt, op, splitter_):
        """``s = f_splitn(a, b)``: starts the jvp of the callee's split derivative of that
        order (``rules/derived.SplitNJvp``), with respect to the arguments given tangents, or,
        when none is, to the first parameters a gradient or tangent was asked for (zero
        tangents: the steps' sends may carry tangents). The started ``SplitN`` is its own
        tangent."""
        target = stmt.targets[0].id
        if any(w is None for w in splitter_.wrts):
            raise self.ctx.location.error(NoRuleError, op.node, _UNSPECIALIZED)
        given = [p for p in splitter_.signature.parameters if isinstance(op.args.get(p), gast.Name)
                 and op.args[p].id in self.tangents]
        if given:
            tangents = [self.tangents.get(op.args[p].id) for p in given]
        else:
            # (none at all when no layer asks for one, as ``_split_start`` starts a jvp with
            # respect to nothing: the call varies along nothing, what its steps give neither)
            layers = [getattr(w, "wrt", w) for w in splitter_.wrts]  # a JvpLayer's too
            given = list(next((w for w in layers if w), ()))
            tangents = [self._call(runtime.zeros_like, op.args[p]) for p in given]
        return self._started(stmt, target, split_n_jvp(splitter_, tuple(given)), tangents,
                             "splitN_jvp")

    def _started(self, stmt, target, made, tangents, special):
        """``target = made((tangents...), *args)``: the jvp ``made`` of a split derivative
        started on the call's arguments; the started object is its own tangent."""
        func = name(self.ctx.global_name(made, made.__name__))
        first = assign(target, gast.Call(func, [gast.Tuple(tangents, gast.Load())]
                                         + list(stmt.value.args), list(stmt.value.keywords)))
        first.lineno = stmt.lineno
        self.ctx.split_used = True  # code differentiated again: the plain version
        self.ctx.special_calls.add(special)
        return [first], [], self._bind_if_active(target, name(target))

    def _step(self, stmt, op, step_):
        """A step of a split derivative started paired (``_steps_start``): a send goes with the
        tangent of what it sends (None: a zero), a read's tangent is what the step gave with
        it (``runtime.step_take_pair``, ``step_tangent``). A token is its own tangent."""
        target = stmt.targets[0].id
        s, j = op.args["s"], gast.Constant(step_.j, None)
        if step_.kind == "take":
            x = op.args["x"]
            dx = (self.tangents.get(x.id) if isinstance(x, gast.Name) and x.id in self.tangents
                  else gast.Constant(None, None))
            first = assign(target, self._call(runtime.step_take_pair, clone(s), j, clone(x), dx))
            first.lineno = stmt.lineno
            return [first], [], self._bind_if_active(target, name(target))
        tangent = self._call(runtime.step_tangent, clone(s), j)
        return [], [stmt], self._bind_if_active(target, tangent)

    def _split_send(self, stmt, op):
        target = stmt.targets[0].id
        s, seed = op.args["s"], op.args["seed"]
        dseed = (self.tangents.get(seed.id) if isinstance(seed, gast.Name)
                 and seed.id in self.tangents else gast.Constant(None, None))
        first = assign(target, self._call(runtime.recursion_send_pair, s, seed, dseed))
        first.lineno = stmt.lineno
        tangent = self._call(runtime.recursion_sent_tangent, s)
        return [first], [], self._bind_if_active(target, tangent)

    def _split_yield(self, stmt):
        target = stmt.targets[0].id
        value = stmt.value.args[0]
        out = gast.Tuple([value, self.tangents.or_zeros(value)], gast.Load())
        sent = self.ctx.namer.fresh(naming.SENT.format(target))
        first = assign(sent, gast.Yield(out))
        seed = assign(target, gast.Subscript(name(sent), gast.Constant(0, None), gast.Load()))
        for s in (first, seed):
            s.lineno = stmt.lineno
        dseed = gast.Subscript(name(sent), gast.Constant(1, None), gast.Load())
        return [first, seed], [], self._bind_if_active(target, dseed)

    def _recursive_pair(self, stmt, op, target):
        """``(primal, tangent)`` statements of a recursive call computed by one call of the
        callee's jvp (``pair = f_jvp_pair((da,), a, n); t = pair[0]``, its tangent
        ``pair[1]``), or None for any other statement."""
        rule = op.rule
        fn = getattr(rule, "recursive", None)
        if fn is None or not self.ctx.split_recursion or rule.unsupported:
            return None
        if not isinstance(stmt.value, gast.Call):
            return None
        params = [p for p in rule.signature.parameters.values()]
        if any(p.kind != p.POSITIONAL_OR_KEYWORD for p in params):
            return None
        active = [p.name for p in params if isinstance(op.args.get(p.name), gast.Name)
                  and op.args[p.name].id in self.tangents]
        if not active:
            return None
        made = jvp_pair(fn, tuple(active))
        func = name(self.ctx.global_name(made, made.__name__))
        tangents = gast.Tuple([self.tangents.get(op.args[p].id) for p in active], gast.Load())
        held = self.ctx.namer.fresh(naming.PAIR.format(target))
        if rule.fn is fn:
            args, keywords = list(stmt.value.args), list(stmt.value.keywords)
        else:  # a pair of a pair: the callee's jvp takes the tangents last (rules/derived.py)
            args, keywords = [op.args[p] for p in inspect.signature(fn).parameters], []
        call_ = gast.Call(func, [tangents] + args, keywords)
        first = assign(held, call_)
        value = assign(target, gast.Subscript(name(held), gast.Constant(0, None), gast.Load()))
        for s in (first, value):
            s.lineno = stmt.lineno
        self.ctx.split_used = True  # code differentiated again: the plain version
        self.ctx.special_calls.add("pair" if made.pairable else "pair_defaults")
        tangent = gast.Subscript(name(held), gast.Constant(1, None), gast.Load())
        return [first, value], self.tangents.bind(target, tangent, [])

    def _tangent_stmts(self, op, target, result):
        if op.kind == "copy":
            return self.tangents.bind(target, self.tangents.or_zeros(op.args["x"]), [])
        if op.kind == "dict":
            values = [self.tangents.or_zeros(e) for e in op.args.values()]
            keys = [clone(k) for k in op.node.keys]
            return self.tangents.bind(target, gast.Dict(keys, values), [])
        if op.kind == "tuple":
            elts = [self.tangents.or_zeros(e) for e in op.args.values()]
            kind = gast.List if isinstance(op.node, gast.List) else gast.Tuple
            return self.tangents.bind(target, kind(elts, gast.Load()), [])
        if op.kind == "rule":
            stmts = self._apply_rule(op, target, result)
            if stmts is not None:
                return stmts
        # A variable assigned in a branch or loop is active as a whole; this assignment gives it
        # a value that does not depend on ``wrt``.
        if isinstance(op.node, gast.Constant) and isinstance(op.node.value, (int, float)):
            return self.tangents.bind(target, gast.Constant(0.0, None), [])
        return self.tangents.bind(target, self._call(runtime.zeros_like, name(target)), [])

    def _active(self, op):
        return [
            p for p in op.rule.differentiable_params()
            if isinstance(op.args.get(p), gast.Name) and op.args[p].id in self.tangents
        ]

    def _needs_result(self, op):
        """Whether the tangent of ``op`` reads its result: its template does, or it is
        broadcast to the result's shape (``a = x + a`` where ``a`` is a float before and an array
        after: the old ``a`` has not the result's shape)."""
        if _reads_result(op):
            return True
        if op.kind != "rule" or not op.rule.broadcast:
            return False
        template = op.rule.jvp()
        active = self._active(op)
        if not active or "*" in template.outputs:
            return False
        return not _has_output_shape(template, active, op)

    def _apply_rule(self, op, target, result):
        """The tangent statements of a rule application, or None when no operand is active."""
        rule = op.rule
        template = rule.jvp()
        active = self._active(op)
        if not active:
            return None
        missing = [p for p in active if p not in template.outputs and "*" not in template.outputs]
        if missing:
            raise self.ctx.location.error(
                NoRuleError, op.node, f"{rule.name} has a gradient rule but no tangent rule for "
                f"{', '.join(missing)}; forward mode needs one (srcgrad.tangent)"
            )
        tangents = {p: self.tangents.get(op.args[p].id) for p in active}
        env = bind_template(template, op.args, result=result, tangents=tangents)
        if "*" in template.outputs:
            prelude, exprs = instantiate(template, env, self.ctx, ["*"])
            value = exprs["*"]
            covered = True
        else:
            prelude, exprs = instantiate(template, env, self.ctx, active)
            value = exprs[active[0]]
            for p in active[1:]:
                if rule.kind is Kind.DERIVED or rule.fn in (runtime.add, runtime.add_at):
                    # a derived function may return a tuple (and `add` add its tangents), whose
                    # tangents `+` would concatenate: they add element by element
                    value = self._call(runtime.add, value, exprs[p])
                else:
                    value = _plus(value, exprs[p])
            covered = not rule.broadcast or _has_output_shape(template, active, op)
        value = _SliceSyntax(self.ctx.namespace).visit(value)
        if not covered:
            value = self._call(runtime.broadcast_like, value, result or name(target))
        return self.tangents.bind(target, value, prelude)


_UNSPECIALIZED = "internal error: a split recursive call not specialized to its arguments"


def _reads_result(op):
    """Whether the tangent template of ``op`` reads the primal result ``y``."""
    if op.kind != "rule":
        return False
    return bool(op.rule.jvp().reads(Role.RESULT))


def _plus(total, term):
    """``total + term``, written ``total - t`` when ``term`` is ``-t`` (or ``-a * b / c``)."""
    positive = _negated(term)
    if positive is not None:
        return gast.BinOp(total, gast.Sub(), positive)
    return gast.BinOp(total, gast.Add(), term)


def _negated(term):
    """``t`` when ``term`` is ``-t`` or a product or quotient whose first factor is negated."""
    if isinstance(term, gast.UnaryOp) and isinstance(term.op, gast.USub):
        return term.operand
    if isinstance(term, gast.BinOp) and isinstance(term.op, (gast.Mult, gast.Div)):
        left = _negated(term.left)
        if left is not None:
            return gast.BinOp(left, term.op, term.right)
    return None


def _has_output_shape(template, wanted, op):
    """Whether the sum of the contributions of ``wanted`` has the shape of the result.

    A contribution has the shape of everything it reads (tangents have their primal's shape), so
    the sum has the result's shape when it reads the result or every operand that may broadcast.
    """
    if template.reads(Role.RESULT, wanted):
        return True
    read = {
        b.param for role in (Role.PARAM, Role.TANGENT) for b in template.reads(role, wanted)
    }
    params = op.rule.signature.parameters
    shaped = [
        p for p, spec in params.items()
        if spec.default is spec.empty and p in op.args and not isinstance(op.args[p], gast.Constant)
    ]
    return all(p in read for p in shaped)


def _rebinds(stmt, pending):
    """Whether ``stmt`` assigns a name that one of the ``pending`` statements reads, or reads
    a name one of them assigns (``h = h_2``, the delayed rebinding of ``h = np.tanh(h)``: a
    later statement of the same line, such as a loop over functions unrolled, reads the new
    ``h``)."""
    if not pending or not isinstance(stmt, gast.Assign):
        return False
    target = stmt.targets[0].id
    written = stored(pending)
    return any(
        isinstance(n, gast.Name) and n.id == target for s in pending for n in ordered_walk(s)
    ) or any(isinstance(n, gast.Name) and n.id in written for n in ordered_walk(stmt.value))


class _SliceSyntax(NodeTransformer):
    """``dx[slice(1, None, None)]`` -> ``dx[1:]``: an index reads as the user wrote it."""

    def __init__(self, namespace):
        self.namespace = namespace

    def visit_Subscript(self, node):
        self.generic_visit(node)
        node.slice = self._index(node.slice)
        return node

    def visit_Call(self, node):
        """``elem(dx, index, y)``, the tangent of ``x[index]``, is ``dx[index]`` where the index
        is a slice or several indices (an array's, whose tangent is never None)."""
        self.generic_visit(node)
        if (
            isinstance(node.func, gast.Name) and node.func.id == "elem"
            and self.namespace.lookup("elem") is runtime.elem and len(node.args) == 3
            and not isinstance(node.args[1], (gast.Constant, gast.Name))
        ):
            index = self._index(node.args[1])
            if isinstance(index, (gast.Slice, gast.Tuple)):
                return gast.Subscript(node.args[0], index, gast.Load())
        return node

    def _index(self, index):
        if isinstance(index, gast.Tuple):
            return gast.Tuple([self._index(e) for e in index.elts], gast.Load())
        if (
            isinstance(index, gast.Call)
            and isinstance(index.func, gast.Name)
            and self.namespace.lookup(index.func.id) is builtins.slice
            and len(index.args) == 3
            and not index.keywords
        ):
            lower, upper, step = (
                None if isinstance(a, gast.Constant) and a.value is None else a for a in index.args
            )
            return gast.Slice(lower, upper, step)
        return index
