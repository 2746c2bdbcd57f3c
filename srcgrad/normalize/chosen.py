"""Branches on which function a parameter holds, decided at transform time.

Requires: the function as parsed (before desugaring); ``ctx.static`` and ``ctx.nones`` (the
callables and the Nones a call passes, for a derivative specialized per function passed).
Guarantees: a parameter that is tested (``g is None``, ``g is not None``, ``callable(g)``,
``g or np.sin``, ``np.sin if g is None else g``) and then called, or passed to a helper, is
static: the derivative is specialized per function passed, None included
(``StaticArgumentNeeded`` the first time), and each test of it is decided here. The branch not
taken is dropped, and a parameter then assigned in the function's own block gets a name of its
own per assignment, so every call resolves to one function:

    def f(x, g=None):                    def f(x, g=None):      (specialized to g=None)
        if g is None:                        g_1 = np.sin
            g = np.sin           ->          return np.sum(g_1(x))
        return np.sum(g(x))

A test made after an assignment of the parameter that is not known here (in a loop, a branch
on a run-time value) is left as it is, and so is a parameter a lambda or nested def reads:
its calls are resolved, or refused at their line, as before. ``fold`` serves the body of an
inlined helper too, its parameters bound to what the call passes (``inline.py``). A loop
over a list of functions the function changes at run time is dispatched on each item first
(``chosen_loops.py``), and a function field of an object built here written in a branch or a
loop is followed by a name of its own (``chosen_fields.py``).
"""

from __future__ import annotations

import inspect

import gast

from ..astutil import walk
from ..frontend.resolve import MISSING
from ..frontend.source import parse_function
from . import chosen_fields, chosen_held, chosen_loops, chosen_tests
from .callables import StaticArgumentNeeded, is_callable_value
from .chosen_tests import UNKNOWN, is_callable_call, is_none, is_none_test, truth


def run(fn_node, ctx):
    """The pass: see the module docstring."""
    chosen_loops.dispatch(fn_node, ctx)
    chosen_fields.follow(fn_node, ctx)
    params = {a.id for a in walk(fn_node.args) if isinstance(a, gast.Name)}
    tested = _tested_and_called(fn_node, params, ctx)
    if not tested:
        return fn_node
    if not ctx.specialized:
        first = sorted(tested)[0]
        raise _needed(ctx, first, tested[first], "is tested and called as a function")
    known = {p: ctx.static.get(p) for p in tested if p in ctx.static or p in ctx.nones}
    made = fold(fn_node.body, known, ctx, ctx.local_names)
    reads = _closure_reads(fn_node.body) | chosen_fields.local_function_reads(ctx)
    for name in set(known) - reads:
        made |= chosen_tests.flagged(fn_node.body, name, known[name], ctx)
        _held_tail(fn_node.body, name, known[name], ctx)
        made |= _copied_to_a_local(fn_node.body, name, ctx)
    ctx.local_names |= made
    return fn_node


def split_nones(ctx, callables):
    """``ctx.static`` without the Nones ``callables`` (what a call passes) holds, and
    ``ctx.nones``: the parameters given them."""
    ctx.nones = frozenset(p for p, v in callables.items() if v is None)
    ctx.static = {p: v for p, v in callables.items() if v is not None}


def _needed(ctx, param, where, what):
    filename, lineno, offset, line = ctx.location.of(where)
    return StaticArgumentNeeded(
        param, f"`{param}` {what}: srcgrad specializes the derivative per function passed "
        f"(None included)", filename=filename, lineno=lineno, offset=offset, line=line)


def _names(body, name, context=None):
    """The ``Name`` nodes of ``name`` in ``body`` (of one context class, if given)."""
    return [n for s in body for n in walk(s) if isinstance(n, gast.Name) and n.id == name
            and (context is None or isinstance(n.ctx, context))]


