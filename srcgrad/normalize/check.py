"""Reject every construct srcgrad does not differentiate, at transform time, with a caret.

Requires: a parsed function. Guarantees: the body only contains constructs the later passes
handle; anything else raises :class:`UnsupportedSyntaxError` pointing at the user's file and line.
A construct that is not supported is never silently mis-differentiated.

Lambdas assigned to a name and nested ``def`` statements are taken out of the body (each checked
the same way) into ``ctx.local_functions``; ``inline`` inlines their calls.

``del name`` (generated code releases values with it) changes no value, so it is removed here,
after checking that no path reads a name after a ``del`` of it without assigning it first
(normalize/deleted_names.py).

    with np.errstate(all="ignore"):     ->   UnsupportedSyntaxError: srcgrad does not support
        y = np.log(x)                           a `with` block here
                                               File "model.py", line 12
                                                   with np.errstate(all="ignore"):
                                                   ^
"""

from __future__ import annotations

import builtins
from collections import Counter

import gast

from ..astutil import (
    NodeVisitor,
    binding_counts,
    ordered_walk,
    param_names,
    store_counts,
    walk,
)
from ..emit.naming import Namer
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import HeldItems, Namespace, items_of
from . import lambda_lists, renumbered, starred_params, sugar, unpacking, walrus
from .callables import StaticArgumentNeeded
from .deleted_names import ReadsAfterDel, del_items_as_pops, without_del
from .local_functions import bound_to, defaults_bound, lambdas_named

# What each rejected construct is called in the error message.
UNSUPPORTED = {
    gast.AsyncFor: "an `async for` loop",
    gast.AsyncWith: "an `async with` block",
    gast.ClassDef: "a class definition",
    gast.FunctionDef: "a nested function definition",
    gast.AsyncFunctionDef: "a nested async function definition",
    gast.Global: "a `global` declaration",
    gast.Nonlocal: "a `nonlocal` declaration",
    gast.Import: "an import inside the function",
    gast.ImportFrom: "an import inside the function",
    gast.Yield: "`yield`",
    gast.YieldFrom: "`yield from`",
    gast.Await: "`await`",
    gast.Lambda: "a lambda that is not assigned to a name of its own once (assign it, then call "
    "the name)",
    gast.Starred: "a starred expression",
}


def run(fn_node, ctx):
    """The pass: refuse what srcgrad does not support, with its location; drop ``del name``;
    take lambdas and nested functions out of the body into ``ctx.local_functions``."""
    ctx.tried = ctx.tried or any(isinstance(n, gast.Try) for n in walk(fn_node))
    namespace = Namespace(ctx.fn)
    renumbered.run(fn_node, namespace)
    # (the namer is made after this pass, from the names then in the body: these among them)
    code = getattr(ctx.fn, "__code__", None)
    taken = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)} | {fn_node.name} | set(
        getattr(code, "co_freevars", ()))
    ctx.local_functions = extract_local_functions(fn_node, ctx.location, Namer(taken),
                                                  ctx.lambda_lists, namespace)
    starred_params.spell_out_own(fn_node, ctx)  # (`f(*xs)` of a parameter: per length)
    fn_node = CheckSupported(ctx.location, local_functions=ctx.local_functions,
                             namespace=namespace).run(fn_node)
    # the builtins the desugaring calls under names of their own (the module binds theirs)
    ctx.renamed_builtins.update(
        (k, v) for k, v in namespace.extras.items()
        if getattr(builtins, getattr(v, "__name__", ""), None) is v)

    params = param_names(fn_node, packed=True) - set(store_counts(fn_node))
    written = {n.value.id for n in walk(fn_node) if isinstance(n, (
        gast.Subscript, gast.Attribute)) and isinstance(n.value, gast.Name) and (
        not isinstance(n.ctx, gast.Load) or (isinstance(n, gast.Attribute) and n.attr not in (
            "values", "keys", "items", "get", "index", "count")))}

    def known(expr):
        if isinstance(expr, gast.Name) and expr.id in params:
            return _passed_functions(expr, ctx, written)
        value = namespace.resolve(expr)
        count = unpacking.functions_held(value)
        if count is not None:  # unrolled: the derivative calls these items
            ctx.dependencies.append((HeldItems(namespace, items_of(value)), expr,
                                     HeldItems.SAME))
        return count

    remade = _remade_in_loops(fn_node, {n: f[0] for n, f in ctx.local_functions.items()})
    lambda_lists.kept_past_trips(fn_node, ctx.local_functions, remade, namespace,
                               ctx.lambda_lists)
    fn_node = unpacking.unroll_function_loops(fn_node, known, params, remade)
    _pin_called_items(fn_node, namespace, ctx)
    return fn_node


