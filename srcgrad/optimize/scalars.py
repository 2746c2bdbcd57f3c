"""Scalar code of a derivative specialized to its arguments' kinds stays on plain floats.

Requires: the finished generated function and ``ctx.kinds`` (parameter -> kind of its argument,
``analysis/argkinds.py``; the pass runs only for a specialized derivative). Guarantees: the kind
of every local is inferred from the parameters' (through arithmetic, element reads of arrays,
NumPy's elementwise functions, loops and the per-iteration saves), and where a value is surely a
float64 number (a Python float or a NumPy float64 scalar):

    unbroadcast(g, x)   ->  g        (what it returns for any number g)
    unreduce(g, x)      ->  g        (what it returns for numbers g and x)
    zeros_like(x)       ->  0.0      (what it returns for any number x)
    unit_seed(out)      ->  1.0      (what it returns for any number out)
    zeros_like(x)       ->  np.zeros(x.shape)   (x a float64 array: what it returns)
    as_like(g, x)       ->  g        (g, x float64 arrays: what it returns; also cast_like)
    np.sin(t)           ->  math.sin(t)    (also cos, sqrt: ~5x cheaper on a number)
    x[i] in a loop      ->  x_list[i]      (x_list = x.tolist() once, for a float64 vector
                                            parameter the function never rebinds or updates)
    matmul_vjp_left(g, a, b)   ->  g @ b.T   (a, b float64 matrices: what it computes)
    matmul_vjp_right(g, a, b)  ->  a.T @ g   (a a float64 matrix, b one or a vector: the same)
    1 - h               ->  1.0 - h  (h a float64 array: NumPy converts the int to that float;
                                      also +, *, /)
    unbroadcast(g, x)   ->  g if g.shape == x.shape else unbroadcast(g, x)
                                     (g, x float64 arrays: the test the helper starts with)
    matmul_vjp_right_steps_joined(dys, xs, b, joins)
                        ->  matmul_vjp_right_steps_known(dys, xs, joins)
                                     (the lists' items float64 matrices, b one: the
                                      product of their joined rows, without checking them)
    unbroadcast_steps_joined(gs, x, joins)
                        ->  unbroadcast_steps_known(gs, x, joins, stack)
                                     (the list's items float64 arrays of no fewer dimensions
                                      than the float64 array x: only their shapes checked)

The kinds of some helpers' results are known too (``shape_like``, ``unreduce`` of a number and
``unbroadcast`` of float64 arrays of one or more dimensions make float64 arrays of as many
dimensions as the array they shape their result on), so that a gradient's kind holds through a
loop. The first four give what the helper returns for a number, and the two products the very
expression the helper evaluates for those kinds (a float64 array's ``x[i]``, fewer indices than
dimensions, is an array of the rest; ``a @ b`` of float64 matrices, or of an N-d array and a
matrix, one of as many dimensions as ``a``), so the values are unchanged (numba compiles the
helpers of its own instead). The last
two make a Python float where NumPy makes a float64 scalar: the same IEEE double, as long as the
two libraries compute the same results (checked on this machine once per process; cos, sin and
sqrt agree bit for bit wherever NumPy calls the C library; sqrt is exact everywhere) and as long
as the Python float meets only operations that treat both alike. So they are used only when
every number in the function meets nothing but numbers, ints, float64 arrays (arithmetic,
element writes) and the helpers above: a float32 operand (which a Python float would leave in
float32, NumPy's float64 scalar not), an unknown value, ``%``, ``//`` or a power with a
non-integer exponent (complex for a negative Python float) keep NumPy. Where Python raises on a
float and NumPy returns inf or nan (``x / 0.0``, ``math.sqrt(-1.0)``), the dispatcher runs the
unspecialized derivative instead (kinds.py). A tuple of numbers bound to a name that is only
returned (a jvp's ``tup = (x, y); return (tup, copy_grad(dtup))``) counts as returned numbers.
For Python (not numba), a loop's per-step products ``X[t] @ W`` of fixed float64 arguments are
then made once before the loop, the same numbers (projections.py).
"""

from __future__ import annotations

import math

import gast
import numpy as np

from .. import runtime
from ..analysis import argkinds
from ..astutil import NodeTransformer, local_names, walk
from ..emit import naming
from . import projections, recompute, reuse, rows, spread, tested, typed_saves