def _plain_targets(body):
    """The ids of the plain targets (``g = ...``) of the assignments in ``body``."""
    return {id(t) for s in body for a in walk(s) if isinstance(a, gast.Assign)
            for t in a.targets if isinstance(t, gast.Name)}


def _held_tail(body, name, entry, ctx):
    """A parameter assigned in a branch or a loop and held in a list, tuple, dict or field
    (no test of it left): the rest of the block written once per value it may hold there
    (``chosen_held``), so that ``_copied_to_a_local`` finds it only called, passed or copied."""
    read = chosen_tests.read_otherwise(body, name, ctx, fields=True)
    if read is not None and _names(body, name, (gast.Store, gast.Del)):
        chosen_held.dispatched_tail(body, name, entry, ctx, read, None)


def _copied_to_a_local(body, name, ctx, none=False):
    """A parameter still assigned in a branch or a loop (``if x[0] > 0: g = np.cos``) and
    read only to be called, passed or copied (``h = g``): a local copy of it, which
    ``rebound`` dispatches on (each call calls what the assignment that ran last bound).
    ``none``: the parameter holds None (an inlined helper's, given None: the copy is None)."""
    stores = _names(body, name, (gast.Store, gast.Del))
    loads = _names(body, name, gast.Load)
    plain, uses = _plain_targets(body), chosen_tests.called_passed_or_copied(body)
    if not stores or not all(id(n) in plain for n in stores) or not all(
            id(n) in uses for n in loads):
        return set()
    local = ctx.namer.fresh(name)
    first = next(s for s in body if _names([s], name))
    # (no copy where the parameter's value is never read: `if g is None: g = np.sin` decided)
    dead = isinstance(first, gast.Assign) and first.targets[0] in stores and not _names(
        [first.value], name)
    for n in [*stores, *loads]:
        n.id = local
    if not dead:
        copy = gast.Assign([gast.Name(local, gast.Store(), None, None)], gast.Constant(
            None, None) if none else gast.Name(name, gast.Load(), None, None))
        body.insert(0, gast.copy_location(copy, body[0]))
    return {local}


def fold(body, known, ctx, locals_):
    """Decide, in the statements ``body`` (changed in place), the tests of the names ``known``
    (name -> the object it holds on entry); give each such name assigned in this block
    afterwards a name of its own per assignment. Returns the names made."""
    reads = _closure_reads(body) | chosen_fields.local_function_reads(ctx)
    known = {n: v for n, v in known.items() if n not in reads}
    if not known:
        return set()
    body[:] = _Fold(ctx, locals_).block(body, dict(known))
    made = set()
    for name in known:
        made |= _renamed_apart(body, name, ctx)
    return made


def fold_helper(node, bound, renames, values, locals_, ctx):
    """``fold`` for an inlined helper's body (``node``, its names renamed): its parameters
    bound (``bound``: (parameter, the caller's atom)) to None or to a callable the caller's
    ``values`` (``StaticValues``) know. Returns the names made."""
    tested = {_test_of(n, ctx) for s in node.body for n in walk(s)}
    called = _tested_and_called(node, {renames[p] for p, _ in bound}, ctx)
    known = {}
    for param, atom in bound:
        if renames[param] in tested:
            value = _bound_value(values, atom, locals_, ctx)
            if value is MISSING and renames[param] in called and not ctx.specialized and (
                    _parameter(values, atom) is not None):  # the caller's, passed on
                raise _needed(ctx, _parameter(values, atom), atom,
                              "is given to a helper that tests it and calls it")
            if value is not MISSING:
                known[renames[param]] = value
    made = fold(node.body, known, ctx, locals_) if known else set()
    made |= _run_time_tests(node, known, ctx)
    _nones_called(node, bound, renames)
    return made