def _passed_functions(param, ctx, written):
    """How many functions the tuple or list a call passes as ``param`` holds (a loop over it
    calls each: unrolled, the derivative specialized per tuple passed, as for a function
    passed); None for one holding objects (called through their classes, methods.py). Before
    the call is known: ``StaticArgumentNeeded``."""
    if param.id in ctx.static:
        value = ctx.static[param.id]
        return unpacking.functions_held(value) or unpacking.functions_keyed(value)
    if param.id in ctx.examples or param.id in ctx.wrt or param.id in written:
        return None  # (a tuple, list or dict changed here: what it holds is known when it runs)
    filename, lineno, offset, line = ctx.location.of(param)
    raise StaticArgumentNeeded(
        param.id, f"`{param.id}` holds the functions a loop calls: srcgrad specializes the "
        f"derivative per tuple of functions passed as `{param.id}`, so call the derivative with "
        f"one there", held=True, filename=filename, lineno=lineno, offset=offset, line=line)


def _remade_in_loops(fn_node, local_functions):
    """The local functions whose default values a loop evaluates anew on each trip
    (``g = lambda t, c=a * k: ...`` in a loop): each trip makes another function, so a name
    or a literal holding one of them is not the same function everywhere."""
    in_loops = {t.id for loop in walk(fn_node) if isinstance(loop, (gast.For, gast.While))
                for n in walk(loop) if isinstance(n, gast.Assign)
                for t in n.targets if isinstance(t, gast.Name)}
    return {name for name, node in local_functions.items()
            if any(isinstance(d, gast.Name) and d.id in in_loops for d in
                   node.args.defaults + [k for k in node.args.kw_defaults if k is not None])}


def _pin_called_items(fn_node, namespace, ctx):
    """A call of a constant item of a global's tuple, list or dict of callables
    (``HOOKS["a"](x)``, ``NET.fs[0](x)``, also a copy of an unrolled loop over keys): the
    derivative calls the item it found, so it depends on the items the global holds
    (``HeldItems``), and is made again when they change, as Python would call the new item."""
    local = set(store_counts(fn_node)) | param_names(fn_node, packed=True)
    seen = set()
    for n in walk(fn_node):
        if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Subscript)):
            continue
        held = n.func.value
        root = held
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in local or gast.dump(held) in seen:
            continue
        seen.add(gast.dump(held))
        value = namespace.resolve(held)
        if isinstance(value, (tuple, list, dict)) and any(
                callable(v) and not hasattr(v, "__array__")
                for v in (value.values() if isinstance(value, dict) else value)):
            ctx.dependencies.append((HeldItems(namespace, items_of(value)), held,
                                     HeldItems.SAME))


