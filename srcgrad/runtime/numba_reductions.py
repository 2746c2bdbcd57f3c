"""The numba implementations of reductions over one axis and of the adjoint of max and min.

Requires: ``runtime/numba_helpers.py`` (imported from its end: its small type tests). Guarantees:
``np.sum``, ``np.max``, ``np.min``, ``np.mean`` over an integer axis of a 1-d or 2-d array,
keepdims or not, as the helpers ``numba_backend`` writes them as (:data:`REDUCTIONS`; numba's
``np.max`` takes no axis, its ``np.sum`` no keepdims); ``chooser_grad`` over the whole of a float
array or one axis of a 1-d or 2-d one; ``real_only``; the spread of ``unreduce``/``mean_grad``
over an axis (:func:`_spread`). Loops, like numba_helpers' sums; other kinds have no
implementation, so numba's typing fails at the line, which the backend reports.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import types
from numba.extending import overload

from ..errors import CompiledValueError, UnsupportedCaseError
from . import complex_values, numba_linking, reductions
from .numba_helpers import _absent, _complex_type, _float_dtype, _generated, _number


def chooser_grad(dy, a, y, axis=None, keepdims=False):
    """``runtime.chooser_grad`` (the adjoint of max and min)."""
    return reductions.chooser_grad(dy, a, y, axis, keepdims)


def real_only(x, function):
    """``runtime.real_only``."""
    return complex_values.real_only(x, function)


def _axis(axis, ndim):
    """``axis`` (possibly negative) of an array of ``ndim`` dimensions, checked."""
    if axis < -ndim or axis >= ndim:
        raise CompiledValueError("srcgrad: axis out of bounds for the array reduced")
    return axis + ndim if axis < 0 else axis


_axis = njit(cache=True)(_axis)


# Kernels for float64 arrays, compiled once per machine (numba's cache; as in numba_helpers):
# the implementations below call them, and compile their own loops for other dtypes.
SUM, MAX, MIN, MEAN = 0, 1, 2, 3


@njit(cache=True)
def _reduce_f64(a, axis, op):
    """``np.sum`` (``op`` SUM), ``np.max``, ``np.min`` or ``np.mean`` over ``axis`` of the 2-d
    float64 ``a``."""
    row = _axis(axis, 2) == 1
    count, n = (a.shape[0], a.shape[1]) if row else (a.shape[1], a.shape[0])
    if n == 0 and op == MAX:
        raise CompiledValueError("zero-size array to reduction operation max")
    if n == 0 and op == MIN:
        raise CompiledValueError("zero-size array to reduction operation min")
    out = np.empty(count, np.float64)
    for i in range(count):
        out[i] = _reduce_lane(a[i, :] if row else a[:, i], op)
    return out


@njit(cache=True)
def _reduce_lane(v, op):
    """:func:`_reduce_f64` of the 1-d ``v`` (not empty for MAX and MIN)."""
    if op == SUM or op == MEAN:
        m = 0.0
        for x in v:
            m += x
        return m / v.shape[0] if op == MEAN else m
    m = v[0]
    for x in v[1:]:
        if (x > m if op == MAX else x < m) or x != x:
            m = x
    return m


@njit(cache=True)
def _reduce_f64_kept(a, axis, op):
    """:func:`_reduce_f64` with the axis kept (length 1)."""
    r = _reduce_f64(a, axis, op)
    return r.reshape((r.shape[0], 1)) if _axis(axis, 2) == 1 else r.reshape((1, r.shape[0]))


@njit(cache=True)
def _reduce_f64_1d(a, axis, op):
    """:func:`_reduce_f64` over the axis of the 1-d ``a`` (one element)."""
    _axis(axis, 1)
    return _reduce_f64(a.reshape((1, a.shape[0])), 1, op)


# called unlinked from the implementations (numba_linking): each process that types a reduction
# compiles its implementation, which then links and optimizes no kernel again
for _kernel in (_reduce_f64, _reduce_f64_kept, _reduce_f64_1d):
    numba_linking.register(_kernel)
numba_linking.install()


def _reduction(op, keep):
    """The implementation of ``np.<op>(a, axis=axis, keepdims=keep)`` for ``a``'s type."""
    def typer(a, axis):
        if not isinstance(a, types.Array) or a.ndim not in (1, 2) or not isinstance(
            a.dtype, (types.Float, types.Integer)
        ) or not isinstance(axis, types.Integer):
            return None
        if op == "sum":
            dtype = a.dtype if isinstance(a.dtype, types.Float) else types.int64
        elif op == "mean":
            dtype = a.dtype if isinstance(a.dtype, types.Float) else types.float64
        else:
            dtype = a.dtype
        if a.dtype == types.float64:
            return _cached_reduction(_OPS[op], keep, a.ndim)
        first = op in ("max", "min")
        text = _REDUCE.format(
            init="a[i, 0] if row else a[0, i]" if first else "0",
            start=1 if first else 0,
            step={"max": "if v > m or v != v:\n                m = v",
                  "min": "if v < m or v != v:\n                m = v",
                  "sum": "m += v", "mean": "m += v"}[op],
            end="m / n" if op == "mean" else "m",
        )
        scope = {"np": np, "dtype": dtype, "_axis": _axis, "CompiledValueError":
                 CompiledValueError, "EMPTY": f"zero-size array to reduction operation {op}"}
        reduce2 = njit(_generated(text, "reduce2", scope))
        if a.ndim == 1:
            if keep:
                def one_keep(a, axis):
                    _axis(axis, 1)
                    return reduce2(a.reshape((1, a.shape[0])), 1)[0:1]
                return one_keep

            def one(a, axis):
                _axis(axis, 1)
                return reduce2(a.reshape((1, a.shape[0])), 1)[0]
            return one
        if keep:
            def two_keep(a, axis):
                k = _axis(axis, 2)
                r = reduce2(a, k)
                return r.reshape((r.shape[0], 1)) if k == 1 else r.reshape((1, r.shape[0]))
            return two_keep
        return lambda a, axis: reduce2(a, axis)
    return typer


