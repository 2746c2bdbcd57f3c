"""A function field of an object built here or an argument's, written in a branch or a loop,
then called.

Requires: the function as parsed (``chosen.run`` calls ``follow`` before desugaring).
Guarantees: an object built once in the function's own block (``b = Box(np.tanh)``, a class of
the user's), reached by no other name (``b`` read only as ``b.attr``, no method of it called
but the field's), whose field ``f`` is written only by ``b.f = g`` statements and read only
to be called (``b.f(x)``), has that field followed by a name of its own: read once where the
object is built (what ``__init__`` stored), assigned where the field was, called where it was
called. An argument's object (``cfg.act``) is followed the same way, read where the function
starts; the caller's object is not changed, as for any field the function writes.
``rebound`` then dispatches each call on the assignment that ran last:

    b = Box(np.tanh)                     b = Box(np.tanh)
                                         f = b.f
    if flag:                   ->        if flag:
        b.f = np.sin                         f = np.sin
    y = b.f(x)                           y = f(x)

Another name given the object in the function's own block, ``d = b`` read only as ``d.f``
after it, is ``b`` itself (``_aliases_folded``). A read of the field as a value, ``g = b.f``,
becomes ``g = f`` (a copy ``rebound`` dispatches
too). An object built here whose class does not set the field (``b = Empty()``, then ``if c:
b.f = np.sin``) is followed from a ``NoField`` value: where no write ran, reading the field
raises Python's AttributeError. The field is read nowhere else, so its writes are dropped. Any
other use of the object or of the field leaves the function as it is (resolved, or refused
at the call, as before).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter

import gast

from ..astutil import walk
from ..errors import SrcgradError
from ..frontend.resolve import MISSING
from ..frontend.source import parse_function
from . import chosen_passed_fields
from .object_classes import user_class
from .rebound import NoField


def follow(fn_node, ctx):
    """Rewrite ``fn_node`` in place (see the module docstring)."""
    objects = [(stmt.targets[0].id, _built(stmt, ctx), stmt) for stmt in fn_node.body
               if _built(stmt, ctx) is not None]
    # an argument's object too (not one `wrt` selects): its class is known once the
    # derivative is specialized per the objects passed (``ctx.examples``)
    objects += [(a.id, type(ctx.examples[a.id]) if a.id in ctx.examples else object, None)
                for a in fn_node.args.posonlyargs + fn_node.args.args + fn_node.args.kwonlyargs
                if a.id not in ctx.wrt]
    top = {id(s) for s in fn_node.body}

    def written_nested():  # (only these can have a field to follow)
        return {s.targets[0].value.id for s in walk(fn_node) if isinstance(
            s, gast.Assign) and id(s) not in top and isinstance(
            s.targets[0], gast.Attribute) and isinstance(s.targets[0].value, gast.Name)}

    _aliases_folded(fn_node, {name: stmt for name, _, stmt in objects}, written_nested())
    nested = written_nested()
    for name, cls, stmt in objects:
        if name not in nested or _in_local_functions(fn_node, name) or name in (
                local_function_reads(ctx)):
            continue  # (a lambda or nested def reads the field when it is called)
        followed = _followed_fields(fn_node, name, cls, stmt is None)
        if not followed and stmt is not None:  # (passed, or a method of it called)
            chosen_passed_fields.dispatch(fn_node, ctx, name, cls, stmt, _passed_fields(
                fn_node, name, cls))
        for attr in followed:
            local = ctx.namer.fresh(attr)
            ctx.local_names.add(local)
            _rewrite(fn_node, name, attr, local)
            first = _first_value(name, attr, cls, stmt is not None)
            read = gast.Assign([gast.Name(local, gast.Store(), None, None)], first, None)
            where = 0 if stmt is None else fn_node.body.index(stmt) + 1
            fn_node.body.insert(where, gast.copy_location(read, stmt or fn_node.body[0]))


def _aliases_folded(fn_node, objects, nested):
    """``d = b`` in the function's own block, of an object's name ``b`` (``objects``: name ->
    the statement that builds it, bound nowhere else; or None: an argument's, never bound),
    ``d`` bound nowhere else, written through in a branch or a loop (``nested``), and read only
    as ``d.attr`` after it: each ``d.attr`` becomes ``b.attr`` (the same object) and the
    statement goes, so that a field written through ``d`` is followed with ``b``'s."""
    stores = Counter(n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, (gast.Store, gast.Del)))
    for stmt in list(fn_node.body):
        if not (isinstance(stmt, gast.Assign) and {t.id for t in stmt.targets if isinstance(
                t, gast.Name)} & nested):
            continue  # (an alias written through only in the function's own block: as before)
        uses = _alias_uses(fn_node, stmt, objects, stores)
        if uses is not None:
            for n in uses:
                n.value.id = stmt.value.id
            fn_node.body.remove(stmt)


