"""Turn a gast function into source text, with comments; highlight source for a terminal.

ASTs have no comments, so a comment travels as a marker statement (a string constant with a
sentinel prefix) and becomes ``# text`` after ``ast.unparse``.
"""

from __future__ import annotations

import ast
import re
import sys

import gast

from ..astutil import to_ast, walk

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
    for n in walk(node):
        if isinstance(n, (gast.If, gast.For, gast.While)):
            if all(is_comment(s) for s in n.body):
                n.body = list(n.body) + [gast.Pass()]
            if n.orelse and all(is_comment(s) for s in n.orelse):
                n.orelse = [s for s in n.orelse if not is_comment(s)]


def _signed_constants(tree):
    """Every negative number constant of ``tree`` becomes a unary minus on its absolute value,
    which ``ast.unparse`` parenthesizes where precedence needs it: a negative constant as the
    base of ``**`` would print as ``-0.7 ** x``, which Python reads as ``-(0.7 ** x)``. Every
    node missing a location gets its parent's, as ``ast.fix_missing_locations`` does (the
    unparser reads ``lineno``). (What an ``ast.NodeTransformer`` and that would do, in one walk
    on a plain stack, a few times faster.)"""
    stack = [(tree, 1, 0, 1, 0)]
    AST = ast.AST
    while stack:
        node, lineno, col_offset, end_lineno, end_col_offset = stack.pop()
        attributes = node._attributes
        if "lineno" in attributes:
            if not hasattr(node, "lineno"):
                node.lineno = lineno
            else:
                lineno = node.lineno
        if "end_lineno" in attributes:
            if getattr(node, "end_lineno", None) is None:
                node.end_lineno = end_lineno
            else:
                end_lineno = node.end_lineno
        if "col_offset" in attributes:
            if not hasattr(node, "col_offset"):
                node.col_offset = col_offset
            else:
                col_offset = node.col_offset
        if "end_col_offset" in attributes:
            if getattr(node, "end_col_offset", None) is None:
                node.end_col_offset = end_col_offset
            else:
                end_col_offset = node.end_col_offset
        where = (lineno, col_offset, end_lineno, end_col_offset)
        for field in node._fields:
            value = getattr(node, field, None)
            if value.__class__ is list:
                for i, item in enumerate(value):
                    if isinstance(item, AST):
                        if _is_negative(item):
                            item = value[i] = _negated(item)
                        stack.append((item, *where))
            elif isinstance(value, AST):
                if _is_negative(value):
                    value = _negated(value)
                    setattr(node, field, value)
                stack.append((value, *where))
    return tree


def _is_negative(node):
    if node.__class__ is not ast.Constant:
        return False
    value = node.value
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0


def _negated(node):
    return ast.UnaryOp(ast.USub(), ast.Constant(-node.value))


def unparse(node):
    _fill_empty_blocks(node)
    tree = to_ast(node)  # a new tree: the passes keep theirs
    tree = _signed_constants(tree)
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


def highlight(text: str) -> str:
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


def users_expression(var, value, text):
    """``p.w`` for ``var``, a name the normal form gave the field or item ``value`` of the
    user's line ``text`` (which does not name ``var``); else None."""
    words = set(re.findall(r"\w+", text))
    if var in words or not isinstance(value, (gast.Attribute, gast.Subscript)):
        return None
    if any(n.id not in words for n in walk(value) if isinstance(n, gast.Name)):
        return None
    return unparse(value).strip()
