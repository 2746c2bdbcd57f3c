"""``checkpoint=`` with ``backend="numba"`` or ``"auto"``: the steps compiled, the schedule Python.

Requires: a reverse derivative generated for the Python backend from a function ``checkpoint.py``
rewrote (its loops calls of ``checkpointed_loop`` on step functions, held in the derivative's
closure). Guarantees: :func:`compiled` returns that derivative with each step function of a
``for`` or ``while`` loop replaced by a :class:`Step`: the step and its vjp compiled by numba
(``numba_backend.compiled``, ``transforms.derived(..., backend=...)``: cached on disk, one
compilation per argument kinds, located errors), while the schedule (``revolve``: advance,
snapshot, restore, reverse) and the snapshots stay the Python derivative's, as ``source()`` shows
it. In the tangent of a checkpointed gradient (``hvp``, ``hessian``) the tangents of the step
(``checkpointed_loop_jvp``, the ``<step>_tangent_state`` of an advance) run the step's compiled
jvp, and the tangent of a reversed segment (``reverse_segment_jvp``) the compiled vjp of that
jvp (:meth:`Step.reverse_tangent`). The trips of a segment run in one compiled call each way,
so the cost per call of numba's dispatch is paid once per segment, not per trip. A ``while``
loop's probe (run once, to count the trips) stays Python.

numba types a step as a function of numbers and arrays (:func:`flat_step`): the state and
invariant tuples become parameters, and ``for i in steps[lo:hi]`` over the loop's range
``for trip in range(lo, hi)`` with ``i = start + trip * stride`` (a range numba_backend
reverses, and whose vjp's saves are arrays sized from the trip count:
``numba_backend._preallocate``). What numba cannot compile is refused with ``backend="numba"``
at the user's line that has the statement (:func:`at_user_line`), at transform time where the
text shows it, else at the first call; ``"auto"`` runs that step in Python.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from .. import checkpoint, transforms
from ..context import Options
from ..derived import PYTHON_BEHIND
from ..errors import LocatedError, SrcgradError, UnsupportedSyntaxError
from ..frontend.source import GENERATED_SOURCE, REWRITTEN_USER_CODE
from . import numba_refusals
from .compile import compile_function

STEP_SUFFIX = "_step"


def compiled(py_fn: Any, backend: str, user: Any = None) -> Any:
    """``py_fn`` with its step functions run by numba (see the module docstring); None when it
    calls no step function (no checkpointed loop: the caller compiles it whole). ``user``: the
    function differentiated, where a statement of a step numba cannot compile is located."""
    code = py_fn.__code__
    cells = list(py_fn.__closure__ or ())
    found = [i for i, c in enumerate(cells) if _is_step(_contents(c))]
    if not found:
        return None
    import types

    try:
        from ..runtime import numba_tuples  # noqa: F401  (check_seed and elem of tuples)
    except ImportError:  # no numba: numba_backend.compiled says so (or "auto" runs Python)
        return None

    tree = ast.parse(GENERATED_SOURCE[code][0])
    new_cells = [types.CellType(_contents(c)) for c in cells]
    second = any(_replacing(_contents(c)) in SECOND_ORDER for c in cells)  # hvp, hessian
    made: dict[int, Step] = {}  # one Step per step function (hvp's guard reads it twice)
    for i in found:
        step = _contents(cells[i])
        if id(step) not in made:
            needed = (_read_by_gradient(user, step) if second
                      else read_invariants(tree, code.co_freevars[i]))
            made[id(step)] = Step(step, backend, needed, user, second)
        new_cells[i] = types.CellType(made[id(step)])
    tangents = {f"{s.__name__}_tangent_{part}": (s, part) for s in made.values()
                for part in ("state", "invariants")}
    for i, cell in enumerate(cells):
        replaced = _replacing(_contents(cell))  # (also the staleness guard's inlined_ copy)
        if replaced is not None:
            new_cells[i] = types.CellType(replaced)
        elif code.co_freevars[i] in tangents:  # the tangent of an advance of the schedule
            new_cells[i] = types.CellType(StepTangent(*tangents[code.co_freevars[i]]))
    fn = types.FunctionType(code, py_fn.__globals__, py_fn.__name__, py_fn.__defaults__,
                            tuple(new_cells))
    fn.__kwdefaults__ = py_fn.__kwdefaults__
    fn.__dict__.update(py_fn.__dict__)
    fn.__qualname__, fn.__doc__ = py_fn.__qualname__, py_fn.__doc__
    setattr(fn, PYTHON_BEHIND, py_fn)  # what other transforms read and inline
    return fn


def _read_by_gradient(gradient: Any, step: Any) -> set[int] | None:
    """:func:`read_invariants` of the gradient whose tangent is ``hvp``'s (what the tangent
    reads of the invariants' cotangents is the tangent of what the gradient reads)."""
    from ..derived import unwrap

    fn = unwrap(gradient)
    code = getattr(fn, "__code__", None)
    if code not in GENERATED_SOURCE:
        return None
    names = [n for n, c in zip(code.co_freevars, fn.__closure__ or ()) if _contents(c) is step]
    if len(names) != 1:
        return None
    return read_invariants(ast.parse(GENERATED_SOURCE[code][0]), names[0])


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def _is_step(value: Any) -> bool:
    """Whether ``value`` is a step function ``checkpoint.py`` made (not a probe)."""
    return (getattr(value, "__srcgrad_kept_state__", None) is not None
            and getattr(value, "__code__", None) in REWRITTEN_USER_CODE
            and value.__name__.endswith(STEP_SUFFIX))


