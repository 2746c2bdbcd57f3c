"""Turn a gast function into source text, with comments; highlight source for a terminal.

ASTs have no comments, so a comment travels as a marker statement (a string constant with a
sentinel prefix) and becomes ``# text`` after ``ast.unparse``.
"""

from __future__ import annotations

import ast
import re
import sys

import gast

from ..astutil import ordered_walk

_SENTINEL = "\x00srcgrad-comment:"
_MARKER = re.compile(r"^(\s*)('.*'|\".*\")$")


def comment(text, lineno=None):
    """A statement that unparses as ``# text``; ``lineno``, the line of the user's source it
    is about, is what a failing statement under it is reported at (``emit/notes.py``)."""
    stmt = gast.Expr(gast.Constant(_SENTINEL + text, None))
    if lineno is not None:
        stmt.lineno = lineno
    return stmt


def is_comment(stmt):
    return (
        isinstance(stmt, gast.Expr)
        and isinstance(stmt.value, gast.Constant)
        and isinstance(stmt.value.value, str)
        and stmt.value.value.startswith(_SENTINEL)
    )


def _fill_empty_blocks(node):
    """A block left with nothing but comments gets a ``pass`` (comments are not statements)."""
    for n in ordered_walk(node):
        if isinstance(n, (gast.If, gast.For, gast.While)):
            if all(is_comment(s) for s in n.body):
                n.body = list(n.body) + [gast.Pass()]
            if n.orelse and all(is_comment(s) for s in n.orelse):
                n.orelse = [s for s in n.orelse if not is_comment(s)]


class _SignedConstants(ast.NodeTransformer):
    """``-0.7`` as a unary minus on ``0.7``, which ``ast.unparse`` parenthesizes where precedence
    needs it: a negative constant as the base of ``**`` would print as ``-0.7 ** x``, which Python
    reads as ``-(0.7 ** x)``."""

    def visit_Constant(self, node):
        value = node.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            return ast.UnaryOp(ast.USub(), ast.Constant(-value))
        return node


def unparse(node):
    _fill_empty_blocks(node)
    tree = gast.gast_to_ast(node)  # a new tree: the passes keep theirs
    tree = _SignedConstants().visit(tree)
    ast.fix_missing_locations(tree)
    text = ast.unparse(tree)
    lines = []
    for line in text.splitlines():
        m = _MARKER.match(line)
        if m and _SENTINEL[1:] in line:
            value = ast.literal_eval(m.group(2))
            if value.startswith(_SENTINEL):
                lines.append(f"{m.group(1)}# {value[len(_SENTINEL):]}")
                continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def highlight(text):
    """``text`` colored for a terminal when stdout is one and Pygments is installed."""
    if not sys.stdout.isatty():
        return text
    try:
        from pygments import highlight as _hl
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return _hl(text, PythonLexer(), TerminalFormatter())
