"""numba implementations of ``check_seed`` and ``elem`` on tuples.

Requires: ``runtime/numba_helpers.py`` (the helpers, as Python functions, that these overload
beside their implementations for numbers and arrays). Guarantees: the vjp of a function that
returns a tuple (a checkpointed loop's step returns its state: ``emit/numba_checkpoint.py``)
compiles: ``check_seed(seed, out)`` of a tuple seed checks each element against the output's
(the numbers-and-arrays implementation, which raises for a shape that differs) and
``elem(dy, i, x)`` reads element ``i`` (a literal) of a tuple cotangent, zeros for a missing one.
Imported by ``emit/numba_checkpoint.py`` before numba compiles such a vjp.
"""

from __future__ import annotations

from numba.core import types
from numba.extending import overload

from .numba_helpers import _absent, _generated, check_seed, elem, zeros_like


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
