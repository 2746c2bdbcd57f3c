"""``x += v`` with Python's sharing semantics: every other holder of x's object sees the update.

Requires: the inlined A-normal-form body, in which ``x op= v`` on a name is still an
``AugAssign`` (ANF keeps it; inlined helpers' bodies too). Guarantees: no such ``AugAssign``
is left. Each becomes ``x_old = x; x = x_old op v``, a new value; and where another variable
``r`` may hold x's object at that point (it was bound from x, holds it in a list, dict or tuple,
was appended it, is a helper's parameter bound to it...) and is read afterwards, ``r`` is
updated as Python would update it in place:

    L = [a]                        L = [a]
    a += 1.0               ->      a_old = a
    return np.sum(L[0])            a = a_old + 1.0
                                   a_in_L = shared_positions(L, a_old, 'L', 'a')
                                   L = put_shared(L, a_in_L, a)
                                   return np.sum(L[0])

``shared_positions`` decides at run time, by identity, where ``L`` holds that object: nowhere
when it is a number (rebound, not updated), ``L[0]`` when it is the array ``a`` held; an array
that is a view of it is an error there (``runtime/sharing.py``). Which variables may hold it is
found here, conservatively: the variables connected to ``x`` through assignments that can pass
an object on (``r = x``, ``r = x[i]``, ``r = [x]``, ``r = x.T``, ``r = list_append(r, x)``...).
Values that need no check (``s = 0.0; s += v`` with nothing else holding s) keep the plain form.
``x = field_updated(x, "c", v)`` (``a.b.c = v`` with ``x = a.b``, normalize/containers.py) is
such an update too: the object ``x`` held changes in place in Python, so every holder of it
(``a`` itself, found by identity when it runs) gets the copy with the field replaced; so is
``x = element_written(x, w)`` (``a[i][j] = v``, ``a.b[i] = v`` with ``x = a[i]``, ``a.b`` and ``w``
a copy of it with the element written): every holder of x's old object gets ``w``.
"""

from __future__ import annotations

import copy
import inspect

import gast
import numpy as np

from .. import runtime
from ..analysis.dataflow import (
    assigned_values,
    greatest_kinds,
    item_values,
    least_names,
    number_kind,
)
from ..analysis.kept_writes import kept_updates
from ..astutil import clone, local_names, ordered_walk, param_names, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from ..frontend.source import is_derivative
from ..runtime import writes
from .aliasing import checkpointed_loop_fn, kept_state, returned_arguments, same_items
from .anf import VIEW_METHODS
from .integer_writes import typed_buffers
from .outside_managers import dotted as _dotted
from .outside_managers import refuse_managers_beside_outside_arrays

# NumPy functions whose result may be (or hold) their argument itself or a view of it.
NUMPY_VIEWS = {
    np.asarray, np.asanyarray, np.reshape, np.ravel, np.transpose, np.squeeze, np.expand_dims,
    np.swapaxes, np.moveaxis, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to,
    np.diagonal, np.real, np.imag, np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
    np.flip, np.fliplr, np.flipud, np.rot90, np.asarray_chkfinite, np.squeeze, np.rollaxis,
    np.trim_zeros, np.broadcast_arrays, np.lib.stride_tricks.as_strided,
    np.lib.stride_tricks.sliding_window_view,
} | {getattr(module, name) for module, name in (
    (np, "matrix_transpose"), (np, "permute_dims"), (np, "unstack"),
    (np.linalg, "matrix_transpose"),
) if hasattr(module, name)}  # (newer NumPy only)
# Of those, the ones whose result is a view or the argument itself for some arguments only (np.diag
# of a matrix, np.einsum of one operand, np.real_if_close of a real array, np.ascontiguousarray of
# a contiguous one): a read after a write into the argument is checked when it runs.
SOMETIMES_VIEWS = {np.ascontiguousarray, np.asfortranarray, np.require, np.real_if_close,
                   np.diag, np.einsum, np.nan_to_num, np.diff}  # (np.diff(x, n=0) is x)
