"""Python's sharing semantics for ``x += v`` on an object other names hold.

``normalize/sharing.py`` writes ``x += v``, where another variable ``r`` may hold the same
object (``r = x``, ``r = [x]``, ``r = {"h": x}``, ``r.append(x)``, a helper's parameter), as

    x_old = x
    x = x_old + v                                  # a new value, differentiated as usual
    x_in_r = shared_positions(r, x_old, 'r', 'x')  # where r holds x's old object (no gradient)
    r = put_shared(r, x_in_r, x)                   # r sees the update, as in Python

``shared_positions`` finds, by identity and at run time, the paths at which ``r`` holds the very
object ``x`` held (``()`` for ``r`` itself, ``(0,)`` for ``r[0]``, deeper for nested containers);
none when that object is immutable (a float is rebound, not updated: nothing else sees it).
An object's fields are searched too (``Field("W")`` in a path: ``self.W`` held it); ``put_shared``
gives such an object a copy with the field replaced, as ``set_field`` does. The object changed
may itself be an object whose field was written (``a.b.c = v``: ``objects=True``).
An array ``r`` that shares memory with it without being it (a view, ``r = x[1:]``) is refused
with an error: the update would change part of ``r``, a dependence srcgrad does not model.
``put_shared`` is linear in ``r`` and ``x``: its adjoint sends the cotangent at those paths to
``x`` and zeros it in ``r``'s.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types

import numpy as np

from ..errors import PythonTypeError, SrcgradError
from .containers import Cotangents, DictCotangents, add, shared_part, zeros_like
from .pytrees import fields, kind_of

# What `x += v` updates in place (a number or a tuple is rebound instead).
MUTABLE = (np.ndarray, list, dict)
# The objects whose fields are searched (a namedtuple is a tuple, searched by position).
OBJECTS = ("dataclass", "namespace", "object", "registered")


class Field:
    """A step of a path into an object's attribute ``name`` (a dict key is the key itself)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Field) and other.name == self.name

    def __hash__(self):
        return hash(("Field", self.name))

    def __repr__(self):
        return f".{self.name}"


def shared_positions(holder, old, name="r", updated="x", objects=False, within=None):
    """The paths at which ``holder`` holds the object ``old`` (see the module docstring);
    ``objects``: ``old`` may be an object whose field was written (``a.b.c = v``); ``within``:
    the container ``old`` was read from (``T[i] += v``): none when it is no list, dict or tuple
    (an array's element, a view or a number of it, is written back into the array)."""
    if within is not None and not isinstance(within, (list, dict, tuple)):
        return []
    if not isinstance(old, MUTABLE) and not (objects and kind_of(old) in OBJECTS):
        return []
    out, cycles = [], []
    _find(holder, old, (), out, {}, cycles, name, updated)
    # a container rebuilt (on a path to the object) that holds itself would lose the cycle
    rebuilt = [(inner, outer) for inner, outer in cycles
               if any(p[:len(outer)] == outer for p in out)]
    if rebuilt:
        inner, outer = rebuilt[0]
        raise SrcgradError(
            f"`{updated} += ...` updates an object that `{name}` holds, and `{_text(name, inner)}` "
            f"is `{_text(name, outer)}` itself: srcgrad gives a holder the update by rebuilding "
            f"it as a new container, which would not hold itself. Build the containers without "
            f"the cycle, or write `{updated} = {updated} + ...`."
        )
    return out


def _text(name, path):
    """The path as the user writes it: ``r[0].W``."""
    return name + "".join(repr(k) if isinstance(k, Field) else f"[{k!r}]" for k in path)


def _find(h, old, path, out, seen, cycles, name, updated):
    if h is old:
        out.append(path)
        return
    if isinstance(h, np.ndarray):
        if isinstance(old, np.ndarray) and np.may_share_memory(h, old):
            where = _text(name, path)
            raise SrcgradError(
                f"`{updated} += ...` updates an array in place, and `{where}` shares memory "
                f"with it without being it (a view such as `{updated}[1:]` or `{updated}.T`): "
                f"it would change too, a dependence srcgrad does not follow. Write "
                f"`{updated} = {updated} + ...`, or take a copy (`.copy()`)."
            )
        return
    # ``seen`` maps the containers on the path to ``h`` to where they were entered: one met
    # again below itself is a cycle (recorded, refused if the object is found); one held at two
    # paths (``L = [inner, inner]``) is searched at each, since ``put_shared`` rebuilds every
    # path that reaches the object
    if isinstance(h, (list, tuple, dict)):
        items = h.items() if isinstance(h, dict) else enumerate(h)
    elif kind_of(h) in OBJECTS:
        items = ((Field(k), e) for k, e in fields(h).items())
    else:
        return
    if id(h) in seen:
        cycles.append((path, seen[id(h)]))
        return
    seen[id(h)] = path
    for k, e in items:
        _find(e, old, path + (k,), out, seen, cycles, name, updated)
    del seen[id(h)]


