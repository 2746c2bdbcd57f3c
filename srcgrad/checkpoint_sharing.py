"""Which names a loop's code may make share memory, for ``checkpoint=`` (``checkpoint.py``):
a loop writing in place into a value another name bound before it shares is refused there,
and what the loop writes into (``mutated``, ``written_through_items``) is its state.

    sharing_edges(parse('z = y[0:2]; L = [y]; t = (w, x)'))
        -> {('z', 'y'), ('L', 'y'), ('t', 'w'), ('t', 'x')}
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import sys
import types

import gast
import numpy as np

from .astutil import clone, walk
from .emit.compile import _cells
from .frontend.source import GENERATED_SOURCE

# NumPy functions whose result may be a view of their first argument (normalize/sharing.py)
_VIEW_FUNCTIONS = {"asarray", "asanyarray", "reshape", "ravel", "transpose", "squeeze",
                   "expand_dims", "swapaxes", "moveaxis", "atleast_1d", "atleast_2d",
                   "atleast_3d", "broadcast_to", "diagonal", "real", "imag", "split",
                   "array_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud",
                   "rot90", "asarray_chkfinite", "rollaxis", "trim_zeros", "broadcast_arrays",
                   "as_strided", "sliding_window_view", "matrix_transpose", "permute_dims",
                   "unstack", "ascontiguousarray", "asfortranarray", "require",
                   "real_if_close", "diag", "einsum", "nan_to_num", "diff"}


# methods that change their object in place
MUTATING = ("append", "extend", "insert", "remove", "clear", "update", "pop", "sort", "reverse",
            "fill", "resize", "put", "setdefault", "popitem")


# NumPy functions that write into their first argument
NUMPY_WRITES = ("put", "copyto", "place", "putmask", "fill_diagonal", "put_along_axis")


# methods whose result is never the array they are called on, nor a view of it
_NEW_METHODS = {"copy", "flatten", "sum", "mean", "prod", "max", "min", "dot", "item",
                "tolist", "std", "var", "cumsum", "cumprod", "round", "clip", "argmax",
                "argmin", "all", "any", "nonzero", "argsort", "count", "index"}


# builtins whose result is a new number (or never an argument's object)
_NEW_BUILTINS = {"len", "float", "int", "abs", "range", "isinstance", "sum", "round", "bool",
                 "str", "print", "complex"}


def sharing_edges(stmts):
    """Pairs of names that ``stmts`` may make share memory: ``z = y[0:2]``, ``t = (y, w)``,
    ``L.append(y)``, ``d[k] = y``, ``for e in L``, ``z = h(y)`` for a helper ``h``."""
    edges = set()
    for n in walk(gast.Module(stmts, [])):
        if isinstance(n, (gast.Assign, gast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            for target in targets:
                edges |= {(t, v) for t in _target_names(target) for v in _sharing(n.value)}
        elif isinstance(n, (gast.For, gast.NamedExpr)):  # (`(z := y[0:2])` too)
            target, value = (n.target, n.iter) if isinstance(n, gast.For) else (n.target, n.value)
            edges |= {(t, v) for t in _target_names(target) for v in _sharing(value)}
        elif (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
              and n.func.attr in ("append", "insert", "extend", "add", "update", "setdefault")):
            base = _base_name(n.func.value)
            edges |= {(base, v) for a in n.args for v in _sharing(a)}
    return {(a, b) for a, b in edges if a is not None and a != b}


def _target_names(target):
    """The names an assignment target binds or writes into (``d`` of ``d[k] = ...``)."""
    if isinstance(target, (gast.Tuple, gast.List)):
        return [n for t in target.elts for n in _target_names(t)]
    if isinstance(target, gast.Starred):
        return _target_names(target.value)
    name = _base_name(target)
    return [name] if name is not None else []


def _base_name(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _sharing(value):
    """The names whose memory ``value`` may share (conservatively: a call of a helper may
    return its argument)."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, (gast.Subscript, gast.Attribute, gast.Starred)):
        return _sharing(value.value)
    if isinstance(value, (gast.List, gast.Tuple, gast.Set)):
        return {v for e in value.elts for v in _sharing(e)}
    if isinstance(value, gast.Dict):
        return {v for e in value.values for v in _sharing(e)}
    if isinstance(value, gast.IfExp):
        return _sharing(value.body) | _sharing(value.orelse)
    if isinstance(value, gast.NamedExpr):
        return _sharing(value.value)
    if isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
        return _comprehension_sharing(value)
    if not isinstance(value, gast.Call):
        return set()  # arithmetic, comparisons, constants: new values
    return _call_sharing(value)


