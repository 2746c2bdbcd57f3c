"""Objects as structures of arrays (pytrees): dataclasses, namedtuples, ``SimpleNamespace``,
instances of the user's classes, and classes registered with ``register_pytree``.

An attribute read ``p.W`` of such an object is differentiated like an element read ``d["W"]``:
its cotangent is a ``DictCotangents`` keyed by attribute name (``attr_grad``), its tangent the
same attribute of the object's tangent, which has the object's structure (``attr_of``). At the
boundary, ``rebuild`` gives a gradient the structure of its argument: a dataclass gradient is an
instance of the same dataclass, with zeros where nothing flowed into a float or array field and
``None`` for fields that cannot carry a gradient (ints, strings, ``None``).

Only attributes that hold the object's own data have a gradient: a dataclass field, a namedtuple
field, an entry of the instance ``__dict__``, or one of the children of a registered class. Any
other attribute (a property computed from the fields, ``x.real`` of an array) is refused when
its gradient or tangent would be needed, never differentiated as if it were data.
"""

from __future__ import annotations

import dataclasses
import inspect
import types

import numpy as np

from ..errors import SrcgradError


def register_pytree(cls, flatten, unflatten):
    """Make instances of ``cls`` structures srcgrad differentiates through, as in JAX.

    ``flatten(obj) -> (children, aux)`` gives the parts that carry gradients (arrays, numbers or
    structures again) and static data; ``unflatten(aux, children) -> obj`` builds an instance
    back. A gradient, seed or tangent of an instance is an instance built by ``unflatten``.
    """
    if not isinstance(cls, type):
        raise SrcgradError(f"register_pytree expects a class, got {cls!r}")
    if not callable(flatten) or not callable(unflatten):
        raise SrcgradError("register_pytree(cls, flatten, unflatten): both must be callables")
    # kept on the class itself (not inherited: a subclass registers itself, as in JAX), so a
    # standalone module (emit/standalone.py) that copies these helpers finds it too
    type.__setattr__(cls, "__srcgrad_pytree__", (cls, flatten, unflatten))
    REGISTERED.add(cls)
    return cls


REGISTERED: set = set()  # (no class registered: no argument needs a rebuild, rebuild_plan)


def _registered(cls):
    """``(flatten, unflatten)`` of a class registered itself, or None."""
    entry = getattr(cls, "__srcgrad_pytree__", None)
    return entry[1:] if entry is not None and entry[0] is cls else None


