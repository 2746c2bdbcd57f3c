"""Inline calls to the user's own Python functions, lambdas and nested functions.

Requires: an A-normal-form body (every call is the whole right-hand side of an assignment) and a
context (``ctx``). Guarantees: ``t = helper(a, b)`` where ``helper`` is a Python function of the
user's (module-level, imported from another module, a closure, a lambda or a ``def`` nested in the
body) is replaced by ``helper``'s own normalized body, with its locals renamed apart, its
parameters bound to the arguments (keywords and defaults included) and its globals bound to the
objects they denote in *its* module. Adjoint code of inlined statements is commented with the
call site's line.

Why inline rather than call a split primal/adjoint pair: inlined code is straight NumPy in one
function, so nothing is recomputed, the optimizer sees across the call, and ``source()`` shows
everything in one place. Recursive calls cannot be inlined; they stay calls and are
differentiated through the callee's own generated vjp (see ``rules/derived.py``).

    def sq(v):                      def f(x):
        return v * v                    v = x
                            ->          v_times_v = v * v
    def f(x):                           sq_x = v_times_v
        return sq(x)                    return sq_x
"""

from __future__ import annotations

import inspect
from collections import Counter

import gast

from .. import rules, runtime
from ..analysis.ops import OPAQUE_MODULES
from ..astutil import (
    Renamed,
    clone,
    loaded,
    local_names,
    ordered_walk,
    param_names,
    relocated,
    store_counts,
    stored,
    walk,
)
from ..emit import naming
from ..errors import SrcgradError, UnsupportedSyntaxError
from ..frontend.default_values import bind_default_values
from ..frontend.resolve import MISSING, HeldItems, Namespace, data_read, items_of
from ..frontend.source import parse_function
from ..runtime.shapes import BY_SOURCE
from . import (
    callables,
    held_methods,
    lambda_lists,
    rebound,
    renumbered,
    starred_params,
    stdlib_forms,
    supercalls,
    unpacking,
    user_names,
)
from .anf import ANF, derives, in_place_helpers
from .callables import StaticValues
from .check import CheckSupported, extract_local_functions, refuse_leftover_functions
from .chosen import fold_helper
from .chosen_tests import raising_call
from .containers import ContainerMethods
from .control import DesugarControl
from .local_functions import refuse_values
from .methods import Known, Receivers, bound_instance
from .object_classes import user_class

MAX_DEPTH = 20


def run(fn_node, ctx):
    """The pass: calls to the user's own functions are replaced by their normalized bodies."""
    ctx.receivers = Receivers(ctx)
    ctx.receivers.seed(ctx.fn, fn_node, bound_instance(ctx.fn))
    ctx.receivers.stores.update(store_counts(fn_node))
    ctx.receivers.bindings = held_methods.method_bindings(fn_node)
    ctx.receivers.once = held_methods.bound_once(fn_node)
    for name in ctx.local_functions:  # (called from a helper's body: no temporary's name)
        ctx.namer.reserve(name)
    values = StaticValues(ctx.namespace, ctx.static, param_names(fn_node, packed=True),
                          store_counts(fn_node), ctx.examples, fn_node)
    inline = InlineCalls(ctx, ctx.local_names, ctx.local_functions, (ctx.fn,), values=values)
    fn_node = inline.run(fn_node)
    fn_node.body = _without_unread(fn_node.body, set(values.values))
    values.check_field_reads(ctx.location, fn_node, ctx.dispatched_fields)
    lambda_lists.check_reads(fn_node, ctx.lambda_lists, ctx.location)
    refuse_values(fn_node, inline.local_functions, ctx.location)
    held_methods.refuse_other_uses(fn_node, ctx.receivers.listed, ctx.location)
    refuse_values(fn_node, ctx.receivers.unbound_methods(), ctx.location, (
        "a bound method (`h = obj.method`) used as a value other than by calling it or passing "
        "it to a helper that calls it (held in a list, tuple or dict, returned, stored by the "
        "helper); call it where it is named (`self.layer.scale(x)`, or "
        "`h = self.layer.scale; h(x)`)"))
    return fn_node


