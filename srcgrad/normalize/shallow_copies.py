"""``P.copy()`` of a parameter: an array's copy for an array, a shallow copy for a list or dict.

srcgrad takes ``y = x.copy()`` for a new array that no other name holds, so a write into it
(``y[0] += v``) is a write into the copy alone. Of a list or dict argument, ``L.copy()`` (and
``copy.copy(L)``) is a new list holding the same arrays: ``M = L.copy(); M[0] *= 0.9`` or
``O = L.copy()[0]; O *= 0.9`` writes into ``L[0]``'s array, which the function may read again.
Which of the two the argument is is known only when the derivative runs: where the function
writes in place into the copy's items (or into a name bound to one of them), a check before the
statement that copies raises a located error when the argument is not an array
(``runtime.check_copied_array``), instead of computing the unshared answer. A copy that is only
read, appended to or given new items (``M = L.copy(); M.append(v)``, ``e = d.copy();
e["b"] = v``) is what Python computes either way, and gets no check.

A name unpacked from a parameter (``a, L = P``) is of a kind known only then too, and so is
each name of a checkpointed loop's state in its step (``(L, z) = state``, checkpoint.py, which
makes ``L.copy()`` of a name it knows for a list ``list(L)``).

Requires: the checked user function (after ``check``; names bound, ``ctx.namespace``), not yet
in A-normal form. Guarantees: before each statement that copies a parameter, or a name unpacked
from one (``P.copy()``, ``copy.copy(P)``), whose copy's items the function may write into in
place, a ``check_copied_array(P, 'P')`` statement; nothing else changes. Generated code (a
derivative differentiated again) is left as it is."""

from __future__ import annotations

import ast
import copy as copy_module
import types

import gast

from .. import runtime
from ..astutil import param_names, walk
from ..checkpoint_sharing import NUMPY_WRITES
from ..errors import UnsupportedSyntaxError
from ..frontend.source import is_derivative

# methods of an array that write into it
WRITING_METHODS = frozenset({"sort", "fill", "put", "partition", "itemset", "resize", "setfield"})


def _root(node):
    """The name at the bottom of ``a[i].b[j]``, or None."""
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _copied(value, params, namespace, local):
    """The parameter ``value`` copies (``P.copy()``, ``copy.copy(P)``), or the text of the item
    or field of a parameter or a local name it copies (``P[0].copy()``: ``"P[0]"``; ``P[i]``,
    ``P[0][0:1]``), or None."""
    if not isinstance(value, gast.Call) or value.keywords:
        return None
    func = value.func
    if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
        target = func.value
    elif len(value.args) == 1 and namespace.resolve(func, local) is copy_module.copy:
        target = value.args[0]
    else:
        return None
    if isinstance(target, gast.Name):
        return target.id if target.id in params else None
    part = target
    while isinstance(part, (gast.Subscript, gast.Attribute)):
        part = part.value
    # an item or field of a parameter, or of a name of the function's own (`P = [x, [a]]`:
    # `P[1]` is a list whose copy shares its arrays, which aliasing.same_items does not follow)
    if isinstance(part, gast.Name) and (part.id in params or part.id in local):
        return ast.unparse(gast.gast_to_ast(target))
    return None


def _computed_key(text):
    """Whether the item ``text`` (``_copied``'s) is taken at a key with a call, a ``:=`` or a
    lambda in it, which the check cannot read again (``P[len(P) - 1]``, ``P[rng.integers(3)]``)."""
    return any(isinstance(n, gast.Subscript) and any(
        isinstance(k, (gast.Call, gast.NamedExpr, gast.Lambda)) for k in walk(n.slice))
        for n in walk(_expression(text)))


def _expression(text):
    """The expression ``_copied`` gave the text of, to read again in the check."""
    return gast.ast_to_gast(ast.parse(text, mode="eval")).body