def _comprehension_sharing(value):
    """``_sharing`` of a comprehension: ``[v for v in L]`` holds ``L``'s items themselves (an
    item that is a new value, ``[v * 2 for v in L]``, shares nothing)."""
    inner = _sharing(value.value if isinstance(value, gast.DictComp) else value.elt)
    targets = {t for g in value.generators for t in _target_names(g.target)}
    out = inner - targets
    if inner & targets:
        out |= {v for g in value.generators for v in _sharing(g.iter)}
    return out


def _call_sharing(value):
    """``_sharing`` of a call: its ``out=``, a view NumPy makes of its first argument, or any
    argument (and the object of a method) of a call that may return it."""
    out = _shared_by(k.value for k in value.keywords if k.arg == "out")
    func, args = value.func, [*value.args, *(k.value for k in value.keywords)]
    if _base_name(func) in ("np", "numpy", "math"):
        view = isinstance(func, gast.Attribute) and func.attr in _VIEW_FUNCTIONS
        return out | _shared_by(value.args[:1]) if view else out
    if isinstance(func, gast.Attribute):  # a method: a view (x.reshape), or a helper's result
        new = func.attr in _NEW_METHODS or func.attr == "astype" and not value.keywords
        return out if new else out | _sharing(func.value) | _shared_by(args)
    new = isinstance(func, gast.Name) and func.id in _NEW_BUILTINS
    return out if new else out | _shared_by(args)


def _shared_by(values):
    return {v for value in values for v in _sharing(value)}


def written_through_items(stmts):
    """The names into whose items (or attributes' values) the statements write in place:
    ``O[0][-1] = v``, ``O[0] += v``, ``O[0].append(v)``, ``h(O[0])`` for a helper ``h`` — a
    write into what ``O`` holds, not into ``O``'s own slots (``hist.append(y)`` is not one)."""
    out = set()
    for n in walk(gast.Module(stmts, [])):
        bases = list(_written_bases(n, augmented=True))
        if isinstance(n, gast.Call) and not bases and not _known(n):  # a helper given O[0]
            bases = n.args + [k.value for k in n.keywords]
        out |= {_base_name(b) for b in bases if isinstance(b, (gast.Subscript, gast.Attribute))}
    return out - {None}


# methods that change a list's, dict's or set's slots, not the objects it holds
SLOT_METHODS = ("append", "extend", "insert", "remove", "clear", "update", "pop", "setdefault",
                "popitem", "reverse", "add", "discard")


def written_through_aliases(stmts):
    """The names whose object the statements may change in place through another name they
    bind to it (or to what it holds): ``L.append(x); O = L[-1]; O *= 2.0`` writes into ``x``
    (``O`` is an item of ``L``, so it may be any of them) and ``L``'s content, ``O = d["a"];
    O += v`` into what ``d`` holds. From each name whose object they change
    (``objects_written``): up to what it is part of or held by, and down to what those hold
    when it was their item; a write into a container's slot (``d["a"] = g``) changes no item."""
    alias, holds = _edge_kinds(stmts)
    containers = {a for a, _ in holds}
    out, todo, seen = set(), [(n, False) for n in objects_written(stmts)], set()
    while todo:
        name, as_item = todo.pop()
        if (name, as_item) in seen:
            continue
        seen.add((name, as_item))
        out.add(name)
        todo += [(b, True) for a, b in alias if a == name]  # `name = b[k]`: b's content
        todo += [(a, False) for a, b in holds if b == name]  # b holds name: its content
        if as_item or name not in containers:  # what it holds, its items or views
            todo += [(a, False) for a, b in alias if b == name]
            todo += [(b, False) for a, b in holds if a == name]
    return out