F = "float"  # a float64 number: a Python float or a NumPy float64 scalar
I = "int"  # noqa: E741 (a Python int)

MATH = {np.sin: math.sin, np.cos: math.cos, np.sqrt: math.sqrt}
# NumPy functions giving a float64 number for a float64 number (same shape for an array)
ELEMENTWISE = {
    np.sin, np.cos, np.tan, np.exp, np.log, np.sqrt, np.tanh, np.sinh, np.cosh, np.arcsin,
    np.arccos, np.arctan, np.log1p, np.expm1, np.log10, np.log2, np.abs, np.absolute,
    np.negative, np.square, np.exp2,
}
ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
KEPT = (np.sum, np.max, np.min, np.amax, np.amin, np.mean, np.prod)  # reductions
WIDENED = (gast.Add, gast.Sub, gast.Mult, gast.Div)  # (an int power may take another path)
HELPERS = (runtime.unbroadcast, runtime.unreduce, runtime.zeros_like, runtime.unit_seed,
           runtime.check_tangent, runtime.shape_like)
_AGREES: dict = {}
_NUMBERS: dict = {}  # a number -> the read-only float64 array of no dimensions holding it


def run(fn_node, ctx):
    """The pass (only for a derivative specialized to its arguments' kinds)."""
    if not ctx.kinds:
        return fn_node
    kinds = Kinds(ctx, fn_node)
    top = kinds.block(fn_node.body, kinds.parameters(fn_node))
    floats = bool(kinds.math_calls or kinds.reads) and kinds.safe(fn_node)
    rewrite = Rewrite(ctx, kinds, floats and _math_agrees(), floats and not ctx.for_numba)
    rewrite.visit(fn_node)
    fn_node.body[:0] = rewrite.listed()
    if not ctx.for_numba:
        kept = unwritten(ctx, fn_node)
        projections.run(fn_node, ctx, kinds, top, kept)
        spread.run(fn_node, ctx, kinds, kept)
        tested.run(fn_node, ctx, kinds)
        rows.run(fn_node, ctx, kinds, kept)
        reuse.run(fn_node, ctx, kinds, top, ELEMENTWISE, rewrite.numbers)
    if ctx.for_numba:
        saves = recompute.run(fn_node, kinds, top)
        typed_saves.run(fn_node, ctx, saves, kinds.is_range)
    return fn_node


def _math_agrees():
    """Whether ``math``'s functions give NumPy's results on numbers here (once per process): a
    NumPy that computes them its own way differs on a good share of any sample."""
    if not _AGREES:
        xs = np.random.default_rng(0).uniform(-50.0, 50.0, 2000).tolist()
        _AGREES[0] = all(
            float(np_fn(x)) == py_fn(x) for np_fn, py_fn in MATH.items() for x in map(abs, xs)
        ) and all(float(np_fn(x)) == py_fn(x) for np_fn, py_fn in MATH.items()
                  if np_fn is not np.sqrt for x in xs)
    return _AGREES[0]


def _array(kind):
    return isinstance(kind, tuple)


def _number(kind):
    return kind in (F, I)


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


def _of_arrays(op, a, b):
    """The kind of ``a op b`` where one is a float64 array and the other a number or one (None:
    unknown)."""
    if not (_array(a) or _array(b)) or not all(_number(k) or _array(k) for k in (a, b)):
        return None
    if isinstance(op, ARITHMETIC):
        return ("array", max(k[1] for k in (a, b) if _array(k)))
    if isinstance(op, gast.MatMult) and _array(a) and a[1] >= 2 and b == ("array", 2):
        return a  # (float64 matrices stacked along a's leading axes)
    return None


def _join(a, b):
    return a if a == b else None


