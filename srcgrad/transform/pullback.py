"""Pullback: a vjp split at its seed into a primal that runs once and a sweep to call again.

Requires: the finished reverse-mode function of mode ``"pullback"`` (a vjp whose seed is not a
parameter: the statement ``d<out> = check_seed(seed, <out>)`` starts its sweep), after the
optimizer. Guarantees: the function runs the primal and returns ``(value, back)`` (``(value,
back, aux)`` with ``has_aux``), where ``back(seed)`` is the adjoint sweep as a nested function.
``back`` gives the same gradient on every call: it never consumes what the primal kept.

- What the sweep rebinds or deletes (restored variables, its stacks) is bound as a default of
  ``back`` (``x=x``): each call starts from the values the primal left. Names it only reads
  are read through the closure.
- A stack the sweep pops is copied once per call (``loop_saved = list(loop_saved)``): a list of
  references, a fraction of the primal's cost.
- A sweep that undoes writes in place (``restore_item``, ``list_pop``) would find the primal's
  arrays and lists changed by its first call. Where every such write is a runtime helper, each
  goes through an undo log (``undo.restore_item(y, i, saved)``, runtime/undo.py) that copies
  the array or list the first time the call writes into it, and ``back`` puts them back before
  it returns (``finally``): the objects keep their identity, so aliases see what they see in
  the vjp, and no primal runs again. The reverse transform writes in place through those
  helpers only; a sweep writing otherwise is refused (``UNREUSABLE``), never rerun.
- A returned gradient that may be a value the primal kept is returned as ``copy_grad(g)``: the
  caller may update it in place without changing what the next call returns.

    def f_vjp(x, seed):                     def f_pullback(x):
        y = np.sin(x)                           y = np.sin(x)
        # grad of: return np.sin(x)             def back(seed):
        dy = check_seed(seed, y)        ->          # grad of: return np.sin(x)
        dx = dy * np.cos(x)                         dy = check_seed(seed, y)
        return dx                                   dx = dy * np.cos(x)
                                                    return dx
                                                return y, back
"""

from __future__ import annotations

import builtins
import copy

import gast

from .. import runtime, transforms
from ..astutil import param_names, walk
from ..context import Options
from ..emit import naming
from ..emit.unparse import comment, is_comment
from ..errors import SrcgradError
from ..optimize.owned import FRESH_RESULT, PASSES_ON
from ..runtime import containers, lists
from ..runtime.undo import LOGGED, Undo
from . import recomputed
from .nodes import assign, name

# helpers that change a primal value in place: a sweep calling them is not rerun on its state
IN_PLACE = (runtime.restore_item, runtime.setitem) + tuple(
    getattr(module, attr) for module in (containers, lists) for attr in dir(module)
    if attr.startswith("list_") and callable(getattr(module, attr))
)


# methods that change their object (``pop`` is the stacks': they are copied)
MUTATING_METHODS = (
    "append", "extend", "insert", "remove", "clear", "update", "setdefault", "popitem", "sort",
    "reverse", "fill", "resize", "put", "itemset", "__setitem__", "__delitem__",
)


def run(fn_node, ctx):
    """The pass: the vjp-shaped ``fn_node`` as a primal returning ``(value, back)``."""
    body, ret = fn_node.body[:-1], fn_node.body[-1]
    start, value = _split(body, ctx)
    primal, sweep = body[:start], body[start:]
    grads, aux = ret.value, None
    if ctx.aux is not None:  # the vjp-shaped result is (gradients, aux)
        grads, aux = ret.value.elts
    back = ctx.namer.fresh(naming.BACK)
    surely = param_names(fn_node, packed=True) | _surely_bound(primal)
    bound = surely | _stored(primal, deleted=False)
    stacks = _popped(sweep) - _own_lists(sweep, ctx)
    read = exposed_reads(sweep)[1]  # (a name the sweep binds before it reads it is its own)
    writes = _in_place(sweep, ctx)
    if _in_place(sweep, ctx, logged=True) or not stacks <= surely or read & _deleted(primal):
        # (the reverse transform writes in place through the logged helpers only, binds its
        # stacks at the top and deletes nothing the sweep reads before binding it: see
        # UNREUSABLE)
        raise SrcgradError(UNREUSABLE.format(fn_node.name))
    if not writes:  # (a value the sweep restores in place is not the primal's last one)
        recomputed.run(primal, sweep, ctx, surely)  # what each call would compute again
    back_def, defaults = _reusable(sweep, grads, ctx, back, bound, stacks)
    if writes:
        _logging(back_def, ctx)
    # a name the sweep rebinds that the primal may leave unbound (assigned in a branch): None
    # until then, so that ``back`` can take it as a default
    primal[:0] = [assign(v, gast.Constant(None, None)) for v in defaults if v not in surely]
    out = [value, name(back)] + ([aux] if aux is not None else [])
    fn_node.body = primal + [back_def, gast.Return(gast.Tuple(out, gast.Load()))]
    return fn_node


