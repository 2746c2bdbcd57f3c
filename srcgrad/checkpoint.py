"""Binomial checkpointing of loops: ``grad(f, checkpoint=k)`` and ``checkpoint="auto"``.

Requires: a user function and the ``checkpoint`` / ``max_memory`` options of a reverse transform.
Guarantees: ``checkpointed(f, options)`` is ``f`` rewritten so that each ``for`` loop over
``range(...)`` and each ``while`` loop at the top level of its body is a call of
:func:`checkpointed_loop` on a step function made of the loop's body (a function of the trips to
run, the state the loop carries from one iteration to the next, and the values it only reads).
The transforms then differentiate the rewritten function. The primal runs the loop once and
keeps at most ``k`` copies of its state (the loop's entry state counts as one), returned beside
the state (``kept``); the adjoint of the call (``checkpointed_loop_adjoint``, inlined into the
generated code, so ``source()`` shows it) walks, from each kept snapshot, the last first,
Griewank's binomial schedule (``revolve``) over the trips up to the next one, with the snapshots
the earlier ones leave free: advance the state, snapshot it, restore it, reverse a step through
the step's generated vjp. Inner loops stay inside the step: they keep their stacks, per outer
step. ``"auto"`` takes ``k`` from ``max_memory`` and the size of the state measured when the loop
starts.

A ``for`` loop keeps its snapshots where the binomial schedule's first sweep takes them
(``first_sweep``): the primal is that sweep, and the adjoint recomputes the binomial optimum
``binomial_advances(n, k)`` less the primal's advances up to the last snapshot. A loop whose trip
count is not known when it starts (``while``, ``for`` with ``break``) runs ``f_probe`` (the loop
as written, stopping after a given trip and saying whether it left) and keeps its snapshots
online (:class:`Thinning`): one every ``spacing`` trips, the spacing doubled (every other
snapshot dropped) whenever ``k`` would be exceeded; once the trip count ``n`` is known it keeps
the thinning (down to the entry state alone) that recomputes least. Bound: never more
recomputation than counting the trips first and then playing the offline schedule from the entry
(``binomial_advances(n, k)``), at most ``k`` states held; measured against the binomial optimum
in benchmarks/RESULTS.md. Long loops are scheduled in segments of ``segment_width`` trips. The
schedule arithmetic (``revolve``, ``Thinning``, the counts) lives in srcgrad/schedule.py.

    def f(theta, n):                          def f(theta, n):
        x = theta                                 x = theta
        for i in range(n):            ->          x, kept = checkpointed_loop(None, f_step,
            x = x + np.sin(x) * theta                 range(n), (x,), (theta,), 10)
        return x                                  return x

    def f_step(lo, hi, steps, state, invariants):
        (x,) = state
        (theta,) = invariants
        for i in steps[lo:hi]:
            x = x + np.sin(x) * theta
        return (x,)

A ``return`` of the loop (in its branches) becomes ``result = ...; returned = True; break`` with
``if returned: return result`` after the loop, a ``continue`` a flag guarding the rest of the trip
(``_early_returns``, ``_continues``). A loop that returns from an inner loop, a ``with`` or a
``try``, has an ``else`` or a target that is not a name is refused with its line. Names bound once
to a number before the loop are bound again inside the step (not invariants: the step's
derivative would carry their gradient for nothing).
"""

from __future__ import annotations

import copy
import inspect
import re
import sys
from typing import Any

import gast

from . import checkpoint_concat, checkpoint_fast, transforms
from .astutil import own_builtin_name, stored, updated_while_held, walk
from .checkpoint_sharing import (
    container_copies,
    container_kinds,
    copy_checks,
    copy_edges,
    copy_state,
    holds_pairs,
    loop_writes,
    mutated,
    outside_reads,
    passed_only,
    sharing_closure,
    sharing_edges,
    written_through_items,
)
from .emit import naming, notes
from .emit.compile import compile_function
from .emit.naming import Namer
from .emit.unparse import unparse
from .errors import SrcgradError, UnsupportedSyntaxError
from .frontend.default_values import default_values_bound
from .frontend.source import REWRITTEN_USER_CODE, parse_function
from .rules.custom import adjoint, tangent
from .rules.registry import linear, nondiff
from .runtime import add, as_like, check_copied_array
from .runtime.complex_values import conj_like
from .schedule import (
    ADVANCE,
    FORGET,
    RESTORE,
    SNAPSHOT,
    Thinning,
    first_sweep,
    revolve,
    segment_width,
    state_size,
)
from .transform.pullback import exposed_reads

STEP_PARAMS = ("lo", "hi", "steps", "state", "invariants")
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20,
         "GIB": 2**30}


# --- what runs -----------------------------------------------------------------------------------

class Snapshots(list):
    """The states a checkpointed loop kept when it ran (the loop's entry state first), and
    ``intervals``: ``(lo, hi, width)`` for each, the trips from it to the next one (or to the
    loop's end) and the trips the schedule treats as one step there."""

    def __init__(self, states, intervals):
        super().__init__(states)
        self.intervals = intervals


