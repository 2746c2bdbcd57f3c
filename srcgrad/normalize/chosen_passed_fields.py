"""A function field of an object built here, written in a branch or a loop, where the object
is also passed to a helper or has a method called (``use(b, x)``, ``bx(x)``, ``b.apply(x)``).

Requires: the function as parsed (``chosen_fields.follow`` calls ``dispatch`` for the objects
it does not follow by a name). Guarantees: each write ``b.f = v`` binds its value to a name of
its own and records its number in ``f_which``; each other statement naming ``b`` is preceded,
on each path, by the write of the binding that ran last (a branch on ``f_which`` where more
than one may reach it):

    b = Box(np.sin)                 b = Box(np.sin)
                                    f_2 = b.f
                                    f_which = 0
    if c:                           if c:
        b.f = np.cos       ->           f_3 = np.cos
                                        b.f = f_3
                                        f_which = 1
    y = use(b, x)                   if f_which == 1:
                                        b.f = f_3
                                        y = use(b, x)
                                    else:
                                        b.f = f_2
                                        y = use(b, x)

so that the helper, inlined, reads the field right after a write of its block
(``StaticValues`` proves each such read, ``written_just_before``). The added write stores what
the field already holds: ``check`` proves it after inlining (every write of a field ``f`` in the
function is one of these, or the object's ``__init__``'s before ``f_2 = b.f``: none through a
helper, another name or another object) and refuses the function otherwise, as before.
"""

from __future__ import annotations

import inspect

import gast

from ..astutil import clone, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError

SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Return)


def dispatch(fn_node, ctx, name, cls, stmt, fields):
    """Rewrite ``fn_node`` (see the module docstring) for the object ``name`` built by
    ``stmt`` and each of its ``fields`` (written in a branch or a loop); record what was made
    in ``ctx.dispatched_fields`` for ``check``."""
    for attr in fields:
        if not _dispatchable(fn_node, name, attr):
            continue
        rewrite = _Rewrite(fn_node, ctx, name, attr, stmt)
        fn_node.body = rewrite.block(fn_node.body, None)
        ctx.dispatched_fields.append((name, attr, frozenset(rewrite.names), rewrite.names[0]))


def _dispatchable(fn_node, name, attr):
    """Whether every write of ``name.attr`` is a plain ``name.attr = v`` of a name or an
    attribute of one, and every statement naming ``name`` otherwise is a simple one (no test
    of a branch or loop, no header of a ``with``), which names ``name`` bare only as an
    argument or the function of a call (no other name given the object here)."""
    writes = [s for s in walk(fn_node) if _write_of(s, name, attr)]
    stores = [n for n in walk(fn_node) if isinstance(n, gast.Attribute) and n.attr == attr
              and _named(n.value, name) and isinstance(n.ctx, (gast.Store, gast.Del))]
    if len(stores) != len(writes) or not all(_static_looking(s.value) for s in writes):
        return False
    return not _named_bare(fn_node, name) and _headers_clear(fn_node.body, name)


def _named_bare(fn_node, name):
    """Whether ``name`` is read other than as an argument, the function of a call, or the
    object of an attribute."""
    calls = {id(a) for c in walk(fn_node) if isinstance(c, gast.Call) for a in (
        [c.func] + list(c.args) + [k.value for k in c.keywords])}
    attributes = {id(n.value) for n in walk(fn_node) if isinstance(n, gast.Attribute)}
    return any(_named(n, name) and isinstance(n.ctx, gast.Load) and id(n) not in (
        calls | attributes) for n in walk(fn_node))


def _headers_clear(stmts, name):
    for s in stmts:
        if isinstance(s, SIMPLE):
            continue
        blocks = [getattr(s, f, None) or [] for f in ("body", "orelse", "finalbody")] + [
            h.body for h in getattr(s, "handlers", None) or ()]
        inner = {id(n) for block in blocks for b in block for n in walk(b)}
        if any(_named(n, name) and id(n) not in inner for n in walk(s)):
            return False
        if not all(_headers_clear(block, name) for block in blocks):
            return False
    return True


