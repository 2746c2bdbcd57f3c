"""``vars(obj)`` where a copy of the object's ``__dict__`` gives Python's answer: the dict read at
once, for ``normalize/containers.py``.

``vars(obj)`` is the object's own ``__dict__``: writing into it changes the object, and it shows
the object's later changes. srcgrad differentiates a new dict of the instance attributes instead
(``own_fields(obj)``, whose cotangent is the object's: a dict by attribute name), so it accepts
``vars(obj)`` only where nothing can tell the two apart:

- read at once: ``vars(obj)["a"]``, ``vars(obj).get("a")``, ``"a" in vars(obj)``,
  ``len(vars(obj))``, copied (``dict(vars(obj))``, ``vars(obj).copy()``, ``list(...)``,
  ``tuple(...)``, ``sorted(...)`` of it or of its ``keys()``, ``values()``, ``items()``);
- looped over (``vars(obj)`` or its ``keys()``, ``values()``, ``items()`` as the iterable of a
  ``for`` statement or a comprehension) where the loop writes no attribute and calls only
  NumPy, ``math`` and builtins, list and dict methods, so no attribute changes while it runs.

``vars(obj)["a"] = v`` (``+=`` too) is ``obj.a = v``. Anything else (``d = vars(obj)``, passing
it, ``vars(obj).update(...)``) is refused at transform time.

Requires: the tree before ``containers`` rewrites it (the calls of ``vars`` as written).
Guarantees: a ``vars(obj)`` call whose dict nothing can tell from a copy is marked
``read_at_once``; no node is changed.

    for k, v in vars(p).items(): s = s + v    ->  for k, v in dict_items(own_fields(p)): ...
"""

from __future__ import annotations

import builtins
import types

import gast

from ..astutil import ordered_walk

VIEWS = frozenset({"keys", "values", "items"})
AT_ONCE = frozenset({"get", "copy"})
COPIES = (dict, len, list, tuple, sorted)
# methods a loop over the attributes may call: the containers' and arrays' own, none of which
# writes an object's attribute
SAFE_METHODS = frozenset({
    "append", "extend", "insert", "pop", "get", "keys", "values", "items", "copy", "update",
    "setdefault", "index", "count", "sum", "mean", "max", "min", "reshape", "ravel", "dot",
    "astype", "transpose", "flatten", "prod", "std", "var", "item", "tolist", "conj",
})
SAFE_MODULES = ("numpy", "math", "builtins", "operator")


def is_vars(node, resolve):
    """Whether ``node`` is a call ``vars(obj)`` of Python's ``vars``."""
    return (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords
            and not isinstance(node.args[0], gast.Starred) and resolve(node.func) is vars)


def _the_vars(node, resolve):
    """The ``vars(obj)`` call of ``node`` when it is one, or one of its views
    (``vars(obj).items()``), else None."""
    if is_vars(node, resolve):
        return node
    if (isinstance(node, gast.Call) and not node.args and not node.keywords
            and isinstance(node.func, gast.Attribute) and node.func.attr in VIEWS
            and is_vars(node.func.value, resolve)):
        return node.func.value
    return None


def mark_read_at_once(node, resolve):
    """Mark (``read_at_once``) each ``vars(obj)`` in expression ``node`` whose dict is read at
    once or copied; a comprehension over it when its parts write and call nothing that could
    change an attribute (``loop_is_safe``)."""
    for parent in ordered_walk(node):
        found = []
        if isinstance(parent, gast.Subscript) and isinstance(parent.ctx, gast.Load):
            found.append(parent.value)
        elif isinstance(parent, gast.Call) and isinstance(parent.func, gast.Attribute) and (
                parent.func.attr in AT_ONCE):
            found.append(parent.func.value)
        elif isinstance(parent, gast.Call) and len(parent.args) == 1 and any(
                resolve(parent.func) is c for c in COPIES):
            found.append(_the_vars(parent.args[0], resolve))
        elif isinstance(parent, gast.Compare) and all(
                isinstance(op, (gast.In, gast.NotIn)) for op in parent.ops):
            found.extend(parent.comparators)
        elif isinstance(parent, (gast.ListComp, gast.SetComp, gast.GeneratorExp,
                                 gast.DictComp)) and loop_is_safe([parent], resolve):
            found.extend(_the_vars(g.iter, resolve) for g in parent.generators)
        for v in found:
            if v is not None and is_vars(v, resolve):
                v.read_at_once = True


def mark_loop(loop, resolve):
    """Mark the ``vars(obj)`` a ``for`` statement loops over when its body is safe."""
    v = _the_vars(loop.iter, resolve)
    if v is not None and loop_is_safe(loop.body + loop.orelse, resolve):
        v.read_at_once = True


def loop_is_safe(nodes, resolve):
    """Whether running ``nodes`` can change no attribute of any object: no attribute written,
    no call but of NumPy's, ``math``'s, builtins (not ``setattr``/``delattr``) and of the
    methods of lists, dicts and arrays."""
    for node in (n for top in nodes for n in ordered_walk(top)):
        if isinstance(node, gast.Attribute) and isinstance(node.ctx, (gast.Store, gast.Del)):
            return False
        if isinstance(node, gast.Call) and not _safe_call(node, resolve):
            return False
    return True


def _safe_call(call, resolve):
    fn = resolve(call.func)
    if fn is setattr or fn is delattr:
        return False
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return True  # `len`, `sum`, `float`, `zip`...
    if (getattr(fn, "__module__", None) or "").split(".")[0] in SAFE_MODULES:
        return True
    return isinstance(call.func, gast.Attribute) and call.func.attr in SAFE_METHODS and (
        not isinstance(resolve(call.func.value), types.ModuleType))
