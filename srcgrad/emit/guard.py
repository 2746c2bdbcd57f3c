"""A derivative notices when a function it inlined is redefined, and regenerates.

Requires: the finished generated function and ``ctx.dependencies``, the ``(namespace, expression,
function)`` of every call the inliner replaced by a body (the user's helpers, the helpers they
call, in whatever module). Guarantees: the generated function starts with one identity test per
such name, read live where the user's code would read it (the user's global or closure variable,
the helper module's globals); when any of them names another object than the one inlined (a
helper redefined in a notebook), the call is handed to ``rederived``, which regenerates the
derivative from the current definitions (through the cache, once) and calls that instead.

    def loss(w):                       def dloss(w):
        return np.sum(act(w))     ->       if act is not inlined_act:
                                               return rederived(derivative)(w)
                                           ...

The test is what the user's own code does anyway (a global read) plus an ``is``: tens of
nanoseconds a call. A derivative that inlined nothing has no guard. Derivatives called from
generated code (``grad(g)`` inside a differentiated body) carry their own guards.
"""

from __future__ import annotations

import sys

import gast

from .. import transforms
from ..astutil import ordered_walk
from ..derived import PUBLIC
from ..frontend.resolve import HeldItems, Namespace, same_items
from . import naming


class Derivative:
    """Where a guard finds the function it belongs to (set once the function is compiled)."""

    fn = None


def rederived(derivative):
    """The current version of ``derivative.fn``: regenerated from the functions its names denote
    now (the cache makes this one generation per redefinition)."""
    return transforms.refreshed(derivative.fn)


def run(fn_node, ctx):
    """The pass: prepend the staleness guard (nothing when nothing was inlined)."""
    tests = []
    seen = set()
    for namespace, expr, callee in ctx.dependencies:
        if isinstance(namespace, HeldItems):
            test = _held_items_test(namespace, expr, ctx)
            if test is not None and gast.dump(test) not in seen:
                seen.add(gast.dump(test))
                tests.append(test)
            continue
        read = _live_read(namespace, expr, ctx)
        if read is None:
            continue
        key = gast.dump(read)
        if key in seen:
            continue
        seen.add(key)
        # a name of its own: the callee may already be bound under the user's name for it
        pinned = ctx.namer.fresh(naming.INLINED.format(_last_name(expr)))
        # what the name holds: a derived function is held as the Derived that wraps it
        ctx.extras[pinned] = getattr(callee, "__dict__", {}).get(PUBLIC, callee)
        tests.append(gast.Compare(read, [gast.IsNot()], [_name(pinned)]))
    if not tests:
        return fn_node
    ctx.derivative = Derivative()
    holder = ctx.global_name(ctx.derivative, naming.DERIVATIVE)
    helper = ctx.global_name(rederived, "rederived")
    args = fn_node.args
    positional = [_name(a.id) for a in args.posonlyargs + args.args]
    if args.vararg is not None:
        positional.append(gast.Starred(_name(args.vararg.id), gast.Load()))
    keywords = [gast.keyword(a.id, _name(a.id)) for a in args.kwonlyargs]
    if args.kwarg is not None:
        keywords.append(gast.keyword(None, _name(args.kwarg.id)))
    current = gast.Call(gast.Call(_name(helper), [_name(holder)], []), positional, keywords)
    test = tests[0] if len(tests) == 1 else gast.BoolOp(gast.Or(), tests)
    if ctx.mode == "split" or any(isinstance(n, gast.Yield) for n in ordered_walk(fn_node)):
        # a generator (a split derivative, its jvp) hands over to the regenerated one
        current = gast.YieldFrom(current)
    guard = gast.If(test, [gast.Return(current)], [])
    fn_node.body.insert(0, guard)
    return fn_node


def _held_items_test(held, expr, ctx):
    """``not same_items(FNS, pinned)``: the tuple, list or dict of callables the derivative
    unrolled (or inlined a helper with) holds other items now (appended to, rebound)."""
    read = _live_read(held.namespace, expr, ctx)
    if read is None:
        return None
    pinned = ctx.namer.fresh(naming.INLINED.format(_last_name(expr)))
    ctx.extras[pinned] = held.items
    helper = ctx.global_name(same_items, "same_items")
    call = gast.Call(_name(helper), [read, _name(pinned)], [])
    return gast.UnaryOp(gast.Not(), call)


