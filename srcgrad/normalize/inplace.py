"""Writes into arrays never reach an array the function does not own.

Requires: an A-normal-form body where ``y[i] = v`` reads ``y = setitem(y, i, v)``. Guarantees:
every array written in place was created inside the function. A parameter that is written into
is copied once, first, so the caller's array is never modified (and checked, when it is a list,
tuple or dict, not to hold one array twice: ``check_argument_parts``); a variable that may
share memory with another array (``y = x``, ``y = x[1:]``, ``y = x.T``) and is then written
into is rejected with a clear error instead of silently changing another value.

    def f(x):                      def f(x):
        x[0] = 0.0        ->           unused = check_argument_parts(x, 'x')
        return np.sum(x)               x = fresh_copy(x)
                                       x = setitem(x, 0, 0.0)
"""

from __future__ import annotations

import types

import gast
import numpy as np

from .. import runtime
from ..astutil import index_value, ordered_walk, stored, walk
from ..emit import naming
from ..emit.unparse import users_expression
from ..errors import UnsupportedSyntaxError
from ..frontend.source import GENERATED_SOURCE
from ..runtime import writes
from ..runtime.sharing import _is_object
from .aliasing import (
    DICT_VIEWS,
    _aliased,
    _bound_from,
    _holders,
    _holding,
    _in_order,
    _integer_lists,
    _is_view_index,
    _list_copy,
    _new_cast,
    _reached,
    _viewed,
    held_through,
    kept_state,
    own_key_writes,
    written_next_trip,
)
from .containers import mutator_names
from .methods import user_class
from .private_elements import private_elements
from .view_errors import view_error

# srcgrad's helpers that read some arguments only for their shape (None: all of them): a write
# into the array such an argument views cannot change what they compute. Generated code reads a
# view this way (`unbroadcast(g, x_item)` after `x[1:3] = x_item`), and differentiating that code
# again must not refuse it.
SHAPE_READS = {
    runtime.unbroadcast: (1,), runtime.unreduce: (1,), runtime.mean_grad: (1,),
    runtime.shape_like: None, runtime.zeros_like: (0,), runtime.as_like: (1,),
    runtime.check_trips: None, runtime.check_reversed_trips: None,  # (lengths, identities)
}

# Functions whose result is a new array.
CREATORS = {
    np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
    np.full_like, np.array, np.copy, np.arange, np.linspace, np.eye, np.identity,
    runtime.fresh_copy, runtime.zeros_like, runtime.copy_array, list, dict,
    # computed values, always a new array (a ufunc without `out=` is one too)
    np.outer, np.sort, np.partition, np.cumsum, np.cumprod, np.dot, np.concatenate, np.stack,
    np.hstack, np.vstack, np.tile, np.repeat, np.clip, np.where, np.diff, np.kron, np.pad,
    np.take, np.delete, np.append, np.tensordot, np.inner, np.cross, np.convolve, np.diagflat,
    np.argsort, np.flatnonzero, np.searchsorted, np.unique,  # indices, a new array
    runtime.as_list, runtime.list_insert, runtime.pop_item, runtime.list_extend,
    runtime.list_reverse, runtime.list_permute, runtime.clear_items, runtime.dict_update,
    runtime.repeat_sequence, runtime.concat_sequence, runtime.dict_keys, runtime.dict_values,
    runtime.dict_items, runtime.popped, runtime.own_fields, runtime.deep_copy,
    runtime.shallow_copy,
    runtime.getitem_grad,  # zeros, or a new container of Nones, with dy placed at the index
}


def run(fn_node, ctx):
    """The pass: an array written in place is one the function owns (copied first if not)."""
    helpers = ctx.helpers
    list_ops = (helpers["list_append"], helpers["list_pop"]) + mutator_names(ctx)
    pass_ = CopyBeforeWrite(ctx, helpers["setitem"], list_ops)
    pass_.checkpointed = _checkpointed_loops(fn_node, ctx)
    # helpers that put a value into a list or dict: the container holds it afterwards. Not in
    # generated code (a derivative differentiated again): there the only such lists are its
    # own stacks of saved values, and a list helper there returns a new list
    if not _generated(ctx.fn):
        pass_.holding = set(list_ops) | {
            helpers["setitem"], ctx.global_name(runtime.put_shared, "put_shared")
        } | pass_.checkpointed
    return pass_.run(fn_node)


