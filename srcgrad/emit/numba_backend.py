"""``backend="numba"`` and ``backend="auto"``: the generated Python derivative, compiled by numba.

Requires: a derivative generated for the Python backend (its text in ``GENERATED_SOURCE``, its
line map in ``notes.LINES``). Guarantees: :func:`compiled` returns a function with the same
parameters that runs the same statements compiled with ``numba.njit(cache=True)``, or, for
``"auto"``, the Python derivative where numba cannot compile it; ``source()`` of it shows the
module numba compiled (or says why Python was chosen). Nothing here imports numba before a
transform asks for it.

Lowering keeps the generated code as it is, line for line, except where numba needs another
spelling: ``reversed(range(...))`` becomes a range counting down, ``del`` statements go (numba
frees what is dead itself), the parameters lose their defaults (the wrapper passes every
argument), and every name the code reads from outside becomes an import or a constant at the top
of a module written to the disk cache (so numba's own cache finds it again in a later process):
NumPy and ``math``, numbers, and srcgrad's runtime helpers as their numba implementations
(``runtime/numba_helpers.py``). The per-iteration saves stay lists of tuples, which numba
compiles as typed lists. In code specialized to argument kinds, a returned array made as zeros
of an array parameter's shape becomes a parameter the caller allocates (``_outputs``). A
lowering is kept in srcgrad's disk cache (``lowered``), for the next process.

What numba cannot compile is refused with the user's line behind the generated one
(``numba_refusals.py``): at transform time where the text shows it (``REFUSED`` statements and
expressions, names bound to other objects, NumPy functions numba lacks, attributes of values
other than arrays), else when numba's type inference fails on the first call with new argument
kinds (a helper without an implementation for them, a ``None`` saved beside numbers, ...).
``"auto"`` runs the Python derivative instead, for those argument kinds only.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import marshal
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..derived import PYTHON_BEHIND
from ..errors import SrcgradError
from ..frontend.source import GENERATED_SOURCE
from . import guard
from .numba_refusals import (
    _MISSING,
    Refused,
    _is_call,
    _module_attribute,
    _plain_power,
    _value,
    checked,
    located,
)

BACKENDS = ("python", "numba", "auto")
PYTHON = PYTHON_BEHIND  # on a compiled derivative: the Python derivative it compiles
EXTRA = "pip install 'srcgrad[numba]'"


@dataclass
class Lowered:
    """A generated derivative as the module numba compiles."""

    name: str
    text: str  # the module's text (what ``source()`` shows)
    generated_line: dict = field(default_factory=dict)  # module line -> generated text line
    guard: str | None = None  # the staleness test (emit/guard.py), run in Python before numba
    constants: dict = field(default_factory=dict)  # name -> the number numba compiled it as
    # the returned arrays the caller allocates (``_outputs``): (place in the returned tuple,
    # their name, the index of the parameter whose shape they have); ``arity`` the length of
    # the returned tuple (None: one value returned)
    outputs: tuple = ()
    arity: int | None = None


def check(backend: Any) -> str:
    """``backend`` if it names one, else a ``SrcgradError`` listing them."""
    if backend not in BACKENDS:
        raise SrcgradError(f"backend must be one of {BACKENDS}; got {backend!r}")
    return str(backend)


def compiled(py_fn: Any, backend: str, specialized: Any = None, user: Any = None) -> Any:
    """The derivative ``py_fn`` (generated for Python) run by ``backend``; ``specialized(kinds)``
    gives it specialized to argument kinds (``emit/numba_calls.py``); ``user``, the function
    differentiated (where a refused checkpointed loop is located)."""
    if backend == "python":
        return py_fn
    try:
        numba = importlib.import_module("numba")
    except ImportError:
        if backend == "numba":
            raise SrcgradError(
                f"backend='numba' needs numba, an optional extra of srcgrad: {EXTRA}"
            ) from None
        from .numba_calls import python_choice

        return python_choice(py_fn, f"numba is not installed ({EXTRA})")
    from . import numba_calls

    try:
        lowering = lowered(py_fn)  # what numba cannot compile is refused now, not at the call
    except Refused as refused:
        if backend == "numba":
            raise located(py_fn, refused, user) from None
        return numba_calls.python_choice(py_fn, f"numba cannot compile {refused.construct}")
    if backend == "auto" and not numba_calls.has_loop(py_fn):
        return numba_calls.python_choice(py_fn, numba_calls.NO_LOOP)
    return numba_calls.wrapper(numba, py_fn, lowering, backend, specialized)


# --- lowering -----------------------------------------------------------------------------------
def lowered(py_fn: Any, arrays: frozenset = frozenset()) -> Lowered:
    """:func:`lower`, read from srcgrad's disk cache when an earlier process lowered the same
    text with the same meaning of every name the code object reads (:func:`_lowering_key`); a
    lowering is tens of milliseconds of a second process's start (twice: unspecialized at the
    transform, specialized at the first call). Refusals are not kept (they raise again)."""
    from . import diskcache

    if not diskcache.enabled():
        return lower(py_fn, arrays)
    key = _lowering_key(py_fn, arrays)
    path = os.path.join(diskcache.directory(), "numba", "lowered", key[:2], key + ".lowered")
    found = _read_lowered(path, key)
    if found is not None:
        return found
    result = lower(py_fn, arrays)
    fields = (result.name, result.text, result.generated_line, result.guard, result.constants,
              result.outputs, result.arity)
    try:
        payload = marshal.dumps(fields)
    except ValueError:
        return result
    diskcache._write(path, key, payload)
    return result


def _lowering_key(py_fn: Any, arrays: frozenset) -> str:
    """What :func:`lower` depends on: srcgrad's modules and the versions (``diskcache.
    environment``), the generated text, ``arrays``, and what each name the code reads (global,
    builtin or closure variable) denotes, in the terms ``_header`` and ``guard.is_guard`` read it
    (a successful lowering read every free name as one of these, so another object under a name
    is a name the text does not read freely)."""
    from hashlib import blake2b

    from ..runtime import numba_helpers
    from . import diskcache

    helpers = {id(k): v.__name__ for k, v in numba_helpers.HELPERS.items()}
    code = py_fn.__code__
    cells = dict(zip(code.co_freevars, py_fn.__closure__ or ()))
    named = []
    names, codes = set(code.co_freevars), [code]
    while codes:  # the function's code and the code of its comprehensions
        inner = codes.pop()
        names.update(inner.co_names)
        codes.extend(c for c in inner.co_consts if isinstance(c, type(code)))
    for name in sorted(names):
        value = cells[name].cell_contents if name in cells else _value(py_fn, name)
        named.append((name, _denotes(name, value, helpers)))
    text = GENERATED_SOURCE[code][0]
    h = blake2b(digest_size=20, person=b"srcgrad-lower")
    h.update(repr((diskcache.environment(), text, sorted(arrays), named)).encode())
    return h.hexdigest()


def _denotes(name: str, value: Any, helpers: dict) -> str:
    if value is np:
        return "numpy"
    if value is math:
        return "math"
    if id(value) in helpers:
        return f"helper {helpers[id(value)]}"
    if value is guard.rederived:
        return "rederived"
    if value is _MISSING:
        return "missing"
    if value is getattr(builtins, name, _MISSING):
        return "builtin"
    if type(value) in (int, float, bool, complex):
        return f"{type(value).__name__} {value!r}"
    return f"other {type(value).__qualname__}"


def _read_lowered(path: str, key: str) -> Lowered | None:
    """The lowering kept at ``path`` for ``key``, if the file is whole and its own."""
    from . import diskcache

    fields = diskcache.read_marshalled(path, key)
    if not (isinstance(fields, tuple) and len(fields) == 7 and isinstance(fields[1], str)):
        return None
    return Lowered(*fields)


def lower(py_fn: Any, arrays: frozenset = frozenset()) -> Lowered:
    """The module numba compiles for the generated ``py_fn``; :class:`Refused` where it cannot.
    ``arrays``: the parameters known to be arrays (the kinds compiled for), whose shapes the
    caller may allocate returned arrays with (``_outputs``)."""
    text = GENERATED_SOURCE[py_fn.__code__][0]
    fdef = ast.parse(text).body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise Refused("a derivative that is not one function", None)
    args = fdef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise Refused("a parameter list with *args, **kwargs or keyword-only parameters",
                      fdef.lineno)
    first = fdef.body[0]
    guard_test = None
    if guard.is_guard(first, py_fn):  # the wrapper runs it: it reads names live, in Python
        guard_test = ast.unparse(first.test)
        fdef.body = fdef.body[1:]
    reserved = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)} & {*SAVES, POWER, MATMUL}
    if reserved:
        raise Refused(f"a variable named {sorted(reserved)[0]}", fdef.lineno,
                      "the numba backend's helpers have that name")
    constants: dict[str, Any] = {}
    header = checked(py_fn, fdef, constants)
    lines = text.splitlines()
    lines[fdef.lineno - 1] = f"def {fdef.name}({', '.join(a.arg for a in args.args)}):"
    dropped = _rewrite(fdef, lines)
    outputs, arity = _outputs(fdef, lines, arrays)
    header.extend(_helper_imports(lines, _preallocate(fdef, lines)))
    if guard_test is not None:
        dropped.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    out = [f"# backend='numba': {fdef.name}, compiled by numba.njit(cache=True, "
           f"boundscheck=True)", *header, "", ""]
    out[1:1] = [f"# {name}: allocated by the caller as np.empty({args.args[index].arg}.shape) "
                f"and returned by it" for _, name, index in outputs]
    generated_line = {}
    for number, line in enumerate(lines, start=1):
        if number in dropped:
            continue
        for part in line.split("\n"):  # a line preallocation rewrote may have become several
            out.append(part)
            generated_line[len(out)] = number
    return Lowered(fdef.name, "\n".join(out) + "\n", generated_line, guard_test, constants,
                   tuple(outputs), arity)


def _outputs(fdef: ast.FunctionDef, lines: list[str],
             arrays: frozenset) -> tuple[list[tuple[int, str, int]], int | None]:
    """Rewrite ``lines`` so that the arrays the function returns that it makes as
    ``np.zeros(p.shape)`` (a parameter ``p`` in ``arrays``, never rebound; one assignment of the
    name, at the top level) are parameters the caller allocates (``np.empty(p.shape)``, made
    zeros where the code made them), and the last statement, the only ``return``, returns the
    other values (a tuple, or nothing): a new array numba returns costs twice what the rest of
    a small gradient does (it is made a Python object, slowly). The outputs, and the length of
    the returned tuple (None: one value)."""
    found = _single_return(fdef) if arrays else None
    if found is None:
        return [], None
    last, returned, arity = found
    stored: dict[str, int] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored[node.id] = stored.get(node.id, 0) + 1
    params = [a.arg for a in fdef.args.args]
    names = [getattr(e, "id", None) for e in returned]  # (None: not a name)
    made = _zeros_of_arguments(fdef, arrays, params, stored)
    outputs = []
    for place, name in enumerate(names):
        if (name in made and names.count(name) == 1 and stored.get(name) == 1
                and name not in params):
            stmt, index = made[name]
            line = lines[stmt.lineno - 1]
            lines[stmt.lineno - 1] = f"{line[: len(line) - len(line.lstrip())]}{name}[...] = 0.0"
            outputs.append((place, name, index))
    if not outputs:
        return [], None
    out_places = {place for place, _, _ in outputs}
    rest = [ast.unparse(e) for place, e in enumerate(returned) if place not in out_places]
    line = lines[last.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    lines[last.lineno - 1] = indent + (f"return ({', '.join(rest)},)" if rest else "return")
    lines[fdef.lineno - 1] = (f"def {fdef.name}("
                              f"{', '.join([*params, *(name for _, name, _ in outputs)])}):")
    return outputs, arity


def _single_return(fdef: ast.FunctionDef):
    """``(return statement, returned values, tuple length or None)`` when the function's last
    statement, on one line, is its only ``return`` and returns no starred value; else None."""
    last = fdef.body[-1] if fdef.body else None
    if not isinstance(last, ast.Return) or last.value is None or last.lineno != last.end_lineno:
        return None
    if sum(isinstance(n, ast.Return) for n in ast.walk(fdef)) != 1:
        return None
    value = last.value
    arity = len(value.elts) if isinstance(value, ast.Tuple) else None
    returned = value.elts if arity is not None else [value]
    if any(isinstance(e, ast.Starred) for e in returned):
        return None
    return last, returned, arity


def _zeros_of_arguments(fdef, arrays, params, stored):
    """The names the function's top level makes once as ``srcgrad_zeros(p.shape)`` of an array
    parameter ``p`` never rebound: name -> (statement, index of ``p``)."""
    made = {}
    for stmt in fdef.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stmt.lineno == stmt.end_lineno
                and _allocation(stmt.value) == "srcgrad_zeros" and len(stmt.value.args) == 1):
            shape = stmt.value.args[0]
            if (isinstance(shape, ast.Attribute) and shape.attr == "shape"
                    and isinstance(shape.value, ast.Name) and shape.value.id in arrays
                    and shape.value.id in params and shape.value.id not in stored):
                made[stmt.targets[0].id] = (stmt, params.index(shape.value.id))
    return made


def _helper_imports(lines: list[str], preallocated: list[str]) -> list[str]:
    """The imports of the numba helpers the rewritten ``lines`` call."""
    from ..runtime.numba_cached import ALLOCATIONS
    from ..runtime.numba_reductions import REDUCTIONS

    used = list(SAVES) if preallocated else []
    used += [h for h in (POWER, MATMUL, *ALLOCATIONS.values())
             if any(f"{h}(" in ln for ln in lines)]
    out = [f"from srcgrad.runtime.numba_cached import {', '.join(used)}"] if used else []
    reduced = [h for h in dict.fromkeys(REDUCTIONS.values()) if any(f"{h}(" in ln for ln in lines)]
    if reduced:
        out.append(f"from srcgrad.runtime.numba_reductions import {', '.join(reduced)}")
    return out


def _rewrite(fdef: ast.FunctionDef, lines: list[str]) -> set[int]:
    """Rewrite ``lines`` in place where numba needs another spelling; the lines to drop."""
    dropped: set[int] = set()
    for node in ast.walk(fdef):
        # numba's int ** int is an int, 0 for a negative power (Python's is a float); numba
        # compiles its `@` anew in every process (seconds), srcgrad_matmul's from its cache
        operator = _operator_helper(node)
        if operator is not None:
            old = ast.unparse(node)
            call = f"{operator}({ast.unparse(node.left)}, {ast.unparse(node.right)})"
            lines[node.lineno - 1] = lines[node.lineno - 1].replace(old, call, 1)
        if isinstance(node, ast.For) and _is_call(node.iter, "reversed"):
            old = ast.unparse(node.iter)
            lines[node.lineno - 1] = lines[node.lineno - 1].replace(old, _countdown(node), 1)
        reduction = _reduction(node)
        if reduction is not None:  # numba's np.max takes no axis, np.sum no keepdims
            lines[node.lineno - 1] = lines[node.lineno - 1].replace(ast.unparse(node),
                                                                    reduction, 1)
        helper = _allocation(node)
        if helper is not None:  # numba loads it from its cache, never compiles it again
            old = ast.unparse(node)
            new = f"{helper}({ast.unparse(node.args[0])})"
            lines[node.lineno - 1] = lines[node.lineno - 1].replace(old, new, 1)
        for body in _bodies(node):
            kept = [s for s in body if not isinstance(s, ast.Delete)]
            for s in body:
                if isinstance(s, ast.Delete):
                    dropped.update(range(s.lineno, (s.end_lineno or s.lineno) + 1))
            if not kept and body:  # a block of `del` only
                first = body[0]
                indent = lines[first.lineno - 1][: first.col_offset]
                lines[first.lineno - 1] = indent + "pass"
                dropped.discard(first.lineno)
    return dropped


SAVES = ("srcgrad_new_saves", "srcgrad_save", "srcgrad_restore")


def _preallocate(fdef: ast.FunctionDef, lines: list[str]) -> list[str]:
    """Rewrite ``lines`` so that each list of per-iteration saves a loop over a range fills
    (``saved = []``, one ``saved.append(values)`` in that loop, one ``... = saved.pop()``) is
    one preallocated array per number saved, sized from the trip count (``runtime/
    numba_helpers.py``: a list still, for values that are not numbers); the lists rewritten."""
    taken = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
    done = []
    for loop, init, append, pop in _save_lists(fdef):
        name = init.targets[0].id
        top, cap = f"{name}_top", f"{name}_cap"
        if {top, cap} & taken:
            continue
        value = ast.unparse(append.value.args[0])
        _replace(lines, init, f"{top} = 0")
        _replace(lines, loop, f"{cap} = len({ast.unparse(loop.iter)})", keep=True)
        _replace(lines, append, f"if {top} == 0:\n    {name} = {SAVES[0]}({cap}, {value})\n"
                                f"{top} = {SAVES[1]}({name}, {top}, {value})")
        targets = " = ".join(ast.unparse(t) for t in pop.targets)
        _replace(lines, pop, f"{top} -= 1\n{targets} = {SAVES[2]}({name}, {top})")
        done.append(name)
    return done


def _replace(lines: list[str], stmt: ast.stmt, text: str, keep: bool = False) -> None:
    """``stmt``'s (one) line replaced by ``text`` (lines at its indentation); with ``keep``,
    ``text`` goes before it."""
    line = lines[stmt.lineno - 1]
    indent = line[: len(line) - len(line.lstrip())]
    new = "\n".join(indent + part for part in text.split("\n"))
    lines[stmt.lineno - 1] = f"{new}\n{line}" if keep else new


def _save_lists(fdef: ast.FunctionDef) -> list[tuple]:
    """``(loop, init, append, pop)`` for each list of saves :func:`_preallocate` rewrites: made
    empty at the top level, appended to once, of a name or a tuple of names, in a top-level loop
    over a range (outside any inner loop), and popped once."""
    found = []
    for init in fdef.body:
        if (isinstance(init, ast.Assign) and len(init.targets) == 1
                and isinstance(init.targets[0], ast.Name) and isinstance(init.value, ast.List)
                and not init.value.elts and init.lineno == init.end_lineno):
            parts = _save_list(fdef, init, init.targets[0].id)
            if parts is not None:
                found.append((parts[0], init, parts[1], parts[2]))
    return found


def _save_list(fdef: ast.FunctionDef, init: ast.Assign, name: str) -> tuple | None:
    """``(loop, append, pop)`` of the list ``name`` made empty by ``init``, if it qualifies."""
    uses = [n for n in ast.walk(fdef) if isinstance(n, ast.Name) and n.id == name]
    appends = [s for s in ast.walk(fdef) if _method_statement(s, name, "append")]
    pops = [s for s in ast.walk(fdef) if _method_statement(s, name, "pop")]
    if len(uses) != 3 or len(appends) != 1 or len(pops) != 1:
        return None
    append, pop = appends[0], pops[0]
    value = append.value.args[0]
    names = value.elts if isinstance(value, ast.Tuple) else [value]
    if not all(isinstance(e, ast.Name) for e in names):
        return None
    if not all(s.lineno == s.end_lineno for s in (append, pop)):
        return None
    loop = _range_loop(fdef, append)
    return None if loop is None else (loop, append, pop)


def _range_loop(fdef: ast.FunctionDef, stmt: ast.stmt) -> ast.For | None:
    """The top-level loop over a range (its header on one line) that runs ``stmt`` at most once
    an iteration."""
    for s in fdef.body:
        if isinstance(s, ast.For) and _inside(stmt, s.body):
            one_line = s.lineno == s.iter.end_lineno
            return s if _is_call(s.iter, "range") and one_line else None
    return None


def _method_statement(stmt: ast.AST, name: str, method: str) -> bool:
    """``name.append(v)`` (an expression statement) or ``... = name.pop()``."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if method == "append" and not isinstance(stmt, ast.Expr):
        return False
    if method == "pop" and not isinstance(stmt, ast.Assign):
        return False
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == method and isinstance(call.func.value, ast.Name)
            and call.func.value.id == name and not call.keywords
            and len(call.args) == (1 if method == "append" else 0))