def put_shared(holder, where, value):
    """``holder`` with ``value`` at each path of ``where`` (containers along them rebuilt)."""
    if not where:
        return holder
    return _put(holder, where, lambda h: value)


def _put(h, paths, leaf):
    if () in paths:
        return leaf(h)
    heads = {}
    for p in paths:
        heads.setdefault(p[0], []).append(p[1:])
    if isinstance(next(iter(heads)), Field):
        return _put_fields(h, heads, leaf)
    if h is None:
        return None  # a cotangent with nothing at the paths, zeroed (``leaf`` gives None)
    if isinstance(h, dict):
        out = type(h)(h) if isinstance(h, DictCotangents) else dict(h)
        for k, rest in heads.items():
            out[k] = _put(h.get(k), rest, leaf)
        return out
    out = list(h)
    for k, rest in heads.items():
        out[k] = _put(h[k], rest, leaf)
    if isinstance(h, Cotangents):
        return Cotangents(out)
    if kind_of(h) == "namedtuple":
        return type(h)(*out)
    return tuple(out) if isinstance(h, tuple) else out


def _put_fields(h, heads, leaf):
    """``_put`` into an object's fields: ``h`` an object (a copy with the fields replaced), a
    cotangent of one (a dict by field name) or None (nothing there: zeroed stays None)."""
    if h is None:
        return None
    if isinstance(h, dict):
        out = type(h)(h) if isinstance(h, DictCotangents) else dict(h)
        for k, rest in heads.items():
            out[k.name] = _put(h.get(k.name), rest, leaf)
        return out
    new = copy.copy(h)
    for k, rest in heads.items():
        object.__setattr__(new, k.name, _put(getattr(h, k.name), rest, leaf))
    return new


def _at(g, path):
    for k in path:
        if g is None:
            return None
        if isinstance(k, Field):
            g = g.get(k.name) if isinstance(g, dict) else getattr(g, k.name, None)
        else:
            g = g.get(k) if isinstance(g, dict) else g[k]
    return g


def _sparse(holder):
    """A cotangent of ``holder``'s structure with nothing in it (``None`` elements)."""
    if isinstance(holder, dict):
        return DictCotangents({k: _sparse_leaf(v) for k, v in holder.items()})
    if isinstance(holder, (list, tuple)):
        return Cotangents(_sparse_leaf(v) for v in holder)
    if kind_of(holder) in OBJECTS:
        return DictCotangents({k: _sparse_leaf(v) for k, v in fields(holder).items()})
    return None


def _sparse_leaf(v):
    return _sparse(v) if isinstance(v, (list, tuple, dict)) or kind_of(v) in OBJECTS else None


def put_shared_grad_holder(dy, where, holder=None):
    """The adjoint of ``put_shared`` for ``holder``: ``dy`` with zeros at the paths."""
    if dy is None or not where:
        return dy
    if () in where:  # the holder is replaced whole: nothing of it reaches the result (zeros of
        # the holder's own structure: `other = L; L += [v]` gives other a longer list)
        return zeros_like(dy if holder is None else holder)
    return _put(dy, where, lambda h: None)


def put_shared_grad_value(dy, holder, where, value):
    """The adjoint of ``put_shared`` for ``value``: the sum of ``dy`` at the paths."""
    total = None
    for p in where:
        total = add(total, _at(dy, p))
    return zeros_like(value) if total is None else total


def put_at_paths(g, holder, where, value):
    """The adjoint of ``put_shared_grad_value``: ``g`` at every path of a sparse cotangent."""
    if not where:  # a zero of the holder's structure (an array's, which generated code adds)
        sparse = _sparse(holder)
        return zeros_like(holder) if sparse is None else sparse
    if () in where:
        return g
    return _put(_sparse(holder), where, lambda h: g)


