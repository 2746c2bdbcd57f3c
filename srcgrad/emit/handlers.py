"""The branches ``try`` ... ``except`` became (normalize/handlers.py) written back as ``try``.

Requires: generated code (any mode), after the optimizer. Guarantees: every marker
``ok = try_begin(E)`` and the branch ``if ok: B else: H`` after it become the try block ``B``
run inside a ``try`` before the marker, whose handlers undo what ``B`` did before it raised
(the stacks of the reverse sweep and the lists ``B`` appended to cut back, the names it pushed
restored) and note which handler ran; the marker reads that, and the branch keeps ``H``:

    ok = try_begin(LinAlgError)             sizes = (tape_size(L_saved),)
    if ok:                                  try:
        L_saved.append(L)                       L_saved.append(L)
        L = np.linalg.cholesky(K)     ->        L = np.linalg.cholesky(K)
    else:                                       caught = -1
        L = eye                             except LinAlgError:
                                                L = restore_tape(L_saved, sizes[0], L)
                                                caught = 0
                                            ok = caught == -1
                                            if not ok:
                                                L = eye

A change of a value the block did not make (``y = setitem(y, i, v)``, ``hs = list_append(hs,
h)``, ``obj = set_field(obj, "a", v)``: Python's in-place changes, also inside your helpers)
is not undone: it is refused unless nothing after it in the block can raise (the block's last
statement).
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import clone, loaded, stored, walk
from ..errors import SrcgradError, UnsupportedSyntaxError
from . import naming


def run(fn_node, ctx):
    """The pass: every ``try`` marker emitted as a ``try`` statement."""
    if not ctx.tried or not any(_helper(n, ctx, runtime.try_begin) for n in walk(fn_node)):
        return fn_node
    for fn in [n for n in walk(fn_node) if isinstance(n, gast.FunctionDef)]:
        fn.body = _Emitter(ctx).block(fn.body)
    return fn_node


def _helper(node, ctx, helper):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and ctx.namespace.lookup(node.func.id) is helper)


def _name(name, store=False):
    return gast.Name(name, gast.Store() if store else gast.Load(), None, None)


def _call(name, args):
    return gast.Call(_name(name), args, [])


def _assign(name, value):
    return gast.Assign([_name(name, True)], value, None)


class _Emitter:
    def __init__(self, ctx):
        self.ctx = ctx

    def block(self, stmts):
        for s in stmts:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and not isinstance(s, gast.FunctionDef):
                    setattr(s, field, self.block(inner))
        out, moved = [], set()
        for i, s in enumerate(stmts):
            if id(s) in moved:
                continue
            if isinstance(s, gast.Assign) and _helper(s.value, self.ctx, runtime.try_begin):
                branch, before = _branch(s, stmts[i + 1:], self.ctx)
                out += before
                moved |= {id(b) for b in before}
                out += self.emit(s, branch)
            else:
                out.append(s)
        return out

    def emit(self, marker, branch):
        """The ``try`` statement and the marker, rewritten (the branch is changed in place)."""
        block = branch.body
        caught = self.ctx.namer.fresh(naming.TRY_CAUGHT)
        sizes = self.ctx.namer.fresh(naming.TRY_SIZES)
        tapes, restored = self._tapes(block, marker)
        handlers = self._handlers(marker, branch, self._undo(tapes, restored, sizes), caught)
        body = block + [_assign(caught, gast.Constant(-1, None))]
        out = []
        if tapes:
            helper = self.ctx.global_name(runtime.tape_size, "tape_size")
            lengths = [_call(helper, [_name(t)]) for t in tapes]
            out.append(_assign(sizes, gast.Tuple(lengths, gast.Load())))
        out.append(gast.Try(body, handlers, [], []))
        marker.value = gast.Compare(_name(caught), [gast.Eq()], [gast.Constant(-1, None)])
        branch.test = gast.UnaryOp(gast.Not(), branch.test)
        branch.body, branch.orelse = branch.orelse or [gast.Pass()], []
        for s in out:
            for n in walk(s):
                if isinstance(n, (gast.stmt, gast.expr)):
                    gast.copy_location(n, marker)
        return out + [marker]

    def _handlers(self, marker, branch, undo, caught):
        """One ``except`` per handler: undo the block, note which handler ran (and the error)."""
        errors = self._markers(branch.orelse, caught)
        handlers = []
        for k, kind in enumerate(marker.value.args):
            body = list(undo) + [_assign(caught, gast.Constant(k, None))]
            held = None
            if k in errors:  # `as` unbinds its name at the end of the handler: kept in another
                held = self.ctx.namer.fresh(naming.TRY_ERROR)
                body.append(_assign(errors[k], _name(held)))
            kind = None if isinstance(kind, gast.Constant) and kind.value is None else clone(kind)
            handlers.append(gast.ExceptHandler(kind, None if held is None else _name(held, True),
                                               body))
        return handlers

    def _tapes(self, block, where):
        """The lists the block appends to that it did not make (the stacks of the reverse sweep,
        your lists), and for each stack whose first push is a name's value, that name: its
        value before the block is the first value the block pushed."""
        made = set()
        for s in block:
            if isinstance(s, gast.Assign) and not _rewrites_own(s):
                made |= stored(s)
        tapes, first, kinds, writes, earlier = [], {}, {}, [], set()
        for n, nested in _in_order(block):
            target, value = _appended(n, self.ctx)
            if target is None:
                if _writes_in_place(n, self.ctx):
                    writes.append(n)
                if isinstance(n, (gast.Assign, gast.AugAssign)):
                    earlier |= stored(n)
                continue
            if target in made:
                continue
            held = value.id if isinstance(value, gast.Name) else None
            if held in earlier:  # a value the block made (``v = copy_item(a, 5)``; a
                held = None      # derivative transformed again pushes such names): cut only
            if target not in tapes:
                tapes.append(target)
                first[target] = (held, nested)
            kinds.setdefault(target, set()).add(held)
        self._refuse_writes(block, writes, made, where)
        restored = {}
        for tape in tapes:
            held, nested = first[tape]
            if held is None and kinds[tape] == {None}:
                continue  # saved elements of an array written last (or a list of yours)
            names = kinds[tape] - {None}
            if held is None or len(names) > 1 or nested and len(kinds[tape]) > 1:
                raise self.ctx.location.error(UnsupportedSyntaxError, where, (
                    "srcgrad does not support a `try` block that both rebinds and writes into "
                    "the same variable here (its value before the block could not be restored "
                    "when the handler runs); use two names"))
            restored[tape] = held
        return tapes, restored

    def _refuse_writes(self, block, writes, made, where):
        """A write into an array or dict the block did not make, followed by a statement that
        may raise."""
        for w in writes:
            name = _written_name(w)
            if name is None or name in made:
                continue
            if w not in block or not all(_cannot_raise(s, self.ctx)
                                         for s in block[block.index(w) + 1:]):
                raise self.ctx.location.error(UnsupportedSyntaxError, where, (
                    f"srcgrad does not support a `try` block that writes into `{name}` (which it "
                    f"did not make) before a statement that may raise here: the write could not "
                    f"be undone when the handler runs; write into a copy made in the block, or "
                    f"make the write the block's last statement"))

    def _undo(self, tapes, restored, sizes):
        out = []
        for i, tape in enumerate(tapes):
            size = gast.Subscript(_name(sizes), gast.Constant(i, None), gast.Load())
            if tape in restored:
                # only where the block pushed: a name it binds first (a loop's index, the
                # raise before the loop) is not read unbound
                held = restored[tape]
                grew = _call(self.ctx.global_name(runtime.tape_grew, "tape_grew"),
                             [_name(tape), size])
                again = gast.Subscript(_name(sizes), gast.Constant(i, None), gast.Load())
                out.append(gast.If(grew, [_assign(held, _call(self.ctx.global_name(
                    runtime.restore_tape, "restore_tape"), [_name(tape), again,
                                                            gast.Constant(None, None)]))], []))
            else:
                out.append(_assign(tape, _call(self.ctx.global_name(runtime.cut_list, "cut_list"),
                                               [_name(tape), size])))
        return out

    def _markers(self, stmts, caught):
        """Handler index -> the name ``except ... as`` binds; ``try_which`` reads ``caught``."""
        errors = {}
        for n in walk(stmts):
            if not isinstance(n, gast.Assign):
                continue
            if _helper(n.value, self.ctx, runtime.try_which):
                n.value = _name(caught)
            elif _helper(n.value, self.ctx, runtime.try_error):
                kept = self.ctx.namer.fresh(naming.TRY_ERROR)
                errors[n.value.args[1].value] = kept
                n.value = _name(kept)  # bound by the handler, before the branch
        return errors


def _in_order(stmts, nested=False):
    """``(statement, nested)`` of every statement in ``stmts`` in the order of the text."""
    for s in stmts:
        yield s, nested
        for field in ("body", "orelse"):
            yield from _in_order(getattr(s, field, None) or [], True)


def _branch(marker, rest, ctx):
    """The ``if`` on the marker (or on ``bool`` of it) among the statements after it, and the
    statements between them that the block depends on (or that depend on it), which go before
    the ``try``, where they ran: forward mode puts a tangent of the line before the branch
    (``dh = dx`` of an inlined helper's ``try``, on the caller's line) that the block reads."""
    flags = {marker.targets[0].id}
    for i, s in enumerate(rest):
        if isinstance(s, gast.Assign) and _helper(s.value, ctx, bool) and isinstance(
                s.value.args[0], gast.Name) and s.value.args[0].id in flags:
            flags.add(s.targets[0].id)
        if isinstance(s, gast.If) and isinstance(s.test, gast.Name) and s.test.id in flags:
            between = [b for b in rest[:i] if not stored(b) <= flags]
            block = s.body
            if not (stored(between) & (loaded(block) | stored(block))
                    or stored(block) & loaded(between)):
                return s, []
            if loaded(between) & flags:
                break
            return s, between
    raise SrcgradError("internal error: a `try` marker without its branch")


def _rewrites_own(s):
    """``y = f(y, ...)``: a statement that may change ``y``'s value in place."""
    value = s.value
    target = s.targets[0]
    return (isinstance(value, gast.Call) and isinstance(target, gast.Name) and value.args
            and isinstance(value.args[0], gast.Name) and value.args[0].id == target.id)


