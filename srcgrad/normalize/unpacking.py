"""Call-site unpacking, and loops over functions, known at transform time; part of ``check``.

Requires: a parsed function after ``sugar``. Guarantees: ``f(*xs)`` and ``f(**kw)`` are spelled
out where what they unpack is known when the code is read: a tuple, list or dict literal written
in the call, or a name assigned such a literal once (a dict with constant string keys) that is
never changed and is otherwise only indexed (``xs[0]``, ``kw["a"]``), taken the length of, or
unpacked again. Any other ``*``/``**`` in a call is left for ``CheckSupported`` to refuse, with
the spelled-out form as the advice.

    pair = (a, b)                   pair = (a, b)
    f(*pair, **{"c": c})      ->    f(pair[0], pair[1], c=c)

A loop whose target is called in its body (``for f in fs: x = f(x)``) over such a tuple or list
of functions named in it (``(np.sin, step)``, functions of the module, local functions) is
unrolled, each copy calling its function by name, where the body has no ``break`` or
``continue`` and does not assign the target: a call resolves to one function at transform time.
"""

from __future__ import annotations

import gast

from ..astutil import (
    NodeTransformer,
    binding_counts,
    clone,
    local_names,
    param_names,
    store_counts,
    walk,
)
from ..emit import naming
from . import appended_spreads, early_exits


def spread(fn_node, forwarded=(), local_functions=None, callees=None):
    """``fn_node`` with every static ``*``/``**`` of a call spelled out (see above);
    ``forwarded`` names a called helper's own ``*args``/``**kwargs`` (left as they are);
    ``local_functions`` (name -> def) may change the lists they read when called;
    ``callees``: the namespace the functions a call names are found in (their parameters
    decide the lengths a list of a length known only when it runs is spelled for)."""
    if not any(_spreads(n) for n in walk(fn_node)):
        return fn_node  # nothing to spell out (most functions): no walk for the literals
    closed = {n.id for f in (local_functions or {}).values() for n in walk(f)
              if isinstance(n, gast.Name)}
    appended_spreads.spell_out(fn_node, set(forwarded) | closed,
                               _arity(fn_node, local_functions or {}, callees))
    literals = _static_literals(fn_node)
    for node in walk(fn_node):
        if isinstance(node, gast.Call):
            node.args = [a for arg in node.args for a in _positional(arg, literals, forwarded)]
            node.keywords = [k for kw in node.keywords
                             for k in _keywords(kw, literals, forwarded)]
    return fn_node


def _spreads(node):
    return isinstance(node, gast.Starred) or (isinstance(node, gast.keyword) and node.arg is None)


def _arity(fn_node, local_functions, callees):
    """``func -> (positional parameters, defaults)`` of the function a call names: a local
    function, or one ``callees`` finds (a name no statement of ``fn_node`` binds)."""
    bound = local_names(fn_node)

    def arity(func):
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        if isinstance(func, gast.Name) and func.id in local_functions:
            return appended_spreads.node_arity(local_functions[func.id])
        if callees is None or not isinstance(root, gast.Name) or root.id in bound:
            return None
        return appended_spreads.signature_arity(callees.resolve(func))
    return arity


