"""The few helpers generated code calls.

Generated code is plain Python + NumPy plus these functions. Each has a gradient rule of its own
(``rules/runtime_rules.py``), because generated code is itself valid input to every transform.
Helpers keep types faithful: a gradient for a Python float is a float, for an array an array of
the same shape.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import NonScalarOutputError, SeedShapeError, SrcgradError, TangentShapeError


def unbroadcast(g, x):
    """Sum ``g`` back to the shape of ``x``, undoing NumPy broadcasting."""
    if isinstance(g, float):
        # A contribution has the shape of the operation's result, and a scalar result means
        # scalar operands: nothing was broadcast.
        return g
    if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)):
        # `+` or `*` between Python sequences concatenates or repeats them: not arithmetic
        raise SrcgradError(
            "`+` or `*` on a list or tuple (concatenation or repetition) is not differentiable "
            "by srcgrad; build the list with a literal, `append` or a comprehension instead"
        )
    gshape = getattr(g, "shape", None)
    shape = getattr(x, "shape", None)
    if gshape is not None and gshape == shape:
        return g
    if (
        gshape is not None
        and shape is not None
        and len(gshape) > len(shape)
        and gshape[len(gshape) - len(shape):] == shape
    ):
        # the usual case: leading batch axes broadcast in front of x
        lead = len(gshape) - len(shape)
        return np.add.reduce(g, axis=0 if lead == 1 else tuple(range(lead)))
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    if (
        len(gshape) == len(shape)
        and isinstance(g, np.ndarray)
        and all(n == m or n == 1 for n, m in zip(shape, gshape))
    ):
        # the other common case: axes of length one in x (keepdims results, biases)
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and gshape[i] != 1)
        return np.add.reduce(g, axis=axes, keepdims=True)
    g = np.asarray(g)
    if g.ndim < len(shape) or any(n != 1 and m == 1 for n, m in zip(shape[::-1], gshape[::-1])):
        g = np.broadcast_to(g, np.broadcast_shapes(g.shape, shape))
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if not shape and not isinstance(x, np.ndarray):
        return g[()]
    return g


def _expand(dy, ndim, axis, keepdims):
    if axis is None or keepdims:
        return dy
    axes = axis if isinstance(axis, tuple) else (axis,)
    return np.expand_dims(dy, tuple(a % ndim for a in axes))


_SHAPE_VIEWS: dict = {}


def _broadcast_shape(shapes):
    """``np.broadcast_shapes``, a few times faster for the handful of small shapes here."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[i] != 1 and out[i] != n:
                    return np.broadcast_shapes(*shapes)  # raises the usual error
                out[i] = n
    return tuple(out)


def shape_like(*values):
    """A zero-strided view with the broadcast shape of ``values``: a shape reference for the
    helpers above that holds no memory (a value read only for its shape need not be kept)."""
    if len(values) == 1 and isinstance(values[0], np.ndarray):
        shape = values[0].shape
    else:
        shape = _broadcast_shape([np.shape(v) for v in values])
    view = _SHAPE_VIEWS.get(shape)
    if view is None:
        if len(_SHAPE_VIEWS) > 256:
            _SHAPE_VIEWS.clear()
        view = _SHAPE_VIEWS[shape] = np.broadcast_to(np.empty(()), shape)
    return view


def unreduce(dy, x, axis=None, keepdims=False):
    """The adjoint of a sum: spread ``dy`` over the reduced axes of ``x``.

    The result is a read-only broadcast view of ``dy``: every element of a reduced axis gets the
    same value, so nothing is copied. Generated code never updates it with ``+=``; ``zero_item``
    and ``add_at`` copy it before updating it; and a gradient that may be such a view is returned
    as a copy (``copy_grad``).
    """
    shape = np.shape(x)
    if not shape and not isinstance(x, np.ndarray):
        return dy
    if isinstance(dy, float):
        dy = np.array(dy)
    else:
        dy = np.asarray(_expand(dy, len(shape), axis, keepdims), np.result_type(dy, float))
    return _broadcast_view(dy, shape)


def _broadcast_view(a, shape):
    """``np.broadcast_to(a, shape)`` (a read-only view), a few times faster for a scalar ``a``
    or one with the axes of ``shape``."""
    if a.ndim == 0:
        strides = (0,) * len(shape)
    elif (
        a.ndim == len(shape)
        and a.flags.c_contiguous
        and all(n == m or n == 1 for n, m in zip(a.shape, shape))
    ):
        strides = tuple(0 if n == 1 else s for n, s in zip(a.shape, a.strides))
    else:
        return np.broadcast_to(a, shape)
    view = np.ndarray(shape, a.dtype, a, 0, strides)
    view.flags.writeable = False
    return view


def mean_grad(dy, x, axis=None, keepdims=False):
    """The adjoint of a mean: ``dy`` divided by the count, spread over the reduced axes."""
    shape = np.shape(x)
    if axis is None:
        count = int(np.prod(shape))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        count = int(np.prod([shape[a] for a in axes]))
    return unreduce(np.divide(dy, count), x, axis, keepdims)


class Cotangents(list):
    """The adjoint of a tuple or list: one cotangent per element, ``None`` for a zero one.

    ``+`` adds elementwise (Python's ``+`` on sequences would concatenate), so generated code
    accumulates container adjoints exactly like array adjoints.
    """

    def __add__(self, other):
        if other is None:
            return self
        if isinstance(other, dict):
            raise TypeError("cannot add the cotangents of a sequence and of a dict")
        if len(other) != len(self):
            raise ValueError(
                f"cotangents of sequences of different lengths: {len(self)} and {len(other)}"
            )
        return Cotangents(add(a, b) for a, b in zip(self, other))

    __radd__ = __add__
    __iadd__ = __add__  # `d += c` in generated code adds too (list's += would extend)


class DictCotangents(dict):
    """The adjoint of a dict: cotangents by key; a missing key has a zero cotangent."""

    def __add__(self, other):
        if other is None:
            return self
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
    if isinstance(a, (tuple, list)) and not isinstance(a, Cotangents):
        a = Cotangents(a)
    return a + b


def elem(dy, key, x):
    """The cotangent of element ``key`` of a container from the container's cotangent ``dy``."""
    if dy is None:
        return zeros_like(x)
    g = dy.get(key) if isinstance(dy, dict) else dy[key]
    return zeros_like(x) if g is None else g


def as_like(g, x):
    """A gradient with the structure of ``x``: list for a list, tuple for a tuple, dict for a
    dict, zeros where nothing flowed; arrays and numbers pass through, but an array that may
    share memory with another element's (``sum(xs)`` gives each element the same cotangent) is
    copied, so that updating one element's gradient in place leaves the others alone."""
    return _as_like(g, x, {})


