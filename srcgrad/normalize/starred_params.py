"""``f(*p)`` / ``f(**p)`` of an inlined helper's own parameter ``p``, spelled out with what the
call site passes; part of ``inline``.

Requires: a helper's body renamed apart (``renames``), ``bound`` its ``(parameter, argument)``
pairs, ``defs`` the values of the names assigned once (``StaticValues.defs``). Guarantees:
each ``*p`` of a parameter the body never rebinds, given a tuple display or a name assigned
one once (a tuple never changes), is ``p[0], ..., p[n-1]``; each ``**p`` given a dict display
with constant string keys is ``k=p["k"], ...``; any other is refused at the star, located in
the helper. JAX's ``unflatten(aux, children)`` written ``cls(*children)``:

    def unflatten(aux, ch):                 ch_2 = (b_parts_0_0,)
        return Box(*ch)           ->        ... Box(ch_2[0]) ...
"""

from __future__ import annotations

import gast

from ..astutil import clone, walk
from ..errors import UnsupportedSyntaxError
from .appended_spreads import reading_mentions
from .callables import StaticArgumentNeeded


def spell_out(node, bound, renames, forwarded, values, ctx, location):
    """``node`` (the renamed body) with its parameters' ``*``/``**`` spelled out, in place;
    a parameter given the differentiated function's own parameter, by the length of the
    tuple a call passes there (``Unpacked`` where not yet specialized so)."""
    given = {renames[p]: value for p, value in bound if p not in forwarded}
    spread = _spread(node) & set(given)
    if not spread:
        return
    read = _only_read(node)
    shapes = {p: _display(given[p], values.defs) for p in spread if p in read}
    for p in [p for p in spread if p in read and shapes[p] is None]:
        shapes[p] = _own_tuple(given[p], values, ctx)
    for call in walk(node):
        if isinstance(call, gast.Call):
            call.args = [e for a in call.args for e in _args(a, shapes, given, location)]
            call.keywords = [e for k in call.keywords
                             for e in _keywords(k, shapes, given, location)]


class Unpacked(StaticArgumentNeeded):
    """The transformed function unpacks parameters in calls (``f(*xs)``, ``f(**kw)``): the
    derivative is specialized per length (keys) of what a call passes them (``unpacked``)."""

    def __init__(self, unpacked, message, **where):
        self.unpacked = tuple(sorted(unpacked))
        super().__init__(self.unpacked[0], message, held=True, **where)


def spell_out_own(fn_node, ctx):
    """``fn_node``'s ``*p`` / ``**p`` in calls of its own parameters ``p`` (never rebound or
    changed), spelled out with the length (keys) of what the call passes (``ctx.packed``); a
    derivative not yet specialized so raises ``Unpacked``."""
    args = fn_node.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    spread = _call_spreads(fn_node) & params & _only_read(fn_node)
    if not spread:
        return
    missing = spread - set(ctx.packed)
    if missing:
        star = next(n for n in walk(fn_node) if isinstance(n, (gast.Starred, gast.keyword))
                    and isinstance(n.value, gast.Name) and n.value.id in missing)
        filename, lineno, offset, line = ctx.location.of(star)
        raise Unpacked(missing, f"`{star.value.id}` is unpacked in a call: srcgrad specializes "
                       "the derivative per length (keys) of the tuple or list (dict) passed, "
                       "so call the derivative with one there", filename=filename,
                       lineno=lineno, offset=offset, line=line)
    given = {p: gast.Name(p, gast.Load(), None, None) for p in spread}
    shapes = {p: ctx.packed[p].length for p in spread}
    for call in walk(fn_node):
        if isinstance(call, gast.Call):
            call.args = [e for a in call.args for e in _args(a, shapes, given, ctx.location)]
            call.keywords = [e for k in call.keywords
                             for e in _keywords(k, shapes, given, ctx.location)]


def _call_spreads(node):
    """The names ``node`` unpacks with ``*`` or ``**`` in a call."""
    found = set()
    for call in walk(node):
        if isinstance(call, gast.Call):
            found |= {a.value.id for a in call.args if isinstance(a, gast.Starred)
                      and isinstance(a.value, gast.Name)}
            found |= {k.value.id for k in call.keywords if k.arg is None
                      and isinstance(k.value, gast.Name)}
    return found


def _spread(node):
    """The names ``node`` unpacks with ``*`` or ``**``."""
    found = set()
    for n in walk(node):
        if isinstance(n, gast.Starred) or (isinstance(n, gast.keyword) and n.arg is None):
            if isinstance(n.value, gast.Name):
                found.add(n.value.id)
    return found


def _only_read(node):
    """The names every mention of which in ``node`` only reads them: unpacked, indexed,
    measured (a parameter the body rebinds or changes holds no display's length)."""
    allowed = reading_mentions(node, loops=False)
    names = [n for n in walk(node) if isinstance(n, gast.Name)]
    bad = {n.id for n in names if id(n) not in allowed and not isinstance(n.ctx, gast.Param)}
    return {n.id for n in names} - bad


def _own_tuple(value, values, ctx):
    """The length of the tuple a call passes the differentiated function's parameter
    ``value`` (never rebound there: a tuple keeps its length wherever it goes), None for
    another value; ``Unpacked`` where the derivative is not specialized per that length."""
    if not (isinstance(value, gast.Name) and value.id in values.params):
        return None
    packed = ctx.packed.get(value.id)
    if packed is None:  # (``value`` is a name of the differentiated function's body)
        filename, lineno, offset, line = ctx.location.of(value)
        raise Unpacked({value.id}, f"`{value.id}` is unpacked in a call of a helper: srcgrad "
                       "specializes the derivative per length of the tuple passed, so call the "
                       "derivative with one there", filename=filename, lineno=lineno,
                       offset=offset, line=line)
    return packed.length if packed.fixed else None


def _display(value, defs):
    """The tuple or dict display the argument ``value`` is (or names), else None."""
    if isinstance(value, gast.Name) and isinstance(defs.get(value.id), gast.Tuple):
        value = defs[value.id]
    if isinstance(value, (gast.Tuple, gast.List)) and not any(
            isinstance(e, gast.Starred) for e in value.elts):
        return len(value.elts)
    if isinstance(value, gast.Dict) and all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys):
        return [k.value for k in value.keys]
    return None


def _args(a, shapes, given, location):
    if not (isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)
            and a.value.id in given):
        return [a]
    count = shapes.get(a.value.id)
    if type(count) is not int:
        raise location.error(UnsupportedSyntaxError, a, (
            "srcgrad does not support `*` here: the number of arguments it passes is not "
            "known at transform time (a parameter given a tuple written in the caller, a "
            "name assigned one once, or the differentiated function's own parameter holding a "
            "tuple, is spelled out); pass the elements: `f(xs[0], xs[1])`"))
    return [_item(a.value, i) for i in range(count)]


def _keywords(k, shapes, given, location):
    if not (k.arg is None and isinstance(k.value, gast.Name) and k.value.id in given):
        return [k]
    keys = shapes.get(k.value.id)
    if not isinstance(keys, (list, tuple)):
        raise location.error(UnsupportedSyntaxError, k.value, (
            "srcgrad does not support `**` here: the keys it passes are not known at "
            "transform time (a parameter given a dict literal written in the caller is spelled "
            "out); pass the values by name: `f(a=kw[\"a\"], b=kw[\"b\"])`"))
    return [gast.keyword(key, _item(k.value, key)) for key in keys]


def _item(name, index):
    read = gast.Subscript(clone(name), gast.Constant(index, None), gast.Load())
    return gast.copy_location(read, name)
