"""What a call may change in place, for the in-place pass (``inplace_calls``): functions known
to change an argument, types whose methods may change what they are called on, the methods known
to change nothing, and the functions trusted to change none of their arguments.

Requires: a function or method the call resolves to, and the call's node (its keywords).
Guarantees: nothing is called; ``trusted`` is False for whatever may write into its arguments
other than through ``out=`` (compiled code, ``ctypes``, ``operator.methodcaller``).

    mutator(heapq.heappush, call)       -> "`heapq.heappush` (it changes its argument in place)"
    keeps([1.0], "count", call)         -> True      keeps([1.0], "reverse", call) -> False
    trusted(np.exp)                     -> True      trusted(numba_function)       -> False
"""

from __future__ import annotations

import bisect
import heapq
import inspect
import operator
import sys

import gast
import numpy as np

from .. import runtime
from ..analysis.ops import METHODS, OPAQUE_MODULES, dotted
from ..rules import random_draws

# Runtime helpers that change their first argument: never a pure call.
IN_PLACE_HELPERS = (
    runtime.setitem, runtime.add_at, runtime.zero_item, runtime.restore_item,
    runtime.list_append, runtime.list_pop,
)


# Functions that change an argument in place (no rule, no source srcgrad reads): refused whether
# or not their result is used, since what they change may be an index or a mask the derivative
# reads again.
MUTATORS = frozenset(
    [heapq.heapify, heapq.heappush, heapq.heappop, heapq.heappushpop, heapq.heapreplace,
     bisect.insort, bisect.insort_left, bisect.insort_right, operator.setitem, operator.delitem]
    + [getattr(operator, f"i{op}") for op in (
        "add", "and", "concat", "floordiv", "lshift", "mod", "mul", "matmul", "or", "pow",
        "rshift", "sub", "truediv", "xor")]
)
# Types whose methods, called as functions (`list.sort(xs)`, `np.ndarray.fill(a, 0)`), may
# change their first argument; `METHODS` lists the array methods known not to.
MUTABLE_TYPES = (list, dict, set, bytearray, np.ndarray)


def mutator(fn, call):
    """What the call changes in place, said for a refusal, or None."""
    try:
        if fn in MUTATORS:
            return f"`{dotted(call.func)}` (it changes its argument in place)"
    except TypeError:  # unhashable
        pass
    owner = getattr(fn, "__objclass__", None)
    if owner in MUTABLE_TYPES and not (owner is np.ndarray and fn.__name__ in METHODS):
        return (f"`{dotted(call.func)}` called as a function (srcgrad does not know whether it "
                f"changes its argument in place)")
    for k in call.keywords:
        if (k.arg or "").startswith("overwrite_") and not (
            isinstance(k.value, gast.Constant) and k.value.value is False
        ):
            return f"`{k.arg}=` (the call may overwrite its argument)"
    return None


# Where a ufunc method takes `out` by position (`np.add.reduce(a, 0, None, out)`); `outer` takes
# it by keyword only.
UFUNC_OUT_AT = {"reduce": 3, "accumulate": 3, "reduceat": 4, "outer": None}

# Methods that change nothing, by the type of what they are called on (an array's: those of
# `METHODS`, without `out=`).
KEEPING_METHODS = {
    list: {"copy", "count", "index"},
    dict: {"copy", "get", "items", "keys", "values"},
    set: {"copy", "difference", "intersection", "isdisjoint", "issubset", "issuperset",
          "symmetric_difference", "union"},
}


def keeps(owner, method, call):
    """Whether ``owner.method(...)`` (``call``) is known to leave ``owner`` and its arguments as
    they are."""
    if isinstance(owner, np.ndarray):
        return method in METHODS and not any(k.arg == "out" for k in call.keywords)
    return method in KEEPING_METHODS.get(type(owner), ())


def shuffles(fn):
    """Whether ``fn`` is NumPy's ``shuffle`` (of a generator, of the legacy global state, or
    called through the class), which changes its argument in place."""
    module = getattr(fn, "__module__", None) or ""
    return getattr(fn, "__name__", None) == "shuffle" and (
        random_draws.is_draw(fn) or module.startswith("numpy.random"))


def trusted(fn):
    """Whether a function without a rule or source is known to change none of its arguments:
    NumPy's and SciPy's (whose writes, `out=`, `overwrite_*=`, `output=`, are modelled or
    refused on their own; not SciPy's wrapped Fortran routines), the standard library's (not
    `ctypes`), Python functions (inlined, or called recursively and checked), classes, a draw,
    a method of a list, dict or set (the container changes, not what it is given)."""
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    if type(fn).__name__ == "fortran" or module == "ctypes":  # BLAS, LAPACK; memmove
        return False
    if isinstance(fn, operator.methodcaller):  # calls a method by name: `sort`, `fill`
        return False
    return (module in OPAQUE_MODULES or module in sys.stdlib_module_names
            or inspect.isfunction(fn) or inspect.ismethod(fn)
            and inspect.isfunction(fn.__func__) or isinstance(fn, type)
            or random_draws.is_draw(fn) or own_helper(fn)
            # a method of an array or a ufunc: changes only what it is called on, or `out=`
            or isinstance(getattr(fn, "__self__", None), (np.ndarray, np.ufunc))
            # a ufunc writes only `out=`, as NumPy's own (SciPy's special functions are ufuncs
            # whose __module__ is None: gammaln(A) of a global A was refused); not one running
            # Python code on objects (np.frompyfunc), which may do anything
            or isinstance(fn, np.ufunc) and not any("O" in t for t in fn.types)
            or isinstance(getattr(fn, "__self__", None), (list, dict, set)))


def own_helper(fn):
    """A runtime helper of srcgrad's (in generated code differentiated again), not one that
    writes into its first argument (``IN_PLACE_HELPERS``, modelled where they are met)."""
    module = getattr(fn, "__module__", None) or ""
    return module.startswith("srcgrad.runtime") and not any(fn is h for h in IN_PLACE_HELPERS)