def extract_local_functions(fn_node, location, namer=None, passed=None, namespace=None,
                            functions=frozenset()):
    """Take ``name = lambda ...`` and nested ``def`` statements out of the body, wherever they
    are (in a loop, a branch, ...).

    Returns ``{name: (FunctionDef, location)}`` for ``InlineCalls``; each call of such a local
    function is inlined where it happens, reading the caller's variables as a closure would
    (the values they hold at the call, as Python's late binding reads them). A name defined
    twice stays in the body and is refused: which definition a call means is known only when
    it runs. A default that is not a constant is evaluated where the function is defined, as
    Python does: ``lambda v, i=i: ...`` leaves ``i_default = i`` there, and its default is
    ``i_default`` (``namer``: the fresh names).
    """
    # (a list of lambdas holds their defaults instead; ``passed``: those passed to helpers)
    lambda_lists.run(fn_node, namer, passed, namespace, functions)
    stores = binding_counts(fn_node)  # (a parameter is the argument before a `def` of it)
    defs = Counter(n.name for n in walk(fn_node.body) if isinstance(n, gast.FunctionDef))
    found = {}

    def take(stmts):
        body = []
        for s in [h for t in stmts for h in lambdas_named(t, namer)]:
            lam = isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and isinstance(s.value, gast.Lambda)
            once = lam and stores[s.targets[0].id] <= 1 and s.targets[0].id not in defs
            if lam and (once or namer is not None):
                name = s.targets[0].id if once else namer.fresh(s.targets[0].id)
                lam = s.value
                ret = gast.copy_location(gast.Return(lam.body), lam.body)
                node = gast.FunctionDef(name, lam.args, [ret], [], None, None)
                gast.copy_location(node, s)
                found[node.name] = (CheckSupported(location).run(node), location)
                body += defaults_bound(node, s, namer, found) + bound_to(
                    s, s.targets[0].id, name)
                continue
            if isinstance(s, gast.FunctionDef) and not s.decorator_list and (
                    (s.name not in stores and defs[s.name] == 1) or namer is not None):
                once = s.name not in stores and defs[s.name] == 1
                name, s.name = s.name, s.name if once else namer.fresh(s.name)
                found[s.name] = (CheckSupported(location, nested=True).run(s), location)
                body += defaults_bound(s, s, namer, found) + bound_to(s, name, s.name)
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    setattr(s, field, take(inner) or ([gast.Pass()] if field == "body" else []))
            body.append(s)
        return body

    fn_node.body = take(fn_node.body)
    return found


def _why_not_local(node):
    """What is refused about a nested ``def`` left in the body, for ``srcgrad does not support
    {what} here``."""
    if node.decorator_list:
        return "a decorated nested function (define it at module level, or undecorated)"
    return (f"a second definition of `{node.name}` or `{node.name}` assigned otherwise (a local "
            f"function is inlined by its name: give each definition its own name)")


def refuse_leftover_functions(fn_node, location):
    """A nested ``def`` or assigned lambda ``extract_local_functions`` left in the body (defined
    twice, decorated) is an error at its line; not a lambda given to ``map``, ``filter`` or
    ``sorted``'s ``key=`` (normalize/containers.py writes it as a comprehension)."""
    written = {id(lam) for n in walk(fn_node.body) for lam in builtin_lambdas(n)}
    for n in walk(fn_node.body):
        if isinstance(n, gast.FunctionDef):
            raise location.error(UnsupportedSyntaxError, n, f"srcgrad does not support "
                                 f"{_why_not_local(n)} here")
        if isinstance(n, gast.Lambda) and id(n) not in written:
            raise location.error(UnsupportedSyntaxError, n, f"srcgrad does not support "
                                 f"{UNSUPPORTED[gast.Lambda]} here")


# Calls whose result is an iterator, used up by its first use.
ITERATOR_CALLS = ("map", "filter", "zip", "enumerate", "reversed", "iter")


def refuse_reused_iterators(fn_node, location):
    """A name bound to an iterator (a generator expression, ``map(...)``, ``zip(...)``, ...)
    and used twice, or in a loop: its first use consumes it, Python's later ones see it empty,
    while srcgrad's later passes make it a list (every use sees all of it). Refused at the
    second use; one use, where the iterator is made (``for v in g``, ``sum(g)``), works."""
    stored_names = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)
                    and not isinstance(n.ctx, gast.Load)}
    calls = {c for c in ITERATOR_CALLS if c not in stored_names}
    bound, reads = {}, {}
    for node, context in _contexts(fn_node.body, ()):
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name) and _iterator(node.value, calls)):
            bound.setdefault(node.targets[0].id, []).append(context)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            reads.setdefault(node.id, []).append((node, context))
    for name, contexts in bound.items():
        uses = reads.get(name, [])
        for k, (node, context) in enumerate(uses):
            if k > 0 or len(contexts) > 1 or context != contexts[0]:
                raise location.error(UnsupportedSyntaxError, node, (
                    f"srcgrad does not support using `{name}` here: it is an iterator (a "
                    f"generator expression, `map`, `filter`, `zip`, `enumerate`, `reversed` or "
                    f"`iter`), which its first use consumes (Python's later uses see it empty, "
                    f"and a loop's later trips too); use it once, where it is made, or make a "
                    f"list of it (`[... for ...]`, `list(map(...))`)"))


def _iterator(value, calls):
    return isinstance(value, gast.GeneratorExp) or (
        isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
        and value.func.id in calls)