def kept_intervals(kept):
    """The ``(lo, hi, width)`` of each snapshot a checkpointed loop kept."""
    return kept.intervals


def checkpointed_loop(probe, step, steps, state, invariants, snapshots):
    """The loop, keeping its state at most ``snapshots`` times: ``(*state, kept)``, ``kept`` the
    :class:`Snapshots`. A ``for`` loop (``probe`` None) keeps them where the binomial schedule's
    first sweep would: the primal is that sweep. A loop that can leave early runs ``probe`` (the
    loop as written, stopping after a given trip) and keeps them by :class:`Thinning`. Its
    copies of the state keep what ``invariants`` hold (``copy_state``), as its step's do. The
    step's vjp is made first, unless the sweep takes the specialized one (numbers and float64
    arrays): what srcgrad refuses in the step is refused before the loop runs (a helper the
    step calls may write into the caller's objects, ``o.w = ...``)."""
    if inspect.isfunction(step) and not checkpoint_fast.plain(state + invariants):
        step_vjp(step)
    # the step writes into its state in place (`y *= v`): into a copy, not the caller's arrays,
    # which the reverse sweep of the statements before the loop reads (their values then)
    state = copy_state(state, invariants)
    if probe is None:
        n = len(steps)
        width = segment_width(n, state)
        units = -(-n // width)
        at = [min(u * width, n) for u in first_sweep(units, snapshots)]
        kept, intervals = [], [(lo, hi, width) for lo, hi in zip(at, at[1:] + [n])]
        for lo, hi, _ in intervals:
            kept.append(copy_state(state, invariants))
            state = checkpoint_fast.advance(step, lo, hi, steps, state, invariants)
        return (*state, Snapshots(kept, intervals))
    total = sys.maxsize if steps is None else len(steps)
    thinning, held, trip = Thinning(snapshots, state), {0: copy_state(state, invariants)}, 0
    while True:
        *state, trip, left = probe(trip, min(thinning.next(trip), total), steps, state,
                                   invariants)
        if left or trip == total:
            break
        if thinning.reach(trip):  # dropped some: at most `snapshots` held, the new one among them
            held = {t: held[t] for t in thinning.at if t in held}
        if trip in thinning.at:
            held[trip] = copy_state(state, invariants)
    intervals = thinning.choose(trip)
    return (*state, Snapshots([held[lo] for lo, _, _ in intervals], intervals))


def step_vjp(step):
    """The generated vjp of a loop's step with respect to its state and invariants."""
    return transforms.derived(step, "vjp", ("state", "invariants"))


def step_jvp(step):
    """The generated jvp of a loop's step with respect to its state and invariants."""
    return transforms.derived(step, "jvp", ("state", "invariants"))


def checkpointed_loop_jvp(step, steps, state, invariants, kept, dstate, dinvariants):
    """The tangent of ``checkpointed_loop``: the step's jvp from one kept snapshot to the next,
    the tangents of the snapshots kept on the way."""
    return tangent_over(step_jvp(step), steps, state, invariants, kept, dstate, dinvariants)


def tangent_over(jvp_step, steps, state, invariants, kept, dstate, dinvariants):
    """:func:`checkpointed_loop_jvp` by ``jvp_step``, the step's jvp (``(lo, hi, steps, state,
    invariants, (dstate, dinvariants)) -> (state, dstate)``; numba's: emit/numba_checkpoint.py)."""
    tangent = (tangent_like(dstate, state), tangent_like(dinvariants, invariants))
    dkept = []
    for lo, hi, _ in kept.intervals:
        dkept.append(tangent[0])
        state, dnext = jvp_step(lo, hi, steps, state, invariants, tangent)
        tangent = (dnext, tangent[1])
    return (*tangent[0], dkept)


def tangent_like(t, x):
    """The tangent ``t`` with the structure of ``x``, zeros where none flowed; a tangent is not
    conjugated (``as_like`` conjugates a complex cotangent: undone)."""
    return conj_like(as_like(t, x), x)


def snapshots_for(max_memory, state, steps):
    """``checkpoint="auto"``: as many snapshots as ``max_memory`` bytes hold, each a copy of
    ``state`` (measured now, Python objects included), at least 2 and at most one per step."""
    size = state_size(state) + 64  # the snapshot list's slot and the tuple the schedule unpacks
    most = sys.maxsize if steps is None else len(steps) + 1  # a `while` loop: no bound known
    return max(2, min(most, int(max_memory // size)))


def parse_memory(text):
    """``"200MB"`` (``kB``, ``MB``, ``GB``, ``KiB``, ``MiB``, ``GiB``) or a number of bytes."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text > 0:
        return int(text)
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if match and match.group(2).upper() in UNITS:
        return int(float(match.group(1)) * UNITS[match.group(2).upper()])
    raise SrcgradError(f"max_memory must be a number of bytes or a size like '200MB'; got {text!r}")


def reverse_segment(step, lo, hi, steps, state, invariants, seed):
    """The adjoint of steps ``lo .. hi - 1`` from ``state``: ``(dstate, dinvariants)``, by the
    step's generated vjp (on numbers and float64 arrays, specialized: checkpoint_fast.py)."""
    fast = checkpoint_fast.reverse(step, lo, hi, steps, state, invariants, seed)
    if fast is not None:
        return fast
    return step_vjp(step)(lo, hi, steps, state, invariants, seed)


def reverse_segment_jvp(step, lo, hi, steps, state, invariants, seed, dstate, dinvariants,
                        dseed):
    """The tangent of ``reverse_segment`` (a Hessian-vector product through a checkpointed
    loop): the generated jvp of the step's generated vjp."""
    tangents = (tangent_like(dstate, state), tangent_like(dinvariants, invariants),
                tangent_like(dseed, seed))
    again = transforms.derived(step_vjp(step), "jvp", ("state", "invariants", "seed"))
    return again(lo, hi, steps, state, invariants, seed, tangents)[1]


def reverse_segment_vjp(step, lo, hi, steps, state, invariants, seed, dy):
    """The adjoint of ``reverse_segment``: the generated vjp of the step's generated vjp."""
    again = transforms.derived(step_vjp(step), "vjp", ("state", "invariants", "seed"))
    return again(lo, hi, steps, state, invariants, seed, dy)


@adjoint(reverse_segment)
def reverse_segment_adjoint(dy, y, step, lo, hi, steps, state, invariants, seed):
    """Reverse over reverse through a checkpointed loop's step (the generated vjp takes and
    gives cotangents in the public convention: ``as_like`` conjugates a complex one)."""
    dstate, dinvariants, dseed = reverse_segment_vjp(step, lo, hi, steps, state, invariants,
                                                     seed, as_like(dy, y))
    return (None, None, None, None, as_like(dstate, state), as_like(dinvariants, invariants),
            as_like(dseed, seed))


@tangent(reverse_segment)
def reverse_segment_tangent(y, step, lo, hi, steps, state, invariants, seed, dstep, dlo, dhi,
                            dsteps, dstate, dinvariants, dseed):
    """Forward over reverse through a checkpointed loop's step."""
    return reverse_segment_jvp(step, lo, hi, steps, state, invariants, seed, dstate,
                               dinvariants, dseed)


@adjoint(checkpointed_loop)
def checkpointed_loop_adjoint(dy, y, probe, step, steps, state, invariants, snapshots):
    """The binomial schedule from each kept snapshot, the last first, inlined where the loop's
    adjoint goes: the interval from snapshot ``j`` is reversed with the ``snapshots - j`` states
    the ones before it leave free (the primal was the first sweep). The step's vjp takes and
    gives cotangents in the public convention (``as_like``: the conjugate of a complex one)."""
    dstate = as_like(dy[:-1], y[:-1])
    dkept = dy[-1]  # not None when the adjoint is differentiated
    dinvariants = as_like(None, invariants)
    intervals = kept_intervals(y[-1])
    kept = list(y[-1])
    for j in range(len(intervals) - 1, -1, -1):  # from each snapshot kept, the last first
        lo, hi, width = intervals[j]
        held = [kept.pop()]
        snapshot = held[0]
        current = copy_state(held[-1], invariants)
        for action, a, b in revolve(-(-(hi - lo) // width), snapshots - j):  # in segments
            if action == ADVANCE:
                current = step(lo + a * width, min(lo + b * width, hi), steps, current,
                               invariants)
            elif action == SNAPSHOT:
                held.append(copy_state(current, invariants))
            elif action == RESTORE:
                current = copy_state(held[-1], invariants)
            elif action == FORGET:
                held.pop()
            else:
                dstate, dstep = reverse_segment(step, lo + a * width,
                                                min(lo + a * width + width, hi), steps, current,
                                                invariants, dstate)
                dinvariants = add(dinvariants, dstep)
        if dkept is not None:
            dstate = add(dstate, as_like(dkept[j], snapshot))
    return None, None, None, as_like(dstate, state), as_like(dinvariants, invariants), None


@tangent(checkpointed_loop)
def checkpointed_loop_tangent(y, probe, step, steps, state, invariants, snapshots, dprobe,
                              dstep, dsteps, dstate, dinvariants, dsnapshots):
    """The loop's tangent: the step's jvp over the trips the loop made."""
    return checkpointed_loop_jvp(step, steps, state, invariants, y[-1], dstate, dinvariants)


nondiff(revolve, signature="steps, snapshots")
nondiff(snapshots_for, signature="max_memory, state, steps")
nondiff(step_vjp, signature="step")
nondiff(step_jvp, signature="step")
nondiff(segment_width, signature="steps, state")
nondiff(kept_intervals, signature="kept")
linear(copy_state, "state, invariants", vjp={"state": "dy"}, jvp="dstate")


# --- the rewrite ---------------------------------------------------------------------------------

def checkpointed(f: Any, checkpoint: Any, max_memory: Any) -> Any:
    """``f`` with each top-level ``for`` loop over ``range`` and each top-level ``while`` loop a
    call of ``checkpointed_loop`` (see the module docstring); ``f`` itself when it has no such
    loop."""
    parsed = parse_function(f)
    node = parsed.node
    loops = [s for s in node.body
             if isinstance(s, gast.While) or (isinstance(s, gast.For) and _over_range(s.iter))]
    if not loops:
        return f
    reads, cells = outside_reads(loops, node, f)  # (the steps read them: see below)
    taken = {n.id for n in walk(node) if isinstance(n, gast.Name)} | {node.name}
    namer = Namer(taken)
    extras = default_values_bound(node, f, namer)  # (`W=W0`: W0 of the scope f was made in)
    originals = {}  # id of the call that replaced a loop -> the loop (what it shares is its)
    carried = set()  # the parameters a loop carries, which its step may update in place
    for loop in loops:
        _early_returns(node, loop, namer)
        _continues(loop, namer)
        _check_loop(loop, parsed.location)
        container_copies(node, loop, f)  # (`L.copy()` of a list: `list(L)`, its items L's)
        checkpoint_concat.refuse_concatenations(node, loop, parsed.location)
        checkpoint_concat.refuse_list_sorts(node, loop, parsed.location)
        checkpoint_concat.extend_lists(node, loop)
        names = _loop_names(node, node.body.index(loop), loop, parsed.location)  # (once)
        checkpoint_concat.refuse_field_writes(loop, parsed.location, set(names[1]) & names[4])
        carried |= set(names[1]) & _params(node)
        # `z += v` while a list holds z (or the caller passed it): the step copies its whole
        # state at once, sharing kept, and updates that copy in place as Python would; so
        # for a write through a name the body binds to what another name holds (`O = [L]`,
        # `O[0][-1] += v` writes into L's value), and for a name of the state passed to a
        # helper, which may write into it while a list of the state holds it (a copy of its
        # own, apart from the list's, missed the write: a wrong value)
        # (but a name bound before the loop sharing one passed is still refused: copy_state
        # keeps arrays that are one another's, not a view of its base)
        updated = updated_while_held(node, loop.body, _params(node))
        held = bool(updated) or bool(loop_writes(loop) - mutated(loop.body)) or bool(
            checkpoint_concat.written_by(names[5]))
        _refuse_shared_writes(node, loop, parsed.location, originals, set(names[1]) if held
                              else set())
        held = held or bool(passed_only(loop) & set(names[1]))
        position = node.body.index(loop)
        parts = _loop_call(node, loop, namer, (parsed.location, f), held, names)
        if parts is None:
            continue
        call, inits, made = parts
        names = {n: namer.fresh(n) for n in naming.CHECKPOINT_HELPERS}
        extras[names["checkpointed_loop"]] = checkpointed_loop
        extras[names["snapshots_for"]] = snapshots_for
        functions = []
        for made_fn in made:
            functions.append(_load(namer.fresh(made_fn.__name__)))
            extras[functions[-1].id] = made_fn
        if len(made) == 1:  # a loop that cannot leave early: no probe
            functions.append(gast.Constant(None, None))
        count = (
            gast.Call(_load(names["snapshots_for"]),
                      [gast.Constant(parse_memory(max_memory), None), call["state"],
                       call["steps"]], [])
            if checkpoint == "auto" else gast.Constant(int(checkpoint), None)
        )
        value = gast.Call(_load(names["checkpointed_loop"]), functions[::-1]
                          + [call["steps"], call["state"], call["invariants"], count], [])
        rewritten = gast.Assign([call["target"]], value, None)
        gast.copy_location(rewritten, loop)
        originals[id(rewritten)] = loop
        node.body[position:position + 1] = inits + [rewritten]
    node.decorator_list = []
    text = unparse(node) + "\n"
    made = compile_function(text, node.name, f, extras)
    REWRITTEN_USER_CODE.add(made.__code__)
    # (normalize/inplace.py checks those apart from the other arguments, as for `x += v`)
    made.__srcgrad_user_parameters__ = frozenset(carried)
    # and against what its loops read from outside (f's closure cells too: emit/compile.py)
    made.__srcgrad_loop_reads__, made.__srcgrad_cells__ = reads, cells
    # what srcgrad refuses in the rewritten function at the user's line (as for the steps)
    notes.register(made.__code__, made.__code__.co_filename,
                   notes.line_map(node, text, parsed.location, node.name))
    made.__srcgrad_depends__ = getattr(f, "__srcgrad_depends__", ())
    return made


def _refuse_shared_writes(node, loop, location, originals, carried):
    """Refuse a loop that writes into an array (or list, dict) in place while another name
    bound before it shares it and is read in or after the loop (``z = y[0:2]``, ``L = [y]``,
    ``y = x``): the step writes into a copy of its state (a replay starts from a snapshot), so
    Python's ``z`` would see the writes and srcgrad's would not. ``carried``: the loop's state
    where its step copies the whole state at once, sharing kept (else empty); such a name is
    not one: the loop rebinds it to the step's copy."""
    position = node.body.index(loop)
    before, after = node.body[:position], node.body[position + 1:]
    edges = sharing_edges([originals.get(id(s), s) for s in before])
    edges |= copy_edges(before, container_kinds(node), loop.body)  # (`M = L.copy()`, L a list)
    # a write into an item of what the body binds (`O = [L]; O[0][-1] += v`) reaches `L`
    deep = written_through_items(loop.body)
    inner = sharing_edges(loop.body)
    read = {n.id for n in walk(gast.Module(loop.body + after, [])) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}
    if isinstance(loop, gast.While):
        read |= {n.id for n in walk(loop.test) if isinstance(n, gast.Name)}
    bound = _params(node) | stored(before)  # (what a trip binds is its own)
    defs = checkpoint_concat.called_defs(node, position, loop)
    for v in sorted(mutated(loop.body) | loop_writes(loop) | checkpoint_concat.written_by(defs)):
        shared = sharing_closure({v}, edges | inner if v in deep else edges)
        for other in sorted((shared - {v} - carried) & read & bound)[:1]:
            raise location.error(UnsupportedSyntaxError, loop, (
                f"checkpoint= cannot checkpoint this loop: it writes into `{v}` in place, and "
                f"`{other}`, bound before the loop, may share its memory (the same array, a "
                f"view of it, or a list, tuple or dict holding it) and is read in or after the "
                f"loop; a replay from a snapshot writes into a copy, which `{other}` would not "
                f"see. Take a copy before the loop (`{v} = {v}.copy()`)"))


def _over_range(node):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "range" and not node.keywords)


def _check_loop(loop, location):
    """Refuse a loop ``checkpoint=`` cannot replay step by step, at its line."""
    why = None
    if isinstance(loop, gast.For) and not isinstance(loop.target, gast.Name):
        why = "its target is not a single name"
    elif loop.orelse:
        why = "it has an `else`"
    if isinstance(loop, gast.While) and (
            mutated([gast.Expr(loop.test)])
            or any(isinstance(n, gast.NamedExpr) for n in walk(loop.test))):
        why = "its test may change a value (the replay of its trips does not evaluate it)"
    own = set(map(id, _own(loop.body)))
    for n in walk(gast.Module(loop.body, [])):
        if isinstance(n, (gast.Return, gast.Yield, gast.YieldFrom)):
            why = "it can return from the function"
        elif isinstance(n, (gast.Global, gast.Nonlocal)) or (
                isinstance(n, gast.Continue) and id(n) in own):
            why = f"it uses `{type(n).__name__.lower()}`"
    if why is not None:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: {why}. Checkpointed loops are `for` loops "
            f"over range(...) and `while` loops at the top level of the function body",
        )


def _early_returns(node, loop, namer):
    """A ``return`` in ``loop`` (not in an inner loop, a ``with`` or a ``try``) becomes
    ``result = ...; returned = True; break``, the loop ``returned = False; result = None``
    before it and ``if returned: return result`` after it: a loop that leaves early, whose
    trips the probe counts. Other returns are left (and refused by ``_check_loop``)."""
    def rewrite(stmts):
        out, found = [], False
        for stmt in stmts:
            if isinstance(stmt, gast.Return):
                value = stmt.value if stmt.value is not None else gast.Constant(None, None)
                out += [gast.Assign([_store(names[0])], value, None),
                        gast.Assign([_store(names[1])], gast.Constant(True, None), None),
                        gast.Break()]
                found = True
                continue
            if isinstance(stmt, gast.If):
                stmt.body, inside = rewrite(stmt.body)
                stmt.orelse, other = rewrite(stmt.orelse)
                found = found or inside or other
            out.append(stmt)
        return out, found

    if loop.orelse or any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in walk(loop)):
        return
    names = (namer.fresh(naming.RESULT), namer.fresh(naming.RETURNED))
    body, found = rewrite(copy.deepcopy(loop.body))
    if not found:
        return
    if any(isinstance(n, gast.Return) for n in walk(gast.Module(body, []))):
        return  # a return in an inner loop, `with` or `try` of a branch: left as it was
    loop.body = body
    position = node.body.index(loop)
    node.body[position:position + 1] = [
        gast.Assign([_store(names[1])], gast.Constant(False, None), None),
        gast.Assign([_store(names[0])], gast.Constant(None, None), None),
        loop,
        gast.If(_load(names[1]), [gast.Return(_load(names[0]))], []),
    ]


def _continues(loop, namer):
    """A ``continue`` of ``loop`` (not of an inner loop; in branches only) becomes ``skip =
    True``, the statements after it ``if not skip:``, ``skip = False`` first in each trip: the
    replayed trips run the loop's body straight through."""
    skip = None

    def rewrite(stmts):
        nonlocal skip
        out = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.Continue):
                skip = skip or namer.fresh(naming.SKIP)
                return out + [gast.Assign([_store(skip)], gast.Constant(True, None), None)], True
            if isinstance(stmt, gast.If):
                stmt.body, inside = rewrite(stmt.body)
                stmt.orelse, other = rewrite(stmt.orelse)
                out.append(stmt)
                if inside or other:
                    rest = rewrite(stmts[i + 1:])[0]
                    test = gast.UnaryOp(gast.Not(), _load(skip))
                    return out + ([gast.If(test, rest, [])] if rest else []), True
                continue
            out.append(stmt)
        return out, False

    body, found = rewrite(copy.deepcopy(loop.body))
    if found and not any(isinstance(n, gast.Continue) for n in _own(body)):
        loop.body = [gast.Assign([_store(skip)], gast.Constant(False, None), None)] + body


def _own(stmts):
    """The nodes of ``stmts`` outside their inner loops and functions."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef, gast.AsyncFunctionDef,
                             gast.Lambda)):
            continue
        for child in gast.iter_child_nodes(stmt):
            if isinstance(child, gast.stmt):
                yield from _own([child])
            else:
                yield from walk(child)


def _breaks(stmts):
    """The ``break`` statements of a loop body that leave that loop (not an inner one)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Break):
            yield stmt
        elif isinstance(stmt, (gast.If, gast.With, gast.Try)):
            for field in ("body", "orelse", "finalbody"):
                yield from _breaks(getattr(stmt, field, []))
            for handler in getattr(stmt, "handlers", []):
                yield from _breaks(handler.body)


def _loop_call(node, loop, namer, user, held, names):
    """The parts of the call replacing ``loop``, the statements that bind what it needs first,
    and the compiled step function (and, for a loop that can leave early, its probe); None for
    a loop that carries no state (nothing to checkpoint)."""
    is_while, position, (location, f) = isinstance(loop, gast.While), node.body.index(loop), user
    index, state, invariants, constants, exposed, defs = names
    if not state:  # nothing the loop computes is carried or read after it: left as it is
        return None
    bound = _params(node) | stored(node.body[:position])
    inits = [gast.Assign([_store(v)], gast.Constant(None, None), None)
             for v in state if v not in bound]
    loop_parts = (loop, index, state, invariants, constants, exposed,
                  {v for v in state if v not in bound}, defs)
    made = [_step_function(node.name, loop_parts, (f, location), probe=False, held=held)]
    if is_while or any(True for _ in _breaks(loop.body)):
        made.append(_step_function(node.name, loop_parts, (f, location), probe=True, held=held))
    # the state the body never binds: the loop returns the object it was given, or the step's
    # copy of it (normalize/inplace.py: what the function owned before the loop it owns after)
    # and the state it binds only to new arrays of arithmetic that nothing else holds
    rebound = stored(loop.body) - _made_afresh(loop.body)
    touched = rebound | loop_writes(loop)  # (else what the loop returns holds no invariant)
    # (nor what another name of the state holds, d["a"] = g: a copy of its own after the loop
    # would be another object than the one d holds, which a write through d reaches)
    held = {v for a, v in holds_pairs(loop.body) if a in state}
    for made_fn in made:
        made_fn.__srcgrad_kept_state__ = frozenset(
            k for k, v in enumerate(state) if v not in rebound | held)
        made_fn.__srcgrad_holds_invariants__ = any(v in touched for v in state)
    kept = _store(namer.fresh(naming.KEPT))
    return {
        "target": gast.Tuple([_store(v) for v in state] + [kept], gast.Store()),
        "steps": gast.Constant(None, None) if is_while else loop.iter,
        "state": gast.Tuple([_load(v) for v in state], gast.Load()),
        "invariants": gast.Tuple([_load(v) for v in invariants], gast.Load()),
    }, inits, made


def _made_afresh(body):
    """The names ``body`` binds only by ``v = <arithmetic>`` (``y = np.sin(y * a) * 0.8``: a new
    object each time) and that no other name or container may come to hold: after the loop, each
    is the object the function owned before it, or one of these new arrays."""
    stores, fresh = {}, {}
    for n in walk(gast.Module(body, [])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        if (isinstance(n, gast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], gast.Name)
                and isinstance(n.value, (gast.BinOp, gast.UnaryOp))):
            fresh[n.targets[0].id] = fresh.get(n.targets[0].id, 0) + 1
    held = {v for edge in sharing_edges(body) for v in edge}
    return {v for v, count in fresh.items() if count == stores[v] and v not in held}


def _params(node):
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    return params | {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}


def _loop_names(node, position, loop, location):
    """The loop's index (None for ``while``), the state it carries, the invariants it reads, the
    constants the step binds itself, the names its body may read before binding them, and the
    functions defined before it that it calls (``checkpoint_concat.called_defs``)."""
    before, after = node.body[:position], node.body[position + 1:]
    is_while = isinstance(loop, gast.While)
    index = None if is_while else loop.target.id
    body = ([gast.Expr(loop.test)] if is_while else []) + loop.body
    local = _params(node) | stored(node.body)
    defs = checkpoint_concat.called_defs(node, position, loop)
    # (a module is no state: `np.put(idx, ...)` writes into idx, not np; what a def the body
    # calls writes into, `acc[:] = ...`, is, and what it reads it reads when called)
    written = loop_writes(loop) | checkpoint_concat.written_by(defs)
    assigned = stored(loop.body) | (written & local)
    exposed = exposed_reads(body, set() if is_while else {index})[1]
    exposed |= {n for d in defs for n in checkpoint_concat.free_names(d)} & local
    read_after = {n.id for n in walk(gast.Module(after, [])) if isinstance(n, gast.Name)}
    # (a later loop of the same variable binds it again before reading it)
    if index is not None and index in exposed_reads(after, set())[1]:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: `{index}` is read after it",
        )
    # a name a trip binds afresh before reading it (a list built per trip) is not carried
    state = sorted(assigned & (exposed | read_after))  # empty: nothing to checkpoint
    loaded = {n.id for n in walk(gast.Module(body, [])) if isinstance(n, gast.Name)}
    checkpoint_concat.refuse_other_defs(node, loop, defs, location)
    for definition in defs:
        loaded |= checkpoint_concat.free_names(definition)  # (the step defines it again)
    loaded -= {checkpoint_concat.defined_name(d) for d in defs}  # (`g = lambda`: not given)
    constants = _constants(node, before, loaded - assigned)
    invariants = sorted((loaded - assigned - {index} - set(constants)) & local)
    return index, state, invariants, constants, exposed, defs