def holds_pairs(stmts):
    """The pairs ``(t, v)`` where ``t`` holds ``v`` after the statements (``t = [v]``,
    ``t.append(v)``, ``t[k] = v``)."""
    return _edge_kinds(stmts)[1]


def _edge_kinds(stmts):
    """``sharing_edges`` of ``stmts`` in two kinds: ``(t, v)`` where ``t`` may be ``v``, a
    part, view or item of it (``t = v[0]``, ``for t in v``, ``t = h(v)``), and ``(t, v)`` where
    ``t`` holds ``v`` (``t = [v]``, ``t.append(v)``, ``t[k] = v``)."""
    alias, holds = set(), set()
    for n in walk(gast.Module(stmts, [])):
        if isinstance(n, (gast.Assign, gast.AnnAssign, gast.NamedExpr)) and n.value is not None:
            for target in n.targets if isinstance(n, gast.Assign) else [n.target]:  # (`:=` too)
                _assigned_edges(target, n.value, alias, holds)
        elif isinstance(n, gast.For):
            alias |= {(t, v) for t in _target_names(n.target) for v in _sharing(n.iter)}
        elif (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
              and n.func.attr in ("append", "insert", "extend", "add", "update", "setdefault")):
            holds |= {(_base_name(n.func.value), v) for a in n.args for v in _sharing(a)}
    return ({(a, b) for a, b in alias if a is not None and a != b},
            {(a, b) for a, b in holds if a is not None and a != b})


def _assigned_edges(target, value, alias, holds):
    """``_edge_kinds`` of ``target = value``, added to ``alias`` and ``holds``."""
    same, held = _parts(value)
    if isinstance(target, (gast.Subscript, gast.Attribute)):
        holds |= {(_base_name(target), v) for v in same | held}
        return
    if isinstance(target, (gast.Tuple, gast.List)):  # `O, P = L[0], L[1]`: each is an item
        same, held = same | held, set()
    alias |= {(t, v) for t in _target_names(target) for v in same}
    holds |= {(t, v) for t in _target_names(target) for v in held}


def _parts(value):
    """``(same, held)``: the names ``value`` may be (or be part of) and the names it holds."""
    if isinstance(value, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
        return set(), _sharing(value)
    if isinstance(value, gast.IfExp):
        (a, b), (c, d) = _parts(value.body), _parts(value.orelse)
        return a | c, b | d
    if isinstance(value, gast.NamedExpr):
        return _parts(value.value)
    return _sharing(value), set()


def objects_written(stmts):
    """The names whose object (an array, or the items of a list) the statements may change in
    place: ``mutated`` but a list's or dict's own slots (``L.append(x)`` changes ``L``, not
    ``x``; ``L[i] = v`` is taken for a write into an array)."""
    out = set()
    for n in walk(gast.Module(stmts, [])):
        if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                and n.func.attr in SLOT_METHODS):
            continue
        bases = list(_written_bases(n, augmented=True))
        out |= {_base_name(b) for b in bases}
        if isinstance(n, gast.Call) and not bases:
            out |= _passed(n)
    return out - {None}


def container_copies(node, loop, fn):
    """Each ``L.copy()`` (or ``copy.copy(L)``) in ``loop`` of a name ``L`` that ``node``
    (``fn``'s tree) binds only to lists becomes ``list(L)``, the shallow copy it is: a new list
    holding ``L``'s own arrays, which this module and the step's derivative follow as ``L``'s
    items (``O = L.copy()[0]; O *= v`` writes into ``L[0]``), where ``.copy()`` of a name of
    unknown kind is taken for an array's copy; of a dict ``d``, ``{k: v for k, v in
    d.items()}``. (A copy of a name whose kind is not known here is checked where the step
    runs, normalize/shallow_copies.py.)"""
    kinds = container_kinds(node)
    names = {n.id for n in walk(node) if isinstance(n, gast.Name)}
    key, value = (_unused_name(stem, names) for stem in ("key", "value"))

    def shallow(n):
        copied = _copied_name(n, fn)
        kind = kinds.get(copied)
        if kind == "list" and "list" not in names and "list" not in fn.__globals__:
            return gast.copy_location(gast.Call(_name("list"), [_name(copied)], []), n)
        if kind == "dict":
            pair = gast.Tuple([_name(key, gast.Store()), _name(value, gast.Store())],
                              gast.Store())
            items = gast.Call(gast.Attribute(_name(copied), "items", gast.Load()), [], [])
            return gast.copy_location(gast.DictComp(
                _name(key), _name(value), [gast.comprehension(pair, items, [], 0)]), n)
        return n

    _Calls(shallow).visit(loop)


