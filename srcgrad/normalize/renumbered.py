"""A callable name assigned again in the same block: each assignment gets a name of its own.

Requires: a parsed function (before ``check`` takes its lambdas and nested defs out of the body).
Guarantees: a name ``g`` that one block of statements assigns two or more times, where every
assignment is a plain ``g = ...`` or ``def g`` of that block, the first statement of the block
that mentions ``g`` assigns it, nothing outside the block and no nested function or lambda reads
or assigns ``g``, and one of the assignments is a callable (a ``def``, a lambda, a
``functools.partial``, a function's name, or a tuple, list or dict holding one, a list of
lambdas: a comprehension of one, or one ``g.append(lambda ...)`` is given) or ``g`` is given
to ``*``/``**``: then every read of ``g`` sees the assignment before it in the block, as in
Python, so each assignment gets its own name and the reads take the name of the one before them.
Later passes then see names assigned once (a local function, a lambda, a tuple or dict of
callables, a dict given to ``**``):

    def loc(h):                      def loc(h):
        return np.sin(h)                 return np.sin(h)
    y = loc(x)                ->     y = loc(x)
    def loc(h):                      def loc_2(h):
        return np.cos(h)                 return np.cos(h)
    z = loc(y)                       z = loc_2(y)

A name assigned in two blocks (a branch, a loop around a later assignment) is left as it is:
``rebound`` dispatches its calls, or it is refused as before.
"""

from __future__ import annotations

import functools

import gast

from ..astutil import param_names, walk
from ..frontend.resolve import MISSING

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)
_DISPLAYS = (gast.Tuple, gast.List, gast.Dict, gast.Set)


def run(fn_node, namespace):
    """Rename in place (see the module docstring); returns ``fn_node``."""
    taken = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)}
    taken |= {n.name for n in walk(fn_node) if isinstance(n, _SCOPES[:2])}
    params = param_names(fn_node, packed=True)
    local = {n.name for n in walk(fn_node.body) if isinstance(n, gast.FunctionDef)}
    local |= {s.targets[0].id for s in walk(fn_node.body) if isinstance(s, gast.Assign)
              and isinstance(s.value, gast.Lambda) and isinstance(s.targets[0], gast.Name)}
    static = _Static(namespace, local)
    for block in _blocks(fn_node.body):
        for g in _candidates(fn_node, block, params, static):
            _rename(block, g, taken)
    return fn_node


