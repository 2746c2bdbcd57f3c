"""Plain-Python forms of standard-library helpers whose own source srcgrad cannot inline.

Requires: nothing (``inline`` looks a callee up in ``FORMS``). Guarantees: each form computes
what the helper computes for the arguments differentiated code gives it, and raises its errors.

``statistics.fmean`` starts with a ``try`` (to count the items of an iterator), which srcgrad
refuses; for the sequences differentiated code passes it, this form computes the same value
(``math.fsum`` of the data over its length, the weighted form likewise) and raises the same
errors, and ``inline`` inlines it in its place. A helper missing here is inlined from its own
source, or refused at the line of that source that srcgrad does not support, with what to use
instead (``advised``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import statistics
import sys
import sysconfig

from ..errors import UnsupportedSyntaxError


def fmean(data, weights=None):
    """``statistics.fmean`` of a sequence (a list, a tuple, an array)."""
    n = len(data)
    if weights is None:
        total = math.fsum(data)
        if not n:
            raise statistics.StatisticsError("fmean requires at least one data point")
        return total / n
    num = math.fsum([d * w for d, w in zip(data, weights)])
    if n != len(weights):
        raise statistics.StatisticsError("data and weights must be the same length")
    den = math.fsum(weights)
    if not den:
        raise statistics.StatisticsError("sum of weights must be non-zero")
    return num / den


def reduce(function, iterable, *initial):
    """``functools.reduce`` (a builtin, without source): a loop calling ``function``, so that
    a lambda or a function given to it is inlined like one given to any helper."""
    items = list(iterable)
    if len(initial) > 1:
        raise TypeError(f"reduce expected at most 3 arguments, got {2 + len(initial)}")
    if initial:
        value = initial[0]
        rest = items
    else:
        if not items:
            raise TypeError("reduce() of empty iterable with no initial value")
        value = items[0]
        rest = items[1:]
    for item in rest:
        value = function(value, item)
    return value


# the standard library's function -> the form inlined in its place
FORMS = {statistics.fmean: fmean, functools.reduce: reduce}


@contextlib.contextmanager
def advised(fn):
    """A refusal raised inside (checking the source of ``fn``) says, where ``fn`` is a function
    of the standard library (``statistics.mean``), what to compute it with instead."""
    try:
        yield
    except UnsupportedSyntaxError as error:
        if _standard_library(fn):
            error.message += (f" (in the standard library's `{fn.__module__}."
                              f"{fn.__qualname__}`: compute it with NumPy, `np.mean`, "
                              f"`np.median`, or with `statistics.fmean`, which srcgrad inlines)")
            error.args = (error._render(),)
        raise


def _standard_library(fn):
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    path = getattr(module, "__file__", None) or ""
    return bool(path) and path.startswith(sysconfig.get_paths()["stdlib"]) and (
        "site-packages" not in path)