def _run_time_tests(node, known, ctx):
    """The tests of the helper's parameters ``known`` left after ``fold`` (after an
    assignment on a run-time value) flagged; such a parameter still assigned in a branch or
    a loop copied to a local ``rebound`` dispatches on. Returns the names made."""
    made = set()
    reads = _closure_reads(node.body) | chosen_fields.local_function_reads(ctx)
    for name in sorted(set(known) - reads):
        made |= chosen_tests.flagged(node.body, name, known[name], ctx)
        _held_tail(node.body, name, known[name], ctx)
        made |= _copied_to_a_local(node.body, name, ctx, known[name] is None)
    return made


def _nones_called(node, bound, renames):
    """A parameter given None and still called (by a path of the caller's that gives it None
    where the helper never calls it, or where Python raises): TypeError raised there."""
    nones = {renames[p] for p, atom in bound if is_none(atom)} - {
        n.id for s in node.body for n in walk(s) if isinstance(n, gast.Name) and isinstance(
            n.ctx, (gast.Store, gast.Del))}
    if nones:
        node.body = chosen_tests.raising_where_called(node.body, nones)


def _bound_value(values, atom, locals_, ctx):
    """None or the callable the caller's ``atom`` holds, else MISSING."""
    if is_none(atom) or _parameter(values, atom) in ctx.nones:
        return None
    value = values.value(atom, locals_)
    return value if value is None or is_callable_value(value) else MISSING


def _parameter(values, atom):
    """The transformed function's parameter the name ``atom`` is (through names assigned
    once from a name), or None."""
    seen = set()
    while isinstance(atom, gast.Name) and atom.id not in values.params and (
            atom.id in values.defs) and atom.id not in seen:
        seen.add(atom.id)
        atom = values.defs[atom.id]
    return atom.id if isinstance(atom, gast.Name) and atom.id in values.params else None


def _closure_reads(body):
    """The names a lambda or nested def of ``body`` reads: the value they see is the last."""
    functions = [f for s in body for f in walk(s) if isinstance(f, (gast.Lambda,
                                                                    gast.FunctionDef))]
    return {n.id for f in functions for n in walk(f) if isinstance(n, gast.Name)}


def _tested_and_called(fn_node, params, ctx):
    """Parameter -> where it is tested, for the parameters tested (``_test_of``) whose value
    reaches a call's function or a helper's argument, through names assigned from it; and
    -> where it is called, for a parameter called and assigned."""
    tests = {}
    for n in walk(fn_node):
        name = _test_of(n, ctx)
        if name in params:
            tests.setdefault(name, n)
    called = _called_names(fn_node, ctx) if tests else set()  # (reads the helpers called)
    found = {p: tests[p] for p in tests if _flows_to(fn_node, p) & called}
    found.update({p: tests[p] for p in chosen_held.held_functions(fn_node, tests, ctx)
                  if p not in found})  # (`fs = [g, np.sin]` after `if g is None: g = np.cos`)
    # a parameter called, then assigned another function (`a = g(x); g = np.cos`)
    stored = {n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Store)}
    for p in chosen_held.held_functions(fn_node, params & stored, ctx):
        found.setdefault(p, fn_node)  # (assigned a function on a run-time branch, and held)
    for n in walk(fn_node):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and (
                n.func.id in params & stored):
            found.setdefault(n.func.id, n)
        if isinstance(n, gast.Call) and params & stored:  # (`apply(g, x)`, then `g = None`)
            for name in _given_to_a_caller(n, ctx) & params & stored:
                found.setdefault(name, n)
    return found


def _flows_to(fn_node, param):
    """``param`` and the names assigned from it (``h = g``, ``h = g or np.sin``, ``h =
    np.sin if g is None else g``), and from those."""
    assigns = [s for s in walk(fn_node) if isinstance(s, gast.Assign) and len(
        s.targets) == 1 and isinstance(s.targets[0], gast.Name) and isinstance(
        s.value, (gast.Name, gast.IfExp, gast.BoolOp))]
    names, changed = {param}, True
    while changed:
        changed = False
        for s in assigns:
            if s.targets[0].id not in names and any(
                    isinstance(n, gast.Name) and n.id in names for n in walk(s.value)):
                names.add(s.targets[0].id)
                changed = True
    return names


