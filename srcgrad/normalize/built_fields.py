"""What is known of the fields of objects built in the function; part of ``callables``.

Requires: a body after inlining (or as far as it got), its field writes in the form
``name = set_field(name, "attr", value)``. Guarantees: the questions
``StaticValues.check_field_reads`` asks of it: how many writes of a field a name's object
gets, whether the object may be reached by another name, whether a name only ever holds
objects built here; and the field writes of local functions dropped once every read of them
is resolved.
"""

from __future__ import annotations

import gast


def drop_field_writes(node, pairs):
    """``node`` without the statements ``name = set_field(name, "attr", ...)`` of ``pairs``."""
    for n in gast.walk(node):
        for part in ("body", "orelse"):
            stmts = getattr(n, part, None)
            if not isinstance(stmts, list):
                continue
            kept = [s for s in stmts if not (
                isinstance(s, gast.Assign) and isinstance(s.value, gast.Call)
                and len(s.value.args) == 3 and isinstance(s.value.args[0], gast.Name)
                and isinstance(s.value.args[1], gast.Constant)
                and getattr(s.value.func, "id", "").startswith("set_field")
                and (s.value.args[0].id, s.value.args[1].value) in pairs)]
            setattr(n, part, kept or ([gast.Pass()] if part == "body" and stmts else kept))


def own_writes(name, attr, node, before=None):
    """How many ``name = set_field(name, "attr", v)`` ``node`` holds; with ``before`` (a
    node of ``node``), whether the first runs before it on every path (``written_before``)."""
    if before is not None:
        return written_before(name, attr, node, before)
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Call) and len(n.args) == 3
               and isinstance(n.args[0], gast.Name) and n.args[0].id == name
               and isinstance(n.args[1], gast.Constant) and n.args[1].value == attr)


def written_before(name, attr, node, expr):
    """Whether the one ``name = set_field(name, "attr", v)`` of ``node`` runs before ``expr``
    on every path to it: a block holds the write, then the statement holding ``expr``. (One
    in a branch or a loop, read after it: where it did not run, Python finds no such field.)"""
    for block in (getattr(n, f) for n in gast.walk(node) for f in ("body", "orelse",
                  "finalbody") if isinstance(getattr(n, f, None), list)):
        for i, s in enumerate(block):
            if isinstance(s, gast.Assign) and own_writes(name, attr, s.value) == 1:
                return any(n is expr for later in block[i + 1:] for n in gast.walk(later))
    return False


def written_just_before(write, expr, node):
    """Whether a block of ``node`` holds the statement ``write`` and, later, a statement
    holding ``expr`` with no loop between them (each run of ``expr`` follows a run of
    ``write`` in the same run of the block)."""
    for n in gast.walk(node):
        for block in (getattr(n, f, None) for f in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and any(s is write for s in block):
                i = next(k for k, s in enumerate(block) if s is write)
                return any(_reached(later, expr) for later in block[i + 1:])
    return False


def _reached(stmt, expr):
    """Whether ``expr`` is in ``stmt``, inside no loop of it (nor a nested def)."""
    if stmt is expr:
        return True
    if isinstance(stmt, (gast.For, gast.While, gast.FunctionDef, gast.Lambda)):
        return False
    return any(_reached(child, expr) for child in gast.iter_child_nodes(stmt))


def bindings(name, node):
    """How many statements of ``node`` bind ``name`` other than by ``name = set_field(name,
    ...)`` (a write of a field of the object it holds)."""
    return sum(1 for n in gast.walk(node) for t in (
        n.targets if isinstance(n, gast.Assign) else [getattr(n, "target", None)])
        if isinstance(t, gast.Name) and t.id == name and not (
            isinstance(n, gast.Assign) and isinstance(n.value, gast.Call) and getattr(
                n.value.func, "id", "").startswith("set_field")))


def built_in(name, node):
    """The block (a list of statements) of ``node`` holding the one statement that binds
    ``name`` other than by writing a field of it, or None."""
    if bindings(name, node) != 1:
        return None
    for n in gast.walk(node):
        for block in (getattr(n, f, None) for f in ("body", "orelse", "finalbody")):
            if isinstance(block, list) and any(isinstance(s, gast.Assign) and any(
                    isinstance(t, gast.Name) and t.id == name for t in s.targets) and not (
                    isinstance(s.value, gast.Call) and getattr(s.value.func, "id", "").startswith(
                        "set_field")) for s in block):
                return block
    return None


READ_OR_SET = ("set_field", "check_method_of", "check_class")


def escapes(name, node, group=()):
    """Whether the object ``name`` holds may be reached by another name (``c = b``, a
    helper's parameter, a container, a call): ``name`` read otherwise than as ``name.attr``
    or as what ``name = set_field(name, ...)`` changes (or given to a name of ``group``)."""
    inner = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name):
            inner.add(id(n.value))
        elif isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) and all(
                isinstance(t, gast.Name) and t.id in group for t in n.targets):
            inner.add(id(n.value))
        elif isinstance(n, gast.Call) and n.args and isinstance(n.args[0], gast.Name) and (
                getattr(n.func, "id", "").startswith(READ_OR_SET)):
            inner.add(id(n.args[0]))  # (a write of the field, or a run-time check reading it)
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               and id(n) not in inner for n in gast.walk(node))


def is_parameter(name, node):
    args = getattr(node, "args", None)
    return args is not None and name in {a.id for a in args.posonlyargs + args.args
                                         + args.kwonlyargs}


def built_here(name, node, builds, argument=False):
    """Whether every binding of ``name`` in ``node`` is an object built here
    (``new_instance(C)``, ``C()`` of a class, ``builds(func)``) or a field of it set
    (``name = set_field(name, ...)``), never a parameter (an argument's object) unless
    ``argument`` (then the parameter's binding and such field writes only)."""
    if is_parameter(name, node) and not argument:
        return False
    for n in gast.walk(node):
        targets = n.targets if isinstance(n, gast.Assign) else [getattr(n, "target", None)]
        if not any(isinstance(t, gast.Name) and t.id == name for t in targets):
            continue
        value = getattr(n, "value", None)
        func = getattr(getattr(value, "func", None), "id", "")
        if not (isinstance(n, gast.Assign) and isinstance(value, gast.Call) and (
                func.startswith("new_instance") or builds(value.func) or func.startswith(
                    "set_field") and (
                    isinstance(value.args[0], gast.Name) and value.args[0].id == name))):
            return False
    return True