def put_shared_tangent(dholder, dvalue, holder, where, value):
    """The tangent of ``put_shared``."""
    if not where:
        return zeros_like(holder) if dholder is None else dholder
    dvalue = zeros_like(value) if dvalue is None else dvalue
    if () in where:
        return dvalue
    base = zeros_like(holder) if dholder is None else dholder
    return _put(base, where, lambda h: dvalue)


def check_argument_parts(x, text, names="", *others):
    """The argument ``text`` (``x``), which the function writes into, against what a write
    through one place would change elsewhere, which srcgrad does not follow for an argument (it
    writes into a copy of ``x``, item by item): a wrong value, so an error.

    - ``x``, a list, tuple or dict whose parts (its items, theirs, ...) hold one ndarray, list
      or dict in two places, or two arrays that share memory (``[b, b[:2]]``): Python's
      ``L[0] += v`` changes that array in place, so ``L[1]`` sees it too;
    - ``x`` sharing an array, list, dict or object with another argument or a value the
      function reads from outside (``others``, named by the words of ``names``), in itself, an
      item or a field: ``f(b, b)`` with ``y += x``, ``f(x, [x])``, an argument that views
      another (``f(A[0], A)``), a global array passed as ``x`` (``f(G)``).

    A list or dict the function makes itself is followed at transform time (sharing.py)."""
    part = shared_part(x, objects=False) if isinstance(x, (list, tuple, dict)) else None
    if part is None and isinstance(x, (list, tuple, dict)):
        part = _overlapping([(a, 0) for a in _parts(x, objects=False)], 0)
    if part is not None:
        raise SrcgradError(
            f"the argument `{text}` holds one {type(part).__name__} in two places, and the "
            f"function writes into `{text}`: in Python a write through one place "
            f"(`{text}[0] += v`) changes the other too, which srcgrad does not follow for an "
            f"argument. Pass distinct values (`[b, b.copy()]`)"
        )
    check_arguments_apart(x, text, names, *others)


def check_arguments_apart(x, text, names="", *others):
    """``x``, the argument ``text``, which ``x op= v`` may update in place (through any name:
    ``y = x; y += v``), shares nothing with another argument (``others``, named by the words of
    ``names``): Python would change that one too. Places within ``x`` that hold one array are
    followed (normalize/sharing.py's ``shared_positions``)."""
    if not others:
        return
    own = _parts(x)
    mine = {id(p) for p in own}
    for name, other in zip(names.split(), others):
        theirs = _parts(other, held=True)
        part = next((p for p in theirs if id(p) in mine), None)
        if part is None:
            part = _overlapping([(a, 0) for a in own] + [(a, 1) for a in theirs], 1)
        if part is not None:
            raise SrcgradError(
                f"the arguments `{text}` and `{name}` share one {type(part).__name__} (the "
                f"same value passed twice, held in both, or an array and a view of it; or "
                f"`{name}` is read from outside the function), and the function writes into "
                f"`{text}`: in Python the write changes `{name}` too, which srcgrad does not "
                f"follow for arguments. Pass distinct values (`f(b, b.copy())`)"
            )


def _parts(value, objects=True, held=False):
    """The ndarrays, lists, dicts and (with ``objects``) objects ``value`` is or holds, through
    items and fields, each once."""
    out, seen = [], set()

    def visit(v):
        if id(v) in seen:
            return
        if isinstance(v, (list, tuple, dict)):
            seen.add(id(v))
            if not isinstance(v, tuple):
                out.append(v)
            for item in (v.values() if isinstance(v, dict) else v):
                visit(item)
        elif isinstance(v, np.ndarray):
            seen.add(id(v))
            out.append(v)
        elif objects and _is_object(v):
            seen.add(id(v))
            out.append(v)
            for field in fields_of(v, held):
                visit(field)

    visit(value)
    return out


def _is_object(v):
    """Whether ``v`` is an object with fields of its own (not a class, module, function,
    bound method, partial or NumPy scalar, whose attributes no argument shares; an object with
    ``__call__`` is one, and so is srcgrad's own). Shared with normalize/inplace.py."""
    return (not isinstance(v, (type, np.generic, str, bytes, types.ModuleType))
            and not routine(v)
            and not (type(v).__module__ or "").startswith("srcgrad")
            and (isinstance(getattr(v, "__dict__", None), dict) or hasattr(v, "__slots__")))


