"""The list or dict ``d.setdefault(k, v)`` returns, held by a name; part of ``sugar``.

Requires: a block of statements of ``sugar``, before ``sugar._setdefault`` rewrites each
``setdefault``. Guarantees: ``lst = d.setdefault(k, v)`` of a dict ``d``, where ``lst`` is bound
there alone and read only by the statements after it in the same block (not in a lambda, a
def or a comprehension), and those statements up to its last read neither rebind ``d`` or ``k``
nor change which value ``d`` holds at ``k`` (``d[j] = ...``, ``del d[j]``, ``d.pop``, ``d``
passed to a call), is ``d.setdefault(k, v)`` alone, and each later ``lst`` is ``d[k]``: in
Python they are one list, so changing ``lst`` changes ``d[k]`` (an unhashed key is held in a
name of its own first).

    lst = d.setdefault(i % 2, [])            key = i % 2
    lst.append(x[i])                  ->     d.setdefault(key, [])
                                             d[key].append(x[i])
"""

from __future__ import annotations

import gast

from ..astutil import binding_counts, clone, walk
from ..emit import naming

# methods of a dict that leave the value it holds at a key as it is
_READS = {"setdefault", "get", "keys", "values", "items", "copy"}
_SCOPES = (gast.Lambda, gast.FunctionDef, gast.ListComp, gast.SetComp, gast.DictComp,
           gast.GeneratorExp)


class HeldSetdefault:
    """``rewrite(s, rest)`` for each statement ``s`` of a block, ``rest`` the ones after it."""

    def __init__(self, fn_node, namer, is_setdefault):
        self.fn_node, self.namer, self.is_setdefault = fn_node, namer, is_setdefault
        self.counts = binding_counts(fn_node)
        # (the statement whose block is being desugared, the statements after it), innermost
        # last: ``sugar.block`` keeps it
        self.outer = []

    def rewrite(self, s, rest):
        """The statements ``s`` becomes (see above), ``rest`` changed in place; else None."""
        region = self._region(s, rest)
        past = None if region is not None else self._past_block(s, rest)
        if region is None and past is None:
            return None
        region = region if past is None else past
        name, d, key = s.targets[0].id, s.value.func.value.id, s.value.args[0]
        out = []
        if not isinstance(key, (gast.Name, gast.Constant)) or past is not None:
            held = self.namer.fresh(naming.describe(key))
            out.append(gast.copy_location(gast.Assign(
                [gast.Name(held, gast.Store(), None, None)], key, None), s))
            key = s.value.args[0] = gast.Name(held, gast.Load(), None, None)
        for t in region:
            _replace(t, name, d, key)
        out.append(gast.copy_location(gast.Expr(s.value), s))
        return out

    def _held(self, s):
        """Whether ``s`` is ``lst = d.setdefault(...)`` of a dict variable ``d``."""
        return (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and self.is_setdefault(s.value)
                and isinstance(s.value.func.value, gast.Name))

    def _region(self, s, rest):
        """The statements of ``rest`` up to the last read of the name ``s`` binds to a
        ``setdefault`` (see above), or None where the rewrite does not hold."""
        if not self._held(s):
            return None
        name, d, key = s.targets[0].id, s.value.func.value.id, s.value.args[0]
        if self.counts[name] != 1 or (isinstance(key, gast.Name) and key.id in (d, name)):
            return None
        reads = [n for n in walk(self.fn_node) if isinstance(n, gast.Name) and n.id == name
                 and n is not s.targets[0]]
        last = max((i for i, t in enumerate(rest) if _holds(t, name)), default=None)
        if last is None or any(not isinstance(n.ctx, gast.Load) for n in reads):
            return None
        region = rest[:last + 1]
        inside = [n for t in region for n in _outside_scopes(t) if isinstance(n, gast.Name)
                  and n.id == name]
        return region if len(inside) == len(reads) and _unchanged(region, d, key) else None


    def _past_block(self, s, rest):
        """The statements after ``s`` in its block, then those after the ``if``, ``for`` or
        ``while`` holding it up to the last read of ``lst``, where ``lst`` is read past that
        block (``for ...: lst = d.setdefault(k, []) ...`` then ``lst.append(v)`` after the
        loop: the list of the last trip, ``d[k]`` of that trip's key) and nothing in the
        block but ``s``, nor after it up to that read, rebinds ``d`` or changes its items; else
        None. (The key is held in a name of its own, which the loop's next trip does not
        rebind.)"""
        if not (self._held(s) and self.outer and isinstance(
                self.outer[-1][0], (gast.For, gast.While, gast.If))):
            return None
        container, after = self.outer[-1]
        name, d, key = s.targets[0].id, s.value.func.value.id, s.value.args[0]
        if self.counts[name] != 1 or (isinstance(key, gast.Name) and key.id in (d, name)):
            return None
        last = max((i for i, t in enumerate(after) if _holds(t, name)), default=None)
        region = None if last is None else rest + after[:last + 1]
        unkeyed = gast.Constant(None, None)  # (the key is a name of its own: never rebound)
        if region is None or not self._read_only_in(s, region) or not _unchanged(
                [container] + region, d, unkeyed):
            return None
        return region

    def _read_only_in(self, s, region):
        """Whether the name ``s`` binds is only read, and only by ``region`` (outside its
        lambdas, defs and comprehensions)."""
        name = s.targets[0].id
        reads = [n for n in walk(self.fn_node) if isinstance(n, gast.Name) and n.id == name
                 and n is not s.targets[0]]
        inside = [n for t in region for n in _outside_scopes(t) if isinstance(n, gast.Name)
                  and n.id == name]
        return all(isinstance(n.ctx, gast.Load) for n in reads) and len(inside) == len(reads)


def _holds(stmt, name):
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(stmt))


def _outside_scopes(node):
    """The nodes of ``node`` outside lambdas, defs and comprehensions."""
    yield node
    for child in gast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            yield from _outside_scopes(child)


def _unchanged(region, d, key):
    """Whether ``region`` leaves ``d``, ``key`` (a name) and the value ``d`` holds at a key
    as they are: ``d`` read only by an element read, a reading method, `in` and `len`."""
    parents = {id(c): p for t in region for p in walk(t) for c in gast.iter_child_nodes(p)}
    for t in region:
        for n in walk(t):
            if not isinstance(n, gast.Name):
                continue
            if isinstance(key, gast.Name) and n.id == key.id and not isinstance(n.ctx, gast.Load):
                return False
            if n.id == d and not _read_only(n, parents.get(id(n))):
                return False
    return True


def _read_only(n, parent):
    if not isinstance(n.ctx, gast.Load) or parent is None:
        return False
    if isinstance(parent, gast.Subscript):
        return parent.value is n and isinstance(parent.ctx, gast.Load)
    if isinstance(parent, gast.Attribute):
        return parent.attr in _READS
    if isinstance(parent, gast.Compare):
        return n is not parent.left and all(isinstance(o, (gast.In, gast.NotIn))
                                            for o in parent.ops)
    return (isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name)
            and parent.func.id == "len")


def _replace(node, name, d, key):
    """Every read of ``name`` in ``node`` made ``d[key]``."""
    for parent in walk(node):
        for field, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if isinstance(child, gast.Name) and child.id == name:
                    read = gast.copy_location(gast.Subscript(
                        gast.Name(d, gast.Load(), None, None), clone(key), gast.Load()), child)
                    if isinstance(value, list):
                        value[i] = read
                    else:
                        setattr(parent, field, read)
