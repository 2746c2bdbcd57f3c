"""What lowered code calls through functions numba compiles once per machine (``njit(cache=True)``).

Requires: ``runtime/numba_helpers.py`` (the helpers and their numba implementations) and
``numba_reductions.py``; imported from the end of ``numba_helpers``. Guarantees: the functions
``numba_backend`` writes calls to by names of their own (the per-iteration saves, ``**``, ``@``,
``np.empty``/``np.zeros``) and the wrappers of helpers generated code calls (:data:`CACHED`:
``unbroadcast``, ``unreduce``, ``shape_like``, the adjoints of ``@``, ``chooser_grad``, ...) are
dispatchers whose compilations, per argument types, numba keeps in its cache: a new derivative
loads them instead of compiling the helpers' implementations again in every process.

Each is made by :func:`stamped`: numba's cache of a function checks only the function's own file,
but these compile implementations from several files (``numba_helpers.py``,
``numba_reductions.py``, the kernels they call), so their cache entries are also stamped with
srcgrad's sources and versions (``diskcache.environment``): a changed helper is compiled anew,
never loaded stale. Where numba's cache has not the attributes this relies on (another numba
version), the function is not cached at all (compiled per process, as correct).
"""

from __future__ import annotations

import numpy as np
from numba import njit, objmode
from numba.core import types
from numba.extending import overload

from . import numba_helpers as nh
from . import numba_linking
from .numba_reductions import chooser_grad


def _stamp():
    from ..emit import diskcache

    return repr(diskcache.environment()[:-1])  # (not SciPy's version: numba may import it later)


STAMP = _stamp()
numba_linking.install()


def stamped(fn):
    """``njit(cache=True)(fn)``, its cache valid for these sources of srcgrad only."""
    dispatcher = njit(cache=True)(fn)
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, STAMP)
        numba_linking.register(dispatcher)  # (called unlinked from derivatives' modules)
    else:  # pragma: no cover - a numba whose cache is laid out otherwise
        from numba.core.caching import NullCache

        dispatcher._cache = NullCache()
    return dispatcher


# --- per-iteration saves: preallocated arrays of numbers, else a list -------------------------
def new_saves(capacity, value):
    """Where a loop of at most ``capacity`` iterations saves ``value`` (a number, or a tuple of
    them: one preallocated array each; anything else: a list)."""
    return []


def save(saves, top, value):
    """``value`` saved at ``top``; the new top."""
    saves.append(value)
    return top + 1


def restore(saves, top):
    """The value saved at ``top`` (the saves' top after the pop)."""
    return saves.pop()


def _numbers(value):
    """The types of ``value``'s numbers (one for a number), or None if it holds anything else."""
    if isinstance(value, (types.Float, types.Integer, types.Boolean)):
        return (value,)
    if isinstance(value, types.BaseTuple) and value.types and all(
        isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in value.types
    ):
        return tuple(value.types)
    return None


@overload(new_saves)
def _new_saves(capacity, value):
    numbers = _numbers(value)
    if numbers is None:
        def listed(capacity, value):
            saves = [value]
            saves.pop()
            return saves
        return listed
    if not isinstance(value, types.BaseTuple):
        dtype = numbers[0]
        return lambda capacity, value: np.empty(capacity, dtype)
    scope = {"np": np, **{f"d{i}": t for i, t in enumerate(numbers)}}
    arrays = ", ".join(f"np.empty(capacity, d{i})" for i in range(len(numbers)))
    return nh._generated(f"def arrays(capacity, value):\n    return ({arrays},)\n", "arrays",
                         scope)


@overload(save)
def _save(saves, top, value):
    if isinstance(saves, types.List):
        def listed(saves, top, value):
            saves.append(value)
            return top + 1
        return listed
    if isinstance(saves, types.Array):
        def array(saves, top, value):
            saves[top] = value
            return top + 1
        return array
    writes = "".join(f"    saves[{i}][top] = value[{i}]\n" for i in range(len(saves)))
    return nh._generated(f"def arrays(saves, top, value):\n{writes}    return top + 1\n",
                         "arrays", {})


@overload(restore)
def _restore(saves, top):
    if isinstance(saves, types.List):
        return lambda saves, top: saves.pop()
    if isinstance(saves, types.Array):
        return lambda saves, top: saves[top]
    reads = ", ".join(f"saves[{i}][top]" for i in range(len(saves)))
    return nh._generated(f"def arrays(saves, top):\n    return ({reads},)\n", "arrays", {})


@stamped
def srcgrad_new_saves(capacity, value):
    return new_saves(capacity, value)


@stamped
def srcgrad_save(saves, top, value):
    return save(saves, top, value)


@stamped
def srcgrad_restore(saves, top):
    return restore(saves, top)


def srcgrad_power(a, b):
    """``a ** b`` as Python computes it."""
    return a ** b


@overload(srcgrad_power)
def _srcgrad_power(a, b):
    integers = (types.Integer, types.Boolean)
    if isinstance(a, integers) and isinstance(b, integers):
        # Python: a float for a negative power (numba: an integer, 0); never wraps around
        return lambda a, b: float(a) ** b
    return lambda a, b: a ** b


