"""Rewrite the in-place helpers of generated code into forms that are safe to differentiate.

Requires: a parsed function (generated code is input too). Guarantees: calls that update an
adjoint buffer in place become functional, so a second transform never sees a value change under
it: ``add_at(acc, i, g)`` becomes ``add(acc, getitem_grad(g, acc, i))``, ``zero_item(d, i)``
zeroes a copy, and ``restore_item(y, i, v)`` is the element write ``setitem(fresh_copy(y), i, v)``
it is, into a copy; ``list_pop(L)`` is ``popped(L)``, a new list (and
``append_tangent`` is ``appended_tangent``). A save ``y_saved.append(y)`` of an object that the
code writes into in place afterwards (``y = setitem(y, i, v)``, ``y = list_append(y, v)``) saves
a copy: the first-order sweep finds the saved object put back by its in-place restores, which
now write into copies (``y = put_shared(y, ...)`` returns ``y`` itself when nothing is shared).
First-order code keeps the fast in-place forms; only code that is differentiated again pays.
A derivative's optional parameters, bound from ``*rest`` at its start, become plain parameters
again (``plain_parameters``).
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from .. import runtime
from ..astutil import NodeTransformer, ordered_walk, param_names
from ..emit import naming
from ..errors import SrcgradError
from ..frontend.resolve import MISSING


def run(fn_node, ctx):
    """The pass: in-place helper calls of generated code become functional ones, and a
    derivative's optional parameters plain ones (``plain_parameters``)."""
    plain_parameters(fn_node, ctx)
    return FunctionalHelpers(ctx).run(fn_node)


@dataclass
class RestLayout:
    """What a derivative's ``*rest`` held, undone by ``plain_parameters``: its optional
    parameters, their defaults, and how many trailing parameters (seeds, tangents) follow."""

    optional: list
    defaults: list
    trailing: int


def plain_parameters(fn_node, ctx):
    """A derivative with defaults takes its optional parameters and its seed or tangent in
    ``*rest`` and binds them first (``a, seed = bind_optional(rest, (a,), (2.0,), 'f_vjp')``,
    ``transform/defaults.py``). A transform of it differentiates the function those stand for,
    ``f_vjp(x, a, seed)`` with plain parameters, so ``a`` carries its derivative; its own
    ``defaults`` pass binds them again (``ctx.rest_layout``) with the new trailing parameter."""
    args = fn_node.args
    first = _binding(fn_node, ctx)
    if first is None:
        return
    call = first.value
    _, given, defaults = call.args[:3]
    options = {k.arg: k.value for k in call.keywords}
    options.update(zip(("varargs", "trailing"), call.args[4:]))
    varargs = options.get("varargs")
    optional = [e.id for e in given.elts]
    if varargs is not None and varargs.value:
        # `f(x, a=1.0, *more)`: no plain signature has `more` before the seed
        selected = [p for p in optional if p in ctx.wrt]
        if selected:
            raise SrcgradError(
                f"a derivative of `{fn_node.name}` w.r.t. its optional parameter "
                f"`{selected[0]}` is not supported: the function also takes `*args`, so the "
                f"parameter arrives in them; differentiate a function without `*args`"
            )
        return
    targets = [t.id for t in first.targets[0].elts]
    trailing = targets[len(optional):]
    kept = [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults) if p.id not in optional]
    args.kwonlyargs = [p for p, _ in kept]
    args.kw_defaults = [d for _, d in kept]
    args.args = list(args.args) + [gast.Name(n, gast.Param(), None, None)
                                   for n in optional + trailing]
    args.vararg = None
    fn_node.body = fn_node.body[1:]
    ctx.rest_layout = RestLayout(optional, list(defaults.elts), len(trailing))


def _binding(fn_node, ctx):
    """The ``... = bind_optional(rest, ...)`` that starts a derivative with defaults, or None."""
    args = fn_node.args
    first = fn_node.body[0] if fn_node.body else None
    if (
        args.vararg is None
        or not isinstance(first, gast.Assign)
        or not isinstance(first.targets[0], gast.Tuple)
        or not isinstance(first.value, gast.Call)
        or ctx.namespace.resolve(first.value.func, ctx.local_names) is not runtime.bind_optional
    ):
        return None
    rest = first.value.args[0]
    return first if isinstance(rest, gast.Name) and rest.id == args.vararg.id else None