def _contexts(nodes, context):
    """``(node, context)`` for every node under ``nodes``, ``context`` the loops, comprehension
    parts and function bodies that may run it more than once per run of the function."""
    for node in nodes:
        yield node, context
        if isinstance(node, gast.For):
            yield from _contexts([node.iter], context)
            yield from _contexts([node.target, *node.body, *node.orelse], context + (node,))
        elif isinstance(node, (gast.While, gast.Lambda, gast.FunctionDef)):
            yield from _contexts(list(gast.iter_child_nodes(node)), context + (node,))
        elif isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)):
            yield from _contexts([node.generators[0].iter], context)
            rest = [n for n in gast.iter_child_nodes(node) if n is not node.generators[0]]
            first = node.generators[0]
            rest += [first.target, *first.ifs]
            yield from _contexts(rest, context + (node,))
        else:
            yield from _contexts(list(gast.iter_child_nodes(node)), context)


def builtin_lambdas(node):
    """The lambdas ``node`` gives ``map`` or ``filter`` (its first argument), or ``sorted`` as
    ``key=``: normalize/containers.py writes them as comprehensions (or refuses them, located,
    where the name is not the builtin)."""
    func = getattr(node, "func", None)
    if not (isinstance(node, gast.Call) and isinstance(func, gast.Name)
            and func.id in ("map", "filter", "sorted")):
        return []
    return [lam for lam in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "key")]
            if isinstance(lam, gast.Lambda)]


