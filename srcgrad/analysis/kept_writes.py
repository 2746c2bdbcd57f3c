"""Which ``x op= v`` provably keep the array x's shape and dtype, in a derivative specialized to
its arguments' kinds (analysis/argkinds.py): there NumPy's write into x computes what
``x = x op v`` does, and the run-time check of ``normalize/sharing.py`` (``inplace_target``,
``kept_dtype`` of runtime/writes.py) has nothing to catch.

Requires: the inlined A-normal-form body (operands are names and constants) and the kinds of
the parameters. Guarantees: ``kept_updates`` returns only updates whose target is surely an
``ndarray`` of one or more dimensions, whose operand's shape is surely one the target's shape
already broadcasts (so the result has the target's shape), and whose result surely has the
target's dtype (NumPy's own promotion, computed on one-element arrays of those dtypes).

A value's type is ``(shape, dtype)``: the shape is a set of parameters whose array shapes
broadcast together into it (analysis/shapes.py's sets; the empty set is a scalar), the dtype a
NumPy dtype, or ``"int"`` / ``"float"`` for a Python number (NEP 50's weak scalars). A name's type
is the one every binding gives it, found as a least fixed point over its bindings; an
``op=`` of a name that is surely an array does not change its type (checked, or proven here).

    def f(x):                      kinds {"x": ("array", 1, "<f8")}
        s = x * 1.0                s: ({x}, float64)
        for i in range(200):       i: ({}, "int")
            k = i % 3              k: ({}, "int")
            e = x[k]               e: ({}, float64), an element
            t = x * e              t: ({x}, float64)
            s += t                 kept: {x} is s's shape and float64 + float64 is float64
"""

from __future__ import annotations

import warnings

import gast
import numpy as np

from ..astutil import walk

# ops whose result has the broadcast shape of the operands (not @, whose shape is another)
BROADCASTING = {gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply,
                gast.Div: np.true_divide, gast.FloorDiv: np.floor_divide,
                gast.Mod: np.remainder, gast.Pow: np.power}
# NumPy functions of one operand whose result has its shape (and a dtype NumPy computes)
SHAPE_KEEPING = (np.sin, np.cos, np.tan, np.exp, np.log, np.tanh, np.sqrt, np.abs, np.square,
                 np.negative, np.sinh, np.cosh, np.arctan, np.log1p, np.expm1)
WEAK = {int: "int", float: "float"}  # Python numbers: their types are named by strings
# (a NumPy dtype compares equal to `float`, and float32 + 1.0 is float32 where + float64(1) is not)


def kept_updates(fn_node, kinds, resolve):
    """The ids of the ``AugAssign`` nodes on a name that provably keep its array's shape and
    dtype (``resolve(func)``: the object a called name denotes, for NumPy's functions)."""
    if not kinds or _unusual(fn_node):
        return set()
    types = _Types(fn_node, kinds, resolve)
    out = set()
    for n in walk(fn_node):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            x, v = types.of(n.target), types.of(n.value)
            if _array(x) and v is not None and v[0] <= x[0] and type(n.op) in BROADCASTING and (
                    _result(BROADCASTING[type(n.op)], x[1], v[1]) == x[1]):
                out.add(id(n))
    return out


def _unusual(fn_node):
    """Whether names may be bound in ways the flow-insensitive types below do not follow (a
    nested function, an import, a class), or an array's shape may change in place
    (``x.shape = s``, ``x.resize(s)``: the sets name the parameters' shapes)."""
    for n in walk(fn_node):
        if n is not fn_node and isinstance(n, (gast.FunctionDef, gast.Lambda, gast.ClassDef,
                                              gast.Import, gast.ImportFrom)):
            return True
        if isinstance(n, gast.Attribute) and (n.attr == "resize" or n.attr in (
                "shape", "strides") and not isinstance(n.ctx, gast.Load)):
            return True
    return False


def _array(t):
    """Whether a value of type ``t`` is surely an ndarray: a NumPy dtype and a non-empty set
    (of parameters of one dimension or more: see ``_Types._kind``)."""
    return t is not None and isinstance(t[1], np.dtype) and bool(t[0])


