"""Calls of a name bound to callables more than once, dispatched on which binding holds.

Requires: an A-normal-form body (calls are ``y = g(...)`` or ``g(...)`` statements). Guarantees:
a name assigned a callable at several places (``pp = partial(f, 1.0)`` then
``pp = partial(f, 2.0)``; ``g = np.sin`` and, in a branch, ``g = np.cos``) and read only to be
called gets a name of its own per assignment, each assigned once, so that ``inline`` knows what
each holds; a number records which assignment ran last, and each call becomes a branch on it,
calling the callable that assignment bound, as Python would:

    g = np.sin                       g_2 = np.sin
                                     g_which = 0
    if c:                            if c:
        g = np.cos            ->         g_3 = np.cos
                                         g_which = 1
    y = g(x)                         which_is_0 = g_which == 0
                                     if which_is_0:
                                         y = g_2(x)
                                     else:
                                         y = g_3(x)

A binding of a value from outside the body (``np.cos``, ``A.scale``) is not assigned: its calls
call that expression. A ``functools.partial`` of a function and constants or values from outside
the body is made once before the body: a call that the binding reaches from a later place in a
loop finds it made (as Python would, the same function and arguments).

A call statement that passes the name to a function (``y = apply(g, x)``) is dispatched the
same way, each path passing one binding, and so is a copy ``h = g`` of a name that holds
functions (``h`` called, or copied into one that is): ``h``, then bound once per path, is
dispatched in the next round. A binding of None (a name a call may leave None: ``g = None``, a
parameter given None) raises Python's ``TypeError`` where it would be called, and is passed as
None; a ``NoField`` binding (``chosen_fields``: an object without the field) raises Python's
``AttributeError`` where it is read. A name also read otherwise (held in a list,
returned), assigned by anything but a plain assignment (a loop target, ``+=``, unpacking), or
assigned something that is not a callable's name, an attribute or constant item of one, or a
``functools.partial`` is left as it is (its calls are resolved, or refused, as before).
"""

from __future__ import annotations

import functools

import gast

from ..astutil import clone, store_counts, walk
from ..emit import naming
from ..frontend.resolve import MISSING


class NoField(str):
    """The value a name follows a field with where the object has no such field
    (``chosen_fields``): reading it raises Python's AttributeError, this message."""


def run(fn_node, ctx):
    """The pass: see the module docstring."""
    params = {a.id for a in walk(fn_node.args) if isinstance(a, gast.Name)}
    dispatch(fn_node, ctx, ctx.local_names, params)
    return fn_node


def dispatch(node, ctx, locals_, params=()):
    """Rewrite ``node``'s body (a function or an inlined helper's ``FunctionDef``) in place;
    the names made are added to ``locals_``."""
    done = set()
    for _ in range(MAX_ROUNDS):  # a copy `h = g` of a name dispatched: `h` in the next round
        names = _rebound_callables(node, ctx, locals_, set(params)) - done
        if not names:
            return
        Dispatch(names, ctx, locals_).run(node)
        done |= names


MAX_ROUNDS = 4


def _rebound_callables(node, ctx, locals_, params):
    """The names assigned (plainly) at least twice, each time a static-looking callable, and
    read only as the function or an argument of a call statement."""
    assigned, plain = {}, set()
    for n in _nodes(node.body):
        if _plain_assignment(n):
            assigned.setdefault(n.targets[0].id, []).append(n.value)
            plain.add(id(n.targets[0]))
    functions = _function_names(node) | {g for g, values in assigned.items() if any(
        _a_function(v, ctx, locals_) for v in values)}
    excluded = (_read_or_stored_otherwise(node, plain, functions) | set(params) | _values(ctx)
                | _copies_in_loops_of_defaults(node, ctx))
    found = {g for g, values in assigned.items() if len(values) > 1 and g not in excluded
             and all(_static_looking(v, ctx, locals_) for v in values) and (
                 g in functions or not any(isinstance(v, gast.Constant) for v in values))}
    # (a copy `h = g` of a name dispatched now is dispatched itself in the next round)
    return {g for g in found if not any(isinstance(v, gast.Name) and v.id in found
                                        for v in assigned[g])}


