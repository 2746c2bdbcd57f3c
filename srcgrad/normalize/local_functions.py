"""The local functions of a body, as ``check.extract_local_functions`` takes them out.

Requires: a parsed body, before ``check`` takes its lambdas and nested defs out, and a namer.
Guarantees (the statements ``extract_local_functions`` leaves where a function is defined):
a lambda given to a helper or put into a display is assigned to a fresh name first
(``lambdas_named``); a local function defined on two paths, or whose name is bound otherwise
too, gets a name of its own that its name is bound to there (``bound_to``); a default that is
not a constant is bound where the function is defined, as Python evaluates it
(``defaults_bound``).

    apply({"f": lambda v: v * 3.0}, x)     ->   lambda_2 = lambda v: v * 3.0
                                                apply({"f": lambda_2}, x)
    if c:                                       if c:
        g = lambda v: v * 2.0              ->       g_2 = lambda v: v * 2.0
    else:                                           g = g_2
        g = lambda v: v * 3.0                   else: ...
    h = lambda v, i=i: v * x[i]            ->   i_default = i
                                                h = lambda v, i=i_default: v * x[i]
"""

from __future__ import annotations

import os
import re

import gast

from ..astutil import walk
from ..emit.naming import DEFAULT, LAMBDA
from ..errors import UnsupportedSyntaxError


def bound_to(where, target, own):
    """``g = g_2``: a local function defined on two paths, or a name bound otherwise too, is a
    function of a name of its own (``g_2``) that ``g`` is bound to where it is defined
    (normalize/rebound.py dispatches the calls of ``g``); nothing when defined once."""
    if target == own:
        return []
    return [gast.copy_location(gast.Assign([gast.Name(target, gast.Store(), None, None)],
                                           gast.Name(own, gast.Load(), None, None), None), where)]


def lambdas_named(s, namer):
    """``s``, after ``lambda_2 = lambda ...`` for each lambda it gives a helper, puts into a
    display (``apply({"f": lambda v: v * 3.0}, x)``), returns or assigns into an item or a
    field (``d["f"] = lambda v: ...``), which then reads ``lambda_2``: a local function of its
    own name. Not a lambda without defaults given to ``map``, ``filter``,
    ``sorted``, ``min`` or ``max`` (those become comprehensions), nor one inside a
    comprehension or a lambda."""
    if namer is None or not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr,
                                            gast.Return)) or (
            isinstance(s, gast.Assign) and isinstance(s.value, gast.Lambda)
            and all(isinstance(t, gast.Name) for t in s.targets)):
        return [s]
    out = []

    def named(lam):
        fn = namer.fresh(LAMBDA)
        out.append(gast.copy_location(gast.Assign(
            [gast.Name(fn, gast.Store(), None, None)], lam, None), s))
        return gast.copy_location(gast.Name(fn, gast.Load(), None, None), lam)

    def visit(node, kept=False):
        kept = kept or isinstance(node, gast.Call) and isinstance(
            node.func, gast.Name) and node.func.id in _SPECIAL_CALLS
        for field, value in gast.iter_fields(node):
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                if isinstance(item, gast.Lambda) and (not kept or item.args.defaults or any(
                        item.args.kw_defaults)) and isinstance(node, (
                        gast.Call, gast.keyword, gast.Dict, gast.List, gast.Tuple,
                        gast.Return, gast.Assign)):
                    items[i] = named(item)
                elif isinstance(item, gast.AST) and not isinstance(item, _OWN_SCOPES):
                    visit(item, kept and isinstance(item, gast.keyword))
            if not isinstance(value, list) and items[0] is not value:
                setattr(node, field, items[0])

    visit(s)
    return out + [s]


_SPECIAL_CALLS = ("map", "filter", "sorted", "min", "max")
_OWN_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def defaults_bound(node, where, namer, found):
    """``d = expr`` for each default ``expr`` of the local function ``node`` that is not a
    constant (nor the name of a local function defined before it), which then becomes ``d``:
    the value the definition gave it, whatever the name holds at the call."""
    if namer is None:
        return []
    out = []
    args = node.args
    params = (args.posonlyargs + args.args)[len(args.posonlyargs + args.args)
                                            - len(args.defaults):]
    pairs = list(zip(params, args.defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    bound = {}
    for param, expr in pairs:
        if expr is None or isinstance(expr, gast.Constant) or (
                isinstance(expr, gast.UnaryOp) and isinstance(expr.operand, gast.Constant)) or (
                isinstance(expr, gast.Name) and expr.id in found):
            continue
        name = namer.fresh(DEFAULT.format(param.id))
        out.append(gast.copy_location(
            gast.Assign([gast.Name(name, gast.Store(), None, None)], expr, None), where))
        bound[id(expr)] = gast.copy_location(gast.Name(name, gast.Load(), None, None), expr)
    args.defaults = [bound.get(id(d), d) for d in args.defaults]
    args.kw_defaults = [bound.get(id(d), d) for d in args.kw_defaults]
    return out


def named(name, local_functions):
    """How a message names the local function ``name`` (``local_functions``: name ->
    (FunctionDef, location)): by the user's name for it, or, for a lambda (which has none),
    by the file and line it is written on."""
    node, location = local_functions.get(name, (None, None))
    written = getattr(node, "written_as", name)
    if not re.fullmatch(LAMBDA + r"(_\d+)+", written):
        return f"the local function `{written}`"
    if node is None or getattr(node, "lineno", None) is None:
        return "a lambda"
    filename, lineno, _, _ = location.of(node)
    return f"the lambda written on line {lineno} of {os.path.basename(filename)}"


def refuse_values(fn_node, local_functions, location, what=None):
    """A lambda or nested def has no object when the derivative runs (its calls are inlined):
    one still read as a value after inlining (a tuple of them whose ``len`` is taken, one
    returned) is an error at transform time, not a NameError when the derivative runs."""
    if not local_functions:
        return
    for stmt in walk(fn_node.body):
        if not isinstance(stmt, gast.stmt) or isinstance(stmt, (gast.If, gast.For, gast.While)):
            continue
        n = next((n for n in walk(stmt) if isinstance(n, gast.Name) and isinstance(
            n.ctx, gast.Load) and n.id in local_functions), None)
        if n is not None:
            where = n if getattr(n, "lineno", None) is not None else stmt
            raise location.error(UnsupportedSyntaxError, where, (
                f"srcgrad does not support {what} here" if what is not None else
                f"srcgrad does not support {named(n.id, local_functions)} used as a value here "
                f"(only its calls are inlined; it has no object when the derivative runs): "
                f"call it, or pass it (or a tuple or list holding it, which nothing changes or "
                f"keeps) to a helper that calls it; or define it at module level"))
