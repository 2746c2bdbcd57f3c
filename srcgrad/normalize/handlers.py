"""``try`` ... ``except`` written as a branch on which path ran; part of ``sugar``.

Requires: a ``try`` statement with handlers, met by ``sugar`` (its blocks not yet desugared).
Guarantees: the statement becomes a branch on a marker, which the passes treat like any ``if``
(the reverse sweep records which path ran and runs the adjoint of the statements that ran);
``emit/handlers.py`` writes the marker back as a ``try`` around the block, after the transform:

    try:                                  try_ok = try_begin(LinAlgError)
        L = np.linalg.cholesky(K)         if try_ok:
    except LinAlgError as e:        ->        L = np.linalg.cholesky(K)
        L = np.eye(n)                     else:
                                              e = try_error(try_ok, 0)
                                              L = np.eye(n)

The branch model says: when the block raises, it did nothing, and the handler ran. The emitted
``try`` makes that true of the generated code (``runtime/handlers.py``), and the check here makes it
true of Python's meaning: a name the block assigns before its last statement (which may be the
one that raises) must be the block's own temporary, read nowhere else; otherwise which value it
holds after an error depends on where the error was raised, and the ``try`` is refused there.
A ``try`` ... ``else`` block runs after the try block when it did not raise (``if try_ok:``),
``finally`` after the whole statement. ``return``, ``break`` and ``continue`` inside are refused.

A ``try`` that srcgrad emitted (a derivative transformed again) is already transactional: its
rollback statements are dropped and it is taken apart the same way, without the check.
"""

from __future__ import annotations

import gast

from ..astutil import param_names, stored, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError

_MARK = {helper: name for name, helper in naming.TRY_MARKERS.items()}
SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Pass, gast.Assert)
ADVICE = ("compute it in the last statement of the `try` block, or after the `try` statement "
          "(the block's earlier statements may assign only temporaries of their own)")


def _name(name, ctx=None):
    return gast.Name(name, ctx or gast.Load(), None, None)


def _call(helper, args):
    return gast.Call(_name(helper), args, [])


def desugar(sugar, s, location, namespace=None):
    """The statements that replace the ``try`` statement ``s`` (see above)."""
    generated = _generated(s, namespace)
    if not generated:
        _refuse_jumps(s, location)
        _refuse_partial_writes(s, sugar.fn_node, location)
    body = sugar.block(s.body)
    flag = sugar.namer.fresh(naming.TRY_OK)
    types = [h.type if h.type is not None else gast.Constant(None, None) for h in s.handlers]
    marker = _located(gast.Assign([_name(flag, gast.Store())], _call(_MARK["try_begin"], types),
                                  None), s)
    branches = []
    for i, h in enumerate(s.handlers):
        stmts = _without_rollback(h.body, namespace) if generated else h.body
        error = h.name.id if h.name is not None else None
        if error is None and _bare_raises(stmts):
            error = sugar.namer.fresh(naming.TRY_ERROR)
        _name_bare_raises(stmts, error)
        caught = _call(_MARK["try_error"], [_name(flag), gast.Constant(i, None)])
        head = [] if error is None else [
            _located(gast.Assign([_name(error, gast.Store())], caught, None), h)]
        branches.append(head + sugar.block(stmts))
    handler = _chain(sugar, flag, branches, s)
    branch = _located(gast.If(_name(flag), body or [gast.Pass()], handler), s)
    branch.try_branch = True  # not taken apart by `_raising_branches`
    out = [marker, branch]
    if s.orelse:
        out.append(_located(gast.If(_name(flag), sugar.block(s.orelse), []), s))
    return out + sugar.block(s.finalbody)


def _chain(sugar, flag, branches, where):
    """The handler's branch: its statements, or for several handlers a chain of ``if``s on which
    of them ran."""
    if len(branches) == 1:
        return branches[0]
    which = sugar.namer.fresh(naming.TRY_WHICH)
    marker = _call(_MARK["try_which"], [_name(flag)])
    out = [_located(gast.Assign([_name(which, gast.Store())], marker, None), where)]
    rest = branches[-1]
    for i in range(len(branches) - 2, -1, -1):
        test = gast.Compare(_name(which), [gast.Eq()], [gast.Constant(i, None)])
        rest = [_located(gast.If(test, branches[i], rest), where)]
    return out + rest


def _located(stmt, where):
    for n in walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return stmt


# --- a `raise` without an exception in a handler: the error the handler caught -----------------
def _handler_statements(stmts):
    for s in stmts:
        yield s
        if isinstance(s, gast.Try):
            continue  # a nested handler's bare `raise` is its own error's
        for field in ("body", "orelse", "finalbody"):
            yield from _handler_statements(getattr(s, field, None) or [])


