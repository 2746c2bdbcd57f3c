"""Which classes a structure argument holds: what a derivative specialized per classes of the
objects a call passes depends on (``specialize.py``), for ``normalize/methods.py``; and
``Known``, what ``methods.Receivers`` knows of the class of a local (``of_value``,
``of_annotation``, ``attribute``: what an example, an annotation, a field tell), and the
functions held in objects' fields (``held_functions``), which the key names by identity.

Requires: values (a call's arguments), no tree. Guarantees: ``classes_key`` is hashable and
equal for two values whose objects (to ``MAX_NESTING`` levels) have the same classes, so the
same methods are inlined for both; ``holds_objects`` says whether there is any to inline.

    classes_key([Dense(...), Dense(...)])  ->  (list, ("*", (Dense, (("w", ndarray),))))
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from dataclasses import dataclass, field

from ..frontend.resolve import MISSING
from ..runtime.pytrees import kind_of


def user_class(cls):
    """Whether ``cls`` is a class whose methods srcgrad inlines (not NumPy's, not a builtin, not
    the standard library's: ``warnings.catch_warnings()`` is called, never taken apart)."""
    if not isinstance(cls, type):
        return False
    module = (getattr(cls, "__module__", "") or "").split(".")[0]
    return module not in ("numpy", "scipy", "srcgrad") and module not in sys.stdlib_module_names


MAX_NESTING = 12  # levels of a structure argument whose classes a specialization reads


def is_function_value(value):
    """Whether ``value`` is a function an object's field may hold and the body call through it
    (``cfg.act = np.tanh``: a function, builtin, ufunc, partial, bound method, ``lru_cache``d
    one): what a derivative specialized per objects passed holds as a constant, keyed by its
    identity. Not a class, an array, or an object of the user's classes (whose ``__call__`` is
    inlined by class)."""
    return (callable(value) and not isinstance(value, type) and not hasattr(value, "__array__")
            and not user_class(type(value)))


def fields_of(value):
    """The fields of an object a function may be held in (its ``__dict__``, a namedtuple's),
    as a dict, or None."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return dict(zip(type(value)._fields, value))
    held = getattr(value, "__dict__", None)
    if (user_class(type(value)) or type(value) is types.SimpleNamespace) and isinstance(
            held, dict):
        return held
    return None


def held_functions(value, depth=0):
    """The functions (``is_function_value``) held in the fields of objects ``value`` holds:
    what ``classes_key`` names by identity, kept alive with a specialization so that no other
    function gets the same id meanwhile."""
    if depth > MAX_NESTING:
        return []
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple)) and fields_of(value) is None:
        items = list(value)
    else:
        held = fields_of(value)
        if held is None:
            return []
        return [v for v in held.values() if is_function_value(v)] + [
            f for v in held.values() for f in held_functions(v, depth + 1)]
    return [f for v in items for f in held_functions(v, depth + 1)]


def classes_key(value, depth=0):
    """The classes of the objects a structure argument holds, as a hashable value: what a
    derivative specialized to an example of it (``Example``) depends on. Two values with the
    same key give the same methods inlined; the run-time class checks stay as a guard."""
    cls = type(value)
    if depth > MAX_NESTING:
        return cls
    if isinstance(value, (list, tuple)):
        items = tuple(_field_key(v, depth + 1) for v in value)
        if items and all(i == items[0] for i in items[1:]):
            items = ("*", items[0])  # any length: an index reads the same classes
        return cls, items
    if isinstance(value, dict):
        return cls, tuple((k, _field_key(v, depth + 1)) for k, v in value.items())
    held = getattr(value, "__dict__", None)
    if (user_class(cls) or cls is types.SimpleNamespace) and isinstance(held, dict):
        return cls, tuple((k, _field_key(v, depth + 1)) for k, v in held.items())
    return cls


def _field_key(value, depth):
    """A field's part of ``classes_key``: a function held there by its identity (the
    derivative holds it as a constant: another function gives another derivative)."""
    if is_function_value(value):
        return type(value), id(value)
    return classes_key(value, depth)


def holds_objects(value, depth=0):
    """Whether ``value`` is, or holds (in lists, tuples, dicts, fields), an object of the
    user's classes whose methods a specialization could inline."""
    if depth > MAX_NESTING:
        return False
    if user_class(type(value)) and not isinstance(value, type):
        return True
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif type(value) is types.SimpleNamespace:
        items = vars(value).values()
        if any(is_function_value(v) for v in items):
            return True  # a function in a field: specialized per function held (`ns.act(x)`)
    else:
        return False
    return any(holds_objects(v, depth + 1) for v in items)


@dataclass(frozen=True)
class Example:
    """The value a call passes for a parameter holding objects of the user's classes, given to
    a derivative specialized per classes of those objects (``specialize.Specializing``):
    methods called on the objects it holds are inlined for the classes it holds, each after a
    run-time class check."""

    value: object = field(compare=False)


