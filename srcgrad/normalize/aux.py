"""Auxiliary outputs: ``grad(f, has_aux=True)`` differentiates the first element of the pair
``f`` returns and passes the second through.

Requires: a normalized body ending in ``return t`` (after SSA and CSE). Guarantees, with
``has_aux``: the function returns the output alone, and ``ctx.aux`` is the expression holding
the auxiliary value, which the transform returns beside the gradient (``(g, aux)``, or
``((value, aux), g)`` for ``value_and_grad``). When ``t`` is a pair built by the function itself
(``return loss, stats``) its elements are used directly; any other ``t`` is checked to be a pair
when the derivative runs:

    t = (loss, stats)                     return loss         (ctx.aux = stats)
    return t                    ->

    return result                         result_pair = split_aux(result, 'f')
                                          result_out = result_pair[0]
                                          result_aux = result_pair[1]
                                          return result_out   (ctx.aux = result_aux)

Without ``has_aux``, ``grad`` of a function that returns a tuple it built is refused here, with
the line of the ``return`` and the advice to pass ``has_aux=True``; a tuple that only the call
reveals is refused by ``unit_seed`` when the derivative runs.
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import ordered_walk
from ..emit import naming
from ..errors import NonScalarOutputError

SCALAR_MODES = ("grad", "value_and_grad")


def run(fn_node, ctx):
    """The pass: split the returned pair (``has_aux``), or refuse a returned tuple (``grad``)."""
    ret = fn_node.body[-1]
    pair = _built_pair(fn_node.body, ret.value)
    if not ctx.has_aux:
        if ctx.mode in SCALAR_MODES and pair is not None:
            _, elements = pair
            filename, lineno, _, line = ctx.location.of(ret)
            where = f'\n  File "{filename}", line {lineno}\n    {(line or "").strip()}'
            raise NonScalarOutputError(
                (), fn_node.name, container=f"tuple of {len(elements)} values", where=where
            )
        return fn_node
    if pair is not None and len(pair[1]) == 2:
        out, aux = pair[1]
        if isinstance(out, (gast.Name, gast.Constant)):
            # the tuple itself is now unused: dead code
            ctx.aux = aux
            ret.value = out
            return fn_node
    value = ret.value
    base = value.id if isinstance(value, gast.Name) else "out"
    names = [ctx.namer.fresh(p.format(base)) for p in (naming.PAIR, naming.OUT, naming.AUX)]
    check = gast.Call(
        gast.Name(ctx.global_name(runtime.split_aux, "split_aux"), gast.Load(), None, None),
        [value, gast.Constant(fn_node.name, None)], [],
    )
    split = [
        _assign(names[0], check),
        _assign(names[1], _item(names[0], 0)),
        _assign(names[2], _item(names[0], 1)),
    ]
    for s in split:
        gast.copy_location(s, ret)
    fn_node.body[-1:-1] = split
    ret.value = _name(names[1])
    ctx.aux = _name(names[2])
    return fn_node


def _built_pair(body, value):
    """``(statement, elements)`` when the returned value is a tuple the function builds: the
    statement assigning it (None for ``return (a, b)``) and the tuple's elements."""
    if isinstance(value, gast.Tuple):
        return None, value.elts
    if not isinstance(value, gast.Name):
        return None
    stores = [s for s in ordered_walk(gast.Module(body, []))
              if isinstance(s, gast.Assign)
              and any(isinstance(t, gast.Name) and t.id == value.id for t in s.targets)]
    if len(stores) == 1 and stores[0] in body and isinstance(stores[0].value, gast.Tuple):
        return stores[0], stores[0].value.elts
    return None


def _item(base, i):
    return gast.Subscript(_name(base), gast.Constant(i, None), gast.Load())


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def _assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)