def _split(body, ctx):
    """The index of the sweep's first statement (its ``# grad of:`` comment) and the output."""
    check = ctx.global_name(runtime.check_seed, "check_seed")
    for k, stmt in enumerate(body):
        for node in walk(stmt):
            if (
                isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == check and node.args
                and isinstance(node.args[0], gast.Name) and node.args[0].id == ctx.seed
            ):
                while k > 0 and is_comment(body[k - 1]):
                    k -= 1
                return k, node.args[1]
    raise SrcgradError("internal error: the pullback found no seed in the generated vjp")


def _in_place(sweep, ctx, logged=False):
    """Whether the sweep changes a value of the primal in place (a list the sweep builds
    itself, such as the snapshots of a checkpointed loop, is its own); with ``logged``, in a
    way an ``Undo`` cannot log (the list helpers of runtime/lists.py return new lists)."""
    adjoints = set(ctx.adjoint_names.values()) | _own_lists(sweep, ctx)
    for node in walk(gast.Module(sweep, [])):
        if _writing_helper(node, ctx, logged):
            return True
        if (
            isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr in MUTATING_METHODS
            and not (isinstance(node.func.value, gast.Name) and node.func.value.id in adjoints)
        ):
            return True
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, (gast.Store, gast.Del)):
            base = node.value
            while isinstance(base, gast.Subscript):
                base = base.value
            if not (isinstance(base, gast.Name) and base.id in adjoints):
                return True
        if isinstance(node, gast.Attribute) and isinstance(node.ctx, (gast.Store, gast.Del)):
            return True
    return False


def _writing_helper(node, ctx, logged):
    """Whether ``node`` calls a runtime helper that writes in place (that an ``Undo`` cannot
    log, with ``logged``; the list helpers of runtime/lists.py return new lists)."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
        return False
    helper = ctx.extras.get(node.func.id)
    if not any(helper is h for h in IN_PLACE):
        return False
    return not logged or not (
        any(helper is h for h in LOGGED) or getattr(helper, "__module__", "") == lists.__name__
    )


def _own_lists(sweep, ctx):
    """Names the sweep only ever binds to a list or dict it builds there (``held = [...]``,
    ``kept = list(snapshots)``: a checkpointed loop's adjoint pops a copy of its snapshots)."""
    values = {}
    for node in walk(gast.Module(sweep, [])):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                for n in walk(target):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        fresh = target is n and _new_list(node.value, ctx)
                        values[n.id] = values.get(n.id, True) and fresh
        elif isinstance(node, (gast.For, gast.AugAssign)):
            for n in walk(node.target):
                if isinstance(n, gast.Name):
                    values[n.id] = False
    return {v for v, fresh in values.items() if fresh}


def _new_list(value, ctx):
    """Whether ``value`` is a list or dict made where it stands (a display, ``list(...)``)."""
    if isinstance(value, (gast.List, gast.Dict)):
        return True
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)):
        return False
    found = ctx.namespace.lookup(value.func.id)
    return found is builtins.list or found is builtins.dict


def _reusable(sweep, grads, ctx, back, bound, stacks):
    """``def back(seed, x=x, ...)``: the sweep, on its own copy of the stacks it pops."""
    sweep = without_dels(sweep, bound - _stored(sweep, deleted=False))
    exposed = exposed_reads(sweep)[1]
    defaults = sorted(((_stored(sweep) & exposed) | stacks) & bound, key=_first_use(sweep))
    listed = ctx.global_name(list, "list")
    copies = [assign(s, gast.Call(name(listed), [name(s)], [])) for s in defaults if s in stacks]
    if copies:
        copies.insert(0, comment("each call pops copies of the stacks: the primal's stay whole"))
    grads = owned(grads, sweep, ctx, bound)
    params = [gast.Name(v, gast.Param(), None, None) for v in [ctx.seed] + defaults]
    args = gast.arguments(params, [], None, [], [], None, [name(v) for v in defaults])
    body = copies + sweep + [gast.Return(grads)]
    return gast.FunctionDef(back, args, body, [], None, None, []), defaults