@dataclass(frozen=True)
class Classes:
    """The classes of the objects a list written in the function holds (a later change of
    the list rebinds its name: ``list_append``, ``setitem``)."""

    classes: tuple


def own_class(known):
    """``[cls]`` of a name known (``methods.Known``) to hold an object of the user's class
    ``cls`` (those of ``known.classes`` for a field that may hold several), else ``[]``."""
    if known is not None and known.classes:
        return list(known.classes)
    return [known.cls] if known is not None and user_class(known.cls) else []


@dataclass(frozen=True)
class Known:
    """What is known of a local: its class, an instance to read attributes from (the bound
    instance of a transformed method, or None), and whether the class is certain (the object
    was built here) or must be checked at run time."""

    cls: type
    example: object = field(default=None, compare=False)
    exact: bool = False
    element: object = None  # Known of the elements of a list or tuple, when they share a class
    # (name, Known) of the fields (a dict's constant keys) of an object built here, as written
    fields: tuple = field(default=(), compare=False)
    # the user classes (two or more) of a field given a variable that may hold objects of
    # several (`d = {"a": layer}`, `box.lay = layer`); ``cls`` is then ``object``
    classes: tuple = ()
    # a bound method of the user's classes held in a field or a dict's key of an object built
    # here (``held_methods.HeldMethod``: the function, the fields that reach its object)
    method: object = None

    def with_field(self, name, known):
        """This, with field ``name`` known as ``known`` (None: unknown). A field's class is
        checked where its method is called (``exact=False``): another name for the object
        may have been given another one."""
        kept = tuple((n, k) for n, k in self.fields if n != name)
        if known is not None:
            kept += ((name, Known(known.cls, known.example, False, known.element,
                                  known.fields, known.classes, known.method)),)
        return Known(self.cls, self.example, self.exact, self.element, kept)

    def field_of(self, name):
        """What is known of field (or constant key) ``name``, or None."""
        return next((k for n, k in self.fields if n == name), None)


def of_value(value, exact=False):
    """What an example value tells of a local holding it. The elements of a list or tuple are
    known by the first one's attributes only when every element holds objects of the same
    classes (``classes_key``), else by their class alone."""
    if isinstance(value, (list, tuple)) and not kind_of(value) and value:
        classes = {type(v) for v in value}
        element = None
        if len(classes) == 1:
            first = classes_key(value[0])
            same = all(classes_key(v) == first for v in value[1:])
            # (not a bound method's: which one an index reads is known only when it runs)
            element = of_value(value[0]) if same and not inspect.ismethod(value[0]) else Known(
                type(value[0]))
        return Known(type(value), value, exact, element)
    return Known(type(value), value, exact)


def of_annotation(annotation, scope):
    """What an annotation (a class, ``list[Dense]``, or their text) tells, or None."""
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, dict(scope))  # noqa: S307 - the user's own annotation
        except Exception:  # an annotation naming something not importable here: no knowledge
            return None
    origin = typing.get_origin(annotation)
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        element = of_annotation(args[0], scope) if len(set(args)) == 1 else None
        return Known(origin, None, False, element)
    if user_class(annotation):
        return Known(annotation)
    return None


def _module_scope(cls):
    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    return vars(module) if module is not None else {}


def attribute(known, attr):
    """What is known of ``obj.attr`` from what is known of ``obj``."""
    written = known.field_of(attr)
    if written is not None:
        return written
    if known.example is not None:
        example = known.example
        if isinstance(example, tuple) and attr in getattr(type(example), "_fields", ()):
            return of_value(getattr(example, attr))  # a namedtuple's field
        try:
            value = inspect.getattr_static(example, attr)
        except AttributeError:
            return None
        if isinstance(value, (property, types.FunctionType, staticmethod, classmethod)):
            return None
        return of_value(value)
    for klass in known.cls.__mro__:
        annotation = vars(klass).get("__annotations__", {}).get(attr)
        if annotation is not None:
            return of_annotation(annotation, _module_scope(klass))
    return None


def _join(a, b):
    """What is known of a name that holds what ``a`` or ``b`` tell, or None."""
    if b is None or a.cls is not b.cls:
        return None
    if a is b or a.classes or b.classes or a.method or b.method:
        return a if a == b else None
    fields = tuple((n, k) for n, k in a.fields if _join(k, b.field_of(n)) == k)
    return Known(a.cls, a.example if a.example is b.example else None, a.exact and b.exact,
                 a.element if a.element == b.element else None, fields)


def owner_class(fn):
    """The class a function is defined in, found by its qualified name, or None."""
    parts = (getattr(fn, "__qualname__", "") or "").split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj = getattr(fn, "__globals__", {}).get(parts[0], MISSING)
    for part in parts[1:-1]:
        obj = getattr(obj, part, MISSING)
    if not user_class(obj) or inspect.getattr_static(obj, parts[-1], None) is not fn:
        return None
    return obj