def _constants(node, before, names):
    """The names among ``names`` bound once in ``node``, to a number, before the loop: the step
    binds them itself (a constant passed as an invariant would be differentiated)."""
    stores = {}
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    out = {}
    for s in before:
        if (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Constant)
                and type(s.value.value) in (int, float, complex) and s.targets[0].id in names
                and stores.get(s.targets[0].id) == 1):
            out[s.targets[0].id] = s.value.value
    return out


def _step_function(fname, loop_parts, user, probe, held=False):
    """``def <f>_step(lo, hi, steps, state, invariants)``: the loop over ``steps[lo:hi]`` (a
    ``while`` loop's body ``hi - lo`` times, its test not evaluated: the trips were counted).
    With ``probe``, ``def <f>_probe(...)`` instead: the loop as written, from ``lo`` until it
    leaves or ``hi``, returning the state and the number of trips made (the last one may have
    left at a ``break``). With ``held`` (the body updates an array in place, ``z += v``, that
    a list of the state may hold), the step copies its whole state first, in one
    ``copy_state``: the copy of ``z`` is the one the copied list holds."""
    loop, index, state, invariants, constants, exposed, unbound, defs = loop_parts
    f, location = user
    name = (naming.PROBE if probe else naming.STEP).format(fname)
    unpack = [
        gast.Assign([gast.Tuple([_store(v) for v in names], gast.Store())], _load(packed), None)
        for names, packed in ((state, "state"), (invariants, "invariants")) if names
    ]
    unpack += [gast.Assign([_store(v)], gast.Constant(value, None), None)
               for v, value in sorted(constants.items())]
    copier = _unused(loop, "copy_state")  # what is only passed to a helper may be a float
    unpack += _state_copies(loop, (state, exposed, unbound, invariants), copier, held)
    unpack += copy.deepcopy(defs)  # (`def g(t): ...` before the loop, which its body calls)
    packed = gast.Tuple([_load(v) for v in state], gast.Load())
    checker = _unused(loop, "check_copied_array")  # (a copy of what the loop was given)
    body = copy_checks(copy.deepcopy(loop.body), f, checker)
    target, it, ret = (_probe_loop if probe else _replay_loop)(loop, index, packed, body,
                                                               _trips_name(loop))
    args = gast.arguments([gast.Name(p, gast.Param(), None, None) for p in STEP_PARAMS], [], None,
                          [], [], None, [])
    fn = gast.FunctionDef(name, args, unpack + [gast.For(target, it, body, [], None), ret], [],
                          None, None, [])
    bound = {copier: copy_state, checker: check_copied_array}
    if isinstance(it, gast.Call):  # `enumerate(...)` or `range(...)`: the builtin (astutil)
        bound.update(own_builtin_name(it, fn, f))
    clash = {n.id for n in walk(gast.Module(loop.body, [])) if isinstance(n, gast.Name)}
    clash = (clash | {index} | set(state) | set(invariants)) & set(STEP_PARAMS)
    if clash:
        raise SrcgradError(
            f"checkpoint=: rename the loop variable(s) {sorted(clash)}: the step function of "
            f"the loop in {fname} takes parameters of those names"
        )
    text = unparse(fn) + "\n"
    # what srcgrad refuses in the step (transformed when the sweep reaches it), and an error
    # raised while it runs (a shape mismatch in the loop's body), at the user's line
    lines = notes.line_map(fn, text, location, fname)
    step = compile_function(text, name, f, bound, lines)
    REWRITTEN_USER_CODE.add(step.__code__)
    notes.register(step.__code__, step.__code__.co_filename, lines)
    return step


