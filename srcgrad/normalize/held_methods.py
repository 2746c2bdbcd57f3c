"""Bound methods an object holds (``self.hooks = {"a": self.a.scale}`` in ``__init__``), called
where they are read out of it (``self.hooks["a"](x)``), as calls of the method on the object
they are bound to, read by the path that reaches it from a parameter.

A part of ``Receivers`` (``methods.py``). Requires: an A-normal-form call ``y = h(x)`` of a name
``h`` known by an example value (the bound instance of a transformed method, the object a call
passes) that is a bound method of an object of the user's classes, which that example reaches by
a chain of fields (``self.a``). Guarantees: ``h`` is the method called on that chain's object,
after a run-time check that ``h`` is still that method bound to that object (a
``SrcgradError`` otherwise, never a wrong value), so the gradient reaches the object's fields as
Python's calls read them, also with respect to ``self``.

    y = self_hooks_item(x)  ->   self_a = self.a
                                 unused = check_held_method(self_hooks_item, self_a, Block_s)
                                 unused_2 = check_class(self_a, Block)
                                 y = Block_s(self_a, x)              (then inlined)
"""

from __future__ import annotations

import inspect
import types

import gast

from .. import runtime
from ..emit import naming
from .object_classes import user_class

MAX_PATH = 3  # fields followed from a parameter to the object a held method is bound to


def bound_method(example):
    """``(receiver, function)`` of a bound method of an object of the user's classes whose
    function is a plain Python function, else None."""
    if not inspect.ismethod(example) or not isinstance(example.__func__, types.FunctionType):
        return None
    receiver = example.__self__
    return (receiver, example.__func__) if user_class(type(receiver)) else None


def _fields(obj):
    held = getattr(obj, "__dict__", None)
    if not isinstance(held, dict) or not (user_class(type(obj))
                                          or type(obj) is types.SimpleNamespace):
        return {}
    return held


def path_to(root, target):
    """The shortest chain of field names from ``root`` to the object ``target`` itself (at most
    ``MAX_PATH`` fields), or None."""
    level, seen = [(root, [])], {id(root)}
    for _ in range(MAX_PATH):
        nxt = []
        for obj, path in level:
            for name, value in _fields(obj).items():
                if value is target:
                    return path + [name]
                if id(value) not in seen and _fields(value):
                    seen.add(id(value))
                    nxt.append((value, path + [name]))
        level = nxt
    return None


class HeldMethods:
    """``Receivers``' calls of bound methods held by an object (see the module's docstring)."""

    def _held_method(self, stmt, call, func, known):
        """``y = h(x)`` of a name ``h`` whose example is a bound method reached from a
        parameter: the statements before, and the call of the method; None otherwise."""
        found = bound_method(known.example)
        if found is None:
            return None
        receiver, fn = found
        reached = self._reached(receiver)
        if reached is None:
            return None
        before, holder = reached
        helper = self.ctx.global_name(runtime.check_held_method, "check_held_method")
        name = self.ctx.global_name(fn, naming.METHOD.format(fn.__qualname__.replace(".", "_")))
        guard = gast.Call(gast.Name(helper, gast.Load(), None, None), [
            gast.Name(func.id, gast.Load(), None, None), gast.Name(holder, gast.Load(), None, None),
            gast.Name(name, gast.Load(), None, None)], [])
        before.append(self._unused(guard))
        receiver_known = self.known[holder]
        before += self._check(gast.Name(holder, gast.Load(), None, None), receiver_known)
        return before, self._call(stmt, fn, [gast.Name(holder, gast.Load(), None, None)]
                                  + call.args)

    def _reached(self, receiver):
        """The statements reading ``receiver`` by a chain of fields from a parameter known by
        its example (``self_a = self.a``), each noted, and the last name; or None."""
        for root, known in list(self.known.items()):
            if self.stores.get(root, 0) or known.example is None:
                continue
            path = [] if known.example is receiver else path_to(known.example, receiver)
            if path is None:
                continue
            reads, base = [], root
            for attr in path:
                held = self.ctx.namer.fresh(naming.RECEIVER_FIELD.format(base, attr))
                self.ctx.local_names.add(held)
                read = gast.Assign([gast.Name(held, gast.Store(), None, None)], gast.Attribute(
                    gast.Name(base, gast.Load(), None, None), attr, gast.Load()), None)
                read = gast.copy_location(read, self._stmt)
                self.stores[held] += 1
                self.note(read)
                reads.append(read)
                base = held
            if base in self.known:
                return reads, base
        return None

    def _unused(self, call):
        unused = self.ctx.namer.fresh(naming.UNUSED)
        self.ctx.local_names.add(unused)
        stmt = gast.Assign([gast.Name(unused, gast.Store(), None, None)], call, None)
        return gast.copy_location(stmt, self._stmt)