def _called_names(fn_node, ctx):
    """The names called (``g(x)``) or given to a helper of the user's that calls the
    parameter they are given as (``step(g, x)`` of ``def step(f, y): ... f(y)``)."""
    out = set()
    for n in walk(fn_node):
        if isinstance(n, gast.Call):
            if isinstance(n.func, gast.Name):
                out.add(n.func.id)
            out |= _given_to_a_caller(n, ctx)
    return out


def _given_to_a_caller(call, ctx):
    """The names ``call`` gives a helper of the user's as a parameter the helper calls."""
    callee = ctx.namespace.resolve(call.func, ctx.local_names)
    module = (getattr(callee, "__module__", None) or "").split(".")[0]
    if callee is MISSING or not inspect.isfunction(callee) or module in LIBRARIES:
        return set()
    try:
        signature = inspect.signature(callee)
        bound = signature.bind_partial(*call.args, **{
            k.arg: k.value for k in call.keywords if k.arg is not None})
    except (TypeError, ValueError):
        return set()
    calls = {c.func.id for c in walk(parse_function(callee).node) if isinstance(
        c, gast.Call) and isinstance(c.func, gast.Name)}
    return {a.id for p, a in bound.arguments.items() if p in calls and p in (
        signature.parameters) and isinstance(a, gast.Name)}


LIBRARIES = ("numpy", "scipy", "srcgrad", "builtins")


def _test_of(node, ctx):
    """The name ``node`` tests for which function it holds (``g is None``, ``g is not
    None``, ``callable(g)``, ``g or h``, ``g and h``), or None."""
    if is_none_test(node):
        names = [s.id for s in (node.left, node.comparators[0]) if isinstance(s, gast.Name)]
        return names[0] if names else None
    if is_callable_call(node, ctx):
        return node.args[0].id
    if isinstance(node, gast.BoolOp) and isinstance(node.values[0], gast.Name):
        return node.values[0].id
    return None


def _self_assignment(s, state):
    """Whether ``s`` is ``g = g`` of a known name."""
    return isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
        s.value, gast.Name) and s.value.id in state and isinstance(
        s.targets[0], gast.Name) and s.targets[0].id == s.value.id