def _logging(back_def, ctx):
    """``back``'s writes in place through an undo log, rewound before it returns."""
    log = ctx.namer.fresh(naming.UNDO)
    for node in walk(back_def):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            helper = ctx.extras.get(node.func.id)
            method = next((m for h, m in LOGGED.items() if h is helper), None)
            if method is not None:
                node.func = gast.Attribute(name(log), method, gast.Load())
    start = [comment("the sweep restores the primal's values in place: it keeps each array or"),
             comment("list it writes into and puts them back before it returns (every call"),
             comment("starts from the values the primal left)"),
             assign(log, gast.Call(name(ctx.global_name(Undo, "Undo")), [], []))]
    rewind = gast.Expr(gast.Call(gast.Attribute(name(log), "rewind", gast.Load()), [], []))
    back_def.body = start + [gast.Try(back_def.body, [], [], [rewind])]


# A sweep ``back`` could not call again as it is. Once reached by a checkpointed loop's adjoint
# (the snapshots it pops: its own list since session 7), then by no program of the tests, the
# random-program hunts or the hand-written probes (session 8: loops in branches, while/break,
# user ``del``, object fields, dict and list methods, element writes in loops); where it was,
# ``back`` reran the whole vjp per call. Refused instead of answering wrong on a second call.
UNREUSABLE = (
    "internal error: the pullback of {} found a sweep that writes into the primal's values in "
    "a way its undo log does not record, or pops a stack the primal may not bind; call vjp once "
    "per seed instead, and report this function"
)


def rerun(fn_node, ctx, inner, mode, why, pick):
    """``x_kept, ... = deepcopy((x, ...))`` (for the top of the function) and ``def inner(seed)``
    returning ``pick`` (an index, or None) of the ``mode`` derivative called on those copies."""
    wrt = ctx.wrt if ctx.as_tuple or len(ctx.wrt) > 1 else ctx.wrt[0]
    derived = transforms.derived(ctx.fn, mode, wrt, Options(optimize=ctx.optimize,
                                                            has_aux=ctx.has_aux))
    called = ctx.global_name(derived, naming.DERIVED[mode].format(
        getattr(ctx.fn, "__name__", "f")))
    a = fn_node.args
    positional = [p.id for p in a.posonlyargs + a.args]
    keywords = [p.id for p in a.kwonlyargs]
    everything = positional + ([a.vararg.id] if a.vararg else []) + keywords \
        + ([a.kwarg.id] if a.kwarg else [])
    kept = {v: ctx.namer.fresh(naming.KEPT.format(v)) for v in everything}
    keeping = gast.Assign(
        [gast.Tuple([gast.Name(kept[v], gast.Store(), None, None) for v in everything],
                    gast.Store())],
        gast.Call(name(ctx.global_name(copy.deepcopy, "deepcopy")),
                  [gast.Tuple([name(v) for v in everything], gast.Load())], []),
        None,
    )
    call_args = [name(kept[v]) for v in positional]
    if a.vararg:
        call_args.append(gast.Starred(name(kept[a.vararg.id]), gast.Load()))
    call_args.append(name(ctx.seed))
    call_kw = [gast.keyword(v, name(kept[v])) for v in keywords]
    if a.kwarg:
        call_kw.append(gast.keyword(None, name(kept[a.kwarg.id])))
    result = gast.Call(name(called), call_args, call_kw)
    if pick is not None:
        result = gast.Subscript(result, gast.Constant(pick, None), gast.Load())
    body = [comment(line) for line in why] + [gast.Return(result)]
    args = gast.arguments([gast.Name(ctx.seed, gast.Param(), None, None)], [], None, [], [], None,
                          [])
    return keeping, gast.FunctionDef(inner, args, body, [], None, None, [])


def exposed_reads(stmts, bound=None, exposed=None):
    """Names ``stmts`` may read (or delete) before binding them, in execution order: a loop's
    body may run zero times, a branch binds what both of its sides bind. Returns the names
    surely bound after ``stmts`` and the exposed ones."""
    bound = set() if bound is None else bound
    exposed = set() if exposed is None else exposed
    for stmt in stmts:
        if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            _assignment(stmt, bound, exposed)
        elif isinstance(stmt, gast.Delete):
            deleted = {n for t in stmt.targets for n in _names(t, gast.Del)}
            exposed |= (deleted | {n for t in stmt.targets for n in _names(t, gast.Load)}) - bound
            bound -= deleted
        elif isinstance(stmt, gast.For):
            exposed |= _names(stmt.iter, gast.Load) - bound
            exposed_reads(stmt.body, bound | _names(stmt.target, gast.Store), exposed)
            exposed_reads(stmt.orelse, set(bound), exposed)
        elif isinstance(stmt, (gast.While, gast.If)):
            exposed |= _names(stmt.test, gast.Load) - bound
            then = exposed_reads(stmt.body, set(bound), exposed)[0]
            other = exposed_reads(stmt.orelse, set(bound), exposed)[0]
            if isinstance(stmt, gast.If):
                bound |= then & other
        elif isinstance(stmt, gast.With):  # (a manager may suppress an exception: what the
            # body binds may be unbound after it, but it reads in order what it bound itself)
            for item in stmt.items:
                exposed |= _names(item.context_expr, gast.Load) - bound
            inner = bound | {n for i in stmt.items if i.optional_vars is not None
                             for n in _names(i.optional_vars, gast.Store)}
            exposed_reads(stmt.body, inner, exposed)
        else:  # an expression, a return, anything else: read as a whole
            exposed |= {n.id for n in walk(stmt) if isinstance(n, gast.Name)} - bound
    return bound, exposed