def _an_alias(fn_node, stmt, objects, stores):
    """Whether ``stmt`` is ``d = b`` of an object's name ``b`` that holds that one object
    from there on, ``d`` bound only there and named by no lambda or nested def."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name)):
        return False
    alias, name = stmt.targets[0].id, stmt.value.id
    if name not in objects or alias == name or stores[alias] != 1 or (
            _in_local_functions(fn_node, alias)):
        return False
    built = objects[name]  # (`name` bound again, or after the alias: another object)
    return stores[name] == (built is not None) and (
        built is None or fn_node.body.index(built) < fn_node.body.index(stmt))


def _alias_uses(fn_node, stmt, objects, stores):
    """The ``d.attr`` nodes of the alias ``d = b`` that ``stmt`` is, where it can be folded
    (``_aliases_folded``), else None."""
    if not _an_alias(fn_node, stmt, objects, stores):
        return None
    alias, at = stmt.targets[0].id, fn_node.body.index(stmt)
    uses = [(n, k) for k, s in enumerate(fn_node.body) for n in walk(s) if isinstance(
        n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id == alias]
    loads = [n for s in fn_node.body for n in walk(s) if isinstance(n, gast.Name) and (
        n.id == alias) and isinstance(n.ctx, gast.Load)]
    if len(uses) != len(loads) or any(k <= at for _, k in uses):
        return None  # (read otherwise, or before it is bound: Python's NameError)
    return [n for n, _ in uses]


def _built(stmt, ctx):
    """The user's class ``stmt`` (``b = Box(...)``) builds an object of, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(
            stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    cls = ctx.namespace.resolve(stmt.value.func, ctx.local_names)
    return cls if cls is not MISSING and inspect.isclass(cls) and user_class(cls) else None


def _followed_fields(fn_node, name, cls, argument):
    """The fields of the object ``name`` holds that are written in a branch or a loop and
    only written and called, where ``name`` is bound once and read only as ``name.attr``."""
    names = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name]
    attributes = [n for n in walk(fn_node) if isinstance(n, gast.Attribute) and isinstance(
        n.value, gast.Name) and n.value.id == name]
    bindings = sum(isinstance(n.ctx, (gast.Store, gast.Param)) for n in names)
    if bindings != 1 or len(attributes) != len(names) - 1:
        return []  # (`name` bound again, or read otherwise: passed, returned, aliased)
    called = _called_or_copied(fn_node)
    written = _plain_writes(fn_node, name)
    out = [attr for attr in sorted({a for a, nested in written if nested})
           if _only_written_and_called(attr, attributes, written, called, cls, argument)]
    methods = {a.attr for a in attributes if id(a) in called}
    return out if methods <= set(out) else []


def _passed_fields(fn_node, name, cls):
    """The fields of the object ``name`` holds (bound once) written in a branch or a loop, set
    when it is built, no attribute of its class: ``chosen_passed_fields`` dispatches them."""
    if sum(isinstance(n, gast.Name) and n.id == name and isinstance(
            n.ctx, (gast.Store, gast.Del)) for n in walk(fn_node)) != 1:
        return []
    return [attr for attr in sorted({a for a, nested in _plain_writes(fn_node, name) if nested})
            if _set_when_built(cls, attr) and inspect.getattr_static(cls, attr, MISSING) is (
                MISSING)]


def _called_or_copied(fn_node):
    """The ids of the nodes that are a call's function or the value of an assignment to a
    name (``g = b.f``: a copy, which ``rebound`` dispatches)."""
    return {id(n.func) for n in walk(fn_node) if isinstance(n, gast.Call)} | {
        id(n.value) for n in walk(fn_node) if isinstance(n, gast.Assign) and len(
            n.targets) == 1 and isinstance(n.targets[0], gast.Name)}


