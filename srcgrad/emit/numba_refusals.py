"""What ``backend="numba"`` cannot compile, and the located errors that say so.

Requires: the text of a generated derivative (``GENERATED_SOURCE``) and its line map
(``notes.LINES``). Guarantees: :func:`checked` walks the derivative before numba sees it and
raises :class:`Refused` at the first construct numba cannot compile (the :data:`REFUSED`
statements and expressions, ``*``/``**`` calls, attributes other than :data:`ATTRIBUTES`,
NumPy functions outside :data:`NUMPY`, ``math`` names that do not exist, names bound to
objects other than NumPy, ``math``, numbers and srcgrad's helpers); else it returns the module's
header, one import or constant per name the code reads from outside. :func:`located` makes a
refusal the user's error at the line behind the generated one (file, line, caret);
:func:`typing_failure` does the same for a failure of numba's type inference on the first call
with new argument kinds (``numba_calls``). ``docs/api.md`` (``backend="numba"``) lists these
constructs.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import math
import os
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SrcgradError, UnsupportedSyntaxError
from ..frontend.source import GENERATED_SOURCE
from . import notes

REFUSED = {
    ast.Dict: "a dict", ast.DictComp: "a dict comprehension", ast.Set: "a set",
    ast.SetComp: "a set comprehension", ast.GeneratorExp: "a generator expression",
    ast.Lambda: "a lambda", ast.Try: "try/except", ast.With: "a with statement",
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
    ast.Global: "a global statement", ast.Nonlocal: "a nonlocal statement",
    ast.ClassDef: "a class definition", ast.FunctionDef: "a nested function",
    ast.AsyncFunctionDef: "a nested function", ast.JoinedStr: "an f-string",
    ast.Starred: "* unpacking", ast.Match: "a match statement",
}


BUILTINS = {"len", "range", "float", "int", "abs", "min", "max", "bool", "round", "zip",
            "enumerate", "complex", "reversed", "ValueError", "IndexError", "ZeroDivisionError"}


NUMPY = set("""
sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh exp expm1 exp2
log log1p log2 log10 sqrt cbrt square abs absolute fabs sign maximum minimum fmax fmin sum mean
prod dot matmul outer zeros ones empty zeros_like ones_like empty_like full full_like array
asarray ascontiguousarray arange linspace where clip power multiply add subtract divide
true_divide negative positive reciprocal floor ceil trunc rint max min amax amin argmax argmin
cumsum cumprod transpose reshape ravel concatenate stack vstack hstack var std pi e inf nan
float64 float32 int64 int32 bool_ isnan isfinite isinf logaddexp hypot copy diag trace eye
identity heaviside deg2rad rad2deg sinc
""".split())


ATTRIBUTES = set("""
append pop T shape size ndim dtype real imag sum copy reshape astype mean max min dot transpose
ravel flatten item prod argmax argmin cumsum
""".split())


class Refused(SrcgradError):
    """A construct numba cannot compile, at a line of the generated text."""

    def __init__(self, construct: str, line: int | None, why: str = "") -> None:
        super().__init__(construct)
        self.construct, self.line, self.why = construct, line, why


def checked(py_fn: Any, fdef: ast.FunctionDef, constants: dict[str, Any]) -> list[str]:
    """The module's header (``_header``) once every node of ``fdef`` is one numba compiles;
    else the first refusal in the text."""
    for node in ast.walk(fdef):
        if isinstance(node, ast.For) and _is_call(node.iter, "reversed"):
            node.iter._lowered = True  # type: ignore[attr-defined]
    refusals = []
    header: list[str] = []
    try:
        header = _header(py_fn, fdef, constants)
    except Refused as refused:
        refusals.append(refused)
    try:
        for node in _in_order(fdef):
            _check(node)
    except Refused as refused:
        refusals.append(refused)
    if refusals:
        raise min(refusals, key=lambda r: r.line or 0)
    return header


def _in_order(fdef: ast.FunctionDef) -> list[ast.AST]:
    """The nodes inside ``fdef`` in the order of the text."""
    nodes = [n for n in ast.walk(fdef) if n is not fdef and hasattr(n, "lineno")]
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _plain_power(exponent: ast.expr) -> bool:
    """Whether ``** exponent`` means the same in numba as in Python: a float or a non-negative
    integer literal."""
    return isinstance(exponent, ast.Constant) and (
        isinstance(exponent.value, float) or type(exponent.value) is int and exponent.value >= 0
    )


def _is_call(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == name)


def _check(node: ast.AST) -> None:
    line = getattr(node, "lineno", None)
    for kind, what in REFUSED.items():
        if isinstance(node, kind):
            raise Refused(what, line)
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Pow) and not _plain_power(
        node.value
    ):
        raise Refused("`**=` with a power that is not a literal", line,
                      "write x = x ** p (numba's int ** int differs from Python's)")
    if isinstance(node, ast.Call):
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            raise Refused(f"the call `{ast.unparse(node)}` with * or ** arguments", line)
        if _is_call(node, "reversed") and not getattr(node, "_lowered", False):
            raise Refused(f"`{ast.unparse(node)}` outside a for loop over a range", line)
    if isinstance(node, ast.Attribute) and not _module_attribute(node):
        if node.attr not in ATTRIBUTES:
            raise Refused(f"the attribute `.{node.attr}`", line,
                          f"numba compiles only these attributes: {', '.join(sorted(ATTRIBUTES))}")


def _module_attribute(node: ast.Attribute) -> bool:
    """Whether ``node`` is ``module.name`` (checked with the module, in ``_header``)."""
    return isinstance(node.value, ast.Name) and getattr(node.value, "_module", False)


def _free_names(fdef: ast.FunctionDef) -> dict[str, ast.Name]:
    """Names ``fdef`` reads but never binds, each with its first use."""
    bound = {a.arg for a in fdef.args.args}
    used: dict[str, ast.Name] = {}
    for node in _in_order(fdef):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                bound.add(node.id)
            else:
                used.setdefault(node.id, node)
        elif isinstance(node, (ast.comprehension,)):
            bound.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return {n: node for n, node in used.items() if n not in bound}


def _value(py_fn: Any, name: str) -> Any:
    code = py_fn.__code__
    if name in code.co_freevars:
        return py_fn.__closure__[code.co_freevars.index(name)].cell_contents
    if name in py_fn.__globals__:
        return py_fn.__globals__[name]
    return getattr(builtins, name, _MISSING)


_MISSING = object()


def _header(py_fn: Any, fdef: ast.FunctionDef, constants: dict[str, Any]) -> list[str]:
    """The module's imports and constants, one per name the code reads from outside (the
    constants, numbers numba compiles in, also into ``constants``)."""
    from ..runtime import numba_cached, numba_helpers

    lines = []
    helpers = {id(k): v for k, v in numba_helpers.HELPERS.items()}
    modules = {id(np): ("numpy", NUMPY), id(math): ("math", None)}
    free = _free_names(fdef)
    for name, use in sorted(free.items(), key=lambda item: (
        _copies_first(_value(py_fn, item[0])), item[1].lineno, item[1].col_offset
    )):  # (a write is refused at its own line, not at the copy of the argument made first)
        value = _value(py_fn, name)
        if id(value) in modules:
            module, allowed = modules[id(value)]
            _check_module_uses(fdef, name, module, allowed)
            lines.append(f"import {module} as {name}" if name != module else f"import {module}")
        elif id(value) in helpers:
            cached = numba_cached.CACHED.get(helpers[id(value)])  # (one compiled per machine)
            helper = (helpers[id(value)] if cached is None else cached.py_func).__name__
            module = "helpers" if cached is None else "cached"
            alias = "" if name == helper else f" as {name}"
            lines.append(f"from srcgrad.runtime.numba_{module} import {helper}{alias}")
        elif name in BUILTINS and value is getattr(builtins, name, None):
            continue
        elif type(value) in (int, float, bool, complex) and abs(value) < 2**63:
            shown = repr(value) if not isinstance(value, float) or math.isfinite(value) else (
                f"float({str(value)!r})")
            lines.append(f"{name} = {shown}")
            constants[name] = value
        else:
            raise _unlowered(name, value, use.lineno)
    return lines


#: srcgrad's runtime helpers of element and slice writes, which have no numba implementation
WRITES = frozenset("""
setitem copy_item restore_item take_item zero_item write_dtype written written_grad add_at
add_at_advanced element_written fresh_copy check_argument_parts check_arguments_apart
""".split())


#: the construct of a checkpointed loop in a derivative of a checkpointed derivative
CHECKPOINTED = ("a loop checkpointed by `checkpoint=` in a derivative of a derivative taken "
                "with it (`grad(grad(f, checkpoint=k))`, `jvp(grad(f, checkpoint=k))`)")


def _copies_first(value: Any) -> bool:
    """Whether ``value`` is ``runtime.fresh_copy`` (the copy of an argument written into)."""
    return (getattr(value, "__name__", None) in ("fresh_copy", "check_argument_parts",
                                                      "check_arguments_apart")
            and str(getattr(value, "__module__", "")).startswith("srcgrad."))


def _unlowered(name: str, value: Any, line: int) -> Refused:
    """The refusal of ``name``, read from outside, bound to ``value`` (no number, module or
    helper numba compiles)."""
    module = getattr(value, "__module__", None) or ""
    helper = getattr(value, "__name__", name)
    if module.startswith("srcgrad.") and helper in WRITES:
        return Refused("a write into an element or a slice of an array (`y[i] = v`, "
                       "`y[:] = v`, `y[i] += v`)", line,
                       f"srcgrad's helper `{helper}` of such writes has no numba "
                       f"implementation; write the array anew (`y = np.array([...])`, "
                       f"`y = y + v`)")
    if module == "srcgrad.checkpoint" and helper == "checkpointed_loop":
        return Refused(CHECKPOINTED, line,
                       "a checkpointed derivative differentiated again runs in Python only; "
                       "hvp(f, checkpoint=k) and hessian(f, checkpoint=k) compile the loop's "
                       "steps")
    if module.startswith("srcgrad.") and callable(value):
        return Refused(f"`{name}` (srcgrad's helper {helper})", line,
                       "it has no numba implementation")
    return Refused(f"`{name}` ({_describe(value)})", line,
                   "numba-compiled code reads NumPy, math, numbers and srcgrad's array "
                   "helpers from outside")


def _check_module_uses(fdef: ast.FunctionDef, name: str, module: str, allowed: Any) -> None:
    for node in ast.walk(fdef):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
            node.value.id == name
        ):
            node.value._module = True  # type: ignore[attr-defined]
            node.value._numpy = module == "numpy"  # type: ignore[attr-defined]
            if allowed is not None and node.attr not in allowed:
                raise Refused(f"`{module}.{node.attr}`", node.lineno,
                              "it is not among the NumPy functions numba compiles here")
            if allowed is None and not hasattr(math, node.attr):
                raise Refused(f"`{module}.{node.attr}`", node.lineno)


def _describe(value: Any) -> str:
    if value is _MISSING:
        return "an undefined name"
    if callable(value):
        return f"the {type(value).__name__} {getattr(value, '__qualname__', value)!s}"
    return f"a {type(value).__name__}"


def located(py_fn: Any, refused: Refused, user: Any = None) -> SrcgradError:
    """The error for ``refused``, at the user's line behind the generated one (for
    :data:`CHECKPOINTED`, at the loop of ``user``, the function differentiated, that the
    checkpointed call replaced)."""
    text = GENERATED_SOURCE[py_fn.__code__][0].splitlines()
    line = refused.line
    shown = text[line - 1].strip() if line and line <= len(text) else ""
    where = f" (generated {py_fn.__name__}, line {line}: `{shown}`)" if line else ""
    why = f": {refused.why}" if refused.why else ""
    message = (f"backend='numba' cannot compile {refused.construct}{where}{why}; use "
               f"backend='python', or backend='auto', which runs Python where numba cannot")
    entry = notes.LINES.get(py_fn.__code__, {}).get((line or 0) + notes.SHIFT)
    if entry is None:
        return UnsupportedSyntaxError(message)
    _, filename, user_line, _ = entry
    if refused.construct == CHECKPOINTED and user is not None:
        loop = _user_loop(user, filename, user_line)
        if loop is not None:
            return loop.error(UnsupportedSyntaxError, loop.node, message)
    source_line = linecache.getline(filename, user_line) or None
    offset = len(source_line) - len(source_line.lstrip()) + 1 if source_line else None
    return UnsupportedSyntaxError(message, filename, user_line, offset, source_line)


@dataclass
class _Loop:
    error: Any  # the Location's error (frontend/source.py)
    node: Any


def _user_loop(user: Any, filename: str, line: int) -> _Loop | None:
    """The loop of the function ``user`` differentiates (through derivatives of derivatives)
    that the ``checkpointed_loop`` call at ``line`` of the checkpointed function (``filename``,
    text srcgrad made) replaced: the k-th call, the k-th loop that ``checkpoint.checkpointed``
    takes (None when the counts differ: a loop it did not take)."""
    import gast

    from ..checkpoint import _over_range
    from ..frontend.source import parse_function

    made = [v for v in list(GENERATED_SOURCE.values()) if v[1] == filename]
    if len(made) != 1:
        return None
    text, _, first, _ = made[0]
    calls = [first + k for k, row in enumerate(text.splitlines())
             if _CHECKPOINTED_CALL.search(row)]
    try:
        parsed = parse_function(differentiated(user))
    except SrcgradError:
        return None
    loops = [s for s in parsed.node.body if isinstance(s, gast.While)
             or (isinstance(s, gast.For) and _over_range(s.iter))]
    if line not in calls or len(calls) != len(loops):
        return None
    return _Loop(parsed.location.error, loops[calls.index(line)])


def differentiated(user: Any) -> Any:
    """The user's function behind ``user``, a function or a derivative srcgrad made of one (the
    derivative of ``grad(f)`` in ``hessian(f)`` reads ``f``)."""
    from ..derived import unwrap

    for _ in range(8):
        recipe = getattr(unwrap(user), "__srcgrad_recipe__", None)
        if recipe is None:
            break
        user = recipe[0]
    return user


_CHECKPOINTED_CALL = re.compile(r"\bcheckpointed_loop\w*\(")


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def typing_failure(py_fn: Any, lowered: Any, path: str, error: Exception,
                   args: tuple) -> SrcgradError:
    """The error for numba's failure to compile ``lowered`` for ``args``."""
    message = _ANSI.sub("", str(error))
    line = None
    for filename, number in _FILE_LINE.findall(message):
        if os.path.abspath(filename) == path:
            line = lowered.generated_line.get(int(number))
            break
    reasons = [m.strip() for m in message.splitlines()
               if m.strip() and not m.startswith(("Failed in", "During:", "File", " "))]
    kinds = ", ".join(_kind(a) for a in args)
    why = f"for arguments ({kinds}): {_reason(reasons[0] if reasons else type(error).__name__)}"
    construct = "this statement" if line else f"{py_fn.__name__}"
    return located(py_fn, Refused(construct, line, why))


