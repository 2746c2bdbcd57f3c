"""The reverse of a checkpointed loop's segments on numbers and float64 arrays, and the primal
sweep of its steps, specialized.

Requires: a step function ``checkpoint.py`` made (``(lo, hi, steps, state, invariants) ->
state``), called by ``checkpoint.reverse_segment`` with a state, invariants and a seed.
Guarantees: :func:`reverse` returns ``(dstate, dinvariants)``, the cotangents
``checkpoint.step_vjp(step)`` gives, or None when it does not apply (the caller runs that
generic vjp). It applies when every element of the state and the invariants is an int, a
float64 number (a Python float or a NumPy float64 scalar) or a float64 array, every seed of a
float element is one too, and the loop runs over a range (or is a ``while`` loop). The step
then runs as a function of those numbers (``emit/numba_checkpoint.flat_step``: the state and
the invariants as parameters), and its vjp is the gradient of the seeded sum

    def pendulum_step_dot(lo, hi, start, stride, omega, theta, L, c, seed_0, seed_1):
        <the step's body>
        return omega * seed_0 + theta * seed_1     # np_sum(x * seed_k) for an array

with respect to the float elements: d/dx <step(x), seed> is the vjp of the step at ``seed``
(real values only; multiplying the unit seed by ``seed`` is exact, so the numbers are the
vjp's). That gradient is generated once per (number or array) layout and specialized to the
kinds of its arguments (``kinds.Specialized``), so its scalar code stays on Python floats and
has no ``unbroadcast`` per operation, as an un-checkpointed gradient called repeatedly does;
the generic vjp takes the state as tuples, which have no kind. An int element's cotangent is
0.0, as the generic vjp gives it (an int whose seed is not zero runs the generic vjp: its step
may have made it a float); a seed None (zero) adds no term. A seed that does not fit the
seeded sum (a number's seed where the step made an array) runs the generic vjp too. Used
from the ``AFTER_TRIPS``-th trip a step reversed on (a derivative called on a short loop does
not pay the generation, 20-60 ms).

:func:`advance` runs the trips of a ``for`` loop's primal sweep (``checkpoint.checkpointed_loop``)
by the same flat step's jvp along ``lo`` (an int: no tangent is computed, the code is the step's
own, optimized), specialized to the kinds of the state and the invariants, so ``np.sin`` of a
float runs as ``math.sin`` (optimize/scalars.py); the returned state is the same numbers, a
NumPy float64 scalar again where the state had one. From the ``AFTER_TRIPS``-th trip the step
ran forward; any other state runs the step as written.
"""

from __future__ import annotations

import ast
import types
from typing import Any

import numpy as np

from . import transforms
from .analysis.argkinds import FLOAT, FLOAT64, INT, signature_kind
from .derived import unwrap
from .emit import naming
from .emit.compile import compile_function
from .errors import SrcgradError
from .frontend.source import GENERATED_SOURCE, REWRITTEN_USER_CODE

AFTER_TRIPS = 4096  # the trips a step reverses generically before its fast vjp is generated
FAST = "__srcgrad_fast_reverse__"  # on a step function: its _Fast


def reverse(step: Any, lo: int, hi: int, steps: Any, state: tuple, invariants: tuple,
            seed: Any) -> Any:
    """``(dstate, dinvariants)`` of the trips ``lo .. hi - 1`` from ``state``, by the step's
    specialized vjp; None where it does not apply (see the module docstring)."""
    fast = step.__dict__.get(FAST)
    if fast is None:
        fast = step.__dict__[FAST] = _Fast(step)
    return fast(lo, hi, steps, state, invariants, seed)


def advance(step: Any, lo: int, hi: int, steps: Any, state: tuple, invariants: tuple) -> Any:
    """``step(lo, hi, steps, state, invariants)``: the state after the trips ``lo .. hi - 1``,
    by the step's specialized forward where it applies (as :func:`reverse`, without a seed)."""
    if type(step) is types.FunctionType:
        fast = step.__dict__.get(FAST)
        if fast is None:
            fast = step.__dict__[FAST] = _Fast(step)
        out = fast.forward(lo, hi, steps, state, invariants)
        if out is not None:
            return out
    return step(lo, hi, steps, state, invariants)