def kind_of(x):
    """``"registered"``, ``"namedtuple"``, ``"dataclass"``, ``"namespace"``, ``"object"`` (an
    instance of a user class with a ``__dict__``), or None for anything else (arrays, numbers,
    plain dicts/lists/tuples, modules, functions, classes)."""
    cls = type(x)
    if _registered(cls) is not None:
        return "registered"
    if isinstance(x, tuple) and hasattr(cls, "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return "dataclass"
    if cls is types.SimpleNamespace:
        return "namespace"
    if (
        isinstance(x, (np.ndarray, np.generic, int, float, complex, str, bytes, tuple, list, dict))
        or isinstance(x, (type, types.ModuleType, types.FunctionType, types.MethodType))
        or x is None
    ):
        return None
    module = getattr(cls, "__module__", "") or ""
    if module.split(".")[0] in ("numpy", "builtins", "srcgrad") or not hasattr(x, "__dict__"):
        return None
    if hasattr(cls, "__array_function__") or hasattr(cls, "__array__"):
        return None  # an array of another library (Dask, CuPy): an array, not a structure
    return "object"


def fields(x):
    """The data of object ``x`` by attribute name, in order (None when ``x`` is no object)."""
    kind = kind_of(x)
    if kind == "namedtuple":
        return dict(zip(type(x)._fields, x))
    if kind == "dataclass":
        # (one being built, its `__post_init__` inlined, has the fields written so far)
        return {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if hasattr(x, f.name)}
    if kind in ("namespace", "object"):
        return dict(vars(x))
    if kind == "registered":
        children, _ = _registered(type(x))[0](x)
        return {name: v for name, v in _attribute_names(x, children).items()}
    return None


def _attribute_names(x, children):
    """Attribute name -> child, for the children of a registered ``x`` that are attributes."""
    out = {}
    for name, value in (getattr(x, "__dict__", None) or {}).items():
        if any(value is c for c in children):
            out[name] = value
    for name in getattr(type(x), "__slots__", ()):
        value = getattr(x, name, None)
        if any(value is c for c in children):
            out[name] = value
    return out


def checked_attribute(obj, name, what):
    """Whether ``obj.name`` is data of ``obj`` (True) or a plain attribute of its class, shared
    by all instances, which carries no gradient (False); refused when it is computed."""
    kind = kind_of(obj)
    if kind == "registered":
        if name in (getattr(obj, "__dict__", None) or {}) or _is_slot(type(obj), name):
            return True  # (whether it is a child is checked where the gradient is returned)
        children, _ = _registered(type(obj))[0](obj)
        value = getattr(obj, name)
        if any(value is c for c in children):
            return True
    elif kind is not None and name in fields(obj):
        return True
    static = inspect.getattr_static(type(obj), name, checked_attribute)
    if kind is not None and static is not checked_attribute and not hasattr(static, "__get__"):
        return False
    cls = type(obj).__name__
    if kind is None:
        raise SrcgradError(
            f"srcgrad has no {what} for the attribute `.{name}` of a {cls}: differentiable "
            f"attributes are the fields of dataclasses, namedtuples, SimpleNamespaces, objects "
            f"of the user's classes and classes registered with srcgrad.register_pytree"
        )
    raise SrcgradError(
        f"srcgrad has no {what} for `.{name}` of a {cls}: it is not data the object holds (a "
        f"field, an instance attribute, a child of a registered class) but computed when read "
        f"(a property?). Differentiate with the object's class known (grad(obj.method), or a "
        f"parameter annotated with the class) so the property is inlined, or read the fields "
        f"it is computed from"
    )


def _is_slot(cls, name):
    """Whether ``name`` is one of the ``__slots__`` of ``cls`` or of a class it derives from:
    instance data (its class attribute is the slot's descriptor, as a property's would be)."""
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        if name in ((slots,) if isinstance(slots, str) else slots):
            return isinstance(klass.__dict__.get(name), types.MemberDescriptorType)
    return False


def parts_of(g, x):
    """The cotangent ``g`` of object ``x`` as a dict by attribute name (None stays None)."""
    if g is None or isinstance(g, dict):
        return g
    if isinstance(g, list):  # a namedtuple's, by position
        return dict(zip(type(x)._fields, g))
    found = fields(g)
    if found is None:
        raise SrcgradError(
            f"a gradient or tangent of a {type(x).__name__} must have its structure; got a "
            f"{type(g).__name__}"
        )
    return found


def _differentiable(value):
    """Whether a field that received no gradient gets zeros (float data) rather than None."""
    if isinstance(value, (bool, int, str, bytes)) or value is None:
        return False
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "fc"
    return isinstance(value, (float, complex)) or kind_of(value) is not None or isinstance(
        value, (tuple, list, dict))


# Read from a variable, these are taken for the array attributes without gradient
# (analysis/ops.py), whatever the variable holds: a field of one of these names holding data
# that carries gradient is refused wherever srcgrad meets it, never read without its gradient.
ARRAY_ATTRIBUTES = ("shape", "ndim", "size", "dtype", "itemsize", "nbytes", "T")


def check_field_names(x, data):
    """Refuse a structure with a differentiable field named like an array attribute."""
    for name in ARRAY_ATTRIBUTES:
        if name in data and _differentiable(data[name]):
            raise SrcgradError(
                f"the {type(x).__name__} has a field `{name}` holding a "
                f"{type(data[name]).__name__}: srcgrad reads `.{name}` as the array attribute "
                f"(no gradient, or a transpose for `.T`) when it cannot tell the class at "
                f"transform time; rename the field"
            )


def check_structure(x):
    """``check_field_names`` through a whole structure (objects in lists, dicts, objects)."""
    if kind_of(x) is not None:
        data = fields(x)
        check_field_names(x, data)
        values = data.values()
    elif isinstance(x, dict):
        values = x.values()
    elif isinstance(x, (list, tuple)):
        values = x
    else:
        return
    for v in values:
        check_structure(v)


def rebuild(g, x, leaf):
    """A gradient of object ``x`` with ``x``'s structure, from its cotangent ``g``;
    ``leaf(g_part, value)`` converts each field."""
    kind = kind_of(x)
    parts = parts_of(g, x) or {}
    check_field_names(x, fields(x))

    def convert(name, value):
        part = parts.get(name)
        if part is None and not _differentiable(value):
            return None
        return leaf(part, value)

    if kind == "registered":
        flatten, unflatten = _registered(type(x))
        children, aux = flatten(x)
        named = _attribute_names(x, children)
        unknown = {n for n, v in parts.items() if v is not None} - set(named)
        # an attribute holding the aux data itself (`k` of `((o.a,), o.k)`) is static, as in
        # JAX: its gradient is dropped; one holding anything else (derived from the children)
        # cannot be given back
        static = {id(v) for v in _aux_values(aux)}
        unknown = {n for n in unknown if id(getattr(x, n, None)) not in static}
        if unknown:
            raise not_a_child(x, sorted(unknown), "a gradient")
        by_id = {id(v): parts.get(n) for n, v in named.items()}
        new = [leaf(by_id.get(id(c)), c) for c in children]
        return unflatten(aux, new)
    data = fields(x)
    unknown = set(parts) - set(data)
    if unknown:
        raise SrcgradError(f"internal error: gradient of {sorted(unknown)} of a "
                           f"{type(x).__name__}, which are not its fields")
    values = {n: convert(n, v) for n, v in data.items()}
    if kind == "namedtuple":
        return type(x)(**values)
    if kind == "namespace":
        return types.SimpleNamespace(**values)
    new = object.__new__(type(x))
    for n, v in values.items():
        object.__setattr__(new, n, v)
    return new


def rebuild_plan(x, depth=0):
    """How a derivative rebuilds the argument ``x`` as JAX's function sees it (each registered
    object as ``unflatten(aux, children)`` builds it, ``rebuilding.py``), as a hashable value,
    or None where nothing needs it: a registered object whose attributes include float data
    neither among its children nor its aux data (``self.a2 = a * a`` of ``__init__``), or one
    holding such objects among its children, in a plain dict, list or tuple, or in a field of
    a dataclass (not frozen), a ``SimpleNamespace`` or an object of the user's class, nested
    freely.

        rebuild_plan(Squared(a, 3))  ->  ("registered", Squared, tuple, (None,))
    """
    if not REGISTERED or depth > 12:
        return None
    cls = type(x)
    if _registered(cls) is not None:
        children, aux = _registered(cls)[0](x)
        if not isinstance(children, (tuple, list)):
            return None
        parts = tuple(rebuild_plan(c, depth + 1) for c in children)
        if not derived_names(x, children, aux) and not any(parts):
            return None
        return "registered", cls, type(children), parts
    if cls is dict and all(type(k) in (str, int) for k in x):
        parts = tuple((k, rebuild_plan(v, depth + 1)) for k, v in x.items())
        return ("dict", parts) if any(p for _, p in parts) else None
    if cls in (list, tuple):
        parts = tuple(rebuild_plan(v, depth + 1) for v in x)
        return (cls.__name__, parts) if any(parts) else None
    return _fields_plan(x, depth)


def _fields_plan(x, depth):
    """``rebuild_plan`` of an object whose fields hold such objects: a shallow copy of it with
    those fields rebuilt; of a frozen dataclass (which cannot be written), the
    ``dataclasses.replace`` of those fields, where each is an ``__init__`` field."""
    cls = type(x)
    if kind_of(x) not in ("namespace", "dataclass", "object"):
        return None
    parts = tuple((k, rebuild_plan(v, depth + 1)) for k, v in vars(x).items())
    parts = tuple((k, p) for k, p in parts if p is not None)
    if not parts:
        return None
    if getattr(getattr(cls, "__dataclass_params__", None), "frozen", False):
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        return ("replaced", cls, parts) if all(k in init for k, _ in parts) else None
    return "fields", cls, parts


def derived_names(x, children, aux):
    """The attributes of the registered ``x`` holding float data that is neither one of its
    ``children`` nor its ``aux`` data: data derived from the children, which JAX's function
    sees as ``unflatten`` recomputes it."""
    static = {id(v) for v in _aux_values(aux)} | {id(c) for c in children}
    names = list(getattr(x, "__dict__", None) or {})
    names += [n for n in getattr(type(x), "__slots__", ()) if hasattr(x, n)]
    return [n for n in names
            if _differentiable(getattr(x, n)) and id(getattr(x, n)) not in static]


class DerivedAttributeError(SrcgradError):
    """A gradient or tangent reached an attribute of a registered object that is neither a
    child nor aux data, in a derivative that did not rebuild the object (``not_a_child``)."""


def not_a_child(x, names, what):
    """The error for ``what`` (a gradient, a tangent) of attributes ``names`` of a registered
    ``x`` that hold data neither among the children nor the aux data its flatten returns, where
    the derivative could not see ``x`` as JAX does, rebuilt by unflatten (``rebuilding.py``)."""
    return DerivedAttributeError(
        f"{what} reached the attributes {names} of a {type(x).__name__}, which are not among "
        f"the children its registered flatten returns, nor its aux data: srcgrad follows them "
        f"through unflatten (as JAX does) only for such an object that is a differentiated "
        f"argument, or is held by one in dicts, lists, tuples, fields (not of a frozen "
        f"dataclass) or the children of registered objects, without checkpoint= or numba; "
        f"compute them in the function from the children (`2.0 * b.a`), or return "
        f"them among the children (or the aux data, for a constant)"
    )


def check_static(x, name, value, aux):
    """Refuse a tangent of ``x.name`` (``value``), an attribute of the registered ``x`` that is
    no child, unless it is aux data, or no float data: static, as in JAX (a zero tangent)."""
    if _differentiable(value) and not any(value is v for v in _aux_values(aux)):
        raise not_a_child(x, [name], "a tangent")


def _aux_values(aux):
    """The values a registered class's aux data holds (itself, or the items of a tuple, list
    or dict of them, nested)."""
    if isinstance(aux, dict):
        aux = list(aux.values())
    if isinstance(aux, (list, tuple)):
        return [aux] + [v for item in aux for v in _aux_values(item)]
    return [aux]


def check_updated_in_place(value, name, numbers=False):
    """``name += ...`` / ``name[i] += ...`` where ``name`` is a field of an inner object
    (``P.ps[0].b``, ``p.x``): modelled as an update in place of the float array it holds, which
    every holder sees, or (``numbers``: ``a.b.c += v``) a number rebound; a list or integer
    array would be extended or cast instead."""
    if numbers and isinstance(value, (int, float, complex, np.number)):
        return None
    if not (isinstance(value, np.ndarray) and value.dtype.kind in "fc"):
        raise SrcgradError(
            f"`{name}` holds a {type(value).__name__}"
            f"{' of ' + str(value.dtype) if isinstance(value, np.ndarray) else ''}: srcgrad "
            f"follows an augmented assignment into it only for a float array (updated in "
            f"place){' or a number' if numbers else ''}; build the inner object anew with the "
            f"new value (`lay = DP(w=..., ...)`)"
        )
    return None


def has_class(obj, cls):
    """Whether ``obj`` is of the class ``cls`` itself: which branch a call on an item of a list
    holding objects of several classes takes (normalize/inline.py)."""
    return type(obj) is cls


def check_class(obj, cls):
    """Refuse to run a derivative that inlined ``cls``'s methods on an object of another class
    (the class was inferred at transform time: from the instance a bound method was transformed
    with, an annotation, a field)."""
    if type(obj) is not cls:
        raise SrcgradError(
            f"this derivative inlined the methods of {cls.__qualname__} for an object that is now "
            f"a {type(obj).__qualname__}: transform again with an object of that class (a bound "
            f"method of the instance you call it with), or annotate the class; a variable the "
            f"function gives objects of two classes (one in a loop's later trip) needs a name "
            f"for each"
        )
    return None


def _own_item(method, made, holder):
    """Whether ``method`` is ``made``, the bound method an object's own dict, list or tuple
    was made with, and a field of ``holder`` still holds it there (``holder`` True: a dict
    the function made, whose object a name holds, normalize/held_methods.py)."""
    if holder is True:
        return method is made
    fields = getattr(holder, "__dict__", None) or {}
    held = (v for f in fields.values() if isinstance(f, (dict, list, tuple))
            for v in (f.values() if isinstance(f, dict) else f))
    return method is made and any(v is made for v in held)


def is_held_method(method, receiver, fn, holder=None):
    """Whether ``method`` is ``fn`` bound to ``receiver`` (or, with ``holder``, is
    ``receiver``, its own method as a dict of ``holder`` holds it: ``_own_item``): which
    branch a call of an item of held bound methods takes (normalize/held_methods.py)."""
    if holder is not None:
        return _own_item(method, receiver, holder)
    return getattr(method, "__self__", None) is receiver and getattr(
        method, "__func__", None) is fn


def bound_method_of(obj, name):
    """``obj.name`` of a plain method ``name`` of obj's class, as a value Python holds (a dict
    of bound methods an object built in the function keeps: normalize/held_methods.py)."""
    return getattr(obj, name)


def check_method_of(obj, name):
    """Refuse to run a derivative that called the method ``name`` of ``obj``'s class where the
    object holds a field of that name, which Python reads instead (normalize/held_methods.py,
    inline.py ``_by_class``: objects of several classes, known by their class alone)."""
    if name in (getattr(obj, "__dict__", None) or {}):
        raise SrcgradError(
            f"this derivative calls the method {type(obj).__qualname__}.{name}, but the object "
            f"holds a field `{name}`, which hides it: give the field another name, or call "
            f"what the field holds where it is named")
    return None


def check_held_method(method, receiver, fn, holder=None):
    """Refuse to run a derivative that called ``fn`` on ``receiver`` for a bound method an
    object holds (``self.hooks["a"]``, normalize/held_methods.py) that is now another method,
    or bound to another object (with ``holder``: not ``receiver``, the object's own method
    that a dict of ``holder`` holds, ``_own_item``)."""
    if getattr(method, "__func__", None) is not fn:
        now = f"now holds {getattr(method, '__qualname__', type(method).__qualname__)}"
    elif not _own_item(method, receiver, holder) if holder is not None else (
            method.__self__ is not receiver):
        now = "is now bound to an object the fields that reached it no longer hold"
    else:
        return None
    raise SrcgradError(
        f"this derivative calls {fn.__qualname__} for a bound method an object holds, on the "
        f"object it was bound to when the derivative was made (reached by the same fields); "
        f"the item {now}: transform again, or call the method where it is named "
        f"(`self.a.scale(x)`)"
    )


def new_instance(cls):
    """An instance of ``cls`` before its ``__init__`` (which is inlined after it); an empty
    ``SimpleNamespace`` (its fields are written after it)."""
    if cls is types.SimpleNamespace:
        return cls()
    return object.__new__(cls)

