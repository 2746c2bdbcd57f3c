"""The tape: what the primal sweep saves for the adjoint sweep, and the code that does it.

Requires: the normalized body, the variables assigned inside control flow (the ones SSA did not
rename) and what is bound before each statement. Guarantees: ``record`` puts a save
:class:`Marker` before every statement that overwrites a value the adjoint sweep may read back
(a variable assigned inside control flow, the last element of a list, an overwritten array
element), gives each loop a trip counter unless ``reversed(range(...))`` replays it, and keeps the
:class:`Entry` of every save in ``saves``: the adjoint sweep puts a restore marker of the same
entry after the adjoint of that statement, so a save and its restore are linked explicitly.
``lower`` then replaces every marker by plain Python, where the adjoint sweep reads the variable
(a value never read back is neither saved nor restored):

    kind        save                                    restore
    VALUE       x_saved.append(x)                       x = x_saved.pop()
    LAST        xs_saved.append(xs[-1])                 xs = list_append(xs, xs_saved.pop())
    APPEND      (nothing)                               xs = list_pop(xs)
    ITEM        y_saved.append(copy_item(y, i))         y = restore_item(y, i, y_saved.pop())
    ITERATION   loop_saved.append((t, x_old))           t, x_old = loop_saved.pop()

An ITERATION entry ends a loop body that saves several values once per iteration: its
temporaries the sweep reads, and the old values of its VALUE saves when that makes one push out of
several (those saves become ``x_old = x`` and ``x = x_old``). A lone value keeps its own list,
which is as fast and reads better. Stacks start empty at the top of the function, and a variable a
save may find unbound starts as ``None``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import gast

from .. import runtime
from ..analysis.loops import breaks, iteration_temporaries
from ..analysis.updates import is_setitem, list_op
from ..astutil import clone, ordered_walk, param_names, store_counts, stored, walk
from ..emit import naming
from ..normalize.aliasing import aliases
from .nodes import assign, call, name


class Kind(enum.Enum):
    VALUE = "the value a variable held before it is rebound"
    LAST = "the last element of a list that pop() removes"
    APPEND = "an element append() added: nothing saved, the restore removes it"
    ITEM = "the element an element write overwrites"
    ITERATION = "the values one loop iteration saves, as one tuple"


@dataclass(eq=False)
class Entry:
    kind: Kind
    var: str = ""
    index: object = None  # ITEM: the index expression of the write
    iteration: Entry | None = None  # VALUE: the ITERATION whose tuple may carry the old value
    temporaries: list = field(default_factory=list)  # ITERATION: values saved at its end
    carried: list = field(default_factory=list)  # ITERATION: names of old values in its tuple
    old: str | None = None  # VALUE carried in a tuple: the name holding the old value


class Marker(gast.stmt):
    """A statement that saves (``restore=False``) or restores ``entry`` once lowered."""

    _fields = ()

    def __init__(self, entry, restore):
        super().__init__()
        self.entry = entry
        self.restore = restore


def save(entry):
    return Marker(entry, False)


def restore(entry):
    return Marker(entry, True)


class Tape:
    def __init__(self, ctx, fn_node, definitions):
        self.ctx = ctx
        self.ops = ctx.ops
        self.assigned_in_control = ctx.assigned_in_control
        self.definitions = definitions
        self.params = param_names(fn_node)
        self.store_counts = store_counts(fn_node)
        # arrays written element by element: the sweep's restore_item writes the old elements
        # back into the array the name holds then, so a later rebinding of the name is undone
        # before it (else the restore goes into the new array, and views of the written one
        # keep the written values)
        self.item_written = {
            n.targets[0].id for n in walk(fn_node)
            if isinstance(n, gast.Assign) and is_setitem(self.ops, n)
        }
        self.depth = 0  # loops around the statement being recorded
        # what the adjoint sweep reads back
        self.saves = {}  # id(statement, loop or loop target) -> its entry
        self.loops = {}  # id(loop) -> (reversed by reversed(range(...)), trip counter name)
        self.iterations = {}  # id(loop) -> the ITERATION entry of its body
        # loop temporaries assigned once per iteration: saved in the iteration's tuple
        self.per_iteration = set()
        # what lowering needs
        self.maybe_unbound = []  # variables a save may find unbound: they start as None
        self.stacks = {}  # variable (or ITERATION entry) -> the name of its stack
        self.in_tuples = set()
        self.read = set()
        self.resized = set()  # what the sweep reads, with the names that hold the same list
        self.viewed = set()  # what the sweep reads, with the arrays its views share memory with
        self.tupled = set()

    # --- recording: the primal sweep ---------------------------------------------------------
    def _save(self, var, stmt, iteration=None):
        """A save marker before ``stmt`` overwrites ``var``, when its old value may exist.

        ``iteration``: the tape entry of the loop iteration that runs ``stmt`` exactly once; the
        old value may then travel in that iteration's tuple instead of a list of its own."""
        if var in self.per_iteration or (
            var not in self.assigned_in_control and var not in self.item_written
        ):
            return []
        if var not in self.definitions.maybe(stmt) and self.depth == 0:
            return []  # surely unbound: there is no old value
        if var not in (self.definitions.surely(stmt) or ()):
            self.maybe_unbound.append(var)
        entry = Entry(Kind.VALUE, var, iteration=iteration)
        self.saves[id(stmt)] = entry
        return [save(entry)]

    def record(self, stmts, iteration=None):
        """``stmts`` with save markers before the statements that overwrite what the sweep may
        read back; ``iteration``: the entry of the loop iteration ``stmts`` are the body of."""
        out = []
        for s in stmts:
            if (
                isinstance(s, gast.Assign)
                and list_op(self.ops, s)
                and s.targets[0].id in self.assigned_in_control
            ):
                # a list growing or shrinking in place: undone element by element in the sweep
                popped = list_op(self.ops, s) is runtime.list_pop
                kind = Kind.LAST if popped else Kind.APPEND
                entry = self.saves[id(s)] = Entry(kind, s.targets[0].id)
                out += [save(entry), s] if popped else [s]
            elif isinstance(s, gast.Assign) and is_setitem(self.ops, s):
                index = self.ops[id(s)].args["index"]
                entry = self.saves[id(s)] = Entry(Kind.ITEM, s.targets[0].id, index)
                out += [save(entry), s]
            elif isinstance(s, gast.Assign):
                out += self._save(s.targets[0].id, s, iteration) + [s]
            elif isinstance(s, gast.If):
                s.body = self.record(s.body)
                s.orelse = self.record(s.orelse)
                out.append(s)
            elif isinstance(s, (gast.For, gast.While)):
                out += self._primal_loop(s)
            else:
                out.append(s)
        return out

    def _primal_loop(self, loop):
        """The loop, with a trip counter unless ``reversed(range(...))`` replays it, and the
        save of its iteration's tuple at the end of its body."""
        reversible = self._reversible(loop)
        pre, prefix, trips = [], [], None
        if not reversible:
            trips = self.ctx.namer.fresh(naming.TRIPS)
            pre, prefix = self._count_trips(loop, trips)
        self.depth += 1
        if isinstance(loop, gast.For) and not reversible:
            entry = self.saves[id(loop.target)] = Entry(Kind.VALUE, loop.target.id)
            prefix.append(save(entry))
        suffix = []
        iteration = None
        if not breaks(loop.body):
            # one tuple per iteration: its temporaries, and the values it overwrites (a loop
            # that may break has no last-iteration end: it keeps the per-statement saves)
            temporaries = iteration_temporaries(
                loop, self.ops, self.assigned_in_control, self.store_counts, self.params
            )
            self.per_iteration |= set(temporaries)
            iteration = Entry(Kind.ITERATION, temporaries=temporaries)
            self.iterations[id(loop)] = iteration
            suffix = [save(iteration)]
        loop.body = prefix + self.record(loop.body, iteration) + suffix
        self.depth -= 1
        self.loops[id(loop)] = (reversible, trips)
        return pre + [loop]

    def _reversible(self, loop):
        """Whether ``reversed(range(...))`` replays the loop: its bounds never change, its body
        neither rebinds its index nor breaks."""
        return (
            isinstance(loop, gast.For)
            and all(
                isinstance(a, gast.Constant)
                or (isinstance(a, gast.Name) and a.id not in self.assigned_in_control)
                for a in loop.iter.args
            )
            and loop.target.id not in stored(loop.body)
            and not breaks(loop.body)
        )

    def _count_trips(self, loop, trips):
        """``trips = 0`` before the loop (saved when the loop is inside another) and
        ``trips = trips + 1`` to start its body; the save of ``trips`` belongs to the loop."""
        self.assigned_in_control.add(trips)
        init = assign(trips, gast.Constant(0, None))
        pre = self._save(trips, init) + [init]
        step = gast.BinOp(name(trips), gast.Add(), gast.Constant(1, None))
        self.saves[id(loop)] = self.saves.pop(id(init), None)
        return pre, [assign(trips, step)]

    # --- lowering ----------------------------------------------------------------------------
    def lower(self, primal, sweep, named=()):
        """``primal`` and ``sweep`` with their markers lowered, after the stacks they use;
        ``named``: variables the sweep reads where they may be unbound (they start as None)."""
        self.read, self.viewed = _reads(sweep, aliases(primal, self.ctx))
        # (an append or a pop changes the list itself, read under its other names: `seq = vs`,
        # `seq_2 = iteration_sequence(seq)`; an item read, `v = vs[-1]`, keeps what it read)
        self.resized = _with_bases(self.read, self._renames(primal))
        self.tupled = self._tupled(primal)
        primal = self._rewrite(primal)
        sweep = self._rewrite(sweep)
        inits = [
            assign(v, gast.Constant(None, None))
            for v in dict.fromkeys(self.maybe_unbound + sorted(named))
            if v in self.stacks or v in self.in_tuples or v in named
        ]
        inits += [assign(stack, gast.List([], gast.Load())) for stack in self.stacks.values()]
        return inits + primal + sweep

    def _renames(self, primal):
        """``{r: {x}}`` for ``r = x`` and ``r = iteration_sequence(x)`` in ``primal``: ``r``
        holds the list ``x`` holds."""
        out = {}
        for n in ordered_walk(gast.Module(list(primal), [])):
            if not (isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name)):
                continue
            value = n.value
            if isinstance(value, gast.Call) and len(value.args) == 1 and isinstance(
                    value.func, gast.Name) and self.ctx.namespace.resolve(
                    value.func, self.ctx.local_names) is runtime.iteration_sequence:
                value = value.args[0]
            if isinstance(value, gast.Name) and value.id != n.targets[0].id:
                out.setdefault(n.targets[0].id, set()).add(value.id)
        return out

    def _tupled(self, primal):
        """The VALUE saves whose old value rides in their iteration's tuple."""
        members = {}
        for marker in _markers(primal):
            entry = marker.entry
            if entry.kind is Kind.VALUE and entry.iteration is not None and entry.var in self.read:
                members.setdefault(entry.iteration, []).append(entry)
        tupled = set()
        for iteration, saves in members.items():
            if len(self._kept(iteration)) + len(saves) > 1:
                tupled.update(saves)
        return tupled

    def _kept(self, iteration):
        """The iteration's temporaries the sweep reads."""
        return [v for v in iteration.temporaries if v in self.read]

    def _rewrite(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, Marker):
                out.extend(self._lower(s))
                continue
            for field_ in ("body", "orelse"):
                inner = getattr(s, field_, None)
                if isinstance(inner, list) and inner:
                    empty = [gast.Pass()] if field_ == "body" else []
                    setattr(s, field_, self._rewrite(inner) or empty)
            out.append(s)
        return out

    def _lower(self, marker):
        entry = marker.entry
        if entry.kind is Kind.ITERATION:
            return self._iteration(marker)
        wanted = {Kind.VALUE: self.read, Kind.ITEM: self.viewed}.get(entry.kind, self.resized)
        if entry.var not in wanted:
            return []
        if entry in self.tupled:
            return [self._swap(entry, marker.restore)]
        if entry.kind is Kind.APPEND:
            return [assign(entry.var, call(self.ctx, runtime.list_pop, name(entry.var)))]
        stack = self._stack(entry.var, naming.SAVED.format(entry.var))
        lowering = _RESTORES if marker.restore else _SAVES
        return [lowering[entry.kind](self.ctx, entry, stack)]

    def _stack(self, key, stem):
        if key not in self.stacks:
            self.stacks[key] = self.ctx.namer.fresh(stem)
        return self.stacks[key]

    def _swap(self, entry, is_restore):
        """``x_old = x`` (save) or ``x = x_old`` (restore): the tuple carries ``x_old``."""
        if entry.old is None:
            entry.old = self.ctx.namer.fresh(naming.OLD.format(entry.var))
            entry.iteration.carried.append(entry.old)
        self.in_tuples.add(entry.var)
        if is_restore:
            return assign(entry.var, name(entry.old))
        return assign(entry.old, name(entry.var))

    def _iteration(self, marker):
        """``loop_saved.append((a, b))`` at the end of an iteration, ``a, b = loop_saved.pop()``
        at the start of its adjoint."""
        entry = marker.entry
        kept = self._kept(entry) + entry.carried
        if not kept:
            return []
        stack = self._stack(entry, naming.LOOP_SAVED)
        if marker.restore:
            targets = [gast.Name(v, gast.Store(), None, None) for v in kept]
            target = targets[0] if len(targets) == 1 else gast.Tuple(targets, gast.Store())
            return [gast.Assign([target], _pop(stack), None)]
        values = name(kept[0]) if len(kept) == 1 else gast.Tuple(
            [name(v) for v in kept], gast.Load()
        )
        return [_push(stack, values)]