def _live_read(namespace, expr, ctx):
    """An expression the generated function can evaluate to what ``expr`` denotes in
    ``namespace`` at call time, or None when nothing there can be rebound."""
    if not isinstance(namespace, Namespace):
        return None  # a derivative pinned by identity: it guards itself
    if isinstance(expr, gast.Attribute) and _reads_an_item(expr.value):
        base = _live_read(namespace, expr.value, ctx)  # (the item may be gone: no error)
        return None if base is None else gast.Call(_name(ctx.global_name(
            field_or_gone, "field_or_gone")), [base, gast.Constant(expr.attr, None)], [])
    if isinstance(expr, gast.Attribute):
        base = _live_read(namespace, expr.value, ctx)
        return None if base is None else gast.Attribute(base, expr.attr, gast.Load())
    if isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant):
        base = _live_read(namespace, expr.value, ctx)  # `NET.layers[0].act`
        return None if base is None else gast.Call(_name(ctx.global_name(
            item_or_gone, "item_or_gone")), [base, gast.Constant(expr.slice.value, None)], [])
    if not isinstance(expr, gast.Name):
        return None
    name = expr.id
    if name in namespace.extras:
        return None  # bound by srcgrad when it generated the code: a fixed object
    own = ctx.namespace
    if name in namespace.cells:
        if namespace is own:
            return _name(name)  # the generated function shares the user's closure cells
        cell = ctx.global_name(namespace.cells[name], naming.CELL_OF.format(name))
        return gast.Attribute(_name(cell), "cell_contents", gast.Load())
    if (
        namespace.globals is own.globals
        and name not in own.cells
        and name not in own.extras
        and name not in ctx.local_names
    ):
        return _name(name)  # the generated function reads the user's globals
    module = sys.modules.get(namespace.globals.get("__name__"))
    if module is not None and vars(module) is namespace.globals:
        # the helper's module, read as the user's code reads a module attribute
        short = module.__name__.rpartition(".")[2]
        return gast.Attribute(_name(ctx.global_name(module, short)), name, gast.Load())
    scope = ctx.global_name(namespace.globals, naming.GLOBALS_OF.format(_module_name(namespace)))
    get = gast.Attribute(_name(scope), "get", gast.Load())
    return gast.Call(get, [gast.Constant(name, None)], [])


GONE = object()  # what the guard reads where an item or field it reads is gone


def item_or_gone(container, key):
    """``container[key]`` as the guard reads it, or ``GONE`` (the list is shorter now)."""
    try:
        return container[key]
    except (LookupError, TypeError):
        return GONE


def field_or_gone(obj, name):
    """``obj.name`` as the guard reads it, or ``GONE``."""
    return getattr(obj, name, GONE)


def _reads_an_item(expr):
    while isinstance(expr, gast.Attribute):
        expr = expr.value
    return isinstance(expr, gast.Subscript)


def _module_name(namespace):
    module = namespace.globals.get("__name__", "module") or "module"
    return module.rpartition(".")[2].strip("_") or "module"


def _last_name(expr):
    return expr.attr if isinstance(expr, gast.Attribute) else getattr(expr, "id", "callee")


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def strip(tree, fn):
    """``tree`` (a generated ``def`` parsed with gast or ast) without its guard: differentiating
    a derivative differentiates its computation, whose own guard covers what it inlined."""
    body = tree.body[0].body
    if body and is_guard(body[0], fn):
        del body[0]


def without_guard(text, fn):
    """The text of a generated ``def`` without its guard (a standalone module has no cache to
    regenerate from)."""
    import ast

    tree = ast.parse(text)
    body = tree.body[0].body
    if not (body and is_guard(body[0], fn)):
        return text
    lines = text.splitlines(True)
    return "".join(lines[: body[0].lineno - 1] + lines[body[0].end_lineno:])


def is_guard(stmt, fn):
    """Whether ``stmt`` (gast or ast) is the guard this module put first in ``fn``."""
    if type(stmt).__name__ != "If" or len(stmt.body) != 1 or stmt.orelse:
        return False
    ret = stmt.body[0]
    value = getattr(ret, "value", None)
    if type(value).__name__ == "YieldFrom":  # a generator's guard (a split derivative's)
        value = value.value
    inner = getattr(value, "func", None)
    if type(ret).__name__ != "Return" or type(inner).__name__ != "Call":
        return False
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cell = cells.get(getattr(inner.func, "id", None))
    return cell is not None and cell.cell_contents is rederived