class _Calls(gast.NodeTransformer):
    """Each call of a tree, innermost first, replaced by ``rewrite(call)``."""

    def __init__(self, rewrite):
        self.rewrite = rewrite

    def visit_Call(self, node):
        self.generic_visit(node)
        return self.rewrite(node)


def _name(name, ctx=None):
    return gast.Name(name, ctx or gast.Load(), None, None)


def copy_checks(body, fn, checker):
    """``body`` (a loop's, for its step) with ``checker(L, 'L')`` (``check_copied_array``)
    before each statement that copies a name ``L`` (``L.copy()``, ``copy.copy(L)``) whose
    copy's items the body writes into in place (``O = L.copy()[0]; O *= v``): ``L`` is then a
    list or dict of the caller's (or of what the function was given), its copy shallow and its
    items ``L``'s own arrays, which srcgrad does not follow, or an array (the check passes).
    The step runs it before the write, as the loop runs forward: the caller's arrays are not
    written before the refusal. (``container_copies`` has made the copies of the function's own
    lists and dicts ``list(L)`` and dict comprehensions: what is left is of unknown kind.)"""
    copied = {}  # the text of what is copied -> the name it is read from

    def as_shared(n):
        found = _copied_part(n, fn)
        if found is None:
            return n
        copied[_text(found)] = _base_name(found)
        return gast.Call(_name("list"), [found], [])

    modelled = [_Calls(as_shared).visit(s) for s in copy.deepcopy(body)]
    written = {text for text, name in copied.items()
               if name in written_through_aliases(modelled)}
    out = []
    for stmt in body:
        found = {_text(p) for n in walk(stmt) if isinstance(n, gast.Call)
                 for p in [_copied_part(n, fn)] if p is not None}
        for text in sorted(found & written):
            call = gast.Call(_name(checker), [copy.deepcopy(_expression(text)),
                                              gast.Constant(text, None)], [])
            out.append(gast.copy_location(gast.Expr(gast.copy_location(call, stmt)), stmt))
        out.append(stmt)
    return out


def _copied_part(n, fn):
    """What the call ``n`` copies (``L.copy()``, ``copy.copy(L)``, ``P[0].copy()``): a name,
    or an item or field of one at constant keys; else None."""
    if n.keywords:
        return None
    if isinstance(n.func, gast.Attribute) and n.func.attr == "copy" and not n.args:
        copied = n.func.value
    elif len(n.args) == 1 and _called(n.func, fn) is copy.copy:
        copied = n.args[0]
    else:
        return None
    part = copied
    while isinstance(part, (gast.Subscript, gast.Attribute)):
        if isinstance(part, gast.Subscript) and any(
                isinstance(n, (gast.Call, gast.NamedExpr, gast.Lambda)) for n in walk(part.slice)):
            return None
        part = part.value
    return copied if isinstance(part, gast.Name) else None


def _text(node):
    return ast.unparse(gast.gast_to_ast(node))


def _expression(text):
    return gast.ast_to_gast(ast.parse(text, mode="eval")).body


def _copied_name(n, fn):
    """The name ``n`` copies (``L.copy()``, ``copy.copy(L)``), or None."""
    part = _copied_part(n, fn)
    return part.id if isinstance(part, gast.Name) else None


def _unused_name(stem, names):
    while stem in names:
        stem += "_"
    return stem