@njit(cache=True)
def _lanes(v, axis):
    """The values along the kept axis of the 2-d ``v`` (reduced over ``axis``, kept)."""
    return v[:, 0] if _axis(axis, 2) == 1 else v[0, :]


@njit(cache=True)
def _spread_f64(d, x, axis):
    """``d[i]`` (1-d, float64) spread over the 2-d ``x``'s shape along ``axis``."""
    k = _axis(axis, 2)
    out = np.empty(x.shape, np.float64)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = d[i] if k == 1 else d[j]
    return out


@njit(cache=True)
def _spread_f64_kept(dy, x, axis):
    """:func:`_spread_f64` of ``dy`` reduced with the axis kept."""
    return _spread_f64(_lanes(dy, axis), x, axis)


@njit(cache=True)
def _split_ties(d, a, yv, axis, out):
    """``out`` (of ``a``'s shape) filled with ``chooser_grad`` along ``axis`` of the 2-d ``a``:
    ``d[i]`` split equally among the elements of lane ``i`` equal to ``yv[i]`` (NaN: the NaNs);
    compiled per dtype, for every kind ``chooser_grad`` takes along an axis."""
    row = _axis(axis, 2) == 1
    count, n = (a.shape[0], a.shape[1]) if row else (a.shape[1], a.shape[0])
    for i in range(count):
        yi, di = yv[i], d[i]
        chosen = 0
        for j in range(n):
            v = a[i, j] if row else a[j, i]
            if v == yi or (v != v and yi != yi):
                chosen += 1
        share = max(chosen, 1)
        for j in range(n):
            v = a[i, j] if row else a[j, i]
            c = 1.0 if v == yi or (v != v and yi != yi) else 0.0
            if row:
                out[i, j] = di * c / share
            else:
                out[j, i] = di * c / share
    return out


@njit(cache=True)
def _chooser_f64(d, a, yv, axis):
    """:func:`_split_ties` into a new float64 array."""
    return _split_ties(d, a, yv, axis, np.empty(a.shape, np.float64))


@njit(cache=True)
def _chooser_f64_kept(dy, a, y, axis):
    """:func:`_chooser_f64` of ``dy`` and ``y`` reduced with the axis kept."""
    return _chooser_f64(_lanes(dy, axis), a, _lanes(y, axis), axis)


_OPS = {"sum": SUM, "max": MAX, "min": MIN, "mean": MEAN}


def _cached_reduction(code, keep, ndim):
    """The implementation of a reduction (``code``) of a float64 array: the kernels above."""
    if ndim == 1:
        if keep:
            return lambda a, axis: _reduce_f64_1d(a, axis, code)
        return lambda a, axis: _reduce_f64_1d(a, axis, code)[0]
    if keep:
        return lambda a, axis: _reduce_f64_kept(a, axis, code)
    return lambda a, axis: _reduce_f64(a, axis, code)


_REDUCE = """\
def reduce2(a, axis):
    row = _axis(axis, 2) == 1
    count, n = (a.shape[0], a.shape[1]) if row else (a.shape[1], a.shape[0])
    if n == 0 and {start} == 1:
        raise CompiledValueError(EMPTY)
    out = np.empty(count, dtype)
    for i in range(count):
        m = {init}
        for j in range({start}, n):
            v = a[i, j] if row else a[j, i]
            {step}
        out[i] = {end}
    return out
"""


def _reducer(name):
    def python(a, axis):
        raise UnsupportedCaseError(f"{name} runs in numba-compiled code only")
    python.__name__ = python.__qualname__ = name
    return python


