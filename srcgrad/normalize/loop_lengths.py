"""Python's own test at the end of each trip of a loop over a list the loop may resize.

Requires: ``for`` loops over a sequence lowered by ``DesugarControl`` (``for i in
range(len(seq)): v = seq[i]``, the loop marked ``runs_over``), helpers inlined, and list methods
the helpers' calls ANF writes (``xs = list_append(xs, v)``). Guarantees: a marked loop whose
body (inlined helpers' bodies included) calls a helper that makes a list longer or shorter, or a
function srcgrad does not see into, ends each trip with ``check_trips(i, n, seq)``
(``check_reversed_trips(i, n, xs, seq)`` for ``reversed(xs)``).

srcgrad runs the ``n`` trips the sequence's length gave when the loop began; Python's loop over
a list tests, at the end of each trip, whether the next position is in the list as it is then,
so a loop that appends to the list it runs over (a worklist) visits the new items too. Where
the two differ the check raises; elsewhere it costs a comparison per trip.

    for v in vs:                   for i in range(len_vs):
        s = s + v          ->          v = vs[i]
        vs.append(w)                   s = s + v
                                       vs = list_append(vs, w)
                                       check_trips(i, len_vs, vs)
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import ordered_walk, walk
from ..emit import naming
from ..frontend.resolve import MISSING

# the helpers that make a list longer or shorter (list methods, ``del xs[i]``)
RESIZERS = ("list_append", "list_pop", "list_insert", "pop_item", "list_extend", "clear_items",
            "concat_sequence")
_SEEN_INTO = ("numpy", "math", "builtins", "srcgrad", "scipy", "cmath", "operator")


def run(fn_node, ctx):
    """The pass."""
    loops = [n for n in walk(fn_node) if isinstance(n, gast.For) and getattr(
        n, "runs_over", None)]
    if not loops:
        return fn_node
    resizers = {ctx.global_name(getattr(runtime, name), name) for name in RESIZERS}
    for loop in loops:
        if not _may_resize(loop.body, resizers, ctx):
            continue
        seqs = list(loop.runs_over)
        check = runtime.check_trips
        if seqs[0] == "reversed":  # (``reversed(xs)``: xs, and the copy the loop runs over)
            check, seqs = runtime.check_reversed_trips, seqs[1:]
        args = [gast.Name(loop.target.id, gast.Load(), None, None), loop.iter.args[0]] + [
            gast.Name(seq, gast.Load(), None, None) for seq in seqs]
        name = ctx.global_name(check, check.__name__)
        call = gast.Call(gast.Name(name, gast.Load(), None, None), args, [])
        loop.body.append(gast.copy_location(gast.Expr(call), loop))
        loop.runs_over = None
    return fn_node


def _may_resize(body, resizers, ctx):
    """Whether a statement of ``body`` calls a helper of ``resizers`` or a function that is
    not NumPy's, Python's builtins, ``math``'s or srcgrad's own (a user's function that was
    not inlined, a recursive helper, ``heapq.heappush``), or is ``xs += ys`` (a list's ``+=``
    extends it in place)."""
    for n in walk(body):
        if isinstance(n, gast.AugAssign):
            return True
        if not isinstance(n, gast.Call):
            continue
        if isinstance(n.func, gast.Name) and n.func.id in resizers:
            return True
        if not isinstance(n.func, (gast.Name, gast.Attribute)):
            return True
        found = ctx.namespace.resolve(n.func, ctx.local_names)
        if found is not MISSING and (getattr(found, "__module__", None) or "").split(".")[
                0] not in _SEEN_INTO:
            return True  # (``heapq.heappush(todo, v)``, a user's function not inlined)
    return False


def may_resize(body):
    """Whether ``body``, as written (before ANF and inlining), may change a list's length: a
    list method that does, ``+=``, ``del``, or a call of a function by its name (a helper)."""
    for n in ordered_walk(gast.Module(list(body), [])):
        if isinstance(n, (gast.AugAssign, gast.Delete)) or isinstance(n, gast.Call) and (
                isinstance(n.func, gast.Name) or isinstance(n.func, gast.Attribute) and (
                    n.func.attr in ("append", "insert", "extend", "pop", "remove", "clear"))):
            return True
    return False


def reversed_named(loop, owner):
    """``for v in reversed(xs)``: ``loop.reversed_of`` names xs (control's check_reversed_trips
    reads it); ``reversed(b.items)`` of a body that may resize a list names the list first, by
    ``owner`` (ContainerMethods): the statements returned go before the loop."""
    it = loop.iter
    if not (isinstance(it, gast.Call) and len(it.args) == 1 and not it.keywords and (
            owner._resolve(it.func) is reversed)):
        return []
    pre = []
    if not isinstance(it.args[0], gast.Name) and may_resize(loop.body):
        held = owner._fresh(naming.SEQ)
        pre.append(owner._assign(held, it.args[0], loop))
        it.args[0] = gast.Name(held, gast.Load(), None, None)
    if isinstance(it.args[0], gast.Name):
        loop.reversed_of = it.args[0].id
    return pre
