"""A ``with`` manager of the user's own beside a value read from outside the function: refused.

Requires: the inlined A-normal-form body (``with m:`` is ``enter_context(m)`` ... by then).
Guarantees: a manager srcgrad does not know (not NumPy's, SciPy's or the standard library's)
in a function that reads an array, list, dict or set from outside it raises a located
``UnsupportedSyntaxError``: its ``__enter__`` and ``__exit__`` run as they are and may change
that value, which the derivative would not see.
"""

from __future__ import annotations

import sys

import gast
import numpy as np

from .. import runtime
from ..analysis.ops import OPAQUE_MODULES
from ..astutil import local_names, walk
from ..errors import UnsupportedSyntaxError


def refuse_managers_beside_outside_arrays(fn_node, ctx):
    """A ``with`` manager srcgrad does not know (one of yours, not NumPy's, SciPy's or the
    standard library's) in a function (helpers inlined) that reads an array, list or dict from
    outside it: the manager's ``__enter__`` and ``__exit__`` run as they are and may change that
    value, while the derivative reads it as one value (``with Bump(): s = np.sum(G * x)``
    where ``Bump`` doubles ``G``: half the gradient)."""
    locals_ = local_names(fn_node)
    managers = {}
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            managers[n.targets[0].id] = n
    for n in walk(fn_node):
        if not (isinstance(n, gast.Call) and n.args and isinstance(n.args[0], gast.Name)
                and ctx.namespace.resolve(n.func, locals_) is runtime.enter_context):
            continue
        made = managers.get(n.args[0].id)
        if made is None or _trusted_manager(made.value, ctx, locals_):
            continue
        read = _outside_array_read(fn_node, ctx, locals_)
        if read is not None:
            raise ctx.location.error(
                UnsupportedSyntaxError, made,
                f"srcgrad does not support a `with` manager of your own in a function that "
                f"reads `{read}` from outside it here: the manager's `__enter__` and `__exit__` "
                f"run as they are and may change `{read}`, which the derivative would not see; "
                f"pass `{read}` to the function as an argument, or use the manager outside it")


def _trusted_manager(value, ctx, locals_):
    """A manager made by NumPy, SciPy or the standard library (``np.errstate(...)``)."""
    if not isinstance(value, gast.Call):
        return False
    fn = ctx.namespace.resolve(value.func, locals_)
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    return module in OPAQUE_MODULES or module in sys.stdlib_module_names


def _outside_array_read(fn_node, ctx, locals_):
    """The text of a read of an array, list, dict or set from outside the function, or None."""
    for n in walk(fn_node):
        chain = n
        while isinstance(chain, gast.Attribute):
            chain = chain.value
        if not (isinstance(chain, gast.Name) and isinstance(chain.ctx, gast.Load)
                and chain.id not in locals_):
            continue
        if isinstance(n, (gast.Name, gast.Attribute)) and isinstance(
                ctx.namespace.resolve(n, locals_), (np.ndarray, list, dict, set, bytearray)):
            return dotted(n)
    return None


def dotted(expr):
    """``G``, ``OBJ.w`` or ``D[...]``: the text of an expression from outside the function."""
    if isinstance(expr, gast.Attribute):
        return f"{dotted(expr.value)}.{expr.attr}"
    if isinstance(expr, gast.Subscript):
        return f"{dotted(expr.value)}[...]"
    return getattr(expr, "id", "...")