def copy_edges(stmts, kinds, body):
    """``sharing_edges``' pairs for the copies of the function's own lists and dicts (``kinds``,
    ``container_kinds``) in ``stmts`` whose items the statements ``body`` (a loop's) write into
    in place: ``M = L.copy()`` holds ``L``'s items, where ``sharing_edges`` takes it for an
    array's new copy (``M.append(v)`` changes ``M`` alone)."""
    written, edges = written_through_aliases(body), set()
    for n in walk(gast.Module(stmts, [])):
        if isinstance(n, (gast.Assign, gast.For)):
            targets, value = (n.targets, n.value) if isinstance(n, gast.Assign) else (
                [n.target], n.iter)
            copied = {c.func.value.id for c in walk(value) if isinstance(c, gast.Call)
                      and isinstance(c.func, gast.Attribute) and c.func.attr == "copy"
                      and isinstance(c.func.value, gast.Name) and c.func.value.id in kinds}
            edges |= {(t, v) for target in targets for t in _target_names(target)
                      for v in copied if t != v and t in written}
    return edges


def container_kinds(node):
    """``{name: "list" or "dict"}`` for the names that ``node`` binds only by ``name = v``,
    ``v`` a list (dict) display or comprehension, a ``list(...)`` (``dict(...)``) call or the
    ``.copy()`` of such a name: never a parameter, a loop's or tuple's target, ``+=``..."""
    values, plain = {}, set()
    for n in walk(node):
        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name):
            values.setdefault(n.targets[0].id, []).append(n.value)
            plain.add(id(n.targets[0]))
    # (a parameter, a loop's or tuple's target, `+=`, ...)
    other = {n.id for n in walk(node) if isinstance(n, gast.Name)
             and not isinstance(n.ctx, gast.Load) and id(n) not in plain}
    # the largest consistent answer (`L = []` then `L = L.copy()` in a loop: a list): a kind
    # guessed from any binding (`M = L`: L's), then the guesses some binding contradicts dropped
    kinds, size = {}, -1
    while size != len(kinds):
        size = len(kinds)
        for name, bound in values.items():
            found = {_container_kind(v, kinds) for v in bound} - {None}
            if name not in other and name not in kinds and len(found) == 1:
                kinds[name] = found.pop()
    return _consistent(kinds, values)


def _consistent(kinds, values):
    """``kinds`` less each guess a binding of ``values`` contradicts, until none does."""
    while True:
        wrong = {n for n, k in kinds.items() if any(_container_kind(v, kinds) != k
                                                     for v in values[n])}
        if not wrong:
            return kinds
        kinds = {n: k for n, k in kinds.items() if n not in wrong}


def _container_kind(value, kinds):
    """``container_kinds``' kind of the value ``value`` (None: another, or not known)."""
    if isinstance(value, (gast.List, gast.ListComp)):
        return "list"
    if isinstance(value, (gast.Dict, gast.DictComp)):
        return "dict"
    if isinstance(value, gast.Name):  # (`M = L`)
        return kinds.get(value.id)
    if isinstance(value, gast.BinOp):  # `L + [v]` of two lists; `[v] * 2` of a list and an int
        sides = [_container_kind(o, kinds) for o in (value.left, value.right)]
        counts = [isinstance(o, gast.Constant) and type(o.value) is int
                  for o in (value.left, value.right)]
        plus = isinstance(value.op, gast.Add) and sides == ["list", "list"]
        times = isinstance(value.op, gast.Mult) and "list" in sides and any(counts)
        return "list" if plus or times else None
    if not isinstance(value, gast.Call):
        return None
    func = value.func
    if isinstance(func, gast.Name) and func.id in ("list", "dict"):
        return func.id
    if (isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args
            and isinstance(func.value, gast.Name)):
        return kinds.get(func.value.id)
    return None


def passed_only(loop):
    """The names the loop's body passes to a helper (which may write into them) and does not
    write into itself."""
    return mutated(loop.body, augmented=False) - mutated(loop.body, augmented=False, calls=False)


def loop_writes(loop):
    """The names whose value the loop's body may change in place: the names it writes into
    (``mutated``) and the names those may share memory with through what the body binds
    (``O = [L]; O[0][-1] += v`` writes into ``L``; ``O = L[-1]; O *= v`` into ``L``'s items)."""
    through = sharing_closure(written_through_items(loop.body), sharing_edges(loop.body))
    return mutated(loop.body) | through | written_through_aliases(loop.body)


def sharing_closure(names, edges):
    """``names`` and every name that may share memory with one of them through ``edges``
    (pairs of names, either way round), transitively."""
    out, stack = set(names), list(names)
    while stack:
        name = stack.pop()
        for a, b in edges:
            for one, other in ((a, b), (b, a)):
                if one == name and other not in out:
                    out.add(other)
                    stack.append(other)
    return out


def mutated(stmts, augmented=True, calls=True):
    """Names whose value the statements change in place (``x[i] = ...``, ``x += ...``,
    ``xs.append(...)``): state, even when never rebound."""
    out = set()
    for n in walk(gast.Module(stmts, [])):
        bases = list(_written_bases(n, augmented))
        out |= {_base_name(b) for b in bases}
        if isinstance(n, gast.Call) and calls and not bases:
            out |= _passed(n)
    return out - {None}


def _written_bases(n, augmented):
    """The expression node ``n`` writes into in place: ``x`` of ``x[i] = ...``, of
    ``x += ...`` (with ``augmented``) and of ``x.append(...)``."""
    if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(
            n.ctx, (gast.Store, gast.Del)):
        yield n.value
    elif isinstance(n, gast.AugAssign) and augmented:
        yield n.target
    elif isinstance(n, gast.Call):
        yield from call_writes(n)


def call_writes(call):
    """The expressions a call writes into in place: ``x`` of ``x.append(...)``, of NumPy's
    ``np.put(x, ...)``, ``np.copyto(x, ...)``, ``np.add.at(x, ...)`` and of ``out=x`` of a
    NumPy function (a helper's ``out=`` is ``_passed``)."""
    func = call.func
    if not isinstance(func, gast.Attribute):
        return
    if _numpy(func.value) and func.attr in NUMPY_WRITES or (
            func.attr == "at" and isinstance(func.value, gast.Attribute)
            and _numpy(func.value.value)):
        yield from call.args[:1]
    elif func.attr in MUTATING:
        yield func.value
    if _known(call):
        yield from (k.value for k in call.keywords if k.arg == "out")


def _numpy(node):
    return isinstance(node, gast.Name) and node.id in ("np", "numpy")


def _passed(call):
    """The names a call may change in place: ``out=`` of any call, and every name passed to a
    call that is neither a builtin nor a NumPy or math function (a helper may write into it)."""
    out = {k.value.id for k in call.keywords if k.arg == "out" and isinstance(k.value, gast.Name)}
    if not _known(call):
        out |= {a.id for a in call.args if isinstance(a, gast.Name)}
        out |= {k.value.id for k in call.keywords if isinstance(k.value, gast.Name)}
    return out


def _known(call):
    """Whether ``call`` is of a builtin or a NumPy or math function (no helper of the user's,
    which may write into what it is given)."""
    func = call.func
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and (
        func.id in ("np", "numpy", "math") or (call.func is func and hasattr(builtins, func.id))
    )



def outside_reads(loops, fn_node, fn):
    """What the rewritten function's checks name (normalize/inplace.py), since its steps, not
    itself, read it: the names and dotted names (``G``, ``cfg.W``, ``Model.W``) that ``loops``
    (or a function ``fn_node`` defines) read and ``fn_node`` never binds, each once (copies);
    and, read through a name of its own, each array, list, dict or object that a function the
    loops call reads as a global of another module or a closure variable (``helper_reads``).
    Also the cells those names are read through, ``fn``'s own among them."""
    local = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param))}
    defs = [d for d in walk(fn_node) if isinstance(d, (gast.FunctionDef, gast.Lambda))
            and d is not fn_node]
    out, seen = [], set()
    for n in (n for part in [*loops, *defs] for n in walk(part)):
        root = n
        while isinstance(root, gast.Attribute):
            root = root.value
        if (isinstance(n, (gast.Name, gast.Attribute)) and isinstance(n.ctx, gast.Load)
                and isinstance(root, gast.Name) and root.id not in local
                and gast.dump(n) not in seen):
            seen.add(gast.dump(n))
            out.append(clone(n))
    cells = _cells(fn)
    for k, (name, cell, attr) in enumerate(helper_reads(loops, fn)):
        if cell is not None:
            name = f"{name}_{k}"
            cells[name] = cell
        read = gast.Name(name, gast.Load(), None, None)
        out.append(read if attr is None else gast.Attribute(read, attr, gast.Load()))
    return tuple(out), cells


