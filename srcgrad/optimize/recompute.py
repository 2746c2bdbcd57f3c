"""Saved numbers recomputed in the reversed loop instead of saved, in code numba compiles.

Requires: a derivative specialized to its arguments' kinds for ``backend="numba"``
(``ctx.for_numba``), the kinds ``scalars.Kinds`` found (the kinds of each list of saves, of
the top-level names, the float64 vectors never rebound or written). Guarantees: a number a
top-level loop over a range saves every iteration, computed in that iteration by a few
arithmetic operations from the loop's counter, numbers bound once before the loop, constants and
elements of read-only float64 vector parameters, is computed again from them where the reversed
loop restores it, in the same iteration (the counter has the same value there), instead of being
saved and restored:

    for i in range(n):                      for i in range(n):
        a = x[i + 1] - x[i] ** 2                a = x[i + 1] - x[i] ** 2
        s = s + a ** 2                          s = s + a ** 2
        saved.append((s_old, a))                saved.append(s_old)
    ...                                     ...
    for i in reversed(range(n)):            for i in reversed(range(n)):
        (s_old, a) = saved.pop()                s_old = saved.pop()
                                                a = x[i + 1] - x[i] ** 2

The expression is the same, of values that are the same, so the number is the same (numba
compiles both alike); a list left with nothing to save goes. For numba, a few operations on
values in registers or cache cost less than an array of saves allocated, written and read back
(Rosenbrock's gradient: no array of saves left). The typed arrays (``typed_saves.py``) hold what
remains.
"""

from __future__ import annotations

import gast

from ..astutil import walk

OPERATIONS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
MOST = 8  # operations recomputed for one number at most (more cost more than a load)


def run(fn_node, kinds, top):
    """Recompute what qualifies (module docstring); the kinds of the lists of saves left."""
    saves = dict(kinds.saves)
    from .typed_saves import _empty_list, _uses

    for init in list(fn_node.body):
        name = _empty_list(init)
        held = saves.get(name) if name else None
        if not held or not all(k in ("float", "int") for k in held):
            continue
        found = _uses(fn_node, name, kinds.is_range)
        if found is None:
            continue
        loop, append, pop = found
        pair = Loop(fn_node, kinds, top, loop, pop)
        redo = pair.recomputed(append)
        if redo:
            saves[name] = _rewrite(fn_node, init, append, pop, held, redo)
            if saves[name] is None:
                pair.drop_if_dead(fn_node, list(redo.values()))
    return saves


