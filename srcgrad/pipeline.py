"""The pass order of srcgrad, in one place.

    parse -> (yields) -> check -> chosen -> rebuilt -> shallow -> functional -> operators
    -> containers -> control -> super
    -> anf -> rebound -> lifted -> inline -> lengths -> recursion -> double -> unpair -> higher
    -> steps
    -> sharing -> einsum
    -> writes -> integer -> licm -> copy -> ssa -> cse -> aux
    -> activity -> dtypes
    -> reverse | forward -> defaults -> fold -> dce -> proxy -> owned -> products -> release
    -> uniform -> pullback | linearize -> scalars -> guard -> handlers
    -> emit -> compile

Reverse mode serves "grad", "value_and_grad", "vjp", "pullback" (a vjp split at its seed into
the primal and a reusable ``back``) and "split" (a generator: the primal, a yield of the value for
the cotangent, then the gradients; normalize/recursion.py); forward mode serves "jvp" (value and
tangent), "linearize" (a jvp split into the primal and a reusable ``jvp_fn``) and "tangent" (the
tangent alone, e.g. a Hessian-vector product as the tangent of a gradient). Both share everything
before the transform and everything after it but ``proxy``.

Every stage is a pass ``run(node, ctx) -> node``: it takes the function's tree and the
:class:`~srcgrad.context.Context`, returns the new tree, and leaves what later passes need on the
context (``activity`` only analyses; its results are ``ctx.ops`` and ``ctx.active``). ``dtypes``
needs them: an active value written into an array whose dtype is known only at run time goes
through ``written`` (``normalize/integer_writes.py``), and activity is analysed again.

``derive(fn, mode, wrt)`` runs it and returns the compiled function and its source.
``dump=True`` (or ``SRCGRAD_DUMP=1`` in the environment) prints the source after every stage.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable

import gast

from .analysis import activity
from .astutil import local_names, walk
from .context import Context, Options
from .emit import guard, handlers, notes
from .emit.compile import compile_function
from .emit.naming import Namer
from .emit.unparse import highlight, unparse
from .errors import LocatedError, SrcgradError
from .frontend import shadowed
from .frontend.default_values import bind_default_values
from .frontend.resolve import Namespace
from .frontend.source import parse_function
from .normalize import (
    anf,
    aux,
    check,
    chosen,
    containers,
    control,
    functional,
    inline,
    inplace,
    integer_writes,
    lifted_functions,
    loop_lengths,
    operators,
    rebound,
    rebuilt_arguments,
    recursion,
    shallow_copies,
    sharing,
    ssa,
    supercalls,
)
from .normalize import einsum_form as einsum
from .normalize import inplace_calls as writes
from .normalize.callables import is_callable_value
from .normalize.lambda_list_sites import names_read
from .normalize.object_classes import Example
from .optimize import cse, dce, fold, licm, owned, release, scalars, shape_proxy, steps, uniform
from .specialize import Packed
from .transform import defaults, forward, linearize, pullback, reverse

MODES = ("grad", "value_and_grad", "vjp", "pullback", "jvp", "linearize", "tangent", "split")
FORWARD_MODES = ("jvp", "linearize", "tangent")
TRAILING_MODES = ("vjp", "jvp", "tangent")  # modes whose last positional parameter is added


def _always(ctx):
    return True


def _optimizing(ctx):
    return ctx.optimize


def _pulling_back(ctx):
    return ctx.mode == "pullback"


def _linearizing(ctx):
    return ctx.mode == "linearize"


def _specialized(ctx):
    return bool(ctx.kinds)


def _specialized_optimizing(ctx):
    return bool(ctx.kinds) and ctx.optimize


def _trailing_defaults(ctx):
    """A trailing parameter follows the optional ones, and a ``*args`` (transform/defaults.py)."""
    code = getattr(ctx.fn, "__code__", None)
    varargs = code is not None and bool(code.co_flags & inspect.CO_VARARGS)
    layout = ctx.rest_layout is not None
    return ctx.mode in TRAILING_MODES and (bool(ctx.defaults) or varargs or layout)


@dataclass(frozen=True)
class Stage:
    label: str
    run: Callable  # run(node, ctx) -> node
    when: Callable = _always  # when(ctx) -> whether the stage runs
    dump: bool = True  # printed with dump=True


def _bind_names(node, ctx):
    """The namespace, the namer and the local names of the checked function; its defaults bound
    to the values ``def`` computed (frontend/default_values.py)."""
    ctx.local_names = local_names(node)
    taken = ctx.local_names | {n.id for n in walk(node) if isinstance(n, gast.Name)}
    # the closure variables of the function are bound in the generated one under their names
    # (a generated function's helpers, even those its parsed text no longer reads)
    code = getattr(ctx.fn, "__code__", None)
    taken |= set(code.co_freevars) if code is not None else set()
    # (and the names a helper's calls of the items of a list of functions read: lambda_lists)
    taken |= {n for sites in ctx.lambda_lists.values() for n in names_read(sites)}
    ctx.namer = Namer(taken | {node.name})
    ctx.namespace = Namespace(ctx.fn)
    ctx.namespace.extras.update(ctx.renamed_builtins)  # (normalize/check.py)
    if ctx.yield_marker is not None:  # a split derivative's yield, marked (mark_yields)
        ctx.namer.reserve(ctx.yield_marker[0])
        ctx.namespace.extras[ctx.yield_marker[0]] = ctx.yield_marker[1]
    return bind_default_values(node, ctx, ctx.fn, ctx.namespace)


NORMALIZE = (
    Stage("yields", recursion.mark_yields, recursion.yields_wanted, dump=False),
    Stage("check", check.run),
    Stage("names", _bind_names, dump=False),
    Stage("chosen", chosen.run),
    Stage("rebuilt", rebuilt_arguments.run, lambda ctx: bool(ctx.rebuild)),
    Stage("shallow", shallow_copies.run),
    Stage("functional", functional.run),
    Stage("operators", operators.run),
    Stage("containers", containers.run),
    Stage("control", control.run),
    Stage("super", supercalls.run),
    Stage("anf", anf.run),
    Stage("rebound", rebound.run),
    Stage("lifted", lifted_functions.run, lambda ctx: bool(ctx.local_functions)),
    Stage("inline", inline.run),
    Stage("lengths", loop_lengths.run),
    Stage("recursion", recursion.run, recursion.wanted),
    Stage("double", recursion.double, recursion.double_wanted),
    Stage("unpair", recursion.unpair, recursion.unpair_wanted),
    Stage("higher", recursion.higher, recursion.higher_wanted),
    Stage("steps", recursion.steps, recursion.steps_wanted),
    Stage("sharing", sharing.run),
    Stage("einsum", einsum.run),
    Stage("writes", writes.run),
    Stage("integer", integer_writes.run),
    Stage("licm", licm.run, _optimizing),
    Stage("copy", inplace.run),
    Stage("ssa", ssa.run),
    Stage("cse", cse.run, _optimizing),
    Stage("aux", aux.run),
    Stage("activity", activity.run, dump=False),
    Stage("dtypes", integer_writes.run_dynamic),
)
REVERSE = (
    Stage("reverse", reverse.run),
    Stage("defaults", defaults.run, _trailing_defaults),
    Stage("fold", fold.run, _optimizing),
    Stage("dce", dce.run, _optimizing),
    Stage("proxy", shape_proxy.run, _optimizing),
    Stage("owned", owned.run),
    Stage("products", steps.run, _optimizing),
    Stage("release", release.run, _optimizing),
    Stage("uniform", uniform.run, _specialized_optimizing),
    Stage("pullback", pullback.run, _pulling_back),
    Stage("scalars", scalars.run, _specialized),
    Stage("guard", guard.run),
    Stage("handlers", handlers.run),
)
FORWARD = (
    Stage("forward", forward.run),
    Stage("defaults", defaults.run, _trailing_defaults),
    Stage("fold", fold.run, _optimizing),
    Stage("dce", dce.run, _optimizing),
    Stage("owned", owned.run),
    Stage("release", release.run, _optimizing),
    Stage("linearize", linearize.run, _linearizing),
    Stage("scalars", scalars.run, _specialized),
    Stage("guard", guard.run),
    Stage("handlers", handlers.run),
)


def stages(mode):
    """The stages after ``parse`` for ``mode``, in order."""
    return NORMALIZE + (FORWARD if mode in FORWARD_MODES else REVERSE)


def _staged(node, ctx, mode, dump):
    """``node`` through the stages of ``mode``; an error names a helper's locals as written."""
    try:
        for stage in stages(mode):
            if stage.when(ctx):
                node = stage.run(node, ctx)
                if dump and stage.dump:
                    _print_stage(stage.label, node)
    except LocatedError as error:
        raise error.named_as_written(ctx.user_names) from error.__cause__
    return node