def _unknown_kinds(fn_node):
    """The parameters, and the names bound to one of them, to an item or field of one, or
    unpacked from one (``L = P[1]``, ``for L in P``, ``a, L = P``; a checkpointed loop's
    step's ``(L, z) = state``, checkpoint.py): what kind of value each is, is known only when
    the derivative runs."""
    out, size = set(param_names(fn_node, packed=True)), -1
    bindings = [(n.targets, n.value) for n in walk(fn_node) if isinstance(n, gast.Assign)]
    bindings += [([n.target], n.iter) for n in walk(fn_node) if isinstance(n, gast.For)]
    while size != len(out):
        size = len(out)
        for targets, value in bindings:
            if (isinstance(value, (gast.Name, gast.Subscript, gast.Attribute))
                    and _root(value) in out):
                out |= {t.id for target in targets for t in walk(target)
                        if isinstance(t, gast.Name) and isinstance(t.ctx, gast.Store)}
    return out


def _state_copies(fn_node, ctx):
    """The statements of a checkpointed loop's step before its loop (``(L, z) = state``,
    ``L = L.copy()``, checkpoint.py): the copies of its state the step makes, not the user's."""
    if not hasattr(ctx.fn, "__srcgrad_kept_state__"):
        return set()
    return {id(s) for s in fn_node.body if isinstance(s, gast.Assign)}


def _copies_in(node, params, namespace, local):
    """(call, parameter) of each copy of a parameter in ``node``."""
    for n in walk(node):
        p = _copied(n, params, namespace, local)
        if p is not None:
            yield n, p


class _Sites:
    """Each copy of a parameter, the names that hold it (``M``) and its items (``O``)."""

    def __init__(self, fn_node, ctx):
        self.namespace, self.local = ctx.namespace, ctx.local_names
        self.params = _unknown_kinds(fn_node)
        self.skip = _state_copies(fn_node, ctx)
        self.copies = {}  # name -> parameters it may be a copy of
        self.items = {}  # name -> parameters it may be an item of a copy of
        assigns = [n for n in walk(fn_node) if isinstance(n, gast.Assign)
                   and id(n) not in self.skip]
        loops = [n for n in walk(fn_node) if isinstance(n, gast.For)]
        changed = True
        while changed:
            changed = False
            for a in assigns:
                changed |= self._bind(a.targets, a.value)
            for loop in loops:  # for o in M: o is an item
                changed |= self._bind_items([loop.target], self._held(loop.iter))

    def _held(self, value):
        """The parameters whose copy's items ``value`` may hold or be."""
        out = {p for _, p in _copies_in(value, self.params, self.namespace, self.local)}
        for n in walk(value):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                out |= self.copies.get(n.id, set()) | self.items.get(n.id, set())
        return out

    def _bind(self, targets, value):
        changed = False
        copied = _copied(value, self.params, self.namespace, self.local)
        for t in targets:
            if copied is not None and isinstance(t, gast.Name):
                before = self.copies.setdefault(t.id, set())
                changed |= copied not in before
                before.add(copied)
        if copied is None:
            changed |= self._bind_items(targets, self._held(value))
        return changed

    def _bind_items(self, targets, held):
        changed = False
        if not held:
            return False
        for t in targets:
            for n in walk(t):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    before = self.items.setdefault(n.id, set())
                    changed |= not held <= before
                    before |= held
        return changed

    def written(self, fn_node):
        """The parameters a copy of which the function may write into the items of in place."""
        out = set()
        for n in walk(fn_node):
            if isinstance(n, gast.AugAssign):
                if isinstance(n.target, gast.Name):
                    out |= self.items.get(n.target.id, set())  # O *= v
                else:
                    out |= self._reached(n.target)  # M[0] *= v, O[1] += v
            elif isinstance(n, gast.Assign):
                for t in n.targets:
                    if isinstance(t, (gast.Subscript, gast.Attribute)):
                        out |= self._into_item(t)  # O[1] = v, M[0][1] = v
            elif isinstance(n, gast.Call):
                out |= self._call_writes(n)
        return out

    def _reached(self, target):
        name = _root(target)
        return self.copies.get(name, set()) | self.items.get(name, set())

    def _into_item(self, target):
        name = _root(target)
        if name in self.items:
            return self.items[name]
        # M[0] = v gives the copy a new item; M[0][1] = v writes into the item
        inner = target.value
        if name in self.copies and isinstance(inner, (gast.Subscript, gast.Attribute)):
            return self.copies[name]
        return set()

    def _call_writes(self, call):
        out = set()
        func = call.func
        if isinstance(func, gast.Attribute) and func.attr in WRITING_METHODS:
            out |= self.items.get(_root(func.value), set())
            if isinstance(func.value, gast.Subscript):
                out |= self._reached(func.value)
        for k in call.keywords:
            if k.arg == "out":
                out |= self._held(k.value)
        name = func.attr if isinstance(func, gast.Attribute) else None
        if call.args and (name in NUMPY_WRITES or name == "at"):
            out |= self._held(call.args[0])
        fn = self.namespace.resolve(func, self.local) if isinstance(
            func, (gast.Name, gast.Attribute)) else None
        if isinstance(fn, types.FunctionType) or (
                isinstance(func, gast.Name) and func.id in self.local):
            for a in call.args:  # a helper of the user's may write into what it is given
                out |= self._held(a)
        return out


