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
    unbroadcast_steps_joined(gs, x, joins)
                        ->  unbroadcast_steps_known(gs, x, joins, stack)
        (every item of the list a float64 array of more dimensions than the float64 array ``x``,
        ``stack`` False, or as many, True: the sum ``runtime.sums_layout`` picks, only the
        items' shapes checked)
    d = unreduce(g, x, axis=a, keepdims=True)   ->   d = g
        (``x`` a float64 array, ``g`` a name, no array of other dimensions; the statement at
        the top level of the function; ``d`` and ``x`` bound once; every read of ``d`` an
        operand of ``+``, ``-``, ``*`` or ``/`` whose other operand is ``x``)
    np.max(x, axis=a, keepdims=True)   ->   x.max(axis=a, keepdims=True)
        (``x`` a float64 array; also ``sum``, ``min``, ``mean``, ``prod``, ``amax``, ``amin``:
        for an ndarray NumPy's function calls the very reduction the method does, the ufunc's
        ``reduce`` or ``_methods._mean``, after a layer of Python the method skips)

and, once those tests are written, a loop's save read back only by them keeps its shape:

    loop_saved.append((a, plus))        ->   loop_saved.append((a, plus.shape))
    ...                                      ...
    a, plus = loop_saved.pop()          ->   a, plus_shape = loop_saved.pop()
    d = g if g.shape == plus.shape      ->   d = g if g.shape == plus_shape
        else unbroadcast(g, plus)                else unbroadcast(g, of_shape(plus_shape))

        (both loops at the top level of the function, the list ``[]`` before them and read
        nowhere else; the saved item a float64 array (Kinds.saves); in the loop that pops, the
        name bound by the pop only, read after it only as ``name.shape`` or the second argument
        of ``unbroadcast``, which reads of a float64 array only its shape and that it is an
        array: ``of_shape`` is a float64 view of that shape; the name read nowhere after that
        loop). The array is no longer kept alive until the reversed loop reaches its step.

The spread (the rewrite of ``unreduce``): the spread is a view of ``g`` (as an array of its
floating dtype) broadcast to ``x``'s shape, and NumPy broadcasts ``g`` to that shape in
``g * x`` itself (``g`` is the cotangent of a sum of ``x`` over ``axis`` with ``keepdims``, so
it has that sum's shape, one along the summed axes, or is a number), converting it to the same
dtype, so each element is the same operation on the same two numbers, and the result has
``x``'s shape either way.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..astutil import NodeTransformer, binding_counts, walk
from ..emit import naming
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
    if kinds.same_shapes:
        for s in fn_node.body:
            if isinstance(s, gast.Assign) and isinstance(s.value, gast.List) and not s.value.elts:
                _shapes_saved(fn_node, ctx, kinds, s.targets[0])


class Tested(NodeTransformer):
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
        if id(node) in self.kinds.layouts and self.kinds.resolve(
            node.func
        ) is runtime.unbroadcast_steps_joined:
            stack = gast.Constant(self.kinds.layouts[id(node)] == 2, None)
            return call(self.ctx, runtime.unbroadcast_steps_known, *node.args, stack)
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


def _shapes_saved(fn_node, ctx, kinds, stack):
    """The rewrite of the saves a reversed loop reads only for their shapes (module
    docstring), for the list ``stack`` (a name bound to ``[]`` at the top level)."""
    held = kinds.saves.get(stack.id) if isinstance(stack, gast.Name) else None
    found = push_pop(fn_node, stack.id) if held else None
    if found is None or not _names_saved(found, held):
        return
    push, pop, back = found
    pushed, popped = push.value.args[0], pop.targets[0]
    after = fn_node.body[fn_node.body.index(back) + 1:]
    later = {n.id for s in after for n in walk(s) if isinstance(n, gast.Name)}
    at = back.body.index(pop)
    for i, name in enumerate(popped.elts):
        if held[i] is None or held[i][0] != "array" or name.id in later:
            continue
        uses = _shape_uses(back, at, name.id, kinds)
        if uses is not None:
            _shape_saved(ctx, pushed, i, name, uses)


def _names_saved(found, held):
    """Whether the one push and the one pop ``found`` are of tuples of names, as many as the
    kinds ``held``, the popped names different."""
    push, pop, _ = found
    pushed, popped = push.value.args[0], pop.targets[0]
    if not (isinstance(pushed, gast.Tuple) and isinstance(popped, gast.Tuple)):
        return False
    names = pushed.elts + popped.elts
    return (len(pushed.elts) == len(popped.elts) == len(held)
            and all(isinstance(e, gast.Name) for e in names)
            and len({e.id for e in popped.elts}) == len(popped.elts))


def _shape_saved(ctx, pushed, i, name, uses):
    """Push item ``i``'s shape, pop it as ``name``_shape, and read that at ``uses``."""
    shape = ctx.namer.fresh(naming.SHAPE.format(name.id))
    pushed.elts[i] = gast.Attribute(pushed.elts[i], "shape", gast.Load())
    name.id = shape
    for parent, field, index, argument in uses:
        read = gast.Name(shape, gast.Load(), None, None)
        read = call(ctx, runtime.of_shape, read) if argument else read
        if index is None:
            setattr(parent, field, read)
        else:
            getattr(parent, field)[index] = read


def push_pop(fn_node, stack):
    """The one ``stack.append(...)`` (a statement of a loop at the top level) and the one
    ``... = stack.pop()`` (a statement of a later such loop) and that loop, where ``stack`` is
    read nowhere else; else None."""
    push = pop = back = ahead = None
    count = 0
    for s in fn_node.body:
        if not isinstance(s, gast.For):
            continue
        for t in s.body:
            if isinstance(t, gast.Expr) and _method(t.value, stack, "append", 1) and not push:
                push, ahead = t, s
            elif isinstance(t, gast.Assign) and len(t.targets) == 1 and _method(
                t.value, stack, "pop", 0
            ) and ahead not in (None, s) and pop is None:
                pop, back = t, s
    for n in walk(fn_node):
        if isinstance(n, gast.Name) and n.id == stack and not isinstance(n.ctx, gast.Store):
            count += 1
    return (push, pop, back) if pop is not None and count == 2 else None


def _method(value, stack, method, arity):
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and value.func.attr == method and isinstance(value.func.value, gast.Name)
            and value.func.value.id == stack and len(value.args) == arity
            and not value.keywords)


def _shape_uses(loop, at, name, kinds):
    """Where the body of ``loop`` reads ``name`` after its statement ``at``, if every read is
    ``name.shape`` or the second argument of ``unbroadcast`` and ``at`` is the only statement
    binding it (and none before it reads it): (parent, field, index, whether an argument) of
    each read; else None."""
    uses, reads = [], 0
    for k, s in enumerate(loop.body):
        for n in walk(s):
            if _is(n, name) and not (k == at and isinstance(n.ctx, gast.Store)):
                if k <= at or not isinstance(n.ctx, gast.Load):
                    return None
                reads += 1
            uses.extend(_reads_of_shape(n, name, kinds))
    return uses if len(uses) == reads else None


def _reads_of_shape(n, name, kinds):
    """The children of node ``n`` that read ``name`` for its shape: ``name.shape``, or the
    second argument of ``unbroadcast`` (``n`` the call)."""
    for field, value in gast.iter_fields(n):
        values = value if isinstance(value, list) else [value]
        for j, c in enumerate(values):
            index = j if isinstance(value, list) else None
            if isinstance(c, gast.Attribute) and c.attr == "shape" and _is(c.value, name):
                if isinstance(c.ctx, gast.Load):
                    yield n, field, index, False
            elif _is(c, name) and field == "args" and j == 1 and _unbroadcast(n, kinds):
                yield n, field, index, True


def _is(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _unbroadcast(node, kinds):
    return (isinstance(node, gast.Call) and len(node.args) == 2 and not node.keywords
            and kinds.resolve(node.func) is runtime.unbroadcast)