def _foreseen(receivers, loop, head):
    """At the head of ``loop`` (``head``: what was known before it): a name the body assigns
    once and nothing assigns before the loop holds, where a later trip reads it before that
    assignment, what that assignment gave it (``rebound``: a bound method bound later in the
    loop, ``y = g_3(y)`` ... ``g_3 = blk.s``, or ``y = self_b.s(y)`` ... ``self_b = self.b``).
    An object is known by the class that assignment would give it here, and only by its class,
    checked where its method is called; a bound method (``g_3 = blk.s``) becomes the receiver
    held where it is bound (``g_3_self = blk``, its class checked there), so that the calls
    before it call the method on that receiver. A field that then holds an object of another
    class is a ``SrcgradError`` when it runs, never a wrong value."""
    found, made, read = {}, {}, set()
    kept = receivers.known
    receivers.known = dict(head)
    for node in _in_order(loop.body):
        read |= _read_here(node)
        if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)):
            continue
        name = node.targets[0].id
        if name in kept or name in head or receivers.stores.get(name, 0) != 1:
            continue
        if name in read and isinstance(node.value, gast.Attribute) and isinstance(
                node.value.value, gast.Name):
            receivers._stmt = node  # (where the class check is located)
            method = receivers._method_value(node, node.value)
            if method is not None:
                made[id(node)] = method[0] + [method[1]]
                found[method[1].targets[0].id] = Known(receivers.methods[name][2].cls)
                continue
        of = receivers._of(node.value)  # (what the name would be known as where assigned)
        if of is not None and user_class(of.cls):
            receivers.known[name] = of
            if name in read:  # (else known where it is assigned, as before)
                found[name] = Known(of.cls)
    receivers.known = {**kept, **found}
    if made:
        _replaced(loop, made)