NUMPY_VIEWS |= SOMETIMES_VIEWS
# srcgrad helpers whose result holds (or is) an argument's object.
HOLDING_HELPERS = (
    "list_append", "list_pop", "setitem", "list_insert", "pop_item", "list_extend",
    "list_reverse", "list_permute", "dict_update", "dict_values", "dict_items", "dict_get",
    "iteration_sequence", "as_list", "as_tuple", "max_of", "min_of", "put_shared",
    "ndenumerate_items", "set_field", "replace_field", "field_updated", "repeat_sequence",
    "concat_sequence", "own_fields", "shallow_copy",
)
# Of those, the ones that return the container they are given, changed (not an item of it).
CONTAINER_HELPERS = (
    "list_append", "list_pop", "setitem", "list_insert", "pop_item", "list_extend",
    "list_reverse", "list_permute", "dict_update", "put_shared", "repeat_sequence",
    "concat_sequence",
)
# Builtins whose result is a new number or never an argument's object.
FRESH_BUILTINS = {len, float, int, abs, range, isinstance, sum, round, bool, str, print}
INACTIVE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}


def run(fn_node, ctx):
    """The pass: see the module docstring."""
    refuse_managers_beside_outside_arrays(fn_node, ctx)
    updated = _markers(ctx)
    SharedUpdates(ctx).concatenate(fn_node)
    ctx.followed = True  # (no item of a container updated in place; else SharedUpdates.run's)
    if not any(_is_update(n, updated) for n in walk(fn_node)):
        return fn_node
    return SharedUpdates(ctx).run(fn_node)


def _joins(value, known):
    """Whether ``value`` is ``a + b`` of two of the names ``known``."""
    return isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and all(
        isinstance(o, gast.Name) and o.id in known for o in (value.left, value.right))


def _markers(ctx):
    """The generated names of ``field_updated`` and ``element_written``."""
    return (ctx.global_name(runtime.field_updated, "field_updated"),
            ctx.global_name(runtime.element_written, "element_written"))


def _is_update(node, updated):
    """``x op= v`` on a name, ``x = field_updated(x, name, v)`` (``a.b.c = v``, ``x`` holding
    ``a.b``, normalize/containers.py) or ``x = element_written(x, w)`` (``a[i][j] = v``, ``x``
    holding ``a[i]``; ``updated``: their generated names, ``_markers``): x's object changed."""
    return isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) or (
        _field_update(node, updated) is not None)


def _field_update(node, updated):
    """The call of ``x = field_updated(x, name, v)`` or ``x = element_written(x, w)``; None."""
    if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)
            and isinstance(node.value, gast.Call) and isinstance(node.value.func, gast.Name)
            and node.value.args and isinstance(node.value.args[0], gast.Name)
            and node.value.args[0].id == node.targets[0].id):
        return None
    return node.value if node.value.func.id in updated else None