def unroll_function_loops(fn_node, known=None, given=(), remade=()):
    """``fn_node`` with every loop over functions unrolled (see the module's docstring).
    ``known(expr)`` is the length of the tuple or list of functions a name the function never
    assigns (or an attribute of one) holds at transform time (a global, a helper's parameter
    given one; ``given``: the parameters it may answer for too), else None. ``remade``: local
    functions made anew on each trip of a loop (their defaults), taken as rebound names."""
    if not any(_unrollable(n) or _indexing(n) or _called_item(n) or _called_by_target(n)
               or _pairs_loop(n) is not None
               for n in walk(fn_node)):
        return fn_node  # no loop over functions (most functions): no walk for the literals
    from . import folded_literals  # (which reads this module's helpers)

    holders = _looped_or_indexed(fn_node)
    _merge_appends(fn_node, holders)
    stored = set(store_counts(fn_node)) | set(remade)  # (not those _bind_items makes)
    folded_literals.fold_changes(fn_node, holders, stored)
    literals = _static_literals(fn_node)
    _bind_items(fn_node, literals, stored)
    if known is not None:  # what it finds is of the names the function reads from outside
        local = stored | (param_names(fn_node, packed=True) - set(given))
        known = _from_outside(known, local)
    taken = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)}
    fn_node.body = _unrolled(fn_node.body, literals, stored, known,
                             lambda stem: _fresh(stem, taken))
    _call_items_by_name(fn_node, literals, stored)
    # a literal of bound methods read by no statement left (`fs = [self.a.f, self.b.f]`, each
    # now called where it is named): its methods are not values the derivative holds
    read = {n.id for n in walk(fn_node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)}
    unread = {name for name, value in literals.items() if name not in read and all(
        _named_function(e, stored) for e in _elements(value))}
    if unread:
        fn_node.body = _without(fn_node.body, unread)
    return fn_node


def _looped_or_indexed(fn_node):
    """The names a loop over functions runs over (``for f in fs``, ``for g in d.values()``,
    ``for k, g in d.items()``, ``for k in d`` calling ``d[k]``, ``for i in range(len(fs))``
    calling ``fs[i]``) or whose constant item is called (``fs[0](x)``)."""
    found = set()
    for n in walk(fn_node):
        if _unrollable(n):
            it = n.iter
            if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and (
                    it.func.attr == "values") and not it.args:
                it = it.func.value
            found |= {it.id} if isinstance(it, gast.Name) else set()
        elif _called_item(n):
            found.add(n.func.value.id)
        elif isinstance(n, gast.For):
            pairs, indexed = _pairs_loop(n), _indexing(n)
            found |= {pairs.id} if pairs is not None else set()
            found |= {indexed.id} if isinstance(indexed, gast.Name) else set()
            found |= {c.id for c in _called_by_target(n) if isinstance(c, gast.Name) and (
                isinstance(n.iter, gast.Name) and n.iter.id == c.id)}
    return found


def _merge_appends(fn_node, names):
    """``fs = [a]`` followed at once by ``fs.append(b)`` (``fs`` in ``names``) becomes
    ``fs = [a, b]``: the same list, its items read in the same order, so that a loop over it
    or a call of its constant item sees a literal."""

    def block(stmts):
        out = []
        for s in stmts:
            for field_ in ("body", "orelse", "finalbody"):
                inner = getattr(s, field_, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field_, block(inner))
            last = out[-1] if out else None
            item = _appended_to(s)
            if (item is not None and isinstance(last, gast.Assign) and len(last.targets) == 1
                    and isinstance(last.targets[0], gast.Name)
                    and last.targets[0].id == item[0] and isinstance(last.value, gast.List)
                    and not any(isinstance(e, gast.Starred) for e in last.value.elts)):
                last.value.elts.append(item[1])
                continue
            out.append(s)
        return out

    def _appended_to(s):
        """(``fs``, ``b``) for ``fs.append(b)`` of a name in ``names``, ``b`` not reading it."""
        call = s.value if isinstance(s, gast.Expr) else None
        if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
                and call.func.value.id in names and len(call.args) == 1
                and not call.keywords and not isinstance(call.args[0], gast.Starred)):
            return None
        name = call.func.value.id
        if any(isinstance(n, gast.Name) and n.id == name for n in walk(call.args[0])):
            return None
        return name, call.args[0]

    if names:
        fn_node.body = block(fn_node.body)


