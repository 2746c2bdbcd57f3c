"""The runtime helpers generated code calls, for code compiled by numba (``backend="numba"``).

Imported only by ``emit/numba_backend.py`` when a transform asks for numba: ``import srcgrad``
never imports numba. Each helper here is the Python helper of the same name in ``runtime/``
(called from Python, it is that helper), and, through ``numba.extending.overload``, an
implementation numba compiles for the kinds of arguments it is given: Python numbers and NumPy
arrays. A combination of kinds that is not implemented has no overload, so numba's type
inference fails, and the backend reports the generated line (and the user's line behind it) that
needs it, never a wrong number.

Supported kinds, per helper (anything else is refused when numba compiles the derivative):

- ``unbroadcast(g, x)``: a number ``g``; an array ``g`` onto a number, onto an array of fewer
  dimensions (leading axes summed), or onto an array of as many dimensions (axes of length 1
  summed, up to two dimensions);
- ``check_real(*values)``: numbers, arrays, tuples and lists of them (complex ones refused);
- ``unit_seed(out)``, ``zeros_like(x)``, ``cast_like(g, x)``, ``as_like(g, x)``: numbers and
  arrays (``as_like`` of a missing gradient, ``None``, gives zeros), ``copy_grad(g)``;
- ``unreduce(dy, x)``, ``mean_grad(dy, x)`` without ``axis`` (the adjoints of a full sum and
  mean), and with an integer ``axis`` of a 1-d or 2-d ``x``; ``shape_like(*values)``;
- ``chooser_grad(dy, a, y)`` (the adjoint of max and min) over the whole of a float ``a``, or
  with an integer ``axis`` of a 1-d or 2-d ``a``; ``real_only(x, function)``;
- ``srcgrad_max_axis(a, axis)`` and the like (``numba_reductions.REDUCTIONS``): ``np.sum``,
  ``np.max``, ``np.min``, ``np.mean`` over an integer axis of a 1-d or 2-d array, keepdims or
  not;
- ``check_tangent(t, x)``, ``check_seed(seed, out)``: numbers and arrays of the same shape;
- ``elem(dt, i, x)``: an element of an array's tangent (``None``: zeros);
- ``matmul_vjp_left``, ``matmul_vjp_right``: operands of one or two dimensions;
- ``copy_state(s)`` (the state a checkpointed loop's step updates in place, ``y += v``) of a
  number, an array, or a tuple of them that holds no array twice (a ``CompiledValueError``);
- ``broadcast_like(t, y)`` (a tangent spread to the shape of ``y``): a real number onto a number
  or an array, an array onto an array of at least as many dimensions;
- ``add(a, b)``: two numbers or two arrays; ``getitem_grad(dy, x, index)``: a number read from
  an array at integer indices (a contribution the reverse sweep adds out of place, where it may
  be complex: analysis/realness.py; a complex one then fails numba's typing, never rounds).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import overload

from ..errors import CompiledValueError, UnsupportedCaseError
from . import boundary, complex_values, containers, indexing, products, reductions, shapes

_NUMBER = (types.Number, types.Boolean)


def _number(t):
    return isinstance(t, _NUMBER)


def _float_dtype(t):
    """The floating dtype of the gradient of an array of dtype ``t`` (float64 for integers)."""
    return t if isinstance(t, (types.Float, types.Complex)) else types.float64


def _absent(t):
    return t is None or isinstance(t, (types.NoneType, types.Omitted)) or t == types.none


# --- the helpers, as Python functions (numba compiles their overloads) --------------------------
def unbroadcast(g, x):
    """``runtime.unbroadcast``."""
    return shapes.unbroadcast(g, x)


def unit_seed(out, name="the function"):
    """``runtime.unit_seed``."""
    return boundary.unit_seed(out, name)


def check_real(*values):
    """``runtime.check_real``."""
    return complex_values.check_real(*values)


def zeros_like(x):
    """``runtime.zeros_like``."""
    return containers.zeros_like(x)


def cast_like(g, x):
    """``runtime.cast_like``."""
    return containers.cast_like(g, x)


def as_like(g, x):
    """``runtime.as_like``."""
    return containers.as_like(g, x)


def unreduce(dy, x, axis=None, keepdims=False, where=True):
    """``runtime.unreduce``."""
    return shapes.unreduce(dy, x, axis, keepdims, where)


def shape_like(*values):
    """``runtime.shape_like``."""
    return shapes.shape_like(*values)


def elem(dy, key, x):
    """``runtime.elem`` of an array's tangent or cotangent."""
    return containers.elem(dy, key, x)


