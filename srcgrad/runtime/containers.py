"""Cotangents of tuples, lists and dicts, and the helpers generated code uses for Python containers.

A container's cotangent is a ``Cotangents`` (one entry per element, ``None`` for zero) or a
``DictCotangents``; both add elementwise with ``+``, so generated code accumulates them like arrays.
Here too: the value form of ``list.append``/``list.pop`` and their adjoints, the builtin ``sum``,
``max``/``min`` of an iterable, and the zeros and copies of gradients (``zeros_like``,
``copy_grad``, ``copy_array``).
"""

from __future__ import annotations

import copy
import inspect
import weakref

import numpy as np

from ..errors import PythonTypeError, SrcgradError, UnsupportedCaseError
from .complex_values import conj_leaf
from .pytrees import (
    _registered,
    check_field_names,
    check_static,
    checked_attribute,
    fields,
    kind_of,
    parts_of,
    rebuild,
)
from .shapes import float_dtype, object_operator, unbroadcast


class Cotangents(list):
    """The adjoint of a tuple or list: one cotangent per element, ``None`` for a zero one.

    ``+`` adds elementwise (Python's ``+`` on sequences would concatenate), so generated code
    accumulates container adjoints exactly like array adjoints.
    """

    def __add__(self, other):
        if other is None or (type(other) is float and other == 0.0):
            # (0.0: the zero an adjoint starts from where its variable may not exist yet)
            return self
        if isinstance(other, dict):
            raise SrcgradError(
                "cannot add the cotangents of a list or tuple and of a dict: srcgrad "
                "differentiates a variable only while its value keeps one structure"
            )
        if len(other) != len(self):
            raise SrcgradError(
                f"cannot add the cotangents of sequences of different lengths ({len(self)} and "
                f"{len(other)}): srcgrad differentiates a list or tuple only while its length "
                f"is the same wherever its gradient contributions meet"
            )
        return Cotangents(add(a, b) for a, b in zip(self, other))

    __radd__ = __add__
    __iadd__ = __add__  # `d += c` in generated code adds too (list's += would extend)

    def __mul__(self, other):
        # the adjoint of `L * 2` as a product: it would repeat the cotangents, not add each
        # copy's into its item (a wrong gradient; `[v] * n` of a display is repeat_sequence).
        # By an array: NumPy multiplies elementwise (`sum(x * x)`'s cotangent times x)
        if isinstance(other, np.ndarray) or not hasattr(type(other), "__index__"):
            return NotImplemented
        raise SrcgradError(
            "`+` or `*` on a list or tuple (concatenation or repetition) is not differentiable "
            "by srcgrad; build the list with a literal, `append` or a comprehension instead "
            "(`[v] * n` with a literal list and an int or `len(...)` count works)")

    __rmul__ = __mul__
    __imul__ = __mul__


class DictCotangents(dict):
    """The adjoint of a dict: cotangents by key; a missing key has a zero cotangent.

    Arithmetic on it other than ``+`` is the adjoint of an operator given an object (or dict)
    srcgrad did not see as one (normalize/operators.py): refused."""

    def _operator(self, *other):
        raise SrcgradError(object_operator("a class of yours (or a dict)"))

    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __neg__ = __pos__ = _operator
    __sub__ = __rsub__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = _operator

    def __add__(self, other):
        if other is None or (type(other) is float and other == 0.0):
            # (0.0: the zero an adjoint starts from where its variable may not exist yet)
            return self
        if not isinstance(other, dict):
            return add_objects(self, other)
        out = DictCotangents(self)
        for k, v in other.items():
            out[k] = add(out.get(k), v)
        return out

    __radd__ = __add__


def add(a, b):
    """``a + b`` for cotangents, where ``None`` is zero and sequences add elementwise."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, np.ndarray) and isinstance(b, (tuple, list)) and len(b) == len(a):
        # an array cotangent of a list (the adjoint of np.array(L) is one) meets the list's
        # sparse cotangents: their None elements are zeros (NumPy would see None objects)
        return a + np.array([np.zeros_like(a[i]) if d is None else d for i, d in enumerate(b)])
    if isinstance(a, (tuple, list)) and not isinstance(a, Cotangents):
        a = Cotangents(a)
    if type(a) is dict and type(b) is dict:  # the cotangents of a plain dict, key by key
        return {k: add(a.get(k), b.get(k)) for k in {**a, **b}}
    if kind_of(a) not in (None, "namedtuple") or kind_of(b) not in (
            None, "namedtuple"):
        return add_objects(a, b)
    return a + b


def elem(dy, key, x):
    """The cotangent of element ``key`` of a container from the container's cotangent ``dy``."""
    if dy is None or (type(dy) is float and dy == 0.0):  # (0.0: see Cotangents.__add__)
        return zeros_like(x)
    g = dy.get(key) if isinstance(dy, dict) else dy[key]
    return zeros_like(x) if g is None else g