def _bind_items(fn_node, literals, stored):
    """Each attribute item (a bound method ``self.a.scale``, ``np.sin``) of a literal in
    ``literals`` or of a literal a ``for`` loops over and calls is read where Python reads it,
    into a name of its own: ``fs = [self.a.f, g]`` -> ``fs_0 = self.a.f; fs = [fs_0, g]``. A
    call of ``fs[0]`` or an unrolled copy of the loop then calls that name (``h = obj.method``:
    the object it was read from, even when ``self.a`` is rebound before the call)."""
    taken = {n.id for n in walk(fn_node) if isinstance(n, gast.Name)}
    held = {id(v) for v in literals.values()}

    def bind(literal, stem, where):
        out = []
        items = _elements(literal)
        for k, e in enumerate(items):
            if isinstance(e, gast.Attribute) and _named_function(e, stored):
                name = _fresh(naming.HELD_ITEM.format(stem, k), taken)
                out.append(gast.copy_location(gast.Assign(
                    [gast.Name(name, gast.Store(), None, None)], e, None), where))
                items[k] = gast.copy_location(gast.Name(name, gast.Load(), None, None), e)
        return out

    def block(stmts):
        out = []
        for s in stmts:
            for field_ in ("body", "orelse"):
                inner = getattr(s, field_, None)
                if isinstance(inner, list) and inner and not isinstance(s, gast.FunctionDef):
                    setattr(s, field_, block(inner))
            if isinstance(s, gast.Assign) and id(s.value) in held:
                out += bind(s.value, s.targets[0].id, s)
            elif _unrollable(s) and isinstance(s.iter, (gast.Tuple, gast.List)) and _literal(
                    s.iter):
                out += bind(s.iter, s.target.id, s)
            out.append(s)
        return out

    fn_node.body = block(fn_node.body)


def _fresh(stem, taken):
    name, k = stem, 1
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    taken.add(name)
    return name


def _elements(literal):
    return literal.values if isinstance(literal, gast.Dict) else literal.elts


def _called_item(node):
    """``fs[k](...)``, ``hooks["a"](...)``: a call of a constant item of a name."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Subscript) and isinstance(
        node.func.value, gast.Name) and _constant(node.func.slice) is not None


def _constant(index):
    """``(k,)`` for a constant index ``k`` (``-1`` too), else None."""
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub) and isinstance(
            index.operand, gast.Constant) and type(index.operand.value) is int:
        return (-index.operand.value,)
    return (index.value,) if isinstance(index, gast.Constant) else None


def _call_items_by_name(fn_node, literals, stored):
    """``fs[0](x)`` of ``fs = [self.a.scale, ...]`` (a literal assigned once and only indexed)
    becomes ``self.a.scale(x)``: each item an attribute (a bound method, ``np.sin``) of a name
    the function never rebinds and whose fields and items it does not write, so reading it
    again where it is called reads the same object."""
    written = {_root(n).id for n in walk(fn_node) if isinstance(n, (gast.Attribute, gast.Subscript))
               and isinstance(n.ctx, gast.Store) and isinstance(_root(n), gast.Name)}
    for node in walk(fn_node):
        if not _called_item(node) or node.func.value.id not in literals:
            continue
        item = _constant_item(literals[node.func.value.id], _constant(node.func.slice)[0])
        if (isinstance(item, (gast.Attribute, gast.Name)) and _named_function(item, stored)
                and _root(item).id not in written):
            node.func = gast.copy_location(clone(item), node.func)


def _constant_item(literal, key):
    """The item ``literal[key]`` of a tuple, list or dict literal, or None."""
    if isinstance(literal, gast.Dict):
        found = [v for k, v in zip(literal.keys, literal.values) if k.value == key]
        return found[0] if len(found) == 1 else None
    if isinstance(key, int) and not isinstance(key, bool) and -len(literal.elts) <= key < len(
            literal.elts):
        return literal.elts[key]
    return None


def _from_outside(known, local):
    def outside(expr):
        return None if _root(expr).id in local else known(expr)

    return outside


def _without(stmts, names):
    """``stmts`` without the assignments of ``names`` (in nested blocks too)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and s.targets[0].id in names:
            continue
        for field_ in ("body", "orelse"):
            inner = getattr(s, field_, None)
            if isinstance(inner, list) and inner and not isinstance(s, gast.FunctionDef):
                setattr(s, field_, _without(inner, names) or [gast.Pass()])
        out.append(s)
    return out


