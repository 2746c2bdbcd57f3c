"""Which names a loop's code may make share memory, for ``checkpoint=`` (``checkpoint.py``):
a loop writing in place into a value another name bound before it shares is refused there,
and what the loop writes into (``mutated``, ``written_through_items``) is its state.

    sharing_edges(parse('z = y[0:2]; L = [y]; t = (w, x)'))
        -> {('z', 'y'), ('L', 'y'), ('t', 'w'), ('t', 'x')}
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
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
        elif isinstance(n, gast.For):
            edges |= {(t, v) for t in _target_names(n.target) for v in _sharing(n.iter)}
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
    if not isinstance(value, gast.Call):
        return set()  # arithmetic, comparisons, comprehensions, constants: new values
    return _call_sharing(value)


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


# the invariants of the innermost checkpointed loop running in this thread (or task):
# ``copy_state`` keeps the arrays, lists and dicts they hold, so that a state holding one
# (`L.append(x)`, `x` read by the loop) still holds it, as in Python, after the loop's copies
# (entry, snapshots, its step's); a loop in another thread keeps its own
_KEPT = contextvars.ContextVar("srcgrad_checkpoint_invariants", default=None)


@contextlib.contextmanager
def keeping(invariants):
    """While a checkpointed loop runs: ``copy_state`` keeps what ``invariants`` hold."""
    token = _KEPT.set(invariants)
    try:
        yield
    finally:
        _KEPT.reset(token)


def copy_state(state, memo=None):
    """A copy of a loop's state that the step may update in place without touching the copy;
    an array or list held in two places (``L = [z]`` beside ``z``) is copied once, and the
    copy is held in both (one ``memo`` for the whole state). What the running checkpointed
    loop's invariants hold is not copied (the loop does not change it: ``keeping``)."""
    if memo is None:
        memo = {}
        kept = _KEPT.get()
        if kept is not None:
            _held(kept, memo)
    if not isinstance(state, (np.ndarray, tuple, list, dict)):
        return state
    if id(state) in memo:
        return memo[id(state)][1]
    if isinstance(state, np.ndarray):
        out = state.copy()
    elif isinstance(state, dict):
        out = {k: copy_state(v, memo) for k, v in state.items()}
    else:
        out = type(state)(copy_state(s, memo) for s in state)
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