class Loop:
    """The forward loop ``loop`` and the reversed loop holding ``pop``: what can be recomputed
    there."""

    def __init__(self, fn_node, kinds, top, loop, pop):
        self.kinds, self.top, self.loop = kinds, top, loop
        self.back = next((s for s in fn_node.body if isinstance(s, gast.For)
                          and any(b is pop for b in s.body)), None)
        stores = _stores(fn_node)
        self.once = {n for n, c in stores.items() if c == 1 and self._before(fn_node, n)}
        self.params = {a.id for a in fn_node.args.args} - set(stores)
        self.body = _stores(loop.body)
        self.counter = loop.target.id if isinstance(loop.target, gast.Name) else None
        self.ok = self._paired(pop) and self.counter is not None

    def _before(self, fn_node, name):
        """``name`` bound by a top-level statement before the forward loop."""
        for s in fn_node.body:
            if s is self.loop:
                return False
            if isinstance(s, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == name for t in s.targets
            ):
                return True
        return False

    def _paired(self, pop):
        """The reversed loop runs over the same range with the same counter, which neither loop
        rebinds, the pop and the push once an iteration each, no ``break``/``continue``."""
        back, loop = self.back, self.loop
        if back is None or not isinstance(back.target, gast.Name) or back.orelse or loop.orelse:
            return False
        it = back.iter
        if not (isinstance(it, gast.Call) and len(it.args) == 1 and not it.keywords
                and self.kinds.resolve(it.func) is reversed):
            return False
        same = gast.dump(it.args[0]) == gast.dump(loop.iter)
        fixed = all(n.id in self.once or n.id in self.params
                    for a in loop.iter.args for n in walk(a) if isinstance(n, gast.Name))
        counter = getattr(loop.target, "id", None)
        return (same and fixed and not _jumps(loop) and not _jumps(back)
                and back.target.id == counter and counter not in self.body
                and counter not in _stores(back.body))

    def recomputed(self, append):
        """Position -> the expression recomputing the saved number there."""
        if not self.ok or not any(s is append for s in self.loop.body):
            return {}
        index = next(i for i, s in enumerate(self.loop.body) if s is append)
        item = append.value.args[0]
        elts = item.elts if isinstance(item, gast.Tuple) else [item]
        held = self.kinds.saves[append.value.func.value.id]
        found = {}
        for position, (elt, kind) in enumerate(zip(elts, held)):
            expr = self.value(elt, index) if isinstance(elt, gast.Name) else None
            env = {self.counter: "int", **{n: self.top.get(n) for n in self.once | self.params}}
            if expr is not None and _size(expr) <= MOST and self.kinds.expr(expr, env) == kind:
                found[position] = expr
        return found

    def drop_if_dead(self, fn_node, recomputed):
        """The forward loop goes if it only computes numbers nothing reads after it, and every
        operation of it that may raise is recomputed in the reversed loop (which raises it
        there); then the top-level numbers no longer read go too."""
        if not all(_pure_assign(s) for s in self.loop.body) or not self._raised_again(
            recomputed
        ):
            return
        index = next(i for i, s in enumerate(fn_node.body) if s is self.loop)
        if _read_first(fn_node.body[index + 1:], set(self.body) | {self.counter}):
            return
        del fn_node.body[index]
        _sweep(fn_node)

    def _raised_again(self, recomputed):
        """Whether each operation of the loop that may raise is among the ``recomputed``."""
        there = {gast.dump(n) for e in recomputed for n in walk(e) if _raising(n)}
        for i, s in enumerate(self.loop.body):
            again = [self.rebuilt(n, i) for n in walk(s.value) if _raising(n)]
            if any(a is None or gast.dump(a) not in there for a in again):
                return False
        return True

    def value(self, name, before):
        """The expression of leaves recomputing ``name`` as the loop body's statements before
        ``before`` bind it, or None."""
        if name.id == self.counter or name.id in self.params or (
            name.id in self.once and name.id not in self.body
        ):
            return gast.Name(id=name.id, ctx=gast.Load(), annotation=None, type_comment=None)
        if self.body.get(name.id) != 1:
            return None
        for i in range(before - 1, -1, -1):
            s = self.loop.body[i]
            if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name
            ) and s.targets[0].id == name.id:
                return self.rebuilt(s.value, i)
        return None

    def rebuilt(self, node, before):
        """``node`` with its names replaced by their expressions, or None."""
        if isinstance(node, gast.Constant) and type(node.value) in (int, float):
            return gast.Constant(value=node.value, kind=None)
        if isinstance(node, gast.Name):
            return self.value(node, before)
        parts = []
        if isinstance(node, gast.BinOp) and isinstance(node.op, OPERATIONS):
            parts = [self.rebuilt(node.left, before), self.rebuilt(node.right, before)]
            made = gast.BinOp(left=parts[0], op=node.op, right=parts[1])
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            parts = [self.rebuilt(node.operand, before)]
            made = gast.UnaryOp(op=node.op, operand=parts[0])
        elif (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
              and node.value.id in self.kinds.listable and node.value.id in self.params):
            parts = [self.rebuilt(node.slice, before)]
            made = gast.Subscript(value=gast.Name(id=node.value.id, ctx=gast.Load(),
                                                  annotation=None, type_comment=None),
                                  slice=parts[0], ctx=gast.Load())
        if not parts or any(p is None for p in parts):
            return None
        return made


