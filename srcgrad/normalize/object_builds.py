"""Objects built in the function, as the statements that build them: an empty instance, then
its ``__init__`` (or a dataclass's fields and ``__post_init__``, or a ``SimpleNamespace``'s
fields) written into it, so that the inliner inlines what the constructor does.

A part of ``Receivers`` (``methods.py``), which notes what is known of the new object.
Requires: an A-normal-form statement ``target = Cls(...)`` (a class of the user's with an
``__init__`` of its own, a dataclass with a ``__post_init__``, ``SimpleNamespace``) or
``target = replace(p, ...)``. Guarantees: statements that build the same object as Python
does, with ``__init__`` / ``__post_init__`` called as a method the inliner inlines; ``target``
noted as an object of that class built here (no run-time class check needed).

    a = Acc(0.0)           ->   a = new_instance(Acc)
                                unused = Acc___init__(a, 0.0)      (then inlined)
"""

from __future__ import annotations

import dataclasses
import inspect
import types

import gast

from .. import runtime
from ..astutil import clone
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from ..rules.structures import structure_rule
from .object_classes import Known, user_class


def _generated_init(init):
    """Whether ``init`` is the ``__init__`` a dataclass generated (no file: made by ``exec``),
    not one written in the class (which calls ``__post_init__`` only if it says so)."""
    code = getattr(init, "__code__", None)
    return code is not None and code.co_filename.startswith("<")