class CheckSupported(NodeVisitor):
    """``local_functions`` are the lambdas and nested defs taken out of the body, by name."""

    def __init__(self, location, inlined=False, local_functions=None, nested=False,
                 namespace=None, callees=None):
        self.location = location
        self.namespace = namespace  # recognizes a `try` srcgrad emitted (normalize/handlers.py)
        # where the functions a call names are found (`f(*xs)` of a list grown in a `while`)
        self.callees = namespace if callees is None else callees
        self.nested = nested  # a def in the body: inlined where called, like a called helper
        self.inlined = inlined  # a called function: may forward its own *args and **kwargs
        self.forwarded = set()
        self.local_functions = {
            name: found[0] for name, found in (local_functions or {}).items()
        }

    def run(self, fn_node):
        refuse_reused_iterators(fn_node, self.location)
        for n in walk(fn_node):
            if isinstance(n, gast.Try) and not n.handlers and not n.orelse:
                # checked before sugar.run flattens it into its body and its `finally` block
                self._no_jump_out(n.body, "a `try` block", "the `finally` block would not run")
        fn_node = sugar.run(fn_node, self.location, self.namespace)
        walrus.refuse_misordered(fn_node, self.location)  # (the rest: bound in anf)
        args = fn_node.args
        if self.inlined:
            self.forwarded = {a.id for a in (args.vararg, args.kwarg) if a is not None} | {
                a.id for a in args.posonlyargs + args.args + args.kwonlyargs}  # (inline)
        fn_node = unpacking.spread(fn_node, self.forwarded, self.local_functions, self.callees)
        fn_node = unpacking.unroll_function_loops(fn_node, remade=_remade_in_loops(
            fn_node, self.local_functions))
        fn_node.body = del_items_as_pops(fn_node.body, {
            n.id for n in walk(fn_node) if isinstance(n, gast.Name)}, self.namespace)
        for stmt in fn_node.body:
            self.visit(stmt)
        if any(isinstance(n, gast.Delete) for n in walk(fn_node)):
            ReadsAfterDel(self.location, fn_node, self.local_functions).run(fn_node.body)
            fn_node.body = without_del(fn_node.body)
        body = fn_node.body
        if (self.inlined or self.nested) and not _always_returns(body):
            # a called helper that falls off its end returns None (`scale(v, s): v *= s`)
            ret = gast.Return(gast.Constant(None, None))
            fn_node.body = body + [gast.copy_location(ret, body[-1] if body else fn_node)]
        elif not _always_returns(body):
            raise self._error(
                body[-1] if body else fn_node,
                "a function that can end without `return` (it returns None; nothing to "
                "differentiate)",
            )
        return fn_node

    def _error(self, node, what):
        return self.location.error(
            UnsupportedSyntaxError, node, f"srcgrad does not support {what} here"
        )

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None and not isinstance(item.optional_vars, gast.Name):
                raise self._error(item.optional_vars, "`with ... as` a target that is not a "
                                  "name")
        self._no_jump_out(node.body, "a `with` block", "`__exit__` would not run")
        self.generic_visit(node)

    def visit_Try(self, node):
        if node.handlers:
            raise self._error(node, "a `try` with `except` (which path runs, and so the "
                              "gradient, is known only when it raises); test the condition "
                              "with `if` (e.g. `np.linalg.cond(A) < 1e12`), or catch the "
                              "error around the call of the derivative")
        if node.orelse:
            raise self._error(node.orelse[0], "`try ... else`")
        self._no_jump_out(node.body, "a `try` block", "the `finally` block would not run")
        self.generic_visit(node)

    def _no_jump_out(self, stmts, where, why):
        """A ``return`` (or a ``break``/``continue`` of an enclosing loop) inside ``where``."""
        for s in stmts:
            if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef)):
                continue  # its `return` leaves the nested function only
            if isinstance(s, (gast.Return, gast.Break, gast.Continue)):
                raise self._error(s, f"`{type(s).__name__.lower()}` inside {where} ({why}); "
                                  f"assign the result and leave after the block")
            if isinstance(s, (gast.For, gast.While)):
                self._no_jump_out([n for n in walk(s.body) if isinstance(n, gast.Return)],
                                  where, why)
                continue
            for field in ("body", "orelse", "finalbody"):
                self._no_jump_out(getattr(s, field, None) or [], where, why)

    def visit_FunctionDef(self, node):
        if self.inlined and not node.decorator_list:
            return  # taken out once the helper's names are its own (normalize/inline.py)
        raise self._error(node, _why_not_local(node))

    def visit_Lambda(self, node):
        if self.inlined:  # (named where the helper is inlined, or refused there if it is not:
            self.generic_visit(node.args)  # `SimpleNamespace(act=lambda t: c * t)` returned)
            return self.visit(node.body)
        if not getattr(node, "checked", False):
            raise self._error(node, UNSUPPORTED[gast.Lambda])

    def generic_visit(self, node):
        what = UNSUPPORTED.get(type(node))
        if what is not None:
            raise self._error(node, what)
        super().generic_visit(node)

    def visit_Assign(self, node):
        target = node.targets[0]
        if len(node.targets) > 1:
            raise self._error(node, "chained assignment (`a = b = ...`)")
        if isinstance(target, gast.Tuple):
            if not all(isinstance(e, gast.Name) for e in target.elts):
                raise self._error(target, "nested or indexed targets in tuple unpacking")
            if isinstance(node.value, gast.Tuple) and len(node.value.elts) != len(target.elts):
                raise self._error(node.value, "unpacking a tuple literal of another length")
        elif isinstance(target, gast.Subscript):
            if not _chain_from_name(target.value):
                raise self._error(target, "assignment into an element of a value that is not "
                                  "a variable, an element or an attribute of one")
        elif isinstance(target, gast.Attribute):
            if not (isinstance(target.value, gast.Name) or field_path(target)):
                raise self._error(target, "assignment to an attribute of an attribute or an "
                                  "element (`a.b.c = ...`); rebind the inner object first")
        elif not isinstance(target, gast.Name):
            raise self._error(target, f"assignment to a {type(target).__name__}")
        if self.inlined and isinstance(node.value, gast.Lambda):
            return  # a local function of the helper, taken out like a nested def
        self.visit(node.value)
        for t in node.targets:
            self.generic_visit(t)

    def visit_Return(self, node):
        if self.inlined and isinstance(node.value, gast.Lambda):
            return  # a helper returning a lambda (a factory): taken out like a nested def
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            for t in target.elts if isinstance(target, (gast.Tuple, gast.List)) else [target]:
                if isinstance(t, gast.Subscript):
                    raise self._error(node, "`del` of an element of an element or of a slice "
                                      "(`del x[i]` of a list or dict works)")
                if isinstance(t, gast.Attribute):
                    raise self._error(node, "`del` of an attribute (`del x.a`)")
                if not isinstance(t, gast.Name):
                    raise self._error(node, f"`del` of a {type(t).__name__}")

    def visit_Dict(self, node):
        for key in node.keys:
            if not isinstance(key, gast.Constant):
                raise self._error(key if key is not None else node, "a dict key that is not a "
                                  "constant (or `**` unpacking in a dict literal)")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        target = node.target
        if not (
            isinstance(target, gast.Name)
            or isinstance(target, (gast.Subscript, gast.Attribute))
            and isinstance(target.value, gast.Name)
            or field_path(target)  # `P.ps[0].b += v`, `p.x[i] += v`: normalize/containers.py
            or isinstance(target, gast.Subscript) and _chain_from_name(target.value)
        ):
            raise self._error(target, f"augmented assignment to {_nested_kind(target)}")
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is None or not isinstance(node.target, gast.Name):
            raise self._error(node, "an annotation without a plain assignment")
        self.generic_visit(node.value)

    def visit_For(self, node):
        if node.orelse:
            raise self._error(node.orelse[0], "`for ... else`")
        target = node.target
        names = target.elts if isinstance(target, gast.Tuple) else [target]
        if sugar.enumerate_zip(node):
            names = [names[0], *names[1].elts]
        if not all(isinstance(t, gast.Name) for t in names):
            raise self._error(target, "a loop target that is not a name or a tuple of names")
        self.generic_visit(node)

    def visit_While(self, node):
        if node.orelse:
            raise self._error(node.orelse[0], "`while ... else`")
        for n in ordered_walk(node.test):
            if isinstance(n, (gast.ListComp, gast.GeneratorExp)):
                raise self._error(n, "a comprehension in a `while` condition")
        self.generic_visit(node)

    def visit_Call(self, node):
        for lam in builtin_lambdas(node):
            self.visit(lam.body)
            lam.checked = True
        for kw in node.keywords:
            if kw.arg is None and not self._forwarding(kw.value):
                raise self.location.error(UnsupportedSyntaxError, kw.value, (
                    "srcgrad does not support `**` here: the keys it passes are not known at "
                    "transform time (a dict literal, or a name assigned one once and then only "
                    "indexed, is spelled out); pass the values by name: "
                    "`f(a=kw[\"a\"], b=kw[\"b\"])`"))
        for a in node.args:
            if isinstance(a, gast.Starred) and not self._forwarding(a.value):
                raise self.location.error(UnsupportedSyntaxError, a, (
                    "srcgrad does not support `*` here: the number of arguments it passes is "
                    "not known at transform time (a tuple or list literal, or a name assigned "
                    "one once and then only indexed, is spelled out, as is a called function's "
                    "own `*args`); pass the elements: `f(xs[0], xs[1])`"))
        self.generic_visit(node)

    def _forwarding(self, node):
        return isinstance(node, gast.Name) and node.id in self.forwarded

    def visit_Starred(self, node):
        if not self._forwarding(node.value):
            raise self._error(node, "a starred expression")
        self.visit(node.value)


