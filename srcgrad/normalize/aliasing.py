"""Which arrays a value may share memory with, for the copy pass (``inplace.py``) and the reverse
sweep's restores (``transform/tape.py``): a view (``x[1:]``, ``x.T``, ``np.reshape(x, s)``), the
array itself (``r = x``), a tuple or list holding it, and the names holding a value where a
statement reads it.

Requires: statements in A-normal form (after inlining). Guarantees: an over-approximation: a
name that may share memory with an array is listed; the statements are not changed.

    aliases(parse("r = x[1:]; t = (x, y); s = r.T"), ctx)
        ->  {"r": {"x"}, "t": {"x", "y"}, "s": {"r"}}
"""

from __future__ import annotations

import gast

from .. import runtime
from ..astutil import ordered_walk, stored, walk
from .anf import VIEW_METHODS


def aliases(stmts, ctx):
    """``{r: names of the arrays r may share memory with}`` for the assignments in ``stmts``
    (``r = x[1:]``, ``r = x.T``, ``r = np.reshape(x, s)``, ``r = x``, ``t = (x, y)``): reading
    ``r`` reads those arrays. The reverse sweep uses it to restore what a later write changed
    under a view it reads (``transform/tape.py``)."""
    from .sharing import NUMPY_VIEWS

    def returns_a_view(func):
        fn = ctx.namespace.resolve(func, ctx.local_names)
        # (`seq_2 = iteration_sequence(seq)` of a list is the list itself)
        return fn is runtime.iteration_sequence or any(fn is v for v in NUMPY_VIEWS)

    out = {}
    for node in ordered_walk(gast.Module(list(stmts), [])):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            r = node.targets[0].id
            bases = {b.id for b in _aliased(node.value, (), returns_a_view)
                     if isinstance(b, gast.Name) and b.id != r}
            if bases:
                out.setdefault(r, set()).update(bases)
    return out


def _new_cast(call, copy_position):
    """Whether an ``astype`` call surely returns a new array: unless ``copy`` is given (NumPy
    may then return the array itself when the dtype already matches)."""
    copy = next((k.value for k in call.keywords if k.arg == "copy"), None)
    if len(call.args) > copy_position:
        copy = call.args[copy_position]
    return copy is None or (isinstance(copy, gast.Constant) and copy.value is True)


def same_items(call, containers):
    """Whether a method call's result may hold what its object holds: a view, the shallow copy
    of a list or dict of ``containers``, ``x.astype(dtype, copy=False)`` (``x`` itself where
    the dtype matches)."""
    func = call.func
    shallow = func.attr == "copy" and isinstance(func.value, gast.Name) and (
        func.value.id in containers)
    return shallow or func.attr in VIEW_METHODS or func.attr == "astype" and not _new_cast(call, 4)


def _integer_lists(fn_node):
    """Names bound only to list literals of integers (``[0, 1, 2]``, an index that copies)."""
    kinds = {}
    for n in ordered_walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            v = n.value
            ok = isinstance(v, gast.List) and bool(v.elts) and all(
                isinstance(e, gast.Constant) and type(e.value) is int for e in v.elts
            )
            kinds.setdefault(n.targets[0].id, []).append(ok)
        elif isinstance(n, (gast.For, gast.AugAssign)):
            for t in ordered_walk(n.target):
                if isinstance(t, gast.Name):
                    kinds.setdefault(t.id, []).append(False)
    return {name for name, flags in kinds.items() if all(flags)}


def _aliased(value, holding=(), returns_a_view=lambda func: False):
    """The variable whose array ``value`` may share memory with: ``x``, ``x[...]``, ``x.T``,
    ``x.reshape(...)``, or ``[x, ...]`` / ``(x, ...)`` / ``{k: x}`` holding it, or a list or
    dict that a helper of ``holding`` puts it in (``xs = list_append(xs, x)``)."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return list(value.elts)
    if isinstance(value, gast.Dict):
        return list(value.values)
    if (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id in holding
    ):
        return list(value.args[1:])
    if isinstance(value, gast.Call):
        viewed = _viewed(value, returns_a_view)
        if viewed is not None:
            return viewed
    if isinstance(value, gast.Subscript):
        return [value.value]
    if isinstance(value, gast.Attribute) and value.attr in ("T", "mT", "real", "imag"):
        return [value.value]
    return [value]


def _viewed(call, returns_a_view):
    """The arrays a call's result may be a view of (a NumPy function or method returning
    one), or None."""
    if call.args and returns_a_view(call.func):
        if isinstance(call.args[0], gast.Constant):  # np.einsum("ii->i", M): its operands
            return list(call.args[1:])
        return [call.args[0]]  # np.asarray(x), np.reshape(x, s), np.transpose(x)
    if not isinstance(call.func, gast.Attribute):
        return None
    if call.func.attr in VIEW_METHODS:
        return [call.func.value]
    if call.func.attr == "astype" and not _new_cast(call, 4):  # (dtype, order, ..., copy)
        return [call.func.value]  # x.astype(dtype, copy=False): x itself for its own dtype
    return None


def _in_order(stmts, skip=frozenset()):
    """(statement, names it reads outside nested statements) in execution-text order; names
    whose id is in ``skip`` are not reads."""
    for stmt in stmts:
        nested = []
        for field in ("body", "orelse"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                nested += block
        inner = {id(n) for s in nested for n in walk(s)}
        names = [
            n.id for n in ordered_walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in inner
            and id(n) not in skip
        ]
        yield stmt, names
        yield from _in_order(nested, skip)


def _list_copy(value):
    """``xs[:]``, ``xs[a:b]``: for a list (the only thing ``append`` works on) a new list."""
    return isinstance(value, gast.Subscript) and isinstance(value.slice, gast.Slice)


def _is_view_index(index):
    """Whether ``x[index]`` is a view whatever x's rank: slices, ``...`` and ``None``."""
    if isinstance(index, gast.Slice):
        return True
    if isinstance(index, gast.Constant) and (index.value is Ellipsis or index.value is None):
        return True
    if isinstance(index, gast.Tuple):
        return any(_is_view_index(e) for e in index.elts)
    return False


# calls whose result holds the same elements as their argument (a loop's sequence, a list of it)
# ``d.keys()``, ``d.values()``, ``d.items()``: Python's are live views of the dict, srcgrad's
# lists of what it holds when they are made; one read after a write into the dict is refused.
DICT_VIEWS = (runtime.dict_values, runtime.dict_items)  # (keys change only with new keys)


SAME_ELEMENTS = (runtime.iteration_sequence, runtime.as_list, runtime.as_tuple, list, tuple,
                 reversed)


def _holders(fn_node, position, holding, returns_a_view):
    """``{name: [(position, names its value may hold or share memory with)]}`` from each
    assignment: ``L = [y]``, ``t = (y, w)``, ``z = L``, ``z = L[0]``, ``s = iteration_sequence(L)``,
    ``xs = list_append(xs, y)``."""
    out = {}
    for node in ordered_walk(fn_node):
        if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)):
            continue
        value = node.value
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and any(
            getattr(runtime, value.func.id, None) is h or value.func.id == h.__name__
            for h in SAME_ELEMENTS
        ):
            parts = list(value.args)
        else:
            parts = _aliased(value, holding, returns_a_view)
        names = {p.id for p in parts if isinstance(p, gast.Name)}
        if names and id(node) in position:
            out.setdefault(node.targets[0].id, []).append((position[id(node)], names))
    return out


def _reached(names, holders, before):
    """The names whose arrays the values of ``names`` may hold, through assignments made before
    position ``before`` (transitively), not counting ``names`` themselves."""
    seen, stack = set(), [n.id for n in names]
    while stack:
        name = stack.pop()
        for pos, held in holders.get(name, ()):
            for h in held - seen:
                if pos < before:
                    seen.add(h)
                    stack.append(h)
    return seen - {n.id for n in names}


def held_through(value, before, checks):
    """The names whose objects ``value`` holds through containers made before position
    ``before`` by displays or appends (``L = list_append(L, t)`` of ``t = (1, y)``, ``L =
    [[y]]``), transitively: a write into ``y`` by its name changes what L holds (none where
    ``value`` makes no container; ``checks``: the in-place pass, its bindings and context)."""
    out, stack = set(), [value]
    while stack:
        parts = _made_parts(stack.pop(), checks.ctx)
        for name in {p.id for p in parts if isinstance(p, gast.Name)} - out:
            out.add(name)
            stack += [v for pos, v in zip(checks.bindings.get(name, ()),
                                          checks.values.get(name, ())) if pos < before]
    return out


def _made_parts(value, ctx):
    """The parts of a display, or of ``list_append(L, t)`` / ``list_insert(L, i, t)``."""
    if isinstance(value, (gast.List, gast.Tuple)):
        return value.elts
    if isinstance(value, gast.Dict):
        return value.values
    if isinstance(value, gast.Call) and any(
            ctx.namespace.resolve(value.func, ctx.local_names) is h
            for h in (runtime.list_append, runtime.list_insert)):
        return value.args
    return []


def _holding(names, holders, skip):
    """``names`` and the names whose values may hold or share memory with their arrays
    (``b = [a]``, ``c = a[1:]``, ``hist = list_append(hist, a)``), transitively, not through the
    names of ``skip``."""
    out, size = set(names), -1
    while size != len(out):
        size = len(out)
        out |= {n for n, bound in holders.items() if n not in skip
                for _, held in bound if held & out}
    return out


def _bound_from(fn_node, position):
    """``{name: the first position from which it is bound on every path}``: parameters from the
    start, a name assigned by a statement of the function's own block from there."""
    args = fn_node.args
    out = {a.id: -1 for a in args.posonlyargs + args.args + args.kwonlyargs}
    for stmt in fn_node.body:
        if isinstance(stmt, gast.Assign) and id(stmt) in position:
            for t in stored(stmt):
                out.setdefault(t, position[id(stmt)])
    return out


def checkpointed_loop_fn():
    """``checkpoint.checkpointed_loop`` (imported when asked: checkpoint.py imports the
    transforms, which import this package)."""
    from ..checkpoint import checkpointed_loop

    return checkpointed_loop


def returned_arguments(call, fn, ctx, names):
    """``call`` with the arguments what it returns may hold: a checkpointed loop's state alone
    when its body binds no name of the state but to new arrays of arithmetic, and writes into
    none (the step's ``__srcgrad_holds_invariants__`` False): it returns no invariant."""
    if fn is not checkpointed_loop_fn() or len(call.args) < 5 or getattr(
            ctx.namespace.resolve(call.args[1], names), "__srcgrad_holds_invariants__", True):
        return call
    return gast.Call(call.func, call.args[:4], [])


def kept_state(value, values, ctx, names):
    """The name ``v`` when ``value`` is ``t[k]`` of ``t = checkpointed_loop(probe, step, steps,
    state, ...)`` (the call ``checkpoint=`` makes of a loop), ``state`` bound once to a tuple
    display with the name ``v`` at ``k``, and ``k`` among the step's kept state (the loop's
    body binds ``v`` never, or only to a new array of arithmetic): ``t[k]`` is then the object
    ``v`` was, or the step's copy of it, of the same kind (a list of ``v``'s, a dict...); else
    None. ``values``: ``{name: the values of its plain bindings}``; ``names``: the local
    names (a callee is resolved through ``ctx``'s namespace)."""
    def resolve(func):
        return ctx.namespace.resolve(func, names)

    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
            and isinstance(value.slice, gast.Constant) and type(value.slice.value) is int):
        return None
    k, made = value.slice.value, values.get(value.value.id, ())
    if len(made) != 1 or not isinstance(made[0], gast.Call) or len(made[0].args) < 4:
        return None
    call = made[0]
    if resolve(call.func) is not checkpointed_loop_fn() or not isinstance(call.args[1], gast.Name):
        return None
    kept = getattr(resolve(call.args[1]), "__srcgrad_kept_state__", ())
    state = call.args[3]
    tuples = values.get(state.id, ()) if isinstance(state, gast.Name) else ()
    if k in kept and len(tuples) == 1 and isinstance(tuples[0], gast.Tuple) and (
            k < len(tuples[0].elts) and isinstance(tuples[0].elts[k], gast.Name)):
        return tuples[0].elts[k]
    return None


def own_key_writes(inplace, value, r, later):
    """``for k, v in d.items(): d[k] = ...``: every later write into the dict is at the key
    of the item the loop is at, so the items still to come are unchanged (``inplace``: the
    pass of normalize/inplace.py, its bindings known)."""
    fn = inplace.ctx.namespace.resolve(value.func, inplace.ctx.local_names) if isinstance(
        value, gast.Call) else None
    if fn is not runtime.dict_items:
        return False
    items = {n for n, vs in inplace.values.items()
             if all(isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name)
                    and v.value.id == r for v in vs)}
    keys = {n for n, vs in inplace.values.items()
            if all(isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name)
                   and v.value.id in items and isinstance(v.slice, gast.Constant)
                   and v.slice.value == 0 for v in vs)}
    written = [inplace.write_nodes.get(w) for w in later]
    return all(w is not None and len(w.value.args) > 1 and isinstance(w.value.args[1],
               gast.Name) and w.value.args[1].id in keys for w in written)


def written_next_trip(inplace, node, made, base, writes, reads):
    """Whether a write into ``base`` before ``node`` (``r = ...`` at position ``made``, ``r``
    holding or viewing ``base``'s array) in a loop around both is made again in the next trip,
    after it, while ``r`` still holds it (``node`` updates ``r``: ``L = list_append(L, g)``) and
    is read in a later trip or after the loop: ``g[0] = v; L.append(g)``, then ``L[0]`` sees
    the next trip's write (unless the loop binds ``base`` afresh each trip). ``writes``,
    ``reads``: the positions of the writes into ``base`` and of the reads of ``r``."""
    r = node.targets[0].id
    if not any(isinstance(n, gast.Name) and n.id == r for n in walk(node.value)):
        return False  # (`L = [g]`: each trip's r is a new container)
    for start, end in inplace.loop_spans:
        fresh = any(start <= p <= end and p not in inplace.write_nodes
                    for p in inplace.bindings.get(base, ()))
        if start < made <= end and not fresh and any(start <= w < made for w in writes) and any(
                k >= start and k != made for k in reads):
            return True
    return False