def _markers(stmts):
    return [n for n in ordered_walk(gast.Module(stmts, [])) if isinstance(n, Marker)]


def _reads(sweep, views):
    """The names the adjoint sweep reads, with the indices of the element writes it undoes; and
    those names with the arrays their views share memory with (``_with_bases``): an element
    write into such an array is undone too, a rebinding of a name need not be."""
    read = set()
    for s in sweep:
        for n in ordered_walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                read.add(n.id)
    viewed = _with_bases(read, views)
    for marker in _markers(sweep):
        entry = marker.entry
        if marker.restore and entry.kind is Kind.ITEM and entry.var in viewed:
            read |= {n.id for n in walk(entry.index) if isinstance(n, gast.Name)}
            read.add(entry.var)  # restore_item(y, i, ...) writes into the array y holds
    return read, viewed | read


def _with_bases(read, views):
    """``read`` with the arrays its views share memory with: the sweep reads a view ``r = x[1:]``
    for the values it had when made, so a later write into ``x`` is undone before (its ITEM
    restore), and the sweep reads ``x`` through ``r``."""
    pending = list(read)
    read = set(read)
    while pending:
        for base in views.get(pending.pop(), ()):
            if base not in read:
                read.add(base)
                pending.append(base)
    return read


def _push(stack, value):
    append = gast.Attribute(name(stack), "append", gast.Load())
    return gast.Expr(gast.Call(append, [value], []))


def _pop(stack):
    return gast.Call(gast.Attribute(name(stack), "pop", gast.Load()), [], [])


_SAVES = {
    Kind.VALUE: lambda ctx, e, stack: _push(stack, name(e.var)),
    Kind.LAST: lambda ctx, e, stack: _push(
        stack, gast.Subscript(name(e.var), gast.Constant(-1, None), gast.Load())
    ),
    Kind.ITEM: lambda ctx, e, stack: _push(
        stack, call(ctx, runtime.copy_item, name(e.var), clone(e.index))
    ),
}
_RESTORES = {
    Kind.VALUE: lambda ctx, e, stack: assign(e.var, _pop(stack)),
    Kind.LAST: lambda ctx, e, stack: assign(
        e.var, call(ctx, runtime.list_append, name(e.var), _pop(stack))
    ),
    Kind.ITEM: lambda ctx, e, stack: assign(
        e.var, call(ctx, runtime.restore_item, name(e.var), clone(e.index), _pop(stack))
    ),
}
