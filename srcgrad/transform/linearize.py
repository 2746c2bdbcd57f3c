"""Linearize: a jvp split into a primal that runs once and a tangent map to call again.

Requires: the finished forward-mode function of mode ``"linearize"`` (a jvp whose tangent is not
a parameter), after the optimizer. Guarantees: the function runs the primal and returns
``(value, jvp_fn)``, where ``jvp_fn(tangent)`` returns the output's tangent and gives the same
answer on every call.

A statement belongs to ``jvp_fn`` when it reads the tangent or a value computed from it; the
others are the primal, run once. That split is exact when the body is straight-line code whose
values are each bound once and never written in place: then ``jvp_fn`` reads, through its
closure, exactly the values its statements read in the jvp. A body with loops or branches
interleaves per-iteration primal values with their tangents; there the primal records, per
trip, the values the tangent statements read, and ``jvp_fn`` loops over the records
(``_Loops``); where that would not be exact (a loop in an ``if``, a write in place) ``jvp_fn``
calls the function's jvp on copies of the arguments (a primal per call), as a comment in the
generated code says.

    def f_jvp(x, tangent):                  def f_linearize(x):
        dx = check_tangent(tangent, x)          y = np.sin(x)
        y = np.sin(x)                   ->      def jvp_fn(tangent):
        dy = dx * np.cos(x)                         dx = check_tangent(tangent, x)
        return (y, dy)                              dy = dx * np.cos(x)
                                                    return dy
                                                return (y, jvp_fn)
"""

from __future__ import annotations

import copy

import gast

from .. import runtime
from ..astutil import param_names, store_counts, walk
from ..emit import naming
from ..emit.unparse import is_comment
from ..errors import UnsupportedSyntaxError
from .nodes import assign, call, name
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
    split = _split(body, ctx) or _Loops(_unshared(body), ctx).split()
    if split is not None and _names_in([value]) & _stored(split[1]):
        split = None  # the value is computed beside its tangent (a recursive helper's pair)
    if split is None:
        if ctx.static:
            raise _unsplit_refusal(fn_node, body, ctx)
        keeping, inner_def = rerun(fn_node, ctx, inner, "jvp", RERUN_JVP, 1)
        paired = _names_in([value]) & _tangent_names(body, ctx.seed)
        primal = [keeping] + _primal_only(body, ctx.seed)
        if paired:
            # the value comes out of a call computing a tangent beside it (a recursive
            # helper's pair): the jvp once more, along zeros
            value = ctx.namer.fresh(naming.LINEARIZED)
            primal = [keeping, assign(value, _along_zeros(inner_def, keeping, ctx))]
            value = name(value)
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


def _unsplit_refusal(fn_node, body, ctx):
    """The error for a jvp of a function given functions that linearize cannot split: ``jvp_fn``
    would call the jvp again on copies of the arguments, and the jvp made per function passed
    is not one it can call. Located at the first loop, branch or write in place of the user's
    function (at its ``def`` where there is none)."""
    user = getattr(ctx.fn, "__name__", fn_node.name)
    node, why = fn_node, "its tangent cannot be split from the primal"
    for stmt in body:
        if isinstance(stmt, (gast.For, gast.While, gast.If)):
            node, why = stmt, "a loop or branch interleaves the primal and its tangent"
            break
        if _writes(stmt, ctx):
            node, why = stmt, "the primal writes into a value in place"
            break
    return ctx.location.error(
        UnsupportedSyntaxError, node,
        f"linearize of {user}, which is called with functions, is not supported here: {why}, "
        f"so each call of its jvp_fn would rerun the jvp; call jvp(...) once per tangent instead",
    )