def _named(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _write_of(s, name, attr):
    return isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
        s.targets[0], gast.Attribute) and s.targets[0].attr == attr and _named(
        s.targets[0].value, name)


def _static_looking(value):
    while isinstance(value, gast.Attribute):
        value = value.value
    return isinstance(value, gast.Name)


def _mentions(s, name):
    return any(_named(n, name) for n in walk(s))


class _Rewrite:
    """Numbers the writes in program order (0: what the object holds once built); a statement
    naming the object gets the write of the one binding surely held there, or a branch over
    those that may reach it (before it in program order, or anywhere in a loop around it)."""

    def __init__(self, fn_node, ctx, name, attr, build):
        self.ctx, self.name, self.attr, self.build = ctx, name, attr, build
        self.which = self._fresh(naming.WHICH.format(attr))
        self.names = []  # binding k -> the name holding its value
        self.number = {}  # id(write) -> k
        for s in _statements(fn_node.body):
            if s is build or _write_of(s, name, attr):
                self.number[id(s)] = len(self.number)
                self.names.append(self._fresh(attr))
        self.seen = []
        self.loops = []
        stored = {n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
            n.ctx, (gast.Store, gast.Del))}
        # a value no statement changes (a global, a module's function, a parameter never
        # assigned): bound where the object is built, so a branch reached first finds it
        self.hoisted = [(self.number[id(s)], s.value) for s in _statements(fn_node.body)
                        if id(s) in self.number and s is not build and _unchanged(
                            s.value, stored, ctx)]
        self.early = {k for k, _ in self.hoisted}

    def _fresh(self, base):
        made = self.ctx.namer.fresh(base)
        self.ctx.local_names.add(made)
        return made

    def block(self, stmts, current):
        out = []
        for s in stmts:
            if id(s) in self.number:
                k = self.number[id(s)]
                out += self._bound(s, k)
                self.seen.append(k)
                current = k
            elif isinstance(s, SIMPLE) and _mentions(s, self.name):
                out += self._dispatched(s, current)
            else:
                inside = [self.number[id(n)] for n in walk(s) if id(n) in self.number]
                out.append(self._nested(s, current, inside))
                current = None if inside else current
        return out

    def _nested(self, s, current, inside):
        loop = isinstance(s, (gast.For, gast.While))
        if loop:
            self.loops.append(inside)
        inner = None if loop and inside else current
        for field in ("body", "orelse", "finalbody"):
            if getattr(s, field, None):
                setattr(s, field, self.block(getattr(s, field), inner))
        for h in getattr(s, "handlers", None) or ():
            h.body = self.block(h.body, inner)
        if loop:
            self.loops.pop()
        return s

    def _bound(self, s, k):
        """The build (then ``f_2 = b.f``, and the values no statement changes, ``f_3 =
        np.cos``), or a write ``b.f = v`` as ``f_3 = v; b.f = f_3``; then ``f_which = k``."""
        own = self.names[k]
        if s is self.build:
            value = gast.Attribute(gast.Name(self.name, gast.Load(), None, None), self.attr,
                                   gast.Load())
            made = [_assign(own, value)] + [_assign(self.names[h], clone(v))
                                             for h, v in self.hoisted]
        elif k in self.early:
            made = [self._write(k)]
        else:
            made = [_assign(own, s.value), self._write(k)]
        made.append(_assign(self.which, gast.Constant(k, None)))
        return ([s] if s is self.build else []) + [_located(n, s) for n in made]

    def _write(self, k):
        target = gast.Attribute(gast.Name(self.name, gast.Load(), None, None), self.attr,
                                gast.Store())
        return gast.Assign([target], gast.Name(self.names[k], gast.Load(), None, None), None)

    def _dispatched(self, s, current):
        if current is not None:
            return [_located(self._write(current), s), self._reading(s, current)]
        reaching = sorted(set(self.seen) | {k for loop in self.loops for k in loop})
        if not reaching:
            return [s]
        copies = {k: clone(s) for k in reaching[:-1]}  # (before `s` reads the last binding)
        branch = [_located(self._write(reaching[-1]), s), self._reading(s, reaching[-1])]
        for k in reversed(reaching[:-1]):
            test = gast.Compare(gast.Name(self.which, gast.Load(), None, None), [gast.Eq()],
                                [gast.Constant(k, None)])
            chosen = [_located(self._write(k), s), self._reading(copies[k], k)]
            branch = [_located(gast.If(test, chosen, branch), s)]
        return branch

    def _reading(self, s, k):
        """``s`` reading the binding ``k``'s name where it reads the field itself (no helper
        it calls writes it: ``check``)."""
        for n in walk(s):
            for field, value in gast.iter_fields(n):
                if isinstance(value, gast.Attribute) and self._field_read(value):
                    setattr(n, field, gast.copy_location(gast.Name(
                        self.names[k], gast.Load(), None, None), value))
                elif isinstance(value, list):
                    value[:] = [gast.copy_location(gast.Name(self.names[k], gast.Load(), None,
                                                             None), v)
                                if isinstance(v, gast.Attribute) and self._field_read(v) else v
                                for v in value]
        return s

    def _field_read(self, node):
        return node.attr == self.attr and _named(node.value, self.name) and isinstance(
            node.ctx, gast.Load)


