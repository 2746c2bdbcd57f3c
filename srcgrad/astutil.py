"""Small queries on gast trees that several passes share."""

from __future__ import annotations

from collections import Counter

import gast


def _nodes(tree):
    trees = tree if isinstance(tree, list) else [tree]
    for t in trees:
        yield from gast.walk(t)


def _names(tree, ctx):
    return [n.id for n in _nodes(tree) if isinstance(n, gast.Name) and isinstance(n.ctx, ctx)]


def stored(tree):
    """Names assigned anywhere in ``tree`` (a node or a list of statements)."""
    return set(_names(tree, gast.Store))


def loaded(tree):
    """Names read anywhere in ``tree``."""
    return set(_names(tree, gast.Load))


def store_counts(tree):
    """How many times each name is assigned in ``tree``."""
    return Counter(_names(tree, gast.Store))


def index_value(node):
    """A subscript's index as an expression (``a:b`` -> ``slice(a, b, None)``)."""
    if isinstance(node, gast.Slice):
        parts = [
            p if p is not None else gast.Constant(None, None)
            for p in (node.lower, node.upper, node.step)
        ]
        return gast.Call(gast.Name("slice", gast.Load(), None, None), parts, [])
    if isinstance(node, gast.Tuple):
        return gast.Tuple([index_value(e) for e in node.elts], gast.Load())
    return node
