"""Every gradient a derived function returns is an array the caller owns.

Requires: a generated function (reverse or forward mode), after the optimizer. Guarantees: each
returned gradient (each tangent, in forward mode) that may be a read-only broadcast view
(``unreduce``, ``mean_grad``), may share memory with an argument of the call or with another
returned gradient, or may hold one of them in a container, is returned as ``copy_grad(g)``, a
writable copy: the caller may update a gradient in place (``g *= lr``) and touch nothing else.
Gradients that are surely arrays of their own are returned as they are.

What a variable may share is found over all its assignments, flow-insensitively: an arithmetic
result is a new array, a helper that returns its argument (``unbroadcast``, ``check_seed``, ...)
shares what that argument shares, and any other call may return a view of any of its arguments.

    dsum = unreduce(1.0, shape_like(x, y))        dsum = unreduce(1.0, shape_like(x, y))
    dx = unbroadcast(dsum, x)               ->    dx = unbroadcast(dsum, x)
    dy = unbroadcast(dsum, y)                     dy = unbroadcast(dsum, y)
    return (dx, dy)                               return (copy_grad(dx), copy_grad(dy))
"""

from __future__ import annotations

import types

import gast
import numpy as np

from .. import runtime
from ..astutil import ordered_walk, stored
from ..frontend.source import GENERATED_SOURCE

# Helpers whose result is a new array (or an immutable number).
FRESH_RESULT = (
    runtime.zeros_like, runtime.getitem_grad, runtime.copy_array, runtime.fresh_copy,
    runtime.copy_item, runtime.copy_grad, runtime.unit_seed, runtime.unit_basis,
    runtime.matmul_vjp_left, runtime.matmul_vjp_right, runtime.dot_vjp_left,
    runtime.dot_vjp_right,
)
# Helpers whose result is a read-only view holding no array of the function's.
VIEWS = (runtime.unreduce, runtime.mean_grad, runtime.shape_like)
# helper -> positions of the arguments its result may be, or hold, or be a view of
PASSES_ON = {
    runtime.unbroadcast: (0,),
    runtime.broadcast_like: (0,),
    runtime.check_seed: (0,),
    runtime.check_tangent: (0,),
    runtime.as_like: (0,),
    runtime.cast_like: (0,),
    runtime.elem: (0,),
    runtime.take_item: (0,),
    runtime.zero_item: (0,),
    runtime.zero_written: (0,),
    runtime.restore_item: (0,),
    runtime.list_pop: (0,),
    runtime.add_at: (0, 2),
    runtime.setitem: (0, 2),
    runtime.list_append: (0, 1),
    runtime.add: (0, 1),
    runtime.sum_grad: (0,),
    runtime.bind_optional: (0, 1, 2),
}
# NumPy functions may return a view of their first argument, these of any.
NUMPY_VIEWS_OF_ANY = (
    np.einsum, np.broadcast_arrays, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.meshgrid,
)
_VIEW = ("view",)
FORWARD = ("jvp", "tangent", "linearize")


def run(fn_node, ctx):
    """The pass: returned gradients are arrays of the caller's own."""
    return OwnedGradients(ctx).run(fn_node)