def _state_copies(loop, names, copier, held):
    """The step's copies of the state it writes into (the state it was given is a snapshot):
    ``v = v.copy()`` of what the body writes into. With ``held`` (which a name of the state
    passed to a helper makes: it may be a float, and the helper may write into it), the whole
    state first, at once (``(L, z) = copy_state((L, z), (x,))``: the copy of ``z`` is the
    one the copy of ``L`` holds, and what the invariants ``(x,)`` hold is kept), then shallow
    copies (their own containers, the same copied items) of what the body writes into. State
    the function had not bound before the loop (``unbound``) is None until a trip binds it:
    ``v = None if v is None else v.copy()``, as the body reads it only after binding it (or
    Python raises)."""
    state, exposed, unbound, invariants = names
    written = mutated(loop.body, augmented=False, calls=False)
    copies, copied = [], [v for v in state if v in exposed] if held else []
    if copied:
        names = gast.Tuple([_load(v) for v in copied], gast.Load())
        copies.append(gast.Assign([gast.Tuple([_store(v) for v in copied], gast.Store())],
                                  gast.Call(_load(copier), [names, gast.Tuple(
                                      [_load(v) for v in invariants], gast.Load())], []), None))
    for v in sorted(written & set(state) & exposed):
        value = gast.Call(gast.Attribute(_load(v), "copy", gast.Load()), [], [])
        if v in unbound:
            value = gast.IfExp(gast.Compare(_load(v), [gast.Is()], [gast.Constant(None, None)]),
                               gast.Constant(None, None), value)
        copies.append(gast.Assign([_store(v)], value, None))
    return copies


