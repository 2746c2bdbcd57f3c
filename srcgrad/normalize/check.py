"""Reject every construct srcgrad does not differentiate, at transform time, with a caret.

Requires: a parsed function. Guarantees: the body only contains constructs the later passes
handle; anything else raises :class:`UnsupportedSyntaxError` pointing at the user's file and line.
A construct that is not supported is never silently mis-differentiated.

    with np.errstate(all="ignore"):     ->   UnsupportedSyntaxError: srcgrad does not support
        y = np.log(x)                           a `with` block here
                                               File "model.py", line 12
                                                   with np.errstate(all="ignore"):
                                                   ^
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntaxError

# What each rejected construct is called in the error message.
UNSUPPORTED = {
    gast.AsyncFor: "an `async for` loop",
    gast.With: "a `with` block",
    gast.AsyncWith: "an `async with` block",
    gast.Try: "a `try` statement",
    gast.Raise: "a `raise` statement",
    gast.Assert: "an `assert` statement",
    gast.ClassDef: "a class definition",
    gast.FunctionDef: "a nested function definition",
    gast.AsyncFunctionDef: "a nested async function definition",
    gast.Global: "a `global` declaration",
    gast.Nonlocal: "a `nonlocal` declaration",
    gast.Delete: "a `del` statement",
    gast.Import: "an import inside the function",
    gast.ImportFrom: "an import inside the function",
    gast.Yield: "`yield`",
    gast.YieldFrom: "`yield from`",
    gast.Await: "`await`",
    gast.Lambda: "a lambda",
    gast.SetComp: "a set comprehension",
    gast.DictComp: "a dict comprehension",
    gast.NamedExpr: "an assignment expression (`:=`)",
    gast.Starred: "a starred expression",
    gast.JoinedStr: "an f-string",
    gast.Set: "a set",
}


class CheckSupported(gast.NodeVisitor):
    def __init__(self, location, inlined=False):
        self.location = location
        self.inlined = inlined  # a called function: may forward its own *args and **kwargs
        self.forwarded = set()

    def run(self, fn_node):
        args = fn_node.args
        if args.kwarg is not None and not self.inlined:
            raise self._error(args.kwarg, "`**kwargs` parameters")
        if self.inlined:
            self.forwarded = {a.id for a in (args.vararg, args.kwarg) if a is not None}
        body = fn_node.body
        for stmt in body:
            self.visit(stmt)
        if not _always_returns(body):
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
            if not isinstance(target.value, gast.Name):
                raise self._error(target, "assignment into an element of an element")
        elif not isinstance(target, gast.Name):
            raise self._error(target, f"assignment to {_target_kind(target)}")
        self.generic_visit(node.value)
        for t in node.targets:
            self.generic_visit(t)

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
            or isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
        ):
            raise self._error(target, f"augmented assignment to {_target_kind(target)}")
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
        if not all(isinstance(t, gast.Name) for t in names):
            raise self._error(target, "a loop target that is not a name or a tuple of names")
        if isinstance(target, gast.Tuple) and not (
            isinstance(node.iter, gast.Call)
            and isinstance(node.iter.func, gast.Name)
            and node.iter.func.id in ("enumerate", "zip")
        ):
            raise self._error(target, "unpacking a loop item other than from enumerate or zip")
        self.generic_visit(node)

    def visit_While(self, node):
        if node.orelse:
            raise self._error(node.orelse[0], "`while ... else`")
        for n in gast.walk(node.test):
            if isinstance(n, (gast.ListComp, gast.GeneratorExp)):
                raise self._error(n, "a comprehension in a `while` condition")
        self.generic_visit(node)

    def visit_Call(self, node):
        for kw in node.keywords:
            if kw.arg is None and not self._forwarding(kw.value):
                raise self._error(kw.value, "`**kwargs` in a call")
        for a in node.args:
            if isinstance(a, gast.Starred) and not self._forwarding(a.value):
                raise self._error(a, "`*args` in a call (other than forwarding a called "
                                  "function's own `*args`)")
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
    if isinstance(last, gast.Return):
        return True
    if isinstance(last, gast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, gast.While) and isinstance(last.test, gast.Constant) and last.test.value:
        return True
    return False


def _target_kind(target):
    if isinstance(target, gast.Subscript):
        return "an indexed element (`y[i] = ...`)"
    if isinstance(target, gast.Attribute):
        return "an attribute (`obj.attr = ...`)"
    return type(target).__name__
