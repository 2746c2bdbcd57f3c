"""The numba implementations of the helpers of ``x op= v``, ``a, b = v`` and ``|x|``.

Requires: ``runtime/numba_helpers.py`` (imported from its end). Guarantees: ``WRITE_HELPERS``,
the Python helper -> the helper numba compiles, for ``inplace_target``, ``kept_dtype``,
``kept_dtype_tangent``, ``written_grad`` (runtime/writes.py), ``check_unpacked``
(runtime/lists.py) and ``real_sign`` (runtime/complex_values.py); their errors are srcgrad's.
Here ``inplace_target`` gives x's dtype as a zero of it (numba's types carry the dtype).
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..errors import CompiledValueError, PythonTypeError
from . import complex_values, lists, writes


def real_sign(x):
    """``runtime.real_sign``."""
    return complex_values.real_sign(x)


def inplace_target(x, v):
    """``runtime.writes.inplace_target``: here the dtype as a number of it (numba's types)."""
    return writes.inplace_target(x, v)


def kept_dtype(v, dtype):
    """``runtime.writes.kept_dtype``."""
    return writes.kept_dtype(v, dtype)


def kept_dtype_tangent(t, dtype):
    """``runtime.writes.kept_dtype_tangent``."""
    return writes.kept_dtype_tangent(t, dtype)


def written_grad(g, dtype):
    """``runtime.writes.written_grad``."""
    return writes.written_grad(g, dtype)


def check_unpacked(value, count, text="v"):
    """``runtime.check_unpacked``."""
    return lists.check_unpacked(value, count, text)


WRITE_HELPERS = {
    complex_values.real_sign: real_sign,
    writes.inplace_target: inplace_target,
    writes.kept_dtype: kept_dtype,
    writes.kept_dtype_tangent: kept_dtype_tangent,
    writes.written_grad: written_grad,
    lists.check_unpacked: check_unpacked,
}


@overload(real_sign)
def _real_sign(x):
    # (a boolean array's sign is the array as 0 and 1, as runtime.real_sign gives it)
    if isinstance(x, types.Array) and isinstance(x.dtype, types.Boolean):
        return lambda x: x.astype(np.int8)
    return lambda x: np.sign(x)


@overload(inplace_target)
def _inplace_target(x, v):
    # `x op= v`: NumPy's error where v would widen the array x; x's dtype as a zero of it
    if not isinstance(x, types.Array):
        return lambda x, v: None
    if not isinstance(v, types.Array):
        return lambda x, v: np.zeros(1, x.dtype)[0]
    if v.ndim > x.ndim:
        def wider(x, v):
            raise CompiledValueError("non-broadcastable output operand")
        return wider

    def target(x, v):
        for k in range(1, v.ndim + 1):
            if v.shape[v.ndim - k] != 1 and v.shape[v.ndim - k] != x.shape[x.ndim - k]:
                raise CompiledValueError("non-broadcastable output operand")
        return np.zeros(1, x.dtype)[0]
    return target


def _discrete(t):
    return isinstance(t, (types.Integer, types.Boolean))


@overload(kept_dtype)
def _kept_dtype(v, dtype):
    if isinstance(dtype, types.NoneType) or not isinstance(v, types.Array) or v.dtype == dtype:
        return lambda v, dtype: v
    if _discrete(dtype) and not _discrete(v.dtype):
        def refuse(v, dtype):
            raise PythonTypeError("Cannot cast ufunc output according to the rule 'same_kind'")
        return refuse
    target = as_dtype(dtype)
    return lambda v, dtype: v.astype(target)


@overload(kept_dtype_tangent)
def _kept_dtype_tangent(t, dtype):
    if isinstance(dtype, types.NoneType) or not isinstance(t, types.Array) or t.dtype == dtype:
        return lambda t, dtype: t
    if _discrete(dtype):
        return lambda t, dtype: np.zeros_like(t)
    target = as_dtype(dtype)
    return lambda t, dtype: t.astype(target)


@overload(written_grad)
def _written_grad(g, dtype):
    if _discrete(dtype):
        return lambda g, dtype: np.zeros_like(g)
    return lambda g, dtype: g


@overload(check_unpacked)
def _check_unpacked(value, count, text="v"):
    def check(value, count, text="v"):
        if len(value) != count:
            raise CompiledValueError("a different number of values to unpack")
    return check