def functions_held(value):
    """The length of ``value`` if it is a tuple or list of functions (some items may be None:
    a call of one raises Python's TypeError where it runs, normalize/inline.py), else None."""
    if isinstance(value, (tuple, list)) and any(v is not None for v in value) and all(
            v is None or callable(v) and not hasattr(v, "__array__") for v in value):
        return len(value)
    return None


def functions_keyed(value):
    """The keys of ``value`` if it is a dict of functions by str or int keys, else None."""
    if isinstance(value, dict) and value and all(type(k) in (str, int) for k in value) and all(
            callable(v) and not hasattr(v, "__array__") for v in value.values()):
        return list(value)
    return None


def _unrolled(stmts, literals, stored, known, fresh):
    out = []
    for s in stmts:
        for field_ in ("body", "orelse"):
            inner = getattr(s, field_, None)
            if isinstance(inner, list) and inner and not isinstance(s, gast.FunctionDef):
                setattr(s, field_, _unrolled(inner, literals, stored, known, fresh))
        count = _indices_looped(s, literals, stored, known)
        if count is not None:
            out += [c for k in range(count) for c in _copy_at(s, k)]
            continue
        keys = _keys_loop(s, literals, stored, known)
        if keys is not None:
            out += [c for k in keys for c in _copy_at(s, k)]
            continue
        pairs = _pairs_looped(s, stored, known, literals)
        if pairs is not None:
            out += pairs
            continue
        functions = _functions_looped(s, literals, stored, known)
        if functions is None:
            out.append(s)
            continue
        copies = [[_Bind(s.target.id, fn).visit(clone(stmt)) for stmt in s.body]
                  for fn in functions]
        out += early_exits.unrolled(copies, fresh, s)  # (`break`: the copies after skipped)
    return out


def _functions_looped(loop, literals, stored, known):
    """The function expressions ``loop`` runs its body with, if it is a loop to unroll."""
    if not _unrollable(loop):
        return None
    seq = loop.iter
    held = _known_items(seq, stored, known)
    if held is not None:
        return held
    viewed = _viewed(seq, "values")
    if viewed is not None and isinstance(literals.get(viewed.id), gast.Dict):
        seq = gast.List(literals[viewed.id].values, gast.Load())  # `for g in d.values()`
    elif isinstance(seq, gast.Name):
        seq = literals.get(seq.id)
    if not (isinstance(seq, (gast.Tuple, gast.List)) and _literal(seq)):
        return None
    if not all(_named_function(e, stored) for e in seq.elts):
        return None
    return seq.elts


def _known_items(seq, stored, known):
    """The items ``seq[0], seq[1], ...`` of a name ``known`` finds a tuple or list of functions
    in, or ``d["a"], ...`` of ``d.values()`` of one it finds a dict of functions in; else
    None."""
    values = isinstance(seq, gast.Call) and isinstance(seq.func, gast.Attribute) and (
        seq.func.attr == "values") and not seq.args
    name = seq.func.value if values else seq
    if not isinstance(name, gast.Name) or name.id in stored or known is None:
        return None
    found = known(name)
    if values and isinstance(found, list):
        keys = found
    elif not values and isinstance(found, int):
        keys = range(found)
    else:
        return None
    return [gast.Subscript(clone(name), gast.Constant(k, None), gast.Load()) for k in keys]