def derive(fn: Any, mode: str, wrt: tuple[str, ...], options: Any = None, as_tuple: bool = False,
           static: dict[str, Any] | None = None) -> tuple[Any, str]:
    """Generate, compile and return the ``mode`` derivative of ``fn`` with respect to ``wrt``.

    ``wrt`` is a tuple of parameter names; ``as_tuple`` returns the gradients as a tuple even
    when there is only one; ``static`` maps parameters to the callables a call passes them (the
    derivative is specialized to them) or to the ``Example`` of the objects it passes them (the
    derivative is specialized to their classes).
    """
    options = options or Options()
    fn = _differentiable(fn, mode, options)
    dump = options.dump or os.environ.get("SRCGRAD_DUMP") == "1"
    parsed = parse_function(fn)
    callables, examples = _split(static or {}, wrt)
    ctx = Context(fn, mode, wrt, as_tuple, options.optimize, options.has_aux, callables,
                  parsed.location, parsed.source_lines)
    ctx.examples = examples
    ctx.packed = {p: v for p, v in (static or {}).items() if isinstance(v, Packed)}
    ctx.specialized = static is not None
    chosen.split_nones(ctx, callables)
    # a split call runs a generator: only in Python (the numba backend compiles the plain form)
    ctx.split_recursion = options.split_recursion and options.backend == "python"
    ctx.kinds = dict(options.kinds)
    ctx.for_numba = options.for_numba
    ctx.plain_defaults = options.plain_defaults
    ctx.rebuild = dict(options.rebuild)
    # a derivative of generated code is as current as the code it was generated from
    ctx.dependencies.extend(getattr(fn, "__srcgrad_depends__", ()))
    node = parsed.node
    user_reads = {n.id for n in walk(node) if isinstance(n, gast.Name)}
    if dump:
        _print_stage("parse", node)
    node = _staged(node, ctx, mode, dump)

    shadowed.check(node, ctx, user_reads)
    text = unparse(node)
    if options.verbose:
        print(highlight(text))
    try:
        lines = notes.line_map(node, text, ctx.location, getattr(fn, "__name__", "f"),
                               forward=mode in FORWARD_MODES)
        compiled = compile_function(text, ctx.out_name, fn, ctx.extras, lines)
    except SyntaxError as exc:  # a bug in srcgrad, never the user's fault
        raise SrcgradError(
            f"internal error: generated code does not compile: {exc}\n{text}"
        ) from exc
    compiled.__srcgrad_depends__ = tuple(ctx.dependencies)
    if ctx.receivers is not None and ctx.receivers.specialized:
        compiled.__srcgrad_specialized__ = True  # methods inlined for inferred classes
    if ctx.derivative is not None:
        ctx.derivative.fn = compiled
    if ctx.split_used:
        plain = dataclasses.replace(options, split_recursion=False, verbose=False, dump=False)
        compiled.__srcgrad_plain__ = _Plain(fn, mode, wrt, plain, as_tuple, static)
        compiled.__srcgrad_special__ = frozenset(ctx.special_calls)
    return compiled, text


def _split(static, wrt):
    """The callables a call passes (parameter -> value) and the values holding objects it
    passes (``Example``), from ``static``. The objects of an argument ``wrt`` names are never
    constants of the derivative: its calls go through the class of each object, or are
    refused."""
    examples = {p: v.value for p, v in static.items() if isinstance(v, Example)}
    callables = {p: examples.get(p, v) for p, v in static.items()
                 if p not in wrt and (not isinstance(v, Example) or is_callable_value(v.value))
                 and not isinstance(v, Packed)}
    return callables, examples


class _Plain:
    """The same derivative generated without splitting recursive calls (made when first
    asked for): the code a transform of the derivative differentiates, since a split call
    runs a generator no rule differentiates."""

    def __init__(self, *request):
        self.request = request
        self.made = None

    def __call__(self):
        if self.made is None:
            fn, mode, wrt, options, as_tuple, static = self.request
            self.made = derive(fn, mode, wrt, options, as_tuple, static)[0]
        return self.made


def _differentiable(fn, mode, options):
    """``fn``, or for a derivative with recursive calls of kinds ``mode`` does not
    differentiate itself (``recursion.HANDLED``, in Python only), its plain version: the same
    derivative without them, whose recursion goes through the callee's derivatives (linear no
    more)."""
    plain = getattr(fn, "__srcgrad_plain__", None)
    if plain is None:
        return fn
    kinds = getattr(fn, "__srcgrad_special__", frozenset({"split_jvp"}))
    if recursion.handled(kinds, mode) and options.split_recursion and (
            options.backend == "python"):
        return fn
    return plain()


def _print_stage(label, node):
    print(f"# ---- after {label} ----\n{unparse(node)}")