def _read_here(s):
    """The names statement ``s`` reads itself (a compound statement: its test, iterable)."""
    parts = [s] if not hasattr(s, "body") else [getattr(s, f, None) for f in ("test", "iter")]
    return {n.id for p in parts if p is not None for n in walk(p)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _in_order(stmts):
    """The statements of ``stmts`` and of their blocks, in the order they are written."""
    for s in stmts:
        yield s
        for field_ in ("body", "orelse", "finalbody"):
            block = getattr(s, field_, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                yield from _in_order(block)
        for h in getattr(s, "handlers", None) or ():
            yield from _in_order(h.body)


def _replaced(stmt, made):
    """``stmt``'s blocks with each statement whose id is in ``made`` replaced by its list."""
    for field_ in ("body", "orelse", "finalbody"):
        block = getattr(stmt, field_, None)
        if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
            setattr(stmt, field_, [r for s in block for r in made.get(id(s), [s])])
            for s in getattr(stmt, field_):
                _replaced(s, made)
    for h in getattr(stmt, "handlers", None) or ():
        h.body = [r for s in h.body for r in made.get(id(s), [s])]
        for s in h.body:
            _replaced(s, made)


class InlineCalls:
    def __init__(self, ctx, locals_, local_functions, stack=(), values=None):
        self.ctx = ctx
        self.namespace = ctx.namespace  # where the callees of every inlined body resolve
        self.locals = locals_
        self.local_functions = local_functions  # name -> (FunctionDef, lineno) defined in the body
        self.stack = stack
        self.values = values  # the callables names hold (callables.py)
        if values is not None:
            values.local_functions = local_functions

    def run(self, fn_node):
        fn_node.body = self.block(fn_node.body)
        return fn_node

    def block(self, stmts):
        out = []
        receivers = self.ctx.receivers
        for s in stmts:
            if isinstance(s, (gast.If, gast.For, gast.While)):
                out.extend(self._controlled(s))
                continue
            if isinstance(s, gast.AugAssign):  # `q += w` of an object: its `__iadd__`
                s = receivers.augmented(s) or s
            original = s
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                # `scale(y, 3.0)` for its effect on y: inlined like a call whose result is used
                unused = self.ctx.namer.fresh(naming.UNUSED)
                self.locals.add(unused)
                s = gast.copy_location(_assign(unused, s.value), s)
            dispatched = (self._by_class(s) or receivers.by_identity(s)) if isinstance(
                s, gast.Assign) else None
            if dispatched is not None:
                out.extend(self.block(dispatched))
                continue
            if isinstance(s, gast.Assign):
                rewritten = self.ctx.receivers.rewrite(s)
                if rewritten is not None:
                    out.extend(self._noted(rewritten[0]))
                    s = original = rewritten[1]
                    dispatched = self._by_class(s)  # `box.lay(x)`, `lay` of several classes
                    if dispatched is not None:
                        out.extend(self.block(dispatched))
                        continue
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.Call):
                made = self._partial(s)
                if made is not None:
                    out.extend(made)
                    continue
                inlined = self._inline(s)
                if inlined is not None:
                    out.extend(self._method_returned(inlined))
                    continue
                if original is not s:
                    original.value = s.value  # the call as resolved
            elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                self.values.record(s.targets[0].id, s.value, self.locals)
            self.values.note_field(original, self.locals)
            self.ctx.receivers.note(original)
            out.append(original)
        return out

    def _noted(self, stmts):
        """``stmts`` (made before a rewritten statement), their field writes noted
        (``SimpleNamespace(act=f, w=c)``'s first fields)."""
        for s in stmts:
            self.values.note_field(s, self.locals)
        return stmts

    def _controlled(self, s):
        """A branch or loop inlined; a loop over a list of functions known only here (`fs =
        [make(a), make(b)]`) unrolled first."""
        copies = callables.unrolled(self.values, s, self.ctx.namer, self.locals)
        return [self._control(s)] if copies is None else self.block(copies)

    def _control(self, s):
        """A branch or loop, its blocks inlined. What is known of the objects of locals after
        it: what both paths (a branch, a loop's zero or more trips) leave; a later trip sees
        what the body assigns."""
        receivers = self.ctx.receivers
        if not isinstance(s, gast.If):
            head = dict(receivers.known)
            receivers.loosen(stored(s))
            receivers.widen(s, self._probe)
            _foreseen(receivers, s, head)
        before = receivers.snapshot()
        self.values.loops += not isinstance(s, gast.If)
        s.body = self.block(s.body)
        self.values.loops -= not isinstance(s, gast.If)
        if isinstance(s, gast.If):
            after_body = receivers.snapshot()
            receivers.restore(before)
            before = after_body
        s.orelse = self.block(s.orelse)
        receivers.join(before)
        return s

    def _probe(self, stmt):
        """The classes of the objects ``name = helper(...)`` may assign (``Receivers.widen``
        at a loop's head): the call inlined on a copy, as it would be here, then forgotten
        (what is known of locals and callables restored); [] where that fails."""
        receivers, values = self.ctx.receivers, self.values
        saved = receivers.saved(), {k: v.copy() if isinstance(v, (dict, set)) else v
                                    for k, v in vars(values).items()}
        try:
            self.block([clone(stmt)])
            return receivers.classes_of(stmt.targets[0].id)
        except SrcgradError:  # (raised again where the statement itself is inlined, if it is)
            return []
        finally:
            receivers.restored(saved[0])
            vars(values).update(saved[1])

    def _method_returned(self, inlined):
        """An inlined helper's statements; its last, ``f = h`` of a bound method ``h`` it
        returned (``def pick(self): return self.a.scale``), makes ``f`` that method."""
        last = inlined[-1]
        receivers = self.ctx.receivers
        if isinstance(last.value, gast.Name):  # `f = make(a)` of a helper returning a function
            self.values.record(last.targets[0].id, last.value, self.locals, made=True)
        if not (isinstance(last.value, gast.Name) and last.value.id in receivers.methods):
            return inlined
        rewritten = receivers.rewrite(last)
        if rewritten is None:
            return inlined
        receivers.note(rewritten[1])
        return inlined[:-1] + rewritten[0] + [rewritten[1]]

    def _by_class(self, stmt):
        """``y = lay(h)`` / ``y = lay.affine(h)`` / ``y = lay.gain`` (a property of one of the
        classes) where ``lay`` may hold objects of several classes (``Receivers.classes``: an
        item of a list holding them, a variable given them on the paths of a branch): a branch
        on its class, each path calling the method of one class on a name known to hold it
        (checked again where the method is inlined); None for any other statement."""
        value = stmt.value
        func = value.func if isinstance(value, gast.Call) else None
        if isinstance(value, gast.Attribute):  # `y = lay.scale`, a property of some class
            func = value
        name = func.value if isinstance(func, gast.Attribute) else func
        receivers = self.ctx.receivers
        if not isinstance(name, gast.Name) or name.id in receivers.known or (
                name.id not in receivers.classes):
            return None
        if func is value and not any(isinstance(inspect.getattr_static(
                c, value.attr, None), property) for c in receivers.classes[name.id]):
            return None  # a field: read as it is
        branch = None
        for cls in reversed(receivers.classes[name.id]):
            own = self.ctx.namer.fresh(name.id)
            self.locals.add(own)
            typed = gast.copy_location(_assign(own, gast.Name(name.id, gast.Load(), None, None)),
                                       stmt)
            typed.annotation = gast.Name(self.ctx.global_name(cls, cls.__name__), gast.Load(),
                                         None, None)
            call = [clone(stmt)]
            callee = call[0].value if func is value else call[0].value.func
            (callee.value if isinstance(func, gast.Attribute) else callee).id = own
            if func is not value and isinstance(func, gast.Attribute):  # (`lay.s(h)`)
                call[:0] = held_methods.hidden_method(self.ctx, self.locals, own, cls, func.attr,
                                                      stmt)
            if branch is None:
                branch = [typed] + call
                continue
            test = self.ctx.namer.fresh(naming.IS_CLASS.format(cls.__name__))
            self.locals.add(test)
            check = gast.Call(gast.Name(self.ctx.global_name(runtime.has_class, "has_class"),
                                        gast.Load(), None, None),
                              [gast.Name(name.id, gast.Load(), None, None),
                               clone(typed.annotation)], [])
            branch = [gast.copy_location(_assign(test, check), stmt), gast.copy_location(
                gast.If(gast.Name(test, gast.Load(), None, None), [typed] + call, branch), stmt)]
        return branch

    def _callee(self, stmt):
        """``(FunctionDef, namespace, location, python function or None, call)`` of the callee
        of ``stmt = call(...)`` if it is inlinable, else None. The call is rewritten (in
        ``stmt``) when the callee binds arguments of its own (a partial, a bound method, a
        callable object: ``callables.target``) or is known only statically."""
        call = stmt.value
        func = call.func
        obj = self.values.value(func, self.locals)
        if isinstance(obj, callables.LocalFunction):  # `sq(x)`, `fs[1](x)` of `fs = (f, sq)`
            node, location = self.local_functions[obj.name]
            call.func = gast.copy_location(gast.Name(obj.name, gast.Load(), None, None), func)
            return node, None, location, None, call
        if obj is MISSING:
            self._needs_static(func, stmt)
            return None
        fn = obj
        if isinstance(obj, callables.Bound) or rules.lookup(obj) is None and not _library(obj):
            fn, call = callables.target(obj, call, self._constant)
        if fn is not obj or self._static_local(func) or self.values.held_field(
                func, self.locals) is not MISSING:
            # what a static local, a partial or an object stands for, under a name of its own,
            # so later stages resolve the call as they would a global's
            self.values.watch(func, self.locals, obj, self.ctx.dependencies)  # `h = ACT`, `G.act`
            name = self.ctx.global_name(fn, _short_name(fn))
            call.func = gast.copy_location(gast.Name(name, gast.Load(), None, None), func)
        stmt.value = call
        module = getattr(fn, "__module__", "") or ""
        # statistics.fmean: a form without its `try`; functools.reduce: one with source
        fn = stdlib_forms.FORMS.get(fn, fn)
        if not inspect.isfunction(fn) or rules.lookup(fn) is not None or _generated(fn):
            return None
        if module.split(".")[0] in OPAQUE_MODULES and fn not in BY_SOURCE:
            return None
        if fn in self.stack or len(self.stack) >= MAX_DEPTH:
            return None  # recursion: stays a call, differentiated through its generated vjp
        if fn is obj and isinstance(func, (gast.Name, gast.Attribute)) and self._global(func):
            self.ctx.dependencies.append((self.namespace, func, fn))
        node, location = self._checked(fn)
        return node, Namespace(fn), location, fn, call

    def _checked(self, fn):
        """The callee's checked and desugared tree, and its location; notes a ``try`` in it
        (its nested defs too) for emit/handlers.py."""
        parsed = parse_function(fn)
        if not self.ctx.tried:
            self.ctx.tried = any(isinstance(n, gast.Try) for n in walk(parsed.node))
        renumbered.run(parsed.node, Namespace(fn))
        with stdlib_forms.advised(fn):  # (a refusal in the standard library says what to use)
            checked = CheckSupported(parsed.location, inlined=True, callees=Namespace(fn))
            return checked.run(parsed.node), parsed.location

    def _static_local(self, func):
        """Whether ``func`` reads a local known statically (``fs[0]``, ``f`` given one)."""
        while isinstance(func, (gast.Attribute, gast.Subscript)):
            func = func.value
        return isinstance(func, gast.Name) and func.id in self.values.values

    def _global(self, func):
        """Whether ``func`` is read from the namespace (not a static local)."""
        while isinstance(func, gast.Attribute):
            func = func.value
        return isinstance(func, gast.Name) and func.id not in self.values.values and (
            func.id not in self.locals)

    def _constant(self, value, preferred):
        """An expression for a value a callable binds: the constant, or a name bound to it."""
        if value is None or isinstance(value, (bool, int, float, str)):
            return gast.Constant(value, None)
        return gast.Name(self.ctx.global_name(value, preferred), gast.Load(), None, None)

    def _needs_static(self, func, stmt):
        callables.needs_static(self.values, self.ctx, func, stmt)

    def _partial(self, stmt):
        """``p = functools.partial(fn, a, k=b)``: its arguments copied where it is made, and
        ``p`` known as that binding (``callables.Bound``); None for any other statement."""
        if not isinstance(stmt.targets[0], gast.Name):
            return None
        parts = callables.partial_parts(stmt.value, self.values, self.locals)
        if parts is None:
            return None
        fn, args, keywords = parts
        copies = []

        def atom(value, stem):
            if isinstance(value, gast.Name) and value.id in self.locals:
                held = self.ctx.namer.fresh(naming.BOUND.format(stem))
                self.locals.add(held)
                copies.append(gast.copy_location(_assign(held, clone(value)), stmt))
                return gast.Name(held, gast.Load(), None, None)
            return clone(value)

        bound = callables.Bound(
            fn, [atom(a, getattr(a, "id", "arg")) for a in args],
            {k: atom(v, k) for k, v in keywords.items()},
        )
        self.values.bind(stmt.targets[0].id, bound)
        return copies + [stmt]

    def _inline(self, stmt):
        if self.values.holds_none(stmt.value.func, self.locals):
            return raising_call(stmt)  # (a held None called: Python's TypeError)
        found = self._callee(stmt)
        if found is None:
            return None
        node, namespace, location, fn, call = found
        node = _copy(node)
        if fn is not None:
            bind_default_values(node, self.ctx, fn)
        target = stmt.targets[0].id
        lineno = stmt.lineno

        callee_locals = local_names(node)
        forwarded = {a.id for a in (node.args.vararg, node.args.kwarg) if a is not None}
        displays = callables.displays_named(self.values, self.ctx.namer, self.locals, call)
        bound = self._bind(node, call)
        renames = {n: self.ctx.namer.fresh(n) for n in sorted(callee_locals)}
        user_names.record(self.ctx.user_names, node, renames, location)
        _Rename(renames, namespace, self.ctx).visit(node)
        # (after renaming: the calls it writes read the caller's names for the functions)
        self.ctx.lambda_lists.update(lambda_lists.passed_to(
            node, bound, self.ctx.lambda_lists, location, renames))
        self._super(node, fn, renames, bound, call, location)
        starred_params.spell_out(node, bound, renames, forwarded, self.values, self.ctx, location)
        # after renaming: the forwarded arguments are the caller's names, not the callee's
        _Forward({renames[p]: v for p, v in bound if p in forwarded}).visit(node)
        # a parameter the helper changes in place (`out[0] = v`, `hs.insert(0, v)`) and never
        # rebinds is the caller's variable itself: the caller sees the change, as in Python
        same = {
            renames[p]: value.id for p, value in bound
            if isinstance(value, gast.Name) and value.id in self.locals and p not in forwarded
            and _changed_in_place(node, renames[p])
        }
        _refuse_hidden_writes(node, bound, renames, same, location)
        chosen_names = fold_helper(node, bound, renames, self.values, self.locals, self.ctx)
        # a parameter given a callable the transform knows is the caller's name for it: its
        # calls in the body resolve (and are inlined) as the caller's would
        passed = self._passed(bound, renames, forwarded | set(same), stored(node.body))
        Renamed({**same, **passed}).visit(node)
        self._local_functions(node, location)
        unpacking.unroll_function_loops(node, lambda expr: unpacking.functions_held(
            self.values.value(expr, self.locals)))
        aliased = set(same) | set(passed)
        bindings = [_assign(renames[p], value) for p, value in bound if renames[p] not in aliased]
        self.ctx.receivers.note_all(bindings)
        locals_ = {renames[n] for n in callee_locals} - aliased | set(same.values()) | chosen_names
        locals_ |= _caller_variables(node, self.locals)
        self.locals |= locals_
        self._normalized(node, locals_, {renames[p] for p, _ in bound}, location)
        self.locals |= locals_  # with the names desugaring and ANF made
        self._note(node, bindings)
        inner = InlineCalls(self.ctx, self.locals, self.local_functions, self.stack + (fn,),
                            self.values)
        body = inner.block(node.body)

        ret = body[-1]
        out = displays + bindings + body[:-1] + [_assign(target, ret.value)]
        self.ctx.receivers.note(out[-1])
        return relocated(out, lineno, getattr(stmt, "col_offset", 0))

    def _normalized(self, node, locals_, params, location):
        """The helper's body through the passes the caller's went through before ``inline``
        (``params``: its parameters, renamed)."""
        ContainerMethods(self.ctx, locals_, params, location).run(node)
        DesugarControl(self.ctx.namer, locals_, self.ctx).run(node)
        ANF(self.ctx.namer, locals_, in_place_helpers(self.ctx),
            derives(self.ctx, self.locals | locals_)).run(node)
        rebound.dispatch(node, self.ctx, locals_, params)
        self.ctx.receivers.stores.update(store_counts(node))  # (ANF's temporaries too)

    def _super(self, node, fn, renames, bound, call, location):
        """``super().m(...)`` in the method ``fn`` called on ``call``'s first argument: a call
        of the function it finds (``supercalls.py``), after a class check where needed."""
        if fn is None or not bound:
            return
        self_name = renames[bound[0][0]]
        receiver = call.args[0] if call.args else None
        known = self.ctx.receivers.known.get(getattr(receiver, "id", None))
        checks = supercalls.resolve(node, fn, self_name, known, self.ctx, location)
        node.body[:0] = [gast.copy_location(c, node.body[0]) for c in checks]

    def _note(self, node, bindings):
        """The stores of an inlined body and the callables its parameters are bound to."""
        self.values.add_body(store_counts(node) + Counter(b.targets[0].id for b in bindings),
                             node)
        for b in bindings:
            self.values.record(b.targets[0].id, b.value, self.locals)

    def _passed(self, bound, renames, excluded, rebound):
        """Parameter (renamed) -> the caller's name for the callable it is given, for every
        parameter given a callable known at transform time that the body never rebinds."""
        passed = {}
        for p, value in bound:
            if p in excluded or renames[p] in excluded or renames[p] in rebound:
                continue
            name = self._callable_name(value)
            if name is not None:
                passed[renames[p]] = name
        return passed

    def _callable_name(self, atom):
        """The name under which the caller's ``atom`` holds a callable known at transform time
        (a function, a local function, a partial, a tuple or dict of them), or None."""
        if isinstance(atom, gast.Name) and (atom.id in self.local_functions
                                            or atom.id in self.ctx.receivers.methods):
            return atom.id  # (a bound method `h = obj.method`: its calls rewritten by name)
        value = self.values.value(atom, self.locals)
        if not callables.is_callable_value(value):
            return None
        if self.namespace.resolve(atom, self.locals) is value:  # read from outside
            _note_held_items(self.ctx, self.namespace, atom, value)
        self.values.watch_item(atom, self.locals, self.ctx.dependencies)  # (`NET.d["a"]`)
        if isinstance(atom, gast.Name):
            return atom.id
        self.values.watch(atom, self.locals, value, self.ctx.dependencies)  # (`NET.act`)
        return self.ctx.global_name(value, _short_name(value))

    def _local_functions(self, node, location):
        """The helper's own lambdas and nested defs (their names and the names they read
        already the helper's renamed ones): local functions of the caller, by a fresh name."""
        found = extract_local_functions(node, location, self.ctx.namer, self.ctx.lambda_lists,
                                        functions=lambda_lists.caller_functions(node, self))
        refuse_leftover_functions(node, location)
        fresh = {name: self.ctx.namer.fresh(name) for name in found}
        Renamed(fresh).visit(node)
        for name, (fn_node, where) in found.items():
            Renamed(fresh).visit(fn_node)
            fn_node.name = fresh[name]
            fn_node.frozen = True  # a helper's: its variables are a frame's of its own
            fn_node.written_as = name
            self.local_functions[fresh[name]] = (fn_node, where)

    def _bind(self, node, call):
        """``(parameter, argument)`` for every parameter of the callee, from the call."""
        location = self.ctx.location
        args = node.args
        params = args.posonlyargs + args.args
        positional = list(call.args)
        keywords = {k.arg: k.value for k in call.keywords}
        defaults = dict(zip([p.id for p in params][len(params) - len(args.defaults):],
                            args.defaults))
        defaults.update({p.id: d for p, d in zip(args.kwonlyargs, args.kw_defaults)
                         if d is not None})
        out = []
        for i, p in enumerate(params):
            if i < len(positional):
                value = positional[i]
            elif p.id in keywords:
                value = keywords.pop(p.id)
            elif p.id in defaults:
                value = defaults[p.id]
            else:
                raise _call_error(location, call, f"missing argument {p.id!r}")
            out.append((p.id, value))
        if args.vararg is not None:
            # `def g(*rest)`: the extra arguments arrive as a tuple
            extra = gast.Tuple(positional[len(params):], gast.Load())
            out.append((args.vararg.id, extra))
        elif len(positional) > len(params):
            raise _call_error(location, call, "too many positional arguments")
        for p in args.kwonlyargs:
            if p.id in keywords:
                value = keywords.pop(p.id)
            elif p.id in defaults:
                value = defaults[p.id]
            else:
                raise _call_error(location, call, f"missing keyword argument {p.id!r}")
            out.append((p.id, value))
        if args.kwarg is not None:
            # `def g(**options)`: the extra keywords arrive as a dict
            keys = [gast.Constant(k, None) for k in keywords]
            out.append((args.kwarg.id, gast.Dict(keys, list(keywords.values()))))
        elif keywords:
            raise _call_error(location, call, f"unexpected keyword arguments {sorted(keywords)}")
        args.args, args.posonlyargs, args.kwonlyargs = [], [], []
        args.vararg = args.kwarg = None
        return out


class _Forward(gast.NodeTransformer):
    """``f(*args, **kwargs)`` inside an inlined function, with ``args`` and ``kwargs`` its own
    ``*``/``**`` parameters: spelled out with the arguments the call site passed."""

    def __init__(self, packed):
        self.packed = packed  # parameter name -> Tuple or Dict literal of the caller's atoms

    def visit_Call(self, node):
        self.generic_visit(node)
        args = []
        for a in node.args:
            value = getattr(a, "value", None)
            if isinstance(a, gast.Starred) and isinstance(value, gast.Name):
                args.extend(clone(self.packed[value.id].elts))
            else:
                args.append(a)
        keywords = []
        for k in node.keywords:
            if k.arg is None and isinstance(k.value, gast.Name):
                packed = self.packed[k.value.id]
                for key, v in zip(packed.keys, packed.values):
                    keywords.append(gast.keyword(key.value, clone(v)))
            else:
                keywords.append(k)
        node.args, node.keywords = args, keywords
        return node


def _caller_variables(node, caller_locals):
    """The free names of an inlined local function that are the caller's variables (``P`` in
    ``lambda v: v * P.c``): variables in the inlined body too, so that their attribute reads
    are values of the function (with gradients), not constants."""
    return {n.id for n in walk(node) if isinstance(n, gast.Name)} & caller_locals


def _note_held_items(ctx, namespace, expr, value):
    """A tuple, list or dict of callables read from outside the function (``expr`` in
    ``namespace``): the derivative calls its items, so it depends on them (``HeldItems``)."""
    if isinstance(value, (tuple, list, dict)) and callables.is_callable_value(value):
        held = HeldItems(namespace, items_of(value))
        ctx.dependencies.append((held, clone(expr), HeldItems.SAME))


class _Rename(gast.NodeTransformer):
    """Rename a callee's locals apart and bind its globals in the generated function."""

    def __init__(self, renames, namespace, ctx):
        self.renames, self.namespace, self.ctx = renames, namespace, ctx

    def visit_Name(self, node):
        if node.id in self.renames:
            node.id = self.renames[node.id]
        elif self.namespace is not None:
            obj = self.namespace.lookup(node.id)
            if obj is not MISSING:
                if inspect.isfunction(obj) and node.id not in naming.TRY_MARKERS:
                    # (a `try` marker is srcgrad's own: in no namespace of the user's)
                    original = gast.Name(node.id, gast.Load(), None, None)
                    self.ctx.dependencies.append((self.namespace, original, obj))
                _note_held_items(self.ctx, self.namespace, node, obj)
                live = data_read(self.namespace, node.id, obj, self.ctx)
                if live is not None:  # (another module's data, read there when it runs)
                    return live
                node.id = self.ctx.global_name(obj, node.id)
        return node


# Methods that change the list or dict they are called on.
MUTATING_METHODS = {
    "append", "insert", "extend", "pop", "remove", "reverse", "sort", "clear", "update",
}


def _changed_in_place(fn_node, name):
    """Whether the body writes into ``name``'s value (an element, a list method) and never
    binds ``name`` itself (an assignment, ``name += ...``, a loop target)."""
    if name in stored(fn_node.body):
        return False
    for n in ordered_walk(fn_node):
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            if isinstance(n.value, gast.Name) and n.value.id == name:
                return True
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr in MUTATING_METHODS
            and isinstance(n.func.value, gast.Name)
            and n.func.value.id == name
        ):
            return True
    return False


