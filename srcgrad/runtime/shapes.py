"""Broadcasting and shapes: summing a contribution back to its operand's shape and spreading one
over the axes a reduction removed.

``unbroadcast`` is the adjoint of NumPy broadcasting (``broadcast_like`` is its tangent),
``unreduce`` and ``mean_grad`` the adjoints of ``sum`` and ``mean``, ``shape_like`` a memory-free
shape reference for them; the private helpers (``_like``, ``_expand``, ``_axes``, ``_last``) are
shared by the other families. These run on every backward pass, so each keeps a fast path for
the common shapes.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SrcgradError


def float_dtype(*values):
    """The dtype derivatives of ``values`` are computed in: their common floating (or complex)
    dtype, so float32 stays float32; float64 for integers and bools, which have no derivative
    dtype of their own."""
    try:
        dtype = np.result_type(*values)
    except (TypeError, ValueError):  # a list or tuple of numbers is data, not a dtype
        try:
            dtype = np.result_type(*[np.asarray(v) for v in values])
        except (TypeError, ValueError):
            return np.dtype(np.float64)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def is_duck(x):
    """Whether ``x`` is an array of another library that implements NumPy's protocols (a Dask
    or CuPy array: NEP-18's ``__array_function__``): such an array is passed to NumPy functions
    as it is, never converted, so a lazy or device array is not computed or copied to the host."""
    return (
        type(x) is not np.ndarray
        and hasattr(type(x), "__array_function__")
        and not isinstance(x, (np.ndarray, np.generic))
    )


def as_array(x):
    """``np.asarray(x)``, except that an array of another library (``is_duck``) stays itself."""
    if type(x) is np.ndarray or is_duck(x):
        return x
    return np.asarray(x)


def _float_array(a):
    """``a`` as an array of its floating dtype (float64 for integers): ``np.asarray(a, float)``
    that keeps float32 and complex (and an array of another library, ``is_duck``)."""
    a = as_array(a)
    return a if a.dtype.kind in "fc" else a.astype(np.dtype(np.float64))


def object_operator(what):
    """The refusal of an arithmetic operator given an object (``what``: its class)."""
    return (
        f"an arithmetic operator (`+ - * / ** @`) given an object of {what}: srcgrad "
        f"differentiates operators as arithmetic on numbers and arrays, not the class's own "
        f"`__add__`, `__mul__`...; call a method or a function that computes the new object "
        f"(`v.__add__(w)`, `v.plus(w)`), which srcgrad inlines")


def unbroadcast(g, x):
    """Sum ``g`` back to the shape of ``x``, undoing NumPy broadcasting."""
    if type(g) is np.ndarray and type(x) is np.ndarray:  # the common case, first
        return g if g.shape == x.shape else _unbroadcast_arrays(g, x)
    if isinstance(g, float):
        # A contribution has the shape of the operation's result, and a scalar result means
        # scalar operands: nothing was broadcast.
        return g
    if _adds_elementwise(x) and isinstance(g, (list, tuple)):
        # the tangents (cotangents) of tuples added in derivative code: element by element
        return type(x)(
            None if gi is None or xi is None else unbroadcast(gi, xi) for gi, xi in zip(g, x)
        )
    if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)):
        return _unbroadcast_sequences(g, x)
    if isinstance(g, dict) and not isinstance(x, dict):
        # an operator whose operand is an object: the class's `__add__`, `__mul__`... (a dict
        # of cotangents meets a dict in srcgrad's own sweeps: a split call's gradients)
        raise SrcgradError(object_operator(f"class {type(x).__name__}"))
    if getattr(g, "shape", None) is not None and getattr(x, "shape", None) is not None:
        return _unbroadcast_arrays(g, x)
    return _unbroadcast_shapes(g, x)


def _unbroadcast_sequences(g, x):
    """``unbroadcast`` of a list's (or tuple's) cotangent: item by item where it has x's length
    (a list written whole, ``d["a"] = [x, y]``, its cotangent read back with take_item; or
    concatenated with an empty one); else `+` or `*` concatenated or repeated Python sequences,
    which is no arithmetic: refused."""
    if len(g) == len(x):
        return type(g)(None if gi is None or xi is None else unbroadcast(gi, xi)
                       for gi, xi in zip(g, x))
    raise SrcgradError(
        "`+` or `*` on a list or tuple (concatenation or repetition) is not differentiable "
        "by srcgrad; build the list with a literal, `append` or a comprehension instead"
    )


def _unbroadcast_arrays(g, x):
    """``unbroadcast`` of an array (or an array-like with a shape) to another's shape."""
    gshape, shape = g.shape, x.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead > 0 and gshape[lead:] == shape:
        # the usual case: leading batch axes broadcast in front of x
        axes = 0 if lead == 1 else tuple(range(lead))
        return np.add.reduce(g, axes) if type(g) is np.ndarray else g.sum(axis=axes)
    if lead == 0 and type(g) is np.ndarray:
        # the other common case: axes of length one in x (keepdims results), as
        # _unbroadcast_shapes sums them
        axes = tuple([i for i, n in enumerate(shape) if n != gshape[i]])
        for i in axes:
            if shape[i] != 1:
                break
        else:
            return np.add.reduce(g, axis=axes, keepdims=True)
    return _unbroadcast_shapes(g, x)