class OwnedGradients:
    """``ctx.mode`` is the transform's: "grad", "value_and_grad", "vjp", "jvp" or "tangent"."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.mode = ctx.mode
        self.local = set()
        self.params = set()
        self.roots = {}

    def run(self, fn_node):
        args = fn_node.args
        self.params = {
            a.id for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
            if a is not None
        }
        self.local = stored(fn_node.body) | self.params
        ret = fn_node.body[-1]
        value = ret.value
        if self.mode in ("value_and_grad", "jvp", "linearize"):
            holder, index = value, 1  # (value, gradients)
            grads = value.elts[1]
        elif self.ctx.aux is not None:
            holder, index = value, 0  # (gradients, aux)
            grads = value.elts[0]
        else:
            holder, index = ret, None
            grads = value
        self.roots = self._roots(fn_node.body)
        self.last = _last_assignments(fn_node.body[:-1])
        if isinstance(grads, gast.Tuple) and self.mode not in FORWARD:
            grads.elts = self._owned(grads.elts)
        else:
            (owned,) = self._owned([grads])
            if index is None:
                holder.value = owned
            else:
                holder.elts[index] = owned
        return fn_node

    def _owned(self, grads):
        claimed = set()
        out = []
        for g in grads:
            roots = self._returned(g)
            if _VIEW in roots or any(r[0] == "outer" for r in roots) or roots & claimed:
                helper = gast.Name(
                    self.ctx.global_name(runtime.copy_grad, "copy_grad"), gast.Load(), None, None
                )
                g = gast.Call(helper, [g], [])
            else:
                claimed |= roots
            out.append(g)
        return out

    def _returned(self, g, container=False):
        """What a returned expression may share, from the assignment that reaches the return
        where that is a top-level one (``dx = dx + c``: a new array, whatever dx was before).

        In reverse mode a gradient returned as a bare name is an array or a number (the others
        go through ``as_like``), so ``dx += c`` after that assignment adds into it; on the
        cotangents of a container it may keep c's arrays.
        """
        helper = self._resolve(g.func) if isinstance(g, gast.Call) and g.args else None
        if helper is runtime.as_like or helper is runtime.cast_like:
            return self._returned(g.args[0], container=helper is runtime.as_like)
        if isinstance(g, gast.Name) and g.id in self.last and g.id not in self.params:
            value, updates = self.last[g.id]
            if not container and self.mode not in FORWARD:
                updates = []
            return set().union(self._expr(value), *(self._expr(u) for u in updates))
        return self._expr(g)

    # --- what each variable may share --------------------------------------------------------
    def _roots(self, body):
        """variable -> the arrays it may be, hold or view: ("new", id) for an array made by one
        expression, ("view",), ("outer", name) for an argument or a global."""
        self.roots = {}
        bindings = list(self._bindings(body))
        changed = True
        while changed:
            changed = False
            for targets, value in bindings:
                roots = self._expr(value)
                for t in targets:
                    known = self.roots.setdefault(t, set())
                    if not roots <= known:
                        known |= roots
                        changed = True
        return self.roots

    def _bindings(self, body):
        """``(target names, expression whose roots they get)`` for every binding in ``body``."""
        for node in ordered_walk(gast.Module(body, [])):
            if isinstance(node, gast.Assign):
                targets = [n.id for t in node.targets for n in ordered_walk(t)
                           if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
                yield targets, node.value
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                # in place for arrays; `d += c` on container cotangents may keep c's arrays
                yield [node.target.id], node.value
            elif isinstance(node, gast.For):
                target = node.target
                yield [n.id for n in ordered_walk(target) if isinstance(n, gast.Name)], node.iter
            elif self._grows_local(node):
                # `stack.append(v)`: the list now holds v
                yield [node.func.value.id], gast.Tuple(node.args, gast.Load())

    def _grows_local(self, node):
        """Whether ``node`` is ``stack.append(v)`` (``extend``, ``insert``) on a local list."""
        return (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and isinstance(node.func.value, gast.Name)
            and node.func.value.id in self.local
            and node.func.attr in ("append", "extend", "insert")
        )

    def _expr(self, node):
        """What the value of ``node`` may be, hold or view (as in ``_roots``)."""
        return self._EXPRESSIONS.get(type(node), OwnedGradients._other)(self, node)

    def _constant(self, node):
        return set()

    def _name(self, node):
        found = set(self.roots.get(node.id, ()))
        if node.id in self.params or (
            node.id not in self.local and self._global_may_be_array(node)
        ):
            found.add(("outer", node.id))
        return found

    def _new(self, node):
        return {("new", id(node))}

    def _attribute(self, node):
        if self._is_global(node):
            return {("outer", node.attr)} if self._global_may_be_array(node) else set()
        return self._expr(node.value)

    def _part(self, node):
        return self._expr(node.value)

    def _elements(self, node):
        return set().union(*(self._expr(e) for e in node.elts))

    def _values(self, node):
        return set().union(*(self._expr(v) for v in node.values))

    def _either(self, node):
        return self._expr(node.body) | self._expr(node.orelse)

    def _other(self, node):
        """Anything else (a comprehension, ...): whatever names it reads, or a new value."""
        found = {("new", id(node))}
        for n in ordered_walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                found |= self._expr(n)
        return found

    def _is_global(self, node):
        """``node`` is a dotted name outside the function (``np``, ``np.pi``)."""
        while isinstance(node, gast.Attribute):
            node = node.value
        return isinstance(node, gast.Name) and node.id not in self.local

    def _resolve(self, node):
        if isinstance(node, gast.Name) and node.id in self.ctx.extras:
            return self.ctx.extras[node.id]
        return self.ctx.namespace.resolve(node, self.local)

    def _global_may_be_array(self, node):
        """Whether a global the function reads may be a mutable array or container."""
        value = self._resolve(node)
        immutable = (int, float, complex, str, bytes, type(None), types.ModuleType)
        return not isinstance(value, immutable) and not callable(value)

    def _call(self, node):
        fn = self._resolve(node.func) if self._is_global(node.func) else None
        if any(fn is f for f in FRESH_RESULT):
            return {("new", id(node))}
        if any(fn is f for f in VIEWS):
            return {_VIEW}
        positions = next((p for f, p in PASSES_ON.items() if fn is f), None)
        if positions is not None:
            return set().union(*(self._expr(node.args[i]) for i in positions
                                 if i < len(node.args)))
        found = {("new", id(node))}
        if getattr(fn, "__code__", None) in GENERATED_SOURCE:
            return found  # a derived function returns arrays of the caller's own
        if isinstance(node.func, gast.Attribute) and not self._is_global(node.func):
            # a method: `x.reshape(...)` may be a view of x, `stack.pop()` an item of it
            return found | self._expr(node.func.value)
        # any other function may return (a view of) any argument it may return, or a new array
        for a in _returnable_arguments(fn, node):
            found |= self._expr(a)
        return found

    _EXPRESSIONS = {
        gast.Constant: _constant,
        gast.Name: _name,
        gast.BinOp: _new,
        gast.UnaryOp: _new,
        gast.Compare: _new,
        gast.Call: _call,
        gast.Attribute: _attribute,
        gast.Subscript: _part,
        gast.Starred: _part,
        gast.Tuple: _elements,
        gast.List: _elements,
        gast.Dict: _values,
        gast.IfExp: _either,
        gast.BoolOp: _values,
    }


def _returnable_arguments(fn, call):
    """The arguments of ``call`` (a call of ``fn``) that its result may be or view: a NumPy
    function's first one (unless it is one that may return a view of any), else all of them."""
    module = getattr(fn, "__module__", None) or ""
    if module.split(".")[0] == "numpy" and not any(fn is f for f in NUMPY_VIEWS_OF_ANY):
        return call.args[:1]
    return call.args + [k.value for k in call.keywords]


def _last_assignments(body):
    """name -> (value, values added in place since) of the top-level ``name = value`` after
    which only top-level ``name += c`` or nothing binds ``name`` again."""
    out, closed = {}, set()
    for stmt in reversed(body):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            var = stmt.targets[0].id
            if var not in closed:
                updates = out.pop(var, (None, []))[1]
                out[var] = (stmt.value, updates)
                closed.add(var)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            var = stmt.target.id
            if var not in closed:
                out.setdefault(var, (None, []))[1].append(stmt.value)
        else:
            closed |= stored(stmt)
    return {var: found for var, found in out.items() if found[0] is not None}
