"""What ``checkpoint=`` does with a loop that grows a list by ``+=`` or writes an object's fields.

Requires: the parsed function (``node``, gast) and one of its top-level loops, before
``checkpoint.py`` makes the loop's step function (whose state arrives packed in a tuple, so the
step's derivative no longer sees that a name holds a list).
Guarantees:

* :func:`extend_lists`: ``L += <list display or comprehension>`` in the loop, where ``L`` is
  surely a list (every binding of ``L`` in the function is a list display or comprehension
  before the loop, or such a ``+=`` in it), becomes ``L.extend(<...>)``, what ``+=`` does to a
  list (in place); the step then copies ``L`` before extending it, as it does for ``append``.
  An array's ``z += [1.0, 2.0]`` (NumPy's addition) is left as it is.
* :func:`refuse_concatenations`: ``L = L + [...]`` of such a list, and ``T += (...)`` or
  ``T = T + (...)`` of a tuple bound to tuple displays, are refused at the loop's line: the
  step's derivative would meet a concatenation of a value it cannot see is a list or tuple.
* :func:`refuse_field_writes`: a loop that writes a field of an object it carries from one trip
  to the next (``p.a = ...``, ``p.a += ...``, ``p.items.append(...)``) is refused at the
  loop's line: a snapshot holds the object itself, not a copy of its fields, so a replay would
  start from the fields as the last trip left them.
* :func:`called_defs`: the functions and classes defined before the loop that its body calls
  (``def g(t): ...``, ``g = lambda t: ...``), which the step defines again (it is a function
  of its own, where the function's local ``g`` does not exist), and :func:`free_names`, the
  names they read, which the step then binds (as invariants or state).
"""

from __future__ import annotations

import gast

from .astutil import store_counts, stored, walk
from .checkpoint_sharing import call_writes, mutated, objects_written
from .errors import UnsupportedSyntaxError

LISTS = (gast.List, gast.ListComp)


def _display(value, kind):
    return isinstance(value, LISTS if kind is list else (gast.Tuple,))