def _appended(n, ctx):
    """``(stack name, value)`` of ``t.append(v)`` (a push on a stack of the reverse sweep: your
    lists' appends are ``list_append``, but in a derivative transformed again, where they are
    its stacks' pushes), else ``(None, None)``."""
    if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call):
        func = n.value.func
        if (isinstance(func, gast.Attribute) and func.attr == "append"
                and isinstance(func.value, gast.Name) and len(n.value.args) == 1):
            return func.value.id, n.value.args[0]
    if isinstance(n, gast.Assign) and _rewrites_own(n) and _generated(ctx.fn) and any(
            _helper(n.value, ctx, f) for f in (runtime.list_append, runtime.append_tangent)):
        return n.targets[0].id, n.value.args[1]
    return None, None


def _generated(fn):
    from ..frontend.source import GENERATED_SOURCE

    return getattr(fn, "__code__", None) in GENERATED_SOURCE


def _writes_in_place(n, ctx):
    if isinstance(n, gast.AugAssign):
        return True
    if isinstance(n, gast.Assign):
        if any(isinstance(t, (gast.Subscript, gast.Attribute)) for t in n.targets):
            return True
        return _rewrites_own(n)
    return False


def _written_name(w):
    target = w.target if isinstance(w, gast.AugAssign) else w.targets[0]
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


def _cannot_raise(s, ctx):
    if isinstance(s, gast.Assign) and isinstance(s.value, (gast.Name, gast.Constant)):
        return True
    if _appended(s, ctx)[0] is not None:
        return True
    return _writes_in_place(s, ctx) and isinstance(s, gast.Assign) and _rewrites_own(s)
