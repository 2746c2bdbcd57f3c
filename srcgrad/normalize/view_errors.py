"""The messages of ``normalize/inplace.py``'s refusals of a value read after a write it shares.

Requires: the context of the function being checked. Guarantees: ``view_error`` names the value,
the array it shares and what to write instead, located at the user's line (at the call, for a
value of an inlined helper's line): a dict's live view, a loop's sequence written in the loop, a
method taken as a value, a name holding the same array, a view.
"""

from __future__ import annotations

import re

import gast

from ..emit import naming
from ..errors import UnsupportedSyntaxError
from .aliasing import DICT_VIEWS


def view_error(ctx, value, r, base, stmt=None):
    """The located error for ``r = value``, which holds (a view of) ``base``, read after a write
    into ``base``; ``stmt``: the statement that reads it, where ``value`` is a helper's."""
    fn = ctx.namespace.resolve(value.func, ctx.local_names) if isinstance(
        value, gast.Call) else None
    if any(fn is v for v in DICT_VIEWS):
        method = fn.__name__.replace("dict_", "")
        what = (
            f"`{base}.{method}()` is read after `{base}` changes (a write into it further "
            f"down, or in a later trip of the loop): Python's `{method}()` is a live view "
            f"that sees the change, srcgrad's would not. Take `{base}.{method}()` after the "
            f"change, or write the new values into another dict"
        )
        return ctx.location.error(UnsupportedSyntaxError, value, what)
    text = (ctx.location.of(value)[3] or "").strip()
    if re.fullmatch(naming.SEQ + r"(_\d+)?", r) and text.startswith(("for ", "async for")):
        what = (
            f"the sequence this loop runs over holds `{base}` (or an array that shares its "
            f"memory), which is written into in the loop, so a later trip reads the written "
            f"values: a dependence srcgrad does not follow. Loop over a copy (`{base}.copy()`)"
            f" or write into a new array"
        )
    elif re.fullmatch(r"\w+_self", r) and isinstance(value, gast.Name):  # naming.SELF
        held = r[: -len("_self")]
        what = (
            f"`{held}` is a method of `{base}` taken as a value (`{held} = {base}.method`), "
            f"and `{base}` changes afterwards (a field assigned or written into): Python's "
            f"`{held}` sees the change, srcgrad's would not. Call the method where it is "
            f"named after the change (`{base}.method(x)`), or take `{held}` after it"
        )
    elif not isinstance(value, gast.Subscript):
        what = (
            f"`{r}` refers to the array in `{base}`, which is written into afterwards, so it "
            f"changes with the write: a dependence srcgrad does not follow. Use a copy there "
            f"(`{base}.copy()`)"
        )
    else:
        what = (
            f"`{r}` is a view of `{base}`, which is written into afterwards, so it changes "
            f"with the write: a dependence srcgrad does not follow. Take a copy "
            f"(`{r} = {base}[...].copy()`)"
        )
    # (a value of an inlined helper's line, `self.a = cell` in an `__init__`: at the call)
    where = stmt if stmt is not None and getattr(value, "lineno", None) != getattr(
        stmt, "lineno", None) else value
    return ctx.location.error(UnsupportedSyntaxError, where, what)