def reverse_segment(step, lo, hi, steps, state, invariants, seed):
    """``checkpoint.reverse_segment``, by the compiled vjp of a :class:`Step`."""
    if isinstance(step, Step):
        return step.reverse(lo, hi, steps, state, invariants, seed)
    return checkpoint.reverse_segment(step, lo, hi, steps, state, invariants, seed)


def checkpointed_loop_jvp(step, steps, state, invariants, kept, dstate, dinvariants):
    """``checkpoint.checkpointed_loop_jvp``, by the compiled jvp of a :class:`Step`."""
    if isinstance(step, Step):
        return checkpoint.tangent_over(step.forward, steps, state, invariants, kept, dstate,
                                       dinvariants)
    return checkpoint.checkpointed_loop_jvp(step, steps, state, invariants, kept, dstate,
                                            dinvariants)


def reverse_segment_jvp(step, lo, hi, steps, state, invariants, seed, dstate, dinvariants,
                        dseed):
    """``checkpoint.reverse_segment_jvp``, by the compiled vjp of the jvp of a :class:`Step`
    (real values; anything complex: the Python step's jvp of its vjp)."""
    if isinstance(step, Step) and not _complex((state, invariants, seed, dstate, dinvariants,
                                                dseed)):
        return step.reverse_tangent(lo, hi, steps, state, invariants, seed, dstate,
                                    dinvariants, dseed)
    python = step.python if isinstance(step, Step) else step
    return checkpoint.reverse_segment_jvp(python, lo, hi, steps, state, invariants, seed,
                                          dstate, dinvariants, dseed)


def _complex(values: Any) -> bool:
    if isinstance(values, (tuple, list)):
        return any(_complex(v) for v in values)
    return np.iscomplexobj(values) if values is not None else False


#: what a derivative's closure holds from checkpoint.py, and what runs a Step instead
REPLACED = ((checkpoint.reverse_segment, reverse_segment),
            (checkpoint.checkpointed_loop_jvp, checkpointed_loop_jvp),
            (checkpoint.reverse_segment_jvp, reverse_segment_jvp))
SECOND_ORDER = (checkpointed_loop_jvp, reverse_segment_jvp)


def _replacing(value: Any) -> Any:
    """What runs a Step instead of ``value`` (:data:`REPLACED`, by identity), or None."""
    return next((new for old, new in REPLACED if value is old), None)