def _inside(stmt: ast.stmt, body: list[ast.stmt]) -> bool:
    """Whether ``stmt`` is in ``body``, directly or in the branches of ``if`` statements (not
    in an inner loop: one execution per iteration at most)."""
    for s in body:
        if s is stmt:
            return True
        if isinstance(s, ast.If) and (_inside(stmt, s.body) or _inside(stmt, s.orelse)):
            return True
    return False


POWER, MATMUL = "srcgrad_power", "srcgrad_matmul"


def _operator_helper(node: ast.AST) -> str | None:
    """The helper :func:`_rewrite` calls for the binary operation ``node``, if any."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return MATMUL
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return None if _plain_power(node.right) else POWER
    return None


def _bodies(node: ast.AST) -> list[list[ast.stmt]]:
    return [getattr(node, f) for f in ("body", "orelse", "finalbody")
            if isinstance(getattr(node, f, None), list)]


def _allocation(node: ast.AST) -> str | None:
    """The cached helper (``runtime/numba_cached.ALLOCATIONS``) for ``np.empty(n, np.float64)``,
    ``np.empty(n, np.int64)`` or ``np.zeros(shape)`` on one line."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and _module_attribute(node.func) and not node.keywords
            and node.lineno == node.end_lineno):
        return None
    from ..runtime.numba_cached import ALLOCATIONS

    if len(node.args) == 1:
        return ALLOCATIONS.get((node.func.attr, None))
    dtype = node.args[1] if len(node.args) == 2 else None
    if (isinstance(dtype, ast.Attribute) and _module_attribute(dtype)
            and dtype.value.id == node.func.value.id):
        return ALLOCATIONS.get((node.func.attr, dtype.attr))
    return None


