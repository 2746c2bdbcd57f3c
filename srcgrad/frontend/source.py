"""Read a function's source and parse it into a gast ``FunctionDef``.

Requires: a Python function object. Guarantees: a :class:`ParsedFunction` whose ``node`` is the
function's ``FunctionDef`` with decorators stripped, and a :class:`Location` that maps every node
back to the user's file, line and column for error messages.

Functions that srcgrad generated are looked up in the registry of generated source first, so a
derived function is itself valid input (``grad(grad(f))``).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from dataclasses import dataclass

import gast

from ..astutil import ordered_walk
from ..errors import SourceUnavailableError, UnsupportedSyntaxError

# (text, filename, first line, column shift) of every function srcgrad generated, by code object.
GENERATED_SOURCE: dict = {}
# The code objects among them that are the user's own code rewritten, not a derivative (the
# function and loop steps `checkpoint=` makes): checked for sharing as the user's code is.
REWRITTEN_USER_CODE: set = set()


def is_derivative(fn) -> bool:
    """Whether ``fn`` is a function srcgrad generated other than the user's code rewritten: a
    derivative (differentiated again) or a wrapper."""
    code = getattr(fn, "__code__", None)
    return code in GENERATED_SOURCE and code not in REWRITTEN_USER_CODE


@dataclass
class Location:
    """Maps parsed nodes back to the user's file."""

    filename: str
    first_line: int  # file line number of line 1 of the parsed text
    col_shift: int  # columns removed by dedent

    def of(self, node):
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return self.filename, None, None, None
        file_line = lineno + self.first_line - 1
        offset = getattr(node, "col_offset", 0) + self.col_shift + 1
        text = linecache.getline(self.filename, file_line) or None
        if text and isinstance(node, gast.stmt) and not getattr(node, "col_offset", 0):
            # a statement the normal form made (at column 0): the caret at the line's first word
            offset = len(text) - len(text.lstrip()) + 1
        return self.filename, file_line, offset, text

    def users_line(self, node):
        """``(line, text)`` of ``node`` in the user's file: for a loop's step (checkpoint=) or
        generated code, the user's line behind it, as ``error`` locates it."""
        filename, lineno, _, text = self.of(node)
        behind = _users_line(filename, lineno)
        if behind is None:
            return lineno, text
        return behind[1], linecache.getline(*behind) or None

    def error(self, cls, node, message):
        """``cls(message)`` located at ``node``; in generated code (a derivative differentiated
        again) at the user's line that code was generated from."""
        filename, lineno, offset, line = self.of(node)
        behind = _users_line(filename, lineno)
        if behind is not None:
            rewritten = any(c.co_filename == filename for c in REWRITTEN_USER_CODE)
            filename, lineno = behind
            line = linecache.getline(filename, lineno) or None
            offset = len(line) - len(line.lstrip()) + 1 if line else None
            if not rewritten:  # a loop's step (checkpoint=) is the user's own code
                message += (
                    "\n(met while differentiating again the code srcgrad generated for this line)"
                )
        return cls(message, filename=filename, lineno=lineno, offset=offset, line=line)


def _users_line(filename, lineno):
    """The user's file and line behind a line of generated code (the nearest mapped line at or
    above it), or None for code that srcgrad did not generate."""
    from ..emit.notes import BY_FILENAME, behind

    lines = BY_FILENAME.get(filename)
    if not lines or lineno is None:
        return None
    above = [k for k in lines if k <= lineno]
    entry = lines[max(above)] if above else lines[min(lines)]
    return behind(entry[1], entry[2])


@dataclass
class ParsedFunction:
    fn: object
    node: gast.FunctionDef
    location: Location
    source_lines: list  # lines of the parsed (dedented) text, for `# grad of:` comments