class FunctionalHelpers(NodeTransformer):
    def __init__(self, ctx):
        self.ctx = ctx

    def run(self, fn_node):
        self.written = self._written_in_place(fn_node)
        self.copies = self._copies(fn_node)
        self.top = {}  # name -> the indices of the function's own statements that bind it
        for k, stmt in enumerate(fn_node.body):
            for n in ordered_walk(stmt):
                if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                    self.top.setdefault(n.id, set()).add(
                        k if isinstance(stmt, gast.Assign) else None)
        self.params = param_names(fn_node, packed=True)
        self.unbound = set()  # aliases bound only in a block: None first (_pop_seen_by_aliases)
        body = []
        for k, stmt in enumerate(fn_node.body):
            self.position = k
            new = self.visit(stmt)
            body += new if isinstance(new, list) else [new]
        fn_node.body = [gast.copy_location(gast.Assign([gast.Name(a, gast.Store(), None, None)],
                                                       gast.Constant(None, None), None), fn_node)
                        for a in sorted(self.unbound)] + body
        return fn_node

    def _written_in_place(self, fn_node):
        """The names ``y`` of ``y = setitem(y, ...)`` or ``y = list_append(y, ...)``: the code
        writes into the object ``y`` holds."""
        out = set()
        for node in ordered_walk(fn_node):
            if (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name)
                    and isinstance(node.value, gast.Call) and node.value.args
                    and isinstance(node.value.args[0], gast.Name)
                    and node.value.args[0].id == node.targets[0].id
                    and self.ctx.namespace.resolve(node.value.func, self.ctx.local_names)
                    in (runtime.setitem, runtime.list_append)):
                out.add(node.targets[0].id)
        return self._with_aliases(fn_node, out)

    def _copies(self, fn_node):
        """``(target, source)`` of ``target = source`` and ``target = iteration_sequence(source)``
        (of a list: the object itself), anywhere."""
        copies = []
        for node in ordered_walk(fn_node):
            if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name)):
                continue
            value = node.value
            if isinstance(value, gast.Call) and len(value.args) == 1 and self._is(
                    value.func, runtime.iteration_sequence):
                value = value.args[0]
            if isinstance(value, gast.Name):
                copies.append((node.targets[0].id, value.id))
        return copies

    def _with_aliases(self, fn_node, written):
        """``written`` and the names given the object one of them holds (``seq = vs``,
        ``seq = iteration_sequence(seq)`` of a list: the object itself), anywhere: a save of
        such a name saves the object the code writes into too (its first-order sweep shrinks
        it again by ``list_pop``, which ``popped`` no longer does)."""
        copies = self._copies(fn_node)
        while True:
            more = {target for target, source in copies if source in written} - written
            if not more:
                return written
            written = written | more

    def visit_Assign(self, node):
        """``y = restore_item(y, i, v)``: ``y = fresh_copy(y)`` and ``y = setitem(y, i, v)``,
        two statements, so that a second transform sees the copy as a rebinding of ``y`` (its
        sweep brings back the object ``y`` held, which the restores of earlier element writes
        then reach) and the write as a write into ``y``'s own object."""
        value = node.value
        if self._popped_in_place(node):
            return self._pop_seen_by_aliases(node)
        if not (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(value, gast.Call) and len(value.args) == 3 and not value.keywords
                and isinstance(value.args[0], gast.Name)
                and value.args[0].id == node.targets[0].id
                and self._is(value.func, runtime.restore_item)):
            return self.generic_visit(node)
        self.generic_visit(value)  # (the saved value, `y_saved.pop()`, may hold calls too)
        var = node.targets[0].id
        copied = gast.Assign([gast.Name(var, gast.Store(), None, None)], gast.Call(
            self._ref(runtime.fresh_copy), [gast.Name(var, gast.Load(), None, None)], []))
        write = gast.Assign([gast.Name(var, gast.Store(), None, None)], gast.Call(
            self._ref(runtime.setitem), value.args, []))
        return [gast.copy_location(copied, node), gast.copy_location(write, node)]

    def _popped_in_place(self, node):
        value = node.value
        return (len(node.targets) == 1 and isinstance(node.targets[0], gast.Name)
                and isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
                and isinstance(value.args[0], gast.Name)
                and value.args[0].id == node.targets[0].id
                and self._is(value.func, runtime.list_pop))

    def _pop_seen_by_aliases(self, node):
        """``L = popped(L)``, a new list, and each other name that may hold the list ``L`` held
        (``seq = L``, ``seq_2 = iteration_sequence(seq)``: the loop over a helper's parameter
        in the first-order code), bound by a statement of the function's own block before
        this one (so bound here: ``seq = None`` first), given the new list where it held that
        one, as the in-place
        pop it stands for shrank it too (a second-order sweep read its old length)::

            L = list_pop(L)     ->   L_before = L
                                     L = popped(L)
                                     if seq_2 is L_before:
                                         seq_2 = L
        """
        var = node.targets[0].id
        node.value.func = self._ref(runtime.popped)
        group, grown = {var}, True
        while grown:
            more = {t for t, src in self.copies if src in group} - group
            grown = bool(more)
            group |= more
        held = sorted(a for a in group - {var} - self.params if self.top.get(a))
        self.unbound |= {a for a in held if not any(
            k is not None and k < self.position for k in self.top[a])}
        if not held:
            return node
        before = self.ctx.namer.fresh(naming.BEFORE_POP.format(var))
        out = [gast.Assign([gast.Name(before, gast.Store(), None, None)],
                           gast.Name(var, gast.Load(), None, None), None), node]
        for a in held:
            test = gast.Compare(gast.Name(a, gast.Load(), None, None), [gast.Is()],
                                [gast.Name(before, gast.Load(), None, None)])
            out.append(gast.If(test, [gast.Assign([gast.Name(a, gast.Store(), None, None)],
                                                  gast.Name(var, gast.Load(), None, None),
                                                  None)], []))
        for stmt in out:
            for n in ordered_walk(stmt):
                if isinstance(n, (gast.stmt, gast.expr)):
                    gast.copy_location(n, node)
        return out

    def visit_Expr(self, node):
        """``y_saved.append(y)`` (a save of the first-order code) of a ``y`` written into in
        place: ``y_saved.append(fresh_copy(y))``, also for the items of a tuple saved."""
        self.generic_visit(node)
        call = node.value
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
                and len(call.args) == 1 and not call.keywords):
            return node
        saved = call.args[0]
        if isinstance(saved, gast.Tuple):
            saved.elts = [self._copied(e) for e in saved.elts]
        else:
            call.args = [self._copied(saved)]
        return node

    def _copied(self, e):
        if isinstance(e, gast.Name) and e.id in self.written:
            return gast.Call(self._ref(runtime.fresh_copy), [e], [])
        return e

    def _ref(self, fn):
        return gast.Name(self.ctx.global_name(fn, fn.__name__), gast.Load(), None, None)

    def visit_Call(self, node):
        self.generic_visit(node)
        fn = self.ctx.namespace.resolve(node.func, self.ctx.local_names)
        if fn is MISSING or node.keywords:
            return node
        if fn is runtime.add_at and len(node.args) == 3:
            acc, index, g = node.args
            scatter = gast.Call(self._ref(runtime.getitem_grad), [g, acc, index], [])
            return gast.copy_location(gast.Call(self._ref(runtime.add), [acc, scatter], []), node)
        if fn is runtime.zero_item and len(node.args) == 2:
            buffer, index = node.args
            if not (isinstance(buffer, gast.Call) and self._is(buffer.func, runtime.copy_array)):
                copied = gast.Call(self._ref(runtime.copy_array), [buffer], [])
                node.args = [copied, index]
            return node
        if fn is runtime.restore_item and len(node.args) == 3:
            # the restore writes into a copy: the array it restores may have come from a save
            # stack (`y = y_saved.pop()`), which a second transform cannot prove unshared; a
            # copy of its own dtype (an integer index stays one: copy_array makes adjoints)
            buffer, index, saved = node.args
            copied = gast.Call(self._ref(runtime.fresh_copy), [buffer], [])
            return gast.copy_location(
                gast.Call(self._ref(runtime.setitem), [copied, index, saved], []), node
            )
        if fn is runtime.restore_item:
            node.func = self._ref(runtime.setitem)
        if fn is runtime.list_pop and len(node.args) == 1:
            # the sweep's `L = list_pop(L)` undoes an append on a list it may have rebound from
            # a save (`L = L_old`): a new list, which that save does not share
            node.func = self._ref(runtime.popped)
        if fn is runtime.append_tangent:
            node.func = self._ref(runtime.appended_tangent)  # a new list, as list_pop's
        return node

    def _is(self, func, fn):
        return self.ctx.namespace.resolve(func, self.ctx.local_names) is fn
