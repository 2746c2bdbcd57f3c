"""Integer variables: the names that only ever hold a Python int.

Requires: a normalized function and a way to tell which callee a call expression resolves to.
Guarantees: ``run`` returns the variables every binding of which is a ``range`` loop index, an
int constant, ``len(...)`` of one argument, another such variable, or ``+ - * // %`` of those.
Parameters and names bound any other way (unpacking, ...) are never integers. The set is the
greatest one closed under these rules (a flow-insensitive :mod:`dataflow` fixed point over the
names that are *not* integers), so ``i = i + 1`` in a loop stays an integer. The reverse sweep
uses it to add ``dx[i] += g`` in place where ``i`` is surely an int index.

    def f(x, n):                 integers: i, j, k
        for i in range(n):
            j = i + 1
            k = len(x) - j
"""

from __future__ import annotations

import gast

from ..astutil import walk
from .dataflow import Dataflow

INTEGER_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


class Integers(Dataflow):
    def __init__(self, resolves):
        super().__init__()
        self.resolves = resolves  # resolves(call.func, builtin) -> whether it denotes builtin
        self.candidates = set()

    def run(self, fn_node, params):
        plain = set()  # the bindings the rules below look at
        for n in walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                plain.add(id(n.targets[0]))
            elif isinstance(n, gast.For) and isinstance(n.target, gast.Name):
                plain.add(id(n.target))
        bound = [
            n for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
        ]
        self.candidates = {n.id for n in bound} - params
        other = {n.id for n in bound if id(n) not in plain}
        not_integers = self.repeated(fn_node.body, frozenset(params | other))
        return self.candidates - not_integers

    def transfer(self, stmt, facts):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            if not self.integer(stmt.value, facts):
                return facts | {stmt.targets[0].id}
        return facts

    def enter_loop(self, loop, facts):
        if isinstance(loop, gast.For) and isinstance(loop.target, gast.Name):
            ranged = isinstance(loop.iter, gast.Call) and self.resolves(loop.iter.func, range)
            if not ranged:
                return facts | {loop.target.id}
        return facts

    def integer(self, value, not_integers):
        if isinstance(value, gast.Constant):
            return type(value.value) is int
        if isinstance(value, gast.Name):
            return value.id in self.candidates and value.id not in not_integers
        if isinstance(value, gast.BinOp):
            return (
                isinstance(value.op, INTEGER_OPS)
                and self.integer(value.left, not_integers)
                and self.integer(value.right, not_integers)
            )
        return (
            isinstance(value, gast.Call)
            and self.resolves(value.func, len)
            and len(value.args) == 1
            and not value.keywords
        )


def integer_index(index, integers):
    """Whether ``index`` (of ``x[index]``) is surely an int or a tuple of ints."""
    if isinstance(index, gast.Tuple):
        return all(integer_index(e, integers) for e in index.elts)
    if isinstance(index, gast.Constant):
        return type(index.value) is int
    return isinstance(index, gast.Name) and index.id in integers
