"""Keep the user function's parameter defaults when the derivative appends a last parameter.

Requires: a derived function whose last positional parameter was appended by the transform (the
``vjp`` seed, the ``jvp`` tangent) and ``ctx.defaults``, the defaults the transform dropped.
Guarantees: the optional parameters and that last one arrive together in ``*rest`` and are told
apart at the start of the call; an optional parameter may also come by keyword. A function with a
``*args`` of its own (a derivative with defaults, differentiated again) gets its ``*args`` from
``*rest`` too, between the optional parameters and the last one.

    def f(x, a=2.0): ...     ->     def f_vjp(x, *rest, a=UNSET):
                                        a, seed = bind_optional(rest, (a,), (2.0,), 'f_vjp')
"""

from __future__ import annotations

import gast

from .. import runtime
from ..emit import naming


def run(node, ctx):
    """The pass (only for modes with a trailing parameter, and only when there are defaults or
    a ``*args`` parameter: the trailing parameter comes after it too)."""
    defaults = ctx.defaults
    args = node.args
    # the defaults are those of the last positional parameters, positional-only ones included
    # (``def f(x, a=2.0, /, b=3.0)``): an optional one becomes keyword-only like the others
    posonly = list(args.posonlyargs)
    *params, last = posonly + args.args
    trailing = [last]
    layout = ctx.rest_layout
    if layout is not None:  # a derivative's optional parameters, plain again (functional.py)
        defaults = layout.defaults
        cut = len(params) - layout.trailing - len(defaults)
        trailing = params[cut + len(defaults):] + [last]
        params = params[:cut + len(defaults)]
    cut = len(params) - len(defaults)
    required, optional = params[:cut], params[cut:]
    unset = gast.Name(ctx.global_name(runtime.UNSET, "UNSET"), gast.Load(), None, None)
    rest = ctx.namer.fresh(naming.REST)
    args.posonlyargs, args.args = required[:len(posonly)], required[len(posonly):]
    varargs = args.vararg
    args.vararg = gast.Name(rest, gast.Param(), None, None)
    args.kwonlyargs = [gast.Name(p.id, gast.Param(), None, None) for p in optional] + list(
        args.kwonlyargs
    )
    args.kw_defaults = [unset for _ in optional] + list(args.kw_defaults)
    helper = gast.Name(ctx.global_name(runtime.bind_optional, "bind_optional"), gast.Load(),
                       None, None)
    names = [gast.Name(p.id, gast.Load(), None, None) for p in optional]
    call = gast.Call(
        helper,
        [
            gast.Name(rest, gast.Load(), None, None),
            gast.Tuple(names, gast.Load()),
            gast.Tuple(list(defaults), gast.Load()),
            gast.Constant(node.name, None),
        ] + ([gast.Constant(True, None)] if varargs is not None else []),
        [gast.keyword("trailing", gast.Constant(len(trailing), None))] if len(trailing) > 1
        else [],
    )
    bound = optional + ([varargs] if varargs is not None else []) + trailing
    targets = [gast.Name(p.id, gast.Store(), None, None) for p in bound]
    node.body.insert(0, gast.Assign([gast.Tuple(targets, gast.Store())], call, None))
    return node