def mean_grad(dy, x, axis=None, keepdims=False, where=True):
    """``runtime.mean_grad``."""
    return shapes.mean_grad(dy, x, axis, keepdims, where)


def check_tangent(tangent, x, name="x"):
    """``runtime.check_tangent``."""
    return boundary.check_tangent(tangent, x, name)


def copy_grad(g):
    """``runtime.copy_grad`` of a number or an array."""
    return containers.copy_grad(g)


def check_seed(seed, out):
    """``runtime.check_seed``."""
    return boundary.check_seed(seed, out)


def add(a, b):
    """``runtime.add`` of two numbers or two arrays (a contribution added out of place)."""
    return containers.add(a, b)


def getitem_grad(dy, x, index):
    """``runtime.getitem_grad`` of a number read from an array at integer indices."""
    return indexing.getitem_grad(dy, x, index)


def broadcast_like(t, y):
    """``runtime.broadcast_like`` of a number or an array onto a number or an array."""
    return shapes.broadcast_like(t, y)


def copy_state(state, invariants=()):
    """``checkpoint.copy_state`` of a number or an array (the state a checkpointed loop's step
    writes into, copied from the snapshot it was given; a tuple of numbers and arrays holds
    no invariant of the loop's)."""
    from ..checkpoint import copy_state as python_copy_state

    return python_copy_state(state, invariants)


def check_copied_array(value, name):
    """``runtime.check_copied_array``."""
    return indexing.check_copied_array(value, name)


def matmul_vjp_left(dy, a, b):
    """``runtime.matmul_vjp_left``."""
    return products.matmul_vjp_left(dy, a, b)


def matmul_vjp_right(dy, a, b):
    """``runtime.matmul_vjp_right``."""
    return products.matmul_vjp_right(dy, a, b)


#: the Python helper -> the helper numba compiles
HELPERS = {
    shapes.unbroadcast: unbroadcast,
    boundary.unit_seed: unit_seed,
    complex_values.check_real: check_real,
    indexing.check_copied_array: check_copied_array,
    containers.zeros_like: zeros_like,
    containers.cast_like: cast_like,
    containers.as_like: as_like,
    shapes.unreduce: unreduce,
    shapes.shape_like: shape_like,
    shapes.mean_grad: mean_grad,
    containers.elem: elem,
    boundary.check_tangent: check_tangent,
    boundary.check_seed: check_seed,
    containers.copy_grad: copy_grad,
    products.matmul_vjp_left: matmul_vjp_left,
    products.matmul_vjp_right: matmul_vjp_right,
    containers.add: add,
    indexing.getitem_grad: getitem_grad,
    shapes.broadcast_like: broadcast_like,
}


# --- their implementations in numba ------------------------------------------------------------
# Sums over an axis are loops: numba takes seconds to compile `np.sum(a, axis=0)`.
@njit(cache=True)
def _column_sums(a):
    """The sums over the first axis of the 2-d ``a``."""
    out = np.zeros(a.shape[1], a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j] += a[i, j]
    return out


@njit(cache=True)
def _row_sums(a):
    """The sums over the second axis of the 2-d ``a``."""
    out = np.zeros(a.shape[0], a.dtype)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i] += a[i, j]
    return out


# Kernels compiled once per machine (numba's cache): an overload's implementation, and what of
# numba's it calls (`g.sum()`, `np.full`, `@`: 0.3-2 s each under load), is compiled in every
# process. They call nothing outside this file (numba's cache follows a function's file only).
@njit(cache=True)
def _total(g):  # the sum of the array g
    return g.sum()


@njit(cache=True)
def _not_broadcast():
    raise CompiledValueError("srcgrad: unbroadcast of shapes that do not broadcast")


@njit(cache=True)
def _same_ndim_1(g, x):
    """``g`` (1-d) summed onto the 1-d ``x``'s shape."""
    if g.shape[0] == x.shape[0]:
        return g
    if x.shape[0] != 1:
        _not_broadcast()
    return np.full(1, g.sum(), g.dtype)