def _reduction(node: ast.AST) -> str | None:
    """``srcgrad_max_axis_keepdims(a, k)`` for ``np.max(a, axis=k, keepdims=True)`` on one line
    (``np.sum``, ``np.min``, ``np.mean``, ``np.amax``, ``np.amin`` alike; the axis an integer,
    keepdims a literal), for ``runtime/numba_reductions.REDUCTIONS``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and _module_attribute(node.func) and node.lineno == node.end_lineno
            and getattr(node.func.value, "_numpy", False)):
        return None
    from ..runtime.numba_reductions import REDUCTIONS

    words = {k.arg: k.value for k in node.keywords}
    if len(node.args) == 2 and "axis" not in words:
        words["axis"] = node.args[1]
    elif len(node.args) != 1:
        return None
    if set(words) - {"axis", "keepdims"} or "axis" not in words:
        return None
    keep = words.get("keepdims", ast.Constant(False))
    axis = _literal_int(words["axis"])
    if axis is None or not (isinstance(keep, ast.Constant) and type(keep.value) is bool):
        return None
    name = REDUCTIONS.get((node.func.attr, keep.value))
    return None if name is None else f"{name}({ast.unparse(node.args[0])}, {axis})"


def _literal_int(node: ast.expr) -> int | None:
    """The integer ``node`` writes (``3``, ``-1``), or None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _countdown(loop: ast.For) -> str:
    """``range(...)`` counting down for ``reversed(range(...))``."""
    inner = loop.iter.args[0] if len(loop.iter.args) == 1 else None
    if inner is None or not _is_call(inner, "range") or not 1 <= len(inner.args) <= 2:
        raise Refused(f"`{ast.unparse(loop.iter)}`", loop.lineno,
                      "only reversed(range(stop)) and reversed(range(start, stop)) are lowered")
    parts = [ast.unparse(a) for a in inner.args]
    start, stop = ("0", parts[0]) if len(parts) == 1 else parts
    low = "-1" if start == "0" else f"({start}) - 1"
    return f"range(({stop}) - 1, {low}, -1)"


__all__ = ["BACKENDS", "PYTHON", "check", "compiled", "lower", "Refused"]
