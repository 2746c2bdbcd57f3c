"""Per-iteration saves of numbers as typed arrays, in specialized code numba compiles.

Requires: a derivative specialized to its arguments' kinds for ``backend="numba"``
(``ctx.for_numba``), and the kinds of the tuples each list of saves holds (``scalars.Kinds``:
``"float"`` a float64 number, ``"int"`` an int). Guarantees: each list of saves that holds
numbers only, is made empty at the top of the function, pushed once an iteration by a top-level
loop over a range and popped once, becomes one NumPy array per position, sized from the loop's
trip count before the loop, with an index:

    loop_saved = []                         loop_saved_top = 0
    for i in range(n):                      loop_saved_cap = len(range(n))
        ...                                 loop_saved_0 = np.empty(loop_saved_cap, np.int64)
        loop_saved.append((i, a))           loop_saved_1 = np.empty(loop_saved_cap, np.float64)
    ...                                     for i in range(n):
    (i, a) = loop_saved.pop()                   ...
                                                loop_saved_0[loop_saved_top] = i
                                                loop_saved_1[loop_saved_top] = a
                                                loop_saved_top = loop_saved_top + 1
                                            ...
                                            loop_saved_top = loop_saved_top - 1
                                            i = loop_saved_0[loop_saved_top]
                                            a = loop_saved_1[loop_saved_top]

The code runs the same in Python (a restored number is then a NumPy scalar of the same value);
numba compiles it without a typed list or a helper of its own (each costs a compilation of its
own at the first call). Lists of anything else stay lists (``emit/numba_backend.py``).
"""

from __future__ import annotations

import ast

import gast
import numpy as np

from ..astutil import walk
from ..emit import naming
from ..errors import InternalError

DTYPES = {"float": "float64", "int": "int64"}


def run(fn_node, ctx, saves, is_range):
    """Rewrite the lists of ``saves`` (name -> kinds of its tuples) that qualify."""
    for init in list(fn_node.body):
        name = _empty_list(init)
        kinds = saves.get(name) if name else None
        if not kinds or not all(k in DTYPES for k in kinds):
            continue
        found = _uses(fn_node, name, is_range)
        if found is not None:
            _rewrite(fn_node, ctx, init, name, kinds, *found)


def _empty_list(s):
    if (isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.List) and not s.value.elts):
        return s.targets[0].id
    return None


def _uses(fn_node, name, is_range):
    """``(loop, append, pop)`` of the list ``name``: its only uses but the initialization."""
    uses = [n for n in walk(fn_node) if isinstance(n, gast.Name) and n.id == name]
    appends = [s for s in walk(fn_node) if _method(s, name, "append")]
    pops = [s for s in walk(fn_node) if _method(s, name, "pop")]
    if len(uses) != 3 or len(appends) != 1 or len(pops) != 1:
        return None
    append, pop = appends[0], pops[0]
    item = append.value.args[0]
    elts = item.elts if isinstance(item, gast.Tuple) else [item]
    target = pop.targets[0]
    targets = target.elts if isinstance(target, gast.Tuple) else [target]
    if len(targets) != len(elts) or not all(isinstance(t, gast.Name) for t in targets):
        return None
    loop = _range_loop(fn_node, append, is_range)
    return None if loop is None else (loop, append, pop)


def _range_loop(fn_node, stmt, is_range):
    """The top-level loop over ``range(...)`` of names and constants running ``stmt`` at most
    once an iteration, or None."""
    for loop in fn_node.body:
        if isinstance(loop, gast.For) and _inside(stmt, loop.body):
            plain = all(isinstance(a, (gast.Name, gast.Constant)) for a in loop.iter.args)
            if is_range(loop.iter) and plain and not loop.iter.keywords:
                return loop
            return None
    return None


def _method(s, name, method):
    """``name.append(v)`` as a statement, or ``target = name.pop()``."""
    if method == "append" and isinstance(s, gast.Expr):
        call, n = s.value, 1
    elif method == "pop" and isinstance(s, gast.Assign) and len(s.targets) == 1:
        call, n = s.value, 0
    else:
        return False
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == method and isinstance(call.func.value, gast.Name)
            and call.func.value.id == name and len(call.args) == n and not call.keywords)


def _inside(stmt, body):
    """``stmt`` in ``body``, directly or in ``if`` branches (once an iteration at most)."""
    for s in body:
        if s is stmt or isinstance(s, gast.If) and (_inside(stmt, s.body)
                                                    or _inside(stmt, s.orelse)):
            return True
    return False


def _rewrite(fn_node, ctx, init, name, kinds, loop, append, pop):
    top = ctx.namer.fresh(naming.SAVES_TOP.format(name))
    cap = ctx.namer.fresh(naming.SAVES_CAP.format(name))
    columns = [ctx.namer.fresh(naming.SAVES_COLUMN.format(name, i)) for i in range(len(kinds))]
    np_name = ctx.global_name(np, "np")
    item = append.value.args[0]
    values = item.elts if isinstance(item, gast.Tuple) else [item]
    target = pop.targets[0]
    targets = target.elts if isinstance(target, gast.Tuple) else [target]
    _replace(fn_node.body, init, _parsed(f"{top} = 0"))
    made = [f"{cap} = len({_text(loop.iter)})"] + [
        f"{c} = {np_name}.empty({cap}, {np_name}.{DTYPES[k]})" for c, k in zip(columns, kinds)
    ]
    index = fn_node.body.index(loop)
    fn_node.body[index:index] = _parsed("\n".join(made))
    pushed = [f"{c}[{top}] = {_text(v)}" for c, v in zip(columns, values)]
    _replace_anywhere(fn_node, append, _parsed("\n".join([*pushed, f"{top} = {top} + 1"])))
    popped = [f"{top} = {top} - 1"] + [f"{t.id} = {c}[{top}]" for t, c in zip(targets, columns)]
    _replace_anywhere(fn_node, pop, _parsed("\n".join(popped)))


def _text(node):
    return ast.unparse(gast.gast_to_ast(node))


def _parsed(text):
    return gast.parse(text).body


def _replace(body, stmt, new):
    index = next(i for i, s in enumerate(body) if s is stmt)
    body[index:index + 1] = new


def _replace_anywhere(fn_node, stmt, new):
    for node in walk(fn_node):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and any(s is stmt for s in body):
                _replace(body, stmt, new)
                return
    raise InternalError("the statement is in no body")