def _adds_elementwise(x):
    """Whether ``x`` is a sequence whose ``+`` adds element by element (``Cotangents``, the
    tangent or cotangent of a tuple or list in derivative code), not one that concatenates."""
    return isinstance(x, list) and type(x).__add__ is not list.__add__


def _unbroadcast_shapes(g, x):
    """``unbroadcast`` where ``g`` or ``x`` is not an array, or axes of length one were
    broadcast."""
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
    g = _sum_to(as_array(g), shape)
    if not shape and not isinstance(x, np.ndarray):
        return g[()]
    return g


def _sum_to(g, shape):
    """The array ``g`` summed (or, where it is smaller, broadcast) to ``shape``."""
    if g.ndim < len(shape) or any(n != 1 and m == 1 for n, m in zip(shape[::-1], g.shape[::-1])):
        g = np.broadcast_to(g, np.broadcast_shapes(g.shape, shape))
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _expand(dy, ndim, axis, keepdims):
    if axis is None or keepdims:
        return dy
    axes = axis if isinstance(axis, tuple) else (axis,)
    return np.expand_dims(dy, tuple(a % ndim for a in axes))


_SHAPE_VIEWS: dict = {}  # (shape, dtype's number, or string if not native) -> its view
_FLOAT64_NUM = np.dtype(np.float64).num
_SHAPES_OF: dict = {}  # (shapes, dtypes) of arrays of one or more dimensions -> their view


def _broadcast_shape(shapes):
    """``np.broadcast_shapes``, a few times faster for the handful of small shapes here."""
    ndim = max(map(len, shapes))
    out = [1] * ndim
    for s in shapes:
        i = ndim - len(s)
        for n in s:
            if n != 1:
                m = out[i]
                if m == 1:
                    out[i] = n
                elif m != n:
                    return np.broadcast_shapes(*shapes)  # raises the usual error
            i += 1
    return tuple(out)


def shape_like(*values):
    """A zero-strided view with the broadcast shape and the dtype of ``values``: a shape
    reference for the helpers above that holds no memory (a value read only for its shape need
    not be kept; its dtype is what a seed spread over it is made of)."""
    if len(values) == 1 and _adds_elementwise(values[0]):
        # the tangent of a tuple (derivative code differentiated again): one per element
        return type(values[0])(None if v is None else shape_like(v) for v in values[0])
    if len(values) == 1 and isinstance(values[0], np.ndarray):
        shape = values[0].shape
        dtype = values[0].dtype
    elif all(type(v) is np.ndarray for v in values):  # arrays (of one shape, often)
        return _arrays_shape(values)
    elif any(is_duck(v) for v in values):
        return _duck_shape(values)
    else:
        shape = _broadcast_shape([np.shape(v) for v in values])
        dtype = float_dtype(*values)
    key = (shape, dtype.num if dtype.isnative else dtype.str)
    view = _SHAPE_VIEWS.get(key)
    if view is None:
        if len(_SHAPE_VIEWS) > 256:
            _SHAPE_VIEWS.clear()
        view = _SHAPE_VIEWS[key] = np.broadcast_to(np.empty((), dtype), shape)
    return view


