"""Forward mode: the primal with each active statement followed by the statement of its tangent.

Requires: an A-normal-form body ending in ``return atom``, the active variables and the
:class:`Op` of every assignment (the same front half as reverse mode). Guarantees: one function
that takes the tangents of the ``wrt`` arguments as an extra last parameter and returns the value
and its tangent (or the tangent alone). Tangents are the sum of the rule's per-operand
contributions for the active operands only; an inactive operand contributes nothing and nothing is
built for it. The tangents of one source line follow its primal statements under a
``# tangent of:`` comment quoting that line. A tangent that is just a name is aliased, not copied.
An output that does not depend on ``wrt`` has the tangent ``zeros_like(output)``.

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

import gast

from .. import runtime
from ..emit.unparse import comment
from .templates import instantiate


def name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)


class ForwardAD:
    """Builds the forward-mode (JVP) function of one normalized function.

    ``with_value`` returns ``(value, tangent)``; without it only the tangent is returned (a
    Hessian-vector product is the tangent of a gradient).
    """

    def __init__(self, ctx, ops, active, source_lines, wrt, out_name, as_tuple=False,
                 with_value=True):
        self.ctx = ctx
        self.ops = ops
        self.active = active
        self.source_lines = source_lines
        self.wrt = wrt
        self.out_name = out_name
        self.as_tuple = as_tuple or len(wrt) > 1
        self.with_value = with_value
        self.tan = {}  # variable -> expression of its tangent (a name, after aliasing)
        self.tan_names = {}  # variable -> the name its tangent is stored under

    def run(self, fn_node):
        body, ret = fn_node.body[:-1], fn_node.body[-1]
        tangent = self.ctx.namer.fresh("tangent")
        seeds = self._seed_inputs(tangent)
        new_body = seeds + self._block(body)
        out = ret.value
        dout = self._tangent_or_zeros(out)
        result = gast.Tuple([out, dout], gast.Load()) if self.with_value else dout
        fn_node.body = new_body + [gast.Return(result)]
        fn_node.name = self.out_name
        args = fn_node.args
        args.args.append(gast.Name(tangent, gast.Param(), None, None))
        args.defaults = []
        return fn_node

    # --- building blocks ------------------------------------------------------------------------
    def _call(self, fn, *args):
        helper = name(self.ctx.global_name(fn, fn.__name__))
        return gast.Call(helper, list(args), [])

    def _tangent_name(self, var):
        if var not in self.tan_names:
            self.tan_names[var] = self.ctx.namer.adjoint(var)
        return self.tan_names[var]

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
                target = self._tangent_name(param)
                stmts.append(assign(target, check))
                self.tan[param] = name(target)
            else:
                stmts.append(gast.Expr(check))
        return stmts

    # --- the body -------------------------------------------------------------------------------
    def _block(self, body):
        """Primal statements in order; the tangents of a source line follow its last statement.

        A tangent is deferred to the end of its line's run of statements only while no later
        primal statement of the run rebinds a name the deferred tangents read.
        """
        out = []
        pending = []
        line = None

        def flush():
            if pending:
                out.append(comment("tangent of: " + self._line(line)))
                out.extend(pending)
                pending.clear()

        for stmt in body:
            lineno = getattr(stmt, "lineno", None)
            if lineno != line or _rebinds(stmt, pending):
                flush()
                line = lineno
            out.append(stmt)
            if isinstance(stmt, gast.Assign) and stmt.targets[0].id in self.active:
                pending.extend(self._tangent_of(stmt))
        flush()
        return out

    def _tangent_of(self, stmt):
        target = stmt.targets[0].id
        op = self.ops[id(stmt)]
        if op.kind == "copy":
            source = op.args["x"].id
            self.tan[target] = self.tan[source]
            return []
        if op.kind == "tuple":
            return self._set(target, gast.Tuple(
                [self._tangent_or_zeros(e) for e in op.args.values()], gast.Load()
            ), [])
        if op.kind == "rule":
            return self._apply_rule(op, target)
        return []

    def _tangent_or_zeros(self, atom):
        if isinstance(atom, gast.Name) and atom.id in self.tan:
            return self.tan[atom.id]
        return self._call(runtime.zeros_like, atom)

    def _set(self, target, value, prelude):
        if isinstance(value, (gast.Name, gast.Constant)) and not prelude:
            self.tan[target] = value
            return []
        dname = self._tangent_name(target)
        self.tan[target] = name(dname)
        return prelude + [assign(dname, value)]

    def _apply_rule(self, op, target):
        rule = op.rule
        template = rule.jvp()
        active = [
            p for p in rule.signature.parameters
            if isinstance(op.args.get(p), gast.Name) and op.args[p].id in self.tan
        ]
        env = {}
        for tname, role in template.names.items():
            if role == "y":
                env[tname] = name(target)
            elif role.startswith("p:"):
                env[tname] = op.args.get(role[2:], gast.Constant(None, None))
            elif role.startswith("t:"):
                atom = op.args.get(role[2:])
                env[tname] = (
                    self.tan[atom.id] if role[2:] in active else gast.Constant(None, None)
                )
        if "*" in template.outputs:
            prelude, exprs = instantiate(template, env, self.ctx, ["*"])
            value = exprs["*"]
            covered = True
        else:
            wanted = [p for p in active if p in template.outputs]
            if not wanted:
                return []
            prelude, exprs = instantiate(template, env, self.ctx, wanted)
            value = exprs[wanted[0]]
            for p in wanted[1:]:
                value = _plus(value, exprs[p])
            covered = not rule.broadcast or _has_output_shape(template, wanted, op)
        value = _SliceSyntax(self.ctx.namespace).visit(value)
        if not covered:
            value = self._call(runtime.unbroadcast, value, name(target))
        return self._set(target, value, prelude)


def _plus(total, term):
    """``total + term``, written ``total - t`` when ``term`` is ``-t``."""
    if isinstance(term, gast.UnaryOp) and isinstance(term.op, gast.USub):
        return gast.BinOp(total, gast.Sub(), term.operand)
    return gast.BinOp(total, gast.Add(), term)


def _has_output_shape(template, wanted, op):
    """Whether the sum of the contributions of ``wanted`` has the shape of the result.

    A contribution has the shape of everything it reads (tangents have their primal's shape), so
    the sum has the result's shape when it reads the result or every operand that may broadcast.
    """
    read = set()
    for p in wanted:
        for node in gast.walk(template.outputs[p]):
            if isinstance(node, gast.Name):
                role = template.names.get(node.id, "")
                if role == "y":
                    return True
                if role[:2] in ("p:", "t:"):
                    read.add(role[2:])
    params = op.rule.signature.parameters
    shaped = [
        p for p, spec in params.items()
        if spec.default is spec.empty and p in op.args and not isinstance(op.args[p], gast.Constant)
    ]
    return all(p in read for p in shaped)


def _rebinds(stmt, pending):
    """Whether ``stmt`` assigns a name that one of the ``pending`` statements reads."""
    if not pending or not isinstance(stmt, gast.Assign):
        return False
    target = stmt.targets[0].id
    return any(
        isinstance(n, gast.Name) and n.id == target for s in pending for n in gast.walk(s)
    )


class _SliceSyntax(gast.NodeTransformer):
    """``dx[slice(1, None, None)]`` -> ``dx[1:]``: an index reads as the user wrote it."""

    def __init__(self, namespace):
        self.namespace = namespace

    def visit_Subscript(self, node):
        self.generic_visit(node)
        node.slice = self._index(node.slice)
        return node

    def _index(self, index):
        if isinstance(index, gast.Tuple):
            return gast.Tuple([self._index(e) for e in index.elts], gast.Load())
        if (
            isinstance(index, gast.Call)
            and isinstance(index.func, gast.Name)
            and index.func.id == "slice"
            and self.namespace.lookup("slice") is builtins.slice
            and len(index.args) == 3
            and not index.keywords
        ):
            lower, upper, step = (
                None if isinstance(a, gast.Constant) and a.value is None else a for a in index.args
            )
            return gast.Slice(lower, upper, step)
        return index