def _bare_raises(stmts):
    return any(isinstance(s, gast.Raise) and s.exc is None for s in _handler_statements(stmts))


def _name_bare_raises(stmts, error):
    for s in _handler_statements(stmts):
        if isinstance(s, gast.Raise) and s.exc is None:
            s.exc = gast.copy_location(_name(error), s)


# --- what is refused -----------------------------------------------------------------------------
def _error(location, node, what):
    return location.error(UnsupportedSyntaxError, node, f"srcgrad does not support {what} here")


def _refuse_jumps(s, location):
    blocks = [s.body, s.orelse, s.finalbody] + [h.body for h in s.handlers]
    for block in blocks:
        for n in walk(block):
            if isinstance(n, gast.Return) or isinstance(n, (gast.Break, gast.Continue)) and (
                    not _inside_loop(n, block)):
                word = type(n).__name__.lower()
                raise _error(location, n, f"`{word}` inside `try` ... `except`; assign the "
                             f"result (or a flag) and leave after the statement")


def _inside_loop(node, block):
    """Whether ``node`` is inside a loop that is itself inside ``block``."""
    return any(node in list(walk(loop.body)) for loop in walk(block)
               if isinstance(loop, (gast.For, gast.While)))


def _refuse_partial_writes(s, fn_node, location):
    """A name written by a statement of the try block other than its last one, that is not a
    temporary of the block (see the module's docstring)."""
    body = s.body
    last = body[-1] if isinstance(body[-1], SIMPLE) else None
    inside = {id(n) for stmt in body for n in walk(stmt)}
    read_outside = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)
                    and isinstance(n.ctx, gast.Load) and id(n) not in inside}
    locals_ = param_names(fn_node, packed=True) | stored(fn_node)
    for stmt in body:
        if stmt is last:
            continue
        for name, where in _writes(stmt, locals_):
            if name in read_outside or not _temporary(name, body):
                raise _error(location, where, (
                    f"a `try` block that changes `{name}` before a statement that may raise, "
                    f"when `{name}` is read after it (which value it holds after an error "
                    f"depends on where the error was raised); {ADVICE}"))


def _writes(stmt, locals_):
    """``(name, node)`` of every local ``stmt`` may change: assigned, written into, or the
    object a method is called on."""
    for n in walk(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            yield n.id, n
        elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            root = _root(n)
            if root is not None:
                yield root.id, n
        elif isinstance(n, gast.Call):
            yield from _handed(n, locals_)


def _handed(call, locals_):
    func = call.func
    root = _root(func)
    if isinstance(func, gast.Attribute) and root is not None and root.id in locals_:
        yield root.id, func
    # a function of yours that changes an argument in place is inlined: its writes are found
    # where the try is emitted (emit/handlers.py)


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return node if isinstance(node, gast.Name) else None


def _temporary(name, body):
    """Whether the first statement of ``body`` that mentions ``name`` assigns it (alone, at the
    top level) without reading it."""
    for stmt in body:
        mentions = [n for n in walk(stmt) if isinstance(n, gast.Name) and n.id == name]
        if not mentions:
            continue
        return isinstance(stmt, gast.Assign) and all(
            isinstance(n.ctx, gast.Store) for n in mentions) and all(
            isinstance(t, (gast.Name, gast.Tuple)) for t in stmt.targets)
    return False


# --- a `try` srcgrad emitted ---------------------------------------------------------------
def _is_helper(node, namespace, helper):
    if namespace is None or not isinstance(node, gast.Call) or not isinstance(
            node.func, gast.Name):
        return False
    from .. import runtime

    return namespace.lookup(node.func.id) is getattr(runtime, helper)


def _generated(s, namespace):
    """Whether ``s`` is a ``try`` emit/handlers.py wrote: in a function srcgrad generated, its
    try block ends noting that no handler ran (``caught = -1``)."""
    from ..frontend.source import GENERATED_SOURCE

    code = getattr(getattr(namespace, "fn", None), "__code__", None)
    last = s.body[-1]
    value = getattr(last, "value", None)  # `-1` parses as a negation
    return code in GENERATED_SOURCE and isinstance(last, gast.Assign) and isinstance(
        value, gast.UnaryOp) and isinstance(value.op, gast.USub) and isinstance(
        value.operand, gast.Constant) and value.operand.value == 1


def _without_rollback(stmts, namespace):
    """A generated handler without its rollback (the names restored, the lists cut back)."""
    return [s for s in stmts if not (
        isinstance(s, (gast.Expr, gast.Assign)) and (
            _is_helper(s.value, namespace, "restore_tape")
            or _is_helper(s.value, namespace, "cut_list"))
        or isinstance(s, gast.If) and _is_helper(s.test, namespace, "tape_grew"))]
