"""Lambdas and nested defs used as values that read no variable of the function: module-level
functions; a stage of ``pipeline``, before ``inline``.

Requires: ``ctx.local_functions`` (``check``), the namespace. Guarantees: a local function
whose name is read other than by calling it (put into a list or a dict, given to a helper or an
object's ``__init__``, returned) and whose body reads no variable of the function (only its
parameters, globals, builtins and the function's closure variables), with no default values,
is made a function object now, as Python would make the same one at module level; each such
read names that object (a constant of the derivative), which a helper, a loop over functions
or a call of an object's field then inlines like any global function. Its calls by name stay
inlined as before. Any other local function used as a value is refused by ``inline`` as before.

    fs = [lambda t: t * 2.0, np.sin]    ->    fs = [lambda_2, np.sin]    (lambda_2: a function)
    return apply_all(fs, x)                   return apply_all(fs, x)
"""

from __future__ import annotations

import gast

from ..astutil import walk
from ..emit.compile import compile_function
from ..emit.unparse import unparse
from ..frontend.source import REWRITTEN_USER_CODE


def run(fn_node, ctx):
    """``fn_node`` with its liftable local functions read as values made globals (see above)."""
    calls = {id(n.func) for n in walk(fn_node) if isinstance(n, gast.Call)}
    values = [n for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load) and n.id in ctx.local_functions and id(n) not in calls]
    made = {}
    for n in values:
        if n.id not in made:
            made[n.id] = _lifted(n.id, ctx)
        if made[n.id] is not None:
            n.id = made[n.id]
    return fn_node


def _lifted(name, ctx):
    """The global name of local function ``name`` made a function object, or None where it
    reads a variable of the function or has defaults."""
    node, _ = ctx.local_functions[name]
    args = node.args
    if args.defaults or any(d is not None for d in args.kw_defaults) or any(
            isinstance(n, (gast.Nonlocal, gast.Global, gast.Yield, gast.YieldFrom))
            for n in walk(node)):
        return None
    own = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
    own |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    own |= {n.id for n in walk(node) if isinstance(n, gast.Name) and not isinstance(
        n.ctx, gast.Load)}
    free = {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)} - own
    if free & (set(ctx.local_names) | set(ctx.local_functions)):
        return None
    fn = compile_function(unparse(node), node.name, ctx.fn, {})
    REWRITTEN_USER_CODE.add(fn.__code__)  # (the user's code, checked as the user's)
    return ctx.global_name(fn, name)