def _without_unread(body, names):
    """``body`` without the assignments of the statically known names nothing reads any more
    (the partials and callables whose calls were all inlined)."""
    while True:
        read = loaded(body)
        dropped = []
        body = _drop_assignments(body, {n for n in names if n not in read}, dropped)
        if not dropped:
            return body


def _drop_assignments(body, names, dropped):
    out = []
    for s in body:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and (
            s.targets[0].id in names
        ):
            dropped.append(s)
            continue
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner:
                setattr(s, field, _drop_assignments(inner, names, dropped) or [gast.Pass()])
        out.append(s)
    return out


def _library(obj):
    """Whether ``obj`` (a function, method or object) comes from a library whose functions
    need rules (NumPy, SciPy, ...): never looked into."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] in OPAQUE_MODULES


def _short_name(fn):
    name = getattr(fn, "__name__", "fn")
    return name if name.isidentifier() else "fn"


def _generated(fn):
    from ..frontend.source import GENERATED_SOURCE

    return getattr(fn, "__code__", None) in GENERATED_SOURCE


def _call_error(location, call, what):
    return location.error(UnsupportedSyntaxError, call, f"cannot inline this call: {what}")


def _copy(node):

    return clone(node)


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _refuse_hidden_writes(node, bound, renames, same, location):
    """An attribute write into a parameter bound to something that is not a local of the
    caller (a global object, ``self.layer``): the copy it writes would not be seen where Python
    would see the change."""
    for p, _ in bound:
        name = renames[p]
        if name in same:
            continue
        for n in ordered_walk(node):
            if (isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Store)
                    and isinstance(n.value, gast.Name) and n.value.id == name):
                raise location.error(
                    UnsupportedSyntaxError, n, f"this writes `.{n.attr}` of an object the "
                    f"caller passed as an expression, not as one of its variables: srcgrad "
                    f"differentiates attribute writes only on the caller's own variables (write "
                    f"`obj = ...` in the caller, then call the method on `obj`)"
                )
