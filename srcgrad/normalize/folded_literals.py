"""A literal of functions changed before it is looped over, folded into one literal; part of
``unpacking.unroll_function_loops``.

Requires: a parsed function after ``sugar``, the names a loop over functions runs over (or
whose items it calls), and the names the function stores. Guarantees: ``fs = [a]`` followed in
the same block by changes of ``fs`` and by statements that do not read it (``fs.append(b)``,
``fs.insert(0, b)``, ``fs.extend([b])``, ``fs += [b]``, ``fs = fs + (b,)`` (also into a new
name for it, ``fs_2 = fs + (b,)``, where ``fs`` is read nowhere else), ``hooks["c"] = b``,
``fs[0] = b``, ``del hooks["a"]``) is one literal, built where the last change is, of items
each read where Python reads it: an attribute into a name of its own there (a bound method
keeps the object it was taken from), a name no statement of the function rebinds as it is. A
loop over ``fs`` then sees a literal of functions, as if it had been written so. An item that
is neither (``fs.append(make())``), or a read of ``fs`` between other than ``len(fs)`` (the
number of items it holds there, a constant), leaves the statements as they are.

    fs = [np.sin]                 fs_1 = np.sin
    y = x * 2.0            ->     y = x * 2.0
    fs.append(np.cos)             fs_2 = np.cos
                                  fs = [fs_1, fs_2]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import gast

from ..astutil import clone, walk
from ..emit import naming
from .unpacking import _constant, _elements, _fresh, _literal, _named_function


def fold_changes(fn_node, names, stored):
    """``fn_node`` with each literal of ``names`` and its changes folded (see above)."""
    if not names:
        return fn_node
    names_of = _Names(names, stored, {n.id for n in walk(fn_node) if isinstance(n, gast.Name)},
                      Counter(n.id for n in walk(fn_node) if isinstance(n, gast.Name)))
    fn_node.body = _block(fn_node.body, names_of)
    return fn_node


@dataclass
class _Names:
    wanted: set  # the names a loop over functions reads
    stored: set  # the names the function stores
    taken: set  # every name of the function (the fresh ones added)
    mentions: Counter  # how many times each name appears


def _block(stmts, names):
    for s in stmts:
        for field_ in ("body", "orelse", "finalbody"):
            inner = getattr(s, field_, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt) and (
                    not isinstance(s, gast.FunctionDef)):
                setattr(s, field_, _block(inner, names))
    k = 0
    while k < len(stmts):
        folded = _run(stmts, k, names)
        if folded is None:
            k += 1
            continue
        end, new = folded
        stmts[k:end] = new
        k += len(new)
    return stmts


def _run(stmts, k, names):
    """``(end, statements)`` replacing ``stmts[k:end]`` where ``stmts[k]`` assigns a literal that
    changes follow, the last leaving it in a name of ``names.wanted``; else None."""
    s = stmts[k]
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
            s.targets[0], gast.Name) and _literal(s.value)):
        return None
    name, literal, out = s.targets[0].id, clone(s.value), []
    items = [_read(e, s, name, names, out) for e in _elements(literal)]
    if any(e is None for e in items):
        return None
    _elements(literal)[:] = items
    last, name = _changes(stmts, k, name, literal, names, out)
    if last is None or name not in names.wanted:
        return None
    kept = [t for t in out if not any(t is u for u in stmts[last + 1:])]  # (those after stay)
    assign = gast.copy_location(gast.Assign([gast.Name(name, gast.Store(), None, None)],
                                            literal, None), stmts[last])
    return last + 1, kept + [assign]


def _changes(stmts, k, name, literal, names, out):
    """``(the index of the last change, the name then holding the literal)``: the changes
    after ``stmts[k]`` applied to ``literal``, up to the first other read of its name, the
    statements between and the readings of the items put into ``out``; ``(None, name)`` where
    an item is no named function."""
    seen = Counter(n.id for n in walk(stmts[k]) if isinstance(n, gast.Name))
    last = None
    for j in range(k + 1, len(stmts)):
        t = stmts[j]
        seen.update(n.id for n in walk(t) if isinstance(n, gast.Name))
        change = _change_of(t, name, literal)
        if change is not None and change[0] == "rename" and seen[name] != names.mentions[name]:
            change = None  # (`fs` read elsewhere too: it holds the list before the change)
        if change is None:
            _measured(t, name, literal, names)
            if any(isinstance(n, gast.Name) and n.id == name for n in walk(t)):
                break
            out.append(t)
            continue
        how, new, key = change
        new = [_read(e, t, name, names, out) for e in new]
        if any(e is None for e in new):
            return None, name
        if how == "rename":
            how, name = "extend", key
        _apply(literal, how, new, key)
        last = j
    return last, name


def _measured(t, name, literal, names):
    """``len(fs)`` in ``t`` made the number of items the literal holds there, where ``fs`` is
    read only so in ``t`` (and ``len`` is the builtin): what Python's ``len`` gives, the
    changes before being known."""
    sizes = [n for n in walk(t) if _is_len_of(n, name)]
    reads = [n for n in walk(t) if isinstance(n, gast.Name) and n.id == name]
    if not sizes or len(sizes) != len(reads) or "len" in names.stored:
        return
    size = len(literal.keys if isinstance(literal, gast.Dict) else literal.elts)
    for parent in walk(t):
        for field_, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for i, child in enumerate(items):
                if any(child is c for c in sizes):
                    _put(parent, field_, i, gast.copy_location(gast.Constant(size, None), child))


def _is_len_of(n, name):
    return (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "len"
            and len(n.args) == 1 and not n.keywords and isinstance(n.args[0], gast.Name)
            and n.args[0].id == name)


def _put(parent, field_, i, node):
    """``node`` in place of the ``i``-th child of ``parent``'s ``field_``."""
    value = getattr(parent, field_)
    if isinstance(value, list):
        value[i] = node
    else:
        setattr(parent, field_, node)