def _as_like(g, x, held):
    """``held``: id(base array) -> the elements' arrays on it so far."""
    if isinstance(x, dict):
        g = g or {}
        return {k: _as_like(g.get(k), v, held) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        parts = [_as_like(None if g is None else g[i], v, held) for i, v in enumerate(x)]
        return type(x)(parts) if type(x) in (tuple, list) else parts
    if g is None:
        return zeros_like(x)
    if isinstance(g, np.ndarray):
        base = g
        while isinstance(base.base, np.ndarray):
            base = base.base
        others = held.setdefault(id(base), [])
        if any(np.may_share_memory(g, other) for other in others):
            return np.array(g)
        others.append(g)
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


def list_pop(items):
    """``items.pop()`` for its effect, as a value: ``stack = list_pop(stack)``."""
    items.pop()
    return items


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
    """The adjoint of the builtin ``sum(items)``: ``dy`` for every element, unbroadcast."""
    return Cotangents(unbroadcast(dy, x) for x in items)


def getitem_grad(dy, x, index):
    """The adjoint of ``x[index]``: zeros of x's shape with ``dy`` added at ``index``.

    Repeated integer indices accumulate (``np.add.at``), as the chain rule requires. For a tuple,
    list or dict ``x`` the result is sparse: ``None`` everywhere but at ``index``.
    """
    if isinstance(x, dict):
        return DictCotangents({index: dy})
    if isinstance(x, (tuple, list)):
        g = Cotangents([None] * len(x))
        if isinstance(index, slice):
            for i, d in zip(range(*index.indices(len(x))), dy):
                g[i] = d
        else:
            g[index] = dy
        return g
    g = np.zeros(np.shape(x), dtype=np.result_type(dy, float))
    if _is_basic(index):
        g[index] = dy
    else:
        np.add.at(g, index, dy)
    return g


def add_at(acc, index, dy):
    """``acc`` plus the adjoint of ``x[index]``, added in place into ``acc``.

    Generated code calls this only on an adjoint buffer it created itself, so the update touches
    nothing else; it keeps ``x[i]`` inside a loop O(1) per iteration instead of O(len(x)). A
    read-only ``acc`` (the broadcast view ``unreduce`` returns) is copied before the first update.
    """
    if type(acc) is np.ndarray and not acc.flags.writeable:
        acc = np.array(acc)
    if type(acc) is np.ndarray:
        if type(index) is int or _is_basic(index):
            acc[index] += dy
        else:
            np.add.at(acc, index, dy)
        return acc
    if isinstance(acc, (Cotangents, DictCotangents)):
        if isinstance(index, slice):
            for i, d in zip(range(*index.indices(len(acc))), dy):
                acc[i] = add(acc[i], d)
        else:
            acc[index] = add(acc.get(index) if isinstance(acc, dict) else acc[index], dy)
    elif _is_basic(index):
        acc[index] += dy
    else:
        np.add.at(acc, index, dy)
    return acc


def astype(x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """``x.astype(dtype)``: as a function, so it can carry a rule."""
    return np.asarray(x).astype(dtype, order=order, casting=casting, subok=subok, copy=copy)


class _Unset:
    def __repr__(self):
        return "UNSET"


UNSET = _Unset()  # an optional parameter not passed by keyword


def bind_optional(rest, given, defaults, name):
    """Split ``*rest`` into optional parameters and the last positional argument.

    ``given`` holds what came by keyword for each optional parameter (``UNSET`` if nothing).
    """
    if not rest:
        raise TypeError(f"{name}() missing its last positional argument (the seed or tangent)")
    *positional, last = rest
    if len(positional) > len(defaults):
        raise TypeError(f"{name}() takes at most {len(defaults)} optional positional arguments "
                        f"before the last one, got {len(positional)}")
    values = []
    for i, default in enumerate(defaults):
        if i < len(positional):
            if given[i] is not UNSET:
                raise TypeError(f"{name}() got multiple values for an optional argument")
            values.append(positional[i])
        else:
            values.append(default if given[i] is UNSET else given[i])
    return (*values, last)


def single_output(value, name="f"):
    """``value``, which must be one array or scalar for a Jacobian."""
    if isinstance(value, (tuple, list, dict)):
        from .errors import SrcgradError

        raise SrcgradError(
            f"jacobian needs {name} to return one array or scalar; it returned a "
            f"{type(value).__name__}. Take the Jacobian of each output separately."
        )
    return value


def unit_basis(like, i):
    """The ``i``-th unit vector shaped like ``like`` (1.0 for a scalar), in C order."""
    if np.ndim(like) == 0 and not isinstance(like, np.ndarray):
        return 1.0
    e = np.zeros(np.shape(like), dtype=np.result_type(like, float))
    e.flat[i] = 1.0
    return e


def stack_rows(rows, value, x):
    """A Jacobian from one gradient per output element: shape ``value.shape + x.shape``."""
    if np.ndim(value) == 0 and len(rows) == 1:
        return rows[0]
    return np.reshape(np.stack([np.asarray(r) for r in rows]), np.shape(value) + np.shape(x))


def stack_columns(columns, value, x):
    """A Jacobian from one tangent per input element: shape ``value.shape + x.shape``."""
    if np.ndim(x) == 0 and len(columns) == 1:
        return columns[0]
    stacked = np.stack([np.asarray(c) for c in columns], axis=-1)
    return np.reshape(stacked, np.shape(value) + np.shape(x))


def unstack_rows(d, value, x):
    """The adjoint of ``stack_rows``: one cotangent per row."""
    flat = np.reshape(d, (int(np.size(value)),) + np.shape(x))
    return Cotangents(flat[i] for i in range(flat.shape[0]))


def unstack_columns(d, value, x):
    """The adjoint of ``stack_columns``: one cotangent per column."""
    flat = np.reshape(d, np.shape(value) + (int(np.size(x)),))
    return Cotangents(flat[..., j] for j in range(flat.shape[-1]))


def check_not_view(value, base, name, base_name):
    """Refuse a view of an array that the function writes into later (``r = M[0]; M[0, 1] = v``)."""
    if isinstance(value, np.ndarray) and np.may_share_memory(value, base):
        from .errors import SrcgradError

        raise SrcgradError(
            f"`{name}` is a view of `{base_name}`, which is written into afterwards, so it "
            f"changes with the write: srcgrad does not follow that. Take a copy "
            f"(`{name} = {base_name}[...].copy()`)."
        )


def check_not_array(value, name):
    """Refuse ``y += v`` on an array that another variable shares (``y = x; y += v``)."""
    if isinstance(value, np.ndarray):
        from .errors import SrcgradError

        raise SrcgradError(
            f"`{name} += ...` updates an array in place that another variable of the function "
            f"shares (it was assigned from it, or is a view of it); srcgrad does not follow "
            f"such aliasing. Write `{name} = {name} + ...`, or make `{name}` a copy first."
        )
    return value


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


def fresh_copy(x):
    """A copy of an argument that the function writes into: the caller's value stays intact."""
    if isinstance(x, list):
        return list(x)
    if isinstance(x, dict):
        return dict(x)
    return np.array(x, copy=True)


def setitem(a, index, value):
    """``a[index] = value``, as a value: generated code writes ``y = setitem(y, i, v)``."""
    a[index] = value
    return a


def copy_item(a, index):
    """A copy of ``a[index]``: the values a write is about to overwrite."""
    return np.array(a[index], copy=True)


def restore_item(a, index, saved):
    """Put back values saved by ``copy_item``; returns ``a``."""
    a[index] = saved
    return a


def take_item(d, index):
    """A copy of ``d[index]`` (never a view: ``d`` is updated in place afterwards)."""
    if isinstance(d, (list, dict)):
        g = d.get(index) if isinstance(d, dict) else d[index]
        return 0.0 if g is None else g
    g = np.array(d[index], copy=True)
    if not _is_basic(index):
        # `y[[0, 0]] = v`: of repeated indices only the last write lands, so only it gets gradient
        positions = np.arange(np.size(d)).reshape(np.shape(d))[index]
        flat = positions.ravel()
        _, last_from_end = np.unique(flat[::-1], return_index=True)
        landed = np.zeros(flat.size, dtype=bool)
        landed[flat.size - 1 - last_from_end] = True
        g = np.where(landed.reshape(positions.shape), g, 0.0)
    return g[()]


def zero_item(d, index):
    """``d`` with zeros at ``index``, in place: the adjoint of values a write overwrote.

    A read-only ``d`` (the broadcast view ``unreduce`` returns) is copied first."""
    if isinstance(d, np.ndarray) and not d.flags.writeable:
        d = np.array(d)
    d[index] = None if isinstance(d, (list, dict)) else 0.0
    return d


def copy_array(a):
    """A private copy of an adjoint array (or of the cotangents of a list or dict)."""
    if isinstance(a, dict):
        return DictCotangents(a)
    if isinstance(a, (list, tuple)):
        return Cotangents(a)
    return np.array(a, dtype=np.result_type(a, float), copy=True)


def _is_basic(index):
    if isinstance(index, tuple):
        return all(_is_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


def _ndim(a):
    return a.ndim if isinstance(a, np.ndarray) else np.ndim(a)


def _swap(a):
    return np.swapaxes(a, -1, -2)


def matmul_vjp_left(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, for every combination of ranks."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return dy @ b.T
    if a_nd == 2 and b_nd == 1:
        return np.outer(dy, b)
    if b_nd == 1:
        g = np.multiply.outer(dy, b) if a_nd > 1 else np.multiply(dy, b)
    elif a_nd == 1:
        g = np.matmul(b, np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(dy, _swap(b))
    return unbroadcast(g, a)


def matmul_vjp_right(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, for every combination of ranks."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ dy
    if a_nd == 2 and b_nd == 1:
        return a.T @ dy
    if a_nd == 1 and b_nd == 2:
        return np.outer(a, dy)
    if a_nd == 1 and b_nd == 1:
        g = np.multiply(dy, a)
    elif a_nd == 1:
        g = np.multiply(np.expand_dims(a, -1), np.expand_dims(dy, -2))
    elif b_nd == 1:
        g = np.matmul(_swap(a), np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(_swap(a), dy)
    return unbroadcast(g, b)


def dot_vjp_left(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, b), a)
    _check_dot(a, b)
    return matmul_vjp_left(dy, a, b)


def dot_vjp_right(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, a), b)
    _check_dot(a, b)
    return matmul_vjp_right(dy, a, b)


def _check_dot(a, b):
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NotImplementedError(
            f"srcgrad differentiates np.dot for arrays of up to 2 dimensions; got shapes "
            f"{np.shape(a)} and {np.shape(b)}. Use np.matmul or np.tensordot for stacked arrays."
        )


def copy_grad(g):
    """A returned gradient the caller owns: a writable copy of ``g`` (of each array in it, for a
    tuple, list or dict). Generated code calls it only where ``g`` may be a read-only broadcast
    view, an argument of the call, or an array another returned gradient holds."""
    if isinstance(g, np.ndarray):
        return np.array(g, copy=True)
    if isinstance(g, dict):
        return type(g)((k, copy_grad(v)) for k, v in g.items())
    if isinstance(g, (tuple, list)):
        return type(g)(copy_grad(v) for v in g)
    return g


def zeros_like(x):
    """A zero gradient for ``x``: ``0.0`` for a Python scalar, a float array otherwise, and
    zeros of the same structure for a tuple, list or dict."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=np.result_type(x, float))
    if isinstance(x, dict):
        return DictCotangents({k: zeros_like(v) for k, v in x.items()})
    if isinstance(x, (tuple, list)):
        return Cotangents(zeros_like(v) for v in x)
    if np.ndim(x) == 0:
        return 0.0
    return np.zeros(np.shape(x))


def unit_seed(out, name="the function"):
    """The seed of ``grad``: 1 shaped like the output, which must have exactly one element."""
    if isinstance(out, (float, int)) and not isinstance(out, bool):
        return 1.0
    shape = np.shape(out)
    if int(np.prod(shape)) != 1:
        raise NonScalarOutputError(shape, name)
    if isinstance(out, np.ndarray):
        return np.ones(shape, dtype=np.result_type(out, float))
    return 1.0


def check_seed(seed, out):
    """A ``vjp`` seed must have the shape (and for a tuple output, the structure) of the output."""
    if isinstance(out, (tuple, list)):
        if not isinstance(seed, (tuple, list)) or len(seed) != len(out):
            raise SeedShapeError(_structure(seed), _structure(out))
        return Cotangents(check_seed(s, o) for s, o in zip(seed, out))
    if np.shape(seed) != np.shape(out):
        raise SeedShapeError(np.shape(seed), np.shape(out))
    return seed


def _structure(x):
    if isinstance(x, (tuple, list)):
        return tuple(np.shape(v) for v in x)
    return np.shape(x)


def check_tangent(tangent, x, name="x"):
    """A ``jvp`` tangent must have the shape of the argument it perturbs."""
    if np.shape(tangent) != np.shape(x):
        raise TangentShapeError(np.shape(tangent), np.shape(x), name)
    return tangent


def broadcast_like(t, y):
    """``t`` broadcast to the shape of ``y``: the tangent of an operand NumPy broadcast into ``y``.

    The counterpart of ``unbroadcast``, which sums back down; each is the other's adjoint.
    """
    shape = np.shape(y)
    if np.shape(t) == shape:
        return t
    return np.array(np.broadcast_to(t, shape), dtype=np.result_type(t, float))


# --- helpers of the NumPy rule library (rules/numpy_rules.py, rules/linalg_rules.py) ----------
#
# Each takes the cotangent ``dy`` first and returns a contribution with the shape of the operand
# it is named after. A Python scalar operand gets a Python float back.


def _like(g, x):
    """``g`` as a gradient for ``x``: a float for a Python scalar, an array of x's shape else."""
    if not isinstance(x, np.ndarray) and np.ndim(x) == 0:
        return float(np.reshape(g, ()))
    return np.reshape(g, np.shape(x))


def _axes(axis, ndim):
    """``axis`` (None, an int or a tuple, possibly negative) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axes))


def _count(shape, axis):
    return math.prod(shape[a] for a in _axes(axis, len(shape)))


def mT(x):
    """The transpose of the last two axes: every matrix of a stack transposed."""
    return np.swapaxes(x, -1, -2)


def inverse_permutation(axes):
    """The axes that undo ``np.transpose(x, axes)`` (None undoes None: reversal)."""
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))


def reshape_like(g, x, order="C"):
    """The adjoint of a reshape: ``g`` with the shape of ``x`` (a float for a Python scalar)."""
    if order != "C" and np.ndim(x):
        return np.reshape(g, np.shape(x), order=order)
    return _like(g, x)


def between(a, lo, hi):
    """1.0 where ``lo <= a <= hi`` (a bound of None is no bound), else 0.0: the mask of clip."""
    inside = np.ones(np.shape(a), dtype=bool)
    if lo is not None:
        inside = inside & (a >= lo)
    if hi is not None:
        inside = inside & (a <= hi)
    return inside.astype(float)


def sinc_derivative(x, y):
    """d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, which is 0 at x = 0."""
    x = np.asarray(x, dtype=float)
    zero = x == 0
    safe = np.where(zero, 1.0, x)
    return np.where(zero, 0.0, (np.cos(np.pi * safe) - y) / safe)


def _last(a, axis):
    """``a`` with the axes in ``axis`` moved to the end and merged into one, and the way back."""
    a = np.asarray(a)
    reduced = _axes(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in reduced]
    order = kept + list(reduced)
    moved = np.transpose(a, order)
    merged = moved.reshape(moved.shape[: len(kept)] + (-1,))

    def back(g):
        return np.transpose(np.reshape(g, moved.shape), np.argsort(order))

    return merged, back


def prod_grad(dy, a, axis=None, keepdims=False):
    """The adjoint of a product: ``dy`` times the product of the other factors (exact at zeros)."""
    if np.ndim(a) == 0:
        return _like(dy, a)
    merged, back = _last(np.asarray(a, dtype=float), axis)
    ones = np.ones(merged.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, merged[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, merged[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return back(before * after) * _expand(dy, np.ndim(a), axis, keepdims)


def chooser_grad(dy, a, y, axis=None, keepdims=False):
    """The adjoint of max/min: ``dy`` split equally among the elements equal to the result ``y``."""
    if np.ndim(a) == 0:
        return _like(dy, a)
    ndim = np.ndim(a)
    yk = _expand(y, ndim, axis, keepdims)
    chosen = a == yk
    if np.isnan(yk).any():
        chosen |= np.isnan(a) & np.isnan(yk)  # a NaN maximum chose the NaNs
    dyk = _expand(dy, ndim, axis, keepdims)
    # Every reduced slice holds its own maximum, so one chosen element per slice in all means
    # no ties anywhere: nothing to split (a whole-array count is much cheaper than per slice).
    if np.count_nonzero(chosen) * _count(np.shape(a), axis) == chosen.size:
        return dyk * chosen
    count = np.sum(chosen, axis=axis, keepdims=True)
    return dyk * chosen / np.maximum(count, 1)


def ptp_grad(dy, a, axis=None, keepdims=False):
    """The adjoint of ``np.ptp``: ``dy`` to the maxima, ``-dy`` to the minima."""
    hi = np.max(a, axis=axis, keepdims=keepdims)
    lo = np.min(a, axis=axis, keepdims=keepdims)
    return chooser_grad(dy, a, hi, axis, keepdims) - chooser_grad(dy, a, lo, axis, keepdims)


def var_grad(dy, a, axis=None, ddof=0, keepdims=False):
    """The adjoint of ``np.var``: ``2 dy (a - mean) / (N - ddof)``."""
    if np.ndim(a) == 0:
        return _like(0.0 * dy, a)
    centered = a - np.mean(a, axis=axis, keepdims=True)
    n = _count(np.shape(a), axis)
    return _expand(dy, np.ndim(a), axis, keepdims) * 2.0 * centered / (n - ddof)


def cumsum_grad(dy, a, axis=None):
    """The adjoint of a cumulative sum: a cumulative sum from the other end."""
    if axis is None:
        flat = np.ravel(dy)
        return _like(np.cumsum(flat[::-1])[::-1], a)
    return np.flip(np.cumsum(np.flip(dy, axis), axis=axis), axis)


def cumprod_grad(dy, a, axis=None):
    """The adjoint of a cumulative product, exact when ``a`` has zeros.

    With ``P_j`` the product of the elements before ``j``, ``grad_j = P_j * S_j`` where
    ``S_j = dy_j + a_(j+1) * S_(j+1)`` runs backwards along the axis.
    """
    if axis is None:
        return _like(cumprod_grad(np.ravel(dy), np.ravel(a), 0), a)
    a0 = np.moveaxis(np.asarray(a, dtype=float), axis, 0)
    d0 = np.moveaxis(np.asarray(dy, dtype=float), axis, 0)
    s = np.empty_like(d0)
    s[-1] = d0[-1]
    for j in range(len(a0) - 2, -1, -1):
        s[j] = d0[j] + a0[j + 1] * s[j + 1]
    before = np.cumprod(np.concatenate([np.ones_like(a0[:1]), a0[:-1]]), axis=0)
    return np.moveaxis(before * s, 0, axis)


def _weights(a, axis, weights):
    w = np.asarray(weights, dtype=float)
    if w.shape == np.shape(a):
        return w
    shape = [1] * np.ndim(a)
    shape[axis] = w.shape[0]
    return w.reshape(shape)


def average_grad(dy, a, axis=None, weights=None, keepdims=False):
    """The adjoint of ``np.average`` with respect to ``a``."""
    if weights is None:
        return mean_grad(dy, a, axis, keepdims)
    w = _weights(a, axis, weights)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    return _expand(dy, np.ndim(a), axis, keepdims) * w / total


def average_weights_grad(dy, a, y, axis=None, weights=None, keepdims=False):
    """The adjoint of ``np.average`` with respect to ``weights``: ``dy (a - y) / sum(w)``."""
    w = _weights(a, axis, weights)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=True)
    ndim = np.ndim(a)
    g = _expand(dy, ndim, axis, keepdims) * (a - _expand(y, ndim, axis, keepdims)) / total
    return unbroadcast(g, w).reshape(np.shape(weights))


def diagonal_grad(dy, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.diagonal``: ``dy`` written onto that diagonal of zeros."""
    g = np.zeros(np.shape(a), dtype=np.result_type(dy, float))
    view = np.moveaxis(g, (axis1, axis2), (-2, -1))
    n = np.shape(dy)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    view[..., rows, cols] = dy
    return g


def trace_grad(dy, a, offset=0, axis1=0, axis2=1):
    """The adjoint of ``np.trace``: ``dy`` on every element of the diagonal."""
    n = np.diagonal(a, offset, axis1, axis2).shape[-1]
    dy = np.asarray(dy)
    return diagonal_grad(np.broadcast_to(dy[..., None], dy.shape + (n,)), a, offset, axis1, axis2)


def diag_grad(dy, v, k=0):
    """The adjoint of ``np.diag``: extract the diagonal, or place it, whichever ``diag`` did not."""
    if np.ndim(v) == 1:
        return np.diag(dy, k)
    return diagonal_grad(dy, v, k)


def _scatter(dy, x, positions):
    """Sum ``dy`` into the positions of ``x``'s elements it was copied from (-1: from none)."""
    positions = np.ravel(positions)
    d = np.ravel(np.asarray(dy, dtype=float))
    keep = positions >= 0
    size = int(np.prod(np.shape(x)))
    g = np.bincount(positions[keep], weights=d[keep], minlength=size)
    return _like(g, x)


def select_grad(dy, x, fn, *args, **kwargs):
    """The adjoint of a function that only copies elements of ``x`` (take, tile, repeat, ...).

    ``fn`` is applied to the positions of x's elements; each element of ``dy`` is then added back
    to the position it was copied from, so repeated copies accumulate.
    """
    positions = np.arange(int(np.prod(np.shape(x)))).reshape(np.shape(x))
    return _scatter(dy, x, fn(positions, *args, **kwargs))


PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")


def pad_grad(dy, array, pad_width, mode="constant"):
    """The adjoint of ``np.pad`` for the modes that copy elements."""
    if mode not in PAD_MODES:
        raise NotImplementedError(
            f"srcgrad differentiates np.pad with mode in {PAD_MODES}; got mode={mode!r}"
        )
    positions = np.arange(int(np.prod(np.shape(array)))).reshape(np.shape(array))
    if mode in ("constant", "empty"):
        padded = np.pad(positions, pad_width, mode="constant", constant_values=-1)
    else:
        padded = np.pad(positions, pad_width, mode=mode)
    return _scatter(dy, array, padded)


def _split_back(dy, arrays, shapes, axis):
    sizes = [s[axis] for s in shapes]
    pieces = np.split(dy, np.cumsum(sizes)[:-1], axis=axis)
    return Cotangents(_like(p, x) for p, x in zip(pieces, arrays))


def concatenate_grad(dy, arrays, axis=0):
    """The adjoint of ``np.concatenate``: ``dy`` cut into one piece per array."""
    if axis is None:
        return _split_back(np.ravel(dy), arrays, [(np.size(x),) for x in arrays], 0)
    return _split_back(dy, arrays, [np.shape(x) for x in arrays], axis)


def stack_grad(dy, arrays, axis=0):
    """The adjoint of ``np.stack``: ``dy`` taken apart along the new axis."""
    return Cotangents(_like(np.take(dy, i, axis=axis), x) for i, x in enumerate(arrays))


def hstack_grad(dy, arrays):
    """The adjoint of ``np.hstack``."""
    shapes = [np.shape(np.atleast_1d(x)) for x in arrays]
    return _split_back(dy, arrays, shapes, 0 if len(shapes[0]) == 1 else 1)


def vstack_grad(dy, arrays):
    """The adjoint of ``np.vstack``."""
    return _split_back(dy, arrays, [np.shape(np.atleast_2d(x)) for x in arrays], 0)


def dstack_grad(dy, arrays):
    """The adjoint of ``np.dstack``."""
    return _split_back(dy, arrays, [np.shape(np.atleast_3d(x)) for x in arrays], 2)


def column_stack_grad(dy, arrays):
    """The adjoint of ``np.column_stack``: 1-d arrays were columns."""
    shapes = [np.shape(x) if np.ndim(x) > 1 else (np.size(x), 1) for x in arrays]
    return _split_back(dy, arrays, shapes, 1)


def split_grad(dy, ary, indices_or_sections, axis=0):
    """The adjoint of ``np.split`` / ``np.array_split``: the pieces' cotangents put back together.

    ``dy`` holds one cotangent per piece, None for a piece that carries no gradient.
    """
    positions = np.arange(int(np.prod(np.shape(ary)))).reshape(np.shape(ary))
    pieces = np.array_split(positions, indices_or_sections, axis=axis)
    g = np.zeros(np.shape(ary))
    for piece, d in zip(pieces, dy):
        if d is not None:
            g.flat[np.ravel(piece)] += np.ravel(d)
    return _like(g, ary)


def hsplit_grad(dy, ary, indices_or_sections):
    """The adjoint of ``np.hsplit``: split along axis 1, or 0 for a 1-d array."""
    return split_grad(dy, ary, indices_or_sections, 1 if np.ndim(ary) > 1 else 0)


def diff_grad(dy, a, n=1, axis=-1):
    """The adjoint of ``np.diff``: ``-diff`` of ``dy`` padded with a zero at both ends, n times."""
    pad = [(0, 0)] * np.ndim(dy)
    pad[axis] = (1, 1)
    for _ in range(n):
        dy = -np.diff(np.pad(dy, pad), axis=axis)
    return dy


def permutation_grad(dy, a, y, axis=-1):
    """The adjoint of a function that reorders ``a`` along ``axis`` into ``y`` (sort, partition).

    The i-th smallest element of ``y`` came from the i-th smallest element of ``a``.
    """
    if axis is None:
        return _like(permutation_grad(np.ravel(dy), np.ravel(a), np.ravel(y), 0), a)
    source = np.argsort(a, axis=axis, kind="stable")
    target = np.argsort(y, axis=axis, kind="stable")
    g = np.zeros(np.shape(a), dtype=np.result_type(dy, float))
    np.put_along_axis(g, source, np.take_along_axis(np.asarray(dy), target, axis=axis), axis)
    return g


def quantile_grad(dy, a, q, axis=None, keepdims=False):
    """The adjoint of ``np.quantile`` (linear interpolation between the two nearest ranks)."""
    merged, back = _last(a, axis)
    n = merged.shape[-1]
    order = np.argsort(merged, axis=-1, kind="stable")
    q = np.asarray(q, dtype=float)
    g = np.zeros(q.shape + merged.shape)
    pos = q * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    dq = np.asarray(dy)
    if keepdims:
        reduced = _axes(axis, np.ndim(a))
        dq = np.squeeze(dq, axis=tuple(q.ndim + r for r in reduced))
    for qi in np.ndindex(q.shape):
        d = dq[qi]
        for rank, weight in ((lo[qi], 1.0 - frac[qi]), (hi[qi], frac[qi])):
            src = order[..., rank : rank + 1]
            np.put_along_axis(
                g[qi], src, np.take_along_axis(g[qi], src, -1) + (d * weight)[..., None], -1
            )
    return _like(np.sum([back(gq) for gq in g.reshape((-1,) + merged.shape)], axis=0), a)


def linspace_grad(dy, num=50, endpoint=True, axis=0, start=True):
    """The adjoint of ``np.linspace`` for ``start`` (or ``stop`` with start=False)."""
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    w = 1.0 - t if start else t
    shape = [1] * np.ndim(dy)
    shape[axis] = num
    return np.sum(dy * w.reshape(shape), axis=axis)


def _einsum_labels(subscripts, shapes):
    """Each operand's labels and the output's, with '...' spelled out as letters."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    inputs = inputs.split(",")
    used = set(spec)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    spans = [len(shape) - (len(s) - 3) for s, shape in zip(inputs, shapes) if "..." in s]
    ellipsis = free[: max(spans, default=0)]
    labels = []
    for s, shape in zip(inputs, shapes):
        if "..." in s:
            span = len(shape) - (len(s) - 3)
            s = s.replace("...", "".join(ellipsis[len(ellipsis) - span :]))
        labels.append(s)
    if arrow:
        output = output.replace("...", "".join(ellipsis))
    else:
        letters = "".join(inputs).replace(".", "")
        output = "".join(ellipsis) + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    return labels, output


def einsum_vjp(dy, subscripts, k, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The adjoint of ``np.einsum(subscripts, x0, x1, ...)`` with respect to operand ``k``.

    Handles implicit output, '...', labels repeated within an operand (diagonals), labels summed
    within one operand only, and operands broadcast along a size-1 axis.
    """
    operands = [x for x in (x0, x1, x2, x3, x4, x5) if x is not None]
    shapes = [np.shape(x) for x in operands]
    labels, output = _einsum_labels(subscripts, shapes)
    target, shape = labels[k], shapes[k]
    others = [j for j in range(len(operands)) if j != k]
    known = set(output).union(*(labels[j] for j in others))
    unique = list(dict.fromkeys(target))
    computed = "".join(c for c in unique if c in known)
    spec = ",".join([output] + [labels[j] for j in others]) + "->" + computed
    g = np.einsum(spec, dy, *(operands[j] for j in others))
    sizes = {c: n for c, n in zip(target, shape)}
    for axis, c in enumerate(unique):
        if c not in known:
            g = np.expand_dims(g, axis)
        if g.shape[axis] != sizes[c]:
            g = np.sum(g, axis=axis, keepdims=True) if sizes[c] == 1 else g
    g = np.broadcast_to(g, tuple(sizes[c] for c in unique))
    if len(unique) == len(target):
        return _like(g, operands[k])
    out = np.zeros(shape, dtype=np.result_type(g, float))
    index = []
    for c in target:
        axis = unique.index(c)
        index.append(np.arange(sizes[c]).reshape([-1 if i == axis else 1 for i in range(g.ndim)]))
    out[tuple(index)] = g
    return out


def einsum_jvp(subscripts, k, tangent, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The tangent of ``np.einsum`` from operand ``k``: operand k replaced by its tangent."""
    operands = [x for x in (x0, x1, x2, x3, x4, x5) if x is not None]
    operands[k] = tangent
    return np.einsum(subscripts, *operands)


def _tensordot_subscripts(a, b, axes):
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        a_axes, b_axes = list(range(na - axes, na)), list(range(axes))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la = [next(letters) for _ in range(na)]
    lb = [next(letters) for _ in range(nb)]
    for i, j in zip(a_axes, b_axes):
        lb[j % nb] = la[i % na]
    contracted = {la[i % na] for i in a_axes}
    out = [c for c in la if c not in contracted] + [c for c in lb if c not in contracted]
    return "".join(la) + "," + "".join(lb) + "->" + "".join(out)


def tensordot_vjp_left(dy, a, b, axes=2):
    """The adjoint of ``np.tensordot(a, b, axes)`` with respect to ``a``."""
    return einsum_vjp(dy, _tensordot_subscripts(a, b, axes), 0, a, b)


def tensordot_vjp_right(dy, a, b, axes=2):
    """The adjoint of ``np.tensordot(a, b, axes)`` with respect to ``b``."""
    return einsum_vjp(dy, _tensordot_subscripts(a, b, axes), 1, a, b)


def inner_vjp_left(dy, a, b):
    """The adjoint of ``np.inner(a, b)`` with respect to ``a``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, b), a)
    return tensordot_vjp_left(dy, a, b, (-1, -1))


def inner_vjp_right(dy, a, b):
    """The adjoint of ``np.inner(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, a), b)
    return tensordot_vjp_right(dy, a, b, (-1, -1))


def kron_vjp(dy, a, b, wrt=0):
    """The adjoint of ``np.kron(a, b)`` with respect to ``a`` (wrt=0) or ``b`` (wrt=1)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(dy, [n for pair in zip(sa, sb) for n in pair])
    la, lb = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
    interleaved = list(range(2 * nd))
    if wrt == 0:
        g = np.einsum(blocks, interleaved, np.reshape(b, sb), lb, la)
        return _like(g, a)
    g = np.einsum(blocks, interleaved, np.reshape(a, sa), la, lb)
    return _like(g, b)


def _as3(v, axis):
    v = np.moveaxis(np.asarray(v, dtype=float), axis, -1)
    if v.shape[-1] == 2:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    return v


def cross_vjp(dy, a, b, wrt=0, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``np.cross`` with respect to ``a`` (wrt=0) or ``b`` (wrt=1)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, b3 = _as3(a, axisa), _as3(b, axisb)
    if np.shape(a)[axisa] == 2 and np.shape(b)[axisb] == 2:
        d = np.asarray(dy, dtype=float)[..., None] * np.array([0.0, 0.0, 1.0])
    else:
        d = np.moveaxis(np.asarray(dy, dtype=float), axisc, -1)
    if wrt == 0:
        g, x, ax = np.cross(b3, d), a, axisa
    else:
        g, x, ax = np.cross(d, a3), b, axisb
    g = np.moveaxis(g[..., : np.shape(x)[ax]], -1, ax)
    return unbroadcast(g, x)


def _full_cotangent(dy, n, m, mode):
    """``dy`` of a convolution in ``mode`` placed inside a cotangent of the 'full' result."""
    if mode == "full":
        return dy
    start = min(n, m) - 1 if mode == "valid" else (min(n, m) - 1) // 2
    full = np.zeros(n + m - 1, dtype=np.result_type(dy, float))
    full[start : start + len(dy)] = dy
    return full


def convolve_vjp(dy, a, v, mode="full", wrt=0):
    """The adjoint of ``np.convolve(a, v, mode)`` with respect to ``a`` (wrt=0) or ``v``."""
    full = _full_cotangent(dy, len(a), len(v), mode)
    return np.correlate(full, v if wrt == 0 else a, "valid")


def correlate_vjp(dy, a, v, mode="valid", wrt=0):
    """The adjoint of ``np.correlate(a, v, mode)`` (``convolve(a, v[::-1])`` for real input)."""
    g = convolve_vjp(dy, a, v[::-1], mode, wrt)
    return g if wrt == 0 else g[::-1]


# --- linear algebra ----------------------------------------------------------------------------


def _sym(x):
    return 0.5 * (x + mT(x))


def _eye_like(x):
    return np.eye(np.shape(x)[-1])


def det_vjp(dy, y, a):
    """The adjoint of ``np.linalg.det``: ``dy * det(a) * inv(a)^T``."""
    return (np.asarray(dy) * y)[..., None, None] * mT(np.linalg.inv(a))


def slogdet_vjp(dy, a):
    """The adjoint of ``np.linalg.slogdet``: only the log-determinant carries gradient."""
    dlog = dy[1]
    if dlog is None:
        return np.zeros(np.shape(a))
    return np.asarray(dlog)[..., None, None] * mT(np.linalg.inv(a))


def solve_vjp_b(dy, a, b):
    """The adjoint of ``np.linalg.solve(a, b)`` with respect to ``b``: solve with ``a^T``."""
    if np.ndim(b) == 1:
        g = np.linalg.solve(mT(a), np.asarray(dy)[..., None])[..., 0]
    else:
        g = np.linalg.solve(mT(a), dy)
    return unbroadcast(g, b)


def solve_vjp_a(dy, a, b, y):
    """The adjoint of ``x = np.linalg.solve(a, b)`` with respect to ``a``: ``-solve(a^T, dy) x^T``.
    """
    if np.ndim(b) == 1:
        gb = np.linalg.solve(mT(a), np.asarray(dy)[..., None])[..., 0]
        g = -gb[..., :, None] * np.asarray(y)[..., None, :]
    else:
        g = -np.linalg.solve(mT(a), dy) @ mT(y)
    return unbroadcast(g, a)


def _lower_half(x):
    """The lower triangle with the diagonal halved."""
    return np.tril(x) - 0.5 * x * _eye_like(x)


def cholesky_vjp(dy, y, upper=False):
    """The adjoint of ``np.linalg.cholesky`` (symmetric convention: the gradient is symmetric)."""
    low, dlow = (mT(y), mT(dy)) if upper else (y, dy)
    inv = np.linalg.inv(low)
    return _sym(mT(inv) @ _lower_half(mT(low) @ dlow) @ inv)


def cholesky_jvp(y, da, upper=False):
    """The tangent of ``np.linalg.cholesky``: ``L Phi(L^-1 dA L^-T)``."""
    low = mT(y) if upper else y
    inv = np.linalg.inv(low)
    dlow = low @ _lower_half(inv @ _sym(da) @ mT(inv))
    return mT(dlow) if upper else dlow


def _gaps(w):
    """``1 / (w_j - w_i)`` off the diagonal, 0 on it."""
    diff = w[..., None, :] - w[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


def eigh_vjp(dy, y):
    """The adjoint of ``np.linalg.eigh`` for symmetric input with distinct eigenvalues."""
    w, v = y
    dw, dv = dy
    inner = np.zeros(np.shape(v))
    if dw is not None:
        inner = inner + np.asarray(dw)[..., None] * _eye_like(v)
    if dv is not None:
        inner = inner + _gaps(w) * (mT(v) @ dv)
    return _sym(v @ inner @ mT(v))


def eigh_jvp(y, da):
    """The tangent of ``np.linalg.eigh``: ``(diag(V^T dA V), V (F * V^T dA V))``."""
    w, v = y
    m = mT(v) @ _sym(da) @ v
    return np.diagonal(m, axis1=-2, axis2=-1), v @ (_gaps(w) * m)


def eigvalsh_vjp(dy, a, UPLO="L"):
    """The adjoint of ``np.linalg.eigvalsh``: ``V diag(dy) V^T``."""
    _, v = np.linalg.eigh(a, UPLO)
    return _sym(v @ (np.asarray(dy)[..., None] * mT(v)))


def eigvalsh_jvp(a, da, UPLO="L"):
    """The tangent of ``np.linalg.eigvalsh``: ``diag(V^T dA V)``."""
    _, v = np.linalg.eigh(a, UPLO)
    return np.diagonal(mT(v) @ _sym(da) @ v, axis1=-2, axis2=-1)


def _svd_parts(y, a, full_matrices, compute_uv):
    if compute_uv:
        u, s, vt = y
        m, n = np.shape(a)[-2:]
        if full_matrices and m != n:
            raise NotImplementedError(
                "srcgrad differentiates np.linalg.svd of a non-square matrix only with "
                "full_matrices=False (the extra singular vectors are not unique)"
            )
        return u, s, vt
    return np.linalg.svd(a, full_matrices=False)


def svd_vjp(dy, y, a, full_matrices=True, compute_uv=True):
    """The adjoint of ``np.linalg.svd`` for distinct nonzero singular values (Townsend 2016)."""
    u, s, vt = _svd_parts(y, a, full_matrices, compute_uv)
    du, ds, dvt = dy if compute_uv else (None, dy, None)
    v = mT(vt)
    f = _gaps(s * s)
    core = np.zeros(np.shape(u)[:-2] + (s.shape[-1], s.shape[-1]))
    if ds is not None:
        core = core + np.asarray(ds)[..., None] * _eye_like(core)
    g = 0.0
    if du is not None:
        ut_du = mT(u) @ du
        core = core + (f * (ut_du - mT(ut_du))) * s[..., None, :]
        g = g + (np.eye(np.shape(u)[-2]) - u @ mT(u)) @ du / s[..., None, :] @ vt
    if dvt is not None:
        dv = mT(dvt)
        vt_dv = vt @ dv
        core = core + s[..., :, None] * (f * (vt_dv - mT(vt_dv)))
        g = g + (u / s[..., None, :]) @ mT(dv) @ (np.eye(np.shape(v)[-2]) - v @ vt)
    return u @ core @ vt + g


def svd_jvp(y, a, da, full_matrices=True, compute_uv=True):
    """The tangent of ``np.linalg.svd`` (reduced, distinct nonzero singular values)."""
    u, s, vt = _svd_parts(y, a, full_matrices, compute_uv)
    v = mT(vt)
    p = mT(u) @ da @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1)
    if not compute_uv:
        return ds
    f = _gaps(s * s)
    sp, ps = s[..., :, None] * p, p * s[..., None, :]
    omega_u = f * (ps + mT(ps))  # U^T dU = F o (P S + S P^T)
    omega_v = f * (sp + mT(sp))  # V^T dV = F o (S P + P^T S)
    du = u @ omega_u + (np.eye(np.shape(u)[-2]) - u @ mT(u)) @ da @ v / s[..., None, :]
    dv = v @ omega_v + (np.eye(np.shape(v)[-2]) - v @ vt) @ mT(da) @ u / s[..., None, :]
    return du, ds, mT(dv)


def _qr_parts(y, a, mode):
    if mode not in ("reduced", "r"):
        raise NotImplementedError(f"srcgrad differentiates np.linalg.qr with mode 'reduced' or "
                                  f"'r'; got mode={mode!r}")
    m, n = np.shape(a)[-2:]
    if m < n:
        raise NotImplementedError(
            f"srcgrad differentiates np.linalg.qr of an m x n matrix with m >= n; got {m} x {n}"
        )
    return y if mode == "reduced" else (np.linalg.qr(a)[0], y)


def qr_vjp(dy, y, a, mode="reduced"):
    """The adjoint of ``np.linalg.qr`` for m >= n and full column rank."""
    q, r = _qr_parts(y, a, mode)
    dq, dr = dy if mode == "reduced" else (None, dy)
    dq = np.zeros(np.shape(q)) if dq is None else dq
    dr = np.zeros(np.shape(r)) if dr is None else dr
    m = r @ mT(dr) - mT(dq) @ q
    copyltu = np.tril(m) + mT(np.tril(m, -1))
    return mT(np.linalg.solve(r, mT(dq + q @ copyltu)))


def qr_jvp(y, a, da, mode="reduced"):
    """The tangent of ``np.linalg.qr`` for m >= n and full column rank."""
    q, r = _qr_parts(y, a, mode)
    c = mT(np.linalg.solve(mT(r), mT(mT(q) @ da)))
    lower = np.tril(c, -1)
    omega = lower - mT(lower)
    dr = (c - omega) @ r
    if mode == "r":
        return dr
    dq = mT(np.linalg.solve(mT(r), mT(da))) - q @ (c - omega)
    return dq, dr


def pinv_vjp(dy, y, a):
    """The adjoint of ``np.linalg.pinv`` for a matrix of constant rank (Golub and Pereyra)."""
    eye_m, eye_n = np.eye(np.shape(a)[-2]), np.eye(np.shape(a)[-1])
    return (
        -mT(y) @ dy @ mT(y)
        + (eye_m - a @ y) @ mT(dy) @ y @ mT(y)
        + mT(y) @ y @ mT(dy) @ (eye_n - y @ a)
    )


def pinv_jvp(y, a, da):
    """The tangent of ``np.linalg.pinv`` for a matrix of constant rank."""
    eye_m, eye_n = np.eye(np.shape(a)[-2]), np.eye(np.shape(a)[-1])
    return (
        -y @ da @ y
        + y @ mT(y) @ mT(da) @ (eye_m - a @ y)
        + (eye_n - y @ a) @ mT(da) @ mT(y) @ y
    )


def matrix_power_vjp(dy, a, n):
    """The adjoint of ``np.linalg.matrix_power(a, n)``: ``sum_k (a^T)^k dy (a^T)^(n-1-k)``."""
    if n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        inv = np.linalg.inv(a)
        g = matrix_power_vjp(dy, inv, -n)
        return -mT(inv) @ g @ mT(inv)
    powers = [np.broadcast_to(_eye_like(a), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ mT(a))
    return sum(powers[k] @ dy @ powers[n - 1 - k] for k in range(n))


def matrix_power_jvp(a, da, n):
    """The tangent of ``np.linalg.matrix_power(a, n)``."""
    if n == 0:
        return np.zeros(np.shape(a))
    if n < 0:
        inv = np.linalg.inv(a)
        return matrix_power_jvp(inv, -inv @ da @ inv, -n)
    powers = [np.broadcast_to(_eye_like(a), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return sum(powers[k] @ da @ powers[n - 1 - k] for k in range(n))


def lstsq_vjp(dy, a, b, y, wrt=0):
    """The adjoint of ``np.linalg.lstsq`` for full-rank ``a`` (wrt=0: ``a``, wrt=1: ``b``).

    The solution ``x = pinv(a) b`` and the residuals carry gradient; the rank does not.
    """
    dx, dres, _, ds = dy
    x = y[0]
    b2 = np.reshape(b, (np.shape(b)[0], -1))
    x2 = np.reshape(x, (np.shape(x)[0], -1))
    ga, gb = np.zeros(np.shape(a)), np.zeros(b2.shape)
    if dx is not None:
        dx2 = np.reshape(dx, x2.shape)
        p = np.linalg.pinv(a)
        gb = gb + mT(p) @ dx2
        ga = ga + pinv_vjp(dx2 @ mT(b2), p, a)
    if dres is not None and np.size(y[1]):
        residual = b2 - a @ x2
        weighted = 2.0 * residual * np.reshape(dres, (1, -1))
        gb = gb + weighted
        ga = ga - weighted @ mT(x2)
    if ds is not None:
        u, _, vt = np.linalg.svd(a, full_matrices=False)
        ga = ga + u @ (np.asarray(ds)[:, None] * vt)
    return ga if wrt == 0 else _like(gb, b)


def lstsq_jvp(a, b, y, da, db):
    """The tangent of the solution of ``np.linalg.lstsq`` (rank, residuals and s: none)."""
    p = np.linalg.pinv(a)
    dx = 0.0
    if da is not None:
        dx = dx + pinv_jvp(p, a, da) @ b
    if db is not None:
        dx = dx + p @ db
    # Cotangents add elementwise, so the tangents from `a` and from `b` sum rather than concatenate
    return Cotangents([dx, None, None, None])


def _vector_norm_grad(dy, x, y, ord, axis, keepdims):
    ndim = np.ndim(x)
    d = _expand(dy, ndim, axis, keepdims)
    yk = _expand(y, ndim, axis, keepdims)
    if ord is None or ord == 2:
        return d * x / np.where(yk == 0, 1.0, yk)
    if ord in (np.inf, -np.inf):
        return chooser_grad(dy, np.abs(x), y, axis, keepdims) * np.sign(x)
    if ord == 0:
        return np.zeros(np.shape(x))
    if ord == 1:
        return d * np.sign(x)
    safe = np.where(yk == 0, 1.0, yk)
    return d * np.sign(x) * np.abs(x) ** (ord - 1) / safe ** (ord - 1)


def _matrix_norm_grad(dy, x, y, ord, axis, keepdims):
    ndim = np.ndim(x)
    rows, cols = (a % ndim for a in axis)
    if ord in (None, "fro"):
        return _vector_norm_grad(dy, x, y, 2, (rows, cols), keepdims)
    xm = np.moveaxis(x, (rows, cols), (-2, -1))
    d = np.asarray(_expand(dy, ndim, axis, keepdims))
    d = np.moveaxis(d, (rows, cols), (-2, -1)) if d.ndim == ndim else d
    if ord in ("nuc", 2, -2):
        u, s, vt = np.linalg.svd(xm, full_matrices=False)
        if ord == "nuc":
            g = u @ vt
        else:
            k = 0 if ord == 2 else s.shape[-1] - 1
            g = u[..., :, k : k + 1] @ vt[..., k : k + 1, :]
        g = d * g
    elif ord in (1, -1, np.inf, -np.inf):
        over = -2 if ord in (1, -1) else -1
        sums = np.sum(np.abs(xm), axis=over, keepdims=True)
        pick = np.max(sums, axis=-1 if over == -2 else -2, keepdims=True) if ord in (
            1, np.inf) else np.min(sums, axis=-1 if over == -2 else -2, keepdims=True)
        chosen = sums == pick
        g = d * np.sign(xm) * chosen / np.sum(chosen, axis=(-2, -1), keepdims=True)
    else:
        raise NotImplementedError(f"srcgrad does not differentiate the matrix norm ord={ord!r}")
    return np.moveaxis(g, (-2, -1), (rows, cols))


def norm_grad(dy, x, y, ord=None, axis=None, keepdims=False):
    """The adjoint of ``np.linalg.norm`` for every vector and matrix ``ord``.

    At zero the 2-norm's gradient is 0; ties of the inf-norms split the gradient equally.
    """
    if np.ndim(x) == 0:
        return _like(dy * np.sign(x), x)
    if isinstance(axis, int):
        axis = (axis,)
    if axis is None and ord is not None and np.ndim(x) == 2:
        axis = (0, 1)
    if axis is not None and len(axis) == 2:
        return _matrix_norm_grad(dy, x, y, ord, axis, keepdims)
    if axis is None and ord not in (None, 2):
        axis = (0,)
    return _vector_norm_grad(dy, x, y, ord, axis, keepdims)


def vector_norm_grad(dy, x, y, axis=None, keepdims=False, ord=2):
    """The adjoint of ``np.linalg.vector_norm`` (any axes, as one vector)."""
    return _vector_norm_grad(dy, x, y, ord, axis, keepdims)


def matrix_norm_grad(dy, x, y, keepdims=False, ord="fro"):
    """The adjoint of ``np.linalg.matrix_norm`` over the last two axes."""
    return _matrix_norm_grad(dy, x, y, ord, (-2, -1), keepdims)


def reduce_jvp(partials, dx, axis=None, keepdims=False):
    """The tangent of a reduction whose partial derivatives are ``partials``."""
    return np.sum(partials * dx, axis=axis, keepdims=keepdims)


def cumprod_jvp(a, da, axis=None):
    """The tangent of a cumulative product, exact when ``a`` has zeros."""
    if axis is None:
        return cumprod_jvp(np.ravel(a), np.ravel(da), 0)
    a0 = np.moveaxis(np.asarray(a, dtype=float), axis, 0)
    d0 = np.moveaxis(np.asarray(da, dtype=float), axis, 0)
    y = np.cumprod(a0, axis=0)
    t = np.empty_like(d0)
    t[0] = d0[0]
    for i in range(1, len(a0)):
        t[i] = t[i - 1] * a0[i] + y[i - 1] * d0[i]
    return np.moveaxis(t, 0, axis)


def stack_cotangents(dy, x, axis=0):
    """The adjoint of ``np.unstack``: the pieces' cotangents stacked again (None: zeros)."""
    pieces = [np.zeros(np.shape(np.take(x, 0, axis=axis))) if d is None else d for d in dy]
    return np.stack(pieces, axis=axis)


def permute_like(da, a, y, axis=-1):
    """The tangent of a reordering of ``a`` into ``y`` (sort, partition): ``da`` reordered alike."""
    if axis is None:
        return permute_like(np.ravel(da), np.ravel(a), np.ravel(y), 0)
    source = np.argsort(a, axis=axis, kind="stable")
    target = np.argsort(y, axis=axis, kind="stable")
    t = np.zeros(np.shape(y), dtype=np.result_type(da, float))
    np.put_along_axis(t, target, np.take_along_axis(np.asarray(da), source, axis=axis), axis)
    return t


def quantile_jvp(a, da, q, axis=None, keepdims=False):
    """The tangent of ``np.quantile``: the same interpolation of the tangents of the two ranks."""
    merged, _ = _last(a, axis)
    dmerged, _ = _last(da, axis)
    n = merged.shape[-1]
    order = np.argsort(merged, axis=-1, kind="stable")
    ranked = np.take_along_axis(dmerged, order, axis=-1)
    pos = np.asarray(q, dtype=float) * (n - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n - 1)
    frac = pos - lo
    t = np.moveaxis(ranked[..., lo] * (1 - frac) + ranked[..., hi] * frac, range(-np.ndim(q), 0),
                    range(np.ndim(q)))
    if keepdims:
        reduced = _axes(axis, np.ndim(a))
        t = np.expand_dims(t, tuple(np.ndim(q) + r for r in reduced))
    return t


def average_weights_jvp(a, y, dweights, axis=None, weights=None, keepdims=False):
    """The tangent of ``np.average`` from its weights: ``sum((a - y) dw) / sum(w)``."""
    w = _weights(a, axis, weights)
    dw = _weights(a, axis, dweights)
    total = np.sum(np.broadcast_to(w, np.shape(a)), axis=axis, keepdims=keepdims)
    ndim = np.ndim(a)
    centered = a - _expand(y, ndim, axis, keepdims)
    return np.sum(centered * dw, axis=axis, keepdims=keepdims) / total
