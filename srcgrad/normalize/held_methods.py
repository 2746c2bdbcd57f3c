"""Bound methods held as values: by an object (``self.hooks = {"a": self.a.scale}`` in
``__init__``, called as ``self.hooks["a"](x)``), by a list the function makes and appends them to
(also in a helper: ``self.store(fs)``), or by a name bound to methods of one name on several
paths (``g = self.a.s`` / ``g = self.b.s``), as calls of the method on the object it is bound to.

A part of ``Receivers`` (``methods.py``). Requires: an A-normal-form call ``y = h(x)`` of a name
``h`` known by an example value (the bound instance of a transformed method, the object a call
passes) that is a bound method of an object of the user's classes, which that example reaches by
a chain of fields (``self.a``). Guarantees: ``h`` is the method called on that chain's object,
after a run-time check that ``h`` is still that method bound to that object (a
``SrcgradError`` otherwise, never a wrong value), so the gradient reaches the object's fields as
Python's calls read them, also with respect to ``self``. An item taken by an index or key known
only when it runs (``for f in self.fs``) is a branch on which of the methods the example holds it
is (``is_held_method``), each path calling one on its object.

    y = self_hooks_item(x)  ->   self_a = self.a
                                 unused = check_held_method(self_hooks_item, self_a, Block_s)
                                 unused_2 = check_class(self_a, Block)
                                 y = Block_s(self_a, x)              (then inlined)

A list of bound methods of one name made in the function holds their objects instead, and an
item called is that method of the item's object (a branch on its class where there are several);
such a list read any other way (returned, passed on) is an error at transform time:

    fs = [self_a_s]          ->   fs = [self_a_s_self]
    fs = list_append(fs, g)  ->   fs = list_append(fs, g_self)
    f = fs[i]; y = f(h)      ->   f_self = fs[i]; y = f_self.s(h)    (then as a method call)
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
from ..frontend.resolve import MISSING
from .dict_views import DictViews
from .held_lists import bound_once, method_bindings, refuse_other_uses  # noqa: F401 (inline.py)
from .object_classes import Known, own_class, user_class

MAX_PATH = 3  # fields followed from a parameter to the object a held method is bound to


@dataclasses.dataclass(frozen=True)
class HeldMethod:
    """A bound method of the user's classes held as a value (``Known.method``): its function,
    and the object it is bound to, as names that reach it by fields (``anchors``: (name,
    fields) where it was taken, ``h = self.a.s``) or, once written into an object's field (or
    a dict that field holds), the fields from that object (``path``) and how many reads lead
    from the item to that object (``hops``: 1 for the field, 2 for a key of its dict)."""

    fn: object
    anchors: tuple = ()
    path: tuple | None = None
    hops: int = 0
    versions: tuple = ()  # how many bindings of each anchor were noted when it was taken
    made: str | None = None  # the name of the bound method put in the dict (`_bound_in_dict`)


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


def hidden_method(ctx, names, obj, cls, attr, stmt):
    """``[unused = check_method_of(obj, "attr")]`` where ``attr`` is a plain method of ``cls``
    (a field of that name of the object hides it, and Python reads the field: a
    ``SrcgradError`` when it runs), else ``[]``; the name made is added to ``names``."""
    found = inspect.getattr_static(cls, attr, None)
    if found is None or hasattr(type(found), "__set__"):  # (a property is read before a field)
        return []  # (a staticmethod, a ufunc held by the class: hidden too)
    unused = ctx.namer.fresh(naming.UNUSED)
    names.add(unused)
    check = gast.Call(gast.Name(ctx.global_name(runtime.check_method_of, "check_method_of"),
                                gast.Load(), None, None), [
        gast.Name(obj, gast.Load(), None, None), gast.Constant(attr, None)], [])
    return [gast.copy_location(gast.Assign([gast.Name(unused, gast.Store(), None, None)], check,
                                           None), stmt)]


def _relative(method, base, hops, version):
    """``method`` (``HeldMethod``) known by the fields from the object ``base`` to its own, for
    an item ``hops`` reads away from ``base``; by no path where ``base`` does not reach it. Where
    ``base`` is that object itself, not bound again since (``version``: how many bindings of it
    were noted; ``self.hooks = {"t": self.tail}``), by the empty path and the name of the
    method put in the dict (``made``): writing the field copies ``base``, so the item stays
    bound to the object before the write; a call of it gives the holder itself to the method,
    after a run-time check that the item is still the one put in the dict."""
    path, then = next(((p, v) for (name, p), v in zip(method.anchors, method.versions)
                       if name == base), (None, None))
    if path == () and then == version and method.made is not None:
        return HeldMethod(method.fn, (), (), hops, made=method.made)
    return HeldMethod(method.fn, (), path or None, hops)


def without_own(known):
    """What is known of a copy of an object (``copy.copy``, ``copy.deepcopy``): as of the
    object, but the items of its dicts that are the object's own methods (``_relative``) known
    by no path, as the copy's own are not: a call of one is an error at transform time."""
    def strip(k):
        own = isinstance(k.method, HeldMethod) and k.method.path == ()
        return dataclasses.replace(k, method=HeldMethod(k.method.fn, (), None, k.method.hops)
                                   ) if own else k
    if known is None or not known.fields:
        return known
    return dataclasses.replace(known, fields=tuple((n, dataclasses.replace(
        strip(k), fields=tuple((m, strip(i)) for m, i in k.fields)) if k.fields else strip(k))
        for n, k in known.fields))