def plain(values: tuple) -> bool:
    """Whether each of ``values`` is an int, a float64 number or a float64 array (what the
    specialized vjp may take)."""
    return type(values) is tuple and all(_tag(v) is not None for v in values)


def _tag(value: Any) -> Any:
    """``"i"`` for an int, ``0`` for a float64 number, the number of dimensions for a float64
    array; None for anything else."""
    kind = signature_kind(value)
    if kind is None:
        return None
    if kind == INT:
        return "i"
    if kind == FLOAT or (kind[0] == "scalar" and kind[1].str == FLOAT64):
        return 0
    if kind[0] == "array" and kind[2].str == FLOAT64:
        return kind[1]
    return None


def _start_stride(steps: Any) -> tuple:
    """The start and stride of a ``for`` loop's range, ``(0, 1)`` for a ``while`` loop's steps
    (None); ``(None, None)`` for anything else."""
    if steps is None:
        return 0, 1
    if type(steps) is range:
        return steps.start, steps.step
    return None, None


def _number(value: Any) -> Any:
    """A NumPy float64 scalar as the Python float of the same value (scalar code on Python
    floats is several times faster; the arithmetic is the same IEEE double arithmetic)."""
    return float(value) if type(value) is np.float64 else value


def _like(g: Any, x: Any) -> Any:
    """The cotangent ``g`` of ``x`` a NumPy float64 scalar again where ``x`` is one."""
    return np.float64(g) if type(x) is np.float64 and type(g) is float else g


class _Fast:
    """A step's specialized vjps, one per layout of its state and invariants."""

    def __init__(self, step: Any) -> None:
        self.step, self.trips, self.advanced = step, 0, 0
        self.flat: Any = None  # (flat step, its parameter names, how many are state)
        self.made: dict = {}  # layout -> specialized gradient of the seeded sum, or None
        self.forwards: dict = {}  # tags -> specialized forward, or None

    def forward(self, lo, hi, steps, state, invariants):
        """The state after the trips ``lo .. hi - 1``; None where the specialized forward (the
        step's jvp along its ``lo``, which has no tangent: the step's own code, specialized)
        does not apply."""
        if self.advanced < AFTER_TRIPS:
            self.advanced += hi - lo
            return None
        start, stride = _start_stride(steps)
        if stride is None or type(state) is not tuple or type(invariants) is not tuple:
            return None
        tags = tuple(map(_tag, state + invariants))
        if None in tags:
            return None
        made = self.forwards.get(tags, False)
        if made is False:
            made = self.forwards[tags] = self._make_forward(tags)
        if made is None:
            return None
        try:
            out, _ = made(lo, hi, start, stride, *map(_number, state + invariants), 0)
        except SrcgradError:
            self.forwards[tags] = None
            return None
        return tuple(map(_like, out, state))

    def _make_forward(self, tags):
        from .emit.numba_checkpoint import flat_step
        from .kinds import Specialized

        try:
            if self.flat is None:
                self.flat = flat_step(self.step)
            flat, names, _ = self.flat
            if len(names) != len(tags):
                return None
            return Specialized(unwrap(transforms.derived(flat, "jvp", "lo")), after=1)
        except SrcgradError:
            return None

    def __call__(self, lo, hi, steps, state, invariants, seed):
        if self.trips < AFTER_TRIPS:
            self.trips += hi - lo
            return None
        start, stride = _start_stride(steps)
        if stride is None:
            return None
        if type(state) is list:  # (a loop that can leave early: its probe's state)
            state = tuple(state)
        if type(seed) is list:
            seed = tuple(seed)
        layout = self._layout(state, invariants, seed)
        if layout is None:
            return None
        grad = self.made.get(layout, False)
        if grad is False:
            grad = self.made[layout] = self._make(layout)
        if grad is None:
            return None
        tags, terms = layout
        count = len(state)
        args = state + invariants
        seeds = [_number(s) for s, term in zip(seed, terms) if term is not None]
        try:
            grads = iter(grad(lo, hi, start, stride, *map(_number, args), *seeds))
        except SrcgradError:  # a number's seed where the step made an array, or another
            self.made[layout] = None  # value the generic vjp takes and the seeded sum not
            return None
        out = [0.0 if t == "i" else _like(next(grads), x) for x, t in zip(args, tags)]
        return tuple(out[:count]), tuple(out[count:])

    @staticmethod
    def _layout(state, invariants, seed):
        """``(tags, terms)``: the ``_tag`` of each element of the state and the invariants,
        and for each of the state, whether its term of the seeded sum is ``np_sum(x * seed)``
        (True: an array or an array's seed), ``x * seed`` (False) or absent (None: a seed
        None, or an int's seed, zero); None where the specialized vjp does not apply."""
        if type(state) is not tuple or type(invariants) is not tuple or type(seed) is not tuple \
                or len(seed) != len(state):
            return None
        tags = tuple(map(_tag, state + invariants))
        if None in tags:
            return None
        terms = []
        for t, s in zip(tags, seed):
            if s is None:  # (a zero cotangent: no term)
                terms.append(None)
                continue
            u = _tag(s)
            if t == "i":  # (its step may make it a float: then only a zero seed is dropped)
                if not (u in ("i", 0) and s == 0):
                    return None
                terms.append(None)
            elif u is None or u == "i":
                return None
            else:
                terms.append(t != 0 or u != 0)
        return tags, tuple(terms)

    def _make(self, layout):
        """The specialized gradient of the seeded sum for ``layout``; None if it cannot be
        generated (the generic vjp runs)."""
        from .emit.numba_checkpoint import flat_step
        from .kinds import Specialized

        try:
            if self.flat is None:
                self.flat = flat_step(self.step)
            flat, names, count = self.flat
            tags, terms = layout
            if len(names) != len(tags) or count != len(terms):
                return None
            dot = _seeded_sum(flat, names, terms)
            wrt = tuple(n for n, t in zip(names, tags) if t != "i")
            if not wrt:
                return None
            return Specialized(unwrap(transforms.derived(dot, "grad", wrt)), after=1)
        except SrcgradError:
            return None