def _unchanged(value, stored, ctx):
    """A name no statement of the function assigns, or an attribute of a module."""
    if isinstance(value, gast.Name):
        return value.id not in stored
    root = value
    while isinstance(root, gast.Attribute):
        root = root.value
    return isinstance(root, gast.Name) and root.id not in stored and inspect.ismodule(
        ctx.namespace.resolve(root, ctx.local_names))


def _statements(stmts):
    """The statements of ``stmts`` and of the blocks in them, in program order."""
    for s in stmts:
        yield s
        for field in ("body", "orelse", "finalbody"):
            if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
                break
            yield from _statements(getattr(s, field, None) or [])
        for h in getattr(s, "handlers", None) or ():
            yield from _statements(h.body)


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _located(stmt, where):
    for n in walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return stmt


def check(location, node, dispatched, written):
    """Refuse a field ``dispatch`` wrote again before a statement where the field may hold
    something else: a write of such a field in ``node`` (after inlining) that is none of the
    writes it numbered or added (``name = set_field(name, "f", f_k)``) nor a statement of the
    function's own block before ``f_2 = name.f`` (the object's ``__init__``)."""
    if not dispatched:
        return
    for name, attr, names, first in dispatched:
        start = next((i for i, s in enumerate(node.body) if isinstance(s, gast.Assign) and any(
            _named(t, first) for t in s.targets)), None)
        early = set() if start is None else {id(n) for s in node.body[:start] for n in walk(s)}
        foreign = [n for n in walk(node) if _field_write(n, attr) and id(n) not in early
                   and not _own(n, name, attr, names)]
        if start is None or foreign or "*" in written:
            where = foreign[0] if foreign else node
            raise location.error(UnsupportedSyntaxError, where, (
                f"srcgrad does not support calling here the function a field `{attr}` of an "
                f"object built here holds, when the function (or a helper it calls) writes "
                f"fields `{attr}` in a branch or a loop and also elsewhere (through a helper, "
                f"another name or another object): call the function where it is named, or "
                f"pass it as an argument of its own"))


def _field_write(n, attr):
    if isinstance(n, gast.Attribute) and n.attr == attr and isinstance(
            n.ctx, (gast.Store, gast.Del)):
        return True
    return isinstance(n, gast.Call) and len(n.args) >= 2 and isinstance(
        n.args[1], gast.Constant) and n.args[1].value == attr


def _own(n, name, attr, names):
    """``set_field(name, "attr", f_k)`` of a name ``dispatch`` made."""
    return isinstance(n, gast.Call) and len(n.args) == 3 and _named(n.args[0], name) and (
        isinstance(n.args[2], gast.Name) and n.args[2].id in names) and getattr(
        n.func, "id", "").startswith("set_field")