def of_shape(shape):
    """A float64 zero-strided view of the shape ``shape``: where a loop saved an array's shape
    alone (optimize/tested.py), what ``unbroadcast`` reads of it, its shape and that it is an
    array."""
    key = (shape, _FLOAT64_NUM)
    view = _SHAPE_VIEWS.get(key)
    if view is None:
        if len(_SHAPE_VIEWS) > 256:
            _SHAPE_VIEWS.clear()
        view = _SHAPE_VIEWS[key] = np.broadcast_to(np.empty((), np.float64), shape)
    return view


def spread_rows(b, a, held):
    """``b``, an operand of arithmetic with ``a`` in a loop's step (optimize/spread.py), as an
    array of a's shape of its own where ``a`` is an ndarray of another shape to which ``b``
    broadcasts without widening it: the same numbers, which NumPy's inner loop then takes in one
    run instead of one run per broadcast row. Made once per shape (kept in the dict ``held``,
    bound before the loop), ``b`` itself otherwise."""
    if type(a) is not np.ndarray:
        return b
    shape = a.shape
    full = held.get(shape)
    if full is None:
        own = b.shape
        lead = len(shape) - len(own)
        full = b
        if own != shape and lead >= 0 and all(
                m == n or m == 1 for m, n in zip(own, shape[lead:])):
            full = np.ascontiguousarray(np.broadcast_to(b, shape))
        if len(held) > 8:
            held.clear()
        held[shape] = full
    return full


def written_into(ufunc, x, b):
    """``ufunc(x, b)`` written into ``x``, an array the function made and reads no more
    (optimize/reuse.py), where b's shape is that of x's trailing axes (the result's shape is
    x's); a new array otherwise."""
    own = b.shape
    if len(own) <= len(x.shape) and own == x.shape[len(x.shape) - len(own):]:
        return ufunc(x, b, out=x)
    return ufunc(x, b)


def _arrays_shape(values):
    """``shape_like`` of several NumPy arrays. Their view depends only on their shapes and
    dtypes (NumPy's promotion of arrays of one or more dimensions reads no values), so it is
    kept for those: the same arrays' kinds meet it at every call."""
    # (dtypes by their numbers, or their strings where the byte order is not the machine's: a
    # standalone module (emit/standalone.py) writes this cache out as a literal, and a dtype's
    # string is made anew at each read, 0.25-0.5 us. Native dtypes of one number (datetime64
    # units, string lengths) promote alike, and to no floating dtype: float_dtype gives float64)
    known = (tuple([v.shape for v in values]),
             tuple([d.num if d.isnative else d.str for d in [v.dtype for v in values]]))
    view = _SHAPES_OF.get(known)
    if view is not None:
        return view
    shapes = known[0]
    first = shapes[0]
    shape = first if all(s == first for s in shapes) else _broadcast_shape(shapes)
    dtype = float_dtype(*values)
    key = (shape, dtype.num if dtype.isnative else dtype.str)
    view = _SHAPE_VIEWS.get(key)
    if view is None:
        if len(_SHAPE_VIEWS) > 256:
            _SHAPE_VIEWS.clear()
        view = _SHAPE_VIEWS[key] = np.broadcast_to(np.empty((), dtype), shape)
    if all(shapes):  # (a 0-d array's value may decide the dtype: NumPy before 2.0)
        if len(_SHAPES_OF) > 256:
            _SHAPES_OF.clear()
        _SHAPES_OF[known] = view
    return view


def _duck_shape(values):
    """``shape_like`` of values among which an array of another library (a Dask array): a lazy
    zero array of that library, chunked like it. A NumPy view of a data set's shape would be
    copied into every task that used it."""
    like = next(v for v in values if is_duck(v))
    shape = _broadcast_shape([np.shape(v) for v in values])
    return np.broadcast_to(np.zeros_like(like, dtype=float_dtype(*values)), shape)