def _checkpointed_loops(fn_node, ctx):
    """The names ``checkpoint=``'s loops are called by here: the state a checkpointed loop
    returns may hold what its state and invariants held."""
    from ..checkpoint import checkpointed_loop

    return {n.func.id for n in walk(fn_node) if isinstance(n, gast.Call)
            and isinstance(n.func, gast.Name)
            and ctx.namespace.resolve(n.func, ctx.local_names) is checkpointed_loop}


def _check_arguments(var, named):
    """The arguments of ``check_argument_parts`` for the written parameter ``var``: ``var``,
    its name, and the other parameters (their names in one string, then each)."""
    others = [n for n in named if n != var]
    out = [gast.Name(var, gast.Load(), None, None), gast.Constant(var, None)]
    if others:
        out.append(gast.Constant(" ".join(others), None))
        out += [_dotted_load(n) for n in others]
    return out


# NumPy functions that return a list of views of their argument
_VIEW_LISTS = tuple(f for f in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
                                getattr(np, "unstack", None)) if f is not None)


def _dotted_load(text):
    """``a.b.c`` read: a name, or the attributes of one."""
    root, *attrs = text.split(".")
    node = gast.Name(root, gast.Load(), None, None)
    for attr in attrs:
        node = gast.Attribute(node, attr, gast.Load())
    return node


def _module_path(node, namespace, local_names):
    """``("data", "G")`` of ``data.G``: an attribute of a module or a class (``Model.W``), not
    of a local name, else None (an object's fields are searched when it runs)."""
    path = []
    while isinstance(node, gast.Attribute):
        path.append(node.attr)
        node = node.value
    if not (path and isinstance(node, gast.Name)) or node.id in local_names:
        return None
    path = (node.id, *reversed(path))
    return path if isinstance(_read(namespace, path[:-1]), (types.ModuleType, type)) else None


def _read(namespace, path):
    """``namespace.read(path)``, or through a name an inlined callee's global is bound to."""
    if path[0] not in namespace.extras:
        return namespace.read(path)
    found = namespace.extras[path[0]]
    for attr in path[1:]:
        found = getattr(found, attr, None)
    return found


def _mutable(value):
    """Whether ``value`` is (or, a tuple, may hold) an array, list, dict or object with fields
    that a write into an argument could reach (an object of a class with ``__call__`` too)."""
    if isinstance(value, (np.ndarray, list, dict, tuple)):
        return True
    return _is_object(value)


def _users(fn):
    """Whether ``fn``'s parameters are the user's: its own code, or the user's function that
    ``checkpoint=`` rewrote (not a derivative, nor a step whose parameters srcgrad made)."""
    return getattr(fn, "__code__", None) not in GENERATED_SOURCE or hasattr(
        fn, "__srcgrad_user_parameters__")


def _generated(fn):
    from ..frontend.source import is_derivative

    return is_derivative(fn)


