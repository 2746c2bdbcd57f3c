"""The seed of a full mean or sum stays a number where the arrays it spreads over share a shape.

Requires: a generated reverse-mode function (``grad``, ``value_and_grad``, ``vjp``) specialized
to its arguments' kinds, after ``release``, and ``ctx.shape_sets`` (``analysis/shapes.py``).
Guarantees: a top-level statement ``d = mean_grad(c, ref)`` or ``d = unreduce(c, ref)`` (no axis:
the cotangent of a full mean or sum, the same number at every element of the shape of ``ref``,
which is the broadcast of the members ``m1, m2, ...``: ``ref`` itself or the arguments of
``shape_like(m1, m2)``) becomes ``uniform_mean_grad(c, ref, (m1, m2))`` (``uniform_unreduce``;
``ref`` None where it is ``shape_like`` of those names, which the helper then makes if needed):
the Python float the spread array holds when ``c`` is a Python float and the members are float64
arrays of one shape, the spread array otherwise (runtime/shapes.py). It is done only where what
``d`` meets gives the same values either way, in both cases:

    dt = mean_grad(1.0, shape_like(y, z))
      ->  dt = uniform_mean_grad(1.0, None, (y, z))      (the rest unchanged:)
    dl = unbroadcast(dt, z)
    dyz = -dt
    dz = unbroadcast(dyz * y, z)
    dz += dl * (0.5 - 0.5 * np.tanh(z))

Every read of ``d``, and of the names computed from it alone, is checked: a name that may hold
the number (``d``, ``dl``, ``dyz``: assigned once, at the top level) may only be

* negated, added to, subtracted from or multiplied by numbers (``+ - *``, which a Python float
  does as NumPy does: no exception where NumPy gives inf or nan) or by names that may hold the
  number, the result assigned to a name that then may hold it;
* the contribution of ``unbroadcast(g, m)`` to a member ``m``, assigned to a name that then may
  hold the number (``m`` has the shape all members share, so nothing was broadcast);
* an operand of NumPy arithmetic or ufuncs over a member (an array of the shared shape: the
  result is that array, the same whether the operand is the number or the spread array), made
  of numbers, members and such names alone (no float32 array meets the number);
* deleted.

A name bound once before the seed (``tanh_A_plus_b`` in ``np.sum(np.tanh(A + b) * A)``) may
stand where a member does: it joins the members the helper checks at each call. Any other read
(returned, passed to a matrix product, read in a loop, a name bound later beside it) leaves the
seed as it was. The members must be parameters or names bound once before the seed.

The members read as arrays (in arithmetic with the number, or as the target of its
``unbroadcast``) must have one shape; the others only give the shape (``b``, ``logits`` and the
``(n, 1)`` sums of ``-np.sum(Y * logp)`` after a bias and a log-softmax, where only ``Y`` meets
the number), and the helper then gets them as a second tuple: each must be a float64 array that
broadcasts to that shape, so that it is the shape the seed is spread over:

    dt = unreduce(c, shape_like(Y, b2, h_W2_shape, max_shape, s))
      ->  dt = uniform_unreduce(c, None, (Y,), (b2, h_W2_shape, max_shape, s))

Where the kinds of the arguments already say the check fails at every call (an argument not a
float64 array, two members read as arrays of different numbers of dimensions, or another member
of more dimensions than those), the seed is left as it was.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..analysis import argkinds
from ..astutil import param_names, store_counts, walk
from ..transform.nodes import name

MODES = ("grad", "value_and_grad", "vjp")
SEEDS = {runtime.mean_grad: runtime.uniform_mean_grad, runtime.unreduce: runtime.uniform_unreduce}
NUMBER_OPS = (gast.Add, gast.Sub, gast.Mult)  # what a number may meet, as a Python float
ARRAY_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
NUMBER, ARRAY, OTHER = "number", "array", "other"


def run(fn_node, ctx):
    """The pass (see the module docstring)."""
    if ctx.mode not in MODES or ctx.for_numba:
        return fn_node
    seeds = {ctx.named(fn): fn for fn in SEEDS if ctx.named(fn) is not None}
    unbroadcast = ctx.named(runtime.unbroadcast)
    shape_like = ctx.named(runtime.shape_like)
    if not seeds:
        return fn_node
    counts = store_counts(fn_node)
    params = param_names(fn_node)
    before = {p for p in params if counts[p] == 0}  # fixed names bound before the statement
    for k, stmt in enumerate(fn_node.body):
        seed = _seed(stmt, seeds, shape_like)
        if seed is not None:
            target, fn, members = seed
            if members <= before:
                check = Uses(ctx, members, before, unbroadcast, counts)
                if check.follow(target, fn_node.body[k + 1:]):
                    _rewrite(ctx, stmt.value, fn, check, shape_like)
        if isinstance(stmt, gast.Assign):
            before |= {t.id for t in stmt.targets if isinstance(t, gast.Name) and counts[t.id] == 1}
    return fn_node


def _rewrite(ctx, value, fn, check, shape_like):
    """``value``, the seed's call, becomes that of the uniform helper, unless the kinds of the
    arguments rule it out."""
    shaped = (check.shaped & check.members) | check.used
    others = check.members - shaped
    if not shaped or _unlike(shaped, others, ctx.kinds):
        return
    value.func = name(ctx.global_name(SEEDS[fn], SEEDS[fn].__name__))
    ref_made = _is_shape_like(value.args[1], shape_like) and not check.used
    if others:
        value.args = value.args + [gast.Tuple([name(m) for m in sorted(shaped)], gast.Load()),
                                   gast.Tuple([name(m) for m in sorted(others)], gast.Load())]
        if ref_made:
            value.args[1] = gast.Constant(None, None)
        return
    checked = [name(m) for m in sorted(shaped)]
    if ref_made:
        # shape_like of the members, made in the helper only where it is needed
        checked = value.args[1].args
        value.args[1] = gast.Constant(None, None)
    value.args = value.args + [gast.Tuple(checked, gast.Load())]


def _seed(stmt, seeds, shape_like):
    """``(target, helper, members)`` if ``stmt`` is ``d = mean_grad(c, ref)`` or
    ``d = unreduce(c, ref)`` with ``c`` a number or a name and ``ref`` a name or
    ``shape_like`` of names; None otherwise."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    value = stmt.value
    if not (isinstance(value.func, gast.Name) and value.func.id in seeds):
        return None
    if value.keywords or len(value.args) != 2:
        return None
    c, ref = value.args
    if not (isinstance(c, gast.Name) or _number(c)):
        return None
    if isinstance(ref, gast.Name):
        members = {ref.id}
    elif _is_shape_like(ref, shape_like):
        members = {a.id for a in ref.args}
    else:
        return None
    return stmt.targets[0].id, seeds[value.func.id], frozenset(members)