def _first_value(name, attr, cls, built):
    """What the name following ``name.attr`` holds first: the field, read where the object
    is ``built`` (or where the function starts, for an argument's), or, for an object whose
    class does not set it, what Python raises where the field is read."""
    if built and not _set_when_built(cls, attr):
        return gast.Constant(NoField(f"'{cls.__name__}' object has no attribute '{attr}'"),
                             None)
    return gast.Attribute(gast.Name(name, gast.Load(), None, None), attr, gast.Load())


def _set_when_built(cls, attr):
    """Whether an object of ``cls`` has the field ``attr`` once built: a dataclass field, or
    ``self.attr = ...`` in its ``__init__`` (else the read where it is built would fail where
    Python reads the field only after a write)."""
    if dataclasses.is_dataclass(cls):
        return attr in {f.name for f in dataclasses.fields(cls)}
    init = getattr(cls, "__init__", None)
    if not inspect.isfunction(init):
        return False
    try:
        node = parse_function(init).node
    except (OSError, TypeError, SrcgradError):
        return False
    first = node.args.args[0].id if node.args.args else None
    return any(isinstance(t, gast.Attribute) and t.attr == attr and isinstance(
        t.value, gast.Name) and t.value.id == first for n in walk(node) if isinstance(
        n, gast.Assign) for t in n.targets)


def _only_written_and_called(attr, attributes, written, called, cls, argument):
    """Whether the field ``attr`` is used only by plain writes, as the function of calls and
    as the value of an assignment to a name (``g = b.f``), is no attribute of the class (a
    method a field hides: checked when it runs), and, for an object built here, is set when it
    is built or its class reads no field by code of its own (``__getattr__``: an object
    without the field raises Python's AttributeError where the field is read)."""
    if not argument and not _set_when_built(cls, attr) and any(
            inspect.getattr_static(cls, a, None) is not None for a in OWN_READS):
        return False
    uses = [a for a in attributes if a.attr == attr]
    reads = [a for a in uses if isinstance(a.ctx, gast.Load)]
    writes = sum(1 for a, _ in written if a == attr)
    return inspect.getattr_static(cls, attr, MISSING) is MISSING and len(uses) == len(
        reads) + writes and all(id(a) in called for a in reads)


OWN_READS = ("__getattr__", "__slots__")


def local_function_reads(ctx):
    """The names the lambdas and nested defs ``check`` took out of the body read."""
    return {n.id for fn, _ in ctx.local_functions.values() for n in walk(fn)
            if isinstance(n, gast.Name)}


def _in_local_functions(fn_node, name):
    """Whether a lambda or nested def of ``fn_node`` names ``name``."""
    functions = [f for f in walk(fn_node) if f is not fn_node and isinstance(
        f, (gast.Lambda, gast.FunctionDef))]
    return any(isinstance(n, gast.Name) and n.id == name for f in functions for n in walk(f))


def _plain_writes(fn_node, name):
    """(field, whether in a branch or a loop) of each ``name.field = v`` statement."""
    top = {id(s) for s in fn_node.body}
    return [(s.targets[0].attr, id(s) not in top) for s in walk(fn_node) if isinstance(
        s, gast.Assign) and len(s.targets) == 1 and isinstance(
        s.targets[0], gast.Attribute) and isinstance(s.targets[0].value, gast.Name) and (
        s.targets[0].value.id == name)]


def _rewrite(fn_node, name, attr, local):
    """``name.attr = v`` as ``local = v``, ``name.attr(...)`` as ``local(...)``, and ``g =
    name.attr`` as ``g = local``."""
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and _is_field(n.targets[0], name, attr):
            n.targets[0] = gast.copy_location(gast.Name(local, gast.Store(), None, None),
                                              n.targets[0])
        elif isinstance(n, gast.Assign) and _is_field(n.value, name, attr):
            n.value = gast.copy_location(gast.Name(local, gast.Load(), None, None), n.value)
        elif isinstance(n, gast.Call) and _is_field(n.func, name, attr):
            n.func = gast.copy_location(gast.Name(local, gast.Load(), None, None), n.func)


def _is_field(node, name, attr):
    return isinstance(node, gast.Attribute) and node.attr == attr and isinstance(
        node.value, gast.Name) and node.value.id == name
