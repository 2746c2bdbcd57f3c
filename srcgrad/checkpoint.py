"""Binomial checkpointing of loops: ``grad(f, checkpoint=k)`` and ``checkpoint="auto"``.

Requires: a user function and the ``checkpoint`` / ``max_memory`` options of a reverse transform.
Guarantees: ``checkpointed(f, options)`` is ``f`` rewritten so that each ``for`` loop over
``range(...)`` at the top level of its body is a call of :func:`checkpointed_loop` on a step
function made of the loop's body (a function of the loop index, the state the loop carries from
one iteration to the next, and the values it only reads). The transforms then differentiate the
rewritten function: the primal runs the loop keeping nothing, and the adjoint of the call
(``checkpointed_loop_adjoint``, inlined into the generated code, so ``source()`` shows it) walks
Griewank's binomial schedule (``revolve``): advance the state, snapshot it, restore it, reverse
one step through the step's generated vjp. At most ``k`` snapshots of the state are held at once
(the loop's entry state counts as one); the number of steps advanced again is the binomial
optimum for ``k`` snapshots (``binomial_advances``). Inner loops stay inside the step: they keep
their stacks, per outer step. ``"auto"`` takes ``k`` from ``max_memory`` and the size of the state
measured when the loop starts.

    def f(theta, n):                          def f(theta, n):
        x = theta                                 x = theta
        for i in range(n):            ->          (x,) = checkpointed_loop(f_step, range(n),
            x = x + np.sin(x) * theta                                      (x,), (theta,), 10)
        return x                                  return x

    def f_step(i, state, invariants):
        (x,) = state
        (theta,) = invariants
        x = x + np.sin(x) * theta
        return (x,)

A loop whose trip count is not known when it starts (``while``, ``for`` with ``break``) becomes
``checkpointed_while(f_probe, f_step, ...)``: the primal runs ``f_probe`` (the loop as written)
once, keeping only the entry state and counting the trips ``n``; the adjoint plays the binomial
schedule of ``n`` trips (the replay needs no test: the trips are known). Bound of this online
scheme: at most ``n + binomial_advances(n, k)`` evaluations of the body before the reverse sweep
(in segments of ``segment_width(n, state)`` trips for long loops, as for ``for`` loops), against
``binomial_advances(n, k)`` for an offline schedule that knows ``n`` and uses the primal as its
first sweep: at most twice that plus one, with at most ``k`` snapshots held. A loop that can
``return``, uses ``continue``, has an ``else`` or a target that is not a name is refused with its
line. Names bound once to a number before the loop are bound again inside the step (not invariants:
the step's derivative would carry their gradient for nothing).
"""

from __future__ import annotations

import builtins
import copy
import math
import re
import sys
from typing import Any

import gast
import numpy as np

from . import transforms
from .astutil import walk
from .emit import naming
from .emit.compile import compile_function
from .emit.naming import Namer
from .emit.unparse import unparse
from .errors import SrcgradError, UnsupportedSyntaxError
from .frontend.source import parse_function
from .rules.custom import adjoint, tangent
from .rules.registry import linear, nondiff
from .runtime import add, as_like
from .transform.pullback import exposed_reads

ADVANCE, SNAPSHOT, RESTORE, FORGET, REVERSE = "advance", "snapshot", "restore", "forget", "reverse"
STEP_PARAMS = ("lo", "hi", "steps", "state", "invariants")
SHORT, SEGMENT = 64, 256  # loops longer than SHORT are scheduled in segments of up to SEGMENT steps
SEGMENT_BYTES = 2**16  # of state per segment: what its tape may hold is a few times that
MUTATING = ("append", "extend", "insert", "remove", "clear", "update", "pop", "sort", "reverse",
            "fill", "resize", "put", "setdefault", "popitem")
UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20,
         "GIB": 2**30}


# --- the schedule --------------------------------------------------------------------------------