class SharedUpdates:
    def __init__(self, ctx):
        self.ctx = ctx
        self.updated = _markers(ctx)
        self.holding = {id(getattr(runtime, h)) for h in HOLDING_HELPERS if hasattr(runtime, h)
                        } | {id(checkpointed_loop_fn())}  # (its state: what it was given)

    def _setup(self, fn_node):
        self.locals = local_names(fn_node)  # ANF's temporaries too
        self.params = param_names(fn_node, packed=True)
        self.fn_node, self.values = fn_node, assigned_values(fn_node)
        self.items = item_values(fn_node, self._added, self._bound_otherwise(fn_node))
        self.containers = self._containers(fn_node)
        self.sequences = self._surely(fn_node)
        self.sequences |= self._split_lists(fn_node)
        self.typed = typed_buffers(fn_node, self.ctx)
        self.numbers = self._numbers(fn_node)
        self.generated = is_derivative(self.ctx.fn)
        self.kept = kept_updates(fn_node, self.ctx.kinds, lambda f: self.ctx.namespace.resolve(
            f, self.locals))  # x op= v proven to keep x's shape and dtype: no check

    def _numbers(self, fn_node):
        """The names every binding of which is a number: a constant, a name of them, or an
        arithmetic operation (``+=`` too) of them (``n = 0; n += 1``)."""
        bindings = assigned_values(fn_node)
        for n in walk(fn_node):
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
                bindings.setdefault(n.target.id, []).append(gast.BinOp(n.target, n.op, n.value))
        counted = [n.target for n in walk(fn_node) if isinstance(n, gast.For) and isinstance(
            n.target, gast.Name) and isinstance(n.iter, gast.Call) and self.ctx.namespace.resolve(
                n.iter.func, self.locals) is range]  # (an index of `range`: an int)
        for target in counted:
            bindings.setdefault(target.id, []).append(gast.Constant(0, None))
        for name in self._bound_otherwise(fn_node, {id(t) for t in counted}):
            bindings.setdefault(name, []).append(None)
        return set(greatest_kinds(bindings, number_kind))

    def _split_lists(self, fn_node):
        """The variables every assignment makes the list ``np.split`` (``array_split``,
        ``hsplit``, ...) returns, or a concatenation of such lists and lists made here
        (``parts = np.split(x, 2) + [v]``, ``parts += [v]``): a list too, not an array. A
        parameter, or a name bound otherwise (a loop's target), is none."""
        assigns = [(n.targets[0].id, n.value) for n in walk(fn_node) if isinstance(n, gast.Assign)
                   and isinstance(n.targets[0], gast.Name)]
        assigns += [(n.target.id, gast.BinOp(n.target, n.op, n.value)) for n in walk(fn_node)
                    if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)]
        found = {t for t, _ in assigns} - self._bound_otherwise(fn_node)
        while True:
            known = found | self.sequences
            drop = {t for t, v in assigns if t in found and not (
                self._splits(v) or _joins(v, known))}
            if not drop:
                return found if any(t in found and self._splits(v) for t, v in assigns) else set()
            found -= drop

    def _bound_otherwise(self, fn_node, counted=frozenset()):
        """The parameters, and the names bound other than by ``name = v`` or ``name op= v``
        (or by a target of ``counted``, ids of loop targets)."""
        plain = {id(n.targets[0]) for n in walk(fn_node) if isinstance(n, gast.Assign)} | {
            id(n.target) for n in walk(fn_node) if isinstance(n, gast.AugAssign)} | counted
        return {n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
            n.ctx, (gast.Store, gast.Param, gast.Del)) and id(n) not in plain} | self.params

    def _splits(self, value):
        return isinstance(value, gast.Call) and any(
            self.ctx.namespace.resolve(value.func, self.locals) is f
            for f in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit))

    def _surely(self, fn_node):
        """Of the containers, the variables every assignment makes a list, dict or tuple
        (``vals = np.array(vals)`` makes ``vals`` an array: ``vals + [1.0]`` is a sum)."""
        looped = {n.id for f in walk(fn_node) if isinstance(f, gast.For)
                  for n in walk(f.target) if isinstance(n, gast.Name)}
        values = assigned_values(fn_node)
        return set(greatest_kinds(
            {t: values[t] for t in self.containers - looped},
            lambda v, surely: True if self._makes_container(v, surely) else None))

    def concatenate(self, fn_node):
        """``L + M`` of two lists (or tuples) made in the function (``hs = hs + [h]``) is
        ``concat_sequence(L, M)``, a concatenation srcgrad differentiates (``+`` of sequences
        is no sum)."""
        sums = [n for n in walk(fn_node) if isinstance(n, gast.Assign) and isinstance(
            n.value, gast.BinOp) and isinstance(n.value.op, gast.Add) and isinstance(
            n.value.left, gast.Name) and isinstance(n.value.right, gast.Name)]
        if not sums:  # (the analyses are for them alone)
            return
        self._setup(fn_node)
        for n in sums:
            if self._sequences(n.value.left, n.value.right):
                n.value = gast.copy_location(
                    self._call("concat_sequence", n.value.left, n.value.right), n.value)

    def _sequences(self, *atoms):
        return all(isinstance(a, gast.Name) and a.id in self.sequences for a in atoms)

    def run(self, fn_node):
        self._setup(fn_node)
        self.graph, self.outside = {}, {}  # outside: variable -> expressions from outside it holds
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.AugAssign) and self._sequences(n.target, n.value):
                self._connect(n.target.id, self._passed_on(n.value))  # `hs += [h]` holds h
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                target = n.targets[0].id
                self._connect(target, self._passed_on(n.value))
                self.outside.setdefault(target, []).extend(self._passed_on(n.value, True))
        # `w = fresh_copy(t); w[j] += v; t = element_written(t, w)` (`T[i][j] += v`): w is a
        # shallow copy of the list or dict t, with t's items, an array of which `+=` updates in
        # place for every holder of it (`a` of `inner = [a]; outer = [inner]`)
        self.element_copies = set()
        for n in walk(fn_node):
            call = _field_update(n, self.updated)
            if call is not None and call.func.id == self.updated[1] and isinstance(
                    call.args[1], gast.Name):
                self.element_copies.add(call.args[1].id)
                self._connect(call.args[1].id, [call.args[0].id])
        self.ctx.followed = self.sequences | self.element_copies  # (`T[i] += v` reaches holders)
        self._positions(fn_node.body)
        self.live_out = {}
        self._live(fn_node.body, set(), None)
        fn_node.body = self.block(fn_node.body, set(self.params))[0]
        return fn_node

    def _connect(self, target, others):
        for other in others:
            if other != target:
                self.graph.setdefault(target, set()).add(other)
                self.graph.setdefault(other, set()).add(target)

    # --- which variables may hold x's object ---------------------------------------------------
    def _passed_on(self, value, outside=False):
        """The variables whose objects ``value`` may be, hold or view; ``outside``: the
        expressions from outside the function (a global, a closure variable, an attribute or
        item of one) instead."""
        if isinstance(value, gast.Name):
            if outside:
                return [value] if value.id not in self.locals else []
            return [value.id] if value.id in self.locals else []
        if isinstance(value, gast.Attribute) and value.attr in INACTIVE_ATTRIBUTES:
            return []
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            if outside and not self._local_root(value):
                return [value]
            return self._passed_on(_root(value), outside)
        if isinstance(value, (gast.List, gast.Tuple)):
            return [n for e in value.elts for n in self._passed_on(e, outside)]
        if isinstance(value, gast.BinOp):
            return self._repeated(value, outside)
        if isinstance(value, gast.Dict):
            return [n for e in value.values for n in self._passed_on(e, outside)]
        if isinstance(value, gast.Call):
            return self._call_passes_on(value, outside)
        return []

    def _repeated(self, value, outside):
        """``[v] * n``, ``L * 2``: the list (or tuple) repeated holds v, n times."""
        return [n for o in (value.left, value.right) if isinstance(o, (gast.List, gast.Tuple))
                or isinstance(o, gast.Name) and o.id in self.containers
                for n in self._passed_on(o, outside)]

    def _call_passes_on(self, value, outside=False):
        func = value.func
        if isinstance(func, gast.Attribute) and self._local_root(func.value):
            same = same_items(value, self.containers)
            return self._passed_on(func.value, outside) if same else []
        fn = self.ctx.namespace.resolve(func, self.locals)
        if isinstance(func, gast.Attribute) and func.attr in VIEW_METHODS and (
                fn is MISSING or inspect.ismethod(fn) or inspect.isbuiltin(fn)):
            return self._passed_on(func.value, outside)  # a view of a global's array
        if any(fn is h for h in (runtime.setitem, runtime.list_insert, runtime.pop_item)):
            # `y = setitem(y, i, v)` holds y and v, never the index
            return [n for k, a in enumerate(value.args) if k != 1
                    for n in self._passed_on(a, outside)]
        if fn is MISSING or self._may_return_an_argument(fn):  # (a local callable: any)
            return self._arguments(returned_arguments(value, fn, self.ctx, self.locals), outside)
        return []

    def _may_return_an_argument(self, fn):
        if id(fn) in self.holding or any(fn is v for v in NUMPY_VIEWS):
            return True
        if any(fn is b for b in FRESH_BUILTINS):
            return False
        module = (getattr(fn, "__module__", "") or "").split(".")[0]
        if module in ("numpy", "scipy", "math", "srcgrad"):
            return False
        # max(a, b), a recursive call: may return an argument
        return inspect.isbuiltin(fn) or inspect.isfunction(fn) or isinstance(fn, type)

    def _arguments(self, call, outside=False):
        names = [n for a in call.args for n in self._passed_on(_unstarred(a), outside)]
        return names + [n for k in call.keywords for n in self._passed_on(k.value, outside)]

    def _check_not_outside(self, s, x, element=False):
        """Refuse ``x += ...`` where ``x`` may hold a mutable object from outside the function:
        Python updates that global (or closure variable) too, which srcgrad does not follow."""
        for var in sorted({x} | self._connected(x)):
            for expr in self.outside.get(var, ()):
                base = expr
                while isinstance(base, gast.Subscript):
                    base = base.value
                if _holds_mutable(self.ctx.namespace.resolve(base, self.locals)):
                    text = _dotted(expr)
                    if element:  # `a[i][j] = v`
                        raise self.ctx.location.error(
                            UnsupportedSyntaxError, s,
                            f"writing an element of `{text}`'s contents, from outside the "
                            f"function, changes it in Python, which srcgrad does not follow; "
                            f"pass `{text}` as an argument")
                    if not isinstance(s, gast.AugAssign):  # `a.b.c = v`
                        raise self.ctx.location.error(
                            UnsupportedSyntaxError, s,
                            f"writing a field of `{text}`, an object from outside the function, "
                            f"changes it in Python, which srcgrad does not follow; pass `{text}` "
                            f"as an argument")
                    raise self.ctx.location.error(
                        UnsupportedSyntaxError, s,
                        f"`{x} += ...` updates in place the object `{x}` holds, which is (or is "
                        f"held by) `{text}` from outside the function: Python changes `{text}` "
                        f"too, which srcgrad does not follow. Write `{x} = {x} + ...` (a new "
                        f"value), or pass `{text}` as an argument",
                    )

    def _local_root(self, node):
        root = _root(node)
        return isinstance(root, gast.Name) and root.id in self.locals

    def _connected(self, x, without=None):
        seen, todo = {x}, [x]
        while todo:
            for other in self.graph.get(todo.pop(), ()):
                if other not in seen and other != without:
                    seen.add(other)
                    todo.append(other)
        return seen - {x}

    # --- program order -------------------------------------------------------------------------
    def _positions(self, body):
        """Each statement's position and enclosing loops, the positions where each variable is
        assigned, each loop's span, and the statements that leave their loop (a block that ends
        with ``break``): what they assign never reaches the loop's next iteration."""
        self.position, self.writes, self.loops, self.leaves = {}, {}, {}, {}
        self._counter = 0
        self._walk(body, (), None)

    def _walk(self, stmts, loops, leaving):
        if stmts and isinstance(stmts[-1], gast.Break) and loops:
            leaving = loops[-1]
        for s in stmts:
            k = self._counter
            self._counter += 1
            self.position[id(s)] = (k, loops)
            if leaving is not None:
                self.leaves[k] = leaving
            if isinstance(s, (gast.For, gast.While)):
                self._walk(s.body, loops + (id(s),), None)
                self.loops[id(s)] = (k, self._counter)
            elif isinstance(s, gast.If):
                self._walk(s.body, loops, leaving)
                self._walk(s.orelse, loops, leaving)
            else:
                for n in _stores(s):
                    self.writes.setdefault(n, []).append(k)
            if isinstance(s, gast.For):
                for n in _stores(s.target):
                    self.writes.setdefault(n, []).append(k)

    def _live(self, stmts, live, head):
        """The variables live before ``stmts`` given those live after; records the live set
        after each update. ``head``: the live set at the head of the enclosing loop (where a
        ``break`` goes, conservatively)."""
        live = set(live)
        for s in reversed(stmts):
            if isinstance(s, gast.If):
                live = (self._live(s.body, live, head) | self._live(s.orelse, live, head)
                        | _uses(s.test))
            elif isinstance(s, (gast.For, gast.While)):
                after = set(live)
                at_head = set(after)
                while True:
                    body = self._live(s.body, at_head, at_head)
                    if isinstance(s, gast.For):
                        body = body - _stores(s.target)
                    new = after | body | _uses(s.iter if isinstance(s, gast.For) else s.test)
                    if new == at_head:
                        break
                    at_head = new
                live = at_head
            elif isinstance(s, gast.Break):
                live = set(head) if head is not None else set(live)
            else:
                if _is_update(s, self.updated):
                    self.live_out[id(s)] = set(live)
                live = (live - _stores(s)) | _uses(s, self.updated)
        return live

    def _maybe_assigned_before(self, var, stmt):
        k, loops = self.position[id(stmt)]
        for w in self.writes.get(var, ()):
            if self.leaves.get(w) in loops:
                continue  # assigned only on the way out of a loop this update is in
            if w < k:
                return True
            if any(self.loops[loop][0] <= w < self.loops[loop][1] for loop in loops):
                return True
        return False

    # --- rewriting -----------------------------------------------------------------------------
    def block(self, stmts, defined):
        """``stmts`` rewritten, and the variables surely bound after them."""
        out = []
        defined = set(defined)
        for s in stmts:
            if isinstance(s, gast.If):
                s.body, after_body = self.block(s.body, defined)
                s.orelse, after_else = self.block(s.orelse, defined)
                out.append(s)
                defined = after_body & after_else
            elif isinstance(s, (gast.For, gast.While)):
                inner = set(defined)
                if isinstance(s, gast.For):
                    inner |= {n.id for n in walk(s.target) if isinstance(n, gast.Name)}
                s.body, _ = self.block(s.body, inner)
                out.append(s)
            elif _is_update(s, self.updated):
                out += self._update(s, defined, self._item_of(stmts, s))
                defined.add(_updated(s))
            else:  # (and what a display read: `t = (a, w)` ran, so `w` was bound)
                out.append(s)
                shown = s.value.elts if isinstance(s, gast.Assign) and isinstance(
                    s.value, (gast.Tuple, gast.List)) else []
                defined |= {n.id for n in ordered_walk(s) if isinstance(n, gast.Name) and (
                    isinstance(n.ctx, gast.Store) or any(n is e for e in shown))}
        return out, defined

    def _item_of(self, stmts, s):
        """The container ``T`` when ``s`` is the update of ``T[i] += v`` (ANF's ``x = T[i];
        x += v; T = setitem(T, i, x)``), else None."""
        k = next(i for i, t in enumerate(stmts) if t is s)
        if not (k < len(stmts) - 1 and isinstance(s, gast.AugAssign)):
            return None
        write, x = stmts[k + 1], s.target.id
        # the read, then the operand's statements (`T[i] += f(v)`: T[i] is read first)
        read = next((t for t in reversed(stmts[:k]) if x in _stores(t)), None)
        if not (isinstance(read, gast.Assign) and isinstance(read.targets[0], gast.Name)
                and read.targets[0].id == x and isinstance(read.value, gast.Subscript)
                and isinstance(read.value.value, gast.Name)):
            return None
        container = read.value.value.id
        stored = self._setitem_call(write, container)
        if stored is None or not (isinstance(stored.args[2], gast.Name) and stored.args[2].id == x):
            return None
        return container

    def _may_hold_twice(self, container):
        """Whether the list or dict ``container`` may hold one object at two positions: unless
        each assignment to it is a display of distinct values no two of which may be one
        object, or puts back an item it read (``T = setitem(T, i, x)`` with ``x = T[j]``)."""
        items = {n.targets[0].id for n in walk(self.fn_node) if isinstance(n, gast.Assign)
                 and isinstance(n.targets[0], gast.Name) and isinstance(n.value, gast.Subscript)
                 and isinstance(n.value.value, gast.Name) and n.value.value.id == container}
        for n in walk(self.fn_node):
            if not (isinstance(n, gast.Assign) and container in _stores(n)):
                continue
            stored = self._setitem_call(n, container)
            if stored is not None and isinstance(stored.args[2], gast.Name) and (
                    stored.args[2].id in items):
                continue
            if not isinstance(n.value, (gast.List, gast.Tuple, gast.Dict)) or not isinstance(
                    n.targets[0], gast.Name) or self._repeats(n.value, container):
                return True
        return False

    def _repeats(self, display, container):
        """Whether two values of ``display`` may be one object (the same name, or connected
        otherwise than through ``container``)."""
        names = [e.id for e in (display.values if isinstance(display, gast.Dict)
                                else display.elts) if isinstance(e, gast.Name)]
        return any(a == b or b in self._connected(a, without=container)
                   for k, a in enumerate(names) for b in names[k + 1:])

    def _setitem_call(self, stmt, name):
        """The call of ``name = setitem(name, i, v)``, or None."""
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id == name and isinstance(stmt.value, gast.Call)
                and len(stmt.value.args) == 3 and isinstance(stmt.value.args[0], gast.Name)
                and stmt.value.args[0].id == name):
            return None
        fn = self.ctx.namespace.resolve(stmt.value.func, self.locals)
        return stmt.value if fn is runtime.setitem else None

    def _containers(self, fn_node):
        """The variables that may be a list, dict or tuple made here: by a display,
        ``list(...)``, ``[v] * n``, a list method or a copy of one of them (not an argument:
        the items of one the caller passes are its own; an array argument would pay the
        check)."""
        return least_names(assigned_values(fn_node), lambda v, made: self._makes_container(
            v, made, any))

    def _item_made(self, value, made, every):
        """``L = d["a"]`` of a container made here all items of which (``every``; ``any``: may
        be) are lists made here; ``L = t[0]`` of a checkpointed loop's state, as that name."""
        kept = kept_state(value, self.values, self.ctx, self.locals)
        held = self.items.get(value.value.id) if isinstance(value.value, gast.Name) else None
        return kept.id in made if kept else held is not None and value.value.id in made and (
            every(self._makes_container(v, made) for v in held))

    def _added(self, value, name):
        """The item ``name = setitem(name, k, v)`` (``list_append(name, v)``, ...) adds, or None."""
        if not (isinstance(value, gast.Call) and len(value.args) in (2, 3) and _load_of(
                value.args[0], name)):
            return None
        fn = self.ctx.namespace.resolve(value.func, self.locals)
        adds = {runtime.list_append: 2, runtime.setitem: 3, runtime.list_insert: 3}
        return value.args[-1] if adds.get(fn) == len(value.args) else None

    def _makes_container(self, value, made, every=all):
        if isinstance(value, (gast.List, gast.Tuple, gast.Dict)):
            return True
        if isinstance(value, gast.Subscript):
            return self._item_made(value, made, every)
        if isinstance(value, gast.Name):
            return value.id in made
        if isinstance(value, gast.BinOp):  # `[v] * n`, `2 * [v]`, `L * 2`; `L + [v]`
            made_of = [isinstance(o, (gast.List, gast.Tuple)) or isinstance(o, gast.Name)
                       and o.id in made for o in (value.left, value.right)]
            return all(made_of) if isinstance(value.op, gast.Add) else (
                isinstance(value.op, gast.Mult) and any(made_of))
        if not isinstance(value, gast.Call):
            return False
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
            return self._makes_container(value.func.value, made)
        fn = self.ctx.namespace.resolve(value.func, self.locals)
        if any(fn is c for c in (list, dict, tuple, sorted, dict.fromkeys, runtime.as_list,
                                 runtime.as_tuple, runtime.own_fields)):
            return True
        same_kind = (copy.copy, runtime.shallow_copy, *(  # (a copy of an array: an array)
            getattr(runtime, h) for h in CONTAINER_HELPERS))
        return any(fn is h for h in same_kind) and bool(value.args) and self._makes_container(
            value.args[0], made)

    def _update(self, s, defined, container=None):
        x = _updated(s)
        call = _field_update(s, self.updated)
        element = call is not None and call.func.id == self.updated[1]
        self._check_not_outside(s, x, element)
        self.ctx.updated_params |= ({x} | self._connected(x)) & self.params  # (inplace.py)
        value = self._operation(s, x) if call is None else call
        holders = self._holders(s, x, defined, container)
        if not holders:
            if element:
                return []
            before, result, after = self._dtype_kept(s, x)
            return before + [_located(_assign(result, value), s)] + after
        unbound = [r for r in holders if r not in defined]
        if unbound:
            raise self.ctx.location.error(
                UnsupportedSyntaxError,
                s,
                f"`{x} += ...` updates an array in place, and `{unbound[0]}` may hold the same "
                f"array, but may not be assigned yet here: srcgrad cannot tell whether it sees "
                f"the update. Write `{x} = {x} + ...`, or assign `{unbound[0]}` first",
            )
        if element:  # x, a temporary read nowhere else, keeps the old object; the holders
            # get the copy with the element written (no rename of it to x, whose identity
            # shared_positions reads: a derivative of this derivative copies that copy)
            return self._put(s, x, x, call.args[1].id, holders, False, container)
        old = self._fresh(naming.OLD.format(x))
        if call is None:
            value = self._operation(s, old)
        else:
            call.args[0] = _load(old)
        before, result, after = self._dtype_kept(s, x)
        out = before + [_located(_assign(old, _load(x)), s), _located(_assign(result, value), s)]
        out += after
        return out + self._put(s, x, old, x, holders, call is not None, container)

    def _operation(self, s, name):
        """``name op v``, the new value of ``x op= v``: a concatenation of two lists made here
        (``hs += [h]``, in place: every holder of ``hs`` sees it) with ``concat_sequence``."""
        if isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add) and self._sequences(
                s.target, s.value):
            return self._call("concat_sequence", _load(name), s.value)
        return gast.BinOp(_load(name), s.op, s.value)

    def _dtype_kept(self, s, x):
        """(before, the name ``x op v`` is assigned to, after): NumPy's ``x op= v`` of an
        array x (runtime/writes.py). ``x_dtype = inplace_target(x, v)`` raises NumPy's error
        where v would widen x and reads x's dtype; ``x = kept_dtype(x_op, x_dtype)`` casts back
        to it (float32 stays float32; int given floats raises); an explicit dtype (float32,
        int...) is ``astype(x, dtype, 'K', 'same_kind')``. Nothing for lists concatenated or a
        number counted (``n += 1``, every binding of n a number)."""
        atom = self.typed.get(x)
        if not isinstance(s, gast.AugAssign) or x in self.numbers or id(s) in self.kept or (
                self._sequences(s.target, s.value)) or (self.generated and atom is None):
            return [], x, []  # (generated code's `dx += g` adds a cotangent of dx's shape)
        check = self._call(writes.inplace_target.__name__, _load(x), clone(s.value))
        if atom is not None:
            cast = self._call("astype", _load(x), clone(atom), gast.Constant("K", None),
                              gast.Constant("same_kind", None))
            before = [] if self.generated else [_located(gast.Expr(check), s)]
            return before, x, [_located(_assign(x, cast), s)]
        dtype = self._fresh(naming.WRITE_DTYPE.format(x))
        result = self._fresh(naming.AUGMENTED.format(x))
        kept = self._call(writes.kept_dtype.__name__, _load(result), _load(dtype))
        return [_located(_assign(dtype, check), s)], result, [_located(_assign(x, kept), s)]

    def _put(self, s, x, old, new, holders, objects, container=None):
        """Each holder given the object ``new`` names where it held ``old``'s (``objects``: an
        object whose field was written, else an array, list or dict; ``container``: the list
        or dict ``old`` was read from, ``T[i] += v``)."""
        out = []
        for r in holders:
            where = self._fresh(naming.SHARED_IN.format(x, r))
            text = x if container is None else f"{container}[...]"  # the user's name
            find = self._call("shared_positions", _load(r), _load(old),
                              gast.Constant(r, None), gast.Constant(text, None))
            if objects:
                find.args.append(gast.Constant(True, None))
            if container is not None:  # no holder when T turns out an array (read above)
                find.keywords.append(gast.keyword("within", _load(container)))
            out.append(_assign(where, find))
            out.append(_assign(r, self._call("put_shared", _load(r), _load(where), _load(new))))
        return [_located(o, s) for o in out]

    def _holders(self, s, x, defined, container):
        """The variables read after ``s`` that may hold the object ``x`` held before it."""
        live = self.live_out.get(id(s), set())
        # (a number holds no object: `both = i and v` connects a loop's index `i` to `M` of
        # `M[1, i] = both`, and `check_trips(i, ...)` reads `i` after `M *= c`)
        holders = sorted(r for r in self._connected(x) if r in live and r not in self.numbers)
        if container is not None and container not in self.sequences | self.element_copies:
            # `T[i] += v` where T is surely no list, dict or tuple: an array's element write
            # (its sharing is followed by normalize/inplace.py; `x` is a view or a number)
            return []
        # a variable first assigned after this point (and not in an earlier iteration of a loop
        # around it) cannot hold the object yet
        holders = [r for r in holders if r in defined or self._maybe_assigned_before(r, s)]
        if container is not None and not self._may_hold_twice(container):
            holders = [r for r in holders if r != container]  # no other position holds it
        return holders

    def _fresh(self, name):
        name = self.ctx.namer.fresh(name)
        self.locals.add(name)
        self.ctx.local_names.add(name)
        return name

    def _call(self, helper, *args):
        fn = getattr(runtime, helper, None) or getattr(writes, helper)
        func = gast.Name(self.ctx.global_name(fn, helper), gast.Load(), None, None)
        return gast.Call(func, list(args), [])


def _load_of(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _updated(s):
    """The name whose object ``s`` changes in place (``_is_update``)."""
    return s.target.id if isinstance(s, gast.AugAssign) else s.targets[0].id


def _holds_mutable(value):
    """Whether a value from outside the function is (or holds) an object ``+=`` changes in
    place: not a number, a string, None, a module, a function or a class (MISSING, a value not
    known here: it may be)."""
    if isinstance(value, (int, float, complex, np.generic, str, bytes, type(None), range)):
        return False
    if isinstance(value, (tuple, frozenset)):
        return any(_holds_mutable(v) for v in value)
    return not (inspect.ismodule(value) or inspect.isroutine(value) or isinstance(value, type)
                or isinstance(value, np.ufunc))


def _stores(node):
    return {n.id for n in walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _uses(node, updated=None):
    uses = {n.id for n in walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    if _is_update(node, updated):
        uses.add(_updated(node))
    return uses


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node


def _unstarred(node):
    return node.value if isinstance(node, gast.Starred) else node


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _located(stmt, where):
    gast.copy_location(stmt, where)
    for n in ordered_walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)):
            gast.copy_location(n, where)
    return stmt
