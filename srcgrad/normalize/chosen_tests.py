"""Tests of a parameter that holds a function or None, made where which one it holds is known
only when it runs; part of ``chosen``.

Requires: ``chosen.fold`` has decided every test it could (what is left follows an assignment
in a branch or a loop on a run-time value). Guarantees: a parameter ``g`` whose every value is
known here (what the call passed, None or a function, and what each plain assignment
``g = ...`` binds) and that is still tested (``g is None``, ``g is not None``, ``callable(g)``,
``g or np.sin``, ``g and h``) gets a flag saying whether it holds None, set where the function
starts and after each assignment; each test reads the flag, and an assignment of a choice
(``g = g or np.sin``, ``g = np.sin if g is None else g``) becomes an ``if``. ``g`` is then only
assigned and called (or passed), which ``rebound`` dispatches on: each call calls what the
assignment that ran last bound (a binding of None raises Python's TypeError there):

    def f(x, g=None):                        def f(x, g=None):
        if x[0] > 0:                             g_is_none = True
            g = np.cos              ->           if x[0] > 0:
        if g is None:                                g = np.cos
            g = np.sin                               g_is_none = False
        return np.sum(g(x))                      if g_is_none:
                                                     g = np.sin
                                                     g_is_none = False
                                                 return np.sum(g(x))

A choice given another name (``h = np.sin if g is None else g``) becomes an ``if`` too, whose
copy ``h = g`` ``rebound`` dispatches. ``g`` assigned otherwise, or a value whose truth needs
user code, leaves the body as it was (its calls are refused at their line, as before); ``g``
read otherwise (held in a list, a field) is refused at that read.

``raising_where_called`` serves an inlined helper given None (``chosen.fold_helper``): a
statement that surely calls it raises Python's TypeError instead.
"""

from __future__ import annotations

import builtins
import inspect

import gast

from ..astutil import clone, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from .callables import is_callable_value
from .chosen_held import dispatched_tail, located, own_stores

UNKNOWN = object()  # a name whose value is not known at this point of the body


def is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def is_none_test(node):
    """``a is None``, ``None is not a``."""
    return isinstance(node, gast.Compare) and len(node.ops) == 1 and isinstance(
        node.ops[0], (gast.Is, gast.IsNot)) and any(
        is_none(s) for s in (node.left, node.comparators[0]))