def _trips_name(loop):
    """A name the loop does not use: the trips a probe counts, or a ``while`` step's counter."""
    return _unused(loop, "trips")


def _unused(loop, stem):
    """``stem`` or ``stem_<i>``: a name the loop does not use."""
    head = loop.test if isinstance(loop, gast.While) else loop.target
    used = {n.id for n in walk(gast.Module(loop.body + [head], [])) if isinstance(n, gast.Name)}
    used |= set(STEP_PARAMS)
    return next(t for t in (f"{stem}_{i}" if i else stem for i in range(len(used) + 1))
                if t not in used)


def _probe_loop(loop, index, packed, body, trips):
    """The header and the return of a probe: ``(*state, trips, left)``, ``left`` whether the
    loop left (the trips it made counted, a ``break`` trip among them) before ``hi`` or, for a
    ``while`` loop, its test fails after trip ``hi`` (so a loop that goes on made more than
    ``hi`` trips); its ``break`` statements become returns, and a ``while`` loop's test its
    first statement."""
    def leaving(count, left):
        left = left if isinstance(left, gast.AST) else gast.Constant(left, None)
        return gast.Tuple(packed.elts + [count, left], gast.Load())

    for stmt in _breaks(body):  # a break leaves the loop and the probe, trips counted
        stmt.__class__ = gast.Return
        stmt.value = leaving(_load(trips), True)
    # a while loop says whether its test fails after trip hi (the trips go on past hi if not)
    ends = (gast.UnaryOp(gast.Not(), copy.deepcopy(loop.test))
            if isinstance(loop, gast.While) else False)
    ret = gast.Return(leaving(_load("hi"), ends))
    lo_1 = gast.BinOp(_load("lo"), gast.Add(), gast.Constant(1, None))
    if not isinstance(loop, gast.While):
        target = gast.Tuple([_store(trips), _store(index)], gast.Store())
        return target, gast.Call(_load("enumerate"), [_segment(), lo_1], []), ret
    left = leaving(gast.BinOp(_load(trips), gast.Sub(), gast.Constant(1, None)), True)
    body.insert(0, gast.If(gast.UnaryOp(gast.Not(), loop.test), [gast.Return(left)], []))
    it = gast.Call(_load("range"), [
        lo_1, gast.BinOp(_load("hi"), gast.Add(), gast.Constant(1, None))], [])
    return _store(trips), it, ret


def _replay_loop(loop, index, packed, body, trips):
    """The header and the return of a step: the trips ``lo .. hi - 1`` replayed."""
    if isinstance(loop, gast.While):
        return _store(trips), gast.Call(_load("range"), [_load("lo"), _load("hi")], []), \
            gast.Return(packed)
    return _store(index), _segment(), gast.Return(packed)


def _segment():
    return gast.Subscript(_load("steps"), gast.Slice(_load("lo"), _load("hi"), None), gast.Load())


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _store(name):
    return gast.Name(name, gast.Store(), None, None)
