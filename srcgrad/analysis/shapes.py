"""Symbolic broadcast shapes: when is an ``unbroadcast`` provably a no-op?

Requires: an A-normal-form body and the :class:`Op` of every assignment. Guarantees: for each
elementwise statement, the symbolic shape of every operand and of the result. A symbolic shape is
the set of values whose shapes broadcast together into it (the empty set is a scalar). Two equal
sets denote the same shape, so an operand whose set equals the result's was not broadcast, and
its adjoint needs no ``unbroadcast`` -- nor does the sweep need to keep that operand around just
to know its shape.

    c = 0.01 * k          S(c) = {k}
    t = c * x             S(t) = {k, x}
    x = x - t             S(x - t) = {x, k}: t's contribution needs no unbroadcast, x's does

A reassigned variable's old value keeps a name of its own in the sets that mention it, a version
symbol (``x@2``): the sets stay true and comparable (above, ``x - t`` is ``{x@1, k}`` once x is
reassigned, still the set of ``t``). Compound statements keep what holds on every path.

An operand that is broadcast still needs its shape in the adjoint sweep, and any value of the
same shape serves: the *shape reference* of an operand is its set's single member, or another
value still holding that set (``t = c * x`` above: ``{k, x}``), so the sweep reads values it keeps
anyway instead of keeping more (``x ** 2`` needs no saving in a loop when ``x`` is saved).

A reduction that keeps its axes (``keepdims=True``), or removes leading ones (``axis=0``), has
a shape that broadcasts into its operand's: where a set holds the operand's whole set beside
it, the reduction's value adds nothing to the shape and is left out of the set. So a softmax's
``z = l - np.max(l, axis=1, keepdims=True)`` has the set of ``l``, and its adjoint passes
``dz`` to ``l`` as it is (a fact about a value computed outside loops and branches, kept
under the value's version symbol when its variable is assigned again):

    m = np.max(l, axis=1, keepdims=True)      S(m) = {m}, m broadcasts into {l}
    z = l - m                                 S(z) = {l}
"""

from __future__ import annotations

import itertools
import operator

import gast
import numpy as np

from ..astutil import stored
from . import argkinds

SCALAR = frozenset()
# Reductions that return a scalar when called without axis and keepdims.
FULL_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.var, np.std}
SHAPE_KEEPING = {operator.neg, operator.pos}