def _indexing(loop):
    """``for i in range(len(fs))`` whose body calls ``fs[i](...)``, has no ``break`` or
    ``continue`` and assigns neither ``i`` nor ``fs``: the sequence ``fs`` (a name or an
    attribute of one), else None."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse and _range_of_len(loop.iter)):
        return None
    seq, i = loop.iter.args[0].args[0], loop.target.id
    if not isinstance(_root(seq), gast.Name):
        return None
    nodes = list(walk(gast.Module(loop.body, [])))
    text = gast.dump(seq)
    calls = any(isinstance(n, gast.Call) and isinstance(n.func, gast.Subscript)
                and isinstance(n.func.slice, gast.Name) and n.func.slice.id == i
                and gast.dump(n.func.value) == text for n in nodes)
    jumps = any(isinstance(n, (gast.Break, gast.Continue)) for n in nodes)
    assigned = any(isinstance(n, gast.Name) and n.id in (i, _root(seq).id) and not isinstance(
        n.ctx, gast.Load) for n in nodes)
    return seq if calls and not jumps and not assigned else None


def _called_by_target(loop):
    """The items ``S[k]`` that the body of ``for k in ...`` calls (``S`` a name or an attribute
    of one)."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)):
        return []
    k = loop.target.id
    return [n.func.value for n in walk(gast.Module(loop.body, [])) if isinstance(n, gast.Call)
            and isinstance(n.func, gast.Subscript) and isinstance(n.func.slice, gast.Name)
            and n.func.slice.id == k and isinstance(_root(n.func.value), gast.Name)]


def _keys_loop(loop, literals, stored=(), known=None):
    """The constant keys of ``for k in ("first", "second")`` (a tuple or list literal of strings
    or integers, or a name assigned one once, unchanged and only indexed or looped over) whose
    body calls ``S[k](...)`` (``S`` a name or an attribute of one) and has no ``break``,
    ``continue``, lambda or nested def, assigning neither ``k`` nor ``S``'s root; else None.
    Unrolled, each copy calls ``S["first"]``, a constant item."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse):
        return None
    seq = _keys_known(loop.iter, literals, stored, known)
    if not (isinstance(seq, (gast.Tuple, gast.List)) and seq.elts and all(
            isinstance(e, gast.Constant) and type(e.value) in (str, int) for e in seq.elts)):
        return None
    k = loop.target.id
    nodes = list(walk(gast.Module(loop.body, [])))
    called = _called_by_target(loop)
    if not called or any(isinstance(n, (gast.Break, gast.Continue, gast.Lambda,
                                        gast.FunctionDef)) for n in nodes):
        return None
    roots = {k} | {_root(c).id for c in called}
    if any(isinstance(n, gast.Name) and n.id in roots and not isinstance(n.ctx, gast.Load)
           for n in nodes):
        return None
    return [e.value for e in seq.elts]


def _keys_known(seq, literals, stored, known):
    """The literal ``seq`` is, or is a name of; for a name ``known`` finds a dict of functions
    in (``for k in fs`` of a parameter given one), a tuple literal of its keys."""
    if not isinstance(seq, gast.Name):
        return seq
    if isinstance(literals.get(seq.id), gast.Dict):  # `for k in hooks` of a dict literal
        return gast.Tuple([clone(k) for k in literals[seq.id].keys], gast.Load())
    if seq.id in literals or seq.id in stored or known is None:
        return literals.get(seq.id)
    keys = known(seq)
    return gast.Tuple([gast.Constant(k, None) for k in keys], gast.Load()) if isinstance(
        keys, list) else None


def _range_of_len(it):
    return (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
            and it.func.id == "range" and len(it.args) == 1 and not it.keywords
            and isinstance(it.args[0], gast.Call) and isinstance(it.args[0].func, gast.Name)
            and it.args[0].func.id == "len" and len(it.args[0].args) == 1)


def _root(expr):
    while isinstance(expr, (gast.Attribute, gast.Subscript)):
        expr = expr.value
    return expr


def _indices_looped(loop, literals, stored, known):
    """How many times the index loop ``loop`` runs (``_indexing``), where the functions are
    known at transform time: a literal of named functions, or what ``known`` finds (the
    builtins ``range`` and ``len`` not rebound)."""
    seq = _indexing(loop)
    if seq is None or {"range", "len"} & stored:
        return None
    held = literals.get(seq.id) if isinstance(seq, gast.Name) else None
    if isinstance(held, (gast.Tuple, gast.List)) and _literal(held):
        return len(held.elts) if all(_named_function(e, stored) for e in held.elts) else None
    n = known(seq) if known is not None else None
    return n if isinstance(n, int) else None


def _copy_at(loop, k):
    """The body of the index loop ``loop`` for the index ``k``: the index assigned (as the loop
    would) and read as the constant."""
    i = loop.target.id
    first = gast.copy_location(gast.Assign([gast.Name(i, gast.Store(), None, None)],
                                           gast.Constant(k, None), None), loop)
    index = gast.Constant(k, None)
    return [first] + [_Bind(i, index).visit(clone(stmt)) for stmt in loop.body]


def _unrollable(loop):
    """A ``for`` over a name whose body calls it, never assigns it, and leaves a trip early
    (``break``, ``continue``) only in ``if`` statements (``early_exits``)."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse):
        return False
    name = loop.target.id
    nodes = list(walk(gast.Module(loop.body, [])))
    calls = any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == name
                for n in nodes)
    assigned = any(isinstance(n, gast.Name) and n.id == name and not isinstance(
        n.ctx, gast.Load) for n in nodes)
    return calls and early_exits.only_ifs(loop.body) and not assigned