def parse_function(fn) -> ParsedFunction:
    code = getattr(fn, "__code__", None)
    if code is not None and code in GENERATED_SOURCE:
        text, filename, first_line, col_shift = GENERATED_SOURCE[code]
        return _parse(fn, text, filename, first_line, col_shift)
    if code is not None and code.co_name == "<lambda>":
        parsed = _parse_lambda(fn, code)
        if parsed is not None:
            return parsed
    try:
        # by its code when it has a `__wrapped__`: inspect would follow a `functools.wraps`
        # wrapper's to the source of the function it wraps, which is not what the wrapper
        # computes. A plain function is read by itself: for a code object inspect finds the
        # module by scanning every imported one (and the first time, resolving all their paths)
        plain = code is None or (inspect.isfunction(fn) and not hasattr(fn, "__wrapped__"))
        lines, first_line = inspect.getsourcelines(fn if plain else code)
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        name = getattr(fn, "__qualname__", repr(fn))
        raise SourceUnavailableError(
            f"cannot read the source of {name}: srcgrad transforms Python source, and this "
            f"function has none on disk (was it typed at an interactive prompt or built with "
            f"exec?). Define it in a file, or register a rule for it with srcgrad.adjoint. "
            f"({exc})"
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_shift = _indent(raw) - _indent(text)
    return _parse(fn, text, filename, first_line, col_shift)


def _parse_lambda(fn, code):
    """A lambda found by its code object's position in its file, wherever it is written (on a
    continuation line, in a ``for`` header, beside another lambda): the file is parsed and the
    lambda whose body spans every source position of the code is taken; the innermost one when
    lambdas nest. None when the file cannot be read or nothing matches."""
    try:
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except TypeError:
        return None
    lines = linecache.getlines(filename, fn.__globals__) if filename else []
    if not lines:
        return None
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    spans = [
        (a, b, c, d) for a, b, c, d in code.co_positions()
        if None not in (a, b, c, d) and (a, c) != (b, d)  # instructions without a source span
    ]
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    found = []
    for node in ordered_walk(tree):
        if not isinstance(node, ast.Lambda) or node.lineno != code.co_firstlineno:
            continue
        args = node.args
        names = tuple(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
        if names != params:
            continue
        body = node.body
        start, end = (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)
        if all(start <= (a, c) and (b, d) <= end for a, b, c, d in spans):
            found.append(node)
    if not found:
        return None
    lam = min(found, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
    lam = gast.ast_to_gast(lam)
    name = getattr(fn, "__name__", "fn")
    name = name if name.isidentifier() else "lambda_fn"
    ret = gast.copy_location(gast.Return(lam.body), lam.body)
    node = gast.copy_location(gast.FunctionDef(name, lam.args, [ret], [], None, None), lam)
    location = Location(filename, 1, 0)
    return ParsedFunction(fn, node, location, [line.rstrip("\n") for line in lines])


def _indent(text):
    for line in text.splitlines():
        if line.strip():
            return len(line) - len(line.lstrip())
    return 0


def _parse(fn, text, filename, first_line, col_shift):
    module = gast.parse(text)
    node = module.body[0]
    if getattr(fn, "__code__", None) in GENERATED_SOURCE:
        from ..emit import guard

        guard.strip(module, fn)  # what is differentiated is the computation
    lambdas = [n for n in ordered_walk(module) if isinstance(n, gast.Lambda)]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) and len(lambdas) == 1:
        # `helper = lambda v: ...` at module level: a function of one return statement
        lam = lambdas[0]
        name = getattr(fn, "__name__", "fn")
        name = name if name.isidentifier() else "lambda_fn"
        ret = gast.copy_location(gast.Return(lam.body), lam.body)
        node = gast.copy_location(gast.FunctionDef(name, lam.args, [ret], [], None, None), lam)
    location = Location(filename, first_line, col_shift)
    if isinstance(node, gast.AsyncFunctionDef):
        raise location.error(
            UnsupportedSyntaxError, node, "srcgrad does not support async functions"
        )
    if not isinstance(node, gast.FunctionDef):
        raise SourceUnavailableError(
            f"srcgrad can only transform functions defined with `def`; the source of "
            f"{getattr(fn, '__qualname__', fn)!r} starting at {filename}:{first_line} is a "
            f"{type(node).__name__}. A lambda can be differentiated by giving it a name with def."
        )
    node.decorator_list = []
    return ParsedFunction(fn, node, location, text.splitlines())
