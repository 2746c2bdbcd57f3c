"""Constructors of the small pieces of generated code the transforms share.

Requires: a generation context (for the names helpers are called by). Guarantees: fresh nodes,
never shared between two places in a tree.

    name("x")                      ->  x
    assign("dx", value)            ->  dx = value
    call(ctx, unbroadcast, a, b)   ->  unbroadcast(a, b)   (the helper under its generated name)
"""

from __future__ import annotations

import gast


def name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)


def helper(ctx, fn):
    """The name generated code calls ``fn`` by."""
    return name(ctx.global_name(fn, fn.__name__))


def call(ctx, fn, *args):
    return gast.Call(helper(ctx, fn), list(args), [])