RAISING = (gast.Div, gast.FloorDiv, gast.Mod)


def _raising(node):
    """Whether numba's code for ``node`` alone may raise: an element (bounds checked), a
    division, a power other than a literal one."""
    return isinstance(node, gast.Subscript) or isinstance(node, gast.BinOp) and (
        isinstance(node.op, RAISING)
        or isinstance(node.op, gast.Pow) and not isinstance(node.right, gast.Constant))


def _pure(node):
    """Arithmetic on names, constants and elements (what ``Loop.rebuilt`` makes)."""
    return all(isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Subscript, gast.Name, gast.Constant,
                              gast.Load, gast.operator, gast.unaryop)) for n in walk(node))


def _sweep(fn_node):
    """Top-level numbers nothing reads (any more) dropped."""
    dead = True
    while dead:
        read = _loads(fn_node)
        dead = [s for s in fn_node.body if _pure_assign(s) and s.targets[0].id not in read
                and not any(_raising(n) for n in walk(s.value))]
        fn_node.body[:] = [s for s in fn_node.body if not any(s is d for d in dead)]


def _pure_assign(s):
    """``name = arithmetic``."""
    return (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and _pure(s.value))


def _jumps(loop):
    """Whether ``loop`` may leave an iteration early (its pushes then not one per iteration)."""
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in walk(loop))


def _read_first(stmts, names):
    """Whether ``stmts`` may read one of ``names`` before binding it."""
    names = set(names)
    for s in stmts:
        if isinstance(s, (gast.For, gast.While, gast.If)):
            head = s.iter if isinstance(s, gast.For) else s.test
            inner = names - ({s.target.id} if isinstance(s, gast.For) and isinstance(
                s.target, gast.Name) else set())
            if _loads(head) & names or _read_first(s.body, inner) or _read_first(s.orelse,
                                                                                  names):
                return True
            continue
        if _loads(s) & names:
            return True
        if isinstance(s, gast.Assign):
            names -= {t.id for t in s.targets if isinstance(t, gast.Name)}
    return False


def _loads(node):
    return {n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _stores(node):
    """How many times each name is bound in ``node`` (a node or a list of statements)."""
    counts = {}
    for n in (m for s in (node if isinstance(node, list) else [node]) for m in walk(s)):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _size(expr):
    return sum(isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Subscript)) for n in walk(expr))


def _rewrite(fn_node, init, append, pop, held, redo):
    """The recomputed positions out of the push and the pop, their assignments after the pop;
    the kinds of the positions left (none: the list goes)."""
    item = append.value.args[0]
    elts = item.elts if isinstance(item, gast.Tuple) else [item]
    target = pop.targets[0]
    targets = target.elts if isinstance(target, gast.Tuple) else [target]
    kept = [i for i in range(len(elts)) if i not in redo]
    assigned = [gast.Assign(targets=[gast.Name(id=targets[i].id, ctx=gast.Store(),
                                               annotation=None, type_comment=None)],
                            value=expr, type_comment=None)
                for i, expr in sorted(redo.items())
                if not (isinstance(expr, gast.Name) and expr.id == targets[i].id)]
    if kept:
        one = len(kept) == 1
        item_left = elts[kept[0]] if one else gast.Tuple(elts=[elts[i] for i in kept],
                                                         ctx=gast.Load())
        append.value.args[0] = item_left
        pop.targets[0] = targets[kept[0]] if one else gast.Tuple(
            elts=[targets[i] for i in kept], ctx=gast.Store())
        _replace(fn_node, pop, [pop, *assigned])
        return tuple(held[i] for i in kept)
    _replace(fn_node, pop, assigned)
    _replace(fn_node, append, [])
    _replace(fn_node, init, [])
    return None


def _replace(fn_node, stmt, new):
    for node in walk(fn_node):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list):
                for i, s in enumerate(body):
                    if s is stmt:
                        body[i:i + 1] = new
                        return
