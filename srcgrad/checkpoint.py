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

A loop that can leave early (``break``, ``return``) or whose trip count is not known when it
starts (``while``) is refused with the line of the loop, as is a loop whose target is not a name.
"""

from __future__ import annotations

import builtins
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
SHORT, SEGMENT = 64, 16  # loops longer than SHORT are scheduled in segments of SEGMENT steps
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


def segment_width(steps):
    """How many steps the schedule treats as one: 1 for a short loop, else 16 (a step function
    called per step costs more than the step; a segment of 16 keeps 16 steps' saves while it is
    reversed, a constant beside the snapshots)."""
    return 1 if steps <= SHORT else SEGMENT


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
    return max(2, min(len(steps) + 1, int(max_memory // size)))


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


@adjoint(checkpointed_loop)
def checkpointed_loop_adjoint(dy, y, step, steps, state, invariants, snapshots):
    """The binomial schedule, inlined where the loop's adjoint goes."""
    reverse_step = step_vjp(step)
    dstate = as_like(dy, y)
    dinvariants = None
    held = [copy_state(state)]
    current = copy_state(state)
    n = len(steps)
    width = segment_width(n)
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
            dstate, dstep = reverse_step(i * width, min(i * width + width, n), steps, current,
                                         invariants, dstate)
            dinvariants = add(dinvariants, dstep)
    return None, None, dstate, as_like(dinvariants, invariants), None


@tangent(checkpointed_loop)
def checkpointed_loop_tangent(y, step, steps, state, invariants, snapshots, dstep, dsteps,
                              dstate, dinvariants, dsnapshots):
    """The loop's tangent: the step's jvp, step by step."""
    return checkpointed_loop_jvp(step, steps, state, invariants, dstate, dinvariants)


nondiff(revolve, signature="steps, snapshots")
nondiff(snapshots_for, signature="max_memory, state, steps")
nondiff(step_vjp, signature="step")
nondiff(step_jvp, signature="step")
linear(copy_state, "state", vjp="dy", jvp="dstate")


# --- the rewrite ---------------------------------------------------------------------------------

def checkpointed(f: Any, checkpoint: Any, max_memory: Any) -> Any:
    """``f`` with each top-level ``for`` loop over ``range`` a call of ``checkpointed_loop``
    (see the module docstring); ``f`` itself when it has no such loop."""
    parsed = parse_function(f)
    node = parsed.node
    for s in node.body:
        if isinstance(s, gast.While):
            raise parsed.location.error(
                UnsupportedSyntaxError, s,
                "checkpoint= cannot checkpoint a `while` loop: its trip count is not known when "
                "it starts, and checkpointing such loops (an online schedule) is not supported "
                "yet",
            )
    loops = [s for s in node.body if isinstance(s, gast.For) and _over_range(s.iter)]
    if not loops:
        return f
    taken = {n.id for n in walk(node) if isinstance(n, gast.Name)} | {node.name}
    namer = Namer(taken)
    extras = {}
    for loop in loops:
        _check_loop(loop, parsed.location)
        position = node.body.index(loop)
        call, inits, step = _loop_call(node, position, loop, namer, parsed.location, f)
        names = {n: namer.fresh(n) for n in naming.CHECKPOINT_HELPERS}
        extras[names["checkpointed_loop"]] = checkpointed_loop
        extras[names["snapshots_for"]] = snapshots_for
        step_name = namer.fresh(naming.STEP.format(node.name))
        extras[step_name] = step
        count = (
            gast.Call(_load(names["snapshots_for"]),
                      [gast.Constant(parse_memory(max_memory), None), call["state"],
                       call["steps"]], [])
            if checkpoint == "auto" else gast.Constant(int(checkpoint), None)
        )
        value = gast.Call(_load(names["checkpointed_loop"]),
                          [_load(step_name), call["steps"], call["state"], call["invariants"],
                           count], [])
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
    if not isinstance(loop.target, gast.Name):
        why = "its target is not a single name"
    elif loop.orelse:
        why = "it has an `else`"
    for n in walk(gast.Module(loop.body, [])):
        if isinstance(n, (gast.Break, gast.Return, gast.Yield, gast.YieldFrom)):
            why = ("it can leave early (`break`, `return`): its trip count is not known when it "
                   "starts, and checkpointing such loops (an online schedule) is not supported yet")
        elif isinstance(n, (gast.Continue, gast.Global, gast.Nonlocal)):
            why = f"it uses `{type(n).__name__.lower()}`"
    if why is not None:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: {why}. Checkpointed loops are `for` loops "
            f"over range(...) at the top level of the function body",
        )