def _assignment(stmt, bound, exposed):
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    exposed |= _names(stmt.value, gast.Load) - bound
    exposed |= {n for t in targets for n in _names(t, gast.Load)} - bound
    if isinstance(stmt, gast.AugAssign):
        exposed |= _names(stmt.target, gast.Store) - bound
    bound |= {n for t in targets for n in _names(t, gast.Store)}


def _names(node, kind):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, kind)}


def _surely_bound(primal):
    """Names a top-level assignment of the primal binds (bound when the sweep starts)."""
    bound = set()
    for stmt in primal:
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                bound |= {n.id for n in walk(target) if isinstance(n, gast.Name)}
    return bound


def _stored(stmts, deleted=True):
    """Names ``stmts`` bind (or delete)."""
    kinds = (gast.Store, gast.Del) if deleted else gast.Store
    return {
        n.id for n in walk(gast.Module(stmts, []))
        if isinstance(n, gast.Name) and isinstance(n.ctx, kinds)
    }


def _deleted(stmts):
    return {
        n.id for n in walk(gast.Module(stmts, []))
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Del)
    }


def without_dels(stmts, names, dropped=None):
    """``stmts`` without their ``del`` of ``names`` (read by ``back`` from the primal: each call
    reads them; deleting them would make them locals of ``back``), and without the statements,
    at any depth, for which ``dropped(stmt)`` is true."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, gast.Delete):
            stmt.targets = [t for t in stmt.targets
                            if not (isinstance(t, gast.Name) and t.id in names)]
            if not stmt.targets:
                continue
        elif dropped is not None and dropped(stmt):
            continue
        for field in ("body", "orelse"):
            if isinstance(getattr(stmt, field, None), list):
                kept = without_dels(getattr(stmt, field), names, dropped)
                setattr(stmt, field, kept or ([gast.Pass()] if field == "body" else []))
        out.append(stmt)
    return out


def _first_use(stmts):
    order = {}
    for n in walk(gast.Module(stmts, [])):
        if isinstance(n, gast.Name):
            order.setdefault(n.id, len(order))
    return lambda v: order.get(v, len(order))


def _popped(stmts):
    """The names whose ``pop()`` the sweep calls: the stacks."""
    return {
        n.func.value.id for n in walk(gast.Module(stmts, []))
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
        and n.func.attr == "pop" and isinstance(n.func.value, gast.Name)
    }


def owned(grads, sweep, ctx, outside):
    """The returned gradients, each a new array on every call (``copy_grad`` unless surely)."""
    if isinstance(grads, gast.Tuple):
        grads.elts = [owned(g, sweep, ctx, outside) for g in grads.elts]
        return grads
    if _fresh(grads, sweep, ctx, outside):
        return grads
    return gast.Call(name(ctx.global_name(runtime.copy_grad, "copy_grad")), [grads], [])


def _fresh(expr, sweep, ctx, outside, seen=frozenset()):
    """Whether ``expr`` is surely a value the sweep computes anew on each call (a name: every
    assignment the sweep makes to it is; ``seen`` are the names assumed so while deciding)."""
    if isinstance(expr, gast.Constant):
        return True
    if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
        return True
    if isinstance(expr, gast.Name):
        if expr.id in seen:
            return True
        if expr.id in outside:
            return False
        assignments = _assignments(sweep, expr.id)
        return bool(assignments) and all(
            isinstance(s.targets[0], gast.Name)
            and _fresh(s.value, sweep, ctx, outside, seen | {expr.id})
            for s in assignments
        )
    helper = _helper(expr, ctx)
    if helper is None:
        return False
    if any(helper is h for h in FRESH_RESULT):
        return True
    passed = next((pos for h, pos in PASSES_ON.items() if h is helper), None)
    return passed is not None and all(
        _fresh(expr.args[k], sweep, ctx, outside, seen) for k in passed if k < len(expr.args)
    )


def _assignments(sweep, var):
    return [
        s for s in walk(gast.Module(sweep, []))
        if isinstance(s, gast.Assign) and any(
            isinstance(n, gast.Name) and n.id == var for t in s.targets for n in walk(t)
        )
    ]


def _helper(expr, ctx):
    if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and expr.args:
        return ctx.extras.get(expr.func.id)
    return None
