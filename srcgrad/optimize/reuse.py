"""An array the function made and reads no more is the output of the elementwise operation
reading it last.

Requires: the finished generated function of a derivative specialized to its arguments' kinds
for Python (not numba), and ``top``, the kinds ``scalars.Kinds`` found for the names at the end
of the function. Guarantees: at the top level of the function or of a loop's body, where ``x``
is bound once in the function, by a statement before in that body, to the result of arithmetic
or of an elementwise NumPy function (a new array at each pass), is a float64 array of one or
more dimensions, and every read of ``x`` is the operand of the statement below or its shape
(``x.shape``, ``shape_like(x)``):

    t = np.tanh(x)      ->   t = np.tanh(x, out=x)
    t = x * 2.0         ->   t = np.multiply(x, 2.0, out=x)
    t = x + b           ->   t = written_into(np.add, x, b)   (b a float64 array)

(also ``-`` and ``/``; ``b`` a name or a number). NumPy does this itself for an operand that is
a temporary of an expression (``np.tanh(X @ W + b)``: ``X @ W`` becomes the sum), but not for
one a name holds, as generated code's one operation per statement does. The result is ``x``'s
array with the numbers the operation computes element by element, which it would have put in
a new array; nothing else holds ``x``'s array (it is new, and read nowhere else), so nothing can
tell. ``runtime.written_into`` writes into ``x`` only where ``b``'s shape is that of x's trailing
axes (the result then has x's shape), and makes a new array otherwise.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..astutil import binding_counts, walk
from ..transform.nodes import call

F, I = "float", "int"  # the kinds of numbers (scalars.py)
UFUNCS = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
          gast.Div: np.true_divide}
ARITHMETIC = tuple(UFUNCS) + (gast.MatMult,)


def run(fn_node, ctx, kinds, top, elementwise, numbers):
    """The rewrite (module docstring); ``elementwise``: NumPy's elementwise ufuncs of one
    operand (``scalars.ELEMENTWISE``); ``numbers``: the names of float64 arrays of no
    dimensions holding a number (scalars.py)."""
    if any(isinstance(n, (gast.FunctionDef, gast.Lambda)) for n in walk(fn_node) if n is not
           fn_node):
        return  # (a nested function's names are its own)
    names = (binding_counts(fn_node), numbers, _reads(fn_node, kinds))
    for block in [fn_node.body] + [n.body for n in walk(fn_node) if isinstance(
            n, (gast.For, gast.While))]:
        _block(block, ctx, kinds, top, elementwise, names)


def _reads(fn_node, kinds):
    """Name -> the reads of it that take more than its shape (``x.shape``, ``shape_like(x)``)."""
    shapes = set()
    for n in walk(fn_node):
        if isinstance(n, gast.Attribute) and n.attr == "shape" and isinstance(n.value, gast.Name):
            shapes.add(id(n.value))
        elif isinstance(n, gast.Call) and len(n.args) == 1 and not n.keywords and (
                kinds.resolve(n.func) is runtime.shape_like):
            shapes.add(id(n.args[0]))
    reads = {}
    for n in walk(fn_node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in shapes:
            reads.setdefault(n.id, []).append(n)
    return reads


def _block(block, ctx, kinds, top, elementwise, names):
    """The rewrite in the statements ``block`` (the function's or a loop's body)."""
    fresh = {}  # name -> bound once, in this block, to a new float64 array
    for i, s in enumerate(block):
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name)):
            continue
        target, value = s.targets[0].id, s.value
        kind = top.get(target)
        new = isinstance(kind, tuple) and kind[1] >= 1 and _new_array(value, kinds, elementwise)
        operand = _operand(value, kinds, elementwise)
        if operand in fresh and _read_only_by(names[2].get(operand, ()), value):
            s.value = _into(ctx, value, top, names)
        if new and names[0][target] == 1:
            fresh[target] = i


def _operand(value, kinds, elementwise):
    """The name ``x`` of ``np.f(x)`` (f in ``elementwise``) or ``x op y`` (+ - * /, ``y`` a name
    or a number), None for anything else."""
    if isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords and (
            kinds.resolve(value.func) in elementwise and isinstance(value.args[0], gast.Name)):
        return value.args[0].id
    if isinstance(value, gast.BinOp) and type(value.op) in UFUNCS and isinstance(
            value.left, gast.Name) and isinstance(value.right, (gast.Name, gast.Constant)):
        return value.left.id
    return None


def _new_array(value, kinds, elementwise):
    """Whether ``value`` makes a new array where its result is a float64 array: arithmetic, an
    elementwise function of one operand, or one of this pass's own forms."""
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, ARITHMETIC)
    if isinstance(value, gast.Call) and not value.keywords:
        fn = kinds.resolve(value.func)
        return fn in elementwise and len(value.args) == 1 or fn is runtime.written_into
    return False


def _read_only_by(reads, value):
    """Whether the reads of a name that take more than its shape are the operand of ``value``
    alone."""
    operand = value.args[0] if isinstance(value, gast.Call) else value.left
    return len(reads) == 1 and reads[0] is operand


def _into(ctx, value, top, names):
    """``value`` writing its result into its operand (module docstring); ``names``: how many
    times each name is bound, the names of numbers made arrays (and the reads of each name)."""
    bound, numbers, _ = names
    if isinstance(value, gast.Call):
        value.keywords = [gast.keyword("out", _load(value.args[0].id))]
        return value
    x, y = value.left, value.right
    if isinstance(y, gast.Constant):
        number = type(y.value) in (int, float)
        other = None
    else:  # (its kind where it is read: a name bound once)
        other = top.get(y.id) if bound[y.id] == 1 else None
        number = other in (F, I) or y.id in numbers and not bound[y.id]
    ufunc = gast.Attribute(_load(ctx.global_name(np, "np")), UFUNCS[type(value.op)].__name__,
                           gast.Load())
    if number:
        return gast.Call(ufunc, [x, y], [gast.keyword("out", _load(x.id))])
    if isinstance(other, tuple):
        return call(ctx, runtime.written_into, ufunc, x, y)
    return value


def _load(name):
    return gast.Name(name, gast.Load(), None, None)