class _Fold:
    """Decides the tests of known names statement by statement (``state``: name -> the object
    it holds here, or UNKNOWN)."""

    def __init__(self, ctx, locals_):
        self.ctx = ctx
        self.locals = locals_

    def block(self, stmts, state):
        out = []
        for s in stmts:
            out.extend(self.statement(s, state))
        return out

    def statement(self, s, state):
        if isinstance(s, gast.If):
            return self.branch(s, state)
        if isinstance(s, (gast.Assign, gast.AnnAssign)) and s.value is not None:
            return self.assignment(s, state)
        if isinstance(s, (gast.Return, gast.Expr)) and s.value is not None:
            s.value = self.expr(s.value, state)
            return [s]
        for n in walk(s):  # a loop, try, with...: what it assigns is not known in it
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in state:
                state[n.id] = UNKNOWN
        if not isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(s, field, None):
                    setattr(s, field, self.block(getattr(s, field), state))
        return [s]

    def assignment(self, s, state):
        s.value = self.expr(s.value, state)
        if _self_assignment(s, state):
            return []  # (`g = g or np.sin`, `g` known true: nothing changes)
        targets = s.targets if isinstance(s, gast.Assign) else [s.target]
        for t in targets:
            for n in walk(t):
                if isinstance(n, gast.Name) and n.id in state:
                    single = len(targets) == 1 and t is n
                    state[n.id] = self.value_of(s.value, state) if single else UNKNOWN
        return [s]

    def branch(self, s, state):
        """An ``if``: the branch taken, where its test is decided; else both, what the names
        hold after it known where both paths agree."""
        s.test = self.expr(s.test, state)
        decided = self.decided(s.test)
        if decided is not None:
            return self.block(s.body if decided else s.orelse, state)
        other = dict(state)
        s.body = self.block(s.body, state) or [gast.copy_location(gast.Pass(), s)]
        s.orelse = self.block(s.orelse, other)
        for name, value in other.items():
            if state.get(name) is not value:
                state[name] = UNKNOWN
        return [s]

    def value_of(self, expr, state):
        """The object ``expr`` holds, when it is a known name or a global's callable."""
        if isinstance(expr, gast.Name) and expr.id in state:
            return state[expr.id]
        if is_none(expr):
            return None
        found = self.ctx.namespace.resolve(expr, self.locals)
        return found if found is not MISSING and is_callable_value(found) else UNKNOWN

    def decided(self, test):
        return test.value if isinstance(test, gast.Constant) and isinstance(
            test.value, bool) else None

    def expr(self, node, state):
        """``node`` with the tests of known names decided (a new node where one is)."""
        if isinstance(node, (gast.Lambda, gast.FunctionDef)):
            return node
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.AST) and not isinstance(value, gast.expr_context):
                setattr(node, field, self.expr(value, state))
            elif isinstance(value, list):
                setattr(node, field, [self.expr(v, state) if isinstance(v, gast.AST) else v
                                      for v in value])
        answer = self.answer(node, state)
        if answer is not UNKNOWN:
            return gast.copy_location(gast.Constant(answer, None), node)
        if isinstance(node, gast.IfExp):
            decided = self.decided(node.test)
            if decided is not None:
                return node.body if decided else node.orelse
        if isinstance(node, gast.BoolOp):
            return self.bool_op(node, state)
        return node

    def answer(self, node, state):
        """True or False for a test of a known name, else UNKNOWN."""
        if isinstance(node, gast.Compare) and len(node.ops) == 1 and isinstance(
                node.ops[0], (gast.Is, gast.IsNot)):
            sides = [node.left, node.comparators[0]]
            names = [s for s in sides if isinstance(s, gast.Name)]
            if any(is_none(s) for s in sides) and names and state.get(
                    names[0].id, UNKNOWN) is not UNKNOWN:
                same = state[names[0].id] is None
                return same if isinstance(node.ops[0], gast.Is) else not same
        if is_callable_call(node, self.ctx) and state.get(
                node.args[0].id, UNKNOWN) is not UNKNOWN:
            return callable(state[node.args[0].id])
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not) and (
                self.decided(node.operand) is not None):
            return not node.operand.value
        return UNKNOWN

    def bool_op(self, node, state):
        """``g or h`` (``and``) with its leading operands of known truth dropped: the first
        true one (false, for ``and``) is the value."""
        stop = isinstance(node.op, gast.Or)
        values = list(node.values)
        while len(values) > 1:
            first = values[0]
            known = self.decided(first)
            if known is None and isinstance(first, gast.Name) and first.id in state:
                known = UNKNOWN if state[first.id] is UNKNOWN else truth(state[first.id])
            if known is None or known is UNKNOWN:
                break
            if known == stop:
                return first
            values.pop(0)
        if len(values) == 1:
            return values[0]
        node.values = values
        return node


def _renamed_apart(body, name, ctx):
    """Give ``name``, assigned in statements of ``body`` itself (not nested in a branch or a
    loop), a fresh name per assignment, read until the next; nothing when it is assigned
    otherwise. Returns the names made."""
    stores = _names(body, name, (gast.Store, gast.Del))
    plain = [s.targets[0] for s in body if isinstance(s, gast.Assign) and len(
        s.targets) == 1 and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name]
    if not stores or [id(n) for n in stores] != [id(n) for n in plain]:
        return set()
    made, current = set(), name
    for s in body:
        target = s.targets[0] if isinstance(s, gast.Assign) and s.targets[0] in plain else None
        for n in _names([s], name):
            n.id = current if n is not target else n.id
        if target is not None:
            current = ctx.namer.fresh(name)
            made.add(current)
            target.id = current
    return made