def _loop_call(node, position, loop, namer, location, f):
    """The parts of the call replacing ``loop``, the statements that bind what it needs first,
    and the compiled step function."""
    before, after = node.body[:position], node.body[position + 1:]
    index = loop.target.id
    assigned = _stored(loop.body) | _mutated(loop.body)
    exposed = exposed_reads(loop.body, {index})[1]
    read_after = {n.id for n in walk(gast.Module(after, [])) if isinstance(n, gast.Name)}
    if index in read_after:
        raise location.error(
            UnsupportedSyntaxError, loop,
            f"checkpoint= cannot checkpoint this loop: `{index}` is read after it",
        )
    state = sorted((assigned & (exposed | read_after)) | _mutated(loop.body))
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    params |= {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}
    bound = params | _stored(before)
    local = params | _stored(node.body)
    loaded = {n.id for n in walk(gast.Module(loop.body, [])) if isinstance(n, gast.Name)}
    invariants = sorted((loaded - assigned - {index}) & local)
    inits = [gast.Assign([_store(v)], gast.Constant(None, None), None)
             for v in state if v not in bound]
    if not state:
        raise location.error(
            UnsupportedSyntaxError, loop,
            "checkpoint= cannot checkpoint this loop: it carries no state from one iteration "
            "to the next",
        )
    step = _step_function(node.name, loop, index, state, invariants, exposed, f)
    return {
        "target": gast.Tuple([_store(v) for v in state], gast.Store()),
        "steps": loop.iter,
        "state": gast.Tuple([_load(v) for v in state], gast.Load()),
        "invariants": gast.Tuple([_load(v) for v in invariants], gast.Load()),
    }, inits, step


def _step_function(fname, loop, index, state, invariants, exposed, f):
    """``def <f>_step(lo, hi, steps, state, invariants)``: the loop over ``steps[lo:hi]``."""
    name = naming.STEP.format(fname)
    unpack = [
        gast.Assign([gast.Tuple([_store(v) for v in names], gast.Store())], _load(packed), None)
        for names, packed in ((state, "state"), (invariants, "invariants")) if names
    ]
    # what the body writes into is a copy of its own: the state the step was given is a snapshot
    unpack += [
        gast.Assign([_store(v)], gast.Call(gast.Attribute(_load(v), "copy", gast.Load()), [], []),
                    None)
        for v in sorted(_mutated(loop.body, augmented=False)) if v in state and v in exposed
    ]
    ret = gast.Return(gast.Tuple([_load(v) for v in state], gast.Load()))
    args = gast.arguments([gast.Name(p, gast.Param(), None, None) for p in STEP_PARAMS], [], None,
                          [], [], None, [])
    segment = gast.Subscript(_load("steps"), gast.Slice(_load("lo"), _load("hi"), None),
                             gast.Load())
    body = gast.For(_store(index), segment, list(loop.body), [], None)
    fn = gast.FunctionDef(name, args, unpack + [body, ret], [], None, None, [])
    clash = {n.id for n in walk(gast.Module(loop.body, [])) if isinstance(n, gast.Name)}
    clash = (clash | {index} | set(state) | set(invariants)) & set(STEP_PARAMS)
    if clash:
        raise SrcgradError(
            f"checkpoint=: rename the loop variable(s) {sorted(clash)}: the step function of "
            f"the loop in {fname} takes parameters of those names"
        )
    text = unparse(fn) + "\n"
    return compile_function(text, name, f, {})


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