class Builds:
    """How ``Receivers`` rewrites a statement building an object."""

    def _constructor(self, stmt, call):
        """``a = Acc(0.0)`` of a class with an ``__init__`` of its own: an empty instance, then
        ``__init__`` called on it (and inlined: its attribute writes are writes into ``a``)."""
        cls = self.ctx.namespace.resolve(call.func, self.ctx.local_names)
        if cls is types.SimpleNamespace:
            return self._namespace(stmt, call)
        if cls is object.__new__:
            return self._bare(stmt, call)
        if not user_class(cls) or structure_rule(cls) is not None:
            return None
        init = inspect.getattr_static(cls, "__init__", None)
        if dataclasses.is_dataclass(cls) and hasattr(cls, "__post_init__") and isinstance(
                stmt.targets[0], gast.Name) and _generated_init(init):
            return self._post_init(stmt, call, cls)
        if not (isinstance(init, types.FunctionType) and isinstance(stmt.targets[0], gast.Name)):
            return None
        target = stmt.targets[0].id
        # a new object is the caller's own variable, also where it is a temporary
        # (`Lin(W, b).apply(x)`, `[Lin(W, b), ...]`, `return cls(c)`): `__init__` writes into it
        self.ctx.local_names.add(target)
        helper = self.ctx.global_name(runtime.new_instance, "new_instance")
        name = self.ctx.global_name(cls, cls.__name__)
        make = gast.Call(gast.Name(helper, gast.Load(), None, None),
                         [gast.Name(name, gast.Load(), None, None)], [])
        empty = gast.copy_location(
            gast.Assign([gast.Name(target, gast.Store(), None, None)], make, None), stmt)
        self.known[target] = Known(cls, None, True)
        unused = self.ctx.namer.fresh(naming.UNUSED)
        self.ctx.local_names.add(unused)
        holder = gast.Assign([gast.Name(unused, gast.Store(), None, None)], call, None)
        receiver = gast.Name(target, gast.Load(), None, None)
        return [empty], self._call(gast.copy_location(holder, stmt), init,
                                   [receiver] + call.args)

    def _bare(self, stmt, call):
        """``o = object.__new__(Cls)`` (or ``Cls.__new__(Cls)``) of a user class: an instance
        before any ``__init__`` (the unflatten of a registered class that sets its fields
        itself), known to be of ``Cls`` and built here; else None."""
        cls = self.ctx.namespace.resolve(call.args[0], self.ctx.local_names) if len(
            call.args) == 1 and not call.keywords else None
        if not (user_class(cls) and isinstance(stmt.targets[0], gast.Name)) or (
                inspect.getattr_static(cls, "__new__", object.__new__) is not object.__new__):
            return None
        target = stmt.targets[0].id
        self.ctx.local_names.add(target)
        self.known[target] = Known(cls, None, True)
        return [], gast.copy_location(gast.Assign(stmt.targets, gast.Call(
            self._global(runtime.new_instance), [self._global(cls)], []), None), stmt)

    def _replaced(self, stmt, call):
        """``q = replaced(p, a=v, b=w)`` (``dataclasses.replace``): for a dataclass with a
        ``__post_init__``, a call of the class with p's other init fields, as ``replace`` makes
        it (``__post_init__`` runs once); else ``replace_field`` per field."""
        fn = self.ctx.namespace.resolve(call.func, self.ctx.local_names)
        if fn is not runtime.replaced:
            return None
        known = self._of(call.args[0])
        cls = known.cls if known is not None else None
        if not (dataclasses.is_dataclass(cls) and hasattr(cls, "__post_init__")):
            if not call.keywords:  # `replace(p)`: a new object with the same fields
                return [], gast.copy_location(gast.Assign(stmt.targets, gast.Call(
                    self._global(runtime.replaced_copy), list(call.args), []), None), stmt)
            obj, before = call.args[0], []
            for k in call.keywords:
                obj = gast.Call(self._global(runtime.replace_field), [
                    obj, gast.Constant(k.arg, None), k.value], [])
                step = self.ctx.namer.fresh(naming.REPLACED.format(naming.describe(call.args[0])))
                self.ctx.local_names.add(step)
                before.append(self._assign(step, obj, stmt))
                self.note(before[-1])
                obj = gast.Name(step, gast.Load(), None, None)
            last = before.pop()
            return before, gast.copy_location(gast.Assign(stmt.targets, last.value, None), stmt)
        changes = {k.arg: k.value for k in call.keywords}
        before = self._check(call.args[0], known)
        for f in dataclasses.fields(cls):
            if not f.init and f.name in changes:
                raise self.ctx.location.error(UnsupportedSyntaxError, call, (
                    f"field {f.name} is declared with init=False, it cannot be specified with "
                    f"replace()"))
            if f.init and f.name not in changes:
                read = self.ctx.namer.fresh(f.name)
                self.ctx.local_names.add(read)
                before.append(self._assign(read, gast.Attribute(clone(call.args[0]), f.name,
                                                                gast.Load()), stmt))
                changes[f.name] = gast.Name(read, gast.Load(), None, None)
        made = gast.copy_location(gast.Call(self._global(cls), [], [
            gast.keyword(k, v) for k, v in changes.items()]), call)
        out, last = self._post_init(stmt, made, cls)
        return before + out, last

    def _post_init(self, stmt, call, cls):
        """``p = Cls(a, b=v)`` of a dataclass with a ``__post_init__``, as the ``__init__`` the
        dataclass generates runs it: an empty instance, each field written (the value given,
        else its default or ``default_factory()``), then ``__post_init__`` called on it (and
        inlined: what it changes, the derivative sees)."""
        where = self.ctx.location
        post = inspect.getattr_static(cls, "__post_init__", None)
        initvars = [f for f in getattr(cls, "__dataclass_fields__", {}).values()
                    if f._field_type is dataclasses._FIELD_INITVAR]
        if cls.__dataclass_params__.frozen or initvars or not isinstance(
                post, types.FunctionType):
            raise where.error(UnsupportedSyntaxError, call, (
                f"srcgrad does not support building a {cls.__name__} here: a dataclass with a "
                f"`__post_init__` is built by inlining it, which needs it to be a plain method "
                f"of a dataclass that is not frozen and has no `InitVar` fields"))
        if any(isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            return None
        try:
            given = inspect.signature(cls).bind(*call.args, **{k.arg: k.value
                                                              for k in call.keywords})
        except TypeError as error:
            raise where.error(UnsupportedSyntaxError, call,
                              f"{cls.__name__}(...): {error}") from None
        target = stmt.targets[0].id
        self.ctx.local_names.add(target)
        out = [self._assign(target, gast.Call(self._global(runtime.new_instance), [
            self._global(cls)], []), stmt)]
        for f in dataclasses.fields(cls):
            value = given.arguments.get(f.name) if f.init else None
            if value is None and f.default is not dataclasses.MISSING:
                value = self._constant(f.default, f.name)
            elif value is None and f.default_factory is not dataclasses.MISSING:
                value = gast.Call(self._global(f.default_factory), [], [])
            if value is not None:
                out.append(self._assign(target, gast.Call(self._global(runtime.set_field), [
                    gast.Name(target, gast.Load(), None, None), gast.Constant(f.name, None),
                    value], []), stmt))
        self.known[target] = Known(cls, None, True)
        unused = self.ctx.namer.fresh(naming.UNUSED)
        self.ctx.local_names.add(unused)
        bare = gast.copy_location(gast.Call(call.func, [], []), call)  # (the arguments are used)
        holder = gast.copy_location(gast.Assign([gast.Name(unused, gast.Store(), None, None)],
                                                bare, None), stmt)
        return out, self._call(holder, post, [gast.Name(target, gast.Load(), None, None)])

    def _global(self, obj):
        name = getattr(obj, "__name__", type(obj).__name__)
        return gast.Name(self.ctx.global_name(obj, name if name.isidentifier() else "value"),
                         gast.Load(), None, None)

    def _constant(self, value, preferred):
        if value is None or isinstance(value, (bool, int, float, str)):
            return gast.Constant(value, None)
        return gast.Name(self.ctx.global_name(value, preferred), gast.Load(), None, None)

    @staticmethod
    def _assign(target, value, where):
        stmt = gast.Assign([gast.Name(target, gast.Store(), None, None)], value, None)
        return gast.copy_location(stmt, where)

    def _namespace(self, stmt, call):
        """``s = SimpleNamespace(h=h, c=c)``: an empty one, then its fields written."""
        if call.args or any(k.arg is None for k in call.keywords) or not isinstance(
                stmt.targets[0], gast.Name):
            return None
        target = stmt.targets[0].id
        # an empty namespace carries no gradient (a call of the class itself would be a call
        # without a rule once the loop writing its fields makes `target` active as a whole)
        make = self.ctx.global_name(runtime.new_instance, "new_instance")
        empty = gast.Assign([gast.Name(target, gast.Store(), None, None)], gast.Call(
            gast.Name(make, gast.Load(), None, None), [call.func], []), None)
        helper = self.ctx.global_name(runtime.set_field, "set_field")
        writes = [
            gast.Assign([gast.Name(target, gast.Store(), None, None)], gast.Call(
                gast.Name(helper, gast.Load(), None, None),
                [gast.Name(target, gast.Load(), None, None), gast.Constant(k.arg, None),
                 k.value], []), None)
            for k in call.keywords
        ]
        out = [gast.copy_location(w, stmt) for w in [empty] + writes]
        self.known[target] = Known(types.SimpleNamespace, None, True)
        return out[:-1], out[-1]
