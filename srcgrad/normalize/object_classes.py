"""Which classes a structure argument holds: what a derivative specialized per classes of the
objects a call passes depends on (``specialize.py``), for ``normalize/methods.py``; and
``Known``, what ``methods.Receivers`` knows of the class of a local.

Requires: values (a call's arguments), no tree. Guarantees: ``classes_key`` is hashable and
equal for two values whose objects (to ``MAX_NESTING`` levels) have the same classes, so the
same methods are inlined for both; ``holds_objects`` says whether there is any to inline.

    classes_key([Dense(...), Dense(...)])  ->  (list, ("*", (Dense, (("w", ndarray),))))
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field


def user_class(cls):
    """Whether ``cls`` is a class whose methods srcgrad inlines (not NumPy's, not a builtin, not
    the standard library's: ``warnings.catch_warnings()`` is called, never taken apart)."""
    if not isinstance(cls, type):
        return False
    module = (getattr(cls, "__module__", "") or "").split(".")[0]
    return module not in ("numpy", "scipy", "srcgrad") and module not in sys.stdlib_module_names


MAX_NESTING = 12  # levels of a structure argument whose classes a specialization reads


def classes_key(value, depth=0):
    """The classes of the objects a structure argument holds, as a hashable value: what a
    derivative specialized to an example of it (``Example``) depends on. Two values with the
    same key give the same methods inlined; the run-time class checks stay as a guard."""
    cls = type(value)
    if depth > MAX_NESTING:
        return cls
    if isinstance(value, (list, tuple)):
        items = tuple(classes_key(v, depth + 1) for v in value)
        if items and all(i == items[0] for i in items[1:]):
            items = ("*", items[0])  # any length: an index reads the same classes
        return cls, items
    if isinstance(value, dict):
        return cls, tuple((k, classes_key(v, depth + 1)) for k, v in value.items())
    held = getattr(value, "__dict__", None)
    if (user_class(cls) or cls is types.SimpleNamespace) and isinstance(held, dict):
        return cls, tuple((k, classes_key(v, depth + 1)) for k, v in held.items())
    return cls


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
