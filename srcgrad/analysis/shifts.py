"""The max subtracted before a softmax or log-softmax carries no gradient.

Requires: an A-normal-form body and the :class:`~srcgrad.analysis.ops.Op` of each of its
assignments. Guarantees: ``unshifted`` names each ``m = np.max(a, axis=K, keepdims=True)`` whose
value the returned result does not depend on, because every use of it is a shift that the
operations after it cancel. Activity analysis treats such an ``m`` as a constant, so neither
mode differentiates the max (a mask of the largest elements, an axis sum, and a tie count in
reverse mode; the same in forward mode):

    m = np.max(a, axis=1, keepdims=True)     m carries no gradient: z(m + c) = z(m) - c, so
    z = a - m                                 e(m + c) = e(m) * exp(-c), s likewise (K is the
    e = np.exp(z)                             axis of the max, along which c is constant),
    s = np.sum(e, axis=1, keepdims=True)      logp(m + c) = logp(m), p(m + c) = p(m): no use of
    logp = z - np.log(s)                      m reaches anything else
    p = e / s

The result is then a function of ``a`` alone that is the same for every ``m``, so its
derivatives of every order, in both modes, are those with ``m`` held constant: the max's term is
zero in exact arithmetic (in floating point it is a rounding error, about 1e-17 of the result).

Each name made from ``m`` has a class, and every read of it must be one of these (``c`` has the
shape of ``m``: the size of axis ``K`` is 1, and every name below has the number of dimensions
of ``a``, so the same ``K`` means the same axis):

* ``z = a - m``, the only reads of ``m`` (``a`` a name assigned at most once, the one the max
  reduces): ``z`` is SHIFTED, ``z(m + c) = z - c``;
* ``np.exp(SHIFTED)`` is SCALED, ``v(m + c) = v * exp(-c)``;
* ``np.sum(SCALED, axis=K, keepdims=True)``, with the max's ``K`` (written alike), is SCALED;
* ``np.log(SCALED)`` is SHIFTED;
* ``SHIFTED - SHIFTED`` and ``SCALED / SCALED`` do not depend on ``m``: their reads are free.

Any other read (returned, read in a loop or an ``if``, another function or axis, a sum without
``keepdims``, ``m`` itself read again, a name assigned twice) keeps the max differentiated.
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from ..astutil import store_counts, walk

SHIFTED, SCALED = "shifted", "scaled"
MAXIMA = (np.max, np.amax)
NOT_LITERAL = object()


def unshifted(fn_node, ops):
    """The names of the maxima whose value the result does not depend on (module docstring).
    ``ops`` maps ``id`` of each assignment to its ``Op``."""
    counts = store_counts(fn_node)
    reads = _reads(fn_node.body)
    out = set()
    for stmt in fn_node.body:
        op = _op(stmt, ops)
        if op is None or op.rule.fn not in MAXIMA:
            continue
        m = stmt.targets[0].id
        a, axis = _reduced(op, "a"), _axis(op)
        if counts[m] != 1 or a is None or counts[a] > 1 or axis is NOT_LITERAL:
            continue
        shifted = _Shifts(ops, reads, counts, axis).shifts(m, a)
        if shifted is not None and shifted.follow(fn_node.body):
            out.add(m)
    return out


def _reads(body):
    """Name -> the top-level statements reading it; ``None`` stands for a read elsewhere (in a
    loop, an ``if``, a ``return``...)."""
    reads = {}
    for stmt in body:
        kept = stmt if isinstance(stmt, gast.Assign) else None
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                reads.setdefault(node.id, []).append(kept)
    return reads


def _op(stmt, ops):
    """The rule ``Op`` of a top-level ``name = call`` statement, or None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    op = ops.get(id(stmt))
    if op is None or op.kind != "rule" or op.rule is None:
        return None
    return op


