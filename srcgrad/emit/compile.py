"""Compile generated source into a function that reads the user's globals live.

The text is registered with ``linecache`` under a ``<srcgrad ...>`` file name, so tracebacks,
``pdb`` and ``inspect.getsource`` show generated lines. The function's globals are the user
function's own globals; objects generated code needs beyond them (runtime helpers, closure
values) are bound as closure cells, so nothing is added to the user's module.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import types
from typing import Any

from ..frontend.source import GENERATED_SOURCE
from . import notes

_counter = itertools.count(1)

FACTORY = "__srcgrad_factory__"


def compile_function(text: str, name: str, fn: Any, extras: dict[str, Any],
                     lines: Any = None) -> Any:
    """Compile ``text`` (one ``def name``) with ``fn``'s globals and closure, plus ``extras``.

    ``lines`` (``notes.line_map``) makes an exception raised inside name the user's line it
    comes from (``notes.wrap``): the shown text stays as it is, and so do its line numbers.
    """
    if lines is not None:
        extras = {**extras, notes.NOTE: notes.note}
    free = sorted(set(extras) | set(_cells(fn)))
    filename = f"<srcgrad {name}#{next(_counter)}>"
    code = factory_code(text, name, free, filename, lines)
    return instantiate(code, text, name, fn, extras, lines)


def factory_code(text, name, free, filename, lines):
    """The code of a module defining ``def __srcgrad_factory__(*free)``, which defines ``text``
    and returns it; with ``lines`` (``notes.line_map``), its body wrapped by ``notes.wrap`` and
    its derivative's ``+=`` by ``_foreign_accumulations``."""
    wrapped = _wrapped(text, name, free)
    if lines is None:
        return compile(wrapped, filename, "exec")
    tree = notes.wrap(_foreign_accumulations(ast.parse(wrapped), name, lines), name)
    return compile(tree, filename, "exec")


def instantiate(code, text, name, fn, extras, lines=None):
    """The function ``factory_code`` compiled, with ``fn``'s globals and closure cells and
    ``extras`` bound to the other free names; its text registered for tracebacks, ``inspect``
    and ``source()``."""
    user_cells = _cells(fn)
    scratch = dict(getattr(fn, "__globals__", {}))
    exec(code, scratch)
    factory = scratch[FACTORY]
    free = factory.__code__.co_varnames[: factory.__code__.co_argcount]
    # what the text's default values read: an extra, else the user's closure variable
    args = {n: extras[n] if n in extras else _contents(user_cells[n]) for n in free}
    placeholder = factory(*args.values())
    inner = placeholder.__code__
    closure = tuple(
        user_cells[v] if v in user_cells else types.CellType(extras[v]) for v in inner.co_freevars
    )
    result = types.FunctionType(
        inner, getattr(fn, "__globals__", scratch), name, placeholder.__defaults__, closure or None
    )
    result.__kwdefaults__ = placeholder.__kwdefaults__
    result.__module__ = getattr(fn, "__module__", None)
    result.__qualname__ = name
    result.__srcgrad_factory__ = code
    result.__srcgrad_bound__ = args  # for the disk cache
    filename = code.co_filename
    shown = _wrapped(text, name, free).splitlines(True)
    linecache.cache[filename] = (sum(map(len, shown)), None, shown, filename)
    GENERATED_SOURCE[inner] = (text, filename, 2, 4)
    if lines is not None:
        notes.register(inner, filename, lines)
    return result


def _wrapped(text, name, free):
    """The factory's text: ``text`` indented (as ``textwrap.indent``), then its return."""
    body = "".join("    " + line if line.strip() else line for line in text.splitlines(True))
    return f"def {FACTORY}({', '.join(free)}):\n{body}    return {name}\n"


def _contents(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return None


def _foreign_accumulations(tree, name, lines):
    """Each ``dx += g`` of the derivative part of ``name`` compiled as ``dx = dx + g`` when the
    in-place add raises ``NotImplementedError``.

    A NumPy gradient buffer cannot take a contribution that is an array of another library in
    place: ``np.add(dx, g, out=dx)`` with a Dask ``g`` raises (Dask returns only Dask arrays),
    and a gradient with contributions from NumPy parameters and from a Dask data set (a loss
    and its L2 penalty) has both. The fallback adds out of place, into a new (lazy) array.
    The ``try`` costs nothing on the path that does not raise, and the shown text is unchanged:
    every new node sits on the line of its ``+=``.
    """
    factory = tree.body[0]
    inner = next(s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == name)

    def rewrite(body):
        out = []
        for s in body:
            for field in ("body", "orelse", "finalbody"):
                inside = getattr(s, field, None)
                if isinstance(inside, list) and not isinstance(s, ast.FunctionDef):
                    setattr(s, field, rewrite(inside))
            derivative = lines.get(getattr(s, "lineno", None), ("computing",))[0] != "computing"
            if (
                derivative
                and isinstance(s, ast.AugAssign)
                and isinstance(s.op, ast.Add)
                and isinstance(s.target, ast.Name)
            ):
                s = _with_fallback(s)
            out.append(s)
        return out

    inner.body = rewrite(inner.body)
    return tree


def _with_fallback(aug):
    """``try: x += g`` / ``except NotImplementedError: x = x + g``, on ``aug``'s line."""
    at = {k: getattr(aug, k) for k in ("lineno", "col_offset", "end_lineno", "end_col_offset")}
    target = aug.target.id
    total = ast.BinOp(ast.Name(target, ast.Load(), **at), ast.Add(), aug.value, **at)
    fallback = ast.Assign([ast.Name(target, ast.Store(), **at)], total, **at)
    handler = ast.ExceptHandler(
        ast.Name("NotImplementedError", ast.Load(), **at), None, [fallback], **at
    )
    return ast.Try([aug], [handler], [], [], **at)


def _cells(fn):
    """``fn``'s closure cells by name; for a function ``checkpoint=`` rewrote, also the user
    function's (``__srcgrad_cells__``), which its checks read (normalize/inplace.py)."""
    code = getattr(fn, "__code__", None)
    outer = getattr(fn, "__srcgrad_cells__", {})
    if code is None or not fn.__closure__:
        return dict(outer)
    return {**outer, **dict(zip(code.co_freevars, fn.__closure__))}
