"""The adjoints of the reverse sweep: the one place cotangents are written and read.

Requires: a function that appends a statement to the sweep being built (``emit``), the variables
that may hold containers, and whether in-place updates are allowed (``optimize``). Guarantees:
``get`` reads the adjoint of a variable as an expression (a name, or the constant seed);
``accumulate`` adds a contribution to it -- the first one assigns (or aliases a name, where that
is safe), later ones add, into the buffer itself when no other name holds it. The state this
needs lives here and nowhere else:

    current     variable -> the expression its adjoint is now (often another adjoint's name)
    names       variable -> the name its adjoint is stored under (``x`` -> ``dx``)
    owned       adjoints holding an array made here, that no other name refers to: ``dx += g``
    read_only   of those, the ones that may be a read-only broadcast view: never ``+=``
    zeroed      adjoints made by ``zeros_like`` and since updated only element by element, where
                ``dx[i] += g`` is safe even for a list (no element is shared with another adjoint)

Inside a branch or a loop (``inside_control``) a contribution is never aliased, since another path
may not make the same alias; leaving an ``if`` or a loop joins what its paths produced.

    accumulate("x", dy, True)    (nothing: aliased, current["x"] is the name dy)
    accumulate("x", dy * c)      dx = dy + dy * c  (dx is owned now: a fresh array)
    accumulate("x", g)           dx += g
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import clone
from .nodes import assign, call, name

# Helpers whose result is always a new array no other name holds.
FRESH = (runtime.zeros_like, runtime.getitem_grad, runtime.unreduce, runtime.mean_grad)
# Of those, the ones that return a read-only broadcast view: `zero_item` and `add_at` copy it
# before their first update, and `+=` never updates it.
READ_ONLY = (runtime.unreduce, runtime.mean_grad)


class Adjoints:
    def __init__(self, ctx, emit, containers, optimize):
        self.ctx = ctx
        self.emit = emit
        self.containers = containers
        self.optimize = optimize
        self.current = {}
        self.names = {}
        self.owned = set()
        self.read_only = set()
        self.zeroed = set()
        self.inside_control = False
        self.arguments = {}  # parameter -> the name the argument as passed is kept under
        # variables whose adjoint the sweep may index or read fields of (containers, objects,
        # arrays written element by element), and those of them a zero reads where they may be
        # unbound: they start as None (reverse.py)
        self.structured = frozenset()
        self.named_zeros = set()

    # --- reading ------------------------------------------------------------------------------
    def get(self, var):
        """The adjoint of ``var`` as an expression, or None when nothing reached it yet."""
        return self.current.get(var)

    def name(self, var):
        """The name the adjoint of ``var`` is stored under."""
        if var not in self.names:
            self.names[var] = self.ctx.namer.adjoint(var)
        return self.names[var]

    def final(self, param):
        """The gradient returned for ``param``, with the structure and dtype of the argument."""
        g = self.current.get(param)
        argument = name(self.arguments.get(param, param))
        if g is None:
            # zeros with the argument's structure (a tuple stays a tuple) and dtype
            return call(self.ctx, runtime.as_like, gast.Constant(None, None), argument)
        if param in self.containers:
            return call(self.ctx, runtime.as_like, g, argument)
        return call(self.ctx, runtime.cast_like, g, argument)

    # --- writing ------------------------------------------------------------------------------
    def seed(self, var, value):
        """The adjoint of the output: ``dout = value``, or the constant ``value`` itself."""
        if isinstance(value, gast.Constant):
            self.current[var] = value
            return
        self.emit(assign(self.name(var), value))
        self.current[var] = name(self.name(var))

    def accumulate(self, var, contrib, may_alias=False, widen=False):
        """Add ``contrib`` to the adjoint of ``var``: the single place gradients accumulate.
        ``widen``: the contribution may be complex where the buffer is real, so it is never
        added in place."""
        current = self.current.get(var)
        target = self.name(var)
        self.zeroed.discard(var)
        if isinstance(contrib, gast.Name) and contrib.id != target:
            self.shared(contrib.id)
        if current is None:
            if isinstance(contrib, gast.Name) and (
                contrib.id == target or (may_alias and not self.inside_control)
            ):
                self.current[var] = contrib
                self.owned.discard(var)
                return
            self._assign(var, contrib, self.fresh(contrib))
        elif var in self.containers:
            self._assign(var, call(self.ctx, runtime.add, current, contrib), False)
        elif not widen and self._private(var, current):
            # a buffer no other name refers to: add into it
            store = gast.Name(target, gast.Store(), None, None)
            self.emit(gast.AugAssign(store, gast.Add(), contrib))
        else:
            self._assign(var, gast.BinOp(current, gast.Add(), contrib), True)

    def _private(self, var, current):
        return (
            self.optimize
            and var in self.owned
            and var not in self.read_only
            and isinstance(current, gast.Name)
            and current.id == self.name(var)
        )

    def _assign(self, var, value, fresh):
        """``dvar = value``; ``fresh``: value is a new array no other name holds."""
        self.emit(assign(self.name(var), value))
        self.current[var] = name(self.name(var))
        if fresh:
            self.owned.add(var)
        else:
            self.owned.discard(var)
        if self.fresh(value, READ_ONLY):
            self.read_only.add(var)
        elif fresh and not self.inside_control:
            # (inside a branch or loop, another path may still hold the view: stays may-be)
            self.read_only.discard(var)

    def forget(self, var):
        """The statement that bound ``var`` is undone: the value before it has its own adjoint."""
        self.current.pop(var, None)
        self.owned.discard(var)
        self.zeroed.discard(var)

    def set_zero(self, var, surely=None):
        """``dvar = zeros_like(var)``: a fresh zero adjoint.

        Where ``var`` may not exist (it is assigned only on some paths, and this is not one of
        them), the zero is ``0.0``: such an adjoint is only ever read on a path that defines it.
        """
        zero = self.zero_of(var, surely)
        self.emit(assign(self.name(var), zero))
        self.current[var] = name(self.name(var))
        if surely is None or var in surely:
            self.owned.add(var)
            self.zeroed.add(var)

    def zero_of(self, var, surely):
        """The zero adjoint of ``var``; ``surely``: the variables surely bound there. One that may
        be unbound gets ``0.0``, but for a structure whose adjoint the sweep indexes (a list
        bound late in a loop body and read in the next trip: a list's ``take_item`` of ``0.0``
        raised) it is ``zeros_like(var)``, ``var`` starting as None: where it is bound, the
        sweep holds its value there, and where it is not, ``zeros_like(None)`` is ``0.0``."""
        if surely is None or var in surely:
            return self.zeros(var)
        if var in self.structured:
            self.named_zeros.add(var)
            return self.zeros(var)
        return gast.Constant(0.0, None)

    def zeros(self, var):
        return call(self.ctx, runtime.zeros_like, name(var))

    def zero_item(self, var, index):
        """``dy = zero_item(dy, index)``: the elements a write overwrote no longer reach the
        output (a copy first, unless the buffer is private)."""
        d = self.current[var]
        own = self.name(var)
        buffer = d if var in self.owned else call(self.ctx, runtime.copy_array, d)
        self.emit(assign(own, call(self.ctx, runtime.zero_item, buffer, index)))
        self.current[var] = name(own)
        self.owned.add(var)
        self.zeroed.discard(var)

    def add_to_item(self, var, index, contrib, integer_index):
        """``dx[index] += g`` or ``dx = add_at(dx, index, g)`` into a private buffer; False
        when the adjoint of ``var`` is not one."""
        if var not in self.owned:
            return False
        acc = name(self.name(var))
        if var in self.zeroed and integer_index:
            # a zeros_like buffer and an integer index: a plain in-place add
            item = gast.Subscript(acc, clone(index), gast.Store())
            self.emit(gast.AugAssign(item, gast.Add(), contrib))
            return True
        self.emit(assign(acc.id, call(self.ctx, runtime.add_at, acc, index, contrib)))
        return True

    # --- ownership ----------------------------------------------------------------------------
    def shared(self, adjoint_name):
        """``adjoint_name`` is now also held by another name: its buffer is no longer private."""
        for v, n in self.names.items():
            if n == adjoint_name:
                self.owned.discard(v)
                self.zeroed.discard(v)

    def fresh(self, expr, helpers=FRESH):
        """Whether ``expr`` is a new array, never one the caller or another adjoint holds
        (made by one of ``helpers``, or by arithmetic when those are ``FRESH``)."""
        if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
            return helpers is FRESH
        if isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name):
            if expr.func.id == self.ctx.global_name(runtime.unbroadcast, "unbroadcast"):
                # returns its argument, or a new sum of it
                return bool(expr.args) and self.fresh(expr.args[0], helpers)
            return any(
                expr.func.id == self.ctx.global_name(fn, fn.__name__) for fn in helpers
            )
        return False

    # --- control flow -------------------------------------------------------------------------
    def materialize(self, touched):
        """Give every adjoint of ``touched`` a variable of its own (before a branch or loop)."""
        for var in sorted(touched & set(self.current)):
            own = self.name(var)
            current = self.current[var]
            if not (isinstance(current, gast.Name) and current.id == own):
                if isinstance(current, gast.Name):
                    self.shared(current.id)
                self.emit(assign(own, current))
                self.current[var] = name(own)
                self.owned.discard(var)
                self.zeroed.discard(var)

    def snapshot(self):
        return dict(self.current), set(self.owned), set(self.zeroed)

    def reset(self, snapshot):
        current, owned, zeroed = snapshot
        self.current, self.owned, self.zeroed = dict(current), set(owned), set(zeroed)

    def join_branches(self, entry, after_body, body, orelse, surely):
        """After both branches of an ``if`` (``orelse`` the one just swept): an adjoint only one
        branch assigned is zeroed in the other; one neither touched keeps its alias."""
        entry_current = entry[0]
        after_body, owned_body, zeroed_body = after_body
        after_orelse, owned_orelse = dict(self.current), set(self.owned)
        self.zeroed &= zeroed_body
        joined = set(after_body) | set(after_orelse)
        kept = {
            v: entry_current[v] for v in joined
            if v in entry_current
            and after_body.get(v) is entry_current[v]
            and after_orelse.get(v) is entry_current[v]
        }
        for var in sorted(joined - set(after_body)):
            body.append(assign(self.name(var), self.zero_of(var, surely)))
            owned_body.discard(var)
        for var in sorted(joined - set(after_orelse)):
            orelse.append(assign(self.name(var), self.zero_of(var, surely)))
            owned_orelse.discard(var)
        self.current = {v: kept.get(v) or name(self.name(v)) for v in joined}
        self.owned = owned_body & owned_orelse
        self.zeroed &= self.owned

    def private_copies(self, variables, surely):
        """``dx = copy_array(dx)`` before a loop, so that ``x[i]`` in it can add in place."""
        for var in sorted(variables - self.owned):
            if var in self.current and var in surely:
                own = self.name(var)
                self.emit(assign(own, call(self.ctx, runtime.copy_array, name(own))))
                self.owned.add(var)

    def leave_loop(self, entry, before, owned_before, zeroed_before):
        """After a loop's adjoint: every adjoint in ``entry`` lives under its own name, except
        the ones the loop left untouched (``before``: the adjoints at its start). A buffer is
        private after the loop only if it was before it too (``owned_before``), and a zeros
        buffer only if it was one before it too (``zeroed_before``): a loop may run no
        iteration, and then the adjoint is still the value it had at its start (a read-only
        view of a seed, a list's sparse cotangents), whatever buffer an iteration would have
        made."""
        after = self.current
        self.current = {v: name(self.name(v)) for v in entry}
        for v in entry:
            if v in before and after.get(v) is before[v]:
                self.current[v] = before[v]  # untouched by the loop: keep its alias
        self.owned &= entry & owned_before
        self.zeroed &= self.owned & zeroed_before

    def trial(self, entry):
        """Start a trial sweep (whose statements are dropped) from the adjoints ``entry``;
        returns what ``end_trial`` restores."""
        saved = self.current, self.owned, self.zeroed, self.inside_control
        self.current = {v: name(self.name(v)) for v in entry}
        self.owned = set(self.owned)
        self.zeroed = set(self.zeroed)
        self.inside_control = True
        return saved

    def end_trial(self, saved):
        self.current, self.owned, self.zeroed, self.inside_control = saved