def _always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return True
    if isinstance(last, gast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, gast.While) and isinstance(last.test, gast.Constant) and last.test.value:
        return True
    return False


def field_path(target):
    """Whether ``target`` is a field of an inner object, or an element of a field: ``a.b.c``,
    ``P.ps[0].b``, ``p.x[i]`` (a chain of attributes and elements from a name, with an
    attribute below the last step)."""
    inner = target.value if isinstance(target, (gast.Attribute, gast.Subscript)) else None
    attributes = 0
    while isinstance(inner, (gast.Attribute, gast.Subscript)):
        attributes += isinstance(inner, gast.Attribute)
        inner = inner.value
    return isinstance(inner, gast.Name) and (
        attributes > 0 or isinstance(target, gast.Attribute) and target.value is not inner)


def _chain_from_name(node):
    """Whether ``node`` is a name, or elements and attributes of one (``x[i]``, ``a.b[0]``), or
    ``vars(obj)`` (``vars(obj)["a"] = v`` is ``obj.a = v``: normalize/containers.py)."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
            node.func.id == "vars" and len(node.args) == 1 and not node.keywords):
        return True
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return isinstance(node, gast.Name)


def _nested_kind(target):
    """What an augmented assignment's target is when it is not ``x``, ``x[i]`` or ``x.a``
    (Python allows only a name, an element or an attribute there)."""
    if isinstance(target, gast.Attribute):
        return ("an attribute of an attribute or an element (`a.b.c += ...`); rebind the inner "
                "object first")
    return ("an element of an element or an attribute (`a.b[i] += ...`, `a[i][j] += ...`); "
            "rebind the inner object first")
