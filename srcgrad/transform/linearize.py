"""Linearize: a jvp split into a primal that runs once and a tangent map to call again.

Requires: the finished forward-mode function of mode ``"linearize"`` (a jvp whose tangent is not
a parameter), after the optimizer. Guarantees: the function runs the primal and returns
``(value, jvp_fn)``, where ``jvp_fn(tangent)`` returns the output's tangent and gives the same
answer on every call.

A statement belongs to ``jvp_fn`` when it reads the tangent or a value computed from it; the
others are the primal, run once. That split is exact when the body is straight-line code whose
values are each bound once and never written in place: then ``jvp_fn`` reads, through its
closure, exactly the values its statements read in the jvp. A body with a loop or a branch
interleaves per-iteration primal values with their tangents; there ``jvp_fn`` calls the
function's jvp on copies of the arguments (a primal per call), as a comment in the generated code
says.

    def f_jvp(x, tangent):                  def f_linearize(x):
        dx = check_tangent(tangent, x)          y = np.sin(x)
        y = np.sin(x)                   ->      def jvp_fn(tangent):
        dy = dx * np.cos(x)                         dx = check_tangent(tangent, x)
        return (y, dy)                              dy = dx * np.cos(x)
                                                    return dy
                                                return (y, jvp_fn)
"""

from __future__ import annotations

import gast

from ..astutil import param_names, store_counts, walk
from ..emit import naming
from ..emit.unparse import is_comment
from .nodes import name
from .pullback import IN_PLACE, MUTATING_METHODS, owned, rerun, without_dels

RERUN_JVP = (
    "a loop or branch interleaves the primal and its tangent: each call reruns the jvp,",
    "on copies of the arguments made when linearize's function was called",
)


def run(fn_node, ctx):
    """The pass: the jvp-shaped ``fn_node`` as a primal returning ``(value, jvp_fn)``."""
    body, ret = fn_node.body[:-1], fn_node.body[-1]
    value, dout = ret.value.elts
    inner = ctx.namer.fresh(naming.JVP_FN)
    split = _split(body, ctx)
    if split is None:
        keeping, inner_def = rerun(fn_node, ctx, inner, "jvp", RERUN_JVP, 1)
        primal = [keeping] + _primal_only(body, ctx.seed)
    else:
        primal, tangent_stmts = split
        outside = param_names(fn_node, packed=True) | _stored(primal)
        primal = without_dels(primal, _loaded(tangent_stmts))
        tangent_stmts = without_dels(tangent_stmts, outside)
        dout = owned(dout, tangent_stmts, ctx, outside)
        args = gast.arguments([gast.Name(ctx.seed, gast.Param(), None, None)], [], None, [], [],
                              None, [])
        inner_def = gast.FunctionDef(inner, args, tangent_stmts + [gast.Return(dout)], [], None,
                                     None, [])
    fn_node.body = primal + [inner_def, gast.Return(gast.Tuple([value, name(inner)],
                                                               gast.Load()))]
    return fn_node


def _split(body, ctx):
    """``(primal, tangent statements)``, or None where the split would not be exact."""
    tangent = {ctx.seed}
    primal, tangent_stmts = [], []
    pending = []  # comments: they go with the statement after them
    for stmt in body:
        if is_comment(stmt):
            pending.append(stmt)
            continue
        if not isinstance(stmt, (gast.Assign, gast.Expr, gast.Delete)):
            return None  # control flow
        names = {n.id for n in walk(stmt) if isinstance(n, gast.Name)}
        reads = names - _stored([stmt]) if not isinstance(stmt, gast.Delete) else names
        if reads & tangent:
            tangent |= _stored([stmt])
            tangent_stmts += pending + [stmt]
        else:
            if _writes(stmt, ctx):
                return None
            primal += pending + [stmt]
        pending = []
    counts = store_counts(gast.Module(body, []))
    shared = _loaded(tangent_stmts) & _stored(primal)
    if any(counts[v] > 1 for v in shared) or _stored(primal) & _stored(tangent_stmts):
        return None
    return primal, tangent_stmts + pending


def _primal_only(body, seed):
    """``body`` without the statements that compute tangents (each reads the tangent or a value
    computed from it, the whole body over, loops included), nor the ``del`` of tangents."""
    tangent = {seed}
    simple = [s for s in walk(gast.Module(body, []))
              if isinstance(s, (gast.Assign, gast.Expr, gast.AugAssign))]
    grew = True
    while grew:
        grew = False
        for stmt in simple:
            if {n.id for n in walk(stmt) if isinstance(n, gast.Name)} & tangent:
                more = _stored([stmt]) - tangent
                if more:
                    tangent |= more
                    grew = True
    return _drop(body, tangent)


def _drop(stmts, tangent):
    """``stmts`` without the statements and ``del`` targets of the ``tangent`` names."""

    def reads_tangent(stmt):
        if is_comment(stmt):
            return "tangent of:" in stmt.value.value
        return isinstance(stmt, (gast.Assign, gast.Expr, gast.AugAssign)) and bool(
            {n.id for n in walk(stmt) if isinstance(n, gast.Name)} & tangent
        )

    return without_dels(stmts, tangent, reads_tangent)


def _writes(stmt, ctx):
    """Whether a primal statement changes a value in place."""
    for node in walk(stmt):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            helper = ctx.extras.get(node.func.id)
            if any(helper is h for h in IN_PLACE):
                return True
        if (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in MUTATING_METHODS + ("pop",)
        ):
            return True
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(
            node.ctx, (gast.Store, gast.Del)
        ):
            return True
        if isinstance(node, gast.AugAssign):
            return True
    return False


def _stored(stmts):
    return {
        n.id for n in walk(gast.Module(stmts, []))
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
    }


def _loaded(stmts):
    return {
        n.id for n in walk(gast.Module(stmts, []))
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }
