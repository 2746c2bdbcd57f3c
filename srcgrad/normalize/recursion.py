"""Recursive calls in reverse-mode code: each level's primal runs once.

Requires: an inlined A-normal-form body (``inline`` leaves only recursive calls of the user's
functions as calls) and a reverse mode. Guarantees: ``t = f(a, b)`` where ``f`` is a Python
function of the user's that ``inline`` left in place (it calls itself, directly or through
others) becomes

    s = f_split(a, b)              # f's primal, once; its derivative waits in a generator
    t = recursion_value(s)

and the adjoint of ``recursion_value`` sends the cotangent to the generator, which runs f's own
adjoint sweep (``rules/derived.py``, ``runtime/recursion.py``). Without it, ``t = f(a, b)`` is
differentiated through f's vjp, which reruns f's primal: every level reruns all the levels below
it (quadratic in the depth, a ``print`` in f runs many times). Forward modes, and code that will
be differentiated again (``split_recursion=False``), keep the call.

``mark_yields`` (before ``check``, mode "jvp" of a split derivative, which forward mode
differentiates for a Hessian-vector product through a recursion): ``seed = yield value`` becomes
``seed = split_yield(value)``, a call the passes know; ``transform/forward.py`` writes it back as
``sent = yield (value, dvalue)``, the seed and its tangent taken from ``sent``.
"""

from __future__ import annotations

import inspect

import gast

from .. import rules, runtime
from ..analysis.ops import OPAQUE_MODULES, derived_callee
from ..astutil import walk
from ..emit import naming
from ..errors import SrcgradError
from ..frontend.resolve import MISSING
from ..frontend.source import GENERATED_SOURCE
from ..rules.derived import (
    JvpPair,
    SplitJvp,
    SplitNJvp,
    Splitter,
    Splitter2,
    SplitterN,
    Step,
    refuse_writes_into_arguments,
    splitter,
    splitter2,
    splitter_n,
    step,
)
from ..rules.structures import structure_rule

REVERSE_MODES = ("grad", "value_and_grad", "vjp", "split")
# the kinds of recursive calls (Context.special_calls) each mode differentiates itself, each
# level of a recursion once: forward mode a split call (SplitJvp), a value-and-tangent pair
# (JvpPair of the callee's jvp) and split calls of order 2 and more (``steps``: the jvp of the
# callee's split derivative of that order, SplitNJvp); reverse mode a pair (split: the callee's
# jvp, split), a split call (``double``: the split derivative of the callee's split derivative)
# and split calls of order 2 and more (``higher``: of order k + 1)
# and forward mode's own (``PAIRED``: the jvp of a split derivative, of any order), written as
# steps of a chain with a forward layer first (``unpair``)
HANDLED = {"jvp": {"split", "pair", "split2", "splitN", "split_jvp", "splitN_jvp"},
           "tangent": {"split", "pair", "split2", "splitN", "split_jvp", "splitN_jvp"},
           **{m: {"pair", "split", "split2", "splitN", "split_jvp", "splitN_jvp"}
              for m in REVERSE_MODES}}
PAIRED = frozenset({"split_jvp", "splitN_jvp"})


def handled(kinds, mode):
    """Whether ``mode`` differentiates code with recursive calls of ``kinds`` itself (each
    level once): the kinds it handles (``HANDLED``), split calls of order 2 and more
    (``higher``) and forward mode's (``unpair``) only among themselves."""
    orders = kinds & (HIGHER | PAIRED)
    return kinds <= HANDLED.get(mode, set()) and (not orders or kinds <= HIGHER | PAIRED)


def yields_wanted(ctx):
    """Whether ``mark_yields`` runs: forward mode, or reverse mode's split form, over a split
    derivative (a generator)."""
    code = getattr(ctx.fn, "__code__", None)
    return (ctx.mode in ("jvp", "split") and code is not None and code in GENERATED_SOURCE
            and bool(code.co_flags & inspect.CO_GENERATOR))


def mark_yields(fn_node, ctx):
    """``seed = yield value`` -> ``seed = split_yield(value)`` (see the module's docstring);
    any other ``yield`` is left for ``check`` to refuse."""
    taken = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)}
    marker = naming.Namer(taken).fresh(naming.SPLIT_YIELD)
    found = False
    for s in fn_node.body:
        if (isinstance(s, gast.Assign) and isinstance(s.value, gast.Yield)
                and isinstance(s.targets[0], gast.Name) and s.value.value is not None):
            call = gast.Call(gast.Name(marker, gast.Load(), None, None), [s.value.value], [])
            s.value = gast.copy_location(call, s.value)
            found = True
    if found:
        ctx.yield_marker = (marker, runtime.split_yield)
    return fn_node


def wanted(ctx):
    """Whether the pass runs: a reverse mode whose code is not to be differentiated again."""
    return ctx.mode in REVERSE_MODES and ctx.split_recursion


def run(fn_node, ctx):
    """The pass: every recursive call split (see the module's docstring)."""
    fn_node.body = _block(fn_node.body, ctx)
    return fn_node


def _block(stmts, ctx):
    out = []
    for s in stmts:
        for field_ in ("body", "orelse"):
            inner = getattr(s, field_, None)
            if isinstance(inner, list) and inner and not isinstance(s, gast.FunctionDef):
                setattr(s, field_, _block(inner, ctx))
        split = _split(s, ctx)
        out.extend(split if split is not None else [s])
    return out


def _split(s, ctx):
    """``[s = f_split(...), t = recursion_value(s)]`` for a recursive call ``t = f(...)``."""
    if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)):
        return None
    call = s.value
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    fn = ctx.namespace.resolve(call.func, ctx.local_names)
    if fn is MISSING and isinstance(call.func, gast.Call):  # `jvp(f)(x, t)`
        fn = derived_callee(call.func, ctx.namespace, ctx.local_names, ctx.dependencies)
    if fn is MISSING:
        return None
    fn, args, keywords = _split_callee(fn, call)
    made = splitter(fn) if fn is not None else None
    if made is None:
        return None
    if fn.__code__ not in GENERATED_SOURCE:
        refuse_writes_into_arguments(fn)
    held = ctx.namer.fresh(naming.SPLIT.format(fn.__name__))
    ctx.local_names.add(held)
    func = gast.Name(ctx.global_name(made, made.__name__), gast.Load(), None, None)
    start = gast.Assign([gast.Name(held, gast.Store(), None, None)],
                        gast.Call(func, args, keywords), None)
    value = gast.Name(ctx.global_name(runtime.recursion_value, "recursion_value"), gast.Load(),
                      None, None)
    s.value = gast.Call(value, [gast.Name(held, gast.Load(), None, None)], [])
    ctx.split_used = True
    ctx.special_calls.add("split")
    return [gast.copy_location(start, s), s]


def _split_callee(fn, call):
    """``(function, args, keywords)`` of the split call for ``call`` of ``fn``: a recursive
    function of the user's; the jvp of one, called by a :class:`JvpPair` (its tangents are
    its jvp's last argument); a derivative with recursive calls reverse mode differentiates
    itself (``HANDLED``). ``(None, None, None)`` for any other callee."""
    if isinstance(fn, JvpPair):
        if not fn.pairable or not call.args:
            return None, None, None
        g = fn.generated()
        last = list(inspect.signature(g).parameters)[-1]
        optional = _defaults_left_out(fn.signature, call)
        if optional is None:
            return None, None, None
        return g, call.args[1:], call.keywords + optional + [gast.keyword(last, call.args[0])]
    kinds = getattr(fn, "__srcgrad_special__", None)
    if _recursive(fn) or (kinds and kinds <= HANDLED["split"]):
        return fn, call.args, call.keywords
    return None, None, None


def _defaults_left_out(signature, call):
    """Keywords giving the optional parameters a :class:`JvpPair` call ``P(ts, a, ...)`` leaves
    out their defaults (the callee's jvp takes every parameter), or None when a default is not
    a constant the code can spell."""
    given = set(list(signature.parameters)[:len(call.args) - 1])
    given |= {k.arg for k in call.keywords}
    out = []
    for p in signature.parameters.values():
        if p.name in given:
            continue
        if not isinstance(p.default, (int, float, complex, str, bool, type(None))):
            return None
        out.append(gast.keyword(p.name, gast.Constant(p.default, None)))
    return out


def _recursive(fn):
    """Whether ``fn`` is a user's function that analysis/ops.py would differentiate through its
    own vjp (a call ``inline`` left in place)."""
    if not inspect.isfunction(fn) or getattr(fn, "__code__", None) is None:
        return False
    if fn.__code__ in GENERATED_SOURCE or rules.lookup(fn) is not None:
        return False
    if structure_rule(fn) is not None:
        return False
    module = (getattr(fn, "__module__", "") or "").split(".")[0]
    return module not in OPAQUE_MODULES


def double_wanted(ctx):
    """Whether ``double`` runs: reverse mode over code with split calls (``grad(grad(f))``)."""
    kinds = getattr(ctx.fn, "__srcgrad_special__", None) or ()
    return ctx.mode in REVERSE_MODES and ctx.split_recursion and "split" in kinds


def double(fn_node, ctx):
    """Reverse mode over split calls: ``s = f_split(a, n)`` starts the split derivative of
    f's split derivative (``rules/derived.Splitter2``), ``recursion_value`` and
    ``recursion_send`` become the steps of it (``runtime.split2_value``, ``split2_send``) whose
    rules drive the rest from the sweep (``runtime/recursion.py``): each level of the
    recursion runs once at second order too."""
    steps = {runtime.recursion_value: runtime.split2_value,
             runtime.recursion_send: runtime.split2_send}
    for node in walk(fn_node):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            continue
        held = ctx.namespace.resolve(node.func, ctx.local_names)
        if isinstance(held, Splitter) and held.wrt is not None:
            made = splitter2(held)
            if not held.wrt:  # carried no gradient at first order: not raised again (higher)
                ctx.special_calls.add("split2_bare")
        elif any(held is k for k in steps):
            made = next(v for k, v in steps.items() if held is k)
        else:
            continue
        node.func.id = ctx.global_name(made, made.__name__)
        ctx.split_used = True
        ctx.special_calls.add("split2")
    return fn_node


HIGHER = frozenset({"split2", "splitN"})


def higher_wanted(ctx):
    """Whether ``higher`` runs: reverse mode over code with split calls of order 2
    (``grad(grad(grad(f)))``) or k >= 3 (fourth order and beyond), or forward mode's
    (``unpair``), and no others."""
    kinds = getattr(ctx.fn, "__srcgrad_special__", None) or frozenset()
    return (ctx.mode in REVERSE_MODES and ctx.split_recursion
            and bool(kinds & (HIGHER | PAIRED)) and kinds <= HIGHER | PAIRED)


def higher(fn_node, ctx):
    """Reverse mode over split calls of order k >= 2: each starts the split derivative of order
    k + 1 (``rules/derived.SplitterN``, ``runtime.SplitN``), and each step of order k is a step
    of it under the same number (``Step``); order 2's steps (``split2_*``) are written as such
    steps first. Each level of the recursion runs once at every order."""
    ctx.special_calls.add("splitN")
    ctx.split_used = True
    fn_node.body = _rewrite_block(fn_node.body, lambda s, tokens: _raise(s, ctx, tokens, 3))
    return fn_node


def steps_wanted(ctx):
    """Whether ``steps`` runs: forward mode over code with split calls of order 2 (``hvp`` of
    ``grad(f)``, ``jvp(grad(grad(f)))``) and no others."""
    kinds = getattr(ctx.fn, "__srcgrad_special__", None) or frozenset()
    return (ctx.mode in ("jvp", "tangent") and ctx.split_recursion and "split2" in kinds
            and kinds <= HIGHER | PAIRED)


def steps(fn_node, ctx):
    """Forward mode over split calls of order 2: each is written as a split call of order 2 of
    the general form (``SplitterN``) and its ``split2_*`` calls as its numbered steps
    (``Step``), which forward mode drives paired with their tangents as it does those of order
    3 and more (``transform/forward.py``, ``rules/derived.SplitNJvp``)."""
    ctx.split_used = True
    fn_node.body = _rewrite_block(fn_node.body, lambda s, tokens: _raise(s, ctx, tokens, 2))
    return fn_node


def unpair_wanted(ctx):
    """Whether ``unpair`` runs: reverse or forward mode over code forward mode made from split
    calls (``grad(hvp(f))``, ``grad(jvp(grad(f)))``, ``jvp(jvp(grad(f)))``), with no recursive
    calls of other kinds."""
    kinds = getattr(ctx.fn, "__srcgrad_special__", None) or frozenset()
    return (ctx.mode in REVERSE_MODES + ("jvp", "tangent") and ctx.split_recursion
            and bool(kinds & PAIRED) and kinds <= HIGHER | PAIRED)


def unpair(fn_node, ctx):
    """Forward mode's split calls in the general step form, so each level of a recursion runs
    once when that code is differentiated again. A started jvp of a split derivative of order
    k (``SplitJvp``, ``SplitNJvp``) is a split call of a chain whose last layer is that jvp
    (``SplitterN`` with a ``runtime.JvpLayer``, the tangents its last parameter); each step
    gives and is sent a pair (value, tangent):

        s = f_split_jvp((da,), a)       ->  s = f_split1(a, tangent=(da,))
        y = recursion_value(s)          ->  p = step1_got(s, s); y = p[0]
        dy = recursion_tangent(s)       ->  p = step1_got(s, s); dy = p[1]
        g = recursion_send_pair(s, c, dc)   ->  q = (c, dc); t = step2_take(s, q)
                                                p = step2_got(s, t); g = p[0]
        t = step_take_pair(s, j, x, dx) ->  q = (x, dx); t = stepj_take(s, q)
        dy = step_tangent(s, j)         ->  p = stepj_got(s, t); dy = p[1]

    (``recursion_sent_tangent`` as ``step_tangent`` of step 2). Reverse mode then raises the
    chain by a split layer (``higher``), forward mode by a forward layer
    (``transform/forward.py``)."""
    handles = {}
    for node in walk(fn_node):
        if isinstance(node, gast.Assign) and isinstance(node.value, gast.Call):
            made = _chain_of(ctx.namespace.resolve(node.value.func, ctx.local_names))
            if made is not None:
                handles[node.targets[0].id] = made
    copies = [(n.targets[0].id, n.value.id) for n in walk(fn_node)
              if isinstance(n, gast.Assign) and isinstance(n.value, gast.Name)]
    grown = True
    while grown:  # `ds = s`: forward mode's started split call is its own tangent
        grown = False
        for target, source in copies:
            if source in handles and target not in handles:
                handles[target] = handles[source]
                grown = True
    ctx.split_used = True
    fn_node.body = _rewrite_block(
        fn_node.body, lambda s, tokens: _unpaired(s, ctx, handles, tokens))
    return fn_node


def _chain_of(held):
    """The ``SplitterN`` of the chain a started jvp of a split derivative is, or None."""
    if isinstance(held, SplitJvp):
        return splitter_n(held.fn, (held.split_wrt, runtime.JvpLayer(held.wrt)))
    if isinstance(held, SplitNJvp):
        return splitter_n(held.splitter.fn,
                          held.splitter.wrts + (runtime.JvpLayer(held.wrt),))
    return None


def _rewrite_block(stmts, rewrite):
    """``stmts`` with every statement ``s``, inner blocks first, replaced by
    ``rewrite(s, tokens)``; ``tokens`` is the block's own record of the steps taken in it
    (keyed by ``rewrite``), so a read finds the step its own block took."""
    out = []
    tokens = {}
    for s in stmts:
        for field_ in ("body", "orelse"):
            inner = getattr(s, field_, None)
            if isinstance(inner, list) and inner and not isinstance(s, gast.FunctionDef):
                setattr(s, field_, _rewrite_block(inner, rewrite))
        out.extend(rewrite(s, tokens))
    return out


# runtime function -> (step, half): a read of the value (0) or tangent (1) of what it gave
_READS = {runtime.recursion_value: (1, 0), runtime.recursion_tangent: (1, 1),
          runtime.recursion_sent_tangent: (2, 1)}


def _unpaired(s, ctx, handles, tokens):
    """The statements of ``s`` in the step form (see ``unpair``)."""
    if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Name)):
        return [s]
    call, target = s.value, s.targets[0].id
    held = ctx.namespace.resolve(call.func, ctx.local_names)
    if _chain_of(held) is not None:
        made = handles[target]
        last = list(made.signature.parameters)[-1]
        call.func.id = ctx.global_name(made, made.__name__)
        call.keywords = list(call.keywords) + [gast.keyword(last, call.args[0])]
        call.args = call.args[1:]
        return [s]
    args = call.args
    handle = args[0] if args and isinstance(args[0], gast.Name) else None
    chain = handles.get(handle.id) if handle is not None else None
    if chain is None:
        return [s]
    emit = _Emitter(ctx, s, chain.order)
    if isinstance(held, Step) and held.kind == "got":
        return emit.read(target, held.j, args[1], 0)
    if held in _READS or held is runtime.step_tangent:
        j, half = _READS.get(held) or (args[1].value, 1)
        return emit.read(target, j, gast.Name(tokens.get((handle.id, j), handle.id),
                                              gast.Load(), None, None), half)
    if held is runtime.recursion_send_pair or held is runtime.step_take_pair:
        j, (x, dx) = (2, args[1:]) if held is runtime.recursion_send_pair else (
            args[1].value, args[2:])
        taken = target if held is runtime.step_take_pair else ctx.namer.fresh(
            naming.STEP_TOKEN)
        ctx.local_names.add(taken)
        tokens[(handle.id, j)] = taken
        pair = emit.fresh(naming.STEP_PAIR)
        out = [emit.assign(pair, gast.Tuple([x, dx], gast.Load())),
               emit.assign(taken, emit.step("take", j, handle, emit.load(pair)))]
        if held is runtime.recursion_send_pair:
            out += emit.read(target, 2, emit.load(taken), 0)
        return out
    return [s]