def unreduce(dy, x, axis=None, keepdims=False, where=True):
    """The adjoint of a sum: spread ``dy`` over the reduced axes of ``x`` (zeros where ``where``,
    the sum's mask, is false).

    The result is a read-only broadcast view of ``dy``: every element of a reduced axis gets the
    same value, so nothing is copied. Generated code never updates it with ``+=``; ``zero_item``
    and ``add_at`` copy it before updating it; and a gradient that may be such a view is returned
    as a copy (``copy_grad``).
    """
    shape = np.shape(x)
    if where is not True:
        spread = unreduce(dy, x, axis, keepdims)
        return np.where(where, spread, np.zeros((), dtype=np.result_type(spread)))
    if not shape and not isinstance(x, np.ndarray):
        return dy
    if type(dy) is float:
        # the seed 1.0 (or a Python number): spread in the dtype of what was summed
        dtype = getattr(x, "dtype", None)
        dy = np.array(dy, dtype if dtype is not None and dtype.kind in "fc" else np.float64)
    elif isinstance(dy, float):
        dy = np.array(dy)
    else:
        dy = _float_array(_expand(dy, len(shape), axis, keepdims))
    if is_duck(x) and not is_duck(dy):
        # spread over a lazy (Dask) array: made lazily and in its chunks, not as a NumPy view
        return np.zeros_like(x, dtype=float_dtype(dy, np.empty((), x.dtype))) + dy
    return _broadcast_view(dy, shape)


def _broadcast_view(a, shape):
    """``np.broadcast_to(a, shape)`` (a read-only view), a few times faster for a scalar ``a``
    or one with the axes of ``shape``."""
    if is_duck(a):
        return np.broadcast_to(a, shape)
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


def mean_grad(dy, x, axis=None, keepdims=False, where=True):
    """The adjoint of a mean: ``dy`` divided by the count, spread over the reduced axes (over the
    elements ``where`` selects: the count is theirs)."""
    shape = np.shape(x)
    if where is not True:
        mask = np.broadcast_to(where, shape)
        count = np.sum(mask, axis=axis, keepdims=True)
        return unreduce(dy, x, axis, keepdims, where=mask) / count
    if axis is None:
        count = int(np.prod(shape))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        count = int(np.prod([shape[a] for a in axes]))
    return unreduce(dy / count if type(dy) is float else np.divide(dy, count), x, axis, keepdims)


def _uniform_shape(values, others=()):
    """The common shape of ``values`` if every one is a float64 array of it with at least one
    axis, and every one of ``others`` a float64 array that broadcasts to it (so it is the shape
    all of them broadcast to); else None."""
    shape = None
    for v in values:
        if type(v) is not np.ndarray or not v.ndim or (
                v.dtype is not _FLOAT64 and v.dtype != _FLOAT64):
            return None
        if shape is None:
            shape = v.shape
        elif v.shape != shape:
            return None
    if shape is None:
        return None
    for v in others:
        if type(v) is not np.ndarray or (v.dtype is not _FLOAT64 and v.dtype != _FLOAT64):
            return None
        own = v.shape
        if own != shape:
            i = len(shape) - len(own)
            if i < 0:
                return None
            for n in own:
                if n != 1 and n != shape[i]:
                    return None
                i += 1
    return shape


_FLOAT64 = np.dtype(np.float64)


def uniform_mean_grad(dy, x, values, others=()):
    """``mean_grad(dy, x)`` (the seed of a full mean) as the Python float ``dy / count`` where
    ``dy`` is a Python float, the tuple ``values`` holds float64 arrays of one shape and the
    tuple ``others`` float64 arrays that broadcast to it, so that it is the shape of ``x``, to
    which they all broadcast: every value computed from ``values`` elementwise has that shape,
    so the number, broadcast, gives what the spread array gives (optimize/uniform.py uses it
    only where it is met by nothing else). ``mean_grad(dy, x)`` otherwise; ``x`` None stands
    for ``shape_like(*values, *others)``, made only then."""
    if type(dy) is float:
        shape = _uniform_shape(values, others)
        if shape is not None:
            return dy / math.prod(shape)
    return mean_grad(dy, shape_like(*values, *others) if x is None else x)


def uniform_unreduce(dy, x, values, others=()):
    """``unreduce(dy, x)`` (the seed of a full sum) as the Python float ``dy`` under the
    conditions of ``uniform_mean_grad``; ``unreduce(dy, x)`` otherwise."""
    if type(dy) is float and _uniform_shape(values, others) is not None:
        return dy
    return unreduce(dy, shape_like(*values, *others) if x is None else x)