def _read(e, where, name, names, out):
    """The item ``e`` as the folded literal holds it, its reading put into ``out`` (an
    attribute read into a name of its own, ``fs_2 = np.cos``; a name no statement rebinds, as
    it is); None for an item that is no named function or reads ``name``."""
    if any(isinstance(n, gast.Name) and n.id == name for n in walk(e)):
        return None
    if isinstance(e, gast.Name):
        return clone(e) if e.id not in names.stored else None
    if not (isinstance(e, gast.Attribute) and _named_function(e, names.stored)):
        return None
    held = _fresh(naming.HELD_ITEM.format(name, len(out) + 1), names.taken)
    out.append(gast.copy_location(gast.Assign([gast.Name(held, gast.Store(), None, None)],
                                              clone(e), None), where))
    return gast.copy_location(gast.Name(held, gast.Load(), None, None), e)


def _change_of(t, name, literal):
    """``(how, items, key)`` of a statement ``t`` changing the literal of ``name`` (see the
    module's docstring), else None."""
    if isinstance(literal, gast.List):
        found = _method_change(t, name)
        if found is not None:
            return found
    if not isinstance(literal, gast.Dict):
        found = _concatenation(t, name, literal)
        if found is not None:
            return found
    return _keyed_change(t, name, literal)


def _method_change(t, name):
    """``fs.append(b)``, ``fs.extend([b, c])``, ``fs.insert(0, b)`` of a list literal."""
    call = t.value if isinstance(t, gast.Expr) else None
    if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name) and call.func.value.id == name
            and not call.keywords):
        return None
    how, args = call.func.attr, call.args
    if how == "append" and len(args) == 1:
        return "extend", args, None
    if how == "extend" and len(args) == 1 and _display(args[0], (gast.List, gast.Tuple)):
        return "extend", list(args[0].elts), None
    index = _constant(args[0]) if how == "insert" and len(args) == 2 else None
    if index is not None and type(index[0]) is int:
        return "insert", [args[1]], index[0]
    return None


def _concatenation(t, name, literal):
    """``fs += [b]``, ``fs = fs + (b,)`` (of the literal's own kind; ``+=`` of a list takes a
    tuple too), and ``fs_2 = fs + (b,)``: ``("rename", items, "fs_2")``."""
    if isinstance(t, gast.AugAssign) and isinstance(t.op, gast.Add) and isinstance(
            t.target, gast.Name) and t.target.id == name:
        kinds = (gast.List, gast.Tuple) if isinstance(literal, gast.List) else (gast.Tuple,)
        return ("extend", list(t.value.elts), None) if _display(t.value, kinds) else None
    if not (isinstance(t, gast.Assign) and len(t.targets) == 1 and isinstance(
            t.targets[0], gast.Name) and isinstance(t.value, gast.BinOp) and isinstance(
            t.value.op, gast.Add) and isinstance(t.value.left, gast.Name)
            and t.value.left.id == name and _display(t.value.right, (type(literal),))):
        return None
    target = t.targets[0].id
    if target == name:
        return "extend", list(t.value.right.elts), None
    return "rename", list(t.value.right.elts), target


def _keyed_change(t, name, literal):
    """``hooks["c"] = g``, ``fs[0] = g``, ``del hooks["a"]`` of the literal of ``name``."""
    target = t.targets[0] if isinstance(t, (gast.Assign, gast.Delete)) and len(
        t.targets) == 1 else None
    if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
            and target.value.id == name and _constant(target.slice) is not None):
        return None
    key = _constant(target.slice)[0]
    if isinstance(literal, gast.Dict):
        if not isinstance(key, str):
            return None
        if isinstance(t, gast.Delete):
            return ("delete", [], key) if any(k.value == key for k in literal.keys) else None
        return "set", [t.value], key
    if isinstance(literal, gast.List) and isinstance(t, gast.Assign) and type(key) is int and (
            -len(literal.elts) <= key < len(literal.elts)):
        return "set", [t.value], key
    return None


def _display(value, kinds):
    return isinstance(value, kinds) and not any(isinstance(e, gast.Starred) for e in value.elts)


def _apply(literal, how, items, key):
    """The literal changed as Python changes the container (``_change_of``)."""
    if how == "extend":
        literal.elts.extend(items)
    elif how == "insert":
        literal.elts.insert(key, items[0])
    elif isinstance(literal, gast.Dict):
        at = next((i for i, k in enumerate(literal.keys) if k.value == key), None)
        if how == "delete":
            del literal.keys[at], literal.values[at]
        elif at is None:
            literal.keys.append(gast.Constant(key, None))
            literal.values.append(items[0])
        else:
            literal.values[at] = items[0]
    else:
        literal.elts[key] = items[0]