def _repetitions(steps, snapshots):
    """The least ``r`` with ``binomial(snapshots + r, r) >= steps``: each step is advanced at
    most ``r`` times when ``steps`` are reversed with ``snapshots`` snapshots."""
    r, reach = 0, 1
    while reach < steps:
        r += 1
        reach = reach * (snapshots + r) // r
    return r


def binomial_advances(steps, snapshots):
    """The least number of steps advanced again to reverse ``steps`` steps with at most
    ``snapshots`` states held (Griewank 1992): ``r * steps - binomial(snapshots + r, r - 1)``."""
    if steps <= 1:
        return 0
    if snapshots == 1:
        return steps * (steps - 1) // 2
    r = _repetitions(steps, snapshots)
    return r * steps - math.comb(snapshots + r, r - 1)


def _split(steps, snapshots):
    """How far to advance before the next snapshot: the least ``m`` at which the cost
    ``m + advances(steps - m, snapshots - 1) + advances(m, snapshots)`` stops falling (it is
    convex in ``m``; its slope is ``1 + r(m + 1, s) - r(steps - m, s - 1)``)."""
    r = _repetitions(steps, snapshots)
    best = steps - 1
    for q in range(r + 1):  # the least m with r(m + 1, s) >= q and r(steps - m, s - 1) <= q + 1
        low = 1 if q == 0 else math.comb(snapshots + q - 1, snapshots)
        best = min(best, max(low, steps - math.comb(snapshots + q, snapshots - 1), 1))
    return best


class Schedule:
    """``revolve``'s actions: iterated lazily (a generator: the schedule of a million steps is
    never held); ``len`` and indexing, which a derivative of the adjoint uses, hold them all."""

    def __init__(self, steps, snapshots):
        if snapshots < 1:
            raise SrcgradError(f"checkpoint needs at least 1 snapshot; got {snapshots}")
        self.steps, self.snapshots = steps, snapshots
        self.actions = None

    def __iter__(self):
        return _actions(self.steps, self.snapshots)

    def __len__(self):
        return len(self._held())

    def __getitem__(self, k):
        return self._held()[k]

    def _held(self):
        if self.actions is None:
            self.actions = list(_actions(self.steps, self.snapshots))
        return self.actions


def revolve(steps, snapshots):
    """The binomial schedule of ``steps`` steps with at most ``snapshots`` states held: a
    :class:`Schedule` of the actions ``_actions`` yields."""
    return Schedule(steps, snapshots)


def _actions(steps, snapshots):
    """The binomial schedule reversing ``steps`` steps with at most ``snapshots`` states held,
    the loop's entry state (held from the start) among them: ``(action, i, j)`` triples.

    ``advance i j`` runs steps ``i .. j - 1`` on the current state; ``snapshot`` holds a copy of
    it; ``restore i`` makes the last snapshot (the state before step ``i``) current again;
    ``forget`` drops the last snapshot; ``reverse i`` takes the adjoint through step ``i`` from
    the current state (the state before step ``i``). Steps are reversed from last to first.
    """
    tasks = [(0, steps, snapshots)]
    at = 0  # the step the current state is before
    while tasks:
        task = tasks.pop()
        if task is None:
            yield FORGET, 0, 0
            continue
        a, b, s = task
        if b - a <= s or s == 1:
            yield from _reverse_directly(a, b, s, at)
            at = a
            continue
        m = a + _split(b - a, s)
        if at != a:
            yield RESTORE, a, a
        yield ADVANCE, a, m
        yield SNAPSHOT, m, m
        at = m
        tasks += [(a, m, s), None, (m, b, s - 1)]