def matmul(a, b):
    """``a @ b``."""
    return a @ b


@overload(matmul)
def _matmul(a, b):
    if nh._float64_arrays(a, b) and a.ndim <= 2 and b.ndim <= 2:
        return lambda a, b: nh._matmul(a, b)
    return lambda a, b: a @ b  # numba's own, compiled here (or its typing error)


@stamped
def srcgrad_matmul(a, b):
    return matmul(a, b)


# --- allocations -------------------------------------------------------------------------------
# numba compiles `np.empty` and `np.zeros` anew for every function that calls them (a second or
# more at the first call, under load); called through these, it loads them from its cache.
@stamped
def srcgrad_floats(n):
    """``np.empty(n, np.float64)``."""
    return np.empty(n, np.float64)


@stamped
def srcgrad_ints(n):
    """``np.empty(n, np.int64)``."""
    return np.empty(n, np.int64)


@stamped
def srcgrad_zeros(shape):
    """``np.zeros(shape)``."""
    return np.zeros(shape)


#: (NumPy function, its arguments as written) -> the cached helper called for it
ALLOCATIONS = {
    ("empty", "float64"): "srcgrad_floats",
    ("empty", "int64"): "srcgrad_ints",
    ("zeros", None): "srcgrad_zeros",
}


# --- helpers generated code calls through these wrappers, per argument types -------------------
@stamped
def _unbroadcast_cached(g, x):
    return nh.unbroadcast(g, x)


@stamped
def _matmul_vjp_left_cached(dy, a, b):
    return nh.matmul_vjp_left(dy, a, b)


@stamped
def _matmul_vjp_right_cached(dy, a, b):
    return nh.matmul_vjp_right(dy, a, b)


@stamped
def _cast_like_cached(g, x):
    return nh.cast_like(g, x)


@stamped
def _unreduce_cached(dy, x, axis=None, keepdims=False):
    return nh.unreduce(dy, x, axis, keepdims)


@stamped
def _mean_grad_cached(dy, x, axis=None, keepdims=False):
    return nh.mean_grad(dy, x, axis, keepdims)


@stamped
def _shape_like_cached(*values):
    return nh.shape_like(*values)


@stamped
def _chooser_grad_cached(dy, a, y, axis=None, keepdims=False):
    return chooser_grad(dy, a, y, axis, keepdims)


CACHED = {  # helper -> what generated code calls for it
    nh.unbroadcast: _unbroadcast_cached, nh.matmul_vjp_left: _matmul_vjp_left_cached,
    nh.matmul_vjp_right: _matmul_vjp_right_cached, nh.cast_like: _cast_like_cached,
    nh.unreduce: _unreduce_cached, nh.mean_grad: _mean_grad_cached,
    nh.shape_like: _shape_like_cached, chooser_grad: _chooser_grad_cached}


# --- transcendental functions of arrays: NumPy's own, past a size ------------------------------
# numba evaluates np.tanh / np.exp of an array element by element through libm, NumPy with SIMD
# loops: np.tanh of the benchmark MLP's 256x256 array took 1.2 ms of CPU time compiled by numba,
# 0.14 ms in NumPy (0.12 ms called from compiled code through objmode, whose cost is ~2.5 us a
# call). Below OBJMODE_SIZE elements numba's own is the faster.
OBJMODE_SIZE = 128


def tanh(a):
    """``np.tanh(a)``."""
    return np.tanh(a)


def exp(a):
    """``np.exp(a)``."""
    return np.exp(a)


@stamped
def _numpy_tanh_1d(a):
    with objmode(out="float64[:]"):
        out = np.tanh(a)
    return out


@stamped
def _numpy_tanh_2d(a):
    with objmode(out="float64[:, :]"):
        out = np.tanh(a)
    return out


@stamped
def _numpy_exp_1d(a):
    with objmode(out="float64[:]"):
        out = np.exp(a)
    return out


@stamped
def _numpy_exp_2d(a):
    with objmode(out="float64[:, :]"):
        out = np.exp(a)
    return out


@overload(tanh)
def _tanh(a):
    if isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim in (1, 2):
        numpy = _numpy_tanh_1d if a.ndim == 1 else _numpy_tanh_2d
        return lambda a: np.tanh(a) if a.size < OBJMODE_SIZE else numpy(a)
    return lambda a: np.tanh(a)


@overload(exp)
def _exp(a):
    if isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim in (1, 2):
        numpy = _numpy_exp_1d if a.ndim == 1 else _numpy_exp_2d
        return lambda a: np.exp(a) if a.size < OBJMODE_SIZE else numpy(a)
    return lambda a: np.exp(a)


@stamped
def srcgrad_tanh(a):
    return tanh(a)


@stamped
def srcgrad_exp(a):
    return exp(a)


ALLOCATIONS.update({("tanh", None): "srcgrad_tanh", ("exp", None): "srcgrad_exp"})