def _blocks(stmts):
    """Every list of statements of the function, not those of nested functions."""
    yield stmts
    for s in stmts:
        if isinstance(s, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                yield from _blocks(inner)
        for h in getattr(s, "handlers", None) or ():
            yield from _blocks(h.body)


def _bound(s):
    """The name a statement binds plainly (``g = ...``, an undecorated ``def g``), or None."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
        return s.targets[0].id
    if isinstance(s, gast.FunctionDef) and not s.decorator_list:
        return s.name
    return None


def _candidates(fn_node, block, params, static):
    bindings = {}
    for s in block:
        name = _bound(s)
        if name is not None:
            bindings.setdefault(name, []).append(s)
    out = []
    for g, stmts in bindings.items():
        if len(stmts) > 1 and g not in params and _confined(fn_node, block, g, stmts) and (
                any(_callable_value(s, static) for s in stmts) or _spread(fn_node, g)
                or _lambdas_appended(fn_node, g)):
            out.append(g)
    return out


def _mentions(tree, g):
    return any(isinstance(n, gast.Name) and n.id == g for n in walk(tree)) or any(
        isinstance(n, _SCOPES[:2]) and n.name == g for n in walk(tree))


def _confined(fn_node, block, g, stmts):
    """Every mention of ``g`` is in ``block``; the first statement mentioning it binds it (and
    does not read it); the only stores are ``stmts``; no nested function or lambda mentions it
    (it would read ``g`` when called, not where it is written)."""
    first = next(s for s in block if _mentions(s, g))
    if first is not stmts[0] or _reads_before_binding(first, g):
        return False
    inside = {id(n) for s in block for n in walk(s)}
    bound = {id(s.targets[0]) if isinstance(s, gast.Assign) else id(s) for s in stmts}
    if any(_stray(n, g, inside, bound) for n in walk(fn_node.body)):
        return False
    return not any(_read_in_a_scope(scope, g) for s in block for scope in walk(s)
                   if isinstance(scope, _SCOPES))


def _stray(n, g, inside, bound):
    """``n`` a mention of ``g`` outside the block, or a store of it not among its bindings."""
    if isinstance(n, gast.Name) and n.id == g:
        return id(n) not in inside or not isinstance(n.ctx, gast.Load) and id(n) not in bound
    return isinstance(n, _SCOPES[:2]) and n.name == g and id(n) not in bound


def _read_in_a_scope(scope, g):
    """Whether a nested function or lambda mentions ``g`` (in its parameters or body)."""
    if isinstance(scope, gast.Lambda):
        return _mentions(scope.body, g) or _mentions(scope.args, g)
    return _mentions(scope.args, g) or any(_mentions(b, g) for b in scope.body)


def _reads_before_binding(s, g):
    if isinstance(s, gast.Assign):
        return _mentions(s.value, g)
    return False


def _callable_value(s, static):
    if isinstance(s, gast.FunctionDef):
        return True
    value = s.value
    if isinstance(value, gast.ListComp) and isinstance(value.elt, gast.Lambda):
        return True  # a list of lambdas (normalize/lambda_lists.py)
    if isinstance(value, _DISPLAYS):
        elts = value.values if isinstance(value, gast.Dict) else value.elts
        return any(_callable_atom(e, static) for e in elts)
    return _callable_atom(value, static)


def _callable_atom(e, static):
    if isinstance(e, gast.Lambda) or isinstance(e, gast.Name) and e.id in static.local:
        return True
    if isinstance(e, gast.Call):
        return static.resolve(e.func) is functools.partial
    found = static.resolve(e)
    return found is not MISSING and callable(found) and not isinstance(found, type)


class _Static:
    """What a name or attribute denotes statically (the namespace), and the names of the
    function's own lambdas and defs (``local``)."""

    def __init__(self, namespace, local):
        self.namespace, self.local = namespace, local

    def resolve(self, e):
        if not isinstance(e, (gast.Name, gast.Attribute)):
            return MISSING
        return self.namespace.resolve(e, self.local)


def _lambdas_appended(fn_node, g):
    """``g.append(lambda ...)``: a list of lambdas (normalize/lambda_lists.py)."""
    return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
               and n.func.attr == "append" and isinstance(n.func.value, gast.Name)
               and n.func.value.id == g and n.args and isinstance(n.args[0], gast.Lambda)
               for n in walk(fn_node.body))


def _spread(fn_node, g):
    """``g`` given to ``*`` or ``**`` in a call."""
    for n in walk(fn_node.body):
        if isinstance(n, gast.Call):
            if any(k.arg is None and isinstance(k.value, gast.Name) and k.value.id == g
                   for k in n.keywords):
                return True
            if any(isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)
                   and a.value.id == g for a in n.args):
                return True
    return False


def _rename(block, g, taken):
    current = g
    first = True
    for s in block:
        if _bound(s) == g:
            if isinstance(s, gast.Assign):
                _rename_reads(s.value, g, current)
            if not first:
                current = _fresh(g, taken)
                if isinstance(s, gast.Assign):
                    s.targets[0].id = current
                else:
                    s.name = current
            first = False
            continue
        _rename_reads(s, g, current)


def _rename_reads(tree, g, new):
    if new == g:
        return
    for n in walk(tree):
        if isinstance(n, gast.Name) and n.id == g and isinstance(n.ctx, gast.Load):
            n.id = new


def _fresh(g, taken):
    k = 2
    while f"{g}_{k}" in taken:
        k += 1
    taken.add(f"{g}_{k}")
    return f"{g}_{k}"
