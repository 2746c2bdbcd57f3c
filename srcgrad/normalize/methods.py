"""Methods, ``__call__``, properties, staticmethods and classmethods of the user's classes, as
calls of plain functions the inliner can inline.

Requires: an A-normal-form body and what is known of the classes of its locals (``Receivers``):
``self`` of a transformed method (its class, and the instance itself for a bound method such as
``grad(model.loss)``), parameters annotated with a class, objects built by calling a class, and
what is read from those (an instance attribute of a known instance, a field annotated with a
class, the elements of a list whose elements share one class). Guarantees: a call of a method
becomes a call of the function the class defines, with the receiver as first argument, and a
property read a call of its getter; where the class was inferred rather than constructed, a
run-time check (``check_class``) that the receiver is of that class comes first, so a derivative
specialized for one class never runs on an instance of another.

    h = self.layer1(x)     ->   layer1 = self.layer1
                                unused = check_class(layer1, Dense)
                                h = Dense_call(layer1, x)          (then inlined)
    s = self.scale         ->   unused = check_class(self, Model)
                                s = Model_scale(self)              (the property's getter)

``type(self)`` / ``self.__class__`` of a name whose class is known is that class (checked the
same way), so ``type(self)(...)`` builds it; an operator of such a name (``-q``, ``q + w``,
``q += w``), which the operators pass could not tell, is the method Python calls:

    made = type(self)      ->   unused = check_class(self, V)
                                made = V
    r = -q                 ->   r = q.__neg__()                    (q a V: a method call)
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import types
from collections import Counter
from typing import Any, Iterator

import gast

from .. import runtime
from ..astutil import clone, ordered_walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from ..runtime.pytrees import kind_of
from . import operators
from .held_methods import HeldMethods, hidden_method, without_own
from .object_builds import Builds
from .object_classes import (  # noqa: F401
    Classes,
    Example,
    Known,
    _join,
    attribute,
    classes_key,
    fields_of,
    holds_objects,
    is_function_value,
    of_annotation,
    of_value,
    own_class,
    owner_class,
    user_class,
)

# (function, instance) while a bound method ``instance.function`` is transformed
_BOUND = contextvars.ContextVar("bound", default=None)


@contextlib.contextmanager
def bound_to(fn: Any, instance: Any) -> Iterator[None]:
    """Transform ``fn`` (and what is derived from it meanwhile) as a method of ``instance``."""
    token = _BOUND.set((fn, instance))
    try:
        yield
    finally:
        _BOUND.reset(token)


def bound_instance(fn: Any) -> Any:
    """The instance ``fn`` is being transformed as a method of, or MISSING."""
    current = _BOUND.get()
    return current[1] if current is not None and current[0] is fn else MISSING


def bound_key(fn: Any) -> int | None:
    """What the cache key of a transform of ``fn`` adds: the id of that instance, or None."""
    current = _BOUND.get()
    return id(current[1]) if current is not None and current[0] is fn else None


class Receivers(Builds, HeldMethods):
    """The classes of locals, noted statement by statement, and the rewriting of method calls."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.known = {}
        # whether a method was inlined for a class inferred here (from an instance, an
        # annotation): such a derivative is not stored in the disk cache (emit/diskcache.py),
        # whose key sees neither the instance nor the methods found through it
        self.specialized = False
        # name -> how many times the function and the inlined bodies assign it (a Counter:
        # a body writing a caller's variable adds to its count)
        self.stores = Counter()
        self.methods = {}  # name -> (function, receiver name, Known): `h = obj.method`
        # name -> the parameter of the transformed function whose value it was read out of
        # (`lay = P.ps[0]`), for a method call on it whose class is not known here
        self.origins = {}
        # name -> the classes (two or more) of the objects it may hold, read by an index out of
        # a list or tuple whose example holds objects of several classes (a call on it is a
        # branch on the class: inline.py)
        self.classes = {}
        self.global_lists = {}  # name -> the list or tuple from outside the function it holds
        self.class_names = {}  # name -> the class it holds (`t = type(self)`), assigned once
        # name -> the name of the bound methods a list made here holds, as their objects
        # (None: an empty list); held_methods.py
        self.method_lists = {}
        self.listed = {}  # every name `method_lists` held, for held_methods.refuse_other_uses
        self.bindings = {}  # held_methods.method_bindings of the function
        self.once = set()  # held_methods.bound_once of the function
        self.held_items = {}  # name -> the bound methods it may hold (held_methods.py)
        self.held_sources = {}  # name -> those a global's list or dict of them holds
        self.rebinds = {}  # name -> (whether its first binding was a method, its objects' name)
        self.reads = {}  # name -> (base, how) of `n = base.attr` / `base[key]` / `base`
        self.bound_values = set()  # bound methods put in a dict as values (`_bound_in_dict`)
        self.kept_items = {}  # name -> the `HeldMethod`s an item by a run-time key may be
        self.versions = Counter()  # name -> how many of its bindings were noted (so far)
        self.views = {}  # name -> "values" / "items" of a dict, "pair" of its items
        self.stale = {}  # holder -> a write that leaves the methods its dict holds behind

    def seed(self, fn, node, example=MISSING):
        """What the parameters of the transformed function tell: ``self`` of a method and
        annotated parameters."""
        params = [a.id for a in node.args.posonlyargs + node.args.args]
        annotations = getattr(fn, "__annotations__", {}) or {}
        scope = getattr(fn, "__globals__", {})
        for p in params + [a.id for a in node.args.kwonlyargs]:
            self.origins[p] = p
            if p in self.ctx.examples:  # the objects a call passes: their classes, checked
                self.known[p] = of_value(self.ctx.examples[p])
            elif p in annotations:
                found = of_annotation(annotations[p], scope)
                if found is not None:
                    self.known[p] = found
        if not params:
            return
        if example is not MISSING:
            self.known[params[0]] = of_value(example)
            return
        cls = owner_class(fn)
        if cls is not None and params[0] not in self.known:
            self.known[params[0]] = Known(cls)

    # --- control flow -------------------------------------------------------------------------
    def snapshot(self):
        """What is known now (to join with what a branch or a loop leaves)."""
        return dict(self.known), dict(self.classes)

    def restore(self, snapshot):
        self.known, self.classes = dict(snapshot[0]), dict(snapshot[1])

    def join(self, other):
        """Keep what is known both now and in ``other``: after a branch, or a loop that may
        run no trip. A name given objects of different user classes on the two paths (or of
        several, ``classes``) may hold any of them: a call on it is a branch on the class."""
        known, classes = self._single_paths(*other)
        both = {n: (self.classes.get(n) or own_class(self.known.get(n)),
                    classes.get(n) or own_class(known.get(n)))
                for n in self.known.keys() | self.classes.keys()}
        self.known = {n: k for n, k in ((n, _join(k, known.get(n))) for n, k in
                                        self.known.items()) if k is not None}
        self.classes = {n: list(dict.fromkeys(mine + theirs)) for n, (mine, theirs) in
                        both.items() if n not in self.known and mine and theirs}
        self.classes = {n: c for n, c in self.classes.items() if len(c) > 1}

    def _single_paths(self, known, classes):
        """``other``'s knowledge, and this one, with what one of them knows of a name the
        function assigns once that the other does not hold at all: on that path it has no
        value (``layer_2 = self.act`` on one path of a branch ``rebound.py`` made, read only
        where that path ran)."""
        known, classes = dict(known), dict(classes)
        for mine, theirs in ((self.known, known), (self.classes, classes)):
            for n in set(mine) - set(known) - set(classes):
                if self.stores.get(n, 0) == 1:
                    theirs[n] = mine[n]
        for n, k in known.items():
            if n not in self.known and n not in self.classes and self.stores.get(n, 0) == 1:
                self.known[n] = k
        for n, c in classes.items():
            if n not in self.known and n not in self.classes and self.stores.get(n, 0) == 1:
                self.classes[n] = c
        return known, classes

    def loosen(self, names):
        """At the head of a loop that assigns ``names``: a later trip may see what the body
        gave them, so their class is checked where a method is called, not assumed."""
        for n in names & self.known.keys():
            k = self.known[n]
            self.known[n] = Known(k.cls, None, False, k.element, k.fields)

    def widen(self, loop, probe):
        """At the head of ``loop``: a name it gives an object of another user class than the
        one it holds (as known here) may hold either on a later trip, so a call on it is a
        branch on the class (``classes``; a class found only when it runs fails its check).
        The classes a helper's result may have (``lay = make_layer(i)``) are what ``probe``
        finds inlining the call on a copy."""
        for node in ordered_walk(gast.Module(loop.body, [])):
            if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)):
                continue
            name, found = node.targets[0].id, self._of(node.value)
            held = self.classes_of(name)
            if not held:
                continue
            if found is None and isinstance(node.value, gast.Call):
                given = probe(node)
            else:
                given = own_class(found)
            new = [c for c in given if c not in held]
            if new:
                self.classes[name] = held + new
                self.known.pop(name, None)

    def classes_of(self, name):
        """The user classes of the objects ``name`` may hold, as known here (maybe [])."""
        return self.classes.get(name) or own_class(self.known.get(name))

    def saved(self):
        """All that is known now (``restored`` forgets what was learned since)."""
        return {k: v.copy() for k, v in vars(self).items() if isinstance(v, dict)}

    def restored(self, saved):
        vars(self).update({k: v.copy() for k, v in saved.items()})

    # --- noting what assignments tell ------------------------------------------------------
    def note_all(self, stmts):
        for s in stmts:
            self.note(s)

    def note(self, stmt):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            return
        target = stmt.targets[0].id
        self.versions[target] += 1
        if getattr(stmt, "method_of", None) is None:
            self.methods.pop(target, None)
        self._note_method_list(stmt, target)
        self._note_held_item(stmt, target)
        self._note_write(stmt, target)
        self._note_read(stmt, target)
        origin = self._origin(stmt.value)
        if origin is None:
            self.origins.pop(target, None)
        else:
            self.origins[target] = origin
        held_class = self.ctx.namespace.resolve(stmt.value, self.ctx.local_names) if isinstance(
            stmt.value, gast.Name) else None
        if user_class(held_class) and self.stores.get(target, 0) == 1:
            self.class_names[target] = held_class
        else:
            self.class_names.pop(target, None)
        found = self._of(stmt.value)
        several = list(found.classes) if found is not None and found.classes else None
        if several:  # `lay = held["a"]` of a field that may hold objects of several classes
            found = None
        annotation = getattr(stmt, "annotation", None)
        if found is None and annotation is not None:
            # `lay: Dense = P.ps[0]`: the class the annotation names, checked when it runs
            cls = self.ctx.namespace.resolve(annotation, self.ctx.local_names)
            found = Known(cls) if user_class(cls) else None
        if found is None:
            self.known.pop(target, None)
        else:
            self.known[target] = found
        self._note_list(target, stmt.value)
        classes = several or (self._classes_of_items(stmt.value) if found is None else None)
        if classes is None:
            self.classes.pop(target, None)
        else:
            self.classes[target] = classes

    def _note_list(self, target, value):
        """What ``target = value`` tells of the list or tuple it holds (``global_lists``)."""
        held = self.ctx.namespace.resolve(value, self.ctx.local_names) if isinstance(
            value, (gast.Name, gast.Attribute)) else None
        if isinstance(value, gast.Name) and value.id in self.global_lists:
            held = self.global_lists[value.id]  # passed on to a helper's parameter
        if isinstance(held, (list, tuple)):  # `seq = NET.layers`
            self.global_lists[target] = held
        elif isinstance(value, (gast.List, gast.Tuple)):  # `[Dense(...), Act(...)]`
            self.global_lists[target] = self._classes_written(value)
        elif self._appended(target, value) is not None:  # `layers.append(Act(...))`
            self.global_lists[target] = self._appended(target, value)
        else:
            self.global_lists.pop(target, None)

    def _classes_written(self, literal):
        """The classes of the objects a list or tuple literal holds (``Classes``), when each
        is known (none for ``[]``), or None."""
        classes = []
        for e in literal.elts:
            if isinstance(e, gast.Constant) and e.value is None:
                continue  # (an item written later: `[None, None]`, then `objs[i] = Act(...)`)
            known = self._of(e)
            several = self._classes_of_items(e) if isinstance(e, gast.Name) else None
            if known is None and several is None:
                return None
            classes.extend(several or [known.cls])
        return Classes(tuple(dict.fromkeys(classes)))

    def _appended(self, target, value):
        """``Classes`` of ``target = list_append(target, obj)`` of a list whose classes are
        known and an object whose class is, or None."""
        if not (isinstance(value, gast.Call) and len(value.args) in (2, 3) and isinstance(
                value.args[0], gast.Name) and value.args[0].id == target):
            return None
        if self.ctx.namespace.resolve(value.func, self.ctx.local_names) is not (
                runtime.list_append, runtime.setitem)[len(value.args) - 2]:
            return None  # (`layers[i] = Act(...)`: setitem(layers, i, obj), of any index too)
        held, known = self.global_lists.get(target), self._of(value.args[-1])
        added = self._classes_of_items(value.args[-1]) or [getattr(known, "cls", None)]
        if not isinstance(held, Classes) or not all(user_class(c) for c in added):
            return None
        return Classes(tuple(dict.fromkeys(held.classes + tuple(added))))

    def _classes_of_items(self, value):
        """The classes, in the order they first appear, of the objects ``xs[i]`` may be, for a
        list or tuple ``xs`` known by its example (a global's, or the value a call passes) that
        holds objects of two or more of the user's classes, or for another name of an item
        or of a variable given objects of several classes (``join``); None otherwise."""
        if isinstance(value, gast.Name):
            return self.classes.get(value.id)
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)):
            return None
        base = self.known.get(value.value.id)
        if base is not None and base.cls is dict and base.example is None:
            return self._classes_by_key(value)  # (a dict built here)
        items = self.global_lists.get(value.value.id) if base is None else base.example
        if isinstance(base, Known) and base.example is None:
            items = self.global_lists.get(value.value.id)
        if isinstance(items, Classes):
            classes = list(items.classes)
            if len(classes) == 1 and user_class(classes[0]):  # a list built by `append`
                return classes
        elif not isinstance(items, (list, tuple)) or kind_of(items) is not None:
            return None
        else:
            classes = list(dict.fromkeys(type(v) for v in items))
        return classes if len(classes) > 1 and all(user_class(c) for c in classes) else None

    def _of(self, value):
        if isinstance(value, gast.Name):
            return self._of_name(value.id)
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            base = self.known.get(value.value.id)
            return None if base is None else attribute(base, value.attr)
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            return self._of_item(value)
        if isinstance(value, (gast.List, gast.Tuple)) and value.elts:
            return self._of_literal(value)
        if isinstance(value, gast.Dict):
            return self._of_dict(value)
        if isinstance(value, gast.Call):
            return self._of_call(value)
        return None

    def _origin(self, value):
        """The parameter ``value`` reads an object out of (``P``, ``P.ps``, ``xs[0]`` of such a
        name, what a loop over it gives), or None."""
        if isinstance(value, (gast.Attribute, gast.Subscript)):
            value = value.value
        elif isinstance(value, gast.Call) and len(value.args) == 1 and any(
                self.ctx.namespace.resolve(value.func, self.ctx.local_names) is h
                for h in (runtime.iteration_sequence, runtime.fresh_copy, runtime.dict_values,
                          runtime.dict_items, runtime.shallow_copy, runtime.deep_copy)):
            value = value.args[0]  # (a copy of an object: one of its class, `_of_call`)
        elif isinstance(value, gast.Call) and value.args and any(
                self.ctx.namespace.resolve(value.func, self.ctx.local_names) is h
                for h in (runtime.field_updated, runtime.set_field)):
            value = value.args[0]  # `P.b += v` (P = field_updated(P, "b", ...)): still P's object
        return self.origins.get(value.id) if isinstance(value, gast.Name) else None

    def _unknown_receiver(self, func):
        """A method called on a name whose class is not known here (or the name called): when
        the name was read out of a parameter, mark the call, so that its refusal
        (``analysis/ops.py``) asks for a derivative specialized per classes of the objects the
        call passes (``ClassesNeeded``) instead. None."""
        name = func.id if isinstance(func, gast.Name) else func.value.id
        param = self.origins.get(name)
        if param is not None and param not in self.ctx.examples:
            func.classes_of = param
        elif param is not None:
            func.passed_in = param  # (for the message)

    def _of_name(self, name):
        if name in self.known:
            return self.known[name]
        if name in self.ctx.local_names:
            return None
        obj = self.ctx.namespace.lookup(name)  # a global or closure object
        return of_value(obj) if user_class(type(obj)) else None

    def _of_item(self, value):
        """``xs[i]`` of a list whose elements share a class, ``d["k"]`` of a dict built here."""
        base = self.known.get(value.value.id)
        if base is None:
            return None
        key = value.slice
        keyed = base.field_of(key.value) if isinstance(key, gast.Constant) else None
        if keyed is None and isinstance(key, gast.Constant) and isinstance(
                base.example, (list, tuple, dict)):
            try:  # `P.ps[0]`, `P["layer"]` of a value a call passes
                keyed = of_value(base.example[key.value])
            except (IndexError, KeyError, TypeError):
                keyed = None
        return keyed or base.element

    def _of_call(self, value):
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names)
        written = self._written_field(fn, value)
        if written is not None:
            return written
        if value.args and any(fn is h for h in (runtime.deep_copy, runtime.shallow_copy)):
            return without_own(self._of(value.args[0]))  # (of its class, not its own methods)
        if value.args and any(fn is h for h in (
                runtime.iteration_sequence, runtime.set_field, runtime.fresh_copy,
                runtime.field_updated)):
            return self._of(value.args[0])  # the same object, or one of its class
        if user_class(fn) and fn is not type:
            return Known(fn, None, True)
        return None

    def _written_field(self, fn, call):
        """``set_field(obj, "name", v)`` / ``replace_field(...)``: obj's class, with what is
        known of v as the field's (an object built here keeps what its fields hold)."""
        if not (any(fn is h for h in (runtime.set_field, runtime.replace_field,
                                      runtime.field_updated, runtime.setitem))
                and len(call.args) == 3 and isinstance(call.args[1], gast.Constant)):
            return None
        base = self._of(call.args[0])
        if base is None or base.classes:
            return None
        value = self._anchored(self._of_value(call.args[2]), call.args[0], fn)
        known = base.with_field(call.args[1].value, value)
        if fn is runtime.setitem and base.element is not None and (  # `layers[0] = Act()`:
                getattr(value, "cls", None) is not base.element.cls):  # (`_classes_of_items`)
            known = Known(known.cls, known.example, known.exact, None, known.fields)
        return known

    def _of_value(self, value):
        """What is known of a value put into a field or a dict: ``_of``, or for a name that may
        hold objects of several classes (``classes``), those classes."""
        found = self._of(value)
        if found is None and isinstance(value, gast.Name) and value.id in self.classes:
            return Known(object, classes=tuple(self.classes[value.id]))
        return found

    def _of_dict(self, value):
        """``{"layer": Dense(...)}``: what is known of the values at constant keys."""
        known = Known(dict, None, True)
        for key, v in zip(value.keys, value.values):
            if not isinstance(key, gast.Constant):
                return None
            known = known.with_field(key.value, self._of_value(v))
        return known

    def _of_literal(self, value):
        """``[a, b]`` of objects of one class: a list whose elements have that class (checked at
        run time where an element is read, as the list may change before)."""
        found = [self._of(e) for e in value.elts]
        if any(k is None for k in found) or len({k.cls for k in found}) != 1:
            return None
        container = list if isinstance(value, gast.List) else tuple
        return Known(container, None, False, Known(found[0].cls))

    # --- rewriting ---------------------------------------------------------------------------
    def rewrite(self, stmt):
        """``stmt`` with a method call or property read made a call of a plain function, and
        the statements to put before it; None when it is neither."""
        value = stmt.value
        self._stmt = stmt
        read = self._class_read(stmt, value)
        if read is not None:
            return read
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return self._operator(stmt, value)
        listed = self._listed(stmt) or self._listed_item(stmt)
        if listed is not None:
            return listed if isinstance(listed, tuple) else ([], listed)
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            return self._rebound_method(stmt, value) or self._property(stmt, value) or (
                self._method_value(stmt, value)) or self._method_of_classes(stmt, value)
        if isinstance(value, gast.Name) and value.id in self.methods:
            return self._method_alias(stmt, value.id)
        if isinstance(value, gast.Dict):
            return self._bound_in_dict(stmt, value)
        if not isinstance(value, gast.Call):
            return None
        return self._rewrite_call(stmt, value)

    def _rewrite_call(self, stmt, value):
        func = value.func
        if isinstance(func, gast.Name) and func.id in self.class_names:  # `t(...)`, t a class
            func = value.func = gast.copy_location(self._global(self.class_names[func.id]), func)
        checked = self._class_called(value)
        if checked is not None:
            built = self._replaced(stmt, value) or self._constructor(stmt, value)
            return (checked + built[0], built[1]) if built is not None else (checked, stmt)
        if isinstance(func, gast.Name) and func.id in self.methods:
            fn, receiver, known = self.methods[func.id]
            if isinstance(fn, str):  # the method of an item of a list of them
                return self._listed_call(stmt, value, fn, receiver)
            return [], self._call(stmt, fn, [gast.Name(receiver, gast.Load(), None, None)]
                                  + value.args)
        if isinstance(func, gast.Name) and func.id in self.known:
            known = self.known[func.id]
            return self._held_method(stmt, value, func, known) or self._called_object(
                stmt, value, func, [], known)
        if isinstance(func, gast.Name):
            self._unknown_receiver(func)  # (a function it holds is resolved by inline.py)
        built = self._replaced(stmt, value) or self._constructor(stmt, value)
        if built is not None:
            return built
        static = self._static(func)
        if static is not None:
            return static
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
            return None
        return self._method_call(stmt, value, func)

    def _class_read(self, stmt, value):
        """``t = type(obj)`` / ``t = obj.__class__`` of a name whose class is known (``self`` of
        an inlined method): the class itself, read after the check that obj is of it, so that
        ``t(...)`` builds an object of that class (``return type(self)(-self.w)``); else None."""
        if isinstance(value, gast.Attribute) and value.attr == "__class__":
            obj = value.value
        elif isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords and (
                self.ctx.namespace.resolve(value.func, self.ctx.local_names) is type):
            obj = value.args[0]
        else:
            return None
        known = self._of(obj) if isinstance(obj, gast.Name) else None
        if known is None or not user_class(known.cls):
            return None
        read = gast.Assign(stmt.targets, self._global(known.cls), None)
        return self._check(obj, known), gast.copy_location(read, stmt)

    def _operator(self, stmt, value):
        """``r = -q`` / ``r = q + w`` of an object whose class is known here but was not where
        the operators pass ran (``q = self.p``): the method Python calls (``q.__neg__()``),
        inlined. One of an object of a class of the user's that defines no method for it, or
        one the operators pass left here (``refused_operator``) that is not made a call, is
        refused, as that pass refuses it; any other, None."""
        operands = [value.operand] if isinstance(value, gast.UnaryOp) else [value.left,
                                                                             value.right]
        known = [self._of(n) if isinstance(n, gast.Name) else None for n in operands]
        classes = [k.cls if k is not None else None for k in known]
        if isinstance(value, gast.UnaryOp):
            _, method = operators.unary_method(value.op, classes[0])
            call = method and operators.method_call(value.operand, method)
        else:
            owner, method = operators.binary_method(value.op, *classes)
            this, that = operands if owner is classes[0] else operands[::-1]
            call = method and operators.method_call(this, method, that)
            if not call and (any(user_class(c) for c in classes) or getattr(
                    value, "refused_operator", False)):
                where = value if getattr(value, "lineno", None) is not None else stmt
                raise self.ctx.location.error(UnsupportedSyntaxError, where,
                                              operators.NO_METHOD)
        if not call:
            return None
        new = gast.copy_location(gast.Assign(stmt.targets, gast.copy_location(call, value),
                                             None), stmt)
        return self.rewrite(new) or ([], new)

    def augmented(self, stmt):
        """``q += w`` of a name holding an object whose class is known here: ``q =
        q.__iadd__(w)`` (``__add__`` where the class has no ``__iadd__``), else None."""
        target = stmt.target
        known = self._of(target) if isinstance(target, gast.Name) else None
        name = operators.DUNDERS.get(type(stmt.op))
        if known is None or name is None or not user_class(known.cls):
            return None
        method = next((m for m in (f"__i{name}__", f"__{name}__")
                       if operators.defines(known.cls, m)), None)
        if method is None:
            return None
        call = operators.method_call(gast.Name(target.id, gast.Load(), None, None), method,
                                     stmt.value)
        return gast.copy_location(gast.Assign([gast.Name(target.id, gast.Store(), None, None)],
                                              gast.copy_location(call, stmt), None), stmt)

    def _class_called(self, call):
        """``self.__class__(...)`` of a name whose class is known: the class called (``call``
        changed), and the check that the name holds an object of it; else None."""
        func = call.func
        if not (isinstance(func, gast.Attribute) and func.attr == "__class__" and isinstance(
                func.value, gast.Name)):
            return None
        known = self._of(func.value)
        if known is None or not user_class(known.cls):
            return None
        call.func = gast.copy_location(self._global(known.cls), func)
        return self._check(func.value, known)

    def _method_call(self, stmt, value, func):
        """``obj.name(...)``: a method, staticmethod or classmethod of obj's class, or an
        object held in the field ``name``, called."""
        known = self.known.get(func.value.id)
        if known is None:
            return self._unknown_receiver(func)
        static = MISSING
        if user_class(known.cls):
            static = inspect.getattr_static(known.cls, func.attr, MISSING)
        receiver = func.value
        if isinstance(static, (staticmethod, classmethod)):  # (a field of its name hides it)
            hidden = hidden_method(self.ctx, self.ctx.local_names, receiver.id, known.cls,
                                   func.attr, stmt)
            cls = gast.Name(self.ctx.global_name(known.cls, known.cls.__name__), gast.Load(),
                            None, None)
            return hidden, self._call(stmt, static.__func__, value.args if isinstance(
                static, staticmethod) else [cls] + value.args)
        if isinstance(static, types.FunctionType):
            checks = self._check(receiver, known) + hidden_method(  # (a field hiding it)
                self.ctx, self.ctx.local_names, receiver.id, known.cls, func.attr, stmt)
            return checks, self._call(stmt, static, [receiver] + value.args)
        if static is MISSING and is_function_value(
                (fields_of(known.example) or {}).get(func.attr)):
            # `cfg.act(x)`: the function the field holds, inlined by inline.py in a derivative
            # specialized per the functions the objects passed hold (`classes_of`)
            return self._unknown_receiver(func)
        if not isinstance(static, (types.FunctionType, property)) and attribute(
                known, func.attr) is not None:
            # `self.layer1(x)`, `P.act(x)`: an object held in a field (a namedtuple's too)
            return self._held(stmt, func)
        return None if user_class(known.cls) else self._unknown_receiver(func)

    def _held(self, stmt, func):
        """``obj.attr(...)`` of an object held in an attribute: read, then called."""
        held = self.ctx.namer.fresh(func.attr)
        self.ctx.local_names.add(held)
        read = gast.Assign([gast.Name(held, gast.Store(), None, None)],
                           gast.Attribute(func.value, func.attr, gast.Load()), None)
        read = gast.copy_location(read, stmt)
        self.note(read)
        holder = gast.Name(held, gast.Load(), None, None)
        if held not in self.known:  # objects of several classes: a branch on it (inline.py)
            call = gast.Call(holder, stmt.value.args, stmt.value.keywords)
            return [read], gast.copy_location(gast.Assign(stmt.targets, call, None), stmt)
        return self._called_object(stmt, stmt.value, holder, [read], self.known[held])

    def _method_alias(self, stmt, held):
        """``f = h`` of a bound method ``h`` held by name (a helper returned it: ``f =
        self.pick()``), ``f`` assigned once: ``f`` is the same method on the same receiver."""
        target = stmt.targets[0]
        if not isinstance(target, gast.Name) or self.stores.get(target.id, 0) != 1:
            return None
        static, receiver, known = self.methods[held]
        own = self.ctx.namer.fresh(naming.SELF.format(target.id))
        self.ctx.local_names.add(own)
        kept = gast.copy_location(gast.Assign(
            [gast.Name(own, gast.Store(), None, None)],
            gast.Name(receiver, gast.Load(), None, None), None), stmt)
        kept.method_of = target.id
        self.methods[target.id] = (static, own, known)
        self.known[own] = known
        return [], kept

    def _static(self, func):
        """A call of a global or closure object of the user's classes (``model(x)``) or of a
        method of one (``model.forward(x)``), read where the user's code reads it."""
        if any(isinstance(n, gast.Name) and n.id in self.ctx.local_names
               for n in ordered_walk(func)):
            return None
        obj = self.ctx.namespace.resolve(func, self.ctx.local_names)
        if obj is MISSING or isinstance(obj, type):
            return None
        if user_class(type(obj)) and not inspect.isroutine(obj):
            return self._called_object(self._stmt, self._stmt.value, func, [], of_value(obj))
        if inspect.ismethod(obj) and user_class(type(obj.__self__)) and isinstance(
                obj.__func__, types.FunctionType) and isinstance(func, gast.Attribute):
            known = of_value(obj.__self__)
            return self._check(func.value, known), self._call(
                self._stmt, obj.__func__, [func.value] + self._stmt.value.args)
        return None

    def _called_object(self, stmt, call, holder, before, known):
        method = inspect.getattr_static(known.cls, "__call__", MISSING)
        if not (user_class(known.cls) and isinstance(method, types.FunctionType)):
            return None
        checks = self._check(holder, known)
        return before + checks, self._call(stmt, method, [holder] + call.args)

    def _property(self, stmt, value):
        known = self.known.get(value.value.id)
        if known is None or not user_class(known.cls):
            return None
        static = inspect.getattr_static(known.cls, value.attr, MISSING)
        if not isinstance(static, property) or static.fget is None:
            return None
        return self._check(value.value, known), self._call(stmt, static.fget, [value.value])

    def _call(self, stmt, fn, args):
        self.specialized = True
        name = self.ctx.global_name(fn, naming.METHOD.format(fn.__qualname__.replace(".", "_")))
        keywords = stmt.value.keywords if isinstance(stmt.value, gast.Call) else []
        call = gast.Call(gast.Name(name, gast.Load(), None, None), list(args), list(keywords))
        new = gast.Assign(stmt.targets, gast.copy_location(call, stmt.value), None)
        return gast.copy_location(new, stmt)

    def _check(self, receiver, known):
        """``check_class(receiver, cls)`` first, unless the object was built here."""
        if known.exact:
            return []
        unused = self.ctx.namer.fresh(naming.UNUSED)
        self.ctx.local_names.add(unused)
        helper = self.ctx.global_name(runtime.check_class, "check_class")
        cls = self.ctx.global_name(known.cls, known.cls.__name__)
        call = gast.Call(gast.Name(helper, gast.Load(), None, None),
                         [clone(receiver), gast.Name(cls, gast.Load(), None, None)], [])
        stmt = gast.Assign([gast.Name(unused, gast.Store(), None, None)], call, None)
        # located at the statement being rewritten (a receiver ANF made has no position)
        return [gast.copy_location(stmt, self._stmt)]