def as_like(g, x):
    """A gradient with the structure and the dtype of ``x``: list for a list, tuple for a tuple,
    dict for a dict, zeros where nothing flowed; arrays and numbers keep their shape, in x's
    floating dtype (float32 in, float32 out; float64 for an integer or bool ``x``). An array
    that may share memory with another element's (``sum(xs)`` gives each element the same
    cotangent) is copied, so that updating one element's gradient in place leaves the others
    alone."""
    if type(g) is np.ndarray and type(x) is np.ndarray and g.dtype == x.dtype:
        if g.dtype.kind != "c":  # a complex gradient is conjugated (_in_dtype_of)
            return g
    return _as_like(g, x, {})


def _as_like(g, x, held):
    """``held``: id(base array) -> the elements' arrays on it so far."""
    if kind_of(x) is not None:
        return rebuild(g, x, lambda part, value: _as_like(part, value, held))
    if isinstance(x, dict):
        g = g or {}
        return {k: _as_like(g.get(k), v, held) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        if isinstance(g, (tuple, list)) and len(g) != len(x):
            raise SrcgradError(
                f"the gradient of a {type(x).__name__} of {len(x)} elements came out with "
                f"{len(g)}: `+` or `*` of a list or tuple srcgrad could not see as one (an "
                f"argument, an element of a container) concatenates or repeats it; build the "
                f"new list where srcgrad sees it (`list(xs) + ys`)")
        parts = [_as_like(None if g is None else g[i], v, held) for i, v in enumerate(x)]
        return type(x)(parts) if type(x) in (tuple, list) else parts
    if g is None or (np.ndim(g) == 0 < np.ndim(x) and not np.any(g)):
        # nothing flowed (a zero number stands for zeros of any shape)
        return _in_dtype_of(zeros_like(x), x)  # np.float32(0.0) for a NumPy float32 scalar
    g = _in_dtype_of(g, x)
    if isinstance(g, np.ndarray):
        base = g
        while isinstance(base.base, np.ndarray):
            base = base.base
        others = held.setdefault(id(base), [])
        if any(np.may_share_memory(g, other) for other in others):
            return np.array(g)
        others.append(g)
    return g


def cast_like(g, x):
    """The gradient ``g`` of the array or number ``x`` in the dtype of x's gradients (see
    ``as_like``, which does the same for containers)."""
    if type(g) is np.ndarray and type(x) is np.ndarray and g.dtype == x.dtype:
        if g.dtype.kind != "c":  # a complex gradient is conjugated (_in_dtype_of)
            return g
    if type(x) in (tuple, list, dict) or isinstance(g, (list, dict)):
        # a structure's (its holder's cotangents; an object's, where the transform could not
        # tell the argument is one: `M *= v` with P a dataclass that may hold M): as_like
        return as_like(g, x)
    if isinstance(x, np.ndarray) and (
            isinstance(x, np.matrix) or type(x).__module__.startswith("numpy.ma")):
        raise other_array_error(x)
    return _in_dtype_of(g, x)


def other_array_error(x):
    """The error for an argument of an ndarray subclass whose operators mean something else
    (``np.matrix``: ``*`` is a matrix product; a masked array: masked elements take no part),
    for which the derivative rules, written for arrays, would give a wrong gradient."""
    kind = "an np.matrix" if isinstance(x, np.matrix) else "a masked array (np.ma)"
    return SrcgradError(
        f"srcgrad differentiates NumPy arrays, and an argument is {kind}, whose operations "
        f"mean something else (`*` of np.matrix is a matrix product; masked elements take no "
        f"part): pass `np.asarray(x)` and write the operation out (`@`, `np.where(mask, ...)`)")


def _in_dtype_of(g, x):
    """The gradient ``g`` in the dtype of ``x``'s gradients (a complex one only for a complex
    ``x``); other values unchanged.

    A function may compute in another precision than its argument (``np.zeros(3)`` is float64
    whatever ``x`` is); its gradient still has the argument's dtype, as in JAX and PyTorch.
    A complex cotangent is conjugated for a complex ``x`` and a real ``x`` gets its real part
    (``conj_leaf``): the gradient leaves in the public convention.
    """
    g = conj_leaf(g, x)
    if isinstance(x, (np.ndarray, np.generic)):
        want = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    elif isinstance(x, (bool, int, float)):
        want = np.dtype(np.float64)
    else:
        return g
    castable = "biuf" if want.kind == "f" else "biufc"  # never drop an imaginary part
    if isinstance(g, (np.ndarray, np.generic)):
        if g.dtype == want or g.dtype.kind not in castable:
            return g
        return g.astype(want) if isinstance(g, np.ndarray) else want.type(g)
    if isinstance(g, (bool, int, float, complex)) and np.dtype(type(g)).kind in castable:
        if isinstance(x, (np.ndarray, np.generic)):
            return want.type(g)
        return float(g)
    return g


def list_append(items, value):
    """``items.append(value)``, as a value: generated code writes ``hs = list_append(hs, h)``."""
    items.append(value)
    return items


def append_tangent(ditems, dvalue, value):
    """The tangent of ``list_append``: the tangent list grows in step with the list."""
    ditems = [] if ditems is None else ditems
    ditems.append(zeros_like(value) if dvalue is None else dvalue)
    return ditems


def appended_tangent(ditems, dvalue, value):
    """``append_tangent`` as a new list, for generated code that is differentiated again
    (``normalize/functional.py``): the tangent list there may be one a save holds."""
    out = [] if ditems is None else list(ditems)
    out.append(zeros_like(value) if dvalue is None else dvalue)
    return out


def list_pop(items):
    """``items.pop()`` for its effect, as a value: ``stack = list_pop(stack)``."""
    items.pop()
    return items


def popped(items):
    """``items`` without its last element, as a new list: ``list_pop`` in generated code that is
    differentiated again, where the list may be one a save holds (``normalize/functional.py``)."""
    return items[:-1]


def append_none(dy):
    """Cotangent of a list before a pop: the cotangent after it, plus a zero last element."""
    return None if dy is None else Cotangents(list(dy) + [None])


def append_grad_value(dy, value):
    """Cotangent of the appended value: the last cotangent of the grown list."""
    return elem(dy, -1, value) if dy is not None and len(dy) else zeros_like(value)


def append_grad_items(dy):
    """Cotangent of the list before the append: all but the last cotangent."""
    return None if dy is None else Cotangents(dy[:-1])


def sum_tangent(tangents):
    """The tangent of the builtin ``sum``: the sum of the elements' tangents (``None`` is 0)."""
    total = 0.0
    for t in tangents:
        if t is not None:
            total = total + t
    return total


def sum_grad(dy, items):
    """The adjoint of the builtin ``sum(items)``: ``dy`` for every element, unbroadcast. An
    object of a class of the user's is iterated by its ``__iter__``, which srcgrad does not
    follow: refused."""
    if type(items).__module__ not in ("builtins", "numpy") and not isinstance(
            items, (list, tuple, np.ndarray)):
        raise not_iterated(items)
    return Cotangents(unbroadcast(dy, x) for x in items)


def not_iterated(seq):
    """The refusal of a gradient or tangent through iterating ``seq``, an object of a class of
    the user's."""
    return UnsupportedCaseError(
        f"srcgrad does not differentiate through iterating a `{type(seq).__name__}` (a loop, "
        "unpacking or `list(v)` of it runs its `__iter__`, which srcgrad does not follow): "
        "iterate over a list, tuple or array, or over the object's fields (`for v in (p.a, "
        "p.b)`)")


def extreme_index(items, largest=True):
    """The position of the element ``max(items)`` (``min`` when not ``largest``) returns: the
    first extreme one, found with the comparisons Python's builtins make."""
    best, k = None, 0
    for i, v in enumerate(items):
        if i == 0 or ((v > best) if largest else (v < best)):
            best, k = v, i
    return k


def max_of(items):
    """``max(items)`` of one iterable (the two-argument form has its own rule)."""
    return max(items)


def min_of(items):
    """``min(items)`` of one iterable."""
    return min(items)


def pick_extreme(d, items, largest=True):
    """The tangent (or cotangent) in ``d`` at the element ``max``/``min`` of ``items`` chose."""
    i = extreme_index(items, largest)
    return elem(d, i, items[i])


def copy_array(a):
    """A private copy of an adjoint array (or of the cotangents of a list or dict)."""
    if isinstance(a, dict):
        return DictCotangents(a)
    if isinstance(a, (list, tuple)):
        return Cotangents(a)
    return np.array(a, dtype=float_dtype(a), copy=True)


def copy_grad(g):
    """A returned gradient the caller owns: a writable copy of ``g`` (of each array in it, for a
    tuple, list or dict). Generated code calls it only where ``g`` may be a read-only broadcast
    view, an argument of the call, or an array another returned gradient holds."""
    if isinstance(g, np.ndarray):
        return np.array(g, copy=True)
    if isinstance(g, dict):
        return type(g)((k, copy_grad(v)) for k, v in g.items())
    if kind_of(g) is not None:
        return rebuild(g, g, lambda part, value: copy_grad(value))
    if isinstance(g, (tuple, list)):
        return type(g)(copy_grad(v) for v in g)
    return g


def zeros_like(x):
    """A zero gradient for ``x``: ``0.0`` for a Python scalar, an array of x's floating dtype
    otherwise (float64 for integers), and zeros of the same structure for a tuple, list or dict."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype if x.dtype.kind in "fc" else np.float64)
    if kind_of(x) is not None:
        return rebuild(None, x, lambda part, value: zeros_like(value))
    if isinstance(x, dict):
        return DictCotangents({k: _zero_entry(v, x) for k, v in x.items()})
    if isinstance(x, (tuple, list)):
        return Cotangents(_zero_entry(v, x) for v in x)
    if np.ndim(x) == 0:
        return 0.0
    return np.zeros(np.shape(x), dtype=float_dtype(x))


def _zero_entry(v, x):
    """The zero of an entry ``v`` of the container ``x``: an entry ``None`` of a (tangent or)
    cotangent of a container is a zero of the element's shape, which ``None`` already stands
    for; a number ``0.0`` there would become a number where the element is an array."""
    if v is None and isinstance(x, (Cotangents, DictCotangents)):
        return None
    return zeros_like(v)


# --- attributes of structures (runtime/pytrees.py) ------------------------------------------
def attr_grad(dy, obj, name):
    """The adjoint of ``obj.name``: a cotangent of ``obj`` holding ``dy`` at ``name``."""
    if not checked_attribute(obj, name, "gradient"):
        return None
    if kind_of(obj) == "namedtuple":
        g = Cotangents([None] * len(obj))
        g[type(obj)._fields.index(name)] = dy
        return g
    return DictCotangents({name: dy})


def attr_of(d, obj, name):
    """The part at ``name`` of a tangent or cotangent ``d`` of ``obj`` (zeros where ``d`` has
    none): the tangent of ``obj.name``."""
    if not checked_attribute(obj, name, "tangent") or d is None:
        return zeros_like(getattr(obj, name))
    if isinstance(d, dict):
        part = d.get(name)
    elif isinstance(d, list):
        part = d[type(obj)._fields.index(name)]
    elif kind_of(obj) == "registered" and name not in fields(obj) and (
            _FIELD_BY_FIELD.get(id(d)) is not d):
        return _child_part(d, obj, name)
    else:
        part = getattr(d, name)
    value = getattr(obj, name)
    if part is None or _zero_for_structure(part, value):
        # (a zero number stands for zeros of a field's structure: the tangent of a field
        # written with a value that carries none, `st.lay = Lin(0.7)`)
        return zeros_like(value)
    return part


# The tangents of registered objects built here that ``set_field_tangent`` wrote field by field
# (id -> object): their attributes are the fields' tangents, those of a tangent the caller
# passes (built by unflatten) are the children's alone.
_FIELD_BY_FIELD: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _child_part(d, obj, name):
    """The tangent of ``obj.name``, no instance attribute of the registered ``obj``: where it
    returns one of the children flatten gives (a property reading a child), the child of ``d``
    (built like ``obj``) at that position; else static data, which an instance built by
    unflatten copies from the primal: zeros."""
    value = getattr(obj, name)
    flatten = _registered(type(obj))[0]
    children, aux = flatten(obj)
    for i, child in enumerate(children):
        if child is value:
            part = flatten(d)[0][i]
            return zeros_like(value) if part is None else part
    check_static(obj, name, value, aux)  # (float data derived from the children: refused)
    return zeros_like(value)


def _zero_for_structure(part, value):
    # (an array field too: written while the object was being built, the field's tangent was
    # a zero number, `set_field_tangent` before the field existed)
    structure = kind_of(value) is not None or isinstance(value, (list, tuple, dict)) or (
        isinstance(value, np.ndarray) and value.ndim > 0)
    return (structure and isinstance(part, (int, float, np.number))
            and not isinstance(part, bool) and part == 0)


def add_objects(a, b):
    """``a + b`` where one is a cotangent of an object given as the object itself (a zero made
    by ``zeros_like``, a seed): both as dicts by attribute name."""
    a = a if isinstance(a, dict) else fields(a)
    b = b if isinstance(b, dict) else fields(b)
    out = DictCotangents(a)
    for k, v in b.items():
        out[k] = add(out.get(k), v)
    return out


def structure_tangent(like, parts):
    """The tangent of a structure ``like`` built from fields whose tangents are ``parts`` (a dict
    by field name, ``None`` where a field is inactive): an instance of its class."""
    return rebuild(parts, like, lambda part, value: zeros_like(value) if part is None else part)


def attr_parts(g, like):
    """The cotangent ``g`` of structure ``like`` (a dict by field, or an instance given as a
    seed) as a dict by field name: the cotangents of the fields ``structure_tangent`` got."""
    return DictCotangents(parts_of(g, like) or {})


def set_field(obj, name, value):
    """``obj.name = value`` as a value: a shallow copy of ``obj`` with the field replaced
    (normalize/containers.py), so an object the caller passed is never modified."""
    kind = kind_of(obj)
    if kind in (None, "namedtuple"):
        what = "an immutable namedtuple" if kind == "namedtuple" else f"a {type(obj).__name__}"
        raise SrcgradError(
            f"srcgrad cannot differentiate writing `.{name}` of {what}: it differentiates "
            f"attribute writes on dataclasses, SimpleNamespaces and objects of your classes"
        )
    new = copy.copy(obj)
    setattr(new, name, value)  # a frozen dataclass refuses, as it does in Python
    check_field_names(new, {name: value})
    return new


def field_updated(obj, name, value):
    """``a.b.c = value`` as a value, for ``obj`` the inner object ``a.b``: ``set_field``'s copy
    of it with the field replaced, which normalize/sharing.py then puts wherever the old object
    is held (``a`` and every other holder, found by identity when it runs), as Python changes
    that object in place."""
    return set_field(obj, name, value)


def field_cleared(g, obj, name):
    """The cotangent of the object ``set_field`` replaced a field of: ``g`` without ``name``."""
    parts = parts_of(g, obj)
    if parts is None:
        return None
    if kind_of(obj) == "namedtuple":  # by position, as `attr_grad` gives a namedtuple's
        return [None if k == name else parts.get(k) for k in type(obj)._fields]
    return DictCotangents({k: v for k, v in parts.items() if k != name})


def set_field_tangent(dobj, dvalue, obj, name):
    """The tangent of ``set_field(obj, name, value)``: obj's tangent with the field's tangent
    replaced (zeros where a tangent is None)."""
    parts = dict(parts_of_any(dobj, obj))
    parts[name] = dvalue
    new = set_field(obj, name, zeros_like(getattr(obj, name, 0.0)) if dvalue is None else dvalue)
    # field by field (an object being built by its __init__ may not flatten yet)
    data = vars(new) if kind_of(new) == "registered" else fields(new)
    for k, v in data.items():
        part = parts.get(k)
        object.__setattr__(new, k, zeros_like(v) if part is None and _has_tangent(v) else part)
    if kind_of(new) == "registered":
        try:
            _FIELD_BY_FIELD[id(new)] = new
        except TypeError:  # (no weak reference to it: its derived fields stay refused)
            pass
    return new


def replaced(obj, **changes):
    """``dataclasses.replace(obj, **changes)`` as normalize/containers.py writes it; never left
    in generated code (normalize/methods.py makes it ``replace_field`` per field, or for a
    dataclass with a ``__post_init__`` a call of the class)."""
    raise SrcgradError("internal error: dataclasses.replace was not rewritten")


def replaced_copy(obj):
    """``dataclasses.replace(obj)``: a new object with the same fields (refused, as
    ``replace_field`` refuses, where a ``__post_init__`` would run on it)."""
    if kind_of(obj) != "dataclass":
        raise PythonTypeError("replace() should be called on dataclass instances")
    if hasattr(type(obj), "__post_init__"):
        raise SrcgradError(
            f"srcgrad cannot differentiate `dataclasses.replace` with a `__post_init__` of an "
            f"object whose class it does not know at transform time: annotate it with its "
            f"class (`p: {type(obj).__name__}`), or call the class (`{type(obj).__name__}(...)`)")
    return copy.copy(obj)


def shallow_copy(obj):
    """``copy.copy(obj)``: a new list, dict or object holding ``obj``'s own items or fields
    (the same arrays, lists, dicts and objects: the sharing analysis counts it as another holder
    of them, normalize/sharing.py), equal to it in value: its cotangent is ``obj``'s."""
    return copy.copy(obj)


def deep_copy(obj):
    """``copy.deepcopy(obj)`` of an object, list, dict or tuple: a new value that shares
    nothing that can change with ``obj`` (bound methods it holds are bound to the copies of
    their objects), equal to it in value: its cotangent is ``obj``'s. A copy that holds one
    array, list or dict in two places (``deepcopy([a, a])``: Python's copy keeps them one) is
    an error: srcgrad would not follow a write through one place to the other."""
    new = copy.deepcopy(obj)
    part = shared_part(new)
    if part is not None:
        raise SrcgradError(
            f"srcgrad does not support this `copy.deepcopy`: the copy holds one "
            f"{type(part).__name__} in two places, and a write through one would change "
            f"the other, which srcgrad does not follow; copy each part on its own")
    return new


def shared_part(value, objects=True):
    """The first ndarray, list or dict that ``value`` holds in two places (in its items,
    theirs, ...; with ``objects``, in the fields of the objects it holds and the objects of
    its bound methods too), or None."""
    parts, seen = set(), set()

    def first(v):
        if isinstance(v, (np.ndarray, list, dict)):
            if id(v) in parts:
                return v
            parts.add(id(v))
        if isinstance(v, (list, tuple)):
            inner = list(v)
        elif isinstance(v, dict):
            inner = list(v.values())
        elif not objects:
            return None
        elif inspect.ismethod(v):
            inner = [v.__self__]
        elif not isinstance(v, (type, np.generic, str, bytes)) and (
                isinstance(getattr(v, "__dict__", None), dict) or hasattr(v, "__slots__")):
            if id(v) in seen:  # (an object held twice: its fields are replaced, not written)
                return None
            seen.add(id(v))
            slots = [n for klass in type(v).__mro__ for n in getattr(klass, "__slots__", ())
                     if isinstance(n, str) and hasattr(v, n)]
            inner = list(getattr(v, "__dict__", {}).values()) + [getattr(v, n) for n in slots]
        else:
            return None
        return next((p for p in map(first, inner) if p is not None), None)

    return first(value)


def replace_field(obj, name, value):
    """``dataclasses.replace(obj, name=value)`` or ``obj._replace(name=value)`` of a namedtuple,
    one field at a time, as a value: a new object, ``obj`` unchanged."""
    kind = kind_of(obj)
    if kind == "namedtuple":
        return obj._replace(**{name: value})
    if kind != "dataclass" or hasattr(type(obj), "__post_init__"):
        what = ("with a `__post_init__` of an object whose class it does not know at transform "
                "time" if kind == "dataclass" else f"of a {type(obj).__name__}")
        raise SrcgradError(
            f"srcgrad cannot differentiate `dataclasses.replace` {what}: annotate it with its "
            f"class, or call the class instead, with every field (`{type(obj).__name__}(...)`)")
    if name not in fields(obj):
        raise PythonTypeError(f"{type(obj).__name__}.__init__() got an unexpected keyword argument "
                        f"'{name}'")
    new = copy.copy(obj)
    object.__setattr__(new, name, value)  # a frozen dataclass too, as `replace` does
    return new


def as_dict(obj):
    """``dataclasses.asdict(obj)`` as Python computes it: a dataclass becomes a dict by field
    name, recursively through dataclasses, lists, tuples (namedtuples too) and dicts; other
    values are deep copies."""
    if kind_of(obj) != "dataclass":
        raise PythonTypeError("asdict() should be called on dataclass instances")
    return _as_dict(obj)


def _as_dict(v):
    kind = kind_of(v)
    if kind == "dataclass":
        return {k: _as_dict(x) for k, x in fields(v).items()}
    if kind == "namedtuple":
        return type(v)(*[_as_dict(x) for x in v])
    if isinstance(v, (list, tuple)) and kind is None:
        return type(v)(_as_dict(x) for x in v)
    if isinstance(v, dict):
        return type(v)((_as_dict(k), _as_dict(x)) for k, x in v.items())
    return copy.deepcopy(v)


def as_dict_grad(g, obj):
    """The cotangent of ``obj`` from that of ``as_dict(obj)`` (a dict by field name for each
    dataclass, a list by position for a list, tuple or namedtuple)."""
    if g is None:
        return None
    kind = kind_of(obj)
    if kind == "dataclass":
        parts = parts_of_any(g, obj) if not isinstance(g, dict) else g
        out = {k: as_dict_grad(parts.get(k), x) for k, x in fields(obj).items()}
        return DictCotangents({k: v for k, v in out.items() if v is not None})
    if isinstance(obj, (list, tuple)):
        return Cotangents(as_dict_grad(e, x) for e, x in zip(g, obj))
    if isinstance(obj, dict):
        return DictCotangents({k: as_dict_grad(g.get(k), x) for k, x in obj.items()})
    return g


def as_dict_tangent(dobj, obj):
    """The tangent of ``as_dict(obj)`` (zeros where ``dobj`` has none), from a tangent or a
    cotangent of ``obj``."""
    kind = kind_of(obj)
    if kind == "dataclass":
        parts = parts_of_any(dobj, obj)
        return {k: as_dict_tangent(parts.get(k), x) for k, x in fields(obj).items()}
    if isinstance(obj, (list, tuple)):
        items = [as_dict_tangent(None if dobj is None else d, x)
                 for d, x in zip(dobj if dobj is not None else obj, obj)]
        return type(obj)(*items) if kind == "namedtuple" else type(obj)(items)
    if isinstance(obj, dict):
        return {k: as_dict_tangent(None if dobj is None else dobj.get(k), x)
                for k, x in obj.items()}
    return zeros_like(obj) if dobj is None else dobj


def own_fields(obj):
    """``vars(obj)`` where it is read at once (``normalize/containers.py``): a new dict of the
    object's instance attributes; a ``TypeError`` as Python's for an object without one."""
    return dict(vars(obj))


def own_fields_grad(g, obj):
    """The cotangent of ``obj`` from that of ``own_fields(obj)``: the same dict by attribute
    name (a cotangent of an object is one)."""
    if g is None:
        return None
    return DictCotangents({k: v for k, v in parts_of_any(g, obj).items() if v is not None})


def own_fields_tangent(dobj, obj):
    """The tangent of ``own_fields(obj)`` (zeros where ``dobj`` has none), from a tangent or a
    cotangent of ``obj``."""
    parts = parts_of_any(dobj, obj)
    return {k: zeros_like(x) if parts.get(k) is None else parts[k] for k, x in vars(obj).items()}


def replace_field_tangent(dobj, dvalue, obj, name):
    """The tangent of ``replace_field(obj, name, value)``: obj's tangent with the field's
    tangent replaced (zeros where a tangent is None)."""
    parts = dict(parts_of_any(dobj, obj))
    parts[name] = dvalue
    return structure_tangent(obj, parts)


def parts_of_any(d, obj):
    """A tangent or cotangent of ``obj`` as a dict by attribute (registered ones included)."""
    if d is None:
        return {}
    if isinstance(d, dict):
        return d
    return vars(d) if kind_of(d) == "registered" else parts_of(d, obj)


def _has_tangent(value):
    return isinstance(value, (float, complex, np.ndarray, np.generic)) and np.asarray(
        value).dtype.kind in "fc" or kind_of(value) is not None
