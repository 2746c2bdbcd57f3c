"""An exception raised while generated code runs names the user's line it comes from.

Requires: a generated function's final tree (the one unparsed into its text), its text and the
user function's :class:`~srcgrad.frontend.source.Location`. Guarantees: ``line_map`` gives, for
each line of the compiled text, the user's file and line that the statement on it computes (a
primal statement) or differentiates (under a ``# grad of:`` / ``# tangent of:`` comment);
``compile_function`` wraps the generated body in ``try: ... except Exception: note(error);
raise`` (free on the path that does not raise), and ``note`` adds to the exception, with
``BaseException.add_note``, where it comes from:

    ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0, ...
    srcgrad: raised by dloss (generated, line 9) while differentiating
      File "model.py", line 12, in loss
        z = np.tanh(X @ W + b)

A derivative of generated code reports the user's line behind the generated one. Only the
innermost generated function adds a note.
"""

from __future__ import annotations

import ast
import linecache
import sys

import gast

from .unparse import is_comment

# code object of a generated function -> {line of its compiled text: (kind, filename, line)}
LINES: dict = {}
# filename of generated code -> the same map, to follow a derivative of a derivative back
BY_FILENAME: dict = {}
NOTE = "__srcgrad_note__"  # the name the handler calls ``note`` by
ERROR = "__srcgrad_error__"  # the name the handler binds the exception to
SHIFT = 1  # compiled text line = generated text line + 1 (the factory's def line)


def line_map(node, text, location, fn_name, forward=False):
    """``{compiled line: (kind, filename, file line, function name)}`` for ``node`` unparsed as
    ``text``; empty when the two cannot be matched statement by statement.

    In reverse-mode code everything under a ``# grad of:`` comment differentiates its line (the
    sweep's statements may carry the lines of a template). In ``forward`` code the primal
    statements are interleaved with the tangents' blocks and keep the line they compute: only a
    statement without a line of its own differentiates the comment's line."""
    generated = list(_statements(ast.parse(text).body[0].body))
    ours = []
    current = None
    kind = "computing"
    for s in _statements(node.body):
        if is_comment(s):
            if getattr(s, "lineno", None) is not None:
                current = s.lineno
                kind = "differentiating"
            continue
        if forward and getattr(s, "lineno", None) is not None:
            ours.append((s, None))
        else:
            ours.append((s, current))
    if len(ours) != len(generated):
        return {}
    out = {}
    for (s, under), g in zip(ours, generated):
        line = under if under is not None else getattr(s, "lineno", None)
        if line is None or type(g).__name__ != type(s).__name__:
            continue
        filename, file_line, _, _ = location.of(_At(line))
        filename, file_line = behind(filename, file_line)
        out[g.lineno + SHIFT] = (kind if under is not None else "computing", filename, file_line,
                                 fn_name)
    return out


class _At:
    """A node at a line, for ``Location.of``."""

    col_offset = 0

    def __init__(self, lineno):
        self.lineno = lineno


def behind(filename, line):
    """The user's file and line behind a line of generated code (itself, for user code)."""
    seen = 0
    while filename in BY_FILENAME and seen < 20:
        entry = BY_FILENAME[filename].get(line)
        if entry is None:
            break
        _, filename, line, _ = entry
        seen += 1
    return filename, line


def _statements(body):
    for s in body:
        yield s
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and not isinstance(s, (ast.Lambda, gast.Lambda)):
                yield from _statements(inner)


def register(code, filename, lines):
    LINES[code] = lines
    BY_FILENAME[filename] = lines


def wrap(tree, name):
    """The generated ``def name`` in the compiled factory ``tree``, its body inside ``try``
    with the handler that adds the note (every new node on the ``def`` line)."""
    factory = tree.body[0]
    inner = next(s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == name)
    at = {"lineno": inner.lineno, "col_offset": inner.col_offset,
          "end_lineno": inner.lineno, "end_col_offset": inner.col_offset}
    call = ast.Call(ast.Name(NOTE, ast.Load(), **at), [ast.Name(ERROR, ast.Load(), **at)], [],
                    **at)
    handler = ast.ExceptHandler(
        ast.Name("Exception", ast.Load(), **at), ERROR, [ast.Expr(call, **at), ast.Raise(**at)],
        **at,
    )
    inner.body = [ast.Try(inner.body, [handler], [], [], **at)]
    return tree


def note(error):
    """Called by a generated function's handler: add where ``error`` comes from, once."""
    try:
        if getattr(error, "__srcgrad_noted__", False):
            return
        frame = sys._getframe(1)
        lines = LINES.get(frame.f_code)
        tb = error.__traceback__
        while tb is not None and tb.tb_frame is not frame:
            tb = tb.tb_next
        if lines is None or tb is None:
            return
        entry = lines.get(tb.tb_lineno)
        if entry is None:
            return
        kind, filename, line, fn_name = entry
        text = (linecache.getline(filename, line) or "").strip()
        generated = frame.f_code.co_name
        error.add_note(
            f"srcgrad: raised by {generated} (generated, line {tb.tb_lineno - SHIFT}) while "
            f"{kind}\n  File \"{filename}\", line {line}, in {fn_name}\n    {text}"
        )
        error.__srcgrad_noted__ = True
    except Exception:  # a note is a courtesy: never replace the user's exception
        return