def _named_function(expr, stored):
    """Whether ``expr`` names something no statement of the function rebinds (``step``,
    ``np.sin``, a bound method ``NET.layers[0].scale``, ``self.head.scale``): reading it again
    in each copy reads the same object."""
    while isinstance(expr, (gast.Attribute, gast.Subscript)):
        if isinstance(expr, gast.Subscript) and not isinstance(expr.slice, gast.Constant):
            return False
        expr = expr.value
    return isinstance(expr, gast.Name) and expr.id not in stored


def _pairs_loop(loop):
    """The dict ``d`` of ``for k, g in d.items()`` whose body calls ``g``, has no ``break`` or
    ``continue`` and assigns neither ``k`` nor ``g``; else None."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Tuple) and len(
            loop.target.elts) == 2 and all(isinstance(e, gast.Name) for e in loop.target.elts)
            and not loop.orelse):
        return None
    it = loop.iter
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and (
            it.func.attr == "items") and not it.args and isinstance(it.func.value, gast.Name)):
        return None
    k, g = (e.id for e in loop.target.elts)
    return it.func.value if _calls_plainly(loop.body, g, (k, g)) else None


def _calls_plainly(body, g, names):
    """Whether ``body`` calls ``g``, has no ``break`` or ``continue``, and assigns none of
    ``names``."""
    nodes = list(walk(gast.Module(body, [])))
    calls = any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == g
                for n in nodes)
    jumps = any(isinstance(n, (gast.Break, gast.Continue)) for n in nodes)
    assigned = any(isinstance(n, gast.Name) and n.id in names and not isinstance(
        n.ctx, gast.Load) for n in nodes)
    return calls and not jumps and not assigned


def _viewed(seq, view):
    """The name ``d`` of ``d.values()`` (``view``) called with no argument, else None."""
    if isinstance(seq, gast.Call) and isinstance(seq.func, gast.Attribute) and (
            seq.func.attr == view) and not seq.args and isinstance(seq.func.value, gast.Name):
        return seq.func.value
    return None


def _pairs_looped(loop, stored, known, literals):
    """``for k, g in d.items()`` (``_pairs_loop``) of a dict of functions ``known`` finds
    (a parameter given one): unrolled, each copy binding ``k`` to its key and calling
    ``d[key]``; else None."""
    d = _pairs_loop(loop)
    if d is not None and isinstance(literals.get(d.id), gast.Dict):
        keys = [k.value for k in literals[d.id].keys]  # a dict literal of the function
    elif d is None or d.id in stored or known is None:
        return None
    else:
        keys = known(d)
    if not isinstance(keys, list):
        return None
    k, g = (e.id for e in loop.target.elts)
    out = []
    for key in keys:
        item = gast.Subscript(clone(d), gast.Constant(key, None), gast.Load())
        out.append(gast.copy_location(gast.Assign([gast.Name(k, gast.Store(), None, None)],
                                                  gast.Constant(key, None), None), loop))
        out += [_Bind(g, item).visit(clone(stmt)) for stmt in loop.body]
    return out


class _Bind(NodeTransformer):
    """The loop target read in one unrolled copy: the function's own expression."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def visit_Name(self, node):
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return gast.copy_location(clone(self.fn), node)
        return node


