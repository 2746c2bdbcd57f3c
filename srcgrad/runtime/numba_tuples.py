"""numba implementations of ``check_seed``, ``elem``, ``getitem_grad`` and ``copy_grad`` on tuples.

Requires: ``runtime/numba_helpers.py`` (the helpers, as Python functions, that these overload
beside their implementations for numbers and arrays). Guarantees: the vjp of a function that
returns a tuple (a checkpointed loop's step returns its state: ``emit/numba_checkpoint.py``)
compiles: ``check_seed(seed, out)`` of a tuple seed checks each element against the output's
(the numbers-and-arrays implementation, which raises for a shape that differs) and
``elem(dy, i, x)`` reads element ``i`` (a literal) of a tuple cotangent, zeros for a missing one;
``getitem_grad(dy, x, i)``, the adjoint of ``x[i]`` of a tuple ``x`` at a literal ``i`` (the
step's ``y, = copy_state((y,))``), is the tuple with ``dy`` at ``i`` and ``None`` (zero)
elsewhere, as Python's sparse ``Cotangents``. ``copy_grad`` of a tuple of numbers and arrays
(what the jvp of a step returns as its tangent) copies each array. Imported by
``emit/numba_checkpoint.py`` before numba compiles such a vjp.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload

from .numba_helpers import (
    _absent,
    _generated,
    _number,
    check_seed,
    copy_grad,
    elem,
    getitem_grad,
    zeros_like,
)


@overload(check_seed)
def _check_seed_tuple(seed, out):
    if not (isinstance(seed, types.BaseTuple) and isinstance(out, types.BaseTuple)):
        return None
    if len(seed) != len(out):
        return None
    checks = "".join(f"    check_seed(seed[{i}], out[{i}])\n" for i in range(len(seed)))
    return _generated(f"def impl(seed, out):\n{checks}    return seed\n", "impl",
                      {"check_seed": check_seed})


@overload(elem, prefer_literal=True)
def _elem_tuple(dy, key, x):
    if not (isinstance(dy, types.BaseTuple) and isinstance(key, types.IntegerLiteral)):
        return None
    k = key.literal_value
    if not 0 <= k < len(dy):
        return None
    if _absent(dy.types[k]):
        return lambda dy, key, x: zeros_like(x)
    return _generated(f"def impl(dy, key, x):\n    return dy[{k}]\n", "impl", {})


@overload(getitem_grad, prefer_literal=True)
def _getitem_grad_tuple(dy, x, index):
    if not (isinstance(x, types.BaseTuple) and isinstance(index, types.IntegerLiteral)):
        return None
    k = index.literal_value
    if not 0 <= k < len(x):
        return None
    parts = ["dy" if i == k else "None" for i in range(len(x))]
    return _generated(f"def impl(dy, x, index):\n    return ({', '.join(parts)},)\n", "impl", {})


@overload(copy_grad)
def _copy_grad_tuple(g):
    if not (isinstance(g, types.BaseTuple)
            and all(_number(t) or isinstance(t, types.Array) for t in g.types)):
        return None
    parts = "".join(f"copy_grad(g[{i}]), " for i in range(len(g)))
    return _generated(f"def impl(g):\n    return ({parts})\n", "impl", {"copy_grad": copy_grad})
