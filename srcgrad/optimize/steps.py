"""A reversed loop's per-step contributions to a weight's gradient, summed once after it.

Requires: a generated reverse-mode function (``grad``, ``value_and_grad``, ``vjp``) for the
Python backend, after ``owned``. Guarantees: in a ``for`` loop whose body is plain statements
(assignments, ``+=``, comments), a statement ``dW += matmul_vjp_right(dy, x, W)`` (the
gradient of ``W`` in ``x @ W``, one product per iteration) becomes two appends, and the sum
is one call after the loop, ``matmul_vjp_right_steps`` (runtime/products.py): one matrix
product of the stacked (vectors) or joined (matrices) factors when ``W`` is a matrix, a
product per step otherwise. Likewise ``db += unbroadcast(g, b)`` (a bias broadcast over a
batch) becomes one append and ``unbroadcast_steps``: one sum of the stacked contributions.
The sum is the same; its rounding may differ.

    dWh = zeros_like(Wh)                            dWh = zeros_like(Wh)
    for t in reversed(range(n)):                    dWh_dys = []
        h = loop_saved.pop()                        dWh_xs = []
        dh_matmul_Wh = dh * (1 - h * h)     ->      for t in reversed(range(n)):
        dh = matmul_vjp_left(dh_matmul_Wh, h, Wh)       h = loop_saved.pop()
        dWh += matmul_vjp_right(dh_matmul_Wh, h, Wh)    dh_matmul_Wh = dh * (1 - h * h)
                                                        dh = matmul_vjp_left(dh_matmul_Wh, h, Wh)
                                                        dWh_dys.append(dh_matmul_Wh)
                                                        dWh_xs.append(h)
                                                    dWh += matmul_vjp_right_steps(dWh_dys,
                                                                                  dWh_xs, Wh)

In code specialized to its arguments' kinds the sums after one loop share a new list ``joins``
(``matmul_vjp_right_steps_joined``, ``unbroadcast_steps_joined``): the contributions a step
appends to several lists are often one array (``unbroadcast`` returns a contribution the
broadcast did not change), and ``runtime.joined`` stacks the very same arrays only once. The
numbers are those of the plain sums.

The values are kept as they were when appended, so nothing the loop runs may change an
array in place after it is made: the loop calls only helpers known to return new arrays or
their argument (``PURE``), NumPy ufuncs and ``pop()``; the only ``+=`` in it go into
gradients that start as new zeros just before the loop and that it reads nowhere else (they
can share no array with a kept value). ``dW`` is read nowhere else in the loop, ``W`` not
rebound in it. Anything else leaves the loop as it is.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..astutil import walk
from ..emit import naming
from ..emit.unparse import is_comment
from ..transform.nodes import assign, call, name

MODES = ("grad", "value_and_grad", "vjp")
# helpers returning a new array or one of their arguments, never writing into one
PURE = (
    runtime.unbroadcast, runtime.unreduce, runtime.shape_like, runtime.matmul_vjp_left,
    runtime.matmul_vjp_right, runtime.dot_vjp_left, runtime.dot_vjp_right,
)
ZEROS = (runtime.zeros_like,)  # helpers making the new zeros an accumulated gradient starts as
# helper summed over the steps -> (its sum over the lists of its per-step arguments, the
# stems of the names of those lists); the helper's last argument is the same at every step
FORMS = {
    runtime.matmul_vjp_right: (runtime.matmul_vjp_right_steps, naming.STEP_LISTS[:2]),
    runtime.unbroadcast: (runtime.unbroadcast_steps, naming.STEP_LISTS[2:]),
}
# the sums in code specialized to its arguments' kinds, sharing the arrays they join (never
# differentiated again, so they need not be plain NumPy code marked by_source)
JOINED = {
    runtime.matmul_vjp_right_steps: runtime.matmul_vjp_right_steps_joined,
    runtime.unbroadcast_steps: runtime.unbroadcast_steps_joined,
}


def run(fn_node, ctx):
    """The pass (see the module docstring)."""
    if ctx.mode not in MODES or ctx.for_numba or not ctx.split_recursion:
        return fn_node
    names = {ctx.named(fn): fn for fn in PURE + ZEROS if ctx.named(fn) is not None}
    summed = {ctx.named(fn): form for fn, form in FORMS.items() if ctx.named(fn) is not None}
    if summed:
        Steps(ctx, names, summed).block(fn_node.body)
    return fn_node


class Steps:
    def __init__(self, ctx, names, summed):
        self.ctx = ctx
        self.names = names  # generated name -> runtime helper, for the helpers above
        self.summed = summed  # generated name -> its form in FORMS

    def block(self, stmts):
        """Every loop of ``stmts`` (and of the blocks inside them) rewritten where it may be."""
        k = 0
        while k < len(stmts):
            s = stmts[k]
            for field_ in ("body", "orelse"):
                inner = getattr(s, field_, None)
                if isinstance(inner, list):
                    self.block(inner)
            if isinstance(s, gast.For) and not s.orelse:
                before, after = self.loop(s, stmts[:k])
                stmts[k:k + 1] = before + [s] + after
                k += len(before) + len(after)
            k += 1

    def loop(self, loop, preceding):
        """The statements to put before and after ``loop`` once its products are taken out of
        it (none where it is left as it is)."""
        found = [s for s in loop.body if self._product(s)]
        if not found or not self._plain(loop, preceding):
            return [], []
        before, after, body = [], [], []
        for s in loop.body:
            if s not in found or not self._alone(s, loop):
                body.append(s)
                continue
            acc, args = s.target.id, s.value.args
            steps, stems = self.summed[s.value.func.id]
            lists = [self.ctx.namer.fresh(stem.format(acc)) for stem in stems]
            before += [assign(v, gast.List([], gast.Load())) for v in lists]
            body += [_append(v, a.id) for v, a in zip(lists, args)]
            total = call(self.ctx, steps, *[name(v) for v in lists], name(args[-1].id))
            target = gast.Name(acc, gast.Store(), None, None)
            after.append(gast.AugAssign(target, gast.Add(), total))
        loop.body = body
        if len(after) > 1 and self.ctx.kinds:
            after = self._joined(after)
        return before, after

    def _joined(self, after):
        """The sums ``after`` a loop calling the ``JOINED`` forms with one new list of joins:
        the contributions appended to several lists are joined once where they are the same
        arrays."""
        joins = self.ctx.namer.fresh(naming.JOINS)
        sums = {self.ctx.named(steps): steps for steps in JOINED}
        for s in after:
            steps = sums[s.value.func.id]
            s.value = call(self.ctx, JOINED[steps], *s.value.args, name(joins))
        return [assign(joins, gast.List([], gast.Load())), *after]

    def _product(self, s):
        """Whether ``s`` is ``dW += helper(..., W)`` of a helper of ``FORMS``, all its
        arguments different names."""
        if not (isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add)
                and isinstance(s.target, gast.Name) and isinstance(s.value, gast.Call)):
            return False
        fn, args = s.value.func, s.value.args
        if not (isinstance(fn, gast.Name) and fn.id in self.summed) or s.value.keywords:
            return False
        return (len(args) == len(self.summed[fn.id][1]) + 1
                and all(isinstance(a, gast.Name) for a in args)
                and len({s.target.id} | {a.id for a in args}) == len(args) + 1)

    def _alone(self, s, loop):
        """Whether ``dW`` appears in the loop only as the target of ``s``, and ``W`` is not
        rebound in it."""
        acc, w = s.target.id, s.value.args[-1].id
        uses = [n for n in walk(loop) if isinstance(n, gast.Name) and n.id == acc]
        return len(uses) == 1 and w not in _plain_stores(loop.body) and w != loop.target.id

    def _plain(self, loop, preceding):
        """Whether the loop's body changes no array in place but new gradients it only adds to
        (see the module docstring)."""
        if not isinstance(loop.target, gast.Name):
            return False
        stored = _plain_stores(loop.body) | {loop.target.id}
        for s in loop.body:
            if is_comment(s) or isinstance(s, gast.Pass):
                continue
            if isinstance(s, gast.AugAssign):
                target = s.target.value if isinstance(s.target, gast.Subscript) else s.target
                if not isinstance(target, gast.Name) or target.id in stored:
                    return False
                if not self._new_zeros(target.id, loop, preceding):
                    return False
            elif not (isinstance(s, gast.Assign) and all(_plain_target(t) for t in s.targets)):
                return False
            if not all(self._pure(c) for c in walk(s) if isinstance(c, gast.Call)):
                return False
        return True

    def _new_zeros(self, acc, loop, preceding):
        """Whether ``acc`` holds new zeros made before the loop that nothing else holds: the
        last statement before it binding ``acc`` makes them, no statement since reads ``acc``,
        and the loop reads it only where it adds into it."""
        for s in reversed(preceding):
            if acc in _loads(s):
                return False
            if isinstance(s, gast.Assign) and any(
                    isinstance(t, gast.Name) and t.id == acc for t in s.targets):
                return len(s.targets) == 1 and self._zeros(s.value) and _only_added(acc, loop)
            if any(isinstance(n, gast.Name) and n.id == acc for n in walk(s)):
                return False
        return False

    def _zeros(self, value):
        if not isinstance(value, gast.Call):
            return False
        fn = value.func
        if isinstance(fn, gast.Name):
            return self.names.get(fn.id) in ZEROS
        return self._numpy(fn) in (np.zeros, np.zeros_like)

    def _pure(self, c):
        """Whether the call changes no array: a helper of ``PURE``, a NumPy ufunc, ``x.pop()``."""
        fn = c.func
        if isinstance(fn, gast.Name):
            return self.names.get(fn.id) in PURE
        if isinstance(fn, gast.Attribute) and fn.attr == "pop" and not c.args:
            return isinstance(fn.value, gast.Name)
        return isinstance(self._numpy(fn), np.ufunc) and "out" not in {k.arg for k in c.keywords}

    def _numpy(self, fn):
        """The NumPy function ``np.name`` means, if ``fn`` is that attribute of NumPy."""
        if not (isinstance(fn, gast.Attribute) and isinstance(fn.value, gast.Name)):
            return None
        if self.ctx.namespace.lookup(fn.value.id) is not np:
            return None
        return getattr(np, fn.attr, None)


def _plain_target(t):
    if isinstance(t, gast.Name):
        return True
    return isinstance(t, gast.Tuple) and all(isinstance(e, gast.Name) for e in t.elts)


def _plain_stores(stmts):
    """Names a plain assignment (not ``+=``) in ``stmts`` binds."""
    out = set()
    for s in stmts:
        if isinstance(s, gast.Assign):
            out |= {n.id for t in s.targets for n in walk(t) if isinstance(n, gast.Name)}
    return out


def _loads(s):
    return {n.id for n in walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _only_added(acc, loop):
    """Whether every appearance of ``acc`` in the loop is as what a ``+=`` adds into
    (``acc += v`` or ``acc[i] += v``)."""
    targets = set()
    for s in loop.body:
        if isinstance(s, gast.AugAssign):
            t = s.target.value if isinstance(s.target, gast.Subscript) else s.target
            if isinstance(t, gast.Name) and t.id == acc:
                targets.add(id(t))
                if isinstance(s.target, gast.Subscript) and acc in _loads(s.target.slice):
                    return False
                if acc in _loads(s.value):
                    return False
    uses = [n for n in walk(loop) if isinstance(n, gast.Name) and n.id == acc]
    return all(id(n) in targets for n in uses)


def _append(stack, value):
    method = gast.Attribute(name(stack), "append", gast.Load())
    return gast.Expr(gast.Call(method, [name(value)], []))