def _copies_in_loops_of_defaults(node, ctx):
    """The names assigned, in a loop, a local function with default values (``keep = g`` of a
    ``g = lambda v, k=k: ...`` made on each trip): the copy holds the defaults of the trip it
    was made on, while a call of the copy inlined would read those of the last trip. Not
    dispatched (its calls are resolved, or refused, as before)."""
    local_functions = getattr(ctx, "local_functions", None) or {}
    with_defaults = {name for name, (fn, *_) in local_functions.items()
                     if fn.args.defaults or any(d is not None for d in fn.args.kw_defaults)}
    loops = [n for n in _nodes(node.body) if isinstance(n, (gast.For, gast.While))]
    return {n.targets[0].id for loop in loops for n in _nodes(loop.body)
            if _copy(n) and n.value.id in with_defaults}


def _values(ctx):
    """The local functions, and the names a lambda or nested def reads (``h0 = h`` ... ``def
    loc(v): return v + h0``): values, not dispatched."""
    local_functions = getattr(ctx, "local_functions", None) or {}
    return set(local_functions) | {n.id for fn, _ in local_functions.values() for n in walk(fn)
                                   if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _a_function(value, ctx, locals_):
    """Whether ``value`` is a function passed (a parameter specialized per function passed)
    or a callable from outside the body (``np.cos``)."""
    if isinstance(value, gast.Name) and value.id in set(getattr(
            ctx, "static", None) or ()) | set(getattr(ctx, "nones", ())):
        return True
    found = ctx.namespace.resolve(value, locals_) if isinstance(
        value, (gast.Name, gast.Attribute)) else None
    return callable(found) and found is not MISSING


def _function_names(node):
    """The names called (``y = g(x)``), and the names copied into one (``h = g``, then
    ``h(x)``): the names that hold functions."""
    out = {s.value.func.id for s in _nodes(node.body) if _call_statement(s)}
    copies = [(n.targets[0].id, n.value.id) for n in _nodes(node.body) if _plain_assignment(
        n) and isinstance(n.value, gast.Name)]
    size = None
    while size != len(out):
        size = len(out)
        out |= {g for h, g in copies if h in out}
    return out


def _read_or_stored_otherwise(node, plain, functions):
    """The names stored other than by the plain assignments ``plain`` (their targets' ids), or
    read other than as the function of a call statement or an argument of one (``apply(g,
    x)``: a helper given the callable) or, for a name of ``functions``, copied into another
    (``h = g``); a name read twice in one statement is excluded too."""
    called = set()
    twice = set()
    for s in _nodes(node.body):
        if _copy(s) and s.value.id in functions:
            called.add(id(s.value))
        read = _passed(s)
        names = [n.id for n in read]
        if _call_statement(s):
            called.add(id(s.value.func))
            names.append(s.value.func.id)
        called |= {id(n) for n in read}
        twice |= {g for g in names if names.count(g) > 1}
    return twice | {n.id for n in _nodes(node.body) if isinstance(n, gast.Name) and (
        isinstance(n.ctx, (gast.Store, gast.Del)) and id(n) not in plain
        or isinstance(n.ctx, gast.Load) and id(n) not in called)}


def _passed(s):
    """The names ``s``, a call statement (``y = f(...)``, ``f(...)``), passes as arguments."""
    value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
    if not (isinstance(value, gast.Call) and isinstance(value.func, (gast.Name, gast.Attribute))
            and (isinstance(s, gast.Expr) or len(s.targets) == 1)):
        return []
    atoms = list(value.args) + [k.value for k in value.keywords]
    return [a for a in atoms if isinstance(a, gast.Name)]


def _nodes(stmts):
    for s in stmts:
        yield from walk(s)


def _plain_assignment(n):
    return isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
        n.targets[0], gast.Name)


def _copy(s):
    """``h = g``, of names."""
    return _plain_assignment(s) and isinstance(s.value, gast.Name)


def _call_statement(s):
    """``y = g(...)`` or ``g(...)`` as a statement, ``g`` a name."""
    value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and (
        isinstance(s, gast.Expr) or len(s.targets) == 1)


def _static_looking(value, ctx, locals_):
    """A name, an attribute or constant item of one, a ``functools.partial(...)``, or None
    (calling it raises Python's TypeError)."""
    if isinstance(value, gast.Constant):
        return value.value is None or isinstance(value.value, NoField)
    if isinstance(value, gast.Call):
        return ctx.namespace.resolve(value.func, locals_) is functools.partial
    while isinstance(value, (gast.Attribute, gast.Subscript)):
        if isinstance(value, gast.Subscript) and not isinstance(value.slice, gast.Constant):
            return False
        value = value.value
    return isinstance(value, gast.Name)