def _defaults_but(op, given):
    """Whether every parameter of the rule but ``given`` is bound to its default."""
    for p, param in op.rule.signature.parameters.items():
        if p in given:
            continue
        value = op.args.get(p)
        if value is None:
            continue  # a *args / **kwargs parameter not given
        if not (isinstance(value, gast.Constant) and value.value is param.default):
            return False
    return True


def _reduced(op, param):
    """The name reduced by a max or sum along a literal axis with ``keepdims=True``."""
    keep = op.args.get("keepdims")
    if not (isinstance(keep, gast.Constant) and keep.value is True):
        return None
    value = op.args.get(param)
    if not isinstance(value, gast.Name) or not _defaults_but(op, {param, "axis", "keepdims"}):
        return None
    return value.id


def _axis(op):
    """The axis of a reduction as a Python value (an int, a tuple of ints, None), or
    ``NOT_LITERAL``."""
    node = op.args.get("axis")
    if isinstance(node, gast.Constant) and (node.value is None or type(node.value) is int):
        return node.value
    if isinstance(node, gast.Tuple) and all(
            isinstance(e, gast.Constant) and type(e.value) is int for e in node.elts):
        return tuple(e.value for e in node.elts)
    return NOT_LITERAL


def _operands(op, params):
    """The names bound to ``params``, or None where one is not a name or another parameter is
    not its default."""
    names = [op.args.get(p) for p in params]
    if not all(isinstance(n, gast.Name) for n in names) or not _defaults_but(op, set(params)):
        return None
    return [n.id for n in names]


class _Shifts:
    """The names made from one max, with their classes."""

    def __init__(self, ops, reads, counts, axis):
        self.ops = ops
        self.reads = reads
        self.counts = counts
        self.axis = axis
        self.classes = {}
        self.starts = []  # the statements z = a - m

    def shifts(self, m, a):
        """``self`` with the names ``z = a - m`` SHIFTED if those are the only reads of ``m``
        (and there is one at least), else None."""
        for stmt in self.reads.get(m) or [None]:
            op = _op(stmt, self.ops) if stmt is not None else None
            if op is None or op.rule.fn is not operator.sub:
                return None
            if _operands(op, ("x1", "x2")) != [a, m] or a == m:
                return None
            self.starts.append(stmt)
            self._set(stmt.targets[0].id, SHIFTED)
        return self if None not in self.classes.values() else None

    def _set(self, target, kind):
        """``target`` gets the class ``kind``; None if assigned more than once."""
        self.classes[target] = kind if self.counts[target] == 1 else None

    def follow(self, body):
        """Whether every read of every classed name is one the module docstring allows (the
        statements ``body`` in order: an operand is classed before it is read)."""
        for stmt in body:
            if any(stmt is s for s in self.starts) or not isinstance(stmt, gast.Assign):
                continue
            if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                   and n.id in self.classes for n in walk(stmt.value)):
                if not self._allowed(stmt):
                    return False
        # a read in a loop, an `if`, a return..., or a name assigned twice
        return not any(kind is None or None in self.reads.get(n, [])
                       for n, kind in self.classes.items())

    def _allowed(self, stmt):
        """Whether ``stmt``, which reads a classed name, is a step of the docstring's list
        (classing its target)."""
        op = _op(stmt, self.ops)
        if op is None:
            return False
        fn, target = op.rule.fn, stmt.targets[0].id
        if fn in (operator.sub, operator.truediv):
            names = _operands(op, ("x1", "x2"))
            wanted = SHIFTED if fn is operator.sub else SCALED
            return names is not None and all(self.classes.get(n) == wanted for n in names)
        if fn in (np.exp, np.log):
            names = _operands(op, ("x",))
            wanted, made = (SHIFTED, SCALED) if fn is np.exp else (SCALED, SHIFTED)
        elif fn is np.sum:
            names = [_reduced(op, "a")] if _axis(op) == self.axis else None
            wanted = made = SCALED
        else:
            return False
        if names is None or self.classes.get(names[0]) != wanted:
            return False
        self._set(target, made)
        return True