def _static_literals(fn_node):
    """Name -> the tuple, list or dict literal it is assigned once and never changed (not a
    parameter: before that assignment it is the argument)."""
    counts = binding_counts(fn_node)
    found = {}
    for node in walk(fn_node):
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)
                and counts[node.targets[0].id] == 1 and _literal(node.value)):
            found[node.targets[0].id] = node.value
    uses = _plain_uses(fn_node)
    return {name: value for name, value in found.items() if uses.get(name, True)}


def _literal(value):
    if isinstance(value, (gast.Tuple, gast.List)):
        return not any(isinstance(e, gast.Starred) for e in value.elts)
    return isinstance(value, gast.Dict) and all(
        isinstance(k, gast.Constant) and isinstance(k.value, str) for k in value.keys)


def _plain_uses(fn_node):
    """Name -> whether every read of it only indexes it, takes its length or unpacks it (a list
    passed anywhere else, or a method called on it, may change its length)."""
    allowed = set()
    for node in walk(fn_node):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load):
            allowed.add(id(node.value))
        elif isinstance(node, gast.Starred):
            allowed.add(id(node.value))
        elif isinstance(node, gast.For):
            allowed.add(id(node.iter))
            viewed = _viewed(node.iter, "values") or _viewed(node.iter, "items") or _viewed(
                node.iter, "keys")
            if viewed is not None:  # `for g in d.values()`: a loop over its items
                allowed.add(id(viewed))
        elif isinstance(node, gast.keyword) and node.arg is None:
            allowed.add(id(node.value))
        elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "len" and len(node.args) == 1):
            allowed.add(id(node.args[0]))
    plain = {}
    for node in walk(fn_node):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            plain[node.id] = plain.get(node.id, True) and id(node) in allowed
    return plain


def _positional(arg, literals, forwarded):
    if not isinstance(arg, gast.Starred):
        return [arg]
    value = arg.value
    if isinstance(value, (gast.Tuple, gast.List)) and _literal(value):
        return list(value.elts)
    if isinstance(value, gast.Name) and value.id not in forwarded:
        held = literals.get(value.id)
        if isinstance(held, (gast.Tuple, gast.List)):
            return [_item(value, gast.Constant(i, None)) for i in range(len(held.elts))]
    return [arg]


def _keywords(kw, literals, forwarded):
    if kw.arg is not None:
        return [kw]
    value = kw.value
    if isinstance(value, gast.Dict) and _literal(value):
        return [gast.keyword(k.value, v) for k, v in zip(value.keys, value.values)]
    if isinstance(value, gast.Name) and value.id not in forwarded:
        held = literals.get(value.id)
        if isinstance(held, gast.Dict):
            return [gast.keyword(k.value, _item(value, gast.Constant(k.value, None)))
                    for k in held.keys]
    return [kw]


def _item(name, index):
    read = gast.Subscript(clone(name), index, gast.Load())
    return gast.copy_location(read, name)