class CopyBeforeWrite:
    def __init__(self, ctx, setitem, list_ops=()):
        self.ctx = ctx
        self.setitem = setitem
        # `xs = list_append(xs, v)`, `xs = list_pop(xs)`: a list changed in place is written
        # into too, and any other name for it would see the change
        self.list_ops = tuple(list_ops)
        self.holding = set()  # helpers that put a value into a container (see run)
        self.index_lists = set()
        self.private_elements = set()
        self.checkpointed = set()  # the names checkpoint='s loops are called by

    def _writes(self, stmt):
        """Whether ``stmt`` changes the container or array its target holds: ``y = setitem(y,
        ...)``, ``xs = list_append(xs, v)``; ``ys = list_insert(xs, ...)`` into another name is
        a new value (generated code), no write."""
        value = stmt.value
        if _calls(value, self.setitem):
            return True
        target = stmt.targets[0]
        return any(_calls(value, op) for op in self.list_ops) and (
            isinstance(target, gast.Name)
            and bool(value.args)
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == target.id
        )

    def run(self, fn_node):
        written = {}
        # (`x += v` of a parameter's array, in a checkpointed loop's step too: no copy)
        checked = self.ctx.updated_params | getattr(self.ctx.fn, "__srcgrad_user_parameters__",
                                                    set())
        self.item_written = set()  # written by element (setitem), not only grown or shrunk
        for node in ordered_walk(fn_node):
            if isinstance(node, gast.Assign) and self._writes(node):
                written.setdefault(node.targets[0].id, node.value)
                if _calls(node.value, self.setitem):
                    self.item_written.add(node.targets[0].id)
        if not written:
            fn_node.body = self._checks(fn_node, checked) + fn_node.body
            return fn_node
        self.index_lists = _integer_lists(fn_node)
        self.private_elements = self._unshared(fn_node, private_elements(
            fn_node, self._owning, self.setitem, self.list_ops[0], self.item_written,
        ))
        self._views_outlive_writes(fn_node, written)
        params = {a.id for a in fn_node.args.posonlyargs + fn_node.args.args
                  + fn_node.args.kwonlyargs}
        self.last_source = {}
        self.kept_copies = {}
        self._owned_at_writes(fn_node.body, set(written) & params, report=True)
        helper = self.ctx.global_name(runtime.fresh_copy, "fresh_copy")
        for stmt in self.kept_copies.values():
            _insert_after(fn_node, stmt, _copied(stmt.targets[0].id, helper, stmt))
        fn_node.body = self._checks(fn_node, checked, set(written) & params) + fn_node.body
        return fn_node

    def _checks(self, fn_node, checked, copied=frozenset()):
        """The statements first in the body: for each parameter written into (``copied``),
        ``check_argument_parts`` and a copy; for each other one whose array ``x op= v`` may
        update in place (``checked``: rebound, not copied), the check alone. The check names
        every other parameter, which a write must not reach (not in a derivative, whose user
        function was checked)."""
        named = [] if not _users(self.ctx.fn) else [
            a.id for a in [*fn_node.args.posonlyargs, *fn_node.args.args, fn_node.args.vararg,
                           *fn_node.args.kwonlyargs, fn_node.args.kwarg] if a is not None]
        if named:  # and what it reads from outside: a global array passed as `x` (`f(G)`)
            named += self._outside(fn_node, named)
        line = fn_node.body[0].lineno
        out = []
        for var in sorted(set(copied) | (set(checked) if len(named) > 1 else set())):
            helper = runtime.check_argument_parts if var in copied else (
                runtime.check_arguments_apart)
            check = gast.Assign(
                [gast.Name(self.ctx.namer.fresh(naming.UNUSED), gast.Store(), None, None)],
                gast.Call(gast.Name(self.ctx.global_name(helper, helper.__name__), gast.Load(),
                                    None, None), _check_arguments(var, named), []),
                None,
            )  # (an argument holding one array twice, or another's: an error)
            check.lineno = line
            out.append(check)
            if var in copied:
                helper = gast.Name(
                    self.ctx.global_name(runtime.fresh_copy, "fresh_copy"), gast.Load(), None, None
                )
                copy = gast.Assign(
                    [gast.Name(var, gast.Store(), None, None)],
                    gast.Call(helper, [gast.Name(var, gast.Load(), None, None)], []),
                    None,
                )
                copy.lineno = line
                out.append(copy)
        return out

    def _outside(self, fn_node, named):
        """The names ``fn_node`` reads from outside the function (globals, closure variables)
        that hold an array, list, dict or object, which an argument may share."""
        out = []
        # (and what checkpoint='s loops, now steps, read: checkpoint.py)
        for n in [*walk(fn_node), *getattr(self.ctx.fn, "__srcgrad_loop_reads__", ())]:
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in (
                    out + named) and _mutable(self.ctx.namespace.resolve(
                        n, self.ctx.local_names)):
                out.append(n.id)
            elif isinstance(n, gast.Attribute) and isinstance(n.ctx, gast.Load):
                # a module's array (`data.G`) passed as an argument too (`f(data.G)`)
                path = _module_path(n, self.ctx.namespace, self.ctx.local_names)
                if path is not None and ".".join(path) not in out and _mutable(
                        _read(self.ctx.namespace, path)):
                    out.append(".".join(path))
        return out

    def _unshared(self, fn_node, private):
        """The private elements (``a = L[k]``, see ``private_elements``) whose array no other
        name reads after the write, each then copied where it is taken (``a = L[k]; a =
        fresh_copy(a)``). What the user appended (``L.append(v)``), or a list or view holding
        it, read after ``a[0] = ...`` would see the write, a dependence srcgrad does not
        follow: not private. Nothing else reads the element after the write, so the copy
        changes no value the function computes; it keeps the write out of the array that a
        derivative also keeps on its stack of saved values (differentiated again, srcgrad
        reads that array where the first-order sweep has restored it in place)."""
        if not private:
            return set()
        out = set(private)
        if not _generated(self.ctx.fn):
            # (generated code is a derivative of code that passed this check)
            position, reads, writes = self._statement_order(fn_node)
            holders = _holders(fn_node, position, self.holding, self._returns_a_view)
            lists = {stmt.value.value.id for stmt, _ in private.values()}
            for name, (_, appended) in private.items():
                first = min(writes.get(name, ()), default=None)
                sharing = _holding(appended, holders, set(private) | lists)
                if first is not None and any(
                        k > first for n in sharing for k in self._reads_of(n, first, reads)):
                    out.discard(name)
        helper = self.ctx.global_name(runtime.fresh_copy, "fresh_copy")
        for name in out:
            stmt = private[name][0]
            _insert_after(fn_node, stmt, _copied(name, helper, stmt))
        return out

    def _owned_at_writes(self, stmts, owned, report):
        """The variables holding an array made here after ``stmts``; a write into any other
        variable is an error. Flow-sensitive: ``y = x; y = y.copy(); y[0] = v`` is fine."""
        owned = set(owned)
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                var = s.targets[0].id
                if self._writes(s):
                    into = self._written_array(s.value, var)
                    if into not in owned and report and not self._into_new(s.value):
                        self._not_owned(into, s.value)
                    owned.add(var)
                elif self._owning(s.value, owned) or (
                    var not in self.item_written and _list_copy(s.value)
                ) or var in self.private_elements:
                    owned.add(var)
                elif self._sum_with_owned(s.value, owned):
                    # `acc = add(acc, g)`, g a scatter made here (generated code's functional
                    # add_at, after ANF): add returns g when acc is None, else a new sum
                    owned.discard(s.value.args[1].id)
                    owned.add(var)
                elif self._updates_shared(s.value, var):
                    pass  # r = put_shared(r, ...): r as it was, or with `x += v`'s new value
                elif var in owned and self._kept_by_checkpoint(s.value, var):
                    # y = loop_result[0]: the object y was, or the loop's copy of it; written
                    # into afterwards as a copy of its own (the loop's adjoint reads the result
                    # it returned, and a derivative differentiated again does not restore it)
                    if report:
                        self.kept_copies[id(s)] = s
                else:
                    owned.discard(var)
                    self.last_source[var] = s
            elif isinstance(s, gast.If):
                body = self._owned_at_writes(s.body, owned, report)
                orelse = self._owned_at_writes(s.orelse, owned, report)
                owned = body & orelse
            elif isinstance(s, (gast.For, gast.While)):
                if isinstance(s, gast.For):
                    owned -= stored(s.target)
                # the body runs again after itself: what it keeps owned on every pass
                once = self._owned_at_writes(s.body, owned, report=False)
                entry = owned & once
                owned = entry & self._owned_at_writes(s.body, entry, report)
            else:
                owned -= stored(s)
        return owned

    def _kept_by_checkpoint(self, value, var):
        """``y = t[k]`` of ``t = checkpointed_loop(probe, step, steps, (..., y, ...), ...)``
        with ``y`` at ``k`` and a loop body that never binds ``y`` (only writes into it)."""
        kept = kept_state(value, self.values, self.ctx, self.ctx.local_names)
        return kept is not None and kept.id == var

    def _not_owned(self, var, write):
        source = self.last_source.get(var)
        where, advice = "", f"a copy instead (`{var} = ....copy()` or `np.array(...)`)"
        if source is not None:
            line, text = self.ctx.location.users_line(source)
            where = f" (line {line}: {(text or '').strip()})"
            shown = users_expression(var, getattr(source, "value", None), text or "")
            if shown is not None:  # `p_w_2 = p.w` the normal form made: name `p.w`
                var, advice = shown, f"`{shown}` by an assignment (`{shown} = ...`), or into a copy"
        raise self.ctx.location.error(
            UnsupportedSyntaxError,
            write,
            f"writing into `{var}`, which may share memory with another array or list"
            f"{where}; write into {advice}",
        )

    def _views_outlive_writes(self, fn_node, written):
        """``r = z[0:1]; z[0] = v; ... r``: r may see the write through a view, a dependence
        srcgrad does not track. Rejected where r is read after a write that follows it; an
        integer index (a number, or a row of a matrix) is checked when it runs."""
        checks = []
        generated = _generated(self.ctx.fn)
        for stmt, r, base, held in list(self._views_read_after_writes(fn_node, written)):
            if held:
                # `z = L[0]` of `L = [y]`, then `y[0] = v`: z may be y's array (or a view of
                # it); whether it is, the check says when it runs
                checks.append((stmt, r, base, runtime.check_not_holding))
            elif generated:
                self._copy_at_definition(fn_node, stmt, r, base)
            elif isinstance(stmt.value, gast.Subscript) and not _is_view_index(stmt.value.slice):
                # `a = x[0]` is a number for a vector but a view (a row) for a matrix:
                # checked when it runs
                checks.append((stmt, r, base, runtime.check_not_view))
            elif self._sometimes_a_view(stmt.value):
                # `d = np.diag(M)` is a view of a matrix, a new array of a vector; `np.einsum`
                # of one operand may be a view: checked when it runs
                checks.append((stmt, r, base, runtime.check_not_view))
            else:
                raise view_error(self.ctx, stmt.value, r, base, stmt)
        for stmt, r, base, check in checks:
            helper = self.ctx.global_name(check, check.__name__)
            call = gast.Call(
                gast.Name(helper, gast.Load(), None, None),
                [gast.Name(r, gast.Load(), None, None), gast.Name(base, gast.Load(), None, None),
                 gast.Constant(r, None), gast.Constant(base, None)],
                [],
            )
            followed = self.ctx.followed
            if check is runtime.check_not_holding and (followed is True or base in (
                    followed or ())):
                # an update of an item of `base` in place reaches `r` (normalize/sharing.py)
                call.args.append(gast.Constant(True, None))
            check = gast.Expr(gast.copy_location(call, stmt.value))
            check.lineno = stmt.lineno
            _insert_after(fn_node, stmt, check)

    def _copy_at_definition(self, fn_node, stmt, r, base):
        """In srcgrad's own generated code, ``r`` (a view of ``base``, or ``base`` itself)
        stands for the value it had when it was made: the user's code read it only before the
        write (or only for its shape), and the first-order sweep reads it where the in-place
        ``restore_item`` has put those values back. A transform of that code sees values, not
        memory, so ``r`` becomes a copy made right there (only code differentiated again pays).
        Where the code finds an update's other holders by identity (``shared_positions``), a
        copy would be another object than the one they hold: refused."""
        if self._found_by_identity(fn_node, r):
            raise self.ctx.location.error(UnsupportedSyntaxError, stmt.value, (
                f"a derivative of this derivative: `{r}` is read after `{base}` changes in place "
                f"and the change reaches its other holders by identity (an argument updated in "
                f"place, `{r} += ...` or `{r} -= ...`, then written into again). Write the update "
                f"as `{r} = {r} + ...` and return it"))
        value = stmt.value
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            helper = self.ctx.global_name(runtime.copy_item, "copy_item")
            index = index_value(value.slice, self.ctx.global_name(slice, "slice"))
            stmt.value = gast.copy_location(
                gast.Call(gast.Name(helper, gast.Load(), None, None), [value.value, index], []),
                value,
            )
            return
        helper = self.ctx.global_name(runtime.fresh_copy, "fresh_copy")
        if isinstance(value, gast.Call) and any(self.ctx.namespace.resolve(
                value.func, self.ctx.local_names) is f for f in _VIEW_LISTS):
            # `parts = np.split(x, 5)`: a list of views of x, whose items a shallow copy of the
            # list would leave views (the restore of x, a write into a copy when transformed
            # again, would not reach them: a wrong hvp, hunt seed 56121)
            helper = self.ctx.global_name(runtime.deep_copy, "deep_copy")
        if isinstance(value, (gast.List, gast.Tuple, gast.Dict)):
            # `t = (x, y)`: the element that is `base` is copied first, under a name of its own
            copy = self.ctx.namer.fresh(base)
            elts = value.elts if not isinstance(value, gast.Dict) else value.values
            for k, e in enumerate(elts):
                if isinstance(e, gast.Name) and e.id == base:
                    elts[k] = gast.Name(copy, gast.Load(), None, None)
            new = gast.Assign([gast.Name(copy, gast.Store(), None, None)], gast.Call(
                gast.Name(helper, gast.Load(), None, None),
                [gast.Name(base, gast.Load(), None, None)], []), None)
            gast.copy_location(new, stmt)
            _insert_before(fn_node, stmt, new)
            return
        new = gast.Assign([gast.Name(r, gast.Store(), None, None)], gast.Call(
            gast.Name(helper, gast.Load(), None, None),
            [gast.Name(r, gast.Load(), None, None)], []), None)
        gast.copy_location(new, stmt)
        _insert_after(fn_node, stmt, new)

    def _found_by_identity(self, fn_node, r):
        """Whether ``r``, or a name bound to it (``r_old = r``, ...), is the object whose
        holders ``shared_positions`` finds by identity."""
        renames = [(n.value.id, n.targets[0].id) for n in walk(fn_node)
                   if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)
                   and isinstance(n.value, gast.Name)]
        names, size = {r}, 0
        while size != len(names):
            size = len(names)
            names |= {target for source, target in renames if source in names}
        return any(
            isinstance(n, gast.Call) and len(n.args) > 1 and isinstance(n.args[1], gast.Name)
            and n.args[1].id in names
            and self.ctx.namespace.resolve(n.func, self.ctx.local_names)
            is runtime.shared_positions for n in walk(fn_node))

    def _views_read_after_writes(self, fn_node, written):
        """``(stmt, r, base)`` for each ``r = <what may share base's memory>`` (``base`` among
        ``written``) where r is read after a write into base that follows the assignment."""
        order = self._statement_order(fn_node)
        position, reads, writes = order
        # through containers (not in generated code, whose first order passed this check)
        held = None if _generated(self.ctx.fn) else (
            _holders(fn_node, position, self.holding, self._returns_a_view),
            _bound_from(fn_node, position),
        )
        for node in ordered_walk(fn_node):
            if not isinstance(node, gast.Assign):
                continue
            bases = [b for b in _aliased(node.value, self.holding, self._returns_a_view)
                     if isinstance(b, gast.Name)]
            base = next((b.id for b in bases if b.id in written), None)
            r, made = node.targets[0].id, position[id(node)]
            if base is None and held is not None:
                base = self._renamed_base(node.value, bases, made, written, r)
            if base is None:
                # (a view of a view, `t = np.ravel(y); z = np.reshape(t, s)`, through its bases)
                if held is not None and (
                        isinstance(node.value, (gast.Subscript, gast.Name, gast.Attribute))
                        or isinstance(node.value, gast.Call)
                        and _viewed(node.value, self._returns_a_view) is not None):
                    yield from self._held_read_after_writes(node, bases, order, held)
                continue
            if base not in self.item_written and (
                    isinstance(node.value, gast.Subscript) or self._takes_items(node.value)):
                continue  # an element of a list that only grows or shrinks stays what it was
            if self._read_after_a_later_write(node.value, r, made, writes[base], reads) or (
                    written_next_trip(self, node, made, base, writes[base], reads.get(r, ()))):
                yield node, r, base, False

    def _renamed_base(self, value, bases, made, written, r):
        """``L = [b2]`` of ``b2 = blk`` (an inlined ``__init__``'s ``self.a = blk``), then
        ``blk[0] = v``: L holds blk's object (``L = [(1, y)]``: y's); the name written, or None."""
        if isinstance(value, gast.Name):
            # `ws = vs_2` of `vs_2 = vs` (a helper's parameter it returns, `ws = ident(vs)`):
            # ws holds vs's object too (an append to vs, then `ws[-1]`, was a wrong value)
            reached = self._renamed(bases, made)
        elif not self._holds_parts(value):
            return None
        else:
            reached = self._renamed(bases, made) + sorted(held_through(value, made, self))
        return next((n for n in reached if n in written and n != r), None)

    def _holds_parts(self, value):
        """Whether ``value`` holds its parts themselves: a list, tuple or dict display, or a
        call of a helper that puts a value into a container or field (``set_field``)."""
        return isinstance(value, (gast.List, gast.Tuple, gast.Dict)) or (
            isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id in self.holding)

    def _renamed(self, names, before):
        """The names that ``names`` were bound from by plain renames (``b2 = blk``) made before
        position ``before``, transitively: each holds the same object."""
        seen, stack = set(), [n.id for n in names]
        while stack:
            name = stack.pop()
            for pos, value in zip(self.bindings.get(name, ()), self.values.get(name, ())):
                if pos < before and isinstance(value, gast.Name) and value.id not in seen:
                    seen.add(value.id)
                    stack.append(value.id)
        return sorted(seen)

    def _takes_items(self, value):
        """``e.update(d)``, ``L.extend(M)``: the container holds the items of the others, not
        the others themselves (``d.pop(k)`` afterwards does not change ``e``)."""
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names) if isinstance(
            value, gast.Call) else None
        return any(fn is h for h in (runtime.dict_update, runtime.list_extend,
                                     runtime.concat_sequence))

    def _held_read_after_writes(self, node, bases, order, held):
        """``z = L[0]`` with ``L = [y]`` made before (``for z in L`` too), y's elements written
        afterwards and z read after that: ``(node, z, y, True)``, checked when it runs (an error
        now if y may not be bound there yet)."""
        position, reads, writes = order
        holders, bound = held
        r, made = node.targets[0].id, position[id(node)]
        for base in sorted(_reached(bases, holders, made) & set(self.item_written) - {r}):
            later = [w for w in writes[base] if w > made]
            if later and any(k > min(later) for k in self._reads_of(r, made, reads)):
                if bound.get(base, made) >= made:
                    raise view_error(self.ctx, node.value, r, base)
                yield node, r, base, True

    def _statement_order(self, fn_node):
        """Each statement's position in the order of the (inlined, normalized) body, not by line
        numbers (inlined helpers bring the line numbers of their own files); and for each
        variable the positions where it is read and those where it is written into."""
        position, reads = {}, {}
        shape_only = self._shape_reads(fn_node)
        for k, (stmt, names) in enumerate(_in_order(fn_node.body, shape_only)):
            position[id(stmt)] = k
            for n in names:
                reads.setdefault(n, []).append(k)
        writes = {}
        for node in ordered_walk(fn_node):
            if isinstance(node, gast.Assign) and self._writes(node):
                writes.setdefault(node.targets[0].id, []).append(position[id(node)])
        self.bindings, self.values, self.write_nodes = {}, {}, {}
        for node in ordered_walk(fn_node):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                self.bindings.setdefault(node.targets[0].id, []).append(position[id(node)])
                self.values.setdefault(node.targets[0].id, []).append(node.value)
                if self._writes(node):
                    self.write_nodes[position[id(node)]] = node
        # the positions each loop's statements span, its header first
        self.loop_spans = [
            (position[id(node)], max(position[id(n)] for n in walk(node) if id(n) in position))
            for node in ordered_walk(fn_node)
            if isinstance(node, (gast.For, gast.While)) and id(node) in position
        ]
        return position, reads, writes

    def _read_after_a_later_write(self, value, r, made, writes, reads):
        """Whether ``r = value`` (made at ``made``) is read after one of ``writes`` into its
        base that come after it (not ``d[k] = ...`` at the loop's own key of ``d.items()``)."""
        later = [w for w in writes if w > made]
        return bool(later) and any(k > min(later) for k in self._reads_of(r, made, reads)) and (
            not own_key_writes(self, value, r, later))

    def _reads_of(self, r, made, reads):
        """The positions where ``r`` is read; a read inside a loop that ``r`` was not made in
        happens again in the next trip, after every statement of the loop (so after a write
        into its base further down the loop's body)."""
        out = list(reads.get(r, ()))
        # (reads after r is bound again, `seq = d; seq = iteration_sequence(seq)`, are not its)
        cut = min((p for p in self.bindings.get(r, ()) if p > made), default=float("inf"))
        for start, end in self.loop_spans:
            if not start <= made <= end and any(start <= k <= min(end, cut) for k in out):
                out.append(end + 0.5)
        return out

    def _sometimes_a_view(self, value):
        from .sharing import SOMETIMES_VIEWS

        if not isinstance(value, gast.Call):
            return False
        if isinstance(value.func, gast.Attribute) and value.func.attr in (
                "conj", "conjugate", "astype"):
            return True  # the array itself for a real one (for its own dtype)
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names)
        return any(fn is v for v in SOMETIMES_VIEWS)

    def _returns_a_view(self, func):
        from .sharing import NUMPY_VIEWS

        fn = self.ctx.namespace.resolve(func, self.ctx.local_names)
        return any(fn is v for v in NUMPY_VIEWS) or any(fn is v for v in DICT_VIEWS)

    def _updates_shared(self, value, var):
        if not (isinstance(value, gast.Call) and value.args):
            return False
        first = value.args[0]
        fn = self.ctx.namespace.resolve(value.func, self.ctx.local_names)
        return fn is runtime.put_shared and isinstance(first, gast.Name) and first.id == var

    def _written_array(self, value, var):
        """The variable whose array a write changes: ``t`` in ``y = setitem(t, i, v)``."""
        if _calls(value, self.setitem) and value.args and isinstance(value.args[0], gast.Name):
            return value.args[0].id
        return var

    def _sum_with_owned(self, value, owned):
        """``add(acc, g)`` (srcgrad's sum of cotangents) with ``g`` a name holding a new value."""
        return (
            isinstance(value, gast.Call)
            and self.ctx.namespace.resolve(value.func, self.ctx.local_names) is runtime.add
            and len(value.args) == 2
            and isinstance(value.args[1], gast.Name)
            and value.args[1].id in owned
        )

    def _into_new(self, value):
        """``setitem(<a new array>, i, v)``: the write goes into an array made right there."""
        return (
            _calls(value, self.setitem) and bool(value.args) and self._owning(value.args[0])
        )

    def _shape_reads(self, fn_node):
        """ids of the names that srcgrad's helpers read only for their shape."""
        out = set()
        for node in walk(fn_node):
            if not isinstance(node, gast.Call):
                continue
            fn = self.ctx.namespace.resolve(node.func, self.ctx.local_names)
            positions = next((p for h, p in SHAPE_READS.items() if fn is h), False)
            if positions is False:
                continue
            for k, arg in enumerate(node.args):
                if isinstance(arg, gast.Name) and (positions is None or k in positions):
                    out.add(id(arg))
        return out

    def _owning(self, value, owned=()):
        """Whether ``value`` is a new object no other name holds (``owned``: the names that
        own theirs; ``y = kept_dtype(y_op, y_dtype)`` of ``y op= v``, normalize/sharing.py, is
        y_op or a copy of it)."""
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.List, gast.Tuple,
                              gast.Dict)):
            return True  # a comparison of arrays is a new (boolean) array: a mask of its own
        if isinstance(value, gast.Subscript):
            # x[[0, 1, 2]], M[[0, 1], :]: an integer-list index always copies
            index = value.slice
            parts = index.elts if isinstance(index, gast.Tuple) else [index]
            return any(isinstance(p, gast.Name) and p.id in self.index_lists for p in parts)
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and (
                func.attr in ("copy", "flatten")
                or func.attr == "astype" and _new_cast(value, 4)  # (dtype, order, ..., copy)
            ):
                return True
            fn = self.ctx.namespace.resolve(func, self.ctx.local_names)
            if fn is runtime.astype:
                return _new_cast(value, 5)
            if fn is writes.kept_dtype:
                return isinstance(value.args[0], gast.Name) and value.args[0].id in owned
            if isinstance(fn, np.ufunc):
                return not any(k.arg == "out" for k in value.keywords)
            if user_class(fn) or fn is types.SimpleNamespace or fn is runtime.new_instance:
                return True  # an object built here: no other name holds it yet
            return any(fn is c for c in CREATORS)
        return False


def _copied(name, helper, stmt):
    """``name = fresh_copy(name)``, at ``stmt``'s line."""
    copy = gast.Assign([gast.Name(name, gast.Store(), None, None)], gast.Call(
        gast.Name(helper, gast.Load(), None, None), [gast.Name(name, gast.Load(), None, None)],
        []), None)
    return gast.copy_location(copy, stmt)


def _insert_before(tree, stmt, new):
    for node in ordered_walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                i = next(k for k, s in enumerate(block) if s is stmt)
                block.insert(i, new)
                return


def _insert_after(tree, stmt, new):
    for node in ordered_walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                i = next(k for k, s in enumerate(block) if s is stmt)
                block.insert(i + 1, new)
                return


def _calls(value, name):
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == name
    )


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name