def broadcast_like(t, y):
    """``t`` broadcast to the shape of ``y``: the tangent of an operand NumPy broadcast into ``y``.

    The counterpart of ``unbroadcast``, which sums back down; each is the other's adjoint. Where
    ``t`` is longer than ``y`` along an axis it is summed down there, as ``unbroadcast`` does:
    ``unbroadcast`` also broadcasts a contribution shorter than its operand along an axis
    (a helper's ``unbroadcast(dy * w, b)`` with ``w`` of one row and ``b`` of two), and its
    adjoint, this function, must then sum (grad of grad of ``logsumexp(a, b=b)`` for ``b`` of
    more rows than ``a``: a ValueError of ``np.broadcast_to``).
    """
    if _adds_elementwise(y) and isinstance(t, (list, tuple)):
        # the (co)tangents of a tuple or list, element by element, as ``unbroadcast`` sums them
        # (fourth order through np.stack([w, w]) in a recursion: np.shape of a list of None
        # and arrays was a ValueError)
        return type(y)(None if ti is None or yi is None else broadcast_like(ti, yi)
                       for ti, yi in zip(t, y))
    shape = np.shape(y)
    if np.shape(t) == shape:
        return t
    try:
        return np.array(np.broadcast_to(t, shape), dtype=float_dtype(t))
    except ValueError:  # longer than y along some axis
        return unbroadcast(t, y)


def _like(g, x):
    """``g`` as a gradient for ``x``: a float for a Python scalar, an array of x's shape else."""
    if not isinstance(x, np.ndarray) and np.ndim(x) == 0:
        # a lazy (Dask) or device array stays one: float() would compute or copy it
        if is_duck(g):
            return np.reshape(g, ())
        if np.iscomplexobj(g):  # a complex number's is complex; a real one's is the real part
            return complex(np.reshape(g, ())) if np.iscomplexobj(x) else float(np.real(g))
        return float(np.reshape(g, ()))
    if isinstance(g, (int, float)) and g == 0 and np.size(x) != 1:
        # nothing flowed (`take_item` of an element whose cotangent is None): zeros of x's shape
        return np.zeros(np.shape(x), dtype=float_dtype(x))
    if isinstance(g, (list, tuple)):  # a list's cotangent, None where nothing flowed
        g = _dense(g, np.shape(x), float_dtype(x))
    return np.reshape(g, np.shape(x))


def _dense(g, shape, dtype):
    """The cotangent ``g`` of a list (of lists) of arrays of ``shape`` (one row an item), its
    ``None`` items zeros of a row's shape."""
    if g is None:
        return np.zeros(shape, dtype=dtype)
    if isinstance(g, (list, tuple)) and shape and len(g) == shape[0]:
        return [_dense(item, shape[1:], dtype) for item in g]
    return g


def _axes(axis, ndim):
    """``axis`` (None, an int or a tuple, possibly negative) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(sorted(a % ndim for a in axes))


def _count(shape, axis):
    return math.prod(shape[a] for a in _axes(axis, len(shape)))


def mT(x):
    """The transpose of the last two axes: every matrix of a stack transposed. (A number is
    itself: derivative code passes the scalar 0 an adjoint starts from where nothing flowed.)"""
    if np.ndim(x) == 0:
        return x
    return np.swapaxes(x, -1, -2)


def inverse_permutation(axes):
    """The axes that undo ``np.transpose(x, axes)`` (None undoes None: reversal)."""
    return None if axes is None else tuple(int(i) for i in np.argsort(axes))


def reshape_like(g, x, order="C"):
    """The adjoint of a reshape: ``g`` with the shape of ``x`` (a float for a Python scalar)."""
    if order != "C" and np.ndim(x):
        return np.reshape(g, np.shape(x), order=order)
    return _like(g, x)


def _last(a, axis):
    """``a`` with the axes in ``axis`` moved to the end and merged into one, and the way back."""
    a = as_array(a)
    reduced = _axes(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in reduced]
    order = kept + list(reduced)
    moved = np.transpose(a, order)
    merged = moved.reshape(moved.shape[: len(kept)] + (-1,))

    def back(g):
        return np.transpose(np.reshape(g, moved.shape), tuple(np.argsort(order).tolist()))

    return merged, back


# Helpers differentiated by their source: where generated code that calls one is differentiated
# again, srcgrad inlines the helper's body (plain NumPy code whose calls all have rules or are in
# this set themselves) instead of looking for a rule, so every order works without a rule for it.
BY_SOURCE: set = set()


def by_source(fn):
    """Mark ``fn`` as a helper that derivatives of generated code look into (``BY_SOURCE``)."""
    BY_SOURCE.add(fn)
    return fn
