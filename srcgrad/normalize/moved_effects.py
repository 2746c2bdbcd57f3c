"""Comprehensions that ``control`` builds before their statement, whose calls change values.

``control`` builds a comprehension into a loop before the statement that holds it, and on every
path: Python builds it where the statement evaluates it, after the operands left of it, and not
at all on the side of ``and`` / ``or`` / ``x if c else y`` it skips. For a comprehension that
only computes this is the same; one that calls a function of the user's that changes a value in
place (an argument's array, a list, an object's field) would make that change before the
operands Python evaluates first, or where Python never makes it: a wrong value. Such a
comprehension is refused unless it is the statement's whole value (``L = [step(y, v) for v in
vs]``, ``s = sum(step(y, v) for v in vs)``), where both orders agree (a choice that is the
whole value, ``r = flag and [...]``, is an ``if`` by then: ``skipped_sides``).

Requires: a statement of the body (its inner blocks' comprehensions already built), the
namespace of the function. Guarantees: nothing is changed; raises ``UnsupportedSyntaxError``
at the call.

    s = np.sum(y * y) + sum(bump(y, v) for v in vs)   ->  refused at `bump(...)`
    r = g(flag and [bump(y, v) for v in vs])            ->  refused at `bump(...)`
"""

from __future__ import annotations

import inspect
import types

import gast

from ..astutil import walk
from ..checkpoint_sharing import MUTATING, NUMPY_WRITES, SLOT_METHODS
from ..errors import SrcgradError, UnsupportedSyntaxError
from ..frontend.source import parse_function

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)
# methods that change what they are called on (lists, dicts, sets, arrays)
# methods that change what they are called on (lists, dicts, sets, arrays), and NumPy functions
# that write into their first argument (`np.copyto`, `np.add.at`, `rng.shuffle`)
CHANGING = frozenset(MUTATING + SLOT_METHODS + NUMPY_WRITES) | {
    "itemset", "setfield", "partition", "__setitem__", "at", "shuffle"}


def refuse(s, namespace, local_names, location):
    """Raise for a comprehension of ``s`` that is not its whole value and calls a function of
    the user's that changes a value in place (see the module docstring)."""
    whole = getattr(s, "value", None)
    if (isinstance(whole, gast.Call) and isinstance(whole.func, gast.Name)
            and whole.func.id == "sum" and len(whole.args) == 1):
        whole = whole.args[0]
    for comp in (n for n in walk(s) if isinstance(n, _COMPREHENSIONS) and n is not whole):
        for call in (c for c in walk(comp) if isinstance(c, gast.Call)):
            try:
                fn = namespace.resolve(call.func, local_names)
            except Exception:  # noqa: BLE001 - what resolves to nothing is not the user's
                continue
            if _changes(fn, depth=3):
                name = getattr(fn, "__name__", "the function")
                raise location.error(UnsupportedSyntaxError, call, (
                    f"srcgrad does not support calling `{name}`, which changes a value in "
                    "place, in a comprehension that is a part of a larger expression: srcgrad "
                    "builds the comprehension before the statement, on every path, Python "
                    "where it is evaluated (after the operands left of it; not at all on the "
                    "side of `and` / `or` / `if`-`else` it skips); build it on a line of its "
                    "own before (in an `if` statement where a test decides it)"))


def _changes(fn, depth):
    """Whether ``fn``, a Python function of the user's (not a library's), may write into a
    value it did not make: an item or attribute of a parameter or of a name from outside
    stored (``+=`` too), ``+=`` on a parameter, a method that changes what it is called on
    called on one, ``out=``, or a call of such a function (``depth`` levels down). (A write
    into an array the function made itself, ``t = np.zeros(3); t[0] = v``, changes nothing
    outside; one through another name for a parameter, ``t = w[1:]``, does.)"""
    if depth <= 0 or not inspect.isfunction(fn) or _library(fn):
        return False
    try:
        node = parse_function(fn).node
    except SrcgradError:
        return False
    params = {a.id for a in walk(node.args) if isinstance(a, gast.Name)}
    assigned = {n.id for n in walk(node) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Store)} - params
    assigned -= _aliases(node, assigned, fn.__globals__)
    return any(_writes(n, assigned) or _calls_changing(n, fn, depth, assigned)
               for n in walk(node))


def _aliases(node, assigned, globals_):
    """The names of ``assigned`` that another name for a value from outside may be bound to:
    ``t = w``, ``t = w[1:]``, ``t = w.reshape(3)`` of a parameter or a name from outside (or of
    such a name), not a module's function's result (``t = np.zeros(3)``)."""
    out = set()
    size = None
    while size != len(out):
        size = len(out)
        for n in walk(node):
            if not isinstance(n, gast.Assign):
                continue
            root = _root(n.value)
            if root is None or isinstance(globals_.get(root), types.ModuleType):
                continue
            if root not in assigned or root in out:
                out |= {t.id for t in n.targets if isinstance(t, gast.Name)}
    return out & assigned


def _root(value):
    """The name ``value`` reads through items, attributes and method calls, or None."""
    while True:
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            value = value.func.value
        elif isinstance(value, (gast.Subscript, gast.Attribute)):
            value = value.value
        else:
            return value.id if isinstance(value, gast.Name) else None


def _outside(target, assigned):
    """Whether ``target`` (a name, or an item or attribute of one) is a value from outside the
    function: a parameter or a name it does not assign."""
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return not isinstance(target, gast.Name) or target.id not in assigned


def _writes(n, assigned):
    if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
        return _outside(n, assigned)
    if isinstance(n, gast.AugAssign):
        return _outside(n.target, assigned)
    return False


def _calls_changing(n, fn, depth, assigned):
    if not isinstance(n, gast.Call):
        return False
    if isinstance(n.func, gast.Attribute) and n.func.attr in CHANGING:
        return _outside(n.func.value, assigned)
    if any(k.arg == "out" for k in n.keywords):
        return True
    if isinstance(n.func, gast.Name):
        inner = fn.__globals__.get(n.func.id)
        return inner is not fn and _changes(inner, depth - 1)
    return False


def _library(fn):
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in ("numpy", "scipy", "srcgrad", "math", "builtins")
