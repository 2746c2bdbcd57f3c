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
from ..analysis import casts
from ..astutil import clone
from ..emit import naming

# Functions that make a new array, and the position of their dtype parameter.
CREATORS = {
    np.zeros: 1, np.ones: 1, np.empty: 1, np.full: 2, np.zeros_like: 1, np.ones_like: 1,
    np.empty_like: 1, np.full_like: 2, np.array: 1, np.asarray: 1,
}


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
            n for n in gast.walk(fn_node)
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
        ]
        plain = {id(n.targets[0]) for n in assigns}
        for n in gast.walk(fn_node):  # loop targets and any other binding
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