class Kinds:
    """The kind of each local (``F``, ``I``, ``("array", ndim)`` of float64, None: unknown),
    the calls the rewrite may change, and whether every number ``math`` would make is used
    safely (module docstring): the *hazards* are the numbers used where a Python float and a
    NumPy float64 scalar may differ; the *tainted* values are the numbers computed from a
    ``math`` result; ``math`` is safe when no hazard reads a tainted value."""

    def __init__(self, ctx, fn_node):
        self.ctx = ctx
        self.locals = local_names(fn_node) | set(ctx.local_names)
        self.found = {}  # id(call) -> the kind of the argument deciding its rewrite
        self.math_calls = set()  # id of np.sin/cos/sqrt calls on a number
        self.reads = {}  # id(x[i]) -> x, for elements of float64 vector parameters in loops
        self.listable = self._listable(fn_node)
        self.loops = 0
        self.saves = {}  # list name -> kinds of the tuples appended to it
        self.hazards = []  # expressions holding numbers, used where their type matters
        self.numbers = set()  # id of the assignments whose target is a number
        self.packed = {}  # name -> the tuple displays bound to it (safe if only returned)
        self.products = {}  # id(matmul_vjp_left / _right call) -> the helper it calls
        self.widened = set()  # id of int constants operands of float64 array arithmetic
        self.same_shapes = set()  # id of unbroadcast(g, x) calls of float64 arrays g and x
        self.spreads = set()  # id of unreduce(g, x, axis=..., keepdims=True) calls of such
        self.methods = set()  # id of np.sum(x, axis=..., keepdims=True) calls of such x (KEPT)
        self.layouts = {}  # id(matmul_vjp_right_steps_joined call) -> its layout, proven
        self.operands = {}  # id of an operand of arithmetic in a loop -> its kind (spread.py)

    def _listable(self, fn_node):
        """The float64 vector parameters the function never rebinds or updates in place."""
        return {p for p, ndim in unwritten(self.ctx, fn_node).items() if ndim == 1}

    def join(self, a, b):
        """The kind of a value that has kind ``a`` or ``b``; in code numba compiles, an int or a
        float64 number is a float64 number (numba unifies the variable's type to float64)."""
        if self.ctx.for_numba and {a, b} == {F, I}:
            return F
        return _join(a, b)

    def parameters(self, fn_node):
        env = {}
        for p, kind in self.ctx.kinds.items():
            if argkinds.is_float64_scalar(kind):
                env[p] = F
            elif kind == argkinds.INT:
                env[p] = I
            elif argkinds.is_float64_array(kind):
                env[p] = ("array", kind[1])
        return env

    def resolve(self, func):
        return self.ctx.namespace.resolve(func, self.locals)

    def packed_hazards(self, fn_node):
        """The numbers of a tuple display bound to a name (``tup = (a, b)``, a function that
        returns its state) are hazards unless the name is only returned (``return tup``,
        ``return (tup, as_like(None, tup))``, ``copy_grad(dtup)``, which give numbers as they
        are): a returned number may be a Python float."""
        returned = {id(self._unwrapped(e)) for r in walk(fn_node)
                    if isinstance(r, gast.Return) and r.value is not None
                    for e in (r.value.elts if isinstance(r.value, gast.Tuple) else [r.value])}
        for name, displays in self.packed.items():
            if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                   and id(n) not in returned for n in walk(fn_node)):
                self.hazards.extend(e for d in displays for e in d.elts)

    def _unwrapped(self, e):
        """``x`` of a returned ``as_like(None, x)`` or ``copy_grad(x)``, else ``e``."""
        call = self.resolve(e.func) if isinstance(e, gast.Call) else None
        if call is runtime.as_like and len(e.args) == 2 and isinstance(
            e.args[0], gast.Constant
        ) and e.args[0].value is None:
            return e.args[1]
        return e.args[0] if call is runtime.copy_grad and len(e.args) == 1 else e

    def safe(self, fn_node):
        """Whether no hazard reads a value computed from a ``math`` result."""
        self.packed_hazards(fn_node)
        tainted, saves = set(), set()
        changed = True
        while changed:
            changed = False
            for s in walk(fn_node):
                for name in self._tainting(s, tainted, saves):
                    if name not in tainted and name not in saves:
                        (saves if self._is_save(s, name) else tainted).add(name)
                        changed = True
        return not any(self._reads(h, tainted) for h in self.hazards)

    def _tainting(self, s, tainted, saves):
        """The names statement ``s`` taints, given the tainted values and save lists."""
        if isinstance(s, gast.Assign) and id(s) in self.numbers:
            return [s.targets[0].id] if self._reads(s.value, tainted) else []
        if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
            return [s.target.id] if self._reads(s.value, tainted) else []
        if isinstance(s, gast.Expr) and self._is_save(s, None):
            name = s.value.func.value.id
            return [name] if self._reads(s.value.args[0], tainted) else []
        if isinstance(s, gast.Assign) and self.is_pop(s.value) and s.value.func.value.id in saves:
            return [n.id for n in walk(s.targets[0]) if isinstance(n, gast.Name)]
        return []

    def _is_save(self, s, name):
        """Whether ``s`` is ``saves.append(...)`` (of the list ``name``, when given)."""
        call = s.value if isinstance(s, gast.Expr) else None
        return (
            isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
            and call.func.value.id in self.saves and name in (None, call.func.value.id)
            and len(call.args) == 1
        )

    def _reads(self, node, tainted):
        return any(
            (isinstance(n, gast.Name) and n.id in tainted)
            or id(n) in self.math_calls or id(n) in self.reads
            for n in walk(node)
        )

    # --- statements -------------------------------------------------------------------------
    def block(self, stmts, env):
        for s in stmts:
            self.statement(s, env)
        return env

    def pack(self, s, env):
        """``tup = (a, b)``: the kinds of ``a`` and ``b`` (their hazards: packed_hazards);
        False for any other statement."""
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Tuple)):
            return False
        for elt in s.value.elts:
            self.expr(elt, env)
        self.packed.setdefault(s.targets[0].id, []).append(s.value)
        env[s.targets[0].id] = None
        self.numbers.discard(id(s))
        return True

    def statement(self, s, env):
        if self.pack(s, env):
            return
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            self.assign(s.targets[0], s.value, env)
            self.numbers.discard(id(s))
            if isinstance(s.targets[0], gast.Name) and env.get(s.targets[0].id) == F:
                self.numbers.add(id(s))
        elif isinstance(s, gast.AugAssign):
            kind = self.binop(s.target, s.op, s.value, env)
            if isinstance(s.target, gast.Name):
                env[s.target.id] = kind
            else:
                self.store(s.target, kind, env, s.value)
        elif isinstance(s, gast.Expr):
            self.effect(s.value, env)
        elif isinstance(s, (gast.For, gast.While)):
            self.loop(s, env)
            if s.orelse:  # run after the loop unless a break left it: the kinds of both
                after = self.block(s.orelse, dict(env))
                for name in set(after) | set(env):
                    env[name] = self.join(env.get(name), after.get(name))
        elif isinstance(s, gast.If):
            self.use(s.test, env)
            first = self.block(s.body, dict(env))
            second = self.block(s.orelse, dict(env))
            for name in set(first) | set(second):
                env[name] = self.join(first.get(name), second.get(name))
        elif isinstance(s, gast.Return):
            if s.value is not None:
                self.returned(s.value, env)
        elif not isinstance(s, (gast.Delete, gast.Pass)):
            self.unknown(s, env)

    def unknown(self, s, env):
        """A statement this pass does not model: its names are unknown, its numbers unsafe."""
        for n in walk(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Store):
                    env[n.id] = None
                elif env.get(n.id) == F:
                    self.hazards.append(n)

    def loop(self, s, env):
        """The kinds at the loop's head: joined over iterations until they hold (the calls in
        the body are recorded as the last, stable pass saw them)."""
        for _ in range(4):
            inner = dict(env)
            if isinstance(s, gast.For):
                self.use(s.iter, inner)
                self.assign(s.target, None, inner, I if self.is_range(s.iter) else None)
            else:
                self.use(s.test, inner)
            self.loops += 1
            self.block(s.body, inner)
            self.loops -= 1
            joined = {n: self.join(env[n], k) if n in env else k for n, k in inner.items()}
            if joined == env:
                return
            env.update(joined)
        self.hazards.append(s)
        for n in walk(s):  # no stable kinds: nothing in it is rewritten
            self.found.pop(id(n), None)
            self.math_calls.discard(id(n))
            self.reads.pop(id(n), None)
            self.products.pop(id(n), None)
            self.layouts.pop(id(n), None)
            self.operands.pop(id(n), None)
            for found in (self.widened, self.same_shapes, self.spreads, self.methods):
                found.discard(id(n))
        self.unknown(s, env)

    def is_range(self, it):
        if isinstance(it, gast.Call) and self.resolve(it.func) is reversed and it.args:
            it = it.args[0]
        return isinstance(it, gast.Call) and self.resolve(it.func) is range

    def assign(self, target, value, env, kind=None):
        if value is not None:
            kind = self.expr(value, env)
        if isinstance(target, gast.Name):
            if isinstance(value, gast.List) and not value.elts:
                self.saves.setdefault(target.id, None)
            env[target.id] = kind
        elif isinstance(target, gast.Tuple) and self.is_pop(value):
            kinds = self.saves.get(value.func.value.id)
            for i, elt in enumerate(target.elts):
                k = kinds[i] if kinds is not None and len(kinds) == len(target.elts) else None
                self.assign(elt, None, env, k)
        else:
            self.store(target, kind, env, value)

    def store(self, target, kind, env, value):
        """A write into an array element or attribute: a number written into a float64 array
        is converted to float64 whatever its Python type."""
        if isinstance(target, gast.Subscript) and _array(self.expr(target.value, env)):
            self.use(target.slice, env)
            return
        if kind == F:
            self.hazards.append(value)
        for n in walk(target):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                env[n.id] = None

    def is_pop(self, value):
        return (
            isinstance(value, gast.Call) and not value.args
            and isinstance(value.func, gast.Attribute) and value.func.attr == "pop"
            and isinstance(value.func.value, gast.Name) and value.func.value.id in self.saves
        )

    def effect(self, value, env):
        """``saves.append((a, b))``: the kinds each position of the list holds."""
        if (
            isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
            and isinstance(value.func, gast.Attribute) and value.func.attr == "append"
            and isinstance(value.func.value, gast.Name) and value.func.value.id in self.saves
        ):
            item = value.args[0]
            elts = item.elts if isinstance(item, gast.Tuple) else [item]
            kinds = tuple(self.expr(e, env) for e in elts)
            held = self.saves[value.func.value.id]
            if held is not None:
                kinds = tuple(map(self.join, held, kinds)) if len(held) == len(kinds) else None
            self.saves[value.func.value.id] = kinds
            return
        self.use(value, env)

    def returned(self, value, env):
        """A returned number may be a Python float where NumPy made a float64 scalar."""
        for elt in value.elts if isinstance(value, gast.Tuple) else [value]:
            self.expr(elt, env)

    def use(self, expr, env):
        """``expr`` passed where its kind does not matter unless it holds a number (unsafe)."""
        if self.expr(expr, env) == F:
            self.hazards.append(expr)

    # --- expressions ------------------------------------------------------------------------
    def expr(self, e, env):
        if isinstance(e, gast.Constant):
            if type(e.value) is float:
                return F
            return I if type(e.value) is int else None
        if isinstance(e, gast.Name):
            return env.get(e.id)
        if isinstance(e, gast.BinOp):
            return self.binop(e.left, e.op, e.right, env)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd)):
            return self.expr(e.operand, env)
        if isinstance(e, gast.Call):
            return self.call(e, env)
        if isinstance(e, gast.Subscript):
            return self.element(e, env)
        if isinstance(e, gast.Compare):
            for operand in [e.left] + e.comparators:
                self.expr(operand, env)
            return None
        for child in gast.iter_child_nodes(e):  # anything else: whatever it reads is unsafe
            if isinstance(child, gast.expr):
                self.use(child, env)
            else:  # (a comprehension's generators)
                self.hazards.extend(
                    n for n in walk(child) if isinstance(n, gast.Name) and env.get(n.id) == F
                )
        return None

    def binop(self, left, op, right, env):
        a, b = self.expr(left, env), self.expr(right, env)
        if self.loops:
            self.operands[id(left)], self.operands[id(right)] = a, b
        if _number(a) and _number(b) and isinstance(op, ARITHMETIC):
            if isinstance(op, gast.Pow):
                return F if a == F and b == I else None  # Python's int ** int may be a float
            if a == b == I:
                return F if isinstance(op, gast.Div) else I
            return F
        kind = _of_arrays(op, a, b)
        for operand, other in ((left, b), (right, a)):
            self.widen(operand, op, kind if _array(other) else None)
        if kind is not None:
            return kind
        self.hazards.extend(e for e, k in ((left, a), (right, b)) if k == F)
        return None

    def widen(self, operand, op, kind):
        """A number constant added to, subtracted from, multiplying or dividing a float64 array
        (``1 - h * h``) is written as the float64 array of no dimensions it is converted to
        (NumPy converts a Python number at every call: `1.0 - a` of a 16x32 array 0.66-0.69 us
        of CPU time against 0.53 us for the array, in three runs; Rewrite, for Python)."""
        if isinstance(operand, gast.Constant) and type(operand.value) in (int, float):
            if kind is not None and isinstance(op, WIDENED) and abs(operand.value) < 2**53:
                self.widened.add(id(operand))
            else:
                self.widened.discard(id(operand))

    def element(self, e, env):
        """``x[i]`` / ``x[i, j]`` with int indices, of a float64 array of as many dimensions."""
        kind = self.expr(e.value, env)
        index = e.slice.elts if isinstance(e.slice, gast.Tuple) else [e.slice]
        kinds = [self.expr(i, env) for i in index]
        self.reads.pop(id(e), None)
        if _array(kind) and kind[1] == len(index) and all(k == I for k in kinds):
            if self.loops and isinstance(e.value, gast.Name) and e.value.id in self.listable:
                self.reads[id(e)] = e.value.id
            return F
        if _array(kind) and kind[1] > len(index) and all(k == I for k in kinds):
            return ("array", kind[1] - len(index))  # a view of the rest, a float64 ndarray
        self.hazards.extend(i for i, k in zip(index, kinds) if k == F)
        return None

    def call(self, e, env):
        fn = self.resolve(e.func)
        kinds = [self.expr(a, env) for a in e.args]
        for kw in e.keywords:
            self.use(kw.value, env)
        self.found.pop(id(e), None)  # a loop's earlier pass may have found more than holds
        self.math_calls.discard(id(e))
        self.products.pop(id(e), None)
        self.same_shapes.discard(id(e))
        self.layouts.pop(id(e), None)
        self.spreads.discard(id(e))
        self.methods.discard(id(e))
        if e.keywords:
            kind = self.spread_kept(e, fn, kinds)
        else:
            kind = self.known_call(e, fn, kinds)
        if kind is None and fn not in (runtime.cast_like, runtime.as_like, runtime.check_real):
            # (the gradient in the argument's dtype: any number converts; a number is real)
            self.hazards.extend(a for a, k in zip(e.args, kinds) if k == F)
        return kind

    def spread_kept(self, e, fn, kinds):
        """``np.sum(x, axis=a, keepdims=True)`` (also max, min, mean, prod) of a float64 array
        ``x`` of one or more dimensions: a float64 array of as many.
        ``unreduce(g, x, axis=a, keepdims=True)`` of such an ``x``: ``g`` spread over ``x``'s
        shape (a view; ``spreads``: tested.py may read ``g`` in its place), a float64 array for
        a float64 number or array ``g``."""
        keywords = {kw.arg: kw.value for kw in e.keywords}
        kept = keywords.get("keepdims")
        if set(keywords) != {"axis", "keepdims"} or not (
            isinstance(kept, gast.Constant) and kept.value is True
        ) or not kinds or not _array(kinds[-1]) or kinds[-1][1] < 1:
            return None
        if fn in KEPT and len(kinds) == 1:
            self.methods.add(id(e))  # (tested.py: the array's own method, the same reduction)
            return kinds[0]  # (a reduction keeping its axes: an array of as many)
        if fn is not runtime.unreduce or len(kinds) != 2:
            return None
        if _array(kinds[0]) and kinds[0] != kinds[1]:
            return None
        if all(isinstance(a, gast.Name) for a in e.args):
            self.spreads.add(id(e))
        return kinds[1] if kinds[0] == F or _array(kinds[0]) else None

    def known_call(self, e, fn, kinds):
        """The kind of a call's result, for the functions this pass knows."""
        first = kinds[0] if kinds else None
        if fn in ELEMENTWISE and len(kinds) == 1:
            return self.elementwise(e, fn, first)
        if fn in HELPERS:
            return self.helper(e, fn, kinds)
        if fn is runtime.as_like and kinds[1:] == [F] and _is_none(e.args[0]):
            return F  # the zero tangent of a number: 0.0 of its type
        if fn in (runtime.as_like, runtime.cast_like) and len(kinds) == 2 and all(
            map(_array, kinds)
        ):
            self.found[id(e)] = first  # g itself: float64 arrays both
            return first
        if fn is len:
            return I
        if fn in (runtime.matmul_vjp_left, runtime.matmul_vjp_right) and len(kinds) == 3:
            return self.product(e, fn, kinds)
        if fn is float and len(kinds) == 1 and _number(first):
            return F
        if fn is runtime.matmul_vjp_right_steps_joined:
            return self.steps_layout(e, kinds)
        if fn is runtime.unbroadcast_steps_joined:
            return self.sums_layout(e, kinds)
        return None


    def product(self, e, fn, kinds):
        """``matmul_vjp_left(g, a, b)`` of float64 matrices ``a`` and ``b`` is ``g @ b.T``,
        ``matmul_vjp_right(g, a, b)`` of a float64 matrix ``a`` and a float64 matrix or vector
        ``b`` is ``a.T @ g`` (runtime/products.py): the kind of ``g``, for a matrix ``g``."""
        g, a, b = kinds
        if a != ("array", 2) or b not in (("array", 1), ("array", 2)):
            return None
        if fn is runtime.matmul_vjp_left and b[1] != 2:
            return None
        self.products[id(e)] = fn
        return g if g == ("array", b[1] if fn is runtime.matmul_vjp_right else 2) else None

    def elementwise(self, e, fn, first):
        """The kind of NumPy's elementwise ``fn`` of a value of kind ``first``."""
        if first == F or _array(first):
            if first == F and fn in MATH:
                self.math_calls.add(id(e))
            return first
        if first == I and self.ctx.for_numba:
            return F  # (numba's np.sin of an int is a float64)
        return None

    def helper(self, e, fn, kinds):
        """The kind of what a runtime helper returns; the calls the rewrite removes."""
        first = kinds[0] if kinds else None
        alone = fn in (runtime.zeros_like, runtime.unit_seed)
        pair = fn is runtime.unreduce and kinds == [F, F] or (
            fn is runtime.unbroadcast and len(kinds) == 2
        )
        if first == F and (alone or pair):
            self.found[id(e)] = F  # (unreduce: the sum of a number spreads to the number)
            return F
        if fn is runtime.zeros_like and len(kinds) == 1 and _array(first):
            self.found[id(e)] = first  # np.zeros(x.shape): what it returns for a float64 array
            return first
        if fn is runtime.check_tangent:
            return first  # the tangent as given, once its shape is checked
        return self.spread(e, fn, kinds)

    def spread(self, e, fn, kinds):
        """The float64 arrays of one or more dimensions (never a 0-d result, which NumPy may
        give as a scalar) helpers make of float64 arrays (runtime/shapes.py):
        ``shape_like(a, ...)`` a broadcast view of the shape the arrays broadcast to;
        ``unreduce(number, x)`` the number spread over ``x``'s shape (a view);
        ``unbroadcast(g, x)`` ``g`` summed to ``x``'s shape, or ``g`` itself where the two
        shapes are the same (the test it starts with, written out: ``shape_tested``)."""
        if fn is runtime.shape_like and kinds and all(map(_array, kinds)):
            ndim = max(k[1] for k in kinds)
            return ("array", ndim) if ndim >= 1 else None
        if len(kinds) != 2 or not _array(kinds[1]) or kinds[1][1] < 1:
            return None
        if fn is runtime.unreduce and kinds[0] == F:
            return kinds[1]
        if fn is runtime.unbroadcast and _array(kinds[0]):
            if all(isinstance(a, gast.Name) for a in e.args):
                self.same_shapes.add(id(e))
            return kinds[1]
        return None

    def steps_layout(self, e, kinds):
        """``matmul_vjp_right_steps_joined(dys, xs, b, joins)`` of step lists holding float64
        matrices only and a float64 matrix ``b``: the layout ``runtime.steps_layout`` finds for
        them when there are any steps, their rows joined (recorded, its checks skipped:
        ``matmul_vjp_right_steps_known``)."""
        if len(e.args) != 4 or kinds[2] != ("array", 2) or not all(
            isinstance(a, gast.Name) for a in e.args[:2]
        ):
            return None
        if self.saves.get(e.args[0].id) == self.saves.get(e.args[1].id) == (("array", 2),):
            self.layouts[id(e)] = 2
        return None


    def sums_layout(self, e, kinds):
        """``unbroadcast_steps_joined(gs, x, joins)`` of a step list holding float64 arrays of
        one number of dimensions, no fewer than the float64 array ``x`` has: the layout
        ``runtime.sums_layout`` finds where their shapes are the same (recorded:
        ``unbroadcast_steps_known`` checks only the shapes)."""
        if len(e.args) != 3 or not _array(kinds[1]) or not isinstance(e.args[0], gast.Name):
            return None
        held = self.saves.get(e.args[0].id)
        if held is not None and len(held) == 1 and _array(held[0]) and held[0][1] >= kinds[1][1]:
            self.layouts[id(e)] = 1 if held[0][1] > kinds[1][1] else 2
        return None