@njit(cache=True)
def _same_ndim_2(g, x):
    """``g`` (2-d) summed over the axes where the 2-d ``x`` has length 1."""
    (m0, m1), (n0, n1) = g.shape, x.shape
    if m0 == n0 and m1 == n1:
        return g
    if n0 != m0 and n0 != 1 or n1 != m1 and n1 != 1:
        _not_broadcast()
    out = np.zeros((n0, n1), g.dtype)
    for i in range(m0):
        a = i if n0 == m0 else 0
        for j in range(m1):
            out[a, j if n1 == m1 else 0] += g[i, j]
    return out


@njit(cache=True)
def _leading_2_1(g, x):
    """``g`` (2-d) summed onto the 1-d ``x``'s shape (its first axis, and its second where
    ``x`` has length 1)."""
    (m0, m1), n = g.shape, x.shape[0]
    if n != m1 and n != 1:
        _not_broadcast()
    out = np.zeros(n, g.dtype)
    for i in range(m0):
        for j in range(m1):
            out[j if n == m1 else 0] += g[i, j]
    return out


@njit
def _more_dims(g, x):
    raise UnsupportedCaseError("srcgrad backend='numba': unbroadcast over axes of length 1 of "
                               "an array of more than two dimensions")


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _number(g):
        return lambda g, x: g
    if not isinstance(g, types.Array):
        return None
    if _number(x):
        return lambda g, x: _total(g)
    if not isinstance(x, types.Array) or g.ndim < x.ndim:
        return None
    if g.ndim == x.ndim == 1:
        return lambda g, x: _same_ndim_1(g, x)
    if g.ndim == x.ndim == 2:
        return lambda g, x: _same_ndim_2(g, x)
    if (g.ndim, x.ndim) == (2, 1):
        return lambda g, x: _leading_2_1(g, x)
    summed = _more_dims
    if g.ndim == x.ndim:
        def same(g, x):
            if g.shape == x.shape:
                return g
            return summed(g, x)
        return same
    lead = g.ndim - x.ndim
    spread = {1: _same_ndim_1, 2: _same_ndim_2}.get(x.ndim, summed)

    def leading(g, x):
        inner = g.shape[lead:]
        size = 1
        for n in inner:
            size *= n
        flat = np.ascontiguousarray(g).reshape((-1, size))
        s = _column_sums(flat).reshape(inner)
        if s.shape == x.shape:
            return s
        return spread(s, x)
    return leading


# what ``complex_values.complex_output_error`` says (numba raises errors made of constants)
COMPLEX_OUTPUT = ("srcgrad: grad needs the function to return a real number; it returned a "
                  "complex one, which has no gradient. Use vjp(f) with a seed for a complex "
                  "output, or holomorphic_grad(f) for the complex derivative f'(z) of a "
                  "holomorphic f")


def _complex_type(t):
    """Whether values of the numba type ``t`` are complex or hold complex numbers."""
    if isinstance(t, types.Complex):
        return True
    if isinstance(t, (types.Array, types.List)):
        return isinstance(t.dtype, types.Complex)
    if isinstance(t, types.BaseTuple):
        return any(_complex_type(u) for u in t.types)
    return False


def _refuse_complex(*values):
    raise CompiledValueError(COMPLEX_OUTPUT)


@overload(check_real)
def _check_real(*values):
    if any(_complex_type(t) for t in values):
        return _refuse_complex
    return lambda *values: None


@overload(check_copied_array)
def _check_copied_array(value, name):
    # an array's copy is an array of its own; a list's is shallow (runtime.check_copied_array)
    if isinstance(value, types.Array) or _number(value):
        return lambda value, name: None

    def refuse(value, name):
        raise CompiledValueError("srcgrad: the copy of a list or tuple of arrays is shallow, "
                                 "and the function writes into its items in place")
    return refuse


@overload(unit_seed)
def _unit_seed(out, name="the function"):
    if _complex_type(out):
        def refuse(out, name="the function"):
            raise CompiledValueError(COMPLEX_OUTPUT)
        return refuse
    if _number(out):
        return lambda out, name="the function": 1.0
    if isinstance(out, types.Array):
        dtype = _float_dtype(out.dtype)

        def seed(out, name="the function"):
            if out.size != 1:
                raise CompiledValueError("srcgrad: grad needs a scalar output (exactly one "
                                         "element); use vjp for a non-scalar output")
            return np.ones(out.shape, dtype)
        return seed
    return None


