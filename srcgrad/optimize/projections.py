"""Per-step products of a loop's input with a fixed matrix, made once before the loop.

Requires: the finished generated function of a derivative specialized to its arguments' kinds
for Python (not numba), the kinds ``scalars.Kinds`` found (``top``: the kinds of the names at
the end of the function) and the parameters that are float64 arrays the function never rebinds
or writes (``scalars.unwritten``). Guarantees: in a loop at the top level of the function over
``range(n)`` (``n`` an int), a step's product ``p = a @ W`` of ``a = X[t]`` (``t`` the loop's
counter, ``X`` such a parameter of three or more dimensions, ``W`` one that is a matrix) reads
its row of the product of the whole ``X``, made once before the loop:

    for t in range(n):                  X_matmul_W = X @ W if n > 0 else None
        a = X[t]                        for t in range(n):
        p = a @ W               ->          a = X[t]
        h = np.tanh(p + h @ V)              p = X_matmul_W[t]
                                            h = np.tanh(p + h @ V)

NumPy's matmul of a stack of matrices and a matrix runs the product of each matrix of the stack
on its own, the same call as ``X[t] @ W`` (checked bit for bit on 9000 random slices, row- and
column-major, of 1 to 70 rows and columns), so each step's ``p`` has the same numbers; the loop
pays one NumPy call instead of one a step. ``X @ W`` raises where the first step's product
would (the same shapes), and is not made when the loop has no step. ``p`` is then a view of the
product: it is kept only where every read of it takes its numbers (an operand of arithmetic, an
item of the per-step saves, the shape ``unbroadcast`` reads), so nothing can tell it from the
array ``a @ W`` made.
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import store_counts, walk
from ..emit import naming


def run(fn_node, ctx, kinds, top, fixed):
    """Hoist what qualifies (module docstring)."""
    if any(isinstance(n, (gast.Try, gast.With)) for n in walk(fn_node)):
        return  # (an exception raised before the loop instead of in it: same error, but earlier)
    counts = store_counts(fn_node)
    reads = _reads(fn_node, kinds)
    body = []
    for s in fn_node.body:
        if isinstance(s, gast.For):
            body.extend(_hoisted(s, ctx, kinds, top, fixed, counts, reads))
        body.append(s)
    fn_node.body = body


def _reads(fn_node, kinds):
    """Name -> whether every read of it takes only its numbers or shape (module docstring)."""
    plain = {}
    allowed = set()
    for n in walk(fn_node):
        if isinstance(n, gast.BinOp):
            allowed.update(id(x) for x in (n.left, n.right) if not isinstance(n.op, gast.MatMult))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and (
                n.func.attr == "append" and len(n.args) == 1):
            item = n.args[0]
            allowed.update(id(e) for e in (item.elts if isinstance(item, gast.Tuple) else [item]))
        elif isinstance(n, gast.Call) and kinds.resolve(n.func) is runtime.unbroadcast and len(
                n.args) == 2:
            allowed.add(id(n.args[1]))
    for n in walk(fn_node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            plain[n.id] = plain.get(n.id, True) and id(n) in allowed
    return plain


def _hoisted(loop, ctx, kinds, top, fixed, counts, reads):
    """The statements made before ``loop``; its products rewritten to read their rows."""
    counter, trips = _range_loop(loop, kinds, top, counts)
    if counter is None:
        return []
    here = store_counts(loop)
    rows = {}  # a = X[t]: a -> X
    made = {}  # (X, W) -> the name of X @ W
    out = []
    for s in loop.body:
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            continue
        target, value = s.targets[0].id, s.value
        if here[target] != 1:
            continue
        if (isinstance(value, gast.Subscript) and _name(value.value) in fixed
                and fixed[value.value.id] >= 3 and _name(value.slice) == counter):
            rows[target] = value.value.id
        elif (isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult)
              and _name(value.left) in rows and fixed.get(_name(value.right)) == 2
              and reads.get(target, True)):
            stack, matrix = rows[value.left.id], value.right.id
            if (stack, matrix) not in made:
                made[stack, matrix] = ctx.namer.fresh(naming.PROJECTED.format(stack, matrix))
                out.append(_product(made[stack, matrix], stack, matrix, trips))
            s.value = gast.Subscript(_load(made[stack, matrix]), _load(counter), gast.Load())
    return out


def _range_loop(loop, kinds, top, counts):
    """``for t in range(n)``, ``n`` an int constant or a name bound once to an int, ``t``
    assigned nowhere else in the loop: (t, n's node); else (None, None)."""
    it = loop.iter
    if not (isinstance(loop.target, gast.Name) and isinstance(it, gast.Call)
            and kinds.resolve(it.func) is range and len(it.args) == 1 and not it.keywords
            and store_counts(loop)[loop.target.id] == 1 and not loop.orelse):
        return None, None
    n = it.args[0]
    if isinstance(n, gast.Constant) and type(n.value) is int:
        return loop.target.id, n
    if isinstance(n, gast.Name) and counts[n.id] == 1 and top.get(n.id) == "int":
        return loop.target.id, n
    return None, None


def _product(name, stack, matrix, trips):
    """``name = stack @ matrix if trips > 0 else None``."""
    made = gast.BinOp(_load(stack), gast.MatMult(), _load(matrix))
    some = gast.Compare(_copy(trips), [gast.Gt()], [gast.Constant(0, None)])
    return gast.Assign([gast.Name(name, gast.Store(), None, None)],
                       gast.IfExp(some, made, gast.Constant(None, None)))


def _copy(node):
    if isinstance(node, gast.Name):
        return _load(node.id)
    return gast.Constant(node.value, None)


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _name(node):
    return node.id if isinstance(node, gast.Name) else None