def _is_shape_like(ref, shape_like):
    """Whether ``ref`` is ``shape_like(a, b, ...)`` of names."""
    return (isinstance(ref, gast.Call) and isinstance(ref.func, gast.Name)
            and ref.func.id == shape_like and not ref.keywords and bool(ref.args)
            and all(isinstance(a, gast.Name) for a in ref.args))


def _unlike(shaped, others, kinds):
    """Whether the kinds of the arguments say the check at the call always fails: an argument
    not a float64 array, two of ``shaped`` of different dimensions, or one of ``others`` of
    more dimensions than those: the seed would only pay for the check."""
    known = [kinds[m] for m in shaped | others if m in kinds]
    if not all(argkinds.is_float64_array(k) for k in known):
        return True
    ndims = {argkinds.ndim(kinds[m]) for m in shaped if m in kinds}
    most = max((argkinds.ndim(kinds[m]) for m in others if m in kinds), default=0)
    return len(ndims) > 1 or any(most > n for n in ndims)


def _number(node):
    return (isinstance(node, gast.Constant) and type(node.value) in (int, float)
            and not isinstance(node.value, bool))


class Uses:
    """The reads of a seed and of what is computed from it alone (see the module docstring)."""

    def __init__(self, ctx, members, before, unbroadcast, counts):
        self.ctx = ctx
        self.members = members
        self.before = before  # names that may join them: checked at the call as they are
        self.used = set()  # those that did
        self.unbroadcast = unbroadcast
        self.counts = counts
        self.numbers = set()  # names that may hold the number
        self.shaped = set()  # members read as arrays of the shape the number is spread over

    def follow(self, target, rest):
        """Whether every read of ``target`` and of the names made from it in the statements
        ``rest`` is one the module docstring allows."""
        if self.counts[target] != 1:
            return False
        self.numbers = {target}
        for stmt in rest:
            if isinstance(stmt, gast.Delete):
                continue
            if not self._reads(stmt):
                continue
            if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr)):
                return False  # a loop, a condition, a return...
            if isinstance(stmt, gast.Assign) and self._makes_number(stmt):
                continue
            if isinstance(stmt, gast.AugAssign) and self._reads(stmt.target):
                return False
            if isinstance(stmt, gast.Assign) and any(self._reads(t) for t in stmt.targets):
                return False
            if not self._in_arrays(stmt.value):
                return False
        return True

    def _reads(self, node):
        return any(isinstance(n, gast.Name) and n.id in self.numbers for n in walk(node))

    def _makes_number(self, stmt):
        """``v = <number expression>`` or ``v = unbroadcast(<number expression>, member)``,
        ``v`` assigned once: ``v`` then may hold the number."""
        if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return False
        v = stmt.targets[0].id
        if self.counts[v] != 1 or v in self.members:
            return False
        value, into = stmt.value, None
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                and value.func.id == self.unbroadcast and not value.keywords
                and len(value.args) == 2 and isinstance(value.args[1], gast.Name)):
            value, into = value.args
        # (the target's kind is asked only of a number's unbroadcast: asking marks a name bound
        # before as one the helper checks, which an array's unbroadcast needs not)
        if self._kind(value) != NUMBER or (into is not None and self._kind(into) != ARRAY):
            return False
        self.numbers.add(v)
        return True

    def _in_arrays(self, tree):
        """Whether every read of a number name in ``tree`` is inside an elementwise expression
        over a member (``ARRAY``) whose leaves are all numbers, members and number names."""
        for node in _outermost(tree, self._elementwise):
            if isinstance(node, gast.Name) and node.id not in self.numbers:
                continue
            kind = self._kind(node)
            if kind == ARRAY:
                continue
            if kind != OTHER or self._reads(node):
                return False
        return True

    def _elementwise(self, node):
        return (isinstance(node, (gast.BinOp, gast.UnaryOp))
                or (isinstance(node, gast.Call) and self._ufunc(node))
                or isinstance(node, gast.Name) and node.id in self.numbers)

    def _kind(self, node):
        """NUMBER (numbers and number names under ``+ - *``), ARRAY (an elementwise expression
        of numbers, number names and at least one member), OTHER (anything else; a number name
        must not be in it)."""
        if isinstance(node, gast.Name):
            if node.id in self.numbers:
                return NUMBER
            if node.id in self.members:
                self.shaped.add(node.id)
                return ARRAY
            if node.id in self.before:
                self.used.add(node.id)
                return ARRAY
            return OTHER
        if _number(node):
            return NUMBER
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return self._kind(node.operand)
        if isinstance(node, gast.BinOp):
            kinds = {self._kind(node.left), self._kind(node.right)}
            if OTHER in kinds:
                return OTHER
            if ARRAY in kinds:
                return ARRAY if isinstance(node.op, ARRAY_OPS) else OTHER
            return NUMBER if isinstance(node.op, NUMBER_OPS) else OTHER
        if isinstance(node, gast.Call) and self._ufunc(node):
            kinds = {self._kind(a) for a in node.args}
            return ARRAY if kinds == {ARRAY} or kinds == {ARRAY, NUMBER} else OTHER
        return OTHER

    def _ufunc(self, node):
        """Whether ``node`` calls a NumPy ufunc (``np.tanh``) with positional arguments only."""
        fn = node.func
        if node.keywords or not node.args or not (
                isinstance(fn, gast.Attribute) and isinstance(fn.value, gast.Name)):
            return False
        if self.ctx.namespace.lookup(fn.value.id) is not np:
            return False
        return isinstance(getattr(np, fn.attr, None), np.ufunc)


def _outermost(tree, inside):
    """The outermost nodes of ``tree`` for which ``inside(node)`` holds, and every name outside
    them."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, gast.AST) and (inside(node) or isinstance(node, gast.Name)):
            yield node
            continue
        for child in gast.iter_child_nodes(node):
            stack.append(child)