def _unshared(stmts):
    """A copy of ``stmts`` in which no two statements share a node (the jvp may put one name
    node in a primal statement and in its tangent: ``_Loops`` renames a tangent statement's
    reads in place, which must not rename the primal's)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.For, gast.While, gast.If)):
            fresh = copy.copy(stmt)
            for field in ("target", "iter", "test"):
                if hasattr(stmt, field):
                    setattr(fresh, field, copy.deepcopy(getattr(stmt, field)))
            fresh.body, fresh.orelse = _unshared(stmt.body), _unshared(stmt.orelse)
            out.append(fresh)
        else:
            out.append(copy.deepcopy(stmt))
    return out


def _along_zeros(inner_def, keeping, ctx):
    """``f_jvp(x_kept, ..., zeros)[0]``: the value, from the call ``jvp_fn`` makes, its tangent
    zeros shaped like the selected arguments."""
    called = copy.deepcopy(inner_def.body[-1].value)  # f_jvp(x_kept, ..., tangent)[1]
    kept = {v.id: k.id for v, k in zip(keeping.value.args[0].elts, keeping.targets[0].elts)}
    zeros = [call(ctx, runtime.zeros_like, name(kept[w])) for w in ctx.wrt]
    tangent = zeros[0] if len(zeros) == 1 and not ctx.as_tuple else gast.Tuple(zeros, gast.Load())
    called.value.args[-1] = tangent
    called.slice = gast.Constant(0, None)
    return called


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


class _Loops:
    """The split of a jvp whose loops have straight-line bodies: the primal runs each loop once
    and appends, per trip, the primal values its tangent statements read (``x_2 = x`` where
    they read ``x``, a name a later statement rebinds); ``jvp_fn`` loops over those records. A
    loop in a trip appends its records to a list made on each trip, which goes on the trip's
    record.
    A top-level tangent statement reading a name rebound later reads a copy of the name taken
    where it stood. ``split()`` is None where this would not be exact: other control flow, a
    loop test or target that depends on the tangent, a primal statement writing in place, a
    tangent statement writing into a primal value."""

    def __init__(self, body, ctx):
        self.body, self.ctx = body, ctx
        self.tangent = _tangent_names(body, ctx.seed)

    def split(self):
        if not all(_simple(s) or _plain_if(s) or _plain_loop(s) for s in self.body):
            return None
        if not self._exact():
            return None
        primal, tangent_stmts = [], []
        for k, item in enumerate(self.body):
            later = _stored(self.body[k + 1:])
            if isinstance(item, (gast.For, gast.While)):
                self._loop(item, later, primal, tangent_stmts)
            else:
                body, swept = self._block([item], "top", later)
                primal += body
                tangent_stmts += swept
        return primal, tangent_stmts

    def _exact(self):
        for stmt in walk(gast.Module(self.body, [])):
            if isinstance(stmt, (gast.For, gast.While, gast.If)):
                head = [stmt.target, stmt.iter] if isinstance(stmt, gast.For) else [stmt.test]
                if _names_in(head) & self.tangent:
                    return False
            elif _simple(stmt) and not is_comment(stmt):
                if self._is_tangent(stmt):
                    if _written_bases(stmt, self.ctx) - self.tangent:
                        return False
                elif _writes(stmt, self.ctx):
                    return False
        return True

    def _is_tangent(self, stmt):
        if is_comment(stmt):
            return "tangent of:" in stmt.value.value
        return bool(_names_in([stmt]) & self.tangent)

    def _captured(self, stmt, rebound, current=None, kept=None):
        """``x_2 = x`` for each primal name ``stmt`` reads that is in ``rebound``, its reads
        renamed (``current``: the copies taken earlier in the same trip, reused; ``kept``: the
        names the trip's record may hold as they are, which get a name but no copy)."""
        current = {} if current is None else current
        out = []
        for v in sorted((_loaded([stmt]) - self.tangent) & rebound):
            if v not in current:
                current[v] = self.ctx.namer.fresh(v)
                if kept is None or v not in kept:
                    out.append(assign(current[v], name(v)))
        for n in walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in current:
                n.id = current[n.id]
        return out

    def _trip(self, loop, rebound):
        """The loop's primal body with its copies, its tangent statements, the record of a
        trip ((primal name, the name ``jvp_fn`` reads it by) in order) and the copies made in
        a branch (bound to None before the loop: a trip may not take their branch)."""
        deleted = {n.id for n in walk(gast.Module(loop.body, []))
                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)}
        record, branched = [], []
        self.jumps = []
        # a trip that may end at a break or continue: every name on its record is a copy,
        # bound before the loop (the record is appended where the trip ends)
        where = "branch" if _own_jump(loop.body) else "trip"
        body, swept = self._block(loop.body, where, rebound, deleted, {}, record, branched)
        return body, swept, record, branched

    def _block(self, stmts, where, rebound, deleted=(), current=None, record=None,
               branched=None):
        """``stmts`` as primal statements and tangent statements. ``where``: "top" (outside
        loops: a name rebound later is copied where it stands), "trip" (a loop's body: copies
        on the trip's record, a name not rebound later in the trip recorded as it is) or
        "branch" (a side of an ``if`` in a trip: copies on the record, listed in
        ``branched``)."""
        current = {} if current is None else current
        body, swept = [], []
        for j, stmt in enumerate(stmts):
            later = _stored(stmts[j + 1:])
            if isinstance(stmt, gast.If):
                self._branch(stmt, where, rebound | (later if where == "top" else set()),
                             deleted, current, record, branched, body, swept)
            elif isinstance(stmt, (gast.For, gast.While)) and where == "top":  # in an if
                self._loop(stmt, rebound | later, body, swept)
            elif isinstance(stmt, (gast.For, gast.While)):  # a loop in a trip
                self._inner(stmt, rebound, body, swept, record, current,
                            branched if where == "branch" else None)
            elif _jump(stmt):  # the trip's record, then the break or continue, in both
                self.jumps.append(gast.Expr(gast.Constant(None, None)))
                body += [self.jumps[-1], stmt]
                swept.append(copy.deepcopy(stmt))
            elif self._is_tangent(stmt):
                if where == "top":
                    body += self._captured(stmt, rebound | later)
                else:
                    # at a trip's top level, a name not rebound later in the trip goes on the
                    # record as it is
                    kept = rebound - later - set(deleted) if where == "trip" else None
                    before = dict(current)
                    taken = self._captured(stmt, rebound, current, kept)
                    body += taken
                    record += [(v, current[v]) for v in current if v not in before]
                    if where == "branch":
                        branched += [s.targets[0].id for s in taken]
                swept.append(stmt)
            else:
                body.append(stmt)
                for v in _stored([stmt]):
                    current.pop(v, None)
        return body, swept

    def _branch(self, stmt, where, rebound, deleted, current, record, branched, body, swept):
        """An ``if`` (simple statements on both sides): the primal's if, and, when a side has
        tangent statements, ``jvp_fn``'s if on the same test."""
        if not _own_jump(stmt.body + stmt.orelse) and not any(
                self._is_tangent(s) and not is_comment(s) for s in stmt.body + stmt.orelse):
            body.append(stmt)
            for v in _stored([stmt]):
                current.pop(v, None)
            return
        test = gast.Expr(copy.deepcopy(stmt.test))
        if where == "top":  # (the branches may rebind what the test reads)
            body += self._captured(test, rebound | _stored([stmt]))
        else:
            before = dict(current)
            taken = self._captured(test, rebound, current)
            body += taken
            record += [(v, current[v]) for v in current if v not in before]
            if where == "branch":
                branched += [s.targets[0].id for s in taken]
        inner = "top" if where == "top" else "branch"
        sides = [self._block(side, inner, rebound, deleted, dict(current), record, branched)
                 for side in (stmt.body, stmt.orelse)]
        body.append(gast.If(stmt.test, sides[0][0] or [gast.Pass()], sides[1][0]))
        swept.append(gast.If(test.value, sides[0][1] or [gast.Pass()], sides[1][1]))
        for v in _stored([stmt]):
            current.pop(v, None)

    def _inner(self, loop, rebound, body, swept, record, current, branched=None):
        """A loop in the trip of another: its records go in a list made on each outer trip,
        which is itself on the outer trip's record. With ``branched`` (the outer trip may end
        at a jump before the list is made, its record appended there), the list's name is bound
        to None before the outer loop; ``jvp_fn`` jumps at the same place, not reading it."""
        jumps = self.jumps
        saved = self._loop(loop, rebound, body, swept)
        self.jumps = jumps
        if saved is not None:
            record.append((saved, saved))
            if branched is not None:
                branched.append(saved)
        for v in _stored([loop]):
            current.pop(v, None)

    def _loop(self, loop, later, primal, tangent_stmts):
        """The loop, appending its records (``primal``), and ``jvp_fn``'s loop over them
        (``tangent_stmts``); the name of the records' list (None: no tangent statement)."""
        rebound = _stored(loop.body) | later
        if isinstance(loop, gast.For):
            rebound |= {n.id for n in walk(loop.target) if isinstance(n, gast.Name)}
        body, swept, record, branched = self._trip(loop, rebound)
        if not any(not is_comment(s) for s in swept):
            loop.body = body
            primal.append(loop)
            return None
        saved = self.ctx.namer.fresh(naming.LOOP_SAVED)
        copies = _stored(body)  # (a copy's fresh name is bound only where it is taken)
        elts = [name(copy if copy in copies else v) for v, copy in record]
        append = gast.Attribute(name(saved), "append", gast.Load())
        for at in self.jumps + [gast.Expr(None)]:
            at.value = gast.Call(copy.deepcopy(append), [gast.Tuple(copy.deepcopy(elts),
                                                                    gast.Load())], [])
        loop.body = body + [at]
        primal += [assign(saved, gast.List([], gast.Load()))]
        primal += [assign(v, gast.Constant(None, None)) for v in branched]
        primal.append(loop)
        target = gast.Tuple([gast.Name(c, gast.Store(), None, None) for _, c in record],
                            gast.Store()) if record else gast.Name("_", gast.Store(), None, None)
        tangent_stmts.append(gast.For(target, name(saved), swept, [], None))
        return saved