def _seeded_sum(flat: Any, names: list[str], terms: tuple) -> Any:
    """``flat`` (the step of numbers) returning the sum of its float state elements times a
    seed each (see the module docstring), the seeds its last parameters."""
    fdef = ast.parse(GENERATED_SOURCE[flat.__code__][0]).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    ret = fdef.body[-1]
    if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple)
            and len(ret.value.elts) == len(terms)):
        raise SrcgradError("a step that does not end returning its state")
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} | set(names)
    total_of = _fresh(naming.SEEDED_SUM, taken)
    parts = []
    for k, (elt, summed) in enumerate(zip(ret.value.elts, terms)):
        if summed is None:
            continue
        seed = _fresh(naming.SEEDED.format(k), taken)
        fdef.args.args.append(ast.arg(seed))
        term = ast.BinOp(elt, ast.Mult(), ast.Name(seed, ast.Load()))
        parts.append(ast.Call(ast.Name(total_of, ast.Load()), [term], []) if summed else term)
    if not parts:
        raise SrcgradError("a step whose state has no float element")
    total = parts[0]
    for term in parts[1:]:
        total = ast.BinOp(total, ast.Add(), term)
    ret.value = total
    fdef.name = fdef.name.replace("_flat", "_dot")
    text = ast.unparse(ast.fix_missing_locations(fdef)) + "\n"
    made = compile_function(text, fdef.name, flat, {total_of: np.sum})
    REWRITTEN_USER_CODE.add(made.__code__)
    return made



def _fresh(stem: str, taken: set[str]) -> str:
    """``stem`` or ``stem_<i>``, not in ``taken`` (added to it)."""
    name = next(t for t in (f"{stem}_{i}" if i else stem for i in range(len(taken) + 1))
                if t not in taken)
    taken.add(name)
    return name