def _attr_of(entry):
    """The name under which the class of a bound method's object (``_method_value``'s entry:
    function, object's name, what is known of it) holds its function, or None."""
    if entry is None or not isinstance(entry[0], types.FunctionType) or entry[2] is None:
        return None
    return next((n for klass in entry[2].cls.__mro__ for n, f in vars(klass).items()
                 if f is entry[0]), None)


def _methods_of(items):
    """The items of a list, tuple or dict (its values) when each is a bound method of an object
    of the user's classes (``bound_method``), else None."""
    items = list(items.values()) if isinstance(items, dict) else items
    if isinstance(items, (list, tuple)) and items and all(
            bound_method(m) is not None for m in items):
        return list(items)
    return None


class HeldMethods(DictViews):
    """``Receivers``' calls of bound methods held by an object, or by a list the function
    builds (see the module's docstring)."""

    def unbound_methods(self):
        """The names of bound methods (``h = obj.s``) with no value when the derivative runs:
        those not also bound where a dict holds them (``_bound_in_dict``)."""
        return {n: m for n, m in self.methods.items() if n not in self.bound_values}

    def _note_read(self, stmt, target):
        """``target = base.attr`` / ``base[key]`` (a constant key) / ``base``: where the value
        came from (``reads``), to find the object whose fields hold a bound method called. The
        values or items of a dict (``seq = dict_values(d)``) count as the dict itself, an item
        of them (``f = seq[i]``, ``f = seq_item[1]`` of ``seq = dict_items(d)``) as its item."""
        value = stmt.value
        if self._same_sequence(value, target):
            return
        pair = self._pair_value(value)
        self._note_source(value, target, pair)
        kept = self.kept_items.get(pair) if pair is not None else None
        self.kept_items.pop(target, None)
        if kept is not None:
            self.kept_items[target] = kept
        base = self._dict_known(value.value.id) if isinstance(value, gast.Subscript) and (
            isinstance(value.value, gast.Name)) else None
        if base is None or base.cls is not dict or isinstance(value.slice, gast.Constant):
            return
        held = [k.method for _, k in base.fields]  # `d[k]` of a dict of an object built here
        if held and all(isinstance(m, HeldMethod) and (
                m.path is not None and m.hops == 2 or m.path is None and m.anchors)
                for m in held):
            self.kept_items[target] = tuple(dict.fromkeys(held))

    def _note_write(self, stmt, target):
        """``x = field_updated(x, "w", v)`` / ``x = set_field(x, "a", v)`` of an object on the
        path from a holder of bound methods (``HeldMethod``) to the object one is bound to
        (``hk.a.w = v``, ``hk.a = Block(v)``): that method's object is now srcgrad's copy, or
        another one, which Python's item does not follow; a call of the item afterwards is an
        error at transform time (``stale``). Any other binding of ``x`` forgets it."""
        value = stmt.value
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names) if isinstance(
            value, gast.Call) else None
        if not (any(fn is h for h in (runtime.field_updated, runtime.set_field))
                and len(value.args) == 3 and isinstance(value.args[0], gast.Name)
                and value.args[0].id == target and isinstance(value.args[1], gast.Constant)):
            self.stale.pop(target, None)
            return
        name, path = target, ()
        while True:
            if any(len(m.path) >= len(path) and m.path[:len(path)] == path and (
                    len(m.path) == len(path) or m.path[len(path)] == value.args[1].value)
                   for m in self._paths_held(name)):
                self.stale[name] = stmt
            read = self.reads.get(name)
            if read is None or read[1] is None or read[1][0] != "attr" or len(path) >= MAX_PATH:
                return
            name, path = read[0], (read[1][1],) + path

    def _paths_held(self, name):
        """The ``HeldMethod``s with a path the object ``name`` holds (or a dict it holds)."""
        known = self.known.get(name)
        for _, field in known.fields if known is not None else ():
            inner = [field] + [k for _, k in field.fields] if field.cls is dict else [field]
            yield from (k.method for k in inner  # (an own method: the holder is given it)
                        if isinstance(k.method, HeldMethod) and k.method.path)

    def _refuse_stale(self, holder, stmt):
        """An error at transform time where ``holder`` is ``stale`` (``_note_write``)."""
        if holder not in self.stale:
            return
        line = self.ctx.location.of(self.stale[holder])[1]
        raise self.ctx.location.error(UnsupportedSyntaxError, stmt, (
            f"srcgrad does not support calling a bound method that `{holder}` holds (in a "
            f"field, or a dict a field holds) after the object it is bound to, or one on the "
            f"way to it, is written into or replaced (line {line}; `{holder}.a.w = v`, "
            f"`{holder}.a = Block(v)`): srcgrad's write makes a copy, which the held method "
            f"would not follow. Make the dict after the change, or call the method on the "
            f"object (`{holder}.a.s(x)`)"))

    def _anchors(self, name):
        """(name, fields) of each name that reaches the object ``name`` holds by reading
        fields (``h_self = self_a``, ``self_a = self.a``: ``("self", ("a",))``)."""
        found, path = [(name, ())], ()
        while len(path) < MAX_PATH and len(found) < 2 * MAX_PATH + 2:
            read = self.reads.get(name)
            if read is None or (read[1] is not None and read[1][0] != "attr"):
                break
            name, path = read[0], (read[1][1],) + path if read[1] else path
            found.append((name, path))
        return tuple(found)

    def _bound_in_dict(self, stmt, value):
        """``d = {"a": h}`` of a bound method ``h = obj.s`` (``_method_value``): the method
        itself, ``h_2 = bound_method_of(h_self, "s")``, is put in the dict, known as that
        method of the object its fields reach (``HeldMethod``), so that an object built here
        may hold the dict in a field and call its item (``_kept_method``); a call of ``h_2``
        is still the method called on ``h_self``. None where the dict holds no such name."""
        before, values = [], []
        for v in value.values:
            entry = self.methods.get(getattr(v, "id", None))
            attr = _attr_of(entry)
            if attr is None:
                values.append(v)
                continue
            name = self.ctx.namer.fresh(v.id)
            self.ctx.local_names.add(name)
            self.stores[name] += 1
            bound = self._helper(runtime.bound_method_of, "bound_method_of", [
                gast.Name(entry[1], gast.Load(), None, None), gast.Constant(attr, None)])
            before.append(gast.copy_location(gast.Assign(
                [gast.Name(name, gast.Store(), None, None)], bound, None), stmt))
            self.methods[name] = entry
            self.bound_values.add(name)
            anchors = self._anchors(entry[1])
            self.known[name] = Known(types.MethodType, method=HeldMethod(
                entry[0], anchors, versions=tuple(self.versions[n] for n, _ in anchors),
                made=name))
            values.append(gast.Name(name, gast.Load(), None, None))
        if not before:
            return None
        new = gast.copy_location(gast.Dict(value.keys, values), value)
        return before, gast.copy_location(gast.Assign(stmt.targets, new, None), stmt)

    def _anchored(self, known, base, fn):
        """What is known of a value ``set_field`` (``fn``) writes into a field of the object
        ``base``: a bound method (``HeldMethod``), or a dict of them, known by the fields from
        ``base`` to the method's object; as it is otherwise. A method whose object ``base``
        does not reach by fields is known by no path (a call of it is refused)."""
        if known is None or fn is runtime.setitem or not isinstance(base, gast.Name):
            return known
        # (`base = set_field(base, ...)`, noted already: the binding before it; a new object
        # made with the field, `replace_field`, is not the one the method is bound to)
        version = self.versions[base.id] - 1 if fn is not runtime.replace_field else None
        if known.method is not None:
            return dataclasses.replace(known, method=_relative(known.method, base.id, 1,
                                                               version))
        if known.cls is not dict or not any(k.method for _, k in known.fields):
            return known
        fields = tuple((n, dataclasses.replace(k, method=_relative(k.method, base.id, 2,
                                                                   version))
                        if k.method else k) for n, k in known.fields)
        return dataclasses.replace(known, fields=fields)

    def _kept_method(self, stmt, call, func, method):
        """``y = h(x)`` of ``h`` an item of a dict of bound methods, or a field holding one, of
        an object built here (``_anchored``): the object the fields of that object reach,
        read now (``self_a = hk.a``), after a run-time check that ``h`` is still the method
        bound to it (``check_held_method``, a ``SrcgradError`` otherwise), and its class
        checked, is given to the method: never a call of the object itself. None where the
        object that holds it cannot be found."""
        if method.path is None and not method.anchors:  # (`_relative`: no fields reach it)
            raise self.ctx.location.error(UnsupportedSyntaxError, stmt, (
                f"srcgrad does not support calling `{method.fn.__qualname__}` here: an object "
                f"built in the function holds it, bound to one none of its fields holds, or "
                f"to the object itself (`self.hooks = {{\"t\": self.{method.fn.__name__}}}`) "
                f"but reached through a copy of it (`copy.copy(hk)`: Python's item is still "
                f"bound to the original), or through a dict made before the object's last "
                f"binding; call the method where it is named (`hk.{method.fn.__name__}(x)`)"))
        if method.path is None:  # (a dict the function reads itself: by the names it has)
            found = self._anchor_read(method, stmt)
        else:
            holder = self._holder_of(func.id, method.hops)
            self._refuse_stale(holder, stmt)
            found = None if holder is None else self._path_read(holder, method.path, stmt)
        if found is None:
            return None
        before, receiver, known = found
        before.append(self._unused(self._helper(runtime.check_held_method, "check_held_method",
                                                self._held_args(func.id, receiver, method))))
        before += self._check(gast.Name(receiver, gast.Load(), None, None), known)
        return before, self._call(stmt, method.fn,
                                  [gast.Name(receiver, gast.Load(), None, None)] + call.args)

    def _anchor_read(self, method, stmt):
        """The reads of a bound method's object, for an item of a dict the function made and
        reads itself (``d = {"a": blk.s}; d["a"](x)``), by the name furthest from it among its
        anchors that reaches it by fields (``blk``, or ``self`` by ``a`` for ``self.a.s``); or
        None. A name of them bound again since the method was taken (``blk.w = v`` rebinds
        ``blk`` to srcgrad's copy, ``blk = Block(v)`` to another object) is an error at
        transform time: Python's item would still be bound to the object, changed or not."""
        for (name, path), version in reversed(list(zip(method.anchors, method.versions))):
            if self.versions[name] != version:
                attr = method.fn.__name__
                raise self.ctx.location.error(UnsupportedSyntaxError, stmt, (
                    f"srcgrad does not support calling the bound method "
                    f"`{method.fn.__qualname__}` that a dict the function made holds, after "
                    f"`{name}`, which reaches its object, is written into or bound again "
                    f"(`{name}.w = v`, `{name} = ...`): its write makes a copy, which the "
                    f"item would not follow. Make the dict after the change, or call the "
                    f"method where it is named (`{name}.{attr}(x)`)"))
            if name in self.known and user_class(self.known[name].cls) or path:
                found = self._path_read(name, path, stmt)
                if found is not None:
                    return found
        return None

    def _kept_branch(self, stmt):
        """``y = h(x)`` of ``h = d[k]``, ``k`` known only when it runs, of a dict of bound
        methods an object built here holds (``kept_items``): a branch on which of them ``h``
        is (``is_held_method``), each path calling one on the object the holder's fields reach
        now; the last path checks it (``check_held_method``). None otherwise."""
        call = stmt.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and call.func.id in self.kept_items and isinstance(stmt.targets[0], gast.Name)):
            return None
        methods, branch = self.kept_items[call.func.id], None
        holder = self._holder_of(call.func.id, 2) if methods[0].path is not None else None
        self._refuse_stale(holder, stmt)
        for method in reversed(methods):
            found = self._anchor_read(method, stmt) if method.path is None else (
                holder and self._path_read(holder, method.path, stmt))
            if found is None:
                return None
            reads, receiver, known = found
            args = self._held_args(call.func.id, receiver, method)
            called = gast.copy_location(gast.Assign(stmt.targets, gast.Call(
                clone(args[2]), [gast.Name(receiver, gast.Load(), None, None)] + call.args,
                call.keywords), None), stmt)
            called = self._check(gast.Name(receiver, gast.Load(), None, None), known) + [called]
            branch = self._path(stmt, branch, reads, args, called)
        return branch

    def _path(self, stmt, branch, reads, args, called):
        """One more path, put before ``branch``, of a branch on which held method the item
        ``args[0]`` is: ``reads`` then ``called`` when ``is_held_method(*args)``, else
        ``branch``; the last path (``branch`` None) checks it (``check_held_method``)."""
        if branch is None:
            check = self._helper(runtime.check_held_method, "check_held_method", args)
            return reads + [self._unused(check)] + called
        test = self.ctx.namer.fresh(naming.IS_HELD)
        self.ctx.local_names.add(test)
        is_it = gast.copy_location(gast.Assign([gast.Name(test, gast.Store(), None, None)],
                                               self._helper(runtime.is_held_method,
                                                            "is_held_method", args), None),
                                   stmt)
        return reads + [is_it, gast.copy_location(gast.If(
            gast.Name(test, gast.Load(), None, None), called, branch), stmt)]

    def _held_args(self, item, receiver, method):
        """``[item, receiver, fn]``: what ``check_held_method`` / ``is_held_method`` take; for
        an object's own method, ``[item, made, fn, receiver]`` (``_relative``); for an item of
        a dict the function made, bound to the object a name holds all along (``bound_once``;
        ``d = {"a": blk.s}``, the object read by that name), ``[item, made, fn, True]``: that
        name is bound again only where that object changes in place (``L[0].w = v``,
        normalize/sharing.py)."""
        fn = method.fn
        fn_name = self.ctx.global_name(fn, naming.METHOD.format(fn.__qualname__.replace(".", "_")))
        names = (item, receiver, fn_name) if method.path != () else (
            item, method.made, fn_name, receiver)
        if method.path is None and (receiver, ()) in method.anchors and receiver in self.once:
            names = (item, method.made, fn_name)
        args = [gast.Name(n, gast.Load(), None, None) for n in names]
        return args + [gast.Constant(True, None)] if len(names) == 3 and names[1] != receiver else (
            args)

    def _holder_of(self, name, hops):
        """The name of the object of the user's classes ``hops`` reads up from ``name`` (a
        field read last, a dict's item before it), following names given it; or None."""
        holder = name
        while hops:
            read = self.reads.get(holder)
            if read is None:
                return None
            holder = read[0]
            if read[1] is not None:
                if read[1][0] != ("attr" if hops == 1 else "key"):
                    return None
                hops -= 1
        known = self.known.get(holder)
        return holder if known is not None and user_class(known.cls) else None

    def _path_read(self, holder, path, stmt):
        """The reads of the fields ``path`` from ``holder`` (``hk_a = hk.a``, each noted), the
        last name and what is known of it, an object of the user's classes; or None."""
        self._stmt, before = stmt, []
        for attr in path:
            held = self.ctx.namer.fresh(naming.RECEIVER_FIELD.format(holder, attr))
            self.ctx.local_names.add(held)
            self.stores[held] += 1
            read = gast.copy_location(gast.Assign([gast.Name(held, gast.Store(), None, None)],
                                                  gast.Attribute(gast.Name(
                                                      holder, gast.Load(), None, None), attr,
                                                      gast.Load()), None), stmt)
            self.note(read)
            before.append(read)
            holder = held
        known = self.known.get(holder)
        if known is None or not user_class(known.cls):
            return None
        return before, holder, known

    def _note_held_item(self, stmt, target):
        """``f = fs[i]`` of a list, tuple or dict an example shows to hold bound methods of
        objects of the user's classes, by an index or key known only when it runs: the methods
        ``f`` may be (``by_identity``); any other assignment forgets them."""
        if self._same_sequence(stmt.value, target):
            return
        self.held_items.pop(target, None)
        self.held_sources.pop(target, None)
        value, view, pair = stmt.value, self._dict_view(stmt.value), self._pair_value(
            stmt.value)
        if isinstance(value, gast.Attribute):  # `seq = HK.fs` of a global HK
            self._note_global_items(target, value)
        elif view is not None and isinstance(view[0], gast.Attribute):  # `HK.hooks.values()`
            self._note_global_items(target, view[0])
        if pair is not None and pair in self.held_items:  # `f = seq_item[1]` of its items
            self.held_items[target] = self.held_items[pair]
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, (
                gast.Name, gast.Attribute))) or isinstance(value.slice, gast.Constant):
            return
        base = self._dict_known(value.value.id) if isinstance(value.value, gast.Name) else None
        items, outer = _methods_of(getattr(base, "example", None)), None
        if base is None:  # `HK.hooks[k]`, `seq[i]` of `seq = HK.fs`
            items, outer = self.held_sources.get(getattr(value.value, "id", None)) or (
                self._global_items(value.value))
        if items:
            self.held_items[target] = (items, outer)

    def _global_items(self, value):
        """The bound methods of the user's objects a list, tuple or dict a global's field holds
        (``HK.hooks``), and the global's name and value; or ``(None, None)``."""
        root = value
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in self.ctx.local_names:
            return None, None
        items = _methods_of(self.ctx.namespace.resolve(value, self.ctx.local_names))
        if items is None:
            return None, None
        return items, (root.id, self.ctx.namespace.resolve(root, self.ctx.local_names))

    def _note_global_items(self, target, value):
        items, outer = self._global_items(value)
        if items:
            self.held_sources[target] = (items, outer)

    def by_identity(self, stmt):
        """``y = f(x)`` of an item of held bound methods (``_note_held_item``): a branch on
        which method it is (``is_held_method``), each path calling one on the object it is
        bound to, read by the fields that reach it; the last path checks it
        (``check_held_method``). None for any other statement, or where an object cannot be
        reached."""
        call = stmt.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and call.func.id in self.held_items and isinstance(stmt.targets[0], gast.Name)):
            return self._kept_branch(stmt)
        self._stmt = stmt
        items, outer = self.held_items[call.func.id]
        found = {(id(m.__self__), m.__func__): m for m in items}
        paths = []
        for m in found.values():
            reached = self._reached(m.__self__, outer)
            if reached is None and outer is not None:  # (a global's: no gradient to reach)
                reached = self._kept_object(m.__self__)
            if reached is None:
                return None
            paths.append((reached, m.__func__))
        branch = None
        for (reads, holder), fn in reversed(paths):
            fn_name = gast.Name(self.ctx.global_name(fn, naming.METHOD.format(
                fn.__qualname__.replace(".", "_"))), gast.Load(), None, None)
            args = [gast.Name(call.func.id, gast.Load(), None, None),
                    gast.Name(holder, gast.Load(), None, None), fn_name]
            called = gast.copy_location(gast.Assign(stmt.targets, gast.Call(
                clone(fn_name), [gast.Name(holder, gast.Load(), None, None)] + call.args,
                call.keywords), None), stmt)
            branch = self._path(stmt, branch, reads, args, [called])
        return branch

    def _helper(self, fn, stem, args):
        return gast.Call(gast.Name(self.ctx.global_name(fn, stem), gast.Load(), None, None),
                         args, [])

    def _note_method_list(self, stmt, target):
        """What ``target = ...`` tells of a list of bound methods: not one any more, unless
        ``_listed`` wrote it; an empty list may become one (``fs = []``)."""
        if getattr(stmt, "method_list", None) is None:
            self.method_lists.pop(target, None)
            if isinstance(stmt.value, gast.List) and not stmt.value.elts:
                self.method_lists[target] = None  # (bound methods may be appended to it)

    def _listed(self, stmt):
        """``fs = [m, ...]`` / ``fs = list_append(fs, m)`` of bound methods ``m`` (``h =
        obj.method`` names) of one name, into a list made in the function: the list of their
        receivers, so that ``f = fs[i]`` is that method of the item's object (``_listed_item``);
        an empty one (``fs = []``) may be appended to (``note``). The statement to write, or
        None."""
        target, value = stmt.targets[0], stmt.value
        if not isinstance(target, gast.Name):
            return None
        if isinstance(value, gast.List):
            names, kept = value.elts, None
        elif isinstance(value, gast.Call) and len(value.args) == 2 and isinstance(
                value.args[0], gast.Name) and value.args[0].id == target.id and (
                target.id in self.method_lists) and self.ctx.namespace.resolve(
                value.func, self.ctx.local_names) is runtime.list_append:
            names, kept = value.args[1:], self.method_lists[target.id]
        else:
            return None
        attr = self._listed_name(names, kept)
        if attr is None:
            return None
        receivers = [gast.Name(self.methods[n.id][1], gast.Load(), None, None) for n in names]
        new = gast.List(receivers, gast.Load()) if isinstance(value, gast.List) else gast.Call(
            value.func, [value.args[0]] + receivers, [])
        new = gast.copy_location(gast.Assign(stmt.targets, gast.copy_location(new, value), None),
                                 stmt)
        new.method_list = True
        self.method_lists[target.id] = self.listed[target.id] = attr
        return new

    def _rebound_method(self, stmt, value):
        """``g = obj.s`` of a name every assignment of which reads the attribute ``s``
        (``method_bindings``), where ``s`` is a method of obj's class: ``g_self = obj``, one
        name for the objects of every binding, and ``g`` known as their method ``s`` (a call
        of ``g`` is a branch on the class where its bindings give objects of several). Where
        one binding is a method and another is not (or of an object whose class is not known
        here), an error at transform time; None for any other statement."""
        target = stmt.targets[0]
        bound = self.bindings.get(getattr(target, "id", None))
        if bound is None or self.stores.get(target.id, 0) != bound[1]:
            return None
        known = self.known.get(value.value.id)
        static = MISSING if known is None or not user_class(known.cls) else (
            inspect.getattr_static(known.cls, value.attr, MISSING))
        method = isinstance(static, types.FunctionType) and not (
            known.example is not None and value.attr in getattr(known.example, "__dict__", {}))
        if target.id not in self.rebinds:  # the first binding: (a method?, the objects' name)
            self.rebinds[target.id] = (method, self.ctx.namer.fresh(
                naming.SELF.format(target.id)) if method else None)
        first, receiver = self.rebinds[target.id]
        if first != method:
            raise self.ctx.location.error(UnsupportedSyntaxError, self._stmt, (
                f"srcgrad does not support `{target.id}` bound here to "
                f"{'a bound method' if method else 'something else'} and elsewhere to "
                f"{'something else' if method else 'a bound method'} of an object whose class "
                f"it knows: give each binding its own name, or call the method where it is "
                f"named on each path (`y = self.a.{value.attr}(x)`)"))
        if not method:
            return None
        self.ctx.local_names.add(receiver)
        held = gast.copy_location(gast.Assign(
            [gast.Name(receiver, gast.Store(), None, None)], value.value, None), stmt)
        held.method_of = target.id
        self.methods[target.id] = (value.attr, receiver, None)
        return self._check(value.value, known), held

    def _method_value(self, stmt, value):
        """``h = obj.method`` (a bound method as a value, assigned once): the receiver kept
        under a name of its own, so that ``h(x)`` is a call of the method on it."""
        known = self.known.get(value.value.id)
        target = stmt.targets[0]
        if known is None or not user_class(known.cls) or not isinstance(target, gast.Name) or (
                self.stores.get(target.id, 0) != 1):
            return None
        static = inspect.getattr_static(known.cls, value.attr, MISSING)
        if not isinstance(static, types.FunctionType) or (
                known.example is not None and value.attr in getattr(known.example, "__dict__", {})):
            return None
        receiver = self.ctx.namer.fresh(naming.SELF.format(target.id))
        self.ctx.local_names.add(receiver)
        held = gast.copy_location(gast.Assign(
            [gast.Name(receiver, gast.Store(), None, None)], value.value, None), stmt)
        held.method_of = target.id
        self.methods[target.id] = (static, receiver, known)
        self.known[receiver] = known
        return self._check(value.value, known) + hidden_method(
            self.ctx, self.ctx.local_names, value.value.id, known.cls, value.attr, stmt), held

    def _method_of_classes(self, stmt, value):
        """``h = obj.s`` of a name that may hold objects of several of the user's classes
        (``for blk in (self.a, self.b)``), each with a plain method ``s``: ``h_self = obj``,
        and ``h`` known as the method ``s`` of that object, so that a call of ``h``, or of an
        item of a list it is appended to (``_listed``), is a branch on its class; else None."""
        classes, target = self.classes.get(value.value.id), stmt.targets[0]
        if not isinstance(target, gast.Name) or self.stores.get(target.id, 0) != 1 or (
                value.value.id in self.known):
            return None
        if not classes or not all(user_class(c) and isinstance(
                inspect.getattr_static(c, value.attr, MISSING), types.FunctionType)
                for c in classes):
            return None
        target = target.id
        receiver = self.ctx.namer.fresh(naming.SELF.format(target))
        self.ctx.local_names.add(receiver)
        self.stores[receiver] += 1
        held = gast.copy_location(gast.Assign(
            [gast.Name(receiver, gast.Store(), None, None)], value.value, None), stmt)
        held.method_of = target
        self.methods[target] = (value.attr, receiver, None)
        return hidden_method(self.ctx, self.ctx.local_names, value.value.id, classes[0],
                             value.attr, stmt), held

    def _classes_by_key(self, value):
        """The user classes of the objects ``d[k]`` may be, for a key ``k`` known only when it
        runs, of a dict built here whose constant keys each hold an object of a known class,
        or of several (``{"a": layer}``, ``layer`` of two classes); else None."""
        base = self.known.get(value.value.id)
        if base is None or base.cls is not dict or not base.fields or isinstance(
                value.slice, gast.Constant):
            return None
        classes = [own_class(k) for _, k in base.fields]
        if not all(classes):
            return None
        return list(dict.fromkeys(c for found in classes for c in found))

    def _listed_name(self, names, kept):
        """The name of the methods ``names`` are (each a plain method of its receiver's class
        under that name; ``kept``: the name the list's items have already), or None."""
        found = {kept} - {None}
        for n in names:
            entry = self.methods.get(getattr(n, "id", None))
            if entry is not None and isinstance(entry[0], str):  # (`_rebound_method`'s)
                found.add(entry[0])
                continue
            if entry is None or not isinstance(entry[0], types.FunctionType):
                return None
            fn, known = entry[0], entry[2]
            if inspect.getattr_static(known.cls, fn.__name__, None) is not fn:
                return None
            found.add(fn.__name__)
        return found.pop() if len(found) == 1 else None

    def _listed_item(self, stmt):
        """``f = fs[i]`` of a list of bound methods (``_listed``): ``f_self = fs[i]``, the
        object, and ``f`` known as its method of that name; None for any other statement."""
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, gast.Name) and isinstance(value, gast.Subscript)
                and isinstance(value.value, gast.Name)
                and self.method_lists.get(value.value.id) is not None
                and self.stores.get(target.id, 0) == 1):
            return None
        receiver = self.ctx.namer.fresh(naming.SELF.format(target.id))
        self.ctx.local_names.add(receiver)
        self.stores[receiver] += 1
        held = gast.copy_location(gast.Assign(
            [gast.Name(receiver, gast.Store(), None, None)], value, None), stmt)
        held.method_of = target.id
        self.methods[target.id] = (self.method_lists[value.value.id], receiver, None)
        return [], held

    def _listed_call(self, stmt, call, attr, receiver):
        """``y = f(x)`` of ``f`` a method of a list's item: ``y = f_self.attr(x)``, rewritten
        as a method call (a branch on the class where the list holds several)."""
        func = gast.Attribute(gast.Name(receiver, gast.Load(), None, None), attr, gast.Load())
        new = gast.Call(gast.copy_location(func, call.func), call.args, call.keywords)
        new = gast.copy_location(gast.Assign(stmt.targets, gast.copy_location(new, call), None),
                                 stmt)
        return self._rewrite_call(new, new.value) or ([], new)

    def _held_method(self, stmt, call, func, known):
        """``y = h(x)`` of a name ``h`` whose example is a bound method reached from a
        parameter: the statements before, and the call of the method; None otherwise."""
        if known.method is not None:  # (of an object built here)
            return self._kept_method(stmt, call, func, known.method)
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

    def _kept_object(self, receiver):
        """``held = <receiver>``: the object a bound method a global holds is bound to, which
        the global's fields no longer reach (``HK.a = Block(2.0)`` after ``HK.hooks`` was
        made), as the constant it is (a global carries no gradient; the call's run-time check
        compares the item's object with it by identity); the read, and the name."""
        held = self.ctx.namer.fresh(naming.SELF.format(type(receiver).__name__))
        self.ctx.local_names.add(held)
        self.stores[held] += 1
        read = gast.copy_location(gast.Assign([gast.Name(held, gast.Store(), None, None)],
                                              gast.Name(self.ctx.global_name(receiver, "held"),
                                                        gast.Load(), None, None), None),
                                  self._stmt)
        self.note(read)
        self.known[held] = Known(type(receiver), receiver)
        return [read], held

    def _reached(self, receiver, outer=None):
        """The statements reading ``receiver`` by a chain of fields from a parameter known by
        its example (``self_a = self.a``), or from the global ``outer`` (its name and value)
        that holds the item called, each noted, and the last name; or None."""
        roots = [(n, k.example) for n, k in self.known.items()
                 if not self.stores.get(n, 0) and k.example is not None]
        for root, example in roots + ([outer] if outer is not None else []):
            path = [] if example is receiver else path_to(example, receiver)
            if path is None or (not path and root not in self.known):
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
                example = _fields(example)[attr]
                if held not in self.known and root not in self.known:  # (read from a global)
                    self.known[held] = Known(type(example), example)
                reads.append(read)
                base = held
            if path and root not in self.known:  # made again when the global's field is
                expr = gast.Name(root, gast.Load(), None, None)  # rebound (emit/guard.py)
                for attr in path:
                    expr = gast.Attribute(expr, attr, gast.Load())
                self.ctx.dependencies.append((self.ctx.namespace, expr, example))
            if base in self.known:
                return reads, base
        return None

    def _unused(self, call):
        unused = self.ctx.namer.fresh(naming.UNUSED)
        self.ctx.local_names.add(unused)
        stmt = gast.Assign([gast.Name(unused, gast.Store(), None, None)], call, None)
        return gast.copy_location(stmt, self._stmt)