class _Emitter:
    """The statements ``unpair`` writes for one statement ``s`` (its line)."""

    def __init__(self, ctx, s, order):
        self.ctx, self.s, self.order = ctx, s, order

    def fresh(self, label):
        held = self.ctx.namer.fresh(label)
        self.ctx.local_names.add(held)
        return held

    @staticmethod
    def load(name_):
        return gast.Name(name_, gast.Load(), None, None)

    def assign(self, target, value):
        return gast.copy_location(gast.Assign([gast.Name(target, gast.Store(), None, None)],
                                              value, None), self.s)

    def step(self, kind, j, handle, operand):
        made = step(kind, j, self.order)
        func = self.load(self.ctx.global_name(made, made.__name__))
        return gast.Call(func, [gast.Name(handle.id, gast.Load(), None, None), operand], [])

    def read(self, target, j, after, half):
        """``p = stepj_got(s, after); target = p[half]``."""
        pair = self.fresh(naming.STEP_PAIR)
        handle = self.s.value.args[0]
        return [self.assign(pair, self.step("got", j, handle, after)),
                self.assign(target, gast.Subscript(self.load(pair), gast.Constant(half, None),
                                                   gast.Load()))]


def _raise(s, ctx, tokens, order):
    """The statements of order k + 1 for ``s`` (see ``higher``); for ``order`` 2, those of
    order 2 in the general form (see ``steps``)."""
    if not (isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Name)):
        return [s]
    call = s.value
    held = ctx.namespace.resolve(call.func, ctx.local_names)
    if isinstance(held, Splitter2):
        if order == 2 and held.wrt2 is None:
            raise SrcgradError("internal error: a split call of order 2 not specialized to its "
                               "arguments")
        made = splitter_n(held.fn, (held.wrt, held.wrt2) + ((None,) if order == 3 else ()))
    elif isinstance(held, (SplitterN, Step)):
        if order == 2:
            return [s]
        made = held.raised()
    else:
        return _raise_order_two(s, held, ctx, tokens, order)
    call.func.id = ctx.global_name(made, made.__name__)
    return [s]


def _raise_order_two(s, held, ctx, tokens, order):
    args = s.value.args
    target = s.targets[0].id

    def assign(name, kind, j, *operands):
        made = step(kind, j, order)
        func = gast.Name(ctx.global_name(made, made.__name__), gast.Load(), None, None)
        return gast.copy_location(gast.Assign([gast.Name(name, gast.Store(), None, None)],
                                              gast.Call(func, list(operands), []), None), s)

    def load(name):
        return gast.Name(name, gast.Load(), None, None)

    def token(j, handle, sent):
        key = (handle.id, getattr(sent, "id", None), j)
        if key in tokens:
            return [], tokens[key]
        held_name = ctx.namer.fresh(naming.STEP_TOKEN)
        ctx.local_names.add(held_name)
        tokens[key] = held_name
        return [assign(held_name, "take", j, handle, sent)], held_name

    if held is runtime.split2_value:
        return [assign(target, "got", 1, args[0], args[0])]
    if held is runtime.split2_send:
        first, tok = token(2, *args)
        return first + [assign(target, "got", 2, args[0], load(tok))]
    if held is runtime.split2_back:
        first, tok = token(3, *args)
        return first + [gast.copy_location(gast.Assign(
            [gast.Name(target, gast.Store(), None, None)], load(tok), None), s)]
    if held is runtime.split2_seed_back:
        first, tok = token(3, *args)
        return first + [assign(target, "got", 3, args[0], load(tok))]
    if held is runtime.split2_finish:
        return [assign(target, "take", 4, *args)]
    if held is runtime.split2_final:
        return [assign(target, "got", 4, *args)]
    return [s]


def specialize(fn_node, ctx):
    """After activity: each split call asks for the gradients of exactly the parameters given
    values that carry gradient (an ``int`` counter or a label never enters its derivative)."""
    for node in walk(fn_node):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)):
            continue
        made = ctx.extras.get(node.func.id)
        if not isinstance(made, (Splitter, Splitter2, SplitterN)):
            continue
        names = list(made.signature.parameters)
        given = dict(zip(names, node.args))
        given.update({k.arg: k.value for k in node.keywords})
        wrt = tuple(n for n in names if isinstance(given.get(n), gast.Name)
                    and given[n].id in ctx.active)
        specialized = made.with_wrt(wrt)
        node.func.id = ctx.global_name(specialized, specialized.__name__)