def _simple(stmt):
    return isinstance(stmt, (gast.Assign, gast.Expr, gast.Delete, gast.Pass))


def _jump(stmt):
    return isinstance(stmt, (gast.Break, gast.Continue))


def _plain_if(stmt, jumps=False):
    """An ``if`` of simple statements, plain loops and ifs of the same (and, with ``jumps``,
    breaks and continues of the loop around it)."""
    return isinstance(stmt, gast.If) and all(
        _simple(s) or jumps and _jump(s) or _plain_loop(s) or _plain_if(s, jumps)
        for s in stmt.body + stmt.orelse)


def _plain_loop(stmt):
    """A loop of simple statements, ifs of them, breaks and continues, and loops of the
    same."""
    if not isinstance(stmt, (gast.For, gast.While)) or stmt.orelse:
        return False
    return all(_simple(s) or _jump(s) or _plain_if(s, jumps=True) or _plain_loop(s)
               for s in stmt.body)


def _own_jump(body):
    """Whether a ``break`` or ``continue`` of the loop with this body is in it (at its top
    level or in its ifs, at any depth; not in its inner loops)."""
    return any(_jump(s) or isinstance(s, gast.If) and _own_jump(s.body + s.orelse)
               for s in body)


def _names_in(nodes):
    return {n.id for node in nodes for n in walk(node) if isinstance(n, gast.Name)}


def _tangent_names(body, seed):
    """The tangent's names: those a statement (anywhere) reading one of them binds."""
    tangent = {seed}
    simple = [s for s in walk(gast.Module(body, [])) if _simple(s)]
    grew = True
    while grew:
        grew = False
        for stmt in simple:
            if _names_in([stmt]) & tangent and not _stored([stmt]) <= tangent:
                tangent |= _stored([stmt])
                grew = True
    return tangent


def _written_bases(stmt, ctx):
    """The names whose values ``stmt`` may change in place (all of its names where it is not
    one helper call or method call on a name)."""
    if not _writes(stmt, ctx):
        return set()
    bases = set()
    for node in walk(stmt):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.args:
            helper = ctx.extras.get(node.func.id)
            if any(helper is h for h in IN_PLACE):
                if not isinstance(node.args[0], gast.Name):
                    return _names_in([stmt])
                bases.add(node.args[0].id)
        elif isinstance(node, (gast.Subscript, gast.Attribute, gast.AugAssign)) or (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
        ):
            return _names_in([stmt])
    return bases