class StepTangent:
    """``<step>_tangent_<part>`` of a :class:`Step` (the tangent of a call of the step along the
    tangent of its ``state`` or ``invariants`` only): the tangent of the state it returns."""

    def __init__(self, step: Step, part: str) -> None:
        self.step, self.part = step, part

    def __call__(self, lo, hi, steps, state, invariants, tangent):
        pair = ((tangent, None) if self.part == "state" else (None, tangent))
        pair = (checkpoint.tangent_like(pair[0], state),
                checkpoint.tangent_like(pair[1], invariants))
        return self.step.forward(lo, hi, steps, state, invariants, pair)[1]


class Step:
    """A loop's step function run by numba: called as the step is, ``(lo, hi, steps, state,
    invariants) -> state``; :meth:`reverse` its vjp, as ``checkpoint.reverse_segment``. In a
    second derivative (``second``: hvp, hessian) also :meth:`forward`, its jvp, and
    :meth:`reverse_tangent`, the tangent of :meth:`reverse`."""

    def __init__(self, step: Any, backend: str, needed: set[int] | None = None,
                 user: Any = None, second: bool = False) -> None:
        self.python, self.user = step, numba_refusals.differentiated(user)
        try:
            self._compile(step, backend, needed, second)
        except LocatedError as error:
            raise at_user_line(error, self.user) from None
        self.__name__ = step.__name__
        self.__srcgrad_kept_state__ = step.__srcgrad_kept_state__

    def _compile(self, step: Any, backend: str, needed: set[int] | None,
                 second: bool) -> None:
        from . import numba_backend

        flat, names, self.count = flat_step(step)
        # the invariants whose cotangents the derivative reads (None: all)
        self.places = [k for k in range(len(names) - self.count)
                       if needed is None or k in needed]
        wrt = (*names[: self.count], *(names[self.count + k] for k in self.places))
        try:
            numba_backend.lowered(flat)  # (kept on disk: compiled() reads it back)
        except numba_backend.Refused as refused:  # at the step's line (no line map of its own)
            if backend == "numba":
                text = GENERATED_SOURCE[flat.__code__][0].splitlines()
                error = numba_backend.located(flat, refused)
                error.filename = flat.__code__.co_filename
                error.lineno = refused.line
                error.line = text[refused.line - 1] if refused.line else None
                raise error from None
        self.primal = numba_backend.compiled(flat, backend)
        self.vjp = transforms.derived(flat, "vjp", wrt, Options(backend=backend))
        if second:  # hvp, hessian: the step's jvp, and the vjp of that jvp (reverse_tangent)
            every = tuple(names)
            self.jvp = transforms.derived(flat, "jvp", every, Options(backend=backend))
            tangent = transforms.derived(flat, "jvp", every, Options(for_numba=True))
            self.again = transforms.derived(tangent, "vjp", wrt, Options(backend=backend))

    def __call__(self, lo, hi, steps, state, invariants):
        start, stride = _range(steps)
        try:
            return self.primal(lo, hi, start, stride, *state, *invariants)
        except LocatedError as error:  # numba's typing failed for these arguments
            raise at_user_line(error, self.user) from None

    def forward(self, lo, hi, steps, state, invariants, tangent):
        """``(state, dstate)`` of the trips ``lo .. hi - 1`` from ``state`` along ``tangent``
        (``(dstate, dinvariants)``, zeros filled in): ``checkpoint.step_jvp``'s."""
        start, stride = _range(steps)
        try:
            return self.jvp(lo, hi, start, stride, *state, *invariants,
                            (*tangent[0], *tangent[1]))
        except LocatedError as error:
            raise at_user_line(error, self.user) from None

    def reverse_tangent(self, lo, hi, steps, state, invariants, seed, dstate, dinvariants,
                        dseed):
        """The tangent of :meth:`reverse`'s ``(dstate, dinvariants)`` along the tangents of
        ``state``, ``invariants`` and ``seed``. The jvp of the vjp, computed as the vjp of the
        jvp: the gradient of ``<step(x), dseed> + <jvp(x, dx), seed>`` is ``J^T dseed +
        (d/dx J^T seed) dx`` (second derivatives are symmetric), so no tangent of the vjp's
        saves is needed, which numba has no helpers for."""
        start, stride = _range(steps)
        tangent = (*checkpoint.tangent_like(dstate, state),
                   *checkpoint.tangent_like(dinvariants, invariants))
        dseed = checkpoint.tangent_like(dseed, seed)
        try:
            grads = self.again(lo, hi, start, stride, *state, *invariants, tangent,
                               (tuple(dseed), tuple(seed)))
        except LocatedError as error:
            raise at_user_line(error, self.user) from None
        return tuple(grads[: self.count]), self._spread(grads[self.count:], len(invariants))

    def reverse(self, lo, hi, steps, state, invariants, seed):
        """``(dstate, dinvariants)`` of the trips ``lo .. hi - 1`` from ``state``."""
        start, stride = _range(steps)
        try:
            grads = self.vjp(lo, hi, start, stride, *state, *invariants, tuple(seed))
        except LocatedError as error:
            raise at_user_line(error, self.user) from None
        return tuple(grads[: self.count]), self._spread(grads[self.count:], len(invariants))

    def _spread(self, grads, count):
        """The cotangents (or their tangents) of all ``count`` invariants from those of the
        :attr:`places` (None: zero, never read)."""
        dinvariants: list[Any] = [None] * count
        for k, g in zip(self.places, grads):
            dinvariants[k] = g
        return tuple(dinvariants)