@overload(zeros_like)
def _zeros_like(x):
    if _number(x):
        return lambda x: 0.0
    if isinstance(x, types.Array):
        dtype = _float_dtype(x.dtype)
        if dtype == types.float64:
            from .numba_cached import srcgrad_zeros  # (compiled once per machine)

            return lambda x: srcgrad_zeros(x.shape)
        return lambda x: np.zeros(x.shape, dtype)
    return None


def _cast(g, x):
    if _absent(g):
        return lambda g, x: zeros_like(x)
    if isinstance(x, types.Array) and isinstance(g, types.Array) and g.ndim == x.ndim:
        dtype = _float_dtype(x.dtype)
        if g.dtype == dtype:
            return lambda g, x: g
        return lambda g, x: g.astype(dtype)
    if _number(x) and not isinstance(x, types.Complex) and _number(g):
        if isinstance(g, types.Complex):
            return None
        return lambda g, x: float(g)
    if isinstance(x, types.Complex) and _number(g):
        return lambda g, x: complex(g)
    return None


@overload(cast_like)
def _cast_like(g, x):
    return _cast(g, x)


@overload(as_like)
def _as_like(g, x):
    return _cast(g, x)


@njit(cache=True)
def _filled(shape, value):
    """``np.full(shape, value, np.float64)``."""
    return np.full(shape, value, np.float64)


def _real_float64(dy, dtype):
    """Whether ``dy`` is a real number and ``dtype`` float64 (what the kernels take)."""
    return isinstance(dy, (types.Float, types.Integer, types.Boolean)) and dtype == types.float64