class Rewrite(NodeTransformer):
    """The rewrites of the module docstring, at the calls ``Kinds`` found."""

    def __init__(self, ctx, kinds, math_ok, lists_ok):
        self.ctx = ctx
        self.kinds = kinds
        self.math_ok = math_ok
        self.lists_ok = lists_ok
        self.lists = {}  # vector parameter -> the name of its list
        self.numbers = set()  # the names of the float64 arrays of no dimensions made of numbers

    def visit_Constant(self, node):
        if id(node) in self.kinds.widened and not self.ctx.for_numba:
            value = float(node.value)
            array = _NUMBERS.get(value)
            if array is None:
                array = _NUMBERS[value] = np.array(value)
                array.flags.writeable = False
            name = self.ctx.global_name(array, naming.NUMBER.format(
                repr(value).replace(".", "_").replace("-", "minus_").replace("+", "")))
            self.numbers.add(name)
            return gast.Name(name, gast.Load(), None, None)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        vector = self.kinds.reads.get(id(node)) if self.lists_ok else None
        if vector is not None:
            if vector not in self.lists:
                self.lists[vector] = self.ctx.namer.fresh(naming.LISTED.format(vector))
            node.value = gast.Name(self.lists[vector], gast.Load(), None, None)
        return node

    def listed(self):
        """``x_list = x.tolist()`` for each vector whose elements are read from a list."""
        return [
            gast.Assign(
                [gast.Name(name, gast.Store(), None, None)],
                gast.Call(gast.Attribute(gast.Name(vector, gast.Load(), None, None), "tolist",
                                         gast.Load()), [], []),
            )
            for vector, name in self.lists.items()
        ]

    def visit_Call(self, node):
        self.generic_visit(node)
        if id(node) in self.kinds.found:
            fn = self.kinds.resolve(node.func)
            if fn in (runtime.unbroadcast, runtime.unreduce, runtime.as_like, runtime.cast_like):
                return node.args[0]
            if _array(self.kinds.found[id(node)]):  # zeros_like of a float64 array
                module = self.ctx.global_name(np, "np")
                return gast.Call(
                    gast.Attribute(gast.Name(module, gast.Load(), None, None), "zeros",
                                   gast.Load()),
                    [gast.Attribute(node.args[0], "shape", gast.Load())], [])
            return gast.Constant(0.0 if fn is runtime.zeros_like else 1.0, None)
        fn = self.kinds.products.get(id(node))
        if fn is not None and not self.ctx.for_numba and not node.keywords:
            g, a, b = node.args
            if fn is runtime.matmul_vjp_left:
                return gast.BinOp(g, gast.MatMult(), _transposed(b))
            return gast.BinOp(_transposed(a), gast.MatMult(), g)
        if self.math_ok and id(node) in self.kinds.math_calls:
            py_fn = MATH[self.kinds.resolve(node.func)]
            module = self.ctx.global_name(math, "math")
            node.func = gast.Attribute(gast.Name(module, gast.Load(), None, None), py_fn.__name__,
                                       gast.Load())
        return node


def _transposed(node):
    return gast.Attribute(node, "T", gast.Load())


def unwritten(ctx, fn_node):
    """The float64 array parameters the function never rebinds or updates in place -> their
    numbers of dimensions."""
    arrays = {p: k[1] for p, k in ctx.kinds.items() if argkinds.is_float64_array(k)}
    written = set()
    in_place = set(ctx.helpers.values())
    for n in walk(fn_node):
        written |= _written(n, in_place)
    return {p: ndim for p, ndim in arrays.items() if p not in written}


def _written(n, in_place):
    """The names node ``n`` rebinds or may update in place (the base of an element or attribute
    written, of a method called; the first argument of a helper updating it in place)."""
    if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
        return {n.id}
    if isinstance(n, (gast.Subscript, gast.Attribute)) and not isinstance(
        n.ctx, gast.Load
    ) or isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
        base = n.func.value if isinstance(n, gast.Call) else n.value
        return {m.id for m in walk(base) if isinstance(m, gast.Name)}
    if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in in_place:
        return {m.id for a in n.args[:1] for m in walk(a) if isinstance(m, gast.Name)}
    return set()
