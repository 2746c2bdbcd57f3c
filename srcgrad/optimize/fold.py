"""Constant folding and algebraic identities that make inlined rules read as written by hand.

Requires: any gast function. Guarantees: the same values, with arithmetic on literals evaluated
and multiplications by one, divisions by one and powers of one removed (and ``- 0.0`` beside a
Python float factor: ``0.5 * (z - 0.0)`` -> ``0.5 * z``); a conditional expression
whose test is a literal keeps only the taken branch.

    dy * 2 * x ** (2 - (2 != 0))   ->   dy * 2 * x
    np.transpose(dy, None if None is None else np.argsort(None))   ->   np.transpose(dy, None)
    f(x) if None not in ('nuc', 2, -2) else g(x)   ->   f(x)
    f(x) if None is None and 1.5 is None else g(x)   ->   g(x)
"""

from __future__ import annotations

import math
import operator

import gast

from ..astutil import NodeTransformer, walk
from .licm import held_names

_FOLD = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.Pow: operator.pow,
}

_COMPARE = {
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
}


def _num(node):
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def _bool(node):
    return isinstance(node, gast.Constant) and isinstance(node.value, bool)


def _as_int(node):
    return gast.Constant(int(node.value), None) if _bool(node) else node


def _literal(left, right, op):
    """``left op right`` of two literals (a bool beside a number counts as an int: ``2 - (2 !=
    0)`` is ``2 - True``, 1), or None."""
    if _num(left) and _bool(right) or _bool(left) and _num(right):
        left, right = _as_int(left), _as_int(right)
    if not (_num(left) and _num(right) and op in _FOLD):
        return None
    try:
        value = _FOLD[op](left.value, right.value)
    except (ZeroDivisionError, OverflowError):
        return None
    return value if isinstance(value, (int, float)) and abs(value) < 1e15 else None


def _simple(node):
    return isinstance(node, (gast.Constant, gast.Name))


def _is(node, value):
    return _num(node) and node.value == value


def _float(node):
    return isinstance(node, gast.Constant) and type(node.value) is float


def _less_zero(node):
    """``x - 0.0`` (not ``x - -0.0``, which turns ``-0.0`` into ``0.0``): beside a Python float
    factor it is ``x`` (``0.5 * (x - 0.0)`` is ``0.5 * x`` for every dtype: both are floating,
    the same number, even of an integer or bool array)."""
    return (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Sub)
            and isinstance(node.right, gast.Constant) and type(node.right.value) is float
            and node.right.value == 0.0 and math.copysign(1.0, node.right.value) > 0)


def run(fn_node, ctx):
    """The pass: arithmetic on constants and with 0 and 1 is folded."""
    return ConstantFold(ctx).run(fn_node)