def at_user_line(error: LocatedError, user: Any) -> LocatedError:
    """``error``, raised at a line of a step function (generated text), at the line of
    ``user``'s source that has the same statement (the first: the step's statements are the
    loop body's, as written); as it is when none has."""
    import inspect

    if user is None or error.line is None or not str(error.filename).startswith("<srcgrad"):
        return error
    try:
        lines, first = inspect.getsourcelines(user)
        filename = inspect.getsourcefile(user)
    except (OSError, TypeError):
        return error
    want = _normal(error.line)
    for k, text in enumerate(lines):
        if _normal(text) == want:
            offset = len(text) - len(text.lstrip()) + 1
            return UnsupportedSyntaxError(error.message, filename, first + k, offset,
                                          text.rstrip("\n"))
    return error


def _normal(line: str) -> str:
    """A statement's text as ``ast.unparse`` writes it (the line itself if it is not one)."""
    try:
        return ast.unparse(ast.parse(line.strip()))
    except SyntaxError:
        return line.strip()


def read_invariants(tree: ast.Module, step: str) -> set[int] | None:
    """The places of the invariants whose cotangents the derivative ``tree`` reads from
    ``dstate, dstep = reverse_segment(step, ...)``: ``acc = add(acc, dstep)``, then
    ``d = as_like(acc, invariants)`` read only as ``elem(d, i, ...)`` (a literal ``i``). None
    (all of them) when the text reads them otherwise. An invariant the user did not ask a
    gradient of (the RNN's inputs ``xs``) is then not differentiated in the step's vjp."""
    nodes = list(ast.walk(tree))
    acc = _accumulator(nodes, step)
    if acc is None:
        return None
    casts = [n for n in nodes if isinstance(n, ast.Assign) and _calls(n.value, "as_like")
             and _is_name(n.value.args[0], acc) and isinstance(n.targets[0], ast.Name)]
    if len(casts) != 1 or len(_loads(nodes, acc)) != 2:  # read by the add and the cast only
        return None
    cast = casts[0].targets[0].id
    reads = [n for n in nodes if _calls(n, "elem") and _is_name(n.args[0], cast)]
    literal = [r.args[1].value for r in reads if len(r.args) > 1
               and isinstance(r.args[1], ast.Constant) and type(r.args[1].value) is int]
    if len(reads) != len(_loads(nodes, cast)) or len(literal) != len(reads):
        return None
    return set(literal)


