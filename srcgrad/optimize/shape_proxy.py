"""Values read only for their shape are not kept: the shape is rebuilt from what they broadcast.

Requires: a generated function and the symbolic broadcast shapes of its straight-line variables
(``analysis/shapes.py``). Guarantees: where a variable's only reads are as the shape reference of
an adjoint helper (``unbroadcast(g, t)``, ``unreduce(g, t)``, ``mean_grad(g, t)``,
``getitem_grad(g, t, i)``), and its shape is the broadcast of arguments and single-assignment
variables, those reads use ``shape_like(a, b)`` -- a zero-strided view of that shape, costing no
memory -- so the variable, and whatever only fed it, becomes dead code for ``DeadCode``.

    l = np.logaddexp(0.0, z)                   # (removed by dead-code elimination)
    t = l - y * z                              # (removed)
    dt = mean_grad(1.0, t)            ->       dt = mean_grad(1.0, shape_like(y, z))

Where a value that the function reads anyway, bound once before, has the same broadcast shape
set, and is read for more than its shape at or after the last such read, ``unbroadcast`` reads
that value instead (it holds exactly that shape, and the shape of an array is what
``unbroadcast`` reads of its second argument): no shape view is made at each call. The
log-softmax's ``logp = z - np.log(s)``, never computed, has the shape of ``exp_z = np.exp(z)``:

    dlogp = unbroadcast(dy * Y, shape_like(b, h_W))   ->   dlogp = unbroadcast(dy * Y, exp_z)

A value whose shape is not such a broadcast (a matrix product, say) but which the sweep reads
only for its shape after its last other read gets its shape view taken once, where it is
computed (``keep_shapes``), so the value itself can be released early:

    a = X @ W                                  a = X @ W
    b = a + c                        ->        a_shape = shape_like(a)
    ...                                        b = a + c
    da = unbroadcast(db, a)                    ...
                                               da = unbroadcast(db, a_shape)
"""

from __future__ import annotations

from collections import Counter

import gast

from .. import runtime
from ..astutil import param_names, store_counts, walk
from ..emit import naming
from . import dce

# helper -> positions of arguments it reads only for their shape
SHAPE_ONLY = {
    runtime.unbroadcast: (1,),
    runtime.unreduce: (1,),
    runtime.mean_grad: (1,),
}


def run(fn_node, ctx):
    """The pass: values read only for their shape are replaced by shape views, in rounds with
    dead-code elimination (which frees values read only for their shape, which frees more dead
    code); then shape views of values read for their shape after their last other read.
    Reads ``ctx.shape_sets`` and ``ctx.assigned_in_control`` (set by the reverse transform)."""
    proxies = ShapeProxies(ctx)
    for _ in range(4):
        fn_node = proxies.run(fn_node)
        if not proxies.replaced:
            break
        fn_node = dce.run(fn_node, ctx)
    return proxies.keep_shapes(fn_node)