class _Types:
    """``of(value)``: the type of an A-normal-form value, the names' types found as the least
    fixed point over their bindings."""

    def __init__(self, fn_node, kinds, resolve):
        self.resolve = resolve
        self.ndims = {p: k[1] for p, k in kinds.items() if k is not None and k[0] == "array"}
        bindings, updated = _bindings(fn_node, kinds, resolve)
        self.types = {}
        while True:
            found = {}
            for name, values in bindings.items():
                got = {self._binding(value) for value in values}
                if len(got) == 1 and None not in got:
                    t = got.pop()
                    if name not in updated or _array(t):  # op= of a number or list rebinds it
                        found[name] = t
            if found == self.types:
                break
            self.types = found

    def _binding(self, value):
        if value is None:
            return None
        if isinstance(value, tuple):
            return (frozenset(), "int") if value == ("int",) else self._kind(*value[1:])
        return self.of(value)

    def _kind(self, param, kind):
        """The type of a parameter of ``kind``: an array of one dimension or more is the set of
        itself (its shape), of none the empty set; a number has its dtype or Python type."""
        if kind is None:
            return None
        if kind[0] in ("float", "int"):
            return frozenset(), kind[0]
        dims = frozenset((param,)) if kind[0] == "array" and kind[1] > 0 else frozenset()
        return dims, np.dtype(kind[-1])

    def of(self, value):
        """The type of an A-normal-form value, or None."""
        if isinstance(value, gast.Constant):
            return (frozenset(), WEAK[type(value.value)]) if type(value.value) in WEAK else None
        if isinstance(value, gast.Name):
            return self.types.get(value.id)
        if isinstance(value, gast.BinOp) and type(value.op) in BROADCASTING:
            return self._binop(value)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
            return self.of(value.operand)
        if isinstance(value, gast.Subscript):
            return self._element(value)
        if isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords:
            return self._call(value)
        return None

    def _binop(self, value):
        left, right = self.of(value.left), self.of(value.right)
        if left is None or right is None:
            return None
        if isinstance(left[1], str) and isinstance(right[1], str):
            dtype = _python(type(value.op), left[1], right[1])
        else:
            dtype = _result(BROADCASTING[type(value.op)], left[1], right[1])
        return None if dtype is None else (left[0] | right[0], dtype)

    def _call(self, value):
        """``np.sin(x)``, ... (SHAPE_KEEPING): x's shape, NumPy's dtype."""
        t, fn = self.of(value.args[0]), self.resolve(value.func)
        if t is None or not any(fn is f for f in SHAPE_KEEPING):
            return None
        dtype = _result(fn, t[1])
        return None if dtype is None else (t[0], dtype)

    def _element(self, value):
        """``x[i]`` / ``x[i, j]`` of an array with as many dimensions, integer indices: a NumPy
        scalar of x's dtype."""
        x = self.of(value.value)
        index = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        if not _array(x) or len({self.ndims.get(p) for p in x[0]}) != 1:
            return None
        ints = all(isinstance(i, (gast.Name, gast.Constant)) and self.of(i) == (frozenset(), "int")
                   and not (isinstance(i, gast.Constant) and type(i.value) is not int)
                   for i in index)
        return (frozenset(), x[1]) if ints and self.ndims[next(iter(x[0]))] == len(index) else None


def _bindings(fn_node, kinds, resolve):
    """(``{name: [its bindings]}``, the names updated by ``op=``): a binding is the value of
    ``name = value``, ``("kind", parameter, kind)`` for a parameter, ``("int",)`` for the
    target of ``for i in range(...)``, None for any other (an unpacking, a ``with``)."""
    args = fn_node.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    bindings = {p: [("kind", p, kinds.get(p))] for p in params}
    plain, updated = set(), set()
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name):
            plain.add(id(n.targets[0]))
            bindings.setdefault(n.targets[0].id, []).append(n.value)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            plain.add(id(n.target))
            updated.add(n.target.id)
        elif isinstance(n, gast.For) and isinstance(n.target, gast.Name) and isinstance(
                n.iter, gast.Call) and resolve(n.iter.func) is range:
            plain.add(id(n.target))
            bindings.setdefault(n.target.id, []).append(("int",))
    for n in walk(fn_node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param)) and (
                id(n) not in plain and n.id not in params):
            bindings.setdefault(n.id, []).append(None)
    for packed in (args.vararg, args.kwarg):
        if packed is not None:
            bindings[packed.id] = [None]
    return bindings, updated


def _python(op, left, right):
    """The type of Python's ``left op right`` of numbers of those types (None: unknown, as
    ``int ** int``, a float for a negative power, and ``float ** float``, complex for a
    negative base)."""
    if op is gast.Pow:
        return None
    return "float" if "float" in (left, right) or op is gast.Div else "int"


def _result(fn, *dtypes):
    """The dtype of NumPy's ``fn`` applied to values of ``dtypes`` (``"int"`` / ``"float"``:
    a Python number, weak under NEP 50), as NumPy computes it on one-element arrays (None where
    NumPy refuses)."""
    values = [{"int": 1, "float": 1.0}[d] if isinstance(d, str) else np.ones(1, dtype=d)
              for d in dtypes]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.asarray(fn(*values)).dtype
    except (TypeError, ValueError, OverflowError):
        return None