def helper_reads(loops, fn, depth=4):
    """What the Python functions ``loops`` call (by a name or dotted name of ``fn``'s, and the
    functions those call, to ``depth``) read from outside: ``(name, None, None)`` for a global
    of ``fn``'s module; ``(word, cell, attr)`` for another module's global data (a new cell of
    the module: read as its attribute when it runs, as the step does) and ``(word, cell,
    None)`` for a closure variable (the function's own cell)."""
    todo = [v for v in (_called(n.func, fn) for loop in loops for n in walk(loop)
                        if isinstance(n, gast.Call)) if inspect.isfunction(v)]
    out, seen = [], set()
    while todo and depth:
        depth -= 1
        found = []
        for f in todo:
            if id(f) not in seen and f.__code__ not in GENERATED_SOURCE:
                seen.add(id(f))
                out += _reads_of(f, fn.__globals__, found)
        todo = found
    return out


def _reads_of(f, own, found):
    """``helper_reads``'s reads of the function ``f`` alone (``own``: the globals of the
    function checkpoint= rewrites); the functions it calls are appended to ``found``."""
    out = []
    module = sys.modules.get(f.__globals__.get("__name__"))
    module = module if getattr(module, "__dict__", None) is f.__globals__ else None
    for name in _code_names(f.__code__):
        value = f.__globals__.get(name)
        if inspect.isfunction(value):
            found.append(value)
        elif name in f.__globals__ and _data(value):
            out.append((name, None, None) if f.__globals__ is own else (
                module.__name__.rpartition(".")[2], types.CellType(module), name)
                if module is not None else (name, types.CellType(value), None))
    for var, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # (a cell not bound yet)
            continue
        if inspect.isfunction(value):
            found.append(value)
        elif _data(value):
            out.append((var, cell, None))
    return out


def _called(func, fn):
    """The object ``func`` (a name or dotted name) denotes in ``fn``'s globals or closure."""
    path = []
    while isinstance(func, gast.Attribute):
        path.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return None
    cells = _cells(fn)
    value = cells[func.id].cell_contents if func.id in cells else fn.__globals__.get(func.id)
    for attr in reversed(path):
        value = getattr(value, attr, None)
    return value


def _code_names(code):
    """The global names ``code`` and the code objects inside it read."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _code_names(const)
    return out


def _data(value):
    return isinstance(value, (np.ndarray, list, dict, tuple)) or (
        value is not None and not callable(value)
        and not isinstance(value, (type, types.ModuleType, str, bytes, int, float, complex))
        and hasattr(value, "__dict__"))


def copy_state(state, invariants=(), memo=None):
    """A copy of a loop's state that the step may update in place without touching the copy;
    an array or list held in two places (``L = [z]`` beside ``z``) is copied once, and the
    copy is held in both (one ``memo`` for the whole state). What the loop's ``invariants``
    hold is not copied: the loop does not change it, and a state holding one (``L.append(x)``,
    ``x`` read by the loop) holds that object still, as in Python, after each copy the loop
    makes (at its entry, its snapshots, its step's, and its sweep's replays)."""
    if memo is None:
        memo = {}
        _held(invariants, memo)
    if not isinstance(state, (np.ndarray, tuple, list, dict)):
        return state
    if id(state) in memo:
        return memo[id(state)][1]
    if isinstance(state, np.ndarray):
        out = state.copy()
    elif isinstance(state, dict):
        out = {k: copy_state(v, invariants, memo) for k, v in state.items()}
    else:
        out = type(state)(copy_state(s, invariants, memo) for s in state)
    memo[id(state)] = (state, out)  # (the original kept alive: its id is not reused)
    return out


def _held(value, memo):
    """``memo`` maps each array, list and dict in ``value`` (tuples walked) to itself."""
    if isinstance(value, (np.ndarray, list, dict)):
        memo[id(value)] = (value, value)
    if isinstance(value, (list, tuple)):
        for v in value:
            _held(v, memo)
    elif isinstance(value, dict):
        for v in value.values():
            _held(v, memo)