#: (the NumPy function, keepdims) -> the helper numba_backend calls for it with an axis
REDUCTIONS = {}
for _op in ("sum", "max", "min", "mean"):
    for _keep in (False, True):
        _name = f"srcgrad_{_op}_axis" + ("_keepdims" if _keep else "")
        _helper = _reducer(_name)
        overload(_helper)(_reduction(_op, _keep))
        globals()[_name] = _helper
        REDUCTIONS[(_op, _keep)] = _name
REDUCTIONS.update({("amax", k): REDUCTIONS[("max", k)] for k in (False, True)})
REDUCTIONS.update({("amin", k): REDUCTIONS[("min", k)] for k in (False, True)})


def _spread(dy, x):
    """``unreduce(dy, x, axis)``: ``dy`` (an array, reduced over ``axis`` of the 1-d or 2-d
    ``x``, its axis kept or not) spread over ``x``'s shape."""
    if not (x.ndim == 1 and dy.ndim == 1 or x.ndim == 2 and dy.ndim in (1, 2)):
        return None
    dtype = _float_dtype(dy.dtype)
    kept = dy.ndim == x.ndim
    if x.ndim == 2 and dtype == types.float64:
        if kept:
            return lambda dy, x, axis=None, keepdims=False: _spread_f64_kept(dy, x, axis)
        return lambda dy, x, axis=None, keepdims=False: _spread_f64(dy, x, axis)

    if x.ndim == 1:  # dy of one element (kept)
        def one(dy, x, axis=None, keepdims=False):
            _axis(axis, 1)
            return np.full(x.shape, dy[0], dtype)
        return one

    def two(dy, x, axis=None, keepdims=False):
        k = _axis(axis, 2)
        out = np.empty(x.shape, dtype)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                if kept:
                    out[i, j] = dy[i, 0] if k == 1 else dy[0, j]
                else:
                    out[i, j] = dy[i] if k == 1 else dy[j]
        return out
    return two


@overload(real_only)
def _real_only(x, function):
    if _complex_type(x):
        def refuse(x, function):
            raise UnsupportedCaseError("srcgrad differentiates this function for real values "
                                       "only; it got a complex value")
        return refuse
    if _number(x) or isinstance(x, types.Array):
        return lambda x, function: x
    return None


def _chooser_whole(dy):
    """``chooser_grad`` over the whole of ``a`` (a number ``dy``)."""
    dtype = _float_dtype(dy) if isinstance(dy, types.Float) else types.float64

    def whole(dy, a, y, axis=None, keepdims=False):
        flat = np.ascontiguousarray(a).reshape(-1)
        count = 0
        for v in flat:
            if v == y or (v != v and y != y):
                count += 1
        out = np.empty(flat.size, dtype)
        for i in range(flat.size):
            v = flat[i]
            chosen = 1.0 if v == y or (v != v and y != y) else 0.0
            out[i] = dy * chosen / max(count, 1)
        return out.reshape(a.shape)
    return whole


def _chooser_along(dy):
    """``chooser_grad`` along an axis of a 2-d ``a`` (``dy`` and ``y`` with the axis kept, or
    without it), of a dtype other than float64: :func:`_split_ties`."""
    dtype = dy.dtype
    if dy.ndim == 2:
        def kept(dy, a, y, axis=None, keepdims=False):
            return _split_ties(_lanes(dy, axis), a, _lanes(y, axis), axis,
                               np.empty(a.shape, dtype))
        return kept
    return lambda dy, a, y, axis=None, keepdims=False: _split_ties(dy, a, y, axis,
                                                                   np.empty(a.shape, dtype))


def _kept1(dy, a, y, axis=None, keepdims=False):
    return chooser_grad(dy[0], a, y[0], axis)


@overload(chooser_grad)
def _chooser_grad(dy, a, y, axis=None, keepdims=False):
    """``dy`` split equally among the elements of ``a`` equal to the maximum (or minimum) ``y``
    (NaN: the NaNs); over the whole of ``a`` (no axis, or a 1-d ``a``) or one axis of a 2-d
    ``a``."""
    if not isinstance(a, types.Array) or not isinstance(a.dtype, types.Float):
        return None
    arrays = isinstance(dy, types.Array) and isinstance(y, types.Array)
    if _number(dy) and _number(y) and (_absent(axis) or a.ndim == 1):
        return None if isinstance(dy, types.Complex) else _chooser_whole(dy)
    if _absent(axis) or not arrays or dy.ndim != y.ndim:
        return None
    if a.ndim == 1 and dy.ndim == 1:
        return _kept1
    if a.ndim == 2 and dy.ndim in (1, 2) and isinstance(dy.dtype, types.Float):
        if dy.dtype == a.dtype == y.dtype == types.float64:
            if dy.ndim == 2:
                return lambda dy, a, y, axis=None, keepdims=False: _chooser_f64_kept(dy, a, y,
                                                                                     axis)
            return lambda dy, a, y, axis=None, keepdims=False: _chooser_f64(dy, a, y, axis)
        return _chooser_along(dy)
    return None
