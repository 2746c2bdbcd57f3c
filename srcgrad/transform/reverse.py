"""Reverse mode: a primal sweep followed by an adjoint sweep in reverse statement order.

Requires: an A-normal-form, SSA body ending in ``return atom``, the active variables, and the
:class:`Op` of every assignment. Guarantees: a function that runs the primal once, then
accumulates adjoints statement by statement in reverse. Only active variables get adjoints. The
first contribution to an adjoint assigns it, later ones add; a contribution that is just a name
is aliased rather than copied. Each adjoint block is preceded by a ``# grad of:`` comment quoting
the source line it differentiates. Contributions from broadcasting operations are summed back to
their operand's shape with ``unbroadcast``.

    def f(x, y):                 def df(x, y):
        q = x + y                    q = x + y
        return q * y      ->         q_times_y = q * y
                                     # grad of: return q * y
                                     dq_times_y = unit_seed(q_times_y)
                                     dq = dq_times_y * y
                                     dy = dq_times_y * q
                                     # grad of: q = x + y
                                     dx = dq
                                     dy = dy + dq
                                     return dx
"""

from __future__ import annotations

import gast

from .. import runtime
from ..emit.unparse import comment
from ..errors import UnsupportedSyntaxError
from .templates import instantiate


def name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)


class ReverseAD:
    """Builds the gradient function of one normalized function.

    ``mode`` is "grad" (return the gradients), "value_and_grad" (return the value too) or "vjp"
    (the cotangent of the output is an extra last parameter).
    """

    def __init__(self, ctx, ops, active, source_lines, mode, wrt, out_name, as_tuple=False):
        self.ctx = ctx
        self.ops = ops
        self.active = active
        self.source_lines = source_lines
        self.mode = mode
        self.wrt = wrt
        self.out_name = out_name
        self.as_tuple = as_tuple or len(wrt) > 1
        self.adj = {}
        self.adj_names = {}
        self.stmts = []
        self.last_line = None

    def run(self, fn_node):
        primal, ret = fn_node.body[:-1], fn_node.body[-1]
        out = ret.value
        seed_param = None
        if self.mode == "vjp":
            seed_param = self.ctx.namer.fresh("seed")
        sweep = []

        self.stmts = []
        self._seed(out, seed_param)
        sweep += self._block(ret.lineno)
        for stmt in reversed(primal):
            if isinstance(stmt, gast.Assign) and stmt.targets[0].id in self.active:
                self.stmts = []
                self._adjoint_of(stmt)
                sweep += self._block(stmt.lineno)

        grads = [self.adj.get(p) or self._zeros(p) for p in self.wrt]
        result = gast.Tuple(grads, gast.Load()) if self.as_tuple else grads[0]
        if self.mode == "value_and_grad":
            result = gast.Tuple([out, result], gast.Load())
        fn_node.body = primal + sweep + [gast.Return(result)]
        fn_node.name = self.out_name
        if seed_param is not None:
            args = fn_node.args
            args.args.append(gast.Name(seed_param, gast.Param(), None, None))
            args.defaults = []
        return fn_node

    # --- building blocks ------------------------------------------------------------------------
    def _helper(self, fn):
        return name(self.ctx.global_name(fn, fn.__name__))

    def _call(self, fn, *args):
        return gast.Call(self._helper(fn), list(args), [])

    def _zeros(self, param):
        return self._call(runtime.zeros_like, name(param))

    def _block(self, lineno):
        if not self.stmts:
            return []
        stmts, self.stmts = self.stmts, []
        if lineno == self.last_line:
            return stmts
        self.last_line = lineno
        return [comment("grad of: " + self._line(lineno))] + stmts

    def _line(self, lineno):
        text = self.source_lines[lineno - 1].strip() if lineno else "?"
        return text

    def _adjoint_name(self, var):
        if var not in self.adj_names:
            self.adj_names[var] = self.ctx.namer.adjoint(var)
        return self.adj_names[var]

    def accumulate(self, var, contrib):
        """Add ``contrib`` to the adjoint of ``var``: the single place gradients accumulate."""
        current = self.adj.get(var)
        if current is None:
            if isinstance(contrib, (gast.Name, gast.Constant)):
                self.adj[var] = contrib
                return
            value = contrib
        else:
            value = gast.BinOp(current, gast.Add(), contrib)
        target = self._adjoint_name(var)
        self.stmts.append(assign(target, value))
        self.adj[var] = name(target)

    # --- the sweep --------------------------------------------------------------------------------
    def _seed(self, out, seed_param):
        out_active = isinstance(out, gast.Name) and out.id in self.active
        if seed_param is not None:
            check = self._call(runtime.check_seed, name(seed_param), out)
            if out_active:
                self.stmts.append(assign(self._adjoint_name(out.id), check))
                self.adj[out.id] = name(self._adjoint_name(out.id))
            else:
                self.stmts.append(gast.Expr(check))
            return
        seed = self._call(runtime.unit_seed, out)
        if out_active:
            self.stmts.append(assign(self._adjoint_name(out.id), seed))
            self.adj[out.id] = name(self._adjoint_name(out.id))
        else:
            self.stmts.append(gast.Expr(seed))

    def _adjoint_of(self, stmt):
        target = stmt.targets[0].id
        dt = self.adj.get(target)
        if dt is None:
            return
        op = self.ops[id(stmt)]
        if op.kind == "copy":
            self.accumulate(op.args["x"].id, dt)
        elif op.kind == "rule":
            self._apply_rule(op, target, dt)
        elif op.kind == "tuple":
            raise self.ctx.location.error(
                UnsupportedSyntaxError, stmt, "srcgrad does not support building a tuple of "
                "differentiated values here yet"
            )

    def _apply_rule(self, op, target, dt):
        rule = op.rule
        template = rule.vjp()
        wanted = [
            p for p in template.outputs
            if isinstance(op.args.get(p), gast.Name) and op.args[p].id in self.active
        ]
        if not wanted:
            return
        env = {}
        for tname, role in template.names.items():
            if role == "y":
                env[tname] = name(target)
            elif role == "dy":
                env[tname] = dt
            elif role.startswith("p:"):
                env[tname] = op.args.get(role[2:], gast.Constant(None, None))
        prelude, exprs = instantiate(template, env, self.ctx, wanted)
        self.stmts.extend(prelude)
        for p in wanted:
            contrib = exprs[p]
            if rule.broadcast and self._may_broadcast(op, p):
                contrib = self._call(runtime.unbroadcast, contrib, name(op.args[p].id))
            self.accumulate(op.args[p].id, contrib)

    @staticmethod
    def _may_broadcast(op, param):
        """Whether another operand may have broadcast this one to a larger shape."""
        params = op.rule.signature.parameters
        others = [
            op.args[p] for p, spec in params.items()
            if p != param and p in op.args and spec.default is spec.empty
        ]
        return any(not isinstance(o, gast.Constant) for o in others)