def _reverse_directly(a, b, s, at):
    """Steps ``a .. b - 1`` with a snapshot for each (``b - a <= s``), or with the one at ``a``
    only (``s == 1``: each step advanced to again from ``a``)."""
    if b - a <= s:
        for j in range(a, b - 1):
            if at != j:
                yield RESTORE, j, j
            yield ADVANCE, j, j + 1
            yield SNAPSHOT, j + 1, j + 1
            at = j + 1
        for j in range(b - 1, a - 1, -1):
            if at != j:
                yield RESTORE, j, j
            yield REVERSE, j, j
            if j > a:
                yield FORGET, j, j
            at = j
        return
    for j in range(b - 1, a - 1, -1):
        if at != a:
            yield RESTORE, a, a
        if j > a:
            yield ADVANCE, a, j
        yield REVERSE, j, j
        at = j


# --- what runs -----------------------------------------------------------------------------------

def copy_state(state):
    """A copy of a loop's state that the step may update in place without touching the copy."""
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, (tuple, list)):
        return type(state)(copy_state(s) for s in state)
    if isinstance(state, dict):
        return {k: copy_state(v) for k, v in state.items()}
    return state


def checkpointed_loop(step, steps, state, invariants, snapshots):
    """The loop, ``step(0, len(steps), steps, state, invariants)``, keeping nothing for the
    adjoint: its rule recomputes what it needs from ``snapshots`` snapshots."""
    return step(0, len(steps), steps, copy_state(state), invariants)