def is_callable_call(node, ctx):
    """``callable(name)``, ``callable`` being the builtin."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
        node.func.id not in ctx.local_names) and len(node.args) == 1 and not node.keywords and (
        isinstance(node.args[0], gast.Name)) and (
        ctx.namespace.resolve(node.func, ctx.local_names) is builtins.callable)


def truth(value):
    """``bool(value)`` where Python's answer needs no user code (None, a function), else
    UNKNOWN."""
    if value is None:
        return False
    if callable(value) and not any(hasattr(type(value), a) for a in ("__bool__", "__len__")):
        return True
    return UNKNOWN


def flagged(body, name, entry, ctx):
    """Rewrite the statements ``body`` in place as the module docstring says, for the
    parameter ``name`` that holds ``entry`` where they start; the names made (none when
    ``body`` is left as it was)."""
    if truth(entry) is UNKNOWN:
        return set()
    flag = ctx.namer.fresh(naming.IS_NONE.format(name))
    rewrite = _Flag(name, flag, ctx)
    new = rewrite.block([clone(s) for s in body])
    if not rewrite.tested or rewrite.failed:
        return set()
    other = read_otherwise(new, name, ctx, fields=True)
    if other is not None and dispatched_tail(new, name, entry, ctx, other, flag):
        other = read_otherwise(new, name, ctx, fields=True)
    other = other and read_otherwise(new, name, ctx)
    if other is not None:
        if read_otherwise(body, name, ctx) is None:
            return set()  # (``rebound`` dispatches on it as it is)
        raise ctx.location.error(UnsupportedSyntaxError, other, (
            f"srcgrad does not support reading the parameter `{name}` here other than to call "
            f"it, pass it to a function, copy it (`h = {name}`) or test it: the function "
            f"assigns it in a branch or a loop on a run-time value and tests it, so which "
            f"function it holds is known only when it runs; call it, pass it or copy it "
            f"where it is named instead of holding it in a list, tuple, dict or field"))
    start = gast.Assign([gast.Name(flag, gast.Store(), None, None)],
                        gast.Constant(entry is None, None), None)
    body[:] = [located(start, body[0]), *new]
    return {flag}


def called_passed_or_copied(body):
    """The ids of the nodes of ``body`` that are a call's function or argument, or the value
    of an assignment to a name (``h = g``): the reads ``rebound`` dispatches."""
    calls = [n for s in body for n in walk(s) if isinstance(n, gast.Call)]
    copies = [n.value for s in body for n in walk(s) if isinstance(n, gast.Assign) and len(
        n.targets) == 1 and isinstance(n.targets[0], gast.Name) and isinstance(
        n.value, gast.Name)]
    return {id(a) for c in calls for a in [c.func, *c.args, *(k.value for k in c.keywords)]} | {
        id(v) for v in copies}


def read_otherwise(body, name, ctx, fields=False):
    """The first read of ``name`` in ``body`` that ``rebound`` cannot dispatch (``fields``:
    or given to a class, ``Box(g)``, which may hold it in a field), or None."""
    classes = [c for s in body for c in walk(s) if fields and isinstance(
        c, gast.Call) and inspect.isclass(ctx.namespace.resolve(c.func, ctx.local_names))]
    used = called_passed_or_copied(body) - {
        id(a) for c in classes for a in [*c.args, *(k.value for k in c.keywords)]}
    return next((n for s in body for n in walk(s) if isinstance(n, gast.Name) and (
        n.id == name) and isinstance(n.ctx, gast.Load) and id(n) not in used), None)


class _Flag:
    """The rewrite of one block after another; ``tested``: a test was rewritten; ``failed``:
    ``name`` is bound in a way this cannot follow."""

    def __init__(self, name, flag, ctx):
        self.name, self.flag, self.ctx = name, flag, ctx
        self.tested = self.failed = False
        self.choices = set()  # ids of the IfExps made of tests (an assignment of one: an `if`)

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    def statement(self, s):
        if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            return [s]
        self.parts(s)
        stores = own_stores(s, self.name)
        if not stores and isinstance(s, gast.Assign) and id(s.value) in self.choices and (
                len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)):
            return [_chosen(s, *(located(gast.Assign([clone(s.targets[0])], v, None), s)
                                 for v in (s.value.body, s.value.orelse)))]
        if not stores:
            return [s]
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and s.targets[0] is stores[0]
                and len(stores) == 1):
            self.failed = True
            return [s]
        return self.assignment(s)

    def parts(self, s):
        """The expressions and nested blocks of the statement ``s`` rewritten."""
        for field, value in gast.iter_fields(s):
            if isinstance(value, gast.expr):
                setattr(s, field, self.expr(value))
            elif isinstance(value, list) and value and isinstance(value[0], gast.stmt):
                setattr(s, field, self.block(value) or [located(gast.Pass(), s)])
            elif isinstance(value, list):
                setattr(s, field, [self.expr(v) if isinstance(v, gast.expr) else v
                                   for v in value])

    def assignment(self, s):
        """``name = v``: the flag set after it (the assignment dropped when ``v`` is ``name``
        itself, made an ``if`` when ``v`` is a choice of tests)."""
        value = s.value
        if id(value) in self.choices:
            return [_chosen(s, *(self.assignment(located(gast.Assign(
                [clone(s.targets[0])], v, None), s)) for v in (value.body, value.orelse)))]
        if isinstance(value, gast.Name) and value.id == self.name:
            return []
        if is_none(value):
            held = None
        else:
            held = self.ctx.namespace.resolve(value, self.ctx.local_names)
            if held is MISSING or not is_callable_value(held) or truth(held) is not True:
                self.failed = True
                return [s]
        mark = gast.Assign([gast.Name(self.flag, gast.Store(), None, None)],
                           gast.Constant(held is None, None), None)
        return [s, located(mark, s)]

    def expr(self, node):
        """``node`` with the tests of ``name`` reading the flag (a new node where one is)."""
        if isinstance(node, gast.Lambda):
            return node
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.AST) and not isinstance(value, gast.expr_context):
                setattr(node, field, self.expr(value))
            elif isinstance(value, list):
                setattr(node, field, [self.expr(v) if isinstance(v, gast.AST) else v
                                      for v in value])
        if isinstance(node, gast.IfExp) and self._reads_flag(node.test):
            self.choices.add(id(node))  # (`np.sin if g is None else g`)
        made = self.test(node)
        if made is not None:
            self.tested = True
            return _located_expr(made, node)
        return node

    def test(self, node):
        """The expression reading the flag that ``node`` is, when it tests ``name``."""
        flag = gast.Name(self.flag, gast.Load(), None, None)
        if is_none_test(node) and any(self._is_name(s) for s in (node.left,
                                                                   node.comparators[0])):
            return flag if isinstance(node.ops[0], gast.Is) else gast.UnaryOp(gast.Not(), flag)
        if is_callable_call(node, self.ctx) and self._is_name(node.args[0]):
            return gast.UnaryOp(gast.Not(), flag)
        if isinstance(node, gast.BoolOp) and self._is_name(node.values[0]):
            rest = node.values[1:]
            rest = rest[0] if len(rest) == 1 else gast.BoolOp(node.op, rest)
            first = node.values[0]
            choice = gast.IfExp(flag, rest, first) if isinstance(node.op, gast.Or) else (
                gast.IfExp(flag, first, rest))
            self.choices.add(id(choice))
            return choice
        return None

    def _reads_flag(self, node):
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            node = node.operand
        return isinstance(node, gast.Name) and node.id == self.flag

    def _is_name(self, node):
        return isinstance(node, gast.Name) and node.id == self.name


def raising_where_called(stmts, names):
    """``stmts`` with each statement that surely calls a name of ``names`` (each holding
    None) replaced by Python's ``raise TypeError("'NoneType' object is not callable")``; a
    call that ``and``, ``or``, ``a if c else b``, a lambda or a comprehension may skip is left
    as it is."""
    out = []
    for s in stmts:
        if _surely_calls(s, names):
            error = gast.Call(gast.Name("TypeError", gast.Load(), None, None),
                              [gast.Constant("'NoneType' object is not callable", None)], [])
            out.append(located(gast.Raise(error, None), s))
            # (never reached: kept so that the block keeps its shape, the call dropped)
            out.append(_Uncalled(names).visit(s))
            continue
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(s, field, None), list) and getattr(s, field):
                setattr(s, field, raising_where_called(getattr(s, field), names))
        for h in getattr(s, "handlers", None) or ():
            h.body = raising_where_called(h.body, names)
        out.append(s)
    return out


def raising_call(s):
    """``y = f(x)`` of an ``f`` known to hold None (a parameter's None copy held in a list,
    tuple, dict or field: normalize/chosen_held.py): Python's ``raise TypeError("'NoneType'
    object is not callable")`` where it runs, then ``y = x`` (never reached: the block keeps
    its shape)."""
    error = gast.Call(gast.Name("TypeError", gast.Load(), None, None),
                      [gast.Constant("'NoneType' object is not callable", None)], [])
    first = s.value.args[0] if s.value.args and not isinstance(
        s.value.args[0], gast.Starred) else gast.Constant(0.0, None)
    return [located(gast.Raise(error, None), s), located(gast.Assign(s.targets, first, None), s)]


class _Uncalled(gast.NodeTransformer):
    """A call of a name of ``names`` replaced by its first argument (or 0.0)."""

    def __init__(self, names):
        self.names = names

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.names:
            return node.args[0] if node.args and not isinstance(
                node.args[0], gast.Starred) else gast.copy_location(gast.Constant(0.0, None), node)
        return node


SKIPPING = (gast.BoolOp, gast.IfExp, gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
            gast.GeneratorExp, gast.FunctionDef, gast.ClassDef, gast.stmt)


def _surely_calls(node, names, top=True):
    """Whether evaluating the statement ``node`` (its own expressions: not its nested
    statements) surely reaches a call of a name of ``names``."""
    if not top and isinstance(node, SKIPPING):
        return False
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
            node.func.id in names):
        return True
    return any(_surely_calls(child, names, False) for child in gast.iter_child_nodes(node))


def _chosen(s, then, otherwise):
    """``if test: then else: otherwise`` for ``s``, the assignment of a choice ``a if test
    else b`` (each a statement or a list of them)."""
    then, otherwise = ([x] if isinstance(x, gast.stmt) else x for x in (then, otherwise))
    return located(gast.If(s.value.test, then or [located(gast.Pass(), s)], otherwise), s)


def _located_expr(expr, where):
    for n in walk(expr):
        if isinstance(n, gast.expr):
            gast.copy_location(n, where)
    return expr
