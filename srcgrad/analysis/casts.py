"""Casts: which ``dtype`` arguments stop the gradient, decided at transform time where possible.

A value cast to an integer or boolean dtype is piecewise constant in what it was cast from, so it
carries no gradient: ``x.astype(int)``, ``np.array(x, dtype=bool)``, ``np.sum(x, dtype=np.int64)``
are constants (``int()``, ``round``, ``np.floor``, ``np.int64(x)`` are rules without gradient). A
cast to a floating dtype (``astype(np.float32)``) passes the gradient on.

Requires: a ``dtype`` argument as an atom of A-normal form, and the function's namespace.
Guarantees: a dtype that is a literal, a builtin type or a NumPy name is classified at transform
time (the classifier then makes an integer cast a constant); one held in a variable is DYNAMIC,
left to ``astype``'s rule at run time and refused by activity analysis elsewhere.

    static_dtype(gast "int")           -> DISCRETE
    static_dtype(gast "np.float32")    -> INEXACT
    static_dtype(gast "x_dtype")       -> DYNAMIC  (a variable: decided when it runs)
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..frontend.resolve import MISSING
from ..runtime import writes

DISCRETE, INEXACT, DYNAMIC = "discrete", "inexact", "dynamic"


def static_dtype(atom, namespace, local_names):
    """How a ``dtype`` argument (an atom) casts: DISCRETE, INEXACT, DYNAMIC, or None when the
    argument is absent or None (no cast)."""
    if atom is None:
        return None
    if isinstance(atom, gast.Constant):
        value = atom.value
    else:
        value = namespace.resolve(atom, local_names)
        if value is MISSING:
            return DYNAMIC
    if value is None:
        return None
    try:
        dtype = np.dtype(value)
    except TypeError:
        return DYNAMIC
    return INEXACT if np.issubdtype(dtype, np.inexact) else DISCRETE


def run_time_casts():
    """Helpers whose rules decide a dtype held in a variable when they run."""
    return (
        runtime.astype, runtime.cast_grad, runtime.cast_tangent, writes.written,
        writes.written_grad, writes.kept_dtype, writes.kept_dtype_tangent,
    )