class BroadcastShapes:
    def __init__(self, ops, kinds=None, integers=frozenset()):
        self.ops = ops
        # a derivative specialized to its arguments' kinds (analysis/argkinds.py): parameters
        # known to be numbers start as scalars, and the dimensions of array parameters make an
        # element read with integer indices (`x[i]`) a scalar
        # (of numbers computed as float64 or ints only: a float32 output known to be a number
        # would get the seed 1.0, a Python float, where unit_seed gives np.float32(1.0), and
        # round differently from the unspecialized derivative under NEP 50)
        self.kinds = {p: k for p, k in (kinds or {}).items() if argkinds.wide(k)}
        self.integers = integers
        self.ndims = {p: n for p, k in self.kinds.items() if (n := argkinds.ndim(k))}
        self.info = {}  # id(statement) -> ({param: operand set}, result set)
        self.references = {}  # id(statement) -> {param: name of a value of the operand's shape}
        self.shape_tuples = set()  # id of `x.shape` nodes
        self.shape_names = set()  # variables holding a shape tuple
        self.versions = itertools.count(1)
        self.loops = 0  # loops around the statement being analysed
        self.sequences = set()  # variables assigned a list, tuple or dict display (or made of one)
        self.branches = 0  # branches of `if` statements around the statement being analysed
        # a value (variable or version symbol) -> a set whose shape its own broadcasts into
        self.absorbed = {}
        self.absorbing = None  # the set the value being assigned broadcasts into

    def run(self, body):
        scalars = {p: SCALAR for p, k in self.kinds.items() if argkinds.ndim(k) == 0}
        self.final = self._block(body, scalars)  # the sets still valid at the end of the body
        return self.info

    def _sym(self, atom, avail):
        if isinstance(atom, gast.Constant):
            return SCALAR if isinstance(atom.value, (int, float, bool)) else None
        if isinstance(atom, gast.Name):
            if atom.id in self.sequences:
                return None  # `L * 2` of a list repeats it: no shape of an array
            return avail.get(atom.id, frozenset((atom.id,)))
        return None

    def _block(self, stmts, avail):
        for s in stmts:
            if isinstance(s, gast.Assign):
                self._assign(s, avail)
            elif isinstance(s, gast.If):
                self.branches += 1
                first = self._block(s.body, dict(avail))
                second = self._block(s.orelse, dict(avail))
                self.branches -= 1
                self._version(avail, stored(s))
                for v in list(avail):
                    if first.get(v) != avail[v] or second.get(v) != avail[v]:
                        del avail[v]
            elif isinstance(s, (gast.For, gast.While)):
                self._loop(s, avail)
        return avail

    def _loop(self, s, avail):
        """A loop: the variables it assigns lose their sets, but for those that are scalars
        before it and stay scalars through its body (a shape that every iteration keeps)."""
        names = stored(s)
        scalars = {n for n in names if avail.get(n) == SCALAR}
        if scalars:
            before = (dict(self.info), dict(self.references), set(self.shape_names))
            inner = self._body(s, avail, names - scalars)
            if all(inner.get(n) == SCALAR for n in scalars):
                self._version(avail, names - scalars)
                return
            self.info, self.references, self.shape_names = before
        self._version(avail, names)
        self._body(s, avail, ())

    def _body(self, s, avail, changing):
        """The sets at the end of one pass over the loop's body, entered with ``avail`` where
        ``changing`` names take other values."""
        inner = dict(avail)
        self._version(inner, changing)
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            inner[s.target.id] = SCALAR  # range() yields ints
        self.loops += 1
        self._block(s.body, inner)
        self.loops -= 1
        return inner

    def _assign(self, stmt, avail):
        target = stmt.targets[0].id
        op = self.ops.get(id(stmt))
        result = None
        self._note_sequence(target, stmt.value)
        if op is not None and op.kind == "copy":
            result = self._sym(op.args["x"], avail)
        elif op is not None and op.kind == "constant" and isinstance(stmt.value, gast.Constant):
            result = self._sym(stmt.value, avail)
        elif op is not None and op.kind == "constant":
            result = self._integer(stmt.value)
        elif op is not None and op.kind == "rule" and (self._shape_item(op) or self._element(op)):
            result = SCALAR
        elif op is not None and op.kind == "rule":
            result = self._rule(stmt, op, avail)
        symbol = self._version(avail, {target}).get(target)
        if self.absorbing is not None:  # (named after the target's old value is versioned)
            self.absorbed[target] = frozenset(symbol if m == target else m
                                              for m in self.absorbing)
            self.absorbing = None
        self.shape_names.discard(target)
        if id(stmt.value) in self.shape_tuples:
            self.shape_names.add(target)
        if result is not None:
            if target in result:  # `x = x * k`: the new x broadcasts the old one
                result = (result - {target}) | {symbol}
            avail[target] = result

    def _of_sequences(self, stmt, op):
        """Whether an operand of ``stmt`` may be a list or tuple: ``L * 2`` repeats it and
        ``L + M`` concatenates, so no operand has the result's shape (the unbroadcast kept
        refuses it when it runs)."""
        if not any(isinstance(a, gast.Name) and a.id in self.sequences
                   for a in op.args.values()):
            return False
        params = op.rule.signature.parameters
        self.info[id(stmt)] = ({p: frozenset((p,)) for p in params if p in op.args},
                               frozenset(("a sequence",)))
        return True

    def _note_sequence(self, target, value):
        """``target`` may be a list, tuple or dict: a display, or a copy or repetition of one."""
        parts = [value.left, value.right] if isinstance(value, gast.BinOp) else [value]
        if isinstance(value, (gast.List, gast.Tuple, gast.Dict)) or any(
                isinstance(n, gast.Name) and n.id in self.sequences for n in parts):
            self.sequences.add(target)

    def _version(self, avail, names):
        """``names`` are reassigned: sets that mention their current values now name those
        values by a version symbol (``x@3``), still equal to each other but no longer to the
        variable, and the variables' own entries go. Returns {name: its version symbol}."""
        symbols = {n: f"{n}@{next(self.versions)}" for n in names}
        for n in names:
            self.ndims.pop(n, None)
        if self.absorbed and symbols:
            self.absorbed = {symbols.get(v, v): frozenset(symbols.get(m, m) for m in into)
                             for v, into in self.absorbed.items()}
        for v in list(avail):
            if v in symbols:
                del avail[v]
            elif avail[v] & symbols.keys():
                avail[v] = frozenset(symbols.get(m, m) for m in avail[v])
        return symbols

    def _integer(self, value):
        """Sizes are scalars: ``x.ndim``, ``x.size``, ``len(x)``; ``x.shape`` is a tuple of them."""
        if isinstance(value, gast.Attribute) and value.attr in ("ndim", "size"):
            return SCALAR
        if isinstance(value, gast.Attribute) and value.attr == "shape":
            self.shape_tuples.add(id(value))
            return None
        if (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and value.func.id == "len"
        ):
            return SCALAR
        return None

    def _shape_item(self, op):
        """``x.shape[0]``: an element of a shape tuple is an integer."""
        x, index = op.args.get("x"), op.args.get("index")
        return (
            op.rule.fn is operator.getitem
            and isinstance(x, gast.Name)
            and x.id in self.shape_names
            and isinstance(index, gast.Constant)
            and isinstance(index.value, int)
        )

    def _element(self, op):
        """``x[i]`` or ``x[i, j]``: one element of an array parameter of as many dimensions,
        read with integer indices (known only in a derivative specialized to its arguments)."""
        x, index = op.args.get("x"), op.args.get("index")
        if op.rule.fn is not operator.getitem or not isinstance(x, gast.Name):
            return False
        indices = index.elts if isinstance(index, gast.Tuple) else [index]
        return self.ndims.get(x.id) == len(indices) and all(
            (isinstance(i, gast.Name) and i.id in self.integers)
            or (isinstance(i, gast.Constant) and type(i.value) is int)
            for i in indices
        )

    def _rule(self, stmt, op, avail):
        rule = op.rule
        fn = rule.fn
        if fn in FULL_REDUCTIONS:
            axis, keep = op.args.get("axis"), op.args.get("keepdims")
            if _is_const(axis, None) and (keep is None or _is_const(keep, False)):
                return SCALAR
            self._note_absorbed(stmt, op, avail, axis, keep)
            return None
        params = rule.signature.parameters
        if not (rule.broadcast or fn in SHAPE_KEEPING):
            return None
        if self._of_sequences(stmt, op):
            return None
        # the operands that broadcast: the required parameters and the differentiable optional
        # ones (np.clip's bounds); an optional one left at None takes no part
        optional = set(rule.differentiable_params())
        operands = {
            p: self._sym(op.args[p], avail)
            for p, spec in params.items()
            if p in op.args
            and (spec.default is spec.empty or (p in optional and not _is_const(op.args[p], None)))
        }
        if any(v is None for v in operands.values()):
            return None
        result = self._absorb(frozenset().union(*operands.values()))
        self.info[id(stmt)] = (operands, result)
        # not the statement's own target: the sweep reads the reference before it restores the
        # target's old value (`a = np.sin(a) + x` in a loop, `a` a float before: the new `a`,
        # an array, gave sin(a)'s adjoint its shape and the float's gradient came back an array)
        target = stmt.targets[0].id
        self.references[id(stmt)] = {
            p: ref for p, members in operands.items()
            if (ref := _reference(members, avail, latest=not self.loops)) not in (None, target)
        }
        return result


    def _note_absorbed(self, stmt, op, avail, axis, keep):
        """``r = np.sum(a, axis=..., keepdims=True)`` (or over leading axes, ``axis=0``,
        without keepdims), outside loops and branches: r's shape broadcasts into a's."""
        if self.loops or self.branches or op.args.get("a") is None:
            return
        into = self._sym(op.args["a"], avail)
        if not into:  # (unknown, or a scalar's)
            return
        leading = (keep is None or _is_const(keep, False)) and _leading_axes(axis)
        if _is_const(keep, True) or leading:
            self.absorbing = into

    def _absorb(self, members):
        """``members`` without the values whose shapes broadcast into the rest's, one at a time
        (each left out adds nothing to the shape of those that stay)."""
        if not self.absorbed:
            return members
        for m in sorted(members & self.absorbed.keys()):
            if self.absorbed[m] <= members - {m}:
                members = members - {m}
        return members


def _leading_axes(axis):
    """Whether ``axis`` is the constant 0 or a tuple of the constants 0, 1, ..., k."""
    if isinstance(axis, gast.Constant):
        return type(axis.value) is int and axis.value == 0
    if isinstance(axis, gast.Tuple) and axis.elts:
        values = [e.value if isinstance(e, gast.Constant) and type(e.value) is int else None
                  for e in axis.elts]
        return sorted(v for v in values if v is not None) == list(range(len(values)))
    return False


def _reference(members, avail, latest=True):
    """A variable whose current value has the shape ``members`` denote, if one is known.

    In straight-line code the latest such value, the one most likely still alive where the sweep
    needs the shape; in a loop the earliest, which the sweep more likely reads anyway (a value
    kept only for its shape would have to be saved every iteration)."""
    if len(members) <= 1:
        member = next(iter(members), None)  # a scalar is its own reference
        return None if member is None or _versioned(member) else member
    order = reversed(avail.items()) if latest else avail.items()
    return next((v for v, held in order if held == members), None)


def _is_const(node, value):
    return isinstance(node, gast.Constant) and node.value is value


def _versioned(symbol):
    """Whether a set member stands for an overwritten value rather than a variable."""
    return "@" in symbol