class Dispatch:
    """The rewrite. Each assignment of a rebound name ``g`` gets its number (program order) and
    a name of its own; a call sees the one binding that surely holds (the last in its own
    block, or before it in an enclosing block with nothing between that may rebind ``g``), or
    else a branch over every binding that may reach it: those before it in program order and
    those anywhere in a loop around it (a later trip runs them first)."""

    def __init__(self, names, ctx, locals_):
        self.names, self.ctx, self.locals = names, ctx, locals_
        self.which = {g: self._fresh(naming.WHICH.format(g)) for g in sorted(names)}
        self.own = {}  # id(assignment) -> (g, number, its name)
        self.outside = {}  # its name -> a value from outside the body, called as it is
        self.values = {}  # its name -> the value assigned
        self.loops = []  # the assignments inside each loop around the statement
        # a partial of values from outside the body (`functools.partial(f, 2.0)`): made before
        # the body, so a call that a later assignment in a loop reaches finds it made
        self.hoisted = {}  # id(assignment) -> the assignment

    def _fresh(self, base):
        name = self.ctx.namer.fresh(base)
        self.locals.add(name)
        return name

    def run(self, node):
        count = {g: 0 for g in self.names}
        looped = {n.id for s in _nodes(node.body) if isinstance(s, (gast.For, gast.While))
                  for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        # the names bound once, not in a loop: each holds one value from there on
        self.once = {n for n, k in store_counts(node).items() if k == 1} - looped
        for n in _nodes(node.body):
            if _plain_assignment(n) and n.targets[0].id in self.names:
                g = n.targets[0].id
                self.own[id(n)] = (g, count[g], self._fresh(g))
                self.values[self.own[id(n)][2]] = n.value
                count[g] += 1
                if _from_outside(n.value, self.locals) or isinstance(n.value, gast.Constant):
                    self.outside[self.own[id(n)][2]] = n.value
                elif _fixed_partial(n.value, self.ctx, self.locals):
                    self.hoisted[id(n)] = n
        self.seen = []  # the numbered assignments met so far
        self.top = node.body  # (kept whole: the function returns at its end)
        node.body = self._block(node.body, {})
        hoisted = [_located(clone(n), n) for n in self.hoisted.values()]
        node.body[:0] = hoisted

    def _inside(self, s):
        return [self.own[id(n)] for n in walk(s) if id(n) in self.own]

    def _block(self, stmts, current):
        """``stmts`` rewritten; ``current``: the binding (its name) each rebound name surely
        holds here."""
        current = dict(current)
        out = []
        for s in stmts:
            if id(s) in self.own:
                g, k, own = self.own[id(s)]
                s.targets[0].id = own
                self.seen.append(self.own[id(s)])
                current[g] = own
                if own not in self.outside and id(s) not in self.hoisted:
                    out.append(s)
                out.append(_located(_assign(self.which[g], gast.Constant(k, None)), s))
            elif self._reading(s) is not None:
                g = self._reading(s)
                out += self._dispatched(s, g, current.get(g))
                if isinstance(out[-1], gast.Raise) and stmts is not self.top:
                    break  # (what follows never runs: Python raised there)
            else:
                inside = self._inside(s)  # (before the rewrite drops some assignments)
                out.append(self._nested(s, current))
                for g, _, _ in inside:
                    current.pop(g, None)  # rebound on some path in there
        return out

    def _nested(self, s, current):
        loop = isinstance(s, (gast.For, gast.While))
        inner = dict(current)
        if loop:  # a later trip sees what the body binds
            self.loops.append(self._inside(s))
            for g, _, _ in self.loops[-1]:
                inner.pop(g, None)
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and getattr(s, field):
                setattr(s, field, self._block(getattr(s, field), inner))
        for h in getattr(s, "handlers", None) or ():
            h.body = self._block(h.body, inner)
        if loop:
            self.loops.pop()
        return s

    def _reading(self, s):
        """The rebound name the call statement ``s`` calls or passes on, or None."""
        if _call_statement(s) and s.value.func.id in self.names:
            return s.value.func.id
        if _copy(s) and s.value.id in self.names:
            return s.value.id
        found = [n.id for n in _passed(s) if n.id in self.names]
        return found[0] if found else None

    def _dispatched(self, s, g, sure):
        """``s`` (a call of the rebound name ``g``, or one passing it on) with ``sure`` for
        ``g``, or a branch on which binding ran last over those that may reach it."""
        if sure is not None:
            return [self._with(s, g, sure)]
        reaching = {(k, own) for h, k, own in self.seen if h == g}
        reaching |= {(k, own) for loop in self.loops for h, k, own in loop if h == g}
        if not reaching:
            return [s]  # not bound yet: Python's NameError, as the call is left
        branch = None
        for k, own in sorted(reaching, reverse=True):
            call = self._with(clone(s), g, own)
            if branch is None:
                branch = [call]
                continue
            test = self._fresh(naming.WHICH_IS.format(k))
            compare = gast.Compare(gast.Name(self.which[g], gast.Load(), None, None),
                                   [gast.Eq()], [gast.Constant(k, None)])
            branch = [_located(_assign(test, compare), s), _located(gast.If(
                gast.Name(test, gast.Load(), None, None), [call], branch), s)]
        return branch


    def _with(self, s, g, own):
        """``s`` reading the binding ``own`` where it reads ``g`` (calling None: Python's
        TypeError raised there)."""
        value = s.value
        missing = self.values[own]
        if isinstance(missing, gast.Constant) and isinstance(missing.value, NoField):
            error = gast.Call(gast.Name("AttributeError", gast.Load(), None, None),
                              [gast.Constant(str(missing.value), None)], [])
            return _located(gast.Raise(error, None), s)
        if _copy(s):
            s.value = self._passed(own, value)
            return s
        if isinstance(value.func, gast.Name) and value.func.id == g and self._none(own):
            error = gast.Call(gast.Name("TypeError", gast.Load(), None, None),
                              [gast.Constant("'NoneType' object is not callable", None)], [])
            return _located(gast.Raise(error, None), s)
        if isinstance(value.func, gast.Name) and value.func.id == g:
            value.func = self._callee(own, value.func)
        value.args = [self._passed(own, a) if _is(a, g) else a for a in value.args]
        for k in value.keywords:
            if _is(k.value, g):
                k.value = self._passed(own, k.value)
        return s

    def _none(self, own):
        """Whether the binding ``own`` holds None (assigned it, or a parameter given it)."""
        value = self.values[own]
        return is_none(value) or isinstance(value, gast.Name) and (
            value.id in getattr(self.ctx, "nones", ()))

    def _passed(self, own, where):
        """What a call is given where it passes the binding ``own``: None itself, for a
        binding of None (so that a helper's tests of it are decided)."""
        if self._none(own):
            return gast.copy_location(gast.Constant(None, None), where)
        return self._callee(own, where)

    def _callee(self, own, where):
        """The binding's own name, or the value from outside the body it was given (a global
        function, ``np.cos``, ``MODEL.layer.scale``: called where the call is, it resolves there
        even when the assignment comes later in a loop)."""
        value = self.outside.get(own)
        copied = self.values[own]
        if value is None and isinstance(copied, gast.Name) and copied.id in self.once and (
                copied.id not in self.names):
            value = copied  # (`g_4 = f_1`, `f_1` bound once: read as it is, where `g_4` is)
        if value is None:
            return gast.Name(own, gast.Load(), None, None)
        return _located_expr(clone(value), where)


def is_none(value):
    return isinstance(value, gast.Constant) and value.value is None


def _from_outside(value, locals_):
    """A name, or an attribute or item of one, that the body does not assign."""
    while isinstance(value, (gast.Attribute, gast.Subscript)):
        value = value.value
    return isinstance(value, gast.Name) and value.id not in locals_


def _fixed_partial(value, ctx, locals_):
    """``functools.partial(f, ...)`` of a function and arguments from outside the body or
    constants: the same object wherever in the body it is made."""
    if not isinstance(value, gast.Call) or ctx.namespace.resolve(
            value.func, locals_) is not functools.partial:
        return False
    parts = list(value.args) + [k.value for k in value.keywords]
    return all(isinstance(a, gast.Constant) or _from_outside(a, locals_) for a in parts) and all(
        k.arg is not None for k in value.keywords)


def _is(atom, g):
    return isinstance(atom, gast.Name) and atom.id == g


def _located_expr(expr, where):
    for n in walk(expr):
        gast.copy_location(n, where)
    return expr


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _located(stmt, where):
    for n in walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)):
            gast.copy_location(n, where)
    return stmt
