"""Helpers of specialized code whose work the kinds make a test, or nothing.

Requires: a derivative specialized to its arguments' kinds for Python (not numba), after
``scalars``' rewrite and ``projections``, and the calls ``scalars.Kinds`` found. Guarantees:

    unbroadcast(g, x)   ->  g if g.shape == x.shape else unbroadcast(g, x)
        (``g``, ``x`` float64 arrays, names: the test the helper starts with for two arrays,
        without the call)
    matmul_vjp_right_steps_joined(dys, xs, b, joins)
                        ->  matmul_vjp_right_steps_known(dys, xs, joins)
        (every item of the two lists a float64 matrix, ``b`` one: the product of their joined
        rows, without checking each item's kind)
    d = unreduce(g, x, axis=a, keepdims=True)   ->   d = g
        (``x`` a float64 array, ``g`` a name, no array of other dimensions; the statement at
        the top level of the function; ``d`` and ``x`` bound once; every read of ``d`` an
        operand of ``+``, ``-``, ``*`` or ``/`` whose other operand is ``x``)
    np.max(x, axis=a, keepdims=True)   ->   x.max(axis=a, keepdims=True)
        (``x`` a float64 array; also ``sum``, ``min``, ``mean``, ``prod``, ``amax``, ``amin``:
        for an ndarray NumPy's function calls the very reduction the method does, the ufunc's
        ``reduce`` or ``_methods._mean``, after a layer of Python the method skips)

The last: the spread is a view of ``g`` (as an array of its floating dtype) broadcast to
``x``'s shape, and NumPy broadcasts ``g`` to that shape in ``g * x`` itself (``g`` is the
cotangent of a sum of ``x`` over ``axis`` with ``keepdims``, so it has that sum's shape, one
along the summed axes, or is a number), converting it to the same dtype, so each element is
the same operation on the same two numbers, and the result has ``x``'s shape either way.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..astutil import binding_counts, walk
from ..transform.nodes import call

ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div)
# NumPy's reductions -> the ndarray method doing the same reduction
METHODS = {np.sum: "sum", np.max: "max", np.amax: "max", np.min: "min", np.amin: "min",
           np.mean: "mean", np.prod: "prod"}


def run(fn_node, ctx, kinds):
    """The rewrites (module docstring)."""
    Tested(ctx, kinds).visit(fn_node)
    if kinds.spreads:
        _unspread(fn_node, kinds)


class Tested(gast.NodeTransformer):
    """The rewrites of the module docstring but the third."""

    def __init__(self, ctx, kinds):
        self.ctx = ctx
        self.kinds = kinds

    def visit_Call(self, node):
        self.generic_visit(node)
        if id(node) in self.kinds.methods:
            fn = self.kinds.resolve(node.func)
            method = METHODS.get(fn)
            if method is not None:
                return gast.Call(gast.Attribute(node.args[0], method, gast.Load()), [],
                                 node.keywords)
        if id(node) in self.kinds.layouts:
            dys, xs, _, joins = node.args
            return call(self.ctx, runtime.matmul_vjp_right_steps_known, dys, xs, joins)
        if id(node) not in self.kinds.same_shapes or self.kinds.resolve(
            node.func
        ) is not runtime.unbroadcast:
            return node
        g, x = node.args
        test = gast.Compare(_shape(g), [gast.Eq()], [_shape(x)])
        return gast.IfExp(test, gast.Name(g.id, gast.Load(), None, None), node)


def _shape(name):
    return gast.Attribute(gast.Name(name.id, gast.Load(), None, None), "shape", gast.Load())


def _unspread(fn_node, kinds):
    """The last rewrite of the module docstring."""
    counts = binding_counts(fn_node)
    operands = {}  # id of each name read as an operand of elementwise arithmetic -> the other
    for n in walk(fn_node):
        if isinstance(n, gast.BinOp) and isinstance(n.op, ELEMENTWISE):
            operands[id(n.left)], operands[id(n.right)] = n.right, n.left
    for s in fn_node.body:
        value = s.value if isinstance(s, gast.Assign) else None
        if id(value) not in kinds.spreads or len(s.targets) != 1 or not isinstance(
            s.targets[0], gast.Name
        ) or kinds.resolve(value.func) is not runtime.unreduce:
            continue
        d, (g, x) = s.targets[0].id, value.args
        if counts[d] == 1 and counts[x.id] == 1 and all(
            _with(operands.get(id(n)), x.id) for n in walk(fn_node)
            if isinstance(n, gast.Name) and n.id == d and not isinstance(n.ctx, gast.Store)
        ):
            s.value = gast.Name(g.id, gast.Load(), None, None)


def _with(other, x):
    """Whether an operand's other operand is the name ``x``."""
    return isinstance(other, gast.Name) and other.id == x
