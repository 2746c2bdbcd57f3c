"""Release each value as soon as nothing reads it again, so it does not live until the return.

Requires: a generated function ending in ``return``. Generated code names every intermediate,
so without this each primal value and each adjoint temporary stays alive until the function
returns. Guarantees: a local variable whose last read is in top-level statement ``k`` (a read
inside a nested ``if``, ``for`` or ``while`` counts at the enclosing top-level statement) and
which a top-level assignment at or before ``k`` surely bound, is deleted right after ``k``:
one ``del a, b`` per point, in the order the names were first assigned. Values do not change,
only lifetimes. Left alone, as deleting them frees nothing and only clutters the code:
parameters and names the final ``return`` reads; values surely of one element (numbers,
``len``, shapes, loop counters, full reductions and their adjoints, the output ``unit_seed``
checks and its seed); broadcast views (``unreduce``, ``mean_grad``); names that only ever hold
an argument or part of one, or whose last read copies them to another name; the save stacks of
loops (empty by then). No ``del`` comes just before the final ``return``.

    z = X @ w                                   z = X @ w
    dminus = mean_grad(1.0, shape_like(y, z))   dminus = mean_grad(1.0, shape_like(y, z))
    dy_times_z = -dminus                 ->     dy_times_z = -dminus
    dz = dy_times_z * y                         dz = dy_times_z * y
    dz = dz * z                                 del dy_times_z
    dw = matmul_vjp_right(dz, X, w)             dz = dz * z
    return dw                                   del z
                                                dw = matmul_vjp_right(dz, X, w)
                                                return dw
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import loaded, param_names, walk
from ..emit.unparse import is_comment

SCALAR_ATTRIBUTES = ("shape", "ndim", "size", "dtype")
SCALAR_BUILTINS = ("len", "int", "float", "bool", "range")


def run(fn_node, ctx):
    """The pass: ``del`` each value after its last read. Reads ``ctx.shape_sets`` and
    ``ctx.adjoint_names`` (left empty by forward mode) for values of one element."""
    return ReleaseDead(ctx).run(fn_node)


class ReleaseDead:
    """``ctx.shape_sets`` are the symbolic shapes of the primal's values (``analysis/shapes.py``)
    where known: an empty set is a scalar, such as the result of a full reduction, and so is
    its adjoint, named in ``ctx.adjoint_names``."""

    def __init__(self, ctx):
        self.ctx = ctx
        scalars = {v for v, s in ctx.shape_sets.items() if s == frozenset()}
        adjoints = ctx.adjoint_names
        self.one_element = scalars | {adjoints[v] for v in scalars if v in adjoints}

    def run(self, fn_node):
        *body, ret = fn_node.body
        keep = param_names(fn_node, packed=True) | loaded(ret)
        nodes = list(walk(fn_node))  # every later query scans this list, not the tree
        assignments = list(_assignments(nodes))
        keep |= _scalars(assignments) | _stacks(nodes, assignments) | self._outputs(nodes)
        keep |= self.one_element
        keep |= self._argument_parts(assignments, keep) | self._views(assignments)

        first_bound, last_read = {}, {}
        for k, stmt in enumerate(body):
            for var in _reads(stmt):
                last_read[var] = k
            for var in _binds(stmt):
                first_bound.setdefault(var, k)
        released = {}
        for var, k in last_read.items():
            if var not in keep and first_bound.get(var, k + 1) <= k and not _copied(body[k], var):
                released.setdefault(k, []).append(var)

        out = []
        for k, stmt in enumerate(body):
            out.append(stmt)
            names = released.get(k)
            if names and any(not is_comment(s) for s in body[k + 1:]):
                names.sort(key=lambda v: (first_bound[v], v))
                targets = [gast.Name(v, gast.Del(), None, None) for v in names]
                out.append(gast.Delete(targets))
        fn_node.body = out + [ret]
        return fn_node

    def _outputs(self, nodes):
        """An output ``unit_seed`` checked, and the seed: they have one element."""
        out = set()
        for n in nodes:
            if (
                isinstance(n, gast.Assign)
                and isinstance(n.targets[0], gast.Name)
                and isinstance(n.value, gast.Call)
                and isinstance(n.value.func, gast.Name)
                and self._resolve(n.value.func.id) is runtime.unit_seed
            ):
                out.add(n.targets[0].id)
                out |= {a.id for a in n.value.args[:1] if isinstance(a, gast.Name)}
        return out

    def _argument_parts(self, assignments, params):
        """Names that only ever hold an argument or a part or view of one (``W = params[0]``,
        ``dx = check_tangent(tangent, x)``): the caller keeps that memory alive anyway."""
        passes_on = (runtime.check_tangent, runtime.check_seed)
        parts = {var for var, _ in assignments}

        def part(node):
            while isinstance(node, (gast.Subscript, gast.Attribute)):
                node = node.value
            if (
                isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.args
                and any(self._resolve(node.func.id) is f for f in passes_on)
            ):
                return part(node.args[0])
            return isinstance(node, gast.Name) and (node.id in params or node.id in parts)

        while True:
            bad = {var for var, value in assignments if var in parts and not part(value)}
            if not bad:
                return parts
            parts -= bad

    def _views(self, assignments):
        """Names only ever assigned the broadcast views ``unreduce`` and ``mean_grad`` give."""
        views = (runtime.unreduce, runtime.mean_grad, runtime.shape_like)
        assigned = {}
        for var, value in assignments:
            view = (
                isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                and any(self._resolve(value.func.id) is f for f in views)
            )
            assigned[var] = assigned.get(var, True) and view
        return {var for var, view in assigned.items() if view}

    def _resolve(self, name):
        if name in self.ctx.extras:
            return self.ctx.extras[name]
        return self.ctx.namespace.lookup(name)


def _copied(stmt, var):
    """``x = var``: the value lives on under the other name."""
    return (
        isinstance(stmt, gast.Assign)
        and isinstance(stmt.value, gast.Name)
        and stmt.value.id == var
    )


def _reads(stmt):
    names = loaded(stmt)
    for n in walk(stmt):  # `dx += c` reads dx
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            names.add(n.target.id)
    return names


def _binds(stmt):
    """Names a top-level statement surely binds."""
    if isinstance(stmt, gast.Assign):
        return [n.id for t in stmt.targets for n in walk(t)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return [stmt.target.id]
    return []


def _assignments(nodes):
    """(target name, value) for every assignment among ``nodes``; a loop target's value is None
    for a loop over ``range``, its iterable otherwise."""
    for n in nodes:
        if isinstance(n, gast.Assign):
            for t in n.targets:
                for m in walk(t):
                    if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store):
                        yield m.id, n.value
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            yield n.target.id, gast.BinOp(n.target, n.op, n.value)
        elif isinstance(n, gast.For):
            value = None if _over_range(n.iter) else n.iter
            for m in walk(n.target):
                if isinstance(m, gast.Name):
                    yield m.id, value
        elif _stack_call(n, "append") and len(n.args) == 1:
            # what a stack holds: `x = x_saved.pop()` is a number if every push is one
            yield _items(n.func.value.id), n.args[0]


def _stack_call(node, method):
    """``name.method(...)``."""
    return (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and isinstance(node.func.value, gast.Name)
        and node.func.attr == method
    )


def _items(stack):
    return stack + ".items"  # not an identifier: never a variable's name


def _over_range(node):
    """``range(...)`` or ``reversed(range(...))``."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
        if node.func.id == "range":
            return True
        if node.func.id == "reversed" and len(node.args) == 1:
            return _over_range(node.args[0])
    return False