def run(fn_node, ctx):
    """A check before each statement that copies a parameter the function writes into the
    items of a copy of."""
    if is_derivative(ctx.fn):
        return fn_node
    sites = _Sites(fn_node, ctx)
    if not sites.copies and not sites.items:
        return fn_node
    written = sites.written(fn_node)
    if not written:
        return fn_node
    helper = ctx.global_name(runtime.check_copied_array, "check_copied_array")
    for block in _blocks(fn_node):
        new = []
        for stmt in block:
            if id(stmt) in sites.skip:
                new.append(stmt)
                continue
            compound = isinstance(stmt, (gast.For, gast.While, gast.If, gast.With, gast.Try))
            part = _header(stmt) if compound else stmt  # (a body's statements: their own block)
            copies = _copies_in(part, sites.params, sites.namespace, sites.local)
            for p in sorted({p for _, p in copies} & written):
                if _computed_key(p):
                    raise ctx.location.error(UnsupportedSyntaxError, stmt, (
                        f"srcgrad does not support writing into the items of a copy of "
                        f"`{p}`, an item taken at a key a call computes: the "
                        f"item may be a list or dict, whose copy shares its arrays, which "
                        f"srcgrad checks when the derivative runs by reading the item again. "
                        f"Bind the key to a name first (`k = ...; C = P[k].copy()`)"))
                call = gast.Call(gast.Name(helper, gast.Load(), None, None),
                                 [_expression(p), gast.Constant(p, None)], [])
                check = gast.Expr(gast.copy_location(call, stmt))
                gast.copy_location(check, stmt)
                new.append(check)
            new.append(stmt)
        block[:] = new
    return fn_node


def _header(stmt):
    """The expressions of a compound statement evaluated before its body."""
    parts = [getattr(stmt, f) for f in ("iter", "test") if getattr(stmt, f, None) is not None]
    parts += [item.context_expr for item in getattr(stmt, "items", ())]
    return gast.Module([gast.Expr(p) for p in parts], [])


def _blocks(fn_node):
    """Every statement list of the function, innermost included."""
    out = [fn_node.body]
    for n in walk(fn_node):
        if n is fn_node:
            continue
        for field in ("body", "orelse", "finalbody"):
            value = getattr(n, field, None)
            if isinstance(value, list) and value and isinstance(value[0], gast.stmt):
                out.append(value)
        for h in getattr(n, "handlers", ()):
            out.append(h.body)
    return out