class ShapeProxies:
    def __init__(self, ctx):
        self.ctx = ctx
        self.shape_sets = ctx.shape_sets
        self.fixed = ctx.assigned_in_control  # assigned in control flow: more than one value
        self.helpers = {  # generated name -> positions read only for their shape
            ctx.global_name(fn, fn.__name__): positions for fn, positions in SHAPE_ONLY.items()
        }
        self.shape_like = ctx.global_name(runtime.shape_like, "shape_like")
        self.unbroadcast = ctx.global_name(runtime.unbroadcast, "unbroadcast")

    def _shape_reads(self, tree, with_shape_like=False):
        """``(call, position, name)`` for every variable ``tree`` passes to a helper that reads
        it only for its shape (``shape_like`` itself too, with ``with_shape_like``)."""
        for node in walk(tree):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
                every = with_shape_like and node.func.id == self.shape_like
                positions = self.helpers.get(node.func.id, ())
                for i, a in enumerate(node.args):
                    if (every or i in positions) and isinstance(a, gast.Name):
                        yield node, i, a

    def run(self, fn_node):
        self.replaced = 0  # shape references replaced by this run
        params = param_names(fn_node)
        counts = store_counts(fn_node)
        held = _Held(fn_node, self, params, counts)
        shape_reads = {}
        for call, i, a in self._shape_reads(fn_node):
            shape_reads.setdefault(a.id, []).append((call, i))
        reads = Counter(
            n.id for n in walk(fn_node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        )
        for var, uses in shape_reads.items():
            only_shape = reads[var] == len(uses)  # every read of var is a shape reference
            if not only_shape or var in params or counts[var] != 1 or var in self.fixed:
                continue
            members = self.shape_sets.get(var)
            if members is None or any(
                m not in params and (counts[m] != 1 or m in self.fixed) for m in members
            ):
                continue
            for call, i in uses:
                kept = held.value(members, call) if call.func.id == self.unbroadcast else None
                call.args[i] = self._proxy(members) if kept is None else _load(kept)
                self.replaced += 1
        return fn_node

    def keep_shapes(self, fn_node):
        """``v_shape = shape_like(v)`` after ``v``'s assignment, for a top-level ``v`` whose
        last reads are shape references; those references then read ``v_shape``."""
        params = param_names(fn_node)
        body = fn_node.body
        defined, shape_at, other_at, refs = self._reads_by_statement(body, store_counts(fn_node))
        inserts = {}
        for var in shape_at:
            if var in params or var in self.fixed or var not in defined:
                continue
            k = defined[var]
            if not self._worth_a_view(body[k].value, k, shape_at[var], other_at.get(var, k)):
                continue
            members = self.shape_sets.get(var)
            if members is not None and members <= params:
                # the shape of arguments, which live on anyway: no view to keep
                for call, i in refs[var]:
                    call.args[i] = self._proxy(members)
                continue
            proxy = self.ctx.namer.fresh(naming.SHAPE.format(var))
            for call, i in refs[var]:
                call.args[i] = gast.Name(proxy, gast.Load(), None, None)
            view = self._shape_like([var])
            inserts.setdefault(k, []).append(
                gast.Assign([gast.Name(proxy, gast.Store(), None, None)], view, None)
            )
        if inserts:
            fn_node.body = [s for k, stmt in enumerate(body) for s in [stmt, *inserts.get(k, ())]]
        return fn_node

    def _reads_by_statement(self, body, counts):
        """For the top-level statements ``body``: where each single-assignment variable is
        assigned, where it is last read as a shape reference and last read otherwise (statement
        indices), and its shape references ``(call, position)``."""
        defined, shape_at, other_at, refs = {}, {}, {}, {}
        for k, stmt in enumerate(body):
            if (
                isinstance(stmt, gast.Assign)
                and isinstance(stmt.targets[0], gast.Name)
                and counts[stmt.targets[0].id] == 1
            ):
                defined[stmt.targets[0].id] = k
            as_shape = set()
            for call, i, a in self._shape_reads(stmt, with_shape_like=True):
                as_shape.add(id(a))
                shape_at[a.id] = k
                refs.setdefault(a.id, []).append((call, i))
            for node in walk(stmt):
                if (
                    isinstance(node, gast.Name)
                    and isinstance(node.ctx, gast.Load)
                    and id(node) not in as_shape
                ):
                    other_at[node.id] = k
        return defined, shape_at, other_at, refs

    def _worth_a_view(self, value, defined_at, shape_read_at, other_read_at):
        """Whether a value computed as ``value`` at statement ``defined_at``, last read for its
        shape at ``shape_read_at`` and otherwise at ``other_read_at``, is better replaced by a
        shape view from where it is computed."""
        if not isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Call)):
            return False  # an element or a view of another value: releasing it frees nothing
        if isinstance(value, gast.Call) and self._runtime(value.func):
            return False  # srcgrad's own helpers (max_of, ...): numbers or views
        return shape_read_at > other_read_at + 1  # else alive until (nearly) then anyway

    def _runtime(self, func):
        if not isinstance(func, gast.Name) or func.id not in self.ctx.extras:
            return False
        helper = self.ctx.extras[func.id]
        return getattr(runtime, getattr(helper, "__name__", ""), None) is helper

    def _proxy(self, members):
        if not members:
            return gast.Constant(0.0, None)
        if len(members) == 1:
            return gast.Name(next(iter(members)), gast.Load(), None, None)
        return self._shape_like(sorted(members))

    def _shape_like(self, names):
        """``shape_like(a, b, ...)``."""
        helper = gast.Name(self.shape_like, gast.Load(), None, None)
        return gast.Call(helper, [gast.Name(n, gast.Load(), None, None) for n in names], [])


class _Held:
    """The values bound once at the top level of ``fn_node``, by the statement where each is
    bound and the last top-level statement reading it for more than its shape."""

    def __init__(self, fn_node, proxies, params, counts):
        self.sets = proxies.shape_sets
        self.at = {}  # id of every node -> the index of the top-level statement holding it
        self.defined, self.last_read = {}, {}
        for k, stmt in enumerate(fn_node.body):
            shape_only = {id(a) for _, _, a in proxies._shape_reads(stmt, with_shape_like=True)}
            for node in walk(stmt):
                self.at[id(node)] = k
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and id(
                        node) not in shape_only:
                    self.last_read[node.id] = k
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                name = stmt.targets[0].id
                if counts[name] == 1 and name not in proxies.fixed and name not in params:
                    self.defined[name] = k
        self.by_set = {}
        for name in self.defined:
            if self.sets.get(name):
                self.by_set.setdefault(self.sets[name], []).append(name)

    def value(self, members, call):
        """A value of the shape ``members`` denote, bound before the statement of ``call`` and
        read for more than its shape at or after it; None if there is none."""
        k = self.at.get(id(call))
        if k is None:
            return None
        for name in self.by_set.get(frozenset(members), ()):
            if self.defined[name] < k <= self.last_read.get(name, -1):
                return name
        return None


def _load(name):
    return gast.Name(name, gast.Load(), None, None)