def _scalars(assignments):
    """Local names that surely hold a number, a shape or a dtype: every assignment is one."""
    candidates = {var for var, _ in assignments}
    while True:
        bad = {var for var, value in assignments
               if var in candidates and not _scalar(value, candidates)}
        if not bad:
            return candidates
        candidates -= bad


def _scalar(node, scalars):
    if node is None or isinstance(node, gast.Constant):
        return True
    if isinstance(node, gast.Name):
        return node.id in scalars
    if isinstance(node, gast.Attribute):
        return node.attr in SCALAR_ATTRIBUTES
    if isinstance(node, gast.Subscript):  # `x.shape[0]`, `x_shape[0]`
        return _scalar(node.value, scalars)
    if isinstance(node, gast.BinOp):
        return _scalar(node.left, scalars) and _scalar(node.right, scalars)
    if isinstance(node, gast.UnaryOp):
        return _scalar(node.operand, scalars)
    if isinstance(node, gast.Tuple):
        return all(_scalar(e, scalars) for e in node.elts)
    if _stack_call(node, "pop") and not node.args:
        return _items(node.func.value.id) in scalars
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
        return node.func.id in SCALAR_BUILTINS
    return False


def _stacks(nodes, assignments):
    """The save stacks of loops: assigned ``[]``, used only through ``.append`` and ``.pop``."""
    assigned = {}
    for var, value in assignments:
        empty = isinstance(value, gast.List) and not value.elts
        assigned[var] = assigned.get(var, True) and empty
    methods = set()
    for n in nodes:
        if (
            isinstance(n, gast.Attribute)
            and isinstance(n.value, gast.Name)
            and n.attr in ("append", "pop")
        ):
            methods.add(id(n.value))
    other_reads = {
        n.id for n in nodes
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in methods
    }
    return {var for var, empty in assigned.items() if empty and var not in other_reads}