def _concat_of(stmt, name):
    """Whether ``stmt`` is ``name = name + <value>`` (either order)."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
            and any(isinstance(s, gast.Name) and s.id == name
                    for s in (stmt.value.left, stmt.value.right)))


def surely(node, loop, name):
    """``list`` or ``tuple`` when every binding of ``name`` in ``node`` is a display of that
    kind before ``loop`` (top level), or a ``+=`` / ``name = name + ...`` of such a display in
    it; None otherwise (a parameter, anything else)."""
    params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
    params += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
    if any(a.id == name for a in params):
        return None
    stores = [n for n in walk(node) if isinstance(n, gast.Name) and n.id == name
              and isinstance(n.ctx, (gast.Store, gast.Del))]
    for kind in (list, tuple):
        before = _displays_before(node, loop, name, kind)
        allowed = before | _grown_in(loop, name, kind)
        if before and all(id(n) in allowed for n in stores):
            return kind
    return None


def _displays_before(node, loop, name, kind):
    """The targets of ``name = <display of kind>`` at the top level before ``loop``."""
    return {id(s.targets[0]) for s in node.body[:node.body.index(loop)]
            if isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name
            and _display(s.value, kind)}


def _grown_in(loop, name, kind):
    """The targets of ``name += <display>`` and ``name = name + <display>`` in ``loop``."""
    out = set()
    for s in walk(gast.Module(loop.body, [])):
        if isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add) and isinstance(
                s.target, gast.Name) and s.target.id == name and _display(s.value, kind):
            out.add(id(s.target))
        elif _concat_of(s, name):
            left = s.value.left
            other = s.value.right if isinstance(left, gast.Name) and left.id == name else left
            if _display(other, kind):
                out.add(id(s.targets[0]))
    return out


def extend_lists(node, loop):
    """``L += [...]`` of a list ``L`` in ``loop`` as ``L.extend([...])`` (module docstring)."""
    for s in walk(gast.Module(loop.body, [])):
        if (isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add)
                and isinstance(s.target, gast.Name) and isinstance(s.value, LISTS)
                and surely(node, loop, s.target.id) is list):
            call = gast.Call(gast.Attribute(gast.Name(s.target.id, gast.Load(), None, None),
                                            "extend", gast.Load()), [s.value], [])
            s.__class__ = gast.Expr
            s.value = call
            del s.target, s.op


def refuse_list_sorts(node, loop, location):
    """Refuse ``L.sort()`` in the loop of a name bound to a list before it: in the step, ``L``
    comes from the state tuple, and its sort was taken for an array's (``L[...] = np.sort(L)``),
    a TypeError when the derivative ran (random programs, seed 3249)."""
    for s in walk(gast.Module(loop.body, [])):
        if (isinstance(s, gast.Call) and isinstance(s.func, gast.Attribute)
                and s.func.attr == "sort" and isinstance(s.func.value, gast.Name)
                and _displays_before(node, loop, s.func.value.id, list)):
            name = s.func.value.id
            raise location.error(UnsupportedSyntaxError, loop, (
                f"checkpoint= cannot checkpoint this loop: it sorts the list `{name}` in place "
                f"(`{name}.sort()`), which its step cannot tell from an array's sort. Write "
                f"`{name} = sorted({name})`, or leave out checkpoint="))


def refuse_concatenations(node, loop, location):
    """Refuse ``L = L + [...]`` of a list, ``T += (...)`` / ``T = T + (...)`` of a tuple."""
    for s in walk(gast.Module(loop.body, [])):
        name = None
        if isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add) and isinstance(
                s.target, gast.Name):
            name = s.target.id
            if surely(node, loop, name) is not tuple:
                continue
        elif isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and _concat_of(s, s.targets[0].id):
            name = s.targets[0].id
            if surely(node, loop, name) is None:
                continue
        else:
            continue
        raise location.error(UnsupportedSyntaxError, loop, (
            f"checkpoint= cannot checkpoint this loop: it concatenates `{name}` with `+` (a new "
            f"list or tuple per trip), which the derivative of its step cannot tell from an "
            f"addition; grow a list in place instead (`{name}.append(v)`, `{name} += [v]`; a "
            f"tuple: a list made a tuple after the loop), or leave out checkpoint="))


def refuse_field_writes(loop, location, carried):
    """Refuse a loop that writes a field of an object it ``carried`` into a trip (the names of
    its state a trip reads before binding them; module docstring), or into what a name it
    binds to that field holds (``O = p.w; O *= v``)."""
    for n in walk(gast.Module(loop.body, [])):
        bases = []
        if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            bases = [n]
        elif isinstance(n, gast.AugAssign):
            bases = [n.target]
        elif isinstance(n, gast.Call):
            bases = list(call_writes(n))  # (`np.put(p.w, ...)` too)
        for base in bases:
            _refuse_field_write(loop, location, carried, base)
    written = objects_written(loop.body)
    for n in walk(gast.Module(loop.body, [])):  # `O = p.w; O *= v`: p's field, written
        if isinstance(n, gast.Assign) and any(isinstance(t, gast.Name) and t.id in written
                                              for t in n.targets):
            _refuse_field_write(loop, location, carried, n.value)


def _refuse_field_write(loop, location, carried, base):
    through = False
    while isinstance(base, (gast.Subscript, gast.Attribute)):
        through = through or isinstance(base, gast.Attribute)
        base = base.value
    if through and isinstance(base, gast.Name) and base.id in carried:
        raise location.error(UnsupportedSyntaxError, loop, (
            f"checkpoint= cannot checkpoint this loop: it writes a field of `{base.id}` in "
            f"place, which it carries from one trip to the next; a snapshot holds the "
            f"object, not a copy of its fields, so a replay would start from the fields "
            f"the last trip left. Bind `{base.id}` to a new object in each trip instead, or "
            f"leave out checkpoint="))


def called_defs(node, position, loop):
    """The functions and classes the function defines before the loop (``def g(t): ...``, and
    ``g = lambda t: ...`` bound once in the function) that the loop's body calls, and those they
    call in turn, in order: the step defines them again, after binding the names they read (a
    name also assigned elsewhere is left alone)."""
    before = node.body[:position]
    counts = store_counts(node.body)
    defs = {}
    for s in before:
        name = defined_name(s)
        if name is not None and counts[name] == (1 if isinstance(s, gast.Assign) else 0):
            defs[name] = s
    body = [gast.Expr(loop.test)] if isinstance(loop, gast.While) else []
    todo = [n.id for n in walk(gast.Module(body + loop.body, [])) if isinstance(n, gast.Name)]
    seen = set()
    while todo:
        name = todo.pop()
        if name in defs and name not in seen:
            seen.add(name)
            todo += [n.id for n in walk(defs[name]) if isinstance(n, gast.Name)]
    return [s for s in before if defined_name(s) in seen and defs.get(defined_name(s)) is s]


def refuse_other_defs(node, loop, defs, location):
    """Refuse a loop whose body calls a function or class the function defines other than once
    at its top level before the loop (in a branch, after the loop, on two paths): the step,
    a function of its own, could not define it again (``defs``: :func:`called_defs`)."""
    elsewhere = set()
    for stmt in node.body:
        if stmt is not loop:
            elsewhere |= {defined_name(n) for n in walk(stmt)} - {None}
    elsewhere -= {defined_name(d) for d in defs}
    body = [gast.Expr(loop.test)] if isinstance(loop, gast.While) else []
    for n in walk(gast.Module(body + loop.body + defs, [])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in elsewhere:
            raise location.error(
                UnsupportedSyntaxError, loop,
                f"checkpoint= cannot checkpoint this loop: it calls `{n.id}`, which the "
                f"function defines in a branch, a loop, or more than once; define `{n.id}` "
                f"once at the top of the function, before the loop",
            )


def defined_name(stmt):
    """The name ``stmt`` defines a function or class under (``def g``, ``class C``, ``g =
    lambda ...``), or None."""
    if isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
        return stmt.name
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Lambda)):
        return stmt.targets[0].id
    return None


def free_names(definition):
    """The names a function or class defined in the function reads from it (not its own
    parameters or the names its body binds)."""
    if isinstance(definition, gast.Assign):  # `g = lambda t: ...`
        definition = definition.value
    own = stored(definition.body)
    if isinstance(definition, (gast.FunctionDef, gast.Lambda)):
        own |= {a.id for a in walk(definition.args) if isinstance(a, gast.Name)}
    return {n.id for n in walk(definition) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)} - own


def written_by(defs):
    """The names of the function that the functions ``defs`` write into in place when the
    loop calls them (``def add(v): acc[:] = acc + v``, ``hs.append(v)``): the loop's state."""
    out = set()
    for definition in defs:
        inner = definition.value if isinstance(definition, gast.Assign) else definition
        body = [gast.Expr(inner.body)] if isinstance(inner, gast.Lambda) else inner.body
        out |= mutated(body) & free_names(definition)
    return out
