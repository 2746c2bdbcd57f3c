"""The values and items of a dict looped over (``for f in hk.hooks.values()``, ``for k, f in
d.items()``), for the calls of the bound methods a dict holds (``held_methods.py``).

A part of ``Receivers`` (``methods.py``). Requires: the A-normal-form assignments ``seq =
dict_values(d)`` / ``dict_items(d)`` (a local dict's, normalize/containers.py) or ``seq =
HK.hooks.values()`` (a global's), ``seq = iteration_sequence(seq)``, ``f = seq[i]`` and, for
items, ``t = seq[i]; f = t[1]``, noted in order. Guarantees: ``f`` is known as an item of ``d``
(``reads``: read from ``d``; ``views``: what ``seq`` and ``t`` hold), so that a call of it is a
branch on which of the dict's methods it is, as for ``d[k]``; nothing else is changed.

Also, for ``ContainerMethods`` (containers.py): the names bound to what a function of the user's
returns (``d = make(x)``, ``for k in make(x)``), which may be a dict: a loop over one runs over
``iteration_sequence`` of it, its keys, not over ``d[0], d[1], ...``; and the names bound to
dict and list literals.
"""

from __future__ import annotations

import inspect
import types

import gast
import numpy as np

from .. import runtime
from ..astutil import ordered_walk
from ..frontend.resolve import MISSING

# an array's, list's, dict's or string's own methods: no function of the user's
_KNOWN_METHODS = set(dir(np.ndarray)) | set(dir(list)) | set(dir(dict)) | set(dir(str))


def returned_by_calls(fn_node, resolve):
    """Names some statement binds to what a function of the user's returns (``d = make(x)``,
    ``d = obj.build()``): maybe a dict, whose loop runs over its keys."""
    return {n.targets[0].id for n in ordered_walk(fn_node)
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
            and isinstance(n.value, gast.Call) and users_call(n.value.func, resolve)}


def users_call(func, resolve):
    """Whether ``func`` (called) is a Python function or method of the user's, or a method of
    an object not known here (``obj.build()``)."""
    if isinstance(func, gast.Attribute) and func.attr in _KNOWN_METHODS:
        return False
    fn = resolve(func)
    if isinstance(fn, types.FunctionType) or inspect.ismethod(fn):
        module = getattr(fn, "__module__", "") or ""
        return module.split(".")[0] not in ("numpy", "scipy", "srcgrad")
    return fn is MISSING and isinstance(func, gast.Attribute)


class DictViews:
    """``HeldMethods``' record of a dict's values and items (see the module's docstring)."""

    def _note_source(self, value, target, pair):
        """``reads`` (and ``views``) of ``target = value``; ``pair``: ``_pair_value``'s."""
        view = self._dict_view(value)
        self.views.pop(target, None)
        if view is not None:
            self.views[target] = view[1]
        if view is not None and isinstance(view[0], gast.Name):
            self.reads[target] = (view[0].id, None)
        elif view is not None:
            self.reads.pop(target, None)
        elif pair is not None:
            self.reads[target] = self.reads.get(pair, (pair, None))
        elif isinstance(value, gast.Name):
            self.reads[target] = (value.id, None)
        elif isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            self.reads[target] = (value.value.id, ("attr", value.attr))
        elif isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            key = value.slice.value if isinstance(value.slice, gast.Constant) else None
            self.reads[target] = (value.value.id, ("key", key))
            if self.views.get(value.value.id) == "items":
                self.views[target] = "pair"
        else:
            self.reads.pop(target, None)

    def _dict_view(self, value):
        """``(d, "values" / "items")`` for ``dict_values(d)`` / ``dict_items(d)`` (a local
        dict's, normalize/containers.py) or ``d.values()`` / ``d.items()`` (a global's); None."""
        if not isinstance(value, gast.Call) or value.keywords:
            return None
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names)
        for helper, kind in ((runtime.dict_values, "values"), (runtime.dict_items, "items")):
            if fn is helper and len(value.args) == 1:
                return value.args[0], kind
        if isinstance(value.func, gast.Attribute) and value.func.attr in ("values", "items") and (
                not value.args):
            return value.func.value, value.func.attr
        return None

    def _same_sequence(self, value, target):
        """Whether ``value`` is ``iteration_sequence(target)``: a loop's sequence made
        indexable (normalize/containers.py), the same items as before."""
        return isinstance(value, gast.Call) and len(value.args) == 1 and isinstance(
            value.args[0], gast.Name) and value.args[0].id == target and (
            self.ctx.namespace.resolve(value.func, self.ctx.local_names)
            is runtime.iteration_sequence)

    def _pair_value(self, value):
        """The name ``t`` of ``t[1]``, the value of a (key, value) pair of a dict's items; None."""
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and (
                self.views.get(value.value.id) == "pair") and isinstance(
                value.slice, gast.Constant) and value.slice.value == 1:
            return value.value.id
        return None

    def _dict_known(self, name):
        """What is known of ``name``, or of the dict whose values or items it holds."""
        while self.views.get(name) in ("values", "items") and name in self.reads:
            name = self.reads[name][0]
        return self.known.get(name)


def dict_assigned(fn_node):
    """Names some statement binds to a dict literal, a dict comprehension or ``dict(...)``."""
    out = set()
    for n in ordered_walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            v = n.value
            if isinstance(v, (gast.Dict, gast.DictComp)) or (
                isinstance(v, gast.Call) and isinstance(v.func, gast.Name)
                and v.func.id == "dict"
            ):
                out.add(n.targets[0].id)
    return out


def list_assigned(fn_node):
    """Names every assignment of which binds a list (a literal, a comprehension, ``list()``)."""
    kinds = {}
    for n in ordered_walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            v = n.value
            is_list = isinstance(v, (gast.List, gast.ListComp)) or (
                isinstance(v, gast.Call) and isinstance(v.func, gast.Name)
                and v.func.id in ("list", "sorted")
            ) or (isinstance(v, gast.Subscript) and isinstance(v.slice, gast.Slice)
                  and isinstance(v.value, gast.Name) and v.value.id == n.targets[0].id)
            kinds.setdefault(n.targets[0].id, []).append(is_list)
        elif isinstance(n, (gast.For, gast.AugAssign)):
            for t in ordered_walk(n.target):
                if isinstance(t, gast.Name):
                    kinds.setdefault(t.id, []).append(False)
    return {name for name, flags in kinds.items() if all(flags)}
