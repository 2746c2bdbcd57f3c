"""The rows of an argument a loop read in turn, summed after the reversed loop, read from the
argument itself rather than saved step by step.

Requires: a derivative specialized to its arguments' kinds for Python (not numba), after the
rewrites of ``tested.py``, and the calls ``scalars.Kinds`` found. Guarantees:

    n = len(xs)                                  n = len(xs)
    for t in range(n):                           for t in range(n):
        x = xs[t]                                    ...
        ...                                          saves.append((...,))
        saves.append((x, ...))          ->       for t in reversed(range(n)):
    dW_xs = []                                       ... = saves.pop()
    for t in reversed(range(n)):                     ...
        x, ... = saves.pop()                     dW += matmul_vjp_right_rows(dW_dys, xs, joins)
        ...
        dW_xs.append(x)
    dW += matmul_vjp_right_steps_known(dW_dys, dW_xs, joins)

where ``xs`` is a parameter, a float64 array of three dimensions the function never rebinds or
writes, ``n`` is bound once, both loops are at the top level and leave by no ``break``,
``continue`` or ``return``, ``t`` is not rebound in the first, ``x`` is read only by the save
there, only by the append in the reversed loop and nowhere after it, and ``dW_xs`` only by
the append and the sum. The list then holds ``xs[n - 1], ..., xs[0]``, whose rows joined are
``xs[::-1]`` as a matrix of those rows: ``runtime.matmul_vjp_right_rows`` makes that one copy
(the same matrix, so the same product), and the forward loop no longer makes a view per step
that the save keeps alive.
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import binding_counts, walk
from ..transform.nodes import call
from .tested import push_pop

LEAVES = (gast.Break, gast.Continue, gast.Return)


def run(fn_node, ctx, kinds, unwritten):
    """The rewrite (module docstring), for each list of saves bound to ``[]`` at the top level
    (``unwritten``: the float64 array parameters never rebound or written -> their numbers of
    dimensions)."""
    arrays = {p for p, ndim in unwritten.items() if ndim == 3}
    if not arrays:
        return
    for s in list(fn_node.body):
        if isinstance(s, gast.Assign) and isinstance(s.value, gast.List) and not s.value.elts \
                and isinstance(s.targets[0], gast.Name) and s.targets[0].id in kinds.saves:
            found = push_pop(fn_node, s.targets[0].id)
            if found is not None:
                Rows(fn_node, ctx, kinds, arrays, found).rewrite()


class Rows:
    def __init__(self, fn_node, ctx, kinds, arrays, found):
        self.fn_node, self.ctx, self.kinds, self.arrays = fn_node, ctx, kinds, arrays
        self.push, self.pop, self.back = found
        self.ahead = next(s for s in fn_node.body if isinstance(s, gast.For)
                          and self.push in s.body)
        self.counts = binding_counts(fn_node)

    def rewrite(self):
        pushed, popped = self.push.value.args[0], self.pop.targets[0]
        if not (isinstance(pushed, gast.Tuple) and isinstance(popped, gast.Tuple)
                and len(pushed.elts) == len(popped.elts) > 1):
            return
        n = self._trips()
        if n is None:
            return
        i = 0
        while i < len(pushed.elts):
            if len(pushed.elts) > 1 and self._row(pushed.elts[i], popped.elts[i], n):
                del pushed.elts[i], popped.elts[i]
            else:
                i += 1

    def _trips(self):
        """``n`` of ``range(n)`` and ``reversed(range(n))``, the two loops' (None: not so)."""
        first, second = self.ahead.iter, self.back.iter
        if not (_range(first) and isinstance(second, gast.Call) and len(second.args) == 1
                and self.kinds.resolve(second.func) is reversed and _range(second.args[0])):
            return None
        n, m = first.args[0], second.args[0].args[0]
        if not (isinstance(n, gast.Name) and isinstance(m, gast.Name) and n.id == m.id
                and self.counts[n.id] == 1 and self.kinds.resolve(first.func) is range
                and self.kinds.resolve(second.args[0].func) is range):
            return None
        if any(isinstance(c, LEAVES) for loop in (self.ahead, self.back) for c in walk(loop)):
            return None
        return n.id

    def _row(self, item, name, n):
        """Rewrite the item ``item`` saved (``name`` popped) if it is a row ``xs[t]`` read
        back only into a step list of a known product; whether it did."""
        if not (isinstance(item, gast.Name) and isinstance(name, gast.Name)
                and item.id == name.id):
            return False
        x = item.id
        made = self._made(x, n)
        appended = self._appended(x)
        if made is None or appended is None:
            return False
        assign, xs = made
        append, steps, total, deleted = appended
        self.ahead.body.remove(assign)
        self.back.body.remove(append)
        self.fn_node.body.remove(steps)
        for s in deleted:  # (`del dW_dys, dW_xs`: the list is no longer made)
            s.targets = [t for t in s.targets if not _is(t, steps.targets[0].id)]
            if not s.targets:
                self.fn_node.body.remove(s)
        dys, _, joins = total.args
        fresh = call(self.ctx, runtime.matmul_vjp_right_rows, dys, _load(xs), joins)
        total.func, total.args = fresh.func, fresh.args
        return True

    def _made(self, x, n):
        """``(x = xs[t], xs)`` in the first loop, if that is the only binding of ``x`` there,
        its one read the save, ``xs`` an argument of the kinds wanted, ``t`` the loop's own;
        ``len(xs)`` the trip count."""
        loop = self.ahead
        made = [s for s in loop.body if isinstance(s, gast.Assign) and any(
            _is(n_, x) for t in s.targets for n_ in walk(t))]
        if len(made) != 1 or len(made[0].targets) != 1 or not _is(made[0].targets[0], x):
            return None
        xs = self._row_read(made[0].value)
        reads = [n_ for n_ in walk(loop) if _is(n_, x) and isinstance(n_.ctx, gast.Load)]
        if xs is None or len(reads) != 1 or not self._length(n, xs):
            return None
        return (made[0], xs) if any(r is reads[0] for r in self.push.value.args[0].elts) else None

    def _row_read(self, value):
        """``xs`` if ``value`` is ``xs[t]`` of an argument of the kinds wanted and the first
        loop's own ``t``, which it does not rebind."""
        loop = self.ahead
        if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
                and isinstance(loop.target, gast.Name) and _is(value.slice, loop.target.id)):
            return None
        if value.value.id not in self.arrays or any(
            _is(n_, loop.target.id) and not isinstance(n_.ctx, gast.Load)
            for s in loop.body for n_ in walk(s)
        ):
            return None
        return value.value.id

    def _length(self, n, xs):
        """Whether the top level binds ``n = len(xs)`` (``n`` is bound once)."""
        return any(_assigns(s, n) and isinstance(s.value, gast.Call)
                   and self.kinds.resolve(s.value.func) is len and len(s.value.args) == 1
                   and _is(s.value.args[0], xs) for s in self.fn_node.body)

    def _appended(self, x):
        """``(steps.append(x), steps = [], the sum reading steps, the dels of steps)`` if the
        reversed loop reads ``x`` only there and binds it only by the pop, nothing after it
        reads ``x``, and ``steps`` is read only by the append and as the rows of
        ``matmul_vjp_right_steps_known`` after the loop."""
        found = [n_ for s in self.back.body for n_ in walk(s) if _is(n_, x)]
        reads = [n_ for n_ in found if not isinstance(n_.ctx, gast.Store)]
        stores = [n_ for n_ in found if isinstance(n_.ctx, gast.Store)]
        if len(reads) != 1 or len(stores) != 1 or not any(
                n_ is stores[0] for n_ in walk(self.pop.targets[0])):
            return None
        append = next((s for s in self.back.body if _appends(s, reads[0])), None)
        after = self.fn_node.body[self.fn_node.body.index(self.back) + 1:]
        if append is None or any(_is(n_, x) for s in after for n_ in walk(s)):
            return None
        return self._summed(append.value.func.value.id, append, after)

    def _summed(self, steps, append, after):
        made = [s for s in self.fn_node.body if _assigns(s, steps)
                and isinstance(s.value, gast.List) and not s.value.elts]
        totals = [c for s in after for c in walk(s) if self._rows_of(c, steps)]
        uses = [n_ for n_ in walk(self.fn_node) if _is(n_, steps)]
        deleted = [s for s in after if isinstance(s, gast.Delete)
                   and any(_is(t, steps) for t in s.targets)]
        dels = sum(_is(t, steps) for s in deleted for t in s.targets)
        if len(made) != 1 or self.counts[steps] != 1 or len(totals) != 1 or len(uses) != 3 + dels:
            return None
        return append, made[0], totals[0], deleted

    def _rows_of(self, c, steps):
        """Whether ``c`` is ``matmul_vjp_right_steps_known(dys, steps, joins)``."""
        return (isinstance(c, gast.Call) and len(c.args) == 3 and _is(c.args[1], steps)
                and self.kinds.resolve(c.func) is runtime.matmul_vjp_right_steps_known)


def _assigns(s, name):
    """Whether ``s`` is ``name = ...``."""
    return isinstance(s, gast.Assign) and len(s.targets) == 1 and _is(s.targets[0], name)


def _appends(s, read):
    """Whether ``s`` is ``steps.append(read)`` for a name ``steps``."""
    if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)):
        return False
    fn = s.value.func
    return (len(s.value.args) == 1 and s.value.args[0] is read
            and isinstance(fn, gast.Attribute) and fn.attr == "append"
            and isinstance(fn.value, gast.Name))


def _range(it):
    return isinstance(it, gast.Call) and len(it.args) == 1 and not it.keywords


def _is(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _load(name):
    return gast.Name(name, gast.Load(), None, None)
