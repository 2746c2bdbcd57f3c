"""The pass order of srcgrad, in one place.

    parse -> check -> functional -> control -> anf -> inline -> licm -> copy -> ssa -> cse
    -> activity
    -> reverse | forward -> fold -> dce -> proxy -> owned -> release -> emit -> compile

Reverse mode serves "grad", "value_and_grad" and "vjp"; forward mode serves "jvp" (value and
tangent) and "tangent" (the tangent alone, e.g. a Hessian-vector product as the tangent of a
gradient). Both share everything before the transform and everything after it.

``derive(fn, mode, wrt)`` runs it and returns the compiled function and its source.
``dump=True`` (or ``SRCGRAD_DUMP=1`` in the environment) prints the source after every stage.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import gast

from . import runtime
from .analysis.activity import Activity
from .analysis.ops import OpClassifier
from .emit.compile import compile_function
from .emit.naming import Namer
from .emit.unparse import unparse
from .errors import SrcgradError
from .frontend.resolve import Namespace
from .frontend.source import parse_function
from .normalize.anf import ANF, in_place_helpers, local_names
from .normalize.check import CheckSupported
from .normalize.control import DesugarControl
from .normalize.cse import CommonSubexpressions
from .normalize.functional import FunctionalHelpers
from .normalize.inline import InlineCalls, extract_local_functions
from .normalize.inplace import CopyBeforeWrite
from .normalize.licm import HoistInvariants
from .normalize.ssa import SSARename, compound_assigned
from .optimize.dce import DeadCode
from .optimize.fold import ConstantFold
from .optimize.release import ReleaseDead
from .optimize.shape_proxy import ShapeProxies
from .transform.context import GenContext
from .transform.forward import ForwardAD
from .transform.owned import OwnedGradients
from .transform.reverse import ReverseAD

MODES = ("grad", "value_and_grad", "vjp", "jvp", "tangent")
FORWARD_MODES = ("jvp", "tangent")
TRAILING_MODES = ("vjp", "jvp", "tangent")  # modes whose last positional parameter is added


@dataclass(frozen=True)
class Options:
    optimize: bool = True
    verbose: bool = False
    dump: bool = False


def derived_name(name, mode):
    return {
        "grad": f"d{name}",
        "value_and_grad": f"{name}_value_and_grad",
        "vjp": f"{name}_vjp",
        "jvp": f"{name}_jvp",
        "tangent": f"{name}_tangent",
    }[mode]


def derive(fn, mode, wrt, options=Options(), as_tuple=False):
    """Generate, compile and return the ``mode`` derivative of ``fn`` with respect to ``wrt``.

    ``wrt`` is a tuple of parameter names; ``as_tuple`` returns the gradients as a tuple even
    when there is only one.
    """
    dump = options.dump or os.environ.get("SRCGRAD_DUMP") == "1"

    def stage(label, node):
        if dump:
            print(f"# ---- after {label} ----\n{unparse(node)}")
        return node

    parsed = parse_function(fn)
    node = stage("parse", parsed.node)
    location = parsed.location
    local_functions = extract_local_functions(node, location)
    node = stage("check", CheckSupported(location, local_functions=local_functions).run(node))

    locals_ = local_names(node)
    taken = locals_ | {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    namer = Namer(taken | {node.name})
    namespace = Namespace(fn)
    ctx = GenContext(namespace, namer, locals_, location)
    node = stage("functional", FunctionalHelpers(ctx).run(node))
    node = stage("control", DesugarControl(namer, locals_).run(node))
    helpers = in_place_helpers(ctx)
    node = stage("anf", ANF(namer, locals_, helpers).run(node))
    node = stage("inline", InlineCalls(ctx, locals_, local_functions, (fn,)).run(node))
    if options.optimize:
        node = stage("licm", HoistInvariants(namespace, local_names(node)).run(node))
    list_ops = (helpers["list_append"], helpers["list_pop"])
    in_place = list_ops + (helpers["setitem"],)
    node = stage("copy", CopyBeforeWrite(ctx, helpers["setitem"], list_ops).run(node))
    node = stage("ssa", SSARename(namer, in_place).run(node))
    if options.optimize:
        node = stage("cse", CommonSubexpressions(namespace, local_names(node)).run(node))
    locals_ = local_names(node)
    ctx.local_names = locals_

    classifier = OpClassifier(namespace, locals_, location)
    out = node.body[-1].value
    outputs = {out.id} if isinstance(out, gast.Name) else set()
    activity = Activity(classifier)
    active = activity.run(node, wrt, outputs)

    name = namer.fresh(derived_name(node.name, mode))
    defaults = list(node.args.defaults)  # the transform drops them when it appends a parameter
    if mode in FORWARD_MODES:
        forward = ForwardAD(
            ctx, activity.ops, active, parsed.source_lines, wrt, name, as_tuple,
            with_value=mode == "jvp",
        )
        node = stage("forward", forward.run(node))
    else:
        fixed = compound_assigned(node.body, in_place)
        reverse = ReverseAD(
            ctx,
            activity.ops,
            active,
            parsed.source_lines,
            mode,
            wrt,
            name,
            as_tuple,
            fixed,
            optimize=options.optimize,
        )
        node = stage("reverse", reverse.run(node))
    if mode in TRAILING_MODES and defaults:
        node = stage("defaults", trailing_after_defaults(node, defaults, ctx))
    if options.optimize:
        node = stage("fold", ConstantFold().run(node))
        node = stage("dce", DeadCode(ctx).run(node))
        if mode not in FORWARD_MODES:
            # dead code frees values read only for their shape, which frees more dead code
            proxies = ShapeProxies(ctx, reverse.shape_sets, fixed)
            for _ in range(4):
                node = proxies.run(node)
                if not proxies.replaced:
                    break
                node = DeadCode(ctx).run(node)
            node = stage("proxy", proxies.keep_shapes(node))
    node = stage("owned", OwnedGradients(ctx, mode).run(node))
    if options.optimize:
        known = (reverse.shape_sets, reverse.adj_names) if mode not in FORWARD_MODES else ()
        node = stage("release", ReleaseDead(ctx, *known).run(node))

    text = unparse(node)
    if options.verbose:
        _show(text)
    try:
        compiled = compile_function(text, name, fn, ctx.extras)
    except SyntaxError as exc:  # a bug in srcgrad, never the user's fault
        raise SrcgradError(
            f"internal error: generated code does not compile: {exc}\n{text}"
        ) from exc
    # a derivative of generated code is as current as the code it was generated from
    compiled.__srcgrad_depends__ = tuple(ctx.dependencies) + tuple(
        getattr(fn, "__srcgrad_depends__", ())
    )
    return compiled, text


def trailing_after_defaults(node, defaults, ctx):
    """Keep ``f``'s defaults when the derived function appends a last positional parameter.

    ``vjp(f)(x, seed)`` for ``def f(x, a=2.0)``: the seed is the last positional argument, so
    the optional parameters and the seed arrive together in ``*rest`` and are told apart at the
    start of the call; an optional parameter may also come by keyword.

        def f_vjp(x, *rest, a=UNSET):
            a, seed = bind_optional(rest, (a,), (2.0,), 'f_vjp')
    """
    args = node.args
    *params, last = args.args
    cut = len(params) - len(defaults)
    required, optional = params[:cut], params[cut:]
    unset = gast.Name(ctx.global_name(runtime.UNSET, "UNSET"), gast.Load(), None, None)
    rest = ctx.namer.fresh("rest")
    args.args = required
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
        ],
        [],
    )
    targets = [gast.Name(p.id, gast.Store(), None, None) for p in optional + [last]]
    node.body.insert(0, gast.Assign([gast.Tuple(targets, gast.Store())], call, None))
    return node


def _show(text):
    from .api import highlight

    print(highlight(text))