def routine(v):
    """Whether ``v`` is a function, method, ufunc or partial (not an object whose class has
    ``__call__``: ``grad(Loss(W))`` reads ``self.W``)."""
    return inspect.isroutine(v) or isinstance(v, (functools.partial, np.ufunc))


def fields_of(v, held=False):
    """The values of an object's fields (``__dict__`` and ``__slots__``); with ``held``, also
    the arrays, lists, dicts and tuples its class (or a base class) holds and what its
    properties give: ``self.W`` may read a class attribute ``W`` the object does not set (not
    for the written argument: two objects of one class share its class attributes)."""
    slots = [n for klass in type(v).__mro__ for n in getattr(klass, "__slots__", ())
             if isinstance(n, str) and hasattr(v, n)]
    own = getattr(v, "__dict__", {})
    if not held:
        return list(own.values()) + [getattr(v, n) for n in slots]
    kept = [value for klass in type(v).__mro__[:-1] for name, value in vars(klass).items()
            if name not in own and isinstance(value, (np.ndarray, list, dict, tuple))
            and not name.startswith("__")]
    return list(own.values()) + [getattr(v, n) for n in slots] + kept + _properties(v)


def _properties(v):
    """What ``v``'s properties give (``obj.W`` may return a global array): each read once, as
    the function would; one that raises gives nothing."""
    out = []
    for name in sorted({n for klass in type(v).__mro__[:-1] for n, d in vars(klass).items()
                        if isinstance(d, property)}):
        try:
            out.append(getattr(v, name))
        except Exception:  # noqa: BLE001 (a property the function may never read)
            pass
    return out


_byte_bounds = getattr(getattr(np.lib, "array_utils", None), "byte_bounds", None) or getattr(
    np, "byte_bounds", None)  # (NumPy 2 moved it)


def _overlapping(tagged, other):
    """The first array of ``tagged`` (pairs of an array and a tag) that shares memory with
    another array there of tag ``other`` (with ``other`` 0, any other array), or None. Arrays
    sorted by their first byte: only neighbours whose bytes overlap are compared exactly."""
    spans = sorted(((*_byte_bounds(a), n, a, tag) for n, (a, tag) in enumerate(tagged)
                    if isinstance(a, np.ndarray) and a.size), key=lambda s: s[0])
    for i, (_, high, _, a, tag) in enumerate(spans):
        for low2, _, _, b, tag2 in spans[i + 1:]:
            if low2 >= high:
                break
            if (other == 0 or tag != tag2) and np.shares_memory(a, b):
                return b
    return None


def check_element_written(inner, text):
    """``x[i][j] = v`` (``a.b[i] = v``), for ``inner`` the object ``x[i]`` (``a.b``) holds:
    normalize/containers.py writes into a copy of it that ``element_written`` then puts wherever
    ``inner`` is held, as Python changes that object in place. A list, dict or array of its own
    only: an array that views another one (``A[i]`` of a 2-D ``A``) would change that array
    too, and anything else has no element to write (Python's ``TypeError``)."""
    if isinstance(inner, np.ndarray) and inner.base is not None:
        raise SrcgradError(
            f"`{text}[...] = ...` writes into `{text}`, an array that views another one (a row "
            f"of a 2-D array, `A[i]`, is a view of `A`): the write changes that array too, which "
            f"srcgrad does not follow here. Index the array once, `A[i, j] = v`, or hold a copy "
            f"(`.copy()`)"
        )
    if isinstance(inner, np.flatiter):
        raise SrcgradError(
            f"`{text}[...] = ...` writes through `.flat`, which srcgrad does not follow: write "
            f"`np.put(A, indices, v)` (indices into the flattened array) or index the array "
            f"itself (`A[i, j] = v`)"
        )
    if not isinstance(inner, (list, dict, np.ndarray)):
        raise PythonTypeError(
            f"'{type(inner).__name__}' object does not support item assignment (`{text}[...] "
            f"= ...`)"
        )
    return None


def element_written(inner, written):
    """``inner = element_written(inner, written)`` marks, for normalize/sharing.py, that the
    object ``inner`` held changed in place into ``written`` (a copy of it with an element
    written): every holder of the old object gets ``written``. Never left in generated code."""
    raise SrcgradError("internal error: an element write into an element was not rewritten")
