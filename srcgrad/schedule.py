"""The schedule arithmetic of ``checkpoint=`` (srcgrad/checkpoint.py runs it).

Requires: nothing but the numbers of trips and snapshots (and, for the segment width, the loop's
state, measured).
Guarantees: ``revolve(steps, snapshots)`` is Griewank's binomial schedule (optimal recomputation
with at most ``snapshots`` states held, ``binomial_advances``); ``first_sweep`` where it takes its
snapshots before its first reverse (a ``for`` loop's primal keeps those); :class:`Thinning` the
online snapshots of a loop whose trip count is unknown while it runs, and its choice once the count
is known (never more recomputation than counting the trips first, then playing ``revolve`` from
the entry); ``recomputed`` / ``replayed_advances`` the trips the adjoint runs again, in closed form
and by replaying the schedule.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .errors import SrcgradError

ADVANCE, SNAPSHOT, RESTORE, FORGET, REVERSE = "advance", "snapshot", "restore", "forget", "reverse"
SHORT, SEGMENT = 64, 256  # loops longer than SHORT are scheduled in segments of up to SEGMENT steps
SEGMENT_BYTES = 2**16  # of state per segment: what its tape may hold is a few times that


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


def first_sweep(units, snapshots):
    """Where the binomial schedule of ``units`` steps takes its snapshots on its first sweep
    (before its first reverse): the loop's entry state (0) and then in increasing order."""
    at = [0]
    for action, i, _ in revolve(units, snapshots):
        if action == REVERSE:
            return at
        if action == SNAPSHOT:
            at.append(i)
    return at


class Thinning:
    """Where a loop whose trip count is unknown keeps snapshots while it runs (``reach``, after
    each trip a snapshot may be taken at, ``next`` says which): every ``spacing`` trips, at most
    ``snapshots`` of them; the spacing is 1 for the first ``SHORT`` trips, then at least the
    segment ``width``, and doubles (dropping every other snapshot) when one more would not fit.
    ``choose(n)``, once the loop made ``n`` trips, thins further if that lowers the recomputation
    (dropping all but the entry one gives the offline schedule of ``n`` trips from the entry)."""

    def __init__(self, snapshots, state):
        self.snapshots, self.state = snapshots, state
        self.width = segment_width(None, state)
        self.spacing, self.at = 1, [0]

    def next(self, trip):
        return (trip // self.spacing + 1) * self.spacing

    def reach(self, trip):
        """The loop went on past ``trip``: keep it; whether that dropped any kept before."""
        self.at.append(trip)
        size = len(self.at)
        if trip >= SHORT and self.spacing < self.width:
            self.spacing = self.width
            self.at = [t for t in self.at if t % self.spacing == 0]
        while len(self.at) > self.snapshots:
            self.spacing *= 2
            self.at = [t for t in self.at if t % self.spacing == 0]
        return len(self.at) < size

    def choose(self, n):
        at, spacing = [t for t in self.at if t < n or t == 0], self.spacing
        best = None
        while True:
            intervals = interval_plan(at, n, self.state)
            cost = recomputed(intervals, self.snapshots)
            if best is None or cost < best[0]:
                best = (cost, intervals)
            if len(at) == 1:
                return best[1]
            spacing *= 2
            at = [t for t in at if t % spacing == 0]


def online_intervals(n, snapshots, state):
    """The intervals :class:`Thinning` leaves a ``while`` loop of ``n`` trips that starts from
    ``state`` (what ``checkpointed_loop`` keeps for it, computed without running it)."""
    thinning, trip = Thinning(snapshots, state), 0
    while thinning.next(trip) < n:  # a probe reaching trip n says the loop ends there
        trip = thinning.next(trip)
        thinning.reach(trip)
    return thinning.choose(n)


def interval_plan(at, n, state):
    """``(lo, hi, width)`` from each of the trips ``at`` snapshots are taken at to the next, in
    segments of the width a loop of ``n`` trips has (a short last interval is one segment)."""
    width = segment_width(n, state)
    return [(lo, hi, width) for lo, hi in zip(at, at[1:] + [n])]


def recomputed(intervals, snapshots):
    """The trips the schedule runs again to reverse ``intervals`` (each from its snapshot, with
    the snapshots the ones before it leave free)."""
    return sum(binomial_advances(-(-(hi - lo) // width), snapshots - j) * width
               for j, (lo, hi, width) in enumerate(intervals))


def segment_width(steps, state):
    """How many trips the schedule treats as one: 1 for a short loop (``steps`` at most
    ``SHORT``), else as many as hold ``SEGMENT_BYTES`` of ``state`` (from 1 to ``SEGMENT``;
    ``steps`` None: not known yet). A step function called per trip costs more than a small
    trip; a segment keeps its trips' saves while it is reversed, a constant beside the
    snapshots, kept to a few times ``SEGMENT_BYTES``."""
    if steps is not None and steps <= SHORT:
        return 1
    return max(1, min(SEGMENT, SEGMENT_BYTES // state_size(state)))


def state_size(obj):
    """The bytes ``obj`` holds (arrays, and the tuples, lists and dicts of them)."""
    if isinstance(obj, np.ndarray):
        return sys.getsizeof(obj) + (0 if obj.base is None and obj.flags.owndata else obj.nbytes)
    if isinstance(obj, (tuple, list)):
        return sys.getsizeof(obj) + sum(state_size(o) for o in obj)
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(state_size(o) for o in obj.values())
    return sys.getsizeof(obj)


def replayed_advances(intervals, snapshots):
    """The trips the adjoint runs again, replaying its schedule from each kept snapshot (the
    interval from snapshot ``j`` with ``snapshots - j`` states): ``recomputed``, counted."""
    total = 0
    for j, (lo, hi, width) in enumerate(intervals):
        for action, a, b in revolve(-(-(hi - lo) // width), snapshots - j):
            if action == ADVANCE:
                total += min(lo + b * width, hi) - (lo + a * width)
    return total