def _accumulator(nodes: list[ast.AST], step: str) -> str | None:
    """``acc`` of ``acc = add(acc, dstep)``, the one sum of the invariants' cotangents of
    ``dstate, dstep = reverse_segment(step, ...)``; None if the text has not exactly these."""
    parts = [n.targets[0].elts[1].id for n in nodes if isinstance(n, ast.Assign)
             and _calls(n.value, "reverse_segment") and _is_name(n.value.args[0], step)
             and isinstance(n.targets[0], ast.Tuple) and len(n.targets[0].elts) == 2
             and isinstance(n.targets[0].elts[1], ast.Name)]
    if len(parts) != 1:
        return None
    adds = [n.targets[0].id for n in nodes if isinstance(n, ast.Assign)
            and _calls(n.value, "add") and len(n.value.args) == 2
            and _is_name(n.value.args[1], parts[0]) and isinstance(n.targets[0], ast.Name)
            and _is_name(n.value.args[0], n.targets[0].id)]
    return adds[0] if len(adds) == 1 else None


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _is_name(node.func, name) and bool(node.args)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _loads(nodes: list[ast.AST], name: str) -> list[ast.Name]:
    return [n for n in nodes if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]


def _range(steps: Any) -> tuple[int, int]:
    """The start and stride of a ``for`` loop's range (a ``while`` loop's steps are None)."""
    if steps is None:
        return 0, 1
    if not isinstance(steps, range):  # (checkpoint.py checkpoints loops over ranges only)
        raise SrcgradError(f"a checkpointed loop compiled by numba runs over a range; got "
                           f"{type(steps).__name__}")
    return steps.start, steps.step


def flat_step(step: Any) -> tuple[Any, list[str], int]:
    """The step function as numba types it: ``(lo, hi, start, stride, *state, *invariants)``,
    its loop over ``steps[lo:hi]`` one over that range; the names of the state and invariant
    parameters, and how many are state."""
    text = GENERATED_SOURCE[step.__code__][0]
    fdef = ast.parse(text).body[0]
    assert isinstance(fdef, ast.FunctionDef)
    unpacked: dict[str, list[str]] = {"state": [], "invariants": []}
    body = []
    for stmt in fdef.body:
        packed = _unpacking(stmt)
        if packed is not None:
            unpacked[packed[0]] = packed[1]
        else:
            body.append(stmt)
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
    trip = next(t for t in (f"trip_{i}" for i in range(len(taken) + 1)) if t not in taken)
    for node in ast.walk(ast.Module(body, [])):
        if isinstance(node, ast.For) and _is_segment(node.iter) and isinstance(node.target,
                                                                              ast.Name):
            index = node.target.id  # (a range counting up by 1: its reverse is lowered)
            node.iter = ast.parse("range(lo, hi)", mode="eval").body
            node.target = ast.Name(trip, ast.Store())
            node.body.insert(0, ast.parse(f"{index} = start + {trip} * stride").body[0])
    names = unpacked["state"] + unpacked["invariants"]
    params = ["lo", "hi", "start", "stride", *names]
    fdef.name = f"{fdef.name}_flat"
    fdef.args = ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, [])
    fdef.body = body
    made = compile_function(ast.unparse(ast.fix_missing_locations(fdef)) + "\n", fdef.name,
                            step, {})
    REWRITTEN_USER_CODE.add(made.__code__)
    return made, names, len(unpacked["state"])


def _unpacking(stmt: ast.stmt) -> tuple[str, list[str]] | None:
    """``("state", ["s", "x"])`` for ``s, x = state`` (and ``invariants`` alike), else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.value, ast.Name) and stmt.value.id in ("state", "invariants")):
        return None
    target = stmt.targets[0]
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    if not all(isinstance(n, ast.Name) for n in names):
        return None
    return stmt.value.id, [n.id for n in names]


def _is_segment(node: ast.expr) -> bool:
    """Whether ``node`` is ``steps[lo:hi]``."""
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == "steps" and isinstance(node.slice, ast.Slice)
            and isinstance(node.slice.lower, ast.Name) and node.slice.lower.id == "lo"
            and isinstance(node.slice.upper, ast.Name) and node.slice.upper.id == "hi"
            and node.slice.step is None)