class ConstantFold(NodeTransformer):
    """``x * 1.0`` is a new array, ``x`` is not: in a statement that writes into its target in
    place later (``a = x * 1.0; a = setitem(a, ...)``, ``a += v``) or reads an array that is
    written into, folding it away would make two names share one array and the write reach the
    other (the caller's argument, even). There only literal arithmetic is folded. Nor where the
    target is put into a list, dict or tuple (``c = z * 1.0; L = list_append(L, c)``): which
    elements hold ``z``'s array is found by identity when ``z += v`` updates them."""

    def __init__(self, ctx=None):
        self.ctx = ctx

    def run(self, fn_node):
        self.mutated = _mutated(fn_node)
        self.held = held_names(fn_node, self.ctx.namespace, self.ctx.local_names) if (
            self.ctx is not None) else set()
        self.keep_operands = False
        return self.visit(fn_node)

    def visit_Assign(self, node):
        names = {n.id for n in walk(node) if isinstance(n, gast.Name)}
        target = node.targets[0]
        primal = self.ctx is not None and self.ctx.primal_statements.get(id(node)) is node
        self.keep_operands = primal or bool(names & self.mutated) or (
            isinstance(target, gast.Name) and target.id in self.held
        )
        self.generic_visit(node)
        self.keep_operands = False
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        left, right, op = node.left, node.right, type(node.op)
        value = _literal(left, right, op)
        if value is not None:
            return gast.Constant(value, None)
        if self.keep_operands:
            return node
        if op is gast.Mult and _is(right, 1):
            return left
        if op is gast.Mult and _is(left, 1):
            return right
        if op in (gast.Div, gast.Pow) and _is(right, 1):
            return left
        if op is gast.Mult and _float(left) and _less_zero(right):
            node.right = right.left
        elif op is gast.Mult and _float(right) and _less_zero(left):
            node.left = left.left
        return node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, gast.USub):
            if _num(node.operand):
                return gast.Constant(-node.operand.value, None)
            inner = node.operand
            if self.keep_operands:
                return node
            if isinstance(inner, gast.UnaryOp) and isinstance(inner.op, gast.USub):
                return inner.operand
        return node

    def visit_Compare(self, node):
        self.generic_visit(node)
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], (gast.Is, gast.IsNot))
            and isinstance(node.left, gast.Constant)
            and isinstance(node.comparators[0], gast.Constant)
            and None in (node.left.value, node.comparators[0].value)
        ):  # `None is None`, and a literal bound to an optional parameter: `1.5 is None`
            same = node.left.value is node.comparators[0].value
            return gast.Constant(same if isinstance(node.ops[0], gast.Is) else not same, None)
        if (  # `2 in ('nuc', 2, -2)`: a literal in a tuple of literals (a rule's case analysis)
            len(node.ops) == 1
            and isinstance(node.ops[0], (gast.In, gast.NotIn))
            and isinstance(node.left, gast.Constant)
            and isinstance(node.comparators[0], gast.Tuple)
            and all(isinstance(e, gast.Constant) for e in node.comparators[0].elts)
        ):
            found = node.left.value in [e.value for e in node.comparators[0].elts]
            return gast.Constant(found if isinstance(node.ops[0], gast.In) else not found, None)
        if len(node.ops) == 1 and type(node.ops[0]) in _COMPARE and _num(node.left) and _num(
                node.comparators[0]):  # `2 != 0`: the power rule's x2 - (x2 != 0) of a literal
            return gast.Constant(_COMPARE[type(node.ops[0])](
                node.left.value, node.comparators[0].value), None)
        return node

    def visit_BoolOp(self, node):
        """``True and False`` of folded tests (``prepend is None and append is None``)."""
        self.generic_visit(node)
        decides = isinstance(node.op, gast.Or)  # the literal that decides: True for `or`
        literals = [v.value for v in node.values
                    if isinstance(v, gast.Constant) and isinstance(v.value, bool)]
        pure = all(_simple(v) or isinstance(v, gast.Compare)
                   and all(_simple(o) for o in [v.left, *v.comparators]) for v in node.values)
        if decides in literals and pure:  # `p is None and False`: the comparison has no effect
            return gast.Constant(decides, None)
        if len(literals) == len(node.values):
            return gast.Constant(not decides, None)
        return node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if isinstance(node.test, gast.Constant) and isinstance(node.test.value, bool):
            return node.body if node.test.value else node.orelse
        return node


def _mutated(fn_node):
    """Names whose array is changed in place: ``y = helper(y, ...)`` (``setitem``,
    ``restore_item``, ``add_at``, ...) and augmented assignments ``y += v``, ``y[i] += v``."""
    out = set()
    for node in walk(fn_node):
        if isinstance(node, gast.AugAssign):
            target = node.target
            while isinstance(target, gast.Subscript):
                target = target.value
            if isinstance(target, gast.Name):
                out.add(target.id)
        elif (
            isinstance(node, gast.Assign)
            and isinstance(node.targets[0], gast.Name)
            and isinstance(node.value, gast.Call)
            and node.value.args
            and isinstance(node.value.args[0], gast.Name)
            and node.value.args[0].id == node.targets[0].id
        ):
            out.add(node.targets[0].id)
    # `u = t; u += g` changes t's array too
    copies = [
        (node.targets[0].id, node.value.id) for node in walk(fn_node)
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Name)
    ]
    changed = True
    while changed:
        changed = False
        for a, b in copies:
            if (a in out) != (b in out):
                out |= {a, b}
                changed = True
    return out