@overload(unreduce)
def _unreduce(dy, x, axis=None, keepdims=False):
    if not _absent(axis) and isinstance(dy, types.Array) and isinstance(x, types.Array):
        return _spread(dy, x)
    if not _absent(axis) and _number(dy) and isinstance(x, types.Array) and x.ndim == 1:
        dtype = _float_dtype(x.dtype)

        def whole(dy, x, axis=None, keepdims=False):  # a 1-d x summed over its axis
            _axis(axis, 1)
            return np.full(x.shape, dy, dtype)
        return whole
    if not (_absent(axis) and _number(dy)):
        return None
    if _number(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if isinstance(x, types.Array):
        dtype = _float_dtype(x.dtype)
        if _real_float64(dy, dtype):
            return lambda dy, x, axis=None, keepdims=False: _filled(x.shape, dy)
        return lambda dy, x, axis=None, keepdims=False: np.full(x.shape, dy, dtype)
    return None


@njit(cache=True)
def _broadcast_empty(x, y):
    """An empty float64 array of the shape of ``x`` and ``y`` broadcast together."""
    return np.empty(np.broadcast_shapes(x.shape, y.shape), np.float64)


@overload(shape_like)
def _shape_like(*values):
    if len(values) == 1 and (_number(values[0]) or isinstance(values[0], types.Array)):
        return lambda *values: values[0]
    if not all(_number(v) or isinstance(v, types.Array) for v in values):
        return None
    arrays = [v for v in values if isinstance(v, types.Array)]
    if not arrays:
        return lambda *values: 0.0
    floats = {_float_dtype(v.dtype) for v in arrays}
    dtype = floats.pop() if len(floats) == 1 else types.float64
    if dtype == types.float64:  # the kernel, once per machine (numba's broadcast_shapes: seconds)
        places = [i for i, v in enumerate(values) if isinstance(v, types.Array)]
        made = f"values[{places[0]}]"
        for i in places[1:] or places:
            made = f"_broadcast_empty({made}, values[{i}])"
        text = f"def broadcast(*values):\n    return {made}\n"
        return _generated(text, "broadcast", {"_broadcast_empty": _broadcast_empty})
    shapes_ = ", ".join(f"values[{i}].shape" if isinstance(v, types.Array) else "()"
                        for i, v in enumerate(values))
    text = f"def broadcast(*values):\n    return np.empty(np.broadcast_shapes({shapes_}), dtype)\n"
    return _generated(text, "broadcast", {"np": np, "dtype": dtype})


@overload(elem)
def _elem(dy, key, x):
    if _absent(dy):
        return lambda dy, key, x: zeros_like(x)
    if isinstance(dy, types.Array) and isinstance(key, (types.Integer, types.BaseTuple)):
        return lambda dy, key, x: dy[key]
    return None


@overload(mean_grad)
def _mean_grad(dy, x, axis=None, keepdims=False):
    if not _absent(axis) and isinstance(x, types.Array) and x.ndim in (1, 2) and (
        isinstance(dy, types.Array) or _number(dy) and x.ndim == 1
    ):
        def along(dy, x, axis=None, keepdims=False):  # (dy / count) spread, as in Python
            return unreduce(dy / x.shape[_axis(axis, x.ndim)], x, axis)
        return along
    if not (_absent(axis) and _number(dy)):
        return None
    if _number(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if isinstance(x, types.Array):
        dtype = _float_dtype(x.dtype)
        if _real_float64(dy, dtype):
            return lambda dy, x, axis=None, keepdims=False: _filled(x.shape, dy / x.size)
        return lambda dy, x, axis=None, keepdims=False: np.full(x.shape, dy / x.size, dtype)
    return None


@njit
def _tangent_error():
    raise CompiledValueError("srcgrad: the jvp tangent must have the shape of its argument")


@njit
def _seed_error():
    raise CompiledValueError("srcgrad: the vjp seed must have the shape of the output")


@overload(check_tangent)
def _check_tangent(tangent, x, name="x"):
    if _number(tangent) and _number(x):
        return lambda tangent, x, name="x": tangent
    if isinstance(tangent, types.Array) and isinstance(x, types.Array):
        if tangent.ndim != x.ndim:
            return None

        def check(tangent, x, name="x"):
            if tangent.shape != x.shape:
                _tangent_error()
            return tangent
        return check
    if _number(tangent) or isinstance(tangent, types.Array):
        def mismatch(tangent, x, name="x"):
            _tangent_error()
            return x  # typed as the argument, for the code after it (never reached)
        return mismatch
    return None


@overload(add)
def _add(a, b):
    if _number(a) and _number(b) or isinstance(a, types.Array) and isinstance(b, types.Array):
        return lambda a, b: a + b
    return None


def _integers(index, ndim):
    """Whether ``index`` is ``ndim`` integers (an int for one dimension)."""
    if isinstance(index, types.Integer):
        return ndim == 1
    return isinstance(index, types.BaseTuple) and len(index) == ndim and all(
        isinstance(t, types.Integer) for t in index)


@njit(cache=True)
def _one_element(shape, index, dy):
    """Zeros of ``shape`` (float64) but ``dy`` at ``index``."""
    g = np.zeros(shape)
    g[index] = dy
    return g


@overload(getitem_grad)
def _getitem_grad(dy, x, index):
    if not (_number(dy) and isinstance(x, types.Array) and _integers(index, x.ndim)):
        return None
    dtype = _float_dtype(dy)
    if dtype == types.float64:
        return lambda dy, x, index: _one_element(x.shape, index, dy)

    def impl(dy, x, index):
        g = np.zeros(x.shape, dtype)
        g[index] = dy
        return g
    return impl


@overload(broadcast_like)
def _broadcast_like(t, y):
    if isinstance(t, (types.Float, types.Integer)) and _number(y):
        return lambda t, y: t
    if isinstance(t, (types.Float, types.Integer)) and isinstance(y, types.Array):
        return lambda t, y: np.full(y.shape, t, np.float64)
    if not (isinstance(t, types.Array) and isinstance(y, types.Array) and t.ndim <= y.ndim):
        return None
    if t.ndim < y.ndim:  # (a ValueError where t is longer than y along an axis)
        return lambda t, y: np.broadcast_to(t, y.shape).copy()

    def spread(t, y):
        if t.shape == y.shape:
            return t
        return np.broadcast_to(t, y.shape).copy()
    return spread


@overload(copy_grad)
def _copy_grad(g):
    if _number(g):
        return lambda g: g
    if isinstance(g, types.Array):
        return lambda g: g.copy()
    return None


# numba cannot tell two arrays of a tuple apart from two views of the same memory: Python copies
# an array the state holds twice once (both then hold that copy); numba refuses such a state
SHARED_STATE = ("srcgrad: two variables of the state of a checkpointed loop compiled by numba "
                "hold the same array (Python copies it once for both; numba cannot tell them "
                "apart); use backend='python' for this loop")


@njit
def _shared_state():
    raise CompiledValueError(SHARED_STATE)


@overload(copy_state)
def _copy_state(state, invariants=()):
    if _number(state):
        return lambda state, invariants=(): state
    if isinstance(state, types.Array):
        return lambda state, invariants=(): state.copy()
    if not (isinstance(state, types.BaseTuple)
            and all(_number(t) or isinstance(t, types.Array) for t in state.types)):
        return None  # (a list, a dict: no overload, refused at the line)
    arrays = [i for i, t in enumerate(state.types) if isinstance(t, types.Array)]
    lines = [f"    if state[{i}].size and state[{i}].ctypes.data == state[{j}].ctypes.data:\n"
             f"        _shared_state()" for k, i in enumerate(arrays) for j in arrays[:k]]
    parts = [f"state[{i}].copy()" if i in arrays else f"state[{i}]"
             for i in range(len(state.types))]
    text = "\n".join(["def copy(state, invariants=()):", *lines,
                      f"    return ({', '.join(parts)},)"]) + "\n"
    return _generated(text, "copy", {"_shared_state": _shared_state})


@overload(check_seed)
def _check_seed(seed, out):
    if _number(seed) and _number(out):
        return lambda seed, out: seed
    if isinstance(seed, types.Array) and isinstance(out, types.Array) and seed.ndim == out.ndim:
        def check(seed, out):
            if seed.shape != out.shape:
                _seed_error()
            return seed
        return check
    if _number(seed) or isinstance(seed, types.Array):
        def mismatch(seed, out):
            _seed_error()
            return out  # typed as the output, for the code after it (never reached)
        return mismatch
    return None


def _ndims(*ts):
    if not all(isinstance(t, types.Array) and t.ndim in (1, 2) for t in ts):
        return None
    return tuple(t.ndim for t in ts)


@njit(cache=True)
def _times_transposed(dy, b):
    """``dy @ b.T``."""
    return dy @ b.T


@njit(cache=True)
def _transposed_times(a, dy):
    """``a.T @ dy``."""
    return a.T @ dy


@njit(cache=True)
def _outer(a, b):
    """``np.outer(a, b)``."""
    return np.outer(a, b)


@njit(cache=True)
def _matmul(a, b):
    """``a @ b``."""
    return a @ b


def _float64_arrays(*ts):
    return all(isinstance(t, types.Array) and t.dtype == types.float64 for t in ts)


@overload(matmul_vjp_left)
def _matmul_vjp_left(dy, a, b):
    ranks = _ndims(a, b)
    cached = _float64_arrays(dy, b)
    if ranks == (2, 2):
        if cached:
            return lambda dy, a, b: _times_transposed(dy, b)
        return lambda dy, a, b: dy @ b.T
    if ranks == (2, 1):
        if cached:
            return lambda dy, a, b: _outer(dy, b)
        return lambda dy, a, b: np.outer(dy, b)
    if ranks == (1, 2):
        if cached:
            return lambda dy, a, b: _matmul(b, dy)
        return lambda dy, a, b: b @ dy
    if ranks == (1, 1) and _number(dy):
        return lambda dy, a, b: dy * b
    return None


@overload(matmul_vjp_right)
def _matmul_vjp_right(dy, a, b):
    ranks = _ndims(a, b)
    cached = _float64_arrays(dy, a)
    if ranks in ((2, 2), (2, 1)):
        if cached:
            return lambda dy, a, b: _transposed_times(a, dy)
        return lambda dy, a, b: a.T @ dy
    if ranks == (1, 2):
        if cached:
            return lambda dy, a, b: _outer(a, dy)
        return lambda dy, a, b: np.outer(a, dy)
    if ranks == (1, 1) and _number(dy):
        return lambda dy, a, b: dy * a
    return None


def _generated(text, name, scope):
    exec(text, scope)  # noqa: S102 - one implementation per tuple length
    return scope[name]


# the reductions over an axis, chooser_grad and real_only (registered with numba on import)
from ..checkpoint import copy_state as _python_copy_state  # noqa: E402
from .numba_reductions import _axis, _spread, chooser_grad, real_only  # noqa: E402

HELPERS.update({reductions.chooser_grad: chooser_grad, complex_values.real_only: real_only,
                _python_copy_state: copy_state})
from .numba_writes import (  # noqa: E402, F401 (generated modules import them from here)
    WRITE_HELPERS,
    check_unpacked,
    inplace_target,
    kept_dtype,
    kept_dtype_tangent,
    real_sign,
    written_grad,
)

HELPERS.update(WRITE_HELPERS)
