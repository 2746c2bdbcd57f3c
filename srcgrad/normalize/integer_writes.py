"""A value written into an integer or boolean array is cast first, so it carries no gradient.

Requires: an A-normal-form body where element writes read ``y = setitem(y, i, v)`` (after the
in-place calls pass). Guarantees: where every assignment of ``y`` makes a new array of a static
integer or boolean dtype (``np.zeros(n, dtype=int)``, ``np.full(n, 0, np.int32)``,
``x.astype(bool)``) or writes into it, each written value goes through ``astype`` to that dtype
first: the cast the write does anyway, made visible, so the gradient stops there as it does at any
integer cast (``analysis/casts.py``). Arrays whose integer dtype is only known when the function
runs are not seen here.

    k = np.zeros(3, dtype=int)          k = np.zeros(3, dtype=int)
    k = setitem(k, 0, x_0)      ->      x_0_cast = astype(x_0, int)
                                        k = setitem(k, 0, x_0_cast)
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..analysis import activity, casts
from ..astutil import clone, ordered_walk, walk
from ..emit import naming
from ..runtime import writes as run_writes

# Functions that make a new array, and the position of their dtype parameter.
CREATORS = {
    np.zeros: 1, np.ones: 1, np.empty: 1, np.full: 2, np.zeros_like: 1, np.ones_like: 1,
    np.empty_like: 1, np.full_like: 2, np.array: 1, np.asarray: 1,
}


def typed_buffers(fn_node, ctx):
    """name -> the dtype atom, for the names every binding of which makes an array of an
    explicit static dtype other than float64 and complex128 (``np.zeros(n, dtype=np.float32)``,
    ``x.astype(int)``), updates it in place (``y op= v``) or writes into it: there Python's
    ``y op= v`` keeps y's dtype (a ``same_kind`` cast, or NumPy's error), where ``y = y op v``
    would promote (float32 and a float64 array: float64)."""
    found, other = {}, set()
    assigned = set()
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            name = n.targets[0].id
            assigned.add(id(n.targets[0]))
            v = n.value
            if isinstance(v, gast.Call) and v.args and isinstance(v.args[0], gast.Name) and (
                    v.args[0].id == name and ctx.namespace.resolve(v.func, ctx.local_names) in (
                        runtime.setitem, run_writes.written)):
                continue
            atom = _explicit_dtype(v, ctx)
            if atom is None:
                other.add(name)
            else:
                found.setdefault(name, []).append(atom)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            assigned.add(id(n.target))
    other |= {n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, (gast.Store, gast.Param, gast.Del)) and id(n) not in assigned}
    return {name: atoms[0] for name, atoms in found.items() if name not in other
            and all(gast.dump(a) == gast.dump(atoms[0]) for a in atoms)}


def _explicit_dtype(value, ctx):
    """The dtype atom of ``np.zeros(..., dtype=a)`` (a creator) or ``y.astype(a)`` when it is
    static and neither float64 nor complex128, else None."""
    if not isinstance(value, gast.Call):
        return None
    if isinstance(value.func, gast.Attribute) and value.func.attr == "astype":
        atom = value.args[0] if value.args else None
    else:
        fn = ctx.namespace.resolve(value.func, ctx.local_names)
        position = next((p for c, p in CREATORS.items() if fn is c), None)
        if position is None:
            return None
        atom = value.args[position] if len(value.args) > position else next(
            (k.value for k in value.keywords if k.arg == "dtype"), None)
    if casts.static_dtype(atom, ctx.namespace, ctx.local_names) not in (
            casts.DISCRETE, casts.INEXACT):
        return None
    dtype = np.dtype(atom.value if isinstance(atom, gast.Constant) else ctx.namespace.resolve(
        atom, ctx.local_names))
    return None if dtype in (np.dtype(np.float64), np.dtype(np.complex128)) else atom


def run(fn_node, ctx):
    """The pass: writes into arrays of a static integer dtype cast their value first."""
    return IntegerWrites(ctx).run(fn_node)


class IntegerWrites:
    def __init__(self, ctx):
        self.ctx = ctx
        self.setitem = ctx.helpers["setitem"]

    def run(self, fn_node):
        self.dtypes = self._integer_arrays(fn_node)
        if self.dtypes:
            fn_node.body = self._block(fn_node.body)
        return fn_node

    def _integer_arrays(self, fn_node):
        """name -> the static dtype atom of every array it is assigned, when all are integer."""
        found, other = {}, set()
        assigns = [
            n for n in ordered_walk(fn_node)
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
        ]
        plain = {id(n.targets[0]) for n in assigns}
        for n in ordered_walk(fn_node):  # loop targets and any other binding
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in plain:
                other.add(n.id)
        for n in assigns:
            name = n.targets[0].id
            if self._is_write(n.value, name):
                continue
            dtype = self._created_dtype(n.value)
            if dtype is None:
                other.add(name)
            else:
                found.setdefault(name, []).append(dtype)
        return {
            name: atoms[0] for name, atoms in found.items()
            if name not in other and all(gast.dump(a) == gast.dump(atoms[0]) for a in atoms)
        }

    def _is_write(self, value, name):
        return (
            isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and value.func.id == self.setitem
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == name
        )

    def _created_dtype(self, value):
        """The dtype atom of a new array of a static integer or boolean dtype, else None."""
        if not isinstance(value, gast.Call):
            return None
        func = value.func
        if isinstance(func, gast.Attribute) and func.attr == "astype" and value.args:
            if isinstance(func.value, gast.Name) and func.value.id in self.ctx.local_names:
                return self._discrete(value.args[0])
        fn = self.ctx.namespace.resolve(func, self.ctx.local_names)
        position = next((p for c, p in CREATORS.items() if fn is c), None)
        if position is None:
            return None
        if len(value.args) > position:
            return self._discrete(value.args[position])
        dtype = next((k.value for k in value.keywords if k.arg == "dtype"), None)
        return self._discrete(dtype)

    def _discrete(self, atom):
        kind = casts.static_dtype(atom, self.ctx.namespace, self.ctx.local_names)
        return atom if kind == casts.DISCRETE else None

    def _block(self, stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner:
                    setattr(s, field, self._block(inner))
            if (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and s.targets[0].id in self.dtypes
                and self._is_write(s.value, s.targets[0].id)
                and isinstance(s.value.args[2], gast.Name)
            ):
                value = s.value.args[2]
                held = self.ctx.namer.fresh(naming.CAST.format(value.id))
                self.ctx.local_names.add(held)
                helper = gast.Name(self.ctx.global_name(runtime.astype, "astype"), gast.Load(),
                                   None, None)
                dtype = gast.Call(helper, [value, _copy(self.dtypes[s.targets[0].id])], [])
                cast = gast.Assign([gast.Name(held, gast.Store(), None, None)], dtype, None)
                gast.copy_location(cast, s)
                gast.copy_location(dtype, s.value)
                s.value.args[2] = gast.Name(held, gast.Load(), None, None)
                out.append(cast)
            out.append(s)
        return out


def _copy(atom):
    return clone(atom)


# --- arrays whose dtype is known only at run time -----------------------------------------------
# NumPy functions whose result is inexact whatever they are given (their loops all give floats).
_FLOAT_CHARS = set("efdgFDG")
# New arrays: the position of the dtype parameter, and of the argument whose dtype the result has
# without one (None: float64).
DTYPE_FROM = {
    np.zeros: (1, None), np.ones: (1, None), np.empty: (1, None), np.full: (2, 1),
    np.zeros_like: (1, 0), np.ones_like: (1, 0), np.empty_like: (1, 0), np.full_like: (2, 0),
    np.array: (1, 0), np.asarray: (1, 0), np.copy: (99, 0), runtime.fresh_copy: (99, 0),
    runtime.copy_array: (99, 0), runtime.zeros_like: (99, None), runtime.astype: (1, 0),
}


def run_dynamic(fn_node, ctx):
    """After activity analysis: an active value written into an array whose dtype is not known
    at transform time to be floating goes through ``written(v, write_dtype(y))``, whose rule
    decides when it runs (zero derivative into an integer or boolean array). Generated code is
    unchanged where every write target is known to be floating, or no written value is active.

        k = fresh_copy(k)                 k = fresh_copy(k)
        k = setitem(k, 0, x_pow_2)   ->   k_dtype = write_dtype(k)
                                          x_pow_2_written = written(x_pow_2, k_dtype)
                                          k = setitem(k, 0, x_pow_2_written)
    """
    return DynamicWrites(ctx).run(fn_node)


class DynamicWrites:
    def __init__(self, ctx):
        self.ctx = ctx
        self.setitem = ctx.helpers.get("setitem")

    def run(self, fn_node):
        self.bindings = {}
        for target, value, _ in activity.assignments(fn_node.body):
            self.bindings.setdefault(target, []).append(value)
        writes = [
            v for _, v, _ in activity.assignments(fn_node.body)
            if self._is_write(v) and v.args[2].id in self.ctx.active
        ]
        if not writes:
            return fn_node
        self.inexact = self._inexact_names(fn_node)
        kept = self.inexact | self._literal_containers()
        targets = {v.args[0].id for v in writes if v.args[0].id not in kept}
        if not targets:
            return fn_node
        fn_node.body = self._block(fn_node.body, targets)
        return activity.run(fn_node, self.ctx)

    def _is_write(self, value):
        return (
            self.setitem is not None
            and isinstance(value, gast.Call)
            and isinstance(value.func, gast.Name)
            and value.func.id == self.setitem
            and len(value.args) == 3
            and isinstance(value.args[0], gast.Name)
            and isinstance(value.args[2], gast.Name)
        )

    def _inexact_names(self, fn_node):
        """The names every binding of which is surely a floating (or complex) value: the greatest
        set closed under ``_inexact``. An argument is never known floating: a differentiated
        one may be given as integers or booleans (API.md), and NumPy truncates a write into (a copy
        of) it, so such a write gets the run-time check too."""
        plain = {id(n.targets[0]) for n in walk(fn_node) if isinstance(n, gast.Assign)}
        other = {
            n.id for n in walk(fn_node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in plain
        }
        params = {a.id for a in fn_node.args.args}
        names = set(self.bindings) - other - params
        changed = True
        while changed:
            changed = False
            for name in list(names):
                values = self.bindings.get(name, [])
                if not all(self._is_write(v) or self._inexact(v, names) for v in values):
                    names.discard(name)
                    changed = True
        return names

    def _literal_containers(self):
        """The names every binding of which is a dict or list literal or a write into one: a
        write into a dict or list keeps the value as it is (no dtype to cast to). Not floating
        themselves: an element read out of one (``L[0] * 1``) may be an integer array."""
        return {
            name for name, values in self.bindings.items()
            if any(isinstance(v, (gast.Dict, gast.List)) for v in values)
            and all(isinstance(v, (gast.Dict, gast.List)) or self._is_write(v) for v in values)
        }

    def _inexact(self, value, names):
        if isinstance(value, gast.Name):
            return value.id in names
        if isinstance(value, gast.Constant):
            return isinstance(value.value, (float, complex))
        if isinstance(value, gast.Subscript):
            return self._inexact(value.value, names)
        if isinstance(value, gast.UnaryOp):
            return self._inexact(value.operand, names)
        if isinstance(value, gast.BinOp):
            if isinstance(value.op, gast.Div):
                return True
            return self._inexact(value.left, names) or self._inexact(value.right, names)
        if isinstance(value, gast.Call):
            return self._inexact_call(value, names)
        return False

    def _dtype(self, value, position):
        if len(value.args) > position:
            return value.args[position]
        return next((k.value for k in value.keywords if k.arg == "dtype"), None)

    def _inexact_call(self, value, names):
        func = value.func
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
            if func.attr == "astype" and value.args:
                return self._static(value.args[0]) == casts.INEXACT
            if func.attr == "copy" and func.value.id in self.ctx.local_names:
                return func.value.id in names
        fn = self.ctx.namespace.resolve(func, self.ctx.local_names)
        if isinstance(fn, np.ufunc):
            outputs = [t.split("->")[1] for t in fn.types if "O" not in t]
            return bool(outputs) and all(set(o) <= _FLOAT_CHARS for o in outputs)
        position = next((p for c, p in DTYPE_FROM.items() if fn is c), None)
        if position is None:
            return False
        dtype, like = self._dtype(value, position[0]), position[1]
        if dtype is not None:
            return self._static(dtype) == casts.INEXACT
        if like is None:  # np.zeros(n): float64
            return True
        return len(value.args) > like and self._inexact(value.args[like], names)

    def _static(self, atom):
        return casts.static_dtype(atom, self.ctx.namespace, self.ctx.local_names)

    def _block(self, stmts, targets):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner:
                    setattr(s, field, self._block(inner, targets))
            if (
                isinstance(s, gast.Assign)
                and self._is_write(s.value)
                and s.value.args[0].id in targets
                and s.value.args[2].id in self.ctx.active
            ):
                out.extend(self._cast(s))
            out.append(s)
        return out

    def _cast(self, stmt):
        target, value = stmt.value.args[0].id, stmt.value.args[2].id
        dtype = self._assign(
            naming.WRITE_DTYPE.format(target), run_writes.write_dtype, "write_dtype",
            [gast.Name(target, gast.Load(), None, None)], stmt,
        )
        cast = self._assign(
            naming.WRITTEN.format(value), run_writes.written, "written",
            [gast.Name(value, gast.Load(), None, None),
             gast.Name(dtype.targets[0].id, gast.Load(), None, None)], stmt,
        )
        stmt.value.args[2] = gast.Name(cast.targets[0].id, gast.Load(), None, None)
        return [dtype, cast]

    def _assign(self, stem, fn, preferred, args, stmt):
        held = self.ctx.namer.fresh(stem)
        self.ctx.local_names.add(held)
        helper = gast.Name(self.ctx.global_name(fn, preferred), gast.Load(), None, None)
        call = gast.Call(helper, args, [])
        assign = gast.Assign([gast.Name(held, gast.Store(), None, None)], call, None)
        gast.copy_location(assign, stmt)
        gast.copy_location(call, stmt.value)
        return assign