_HELPER = re.compile(r"No implementation of function Function\(<function (\w+) at")


def _reason(line: str) -> str:
    """numba's reason, said of what the user wrote (its own objects' reprs left out)."""
    helper = _HELPER.match(line)
    if helper and helper.group(1) in _helper_names():
        return (f"srcgrad's numba implementation of {helper.group(1)} does not take these "
                f"argument kinds")
    if helper:  # one of numba's own (np.max with an axis numba_backend did not lower, ...)
        return f"numba's {helper.group(1)} does not take these arguments"
    if line.startswith("No implementation of function"):
        return "numba has no implementation of an operation here for these argument kinds"
    return line


def _helper_names() -> set[str]:
    """The names of srcgrad's numba helpers (``runtime/numba_helpers.py``, ``numba_reductions``)."""
    from ..runtime import numba_cached, numba_helpers, numba_reductions
    from .numba_backend import MATMUL, POWER, SAVES

    return ({h.__name__ for h in numba_helpers.HELPERS.values()} | set(SAVES) | {POWER, MATMUL}
            | set(numba_cached.ALLOCATIONS.values()) | set(numba_reductions.REDUCTIONS.values())
            | {"new_saves", "save", "restore", "matmul"})


def _kind(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.ndim}-d {value.dtype} array"
    return type(value).__name__


__all__ = ["ATTRIBUTES", "NUMPY", "REFUSED", "Refused", "checked", "located", "typing_failure"]