def segment_width(steps, state):
    """How many steps the schedule treats as one: 1 for a short loop, else as many as hold
    ``SEGMENT_BYTES`` of ``state`` (from 1 to ``SEGMENT``). A step function called per step
    costs more than a small step; a segment keeps its steps' saves while it is reversed, a
    constant beside the snapshots, kept to a few times ``SEGMENT_BYTES``."""
    if steps <= SHORT:
        return 1
    return max(1, min(SEGMENT, SEGMENT_BYTES // _size(state)))


def step_vjp(step):
    """The generated vjp of a loop's step with respect to its state and invariants."""
    return transforms.derived(step, "vjp", ("state", "invariants"))


def step_jvp(step):
    """The generated jvp of a loop's step with respect to its state and invariants."""
    return transforms.derived(step, "jvp", ("state", "invariants"))


def checkpointed_loop_jvp(step, steps, state, invariants, dstate, dinvariants):
    """The tangent of ``checkpointed_loop``, carried through the loop by the step's jvp."""
    state = copy_state(state)
    tangents = (as_like(dstate, state), as_like(dinvariants, invariants))
    return step_jvp(step)(0, len(steps), steps, state, invariants, tangents)[1]


def snapshots_for(max_memory, state, steps):
    """``checkpoint="auto"``: as many snapshots as ``max_memory`` bytes hold, each a copy of
    ``state`` (measured now, Python objects included), at least 2 and at most one per step."""
    size = _size(state) + 64  # the snapshot list's slot and the tuple the schedule unpacks
    most = sys.maxsize if steps is None else len(steps) + 1  # a `while` loop: no bound known
    return max(2, min(most, int(max_memory // size)))


def _size(obj):
    if isinstance(obj, np.ndarray):
        return sys.getsizeof(obj) + (0 if obj.base is None and obj.flags.owndata else obj.nbytes)
    if isinstance(obj, (tuple, list)):
        return sys.getsizeof(obj) + sum(_size(o) for o in obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(_size(o) for o in obj.values())
    return sys.getsizeof(obj)


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
    step's generated vjp."""
    return step_vjp(step)(lo, hi, steps, state, invariants, seed)


def reverse_segment_jvp(step, lo, hi, steps, state, invariants, seed, dstate, dinvariants,
                        dseed):
    """The tangent of ``reverse_segment`` (a Hessian-vector product through a checkpointed
    loop): the generated jvp of the step's generated vjp."""
    tangents = (as_like(dstate, state), as_like(dinvariants, invariants), as_like(dseed, seed))
    again = transforms.derived(step_vjp(step), "jvp", ("state", "invariants", "seed"))
    return again(lo, hi, steps, state, invariants, seed, tangents)[1]


def reverse_segment_vjp(step, lo, hi, steps, state, invariants, seed, dy):
    """The adjoint of ``reverse_segment``: the generated vjp of the step's generated vjp."""
    again = transforms.derived(step_vjp(step), "vjp", ("state", "invariants", "seed"))
    return again(lo, hi, steps, state, invariants, seed, dy)


@adjoint(reverse_segment)
def reverse_segment_adjoint(dy, y, step, lo, hi, steps, state, invariants, seed):
    """Reverse over reverse through a checkpointed loop's step."""
    dstate, dinvariants, dseed = reverse_segment_vjp(step, lo, hi, steps, state, invariants,
                                                     seed, dy)
    return None, None, None, None, dstate, dinvariants, dseed


@tangent(reverse_segment)
def reverse_segment_tangent(y, step, lo, hi, steps, state, invariants, seed, dstep, dlo, dhi,
                            dsteps, dstate, dinvariants, dseed):
    """Forward over reverse through a checkpointed loop's step."""
    return reverse_segment_jvp(step, lo, hi, steps, state, invariants, seed, dstate,
                               dinvariants, dseed)


@adjoint(checkpointed_loop)
def checkpointed_loop_adjoint(dy, y, step, steps, state, invariants, snapshots):
    """The binomial schedule, inlined where the loop's adjoint goes."""
    dstate = as_like(dy, y)
    dinvariants = as_like(None, invariants)
    held = [copy_state(state)]
    current = copy_state(state)
    n = len(steps)
    width = segment_width(n, state)
    for action, i, j in revolve(-(-n // width), snapshots):  # in segments of `width` steps
        if action == ADVANCE:
            current = step(i * width, min(j * width, n), steps, current, invariants)
        elif action == SNAPSHOT:
            held.append(copy_state(current))
        elif action == RESTORE:
            current = copy_state(held[-1])
        elif action == FORGET:
            held.pop()
        else:
            dstate, dstep = reverse_segment(step, i * width, min(i * width + width, n), steps,
                                            current, invariants, dstate)
            dinvariants = add(dinvariants, dstep)
    return None, None, dstate, as_like(dinvariants, invariants), None


@tangent(checkpointed_loop)
def checkpointed_loop_tangent(y, step, steps, state, invariants, snapshots, dstep, dsteps,
                              dstate, dinvariants, dsnapshots):
    """The loop's tangent: the step's jvp, step by step."""
    return checkpointed_loop_jvp(step, steps, state, invariants, dstate, dinvariants)


def checkpointed_while(probe, step, steps, state, invariants, snapshots):
    """A loop that can leave early (``while``, ``break``), keeping nothing for the adjoint: its
    state when it leaves, and the number of trips it made, counted by ``probe``."""
    return probe(0, sys.maxsize if steps is None else len(steps), steps, copy_state(state),
                 invariants)


def checkpointed_while_jvp(step, steps, state, invariants, trips, dstate, dinvariants):
    """The tangent of ``checkpointed_while``: the step's jvp over the ``trips`` counted."""
    state = copy_state(state)
    tangents = (as_like(dstate, state), as_like(dinvariants, invariants))
    return (*step_jvp(step)(0, trips, steps, state, invariants, tangents)[1], None)


@adjoint(checkpointed_while)
def checkpointed_while_adjoint(dy, y, probe, step, steps, state, invariants, snapshots):
    """The binomial schedule of the trips the loop made (counted when it ran), inlined where the
    loop's adjoint goes: the primal holds the entry state only, the adjoint plays the offline
    schedule of ``n`` trips, ``n + binomial_advances(segments, snapshots)`` advances in all."""
    n = y[-1]
    dstate = as_like(dy, y)[:-1]
    dinvariants = as_like(None, invariants)
    held = [copy_state(state)]
    current = copy_state(state)
    width = segment_width(n, state)
    for action, i, j in revolve(-(-n // width), snapshots):  # in segments of `width` trips
        if action == ADVANCE:
            current = step(i * width, min(j * width, n), steps, current, invariants)
        elif action == SNAPSHOT:
            held.append(copy_state(current))
        elif action == RESTORE:
            current = copy_state(held[-1])
        elif action == FORGET:
            held.pop()
        else:
            dstate, dstep = reverse_segment(step, i * width, min(i * width + width, n), steps,
                                            current, invariants, dstate)
            dinvariants = add(dinvariants, dstep)
    return None, None, None, dstate, as_like(dinvariants, invariants), None


@tangent(checkpointed_while)
def checkpointed_while_tangent(y, probe, step, steps, state, invariants, snapshots, dprobe,
                               dstep, dsteps, dstate, dinvariants, dsnapshots):
    """The loop's tangent: the step's jvp over the trips the loop made."""
    return checkpointed_while_jvp(step, steps, state, invariants, y[-1], dstate, dinvariants)


nondiff(revolve, signature="steps, snapshots")
nondiff(snapshots_for, signature="max_memory, state, steps")
nondiff(step_vjp, signature="step")
nondiff(step_jvp, signature="step")
nondiff(segment_width, signature="steps, state")
linear(copy_state, "state", vjp="dy", jvp="dstate")


# --- the rewrite ---------------------------------------------------------------------------------

def checkpointed(f: Any, checkpoint: Any, max_memory: Any) -> Any:
    """``f`` with each top-level ``for`` loop over ``range`` a call of ``checkpointed_loop``, and
    each top-level ``while`` loop or ``for`` loop with ``break`` a call of
    ``checkpointed_while`` (see the module docstring); ``f`` itself when it has no such loop."""
    parsed = parse_function(f)
    node = parsed.node
    loops = [s for s in node.body
             if isinstance(s, gast.While) or (isinstance(s, gast.For) and _over_range(s.iter))]
    if not loops:
        return f
    taken = {n.id for n in walk(node) if isinstance(n, gast.Name)} | {node.name}
    namer = Namer(taken)
    extras = {}
    for loop in loops:
        _check_loop(loop, parsed.location)
        position = node.body.index(loop)
        call, inits, made = _loop_call(node, position, loop, namer, parsed.location, f)
        names = {n: namer.fresh(n) for n in naming.CHECKPOINT_HELPERS}
        helper = "checkpointed_loop" if len(made) == 1 else "checkpointed_while"
        extras[names[helper]] = globals()[helper]
        extras[names["snapshots_for"]] = snapshots_for
        functions = []
        for made_fn in made:
            functions.append(namer.fresh(made_fn.__name__))
            extras[functions[-1]] = made_fn
        count = (
            gast.Call(_load(names["snapshots_for"]),
                      [gast.Constant(parse_memory(max_memory), None), call["state"],
                       call["steps"]], [])
            if checkpoint == "auto" else gast.Constant(int(checkpoint), None)
        )
        value = gast.Call(_load(names[helper]),
                          [_load(n) for n in reversed(functions)]
                          + [call["steps"], call["state"], call["invariants"], count], [])
        rewritten = gast.Assign([call["target"]], value, None)
        gast.copy_location(rewritten, loop)
        node.body[position:position + 1] = inits + [rewritten]
    node.decorator_list = []
    text = unparse(node) + "\n"
    made = compile_function(text, node.name, f, extras)
    made.__srcgrad_depends__ = getattr(f, "__srcgrad_depends__", ())
    return made


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
            _mutated([gast.Expr(loop.test)])
            or any(isinstance(n, gast.NamedExpr) for n in walk(loop.test))):
        why = "its test may change a value (the replay of its trips does not evaluate it)"
    for n in walk(gast.Module(loop.body, [])):
        if isinstance(n, (gast.Return, gast.Yield, gast.YieldFrom)):
            why = "it can return from the function"
        elif isinstance(n, (gast.Continue, gast.Global, gast.Nonlocal)):
            why = f"it uses `{type(n).__name__.lower()}`"
    if why is not None:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: {why}. Checkpointed loops are `for` loops "
            f"over range(...) and `while` loops at the top level of the function body",
        )


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


def _loop_call(node, position, loop, namer, location, f):
    """The parts of the call replacing ``loop``, the statements that bind what it needs first,
    and the compiled step function (and, for a loop that can leave early, its probe)."""
    is_while = isinstance(loop, gast.While)
    index, state, invariants, constants, exposed = _loop_names(node, position, loop, location)
    bound = _params(node) | _stored(node.body[:position])
    inits = [gast.Assign([_store(v)], gast.Constant(None, None), None)
             for v in state if v not in bound]
    loop_parts = (loop, index, state, invariants, constants, exposed)
    made = [_step_function(node.name, loop_parts, f, probe=False)]
    if is_while or any(True for _ in _breaks(loop.body)):
        made.append(_step_function(node.name, loop_parts, f, probe=True))
    trips = [_store(namer.fresh(naming.TRIPS))] if len(made) == 2 else []
    return {
        "target": gast.Tuple([_store(v) for v in state] + trips, gast.Store()),
        "steps": gast.Constant(None, None) if is_while else loop.iter,
        "state": gast.Tuple([_load(v) for v in state], gast.Load()),
        "invariants": gast.Tuple([_load(v) for v in invariants], gast.Load()),
    }, inits, made


def _params(node):
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    return params | {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}


def _loop_names(node, position, loop, location):
    """The loop's index (None for ``while``), the state it carries, the invariants it reads, the
    constants the step binds itself, and the names its body may read before binding them."""
    before, after = node.body[:position], node.body[position + 1:]
    is_while = isinstance(loop, gast.While)
    index = None if is_while else loop.target.id
    body = ([gast.Expr(loop.test)] if is_while else []) + loop.body
    assigned = _stored(loop.body) | _mutated(loop.body)
    exposed = exposed_reads(body, set() if is_while else {index})[1]
    read_after = {n.id for n in walk(gast.Module(after, [])) if isinstance(n, gast.Name)}
    if index in read_after:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: `{index}` is read after it",
        )
    # a name a trip binds afresh before reading it (a list built per trip) is not carried
    state = sorted(assigned & (exposed | read_after))
    if not state:
        raise location.error(
            UnsupportedSyntaxError, loop,
            "checkpoint= cannot checkpoint this loop: it carries no state from one iteration "
            "to the next",
        )
    local = _params(node) | _stored(node.body)
    loaded = {n.id for n in walk(gast.Module(body, [])) if isinstance(n, gast.Name)}
    constants = _constants(node, before, loaded - assigned)
    invariants = sorted((loaded - assigned - {index} - set(constants)) & local)
    return index, state, invariants, constants, exposed


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


def _step_function(fname, loop_parts, f, probe):
    """``def <f>_step(lo, hi, steps, state, invariants)``: the loop over ``steps[lo:hi]`` (a
    ``while`` loop's body ``hi - lo`` times, its test not evaluated: the trips were counted).
    With ``probe``, ``def <f>_probe(...)`` instead: the loop as written, from ``lo`` until it
    leaves or ``hi``, returning the state and the number of trips made (the last one may have
    left at a ``break``)."""
    loop, index, state, invariants, constants, exposed = loop_parts
    name = (naming.PROBE if probe else naming.STEP).format(fname)
    unpack = [
        gast.Assign([gast.Tuple([_store(v) for v in names], gast.Store())], _load(packed), None)
        for names, packed in ((state, "state"), (invariants, "invariants")) if names
    ]
    unpack += [gast.Assign([_store(v)], gast.Constant(value, None), None)
               for v, value in sorted(constants.items())]
    # what the body writes into is a copy of its own: the state the step was given is a snapshot
    unpack += [
        gast.Assign([_store(v)], gast.Call(gast.Attribute(_load(v), "copy", gast.Load()), [], []),
                    None)
        for v in sorted(_mutated(loop.body, augmented=False)) if v in state and v in exposed
    ]
    packed = gast.Tuple([_load(v) for v in state], gast.Load())
    body = copy.deepcopy(loop.body)
    target, it, ret = (_probe_loop if probe else _replay_loop)(loop, index, packed, body,
                                                               _trips_name(loop))
    args = gast.arguments([gast.Name(p, gast.Param(), None, None) for p in STEP_PARAMS], [], None,
                          [], [], None, [])
    fn = gast.FunctionDef(name, args, unpack + [gast.For(target, it, body, [], None), ret], [],
                          None, None, [])
    clash = {n.id for n in walk(gast.Module(loop.body, [])) if isinstance(n, gast.Name)}
    clash = (clash | {index} | set(state) | set(invariants)) & set(STEP_PARAMS)
    if clash:
        raise SrcgradError(
            f"checkpoint=: rename the loop variable(s) {sorted(clash)}: the step function of "
            f"the loop in {fname} takes parameters of those names"
        )
    text = unparse(fn) + "\n"
    return compile_function(text, name, f, {})


def _trips_name(loop):
    """A name the loop does not use: the trips a probe counts, or a ``while`` step's counter."""
    head = loop.test if isinstance(loop, gast.While) else loop.target
    used = {n.id for n in walk(gast.Module(loop.body + [head], [])) if isinstance(n, gast.Name)}
    used |= set(STEP_PARAMS)
    return next(t for t in (f"trips_{i}" if i else "trips" for i in range(len(used) + 1))
                if t not in used)


def _probe_loop(loop, index, packed, body, trips):
    """The header and the return of a probe; its ``break`` statements become returns, and a
    ``while`` loop's test its first statement."""
    tripped = gast.Tuple(packed.elts + [_load(trips)], gast.Load())
    for stmt in _breaks(body):  # a break leaves the loop and the probe, trips counted
        stmt.__class__ = gast.Return
        stmt.value = tripped
    ret = gast.Return(gast.Tuple(packed.elts + [_load("hi")], gast.Load()))
    lo_1 = gast.BinOp(_load("lo"), gast.Add(), gast.Constant(1, None))
    if not isinstance(loop, gast.While):
        target = gast.Tuple([_store(trips), _store(index)], gast.Store())
        return target, gast.Call(_load("enumerate"), [_segment(), lo_1], []), ret
    left = gast.Tuple(packed.elts + [gast.BinOp(_load(trips), gast.Sub(),
                                                gast.Constant(1, None))], gast.Load())
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


def _stored(stmts):
    return {n.id for n in walk(gast.Module(stmts, []))
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _mutated(stmts, augmented=True):
    """Names whose value the statements change in place (``x[i] = ...``, ``x += ...``,
    ``xs.append(...)``): state, even when never rebound."""
    out = set()
    for n in walk(gast.Module(stmts, [])):
        base = None
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            base = n.value
        elif isinstance(n, gast.AugAssign) and augmented:
            base = n.target
        elif (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
              and n.func.attr in MUTATING):
            base = n.func.value
        elif isinstance(n, gast.Call):
            out |= _passed(n)
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name):
            out.add(base.id)
    return out


def _passed(call):
    """The names a call may change in place: ``out=`` of any call, and every name passed to a
    call that is neither a builtin nor a NumPy or math function (a helper may write into it)."""
    out = {k.value.id for k in call.keywords if k.arg == "out" and isinstance(k.value, gast.Name)}
    func = call.func
    while isinstance(func, gast.Attribute):
        func = func.value
    known = isinstance(func, gast.Name) and (
        func.id in ("np", "numpy", "math") or (call.func is func and hasattr(builtins, func.id))
    )
    if not known:
        out |= {a.id for a in call.args if isinstance(a, gast.Name)}
        out |= {k.value.id for k in call.keywords if isinstance(k.value, gast.Name)}
    return out


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _store(name):
    return gast.Name(name, gast.Store(), None, None)
