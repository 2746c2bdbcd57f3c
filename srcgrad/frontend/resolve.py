"""Resolve the names a function reads to Python objects, at transform time.

Requires: the function object. Guarantees: ``Namespace.lookup(name)`` finds a name in the
function's closure cells, then its globals, then builtins, exactly as Python would at call time;
A derived function (``srcgrad.derived.Derived``) resolves to the generated function it wraps.
``Namespace.resolve(expr, local_names)`` evaluates a dotted name such as ``np.linalg.norm`` to the
object it denotes, so rules are found by identity (``numpy.exp``) whatever the user imported it as.

While a :func:`recording` is active, every name looked up and every dotted name resolved, in any
namespace, is appended to it as ``(namespace, path, object)``: what a derivation read of the
user's world, which the disk cache (``emit/diskcache.py``) checks again before it reuses one.
"""

from __future__ import annotations

import builtins
import sys
import threading
import types

import gast

from ..derived import plain
from ..emit.naming import TRY_MARKERS

MISSING = object()


class _Recordings(threading.local):
    """The active recordings of this thread, innermost last."""

    def __init__(self):
        self.stack = []


_RECORDINGS = _Recordings()


class recording:
    """``with recording() as reads:`` collects the resolutions this thread makes inside it (not
    those of a nested recording: a derivation started inside is recorded by its own)."""

    def __enter__(self):
        self.reads = []
        _RECORDINGS.stack.append(self.reads)
        return self.reads

    def __exit__(self, *exc):
        _RECORDINGS.stack.pop()


class Namespace:
    def __init__(self, fn):
        self.fn = fn
        self.globals = getattr(fn, "__globals__", {})
        code = getattr(fn, "__code__", None)
        cells = getattr(fn, "__closure__", None) or ()
        freevars = code.co_freevars if code is not None else ()
        # (a function checkpoint= rewrote reads the user function's cells too: emit/compile.py)
        self.cells = {**getattr(fn, "__srcgrad_cells__", {}), **dict(zip(freevars, cells))}
        self.extras = {}  # names generated code adds (helpers, inlined callees' globals)

    def lookup(self, name):
        if name in self.extras:  # srcgrad's own name: not a read of the user's world
            return self.extras[name]
        found = self._lookup(name)
        stack = _RECORDINGS.stack
        if stack:
            stack[-1].append((self, (name,), found))
        return found

    def _lookup(self, name):
        cell = self.cells.get(name)
        if cell is not None:
            try:
                return plain(cell.cell_contents)
            except ValueError:
                return MISSING
        if name in self.globals:
            return plain(self.globals[name])
        found = getattr(builtins, name, MISSING)
        if found is MISSING and name in TRY_MARKERS:  # normalize/handlers.py
            from .. import runtime

            return getattr(runtime, TRY_MARKERS[name])
        return found

    def resolve(self, expr, local_names=()):
        """The object a dotted name denotes, or MISSING when it is not a static name."""
        if isinstance(expr, gast.Name):
            if expr.id in local_names:
                return MISSING
            return self.lookup(expr.id)
        if isinstance(expr, gast.Attribute):
            base = self.resolve(expr.value, local_names)
            if base is MISSING:
                return MISSING
            found = plain(getattr(base, expr.attr, MISSING))
            stack = _RECORDINGS.stack
            if stack:
                path = _path(expr)
                if path[0] not in self.extras:
                    stack[-1].append((self, path, found))
            return found
        return MISSING

    def read(self, path):
        """What the dotted name ``path`` (a tuple of names) denotes, without recording it."""
        found = self._lookup(path[0])
        for attr in path[1:]:
            if found is MISSING:
                return MISSING
            found = plain(getattr(found, attr, MISSING))
        return found


def _path(expr):
    """``a.b.c`` as ``("a", "b", "c")``."""
    parts = []
    while isinstance(expr, gast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    parts.append(expr.id)
    return tuple(reversed(parts))


class HeldItems:
    """A dependency (``ctx.dependencies``) on the items a tuple, list or dict of callables
    held when the derivative was made from them (``for f in FNS`` unrolled, ``FNS[i]`` by the
    index of a loop, a helper given ``NET.layers``): the derivative calls those items. In
    ``(HeldItems(namespace, items), expr, HeldItems.SAME)``, ``resolve(expr)`` is ``SAME``
    while ``expr`` in ``namespace`` still holds those items (the same objects, in order), so
    ``targets.current`` sees a derivative made from other items as stale, and the staleness
    guard (emit/guard.py) tests ``same_items`` on each call."""

    SAME = (None,)  # (any object without dependencies of its own)

    def __init__(self, namespace, items):
        self.namespace, self.items = namespace, items

    def resolve(self, expr):
        held = self.namespace.resolve(expr)
        return self.SAME if same_items(held, self.items) else MISSING


def items_of(value):
    """What ``same_items`` compares: a tuple or list's items, a dict's pairs."""
    return tuple(value.items()) if isinstance(value, dict) else tuple(value)


def same_items(held, items):
    """Whether ``held`` (a tuple, list or dict) holds ``items`` (``items_of``): the same objects
    in order (for a dict, the same keys each with the same object)."""
    if not isinstance(held, (tuple, list, dict)):
        return False
    now = items_of(held)
    if len(now) != len(items):
        return False
    if isinstance(held, dict):
        return all(k == j and v is w for (k, v), (j, w) in zip(now, items))
    return all(a is b for a, b in zip(now, items))


def data_module(namespace, name, obj, own):
    """The module whose global ``name`` is ``obj`` in ``namespace`` (a callee's), when ``obj`` is
    data (not a function, class or module) and that module's globals are not ``own``'s (the
    function's): an inlined callee reads it there when it runs (``hmod.H``), as Python does
    after ``hmod.H = ...``. None otherwise."""
    if (name in namespace.cells or name not in namespace.globals or callable(obj)
            or isinstance(obj, types.ModuleType) or namespace.globals is own.globals):
        return None
    module = sys.modules.get(namespace.globals.get("__name__"))
    return module if getattr(module, "__dict__", None) is namespace.globals else None


def data_read(namespace, name, obj, ctx):
    """``module.name`` read when it runs, the module bound in ``ctx``'s generated code, for a
    callee's global ``name`` that ``data_module`` finds; ``cell.cell_contents`` for a callee's
    closure variable holding data (rebound after the derivative was made by a ``nonlocal`` of
    the function that made the callee, or by that function itself, the callee reads the new
    value, as Python does); else None."""
    cell = namespace.cells.get(name)
    if cell is not None and namespace is not ctx.namespace and _data(obj):
        from ..emit import naming  # (emit imports the frontend)

        base = ctx.global_name(cell, naming.CELL_OF.format(name))
        return gast.Attribute(gast.Name(base, gast.Load(), None, None), "cell_contents",
                              gast.Load())
    module = data_module(namespace, name, obj, ctx.namespace)
    if module is None:
        return None
    base = ctx.global_name(module, module.__name__.rpartition(".")[2])
    return gast.Attribute(gast.Name(base, gast.Load(), None, None), name, gast.Load())


def _data(obj):
    return obj is not MISSING and not callable(obj) and not isinstance(obj, types.ModuleType)
