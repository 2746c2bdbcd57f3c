"""``f(*xs)`` of a list the function builds by appends whose count is known when the code is
read; ``f(**kw)`` of a dict it fills at constant keys; part of ``unpacking.spread``.

Requires: a parsed function after ``sugar``. Guarantees: a call ``f(*xs)`` (``f(**kw)``) that
follows, in the block that assigns it, ``xs = [...]`` (``kw = {...}``, constant string keys),
and only statements that append to it (``xs.append(v)``; ``kw["k"] = v``), loops over a range
of constants (no ``break``, ``continue`` or ``return``) doing so, or statements that only read
it (``xs[i]``, ``len(xs)``, ``for v in xs``, ``*xs``), is spelled out: ``f(xs[0], ..., xs[n-1])``
(``f(a=kw["a"], ...)``). Anything else that reads the name (passed, aliased, changed in a branch)
ends what is known of it; the ``*`` left is refused by ``CheckSupported``.

    xs = []                             xs = []
    for k in range(3):                  for k in range(3):
        xs.append(x[k] * a)      ->         xs.append(x[k] * a)
    y = f(*xs)                          y = f(xs[0], xs[1], xs[2])
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import gast

from ..astutil import binding_counts, clone, walk
from .lambda_list_sites import become

_BLOCKS = ("body", "orelse", "finalbody")


@dataclass(frozen=True)
class AtLeast:
    """The lengths of a list a loop whose trips are known only when it runs appends to: ``n``
    or more."""

    n: int


def spell_out(fn_node, forwarded=(), arity=None):
    """Each such ``*xs`` / ``**kw`` of ``fn_node`` spelled out, in place. ``arity(func)``: the
    positional parameters of the function a call names, ``(names, defaults)``, or None (for a
    list of a length known only when it runs: ``arity_spread``)."""
    counts = binding_counts(fn_node)
    checks = {}
    for block in _blocks(fn_node):
        for i, s in enumerate(block):
            name = _built(s)
            if name is not None and counts[name] == 1 and name not in forwarded:
                _follow(name, s.value, block[i + 1:], arity, checks)
    if checks:
        for block in list(_blocks(fn_node)):
            block[:] = [c for s in block for c in checks.get(id(s), []) + [s]]


def _blocks(fn_node):
    for n in walk(fn_node):
        for field in _BLOCKS:
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                yield block


def _built(s):
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)):
        return None
    v = s.value
    if isinstance(v, gast.List) and not any(isinstance(e, gast.Starred) for e in v.elts):
        return s.targets[0].id
    if isinstance(v, gast.Dict) and all(
            isinstance(k, gast.Constant) and isinstance(k.value, str) for k in v.keys):
        return s.targets[0].id
    return None


def _follow(name, value, rest, arity=None, checks=None):
    """Spell out the spreads of ``name`` in ``rest`` while what it holds is known (a list: the
    lengths it may have, or ``AtLeast``; a dict: its keys)."""
    known = frozenset({len(value.elts)}) if isinstance(value, gast.List) else [
        k.value for k in value.keys]
    for s in rest:
        grown = _grown(name, s, known)
        if grown is not None:
            known = grown
            continue
        if not _only_read(name, s):
            return
        if isinstance(known, AtLeast):
            if arity is not None:
                arity_spread(name, s, known.n, arity, checks)
            continue
        _spell(name, s, known)


def _grown(name, s, known):
    """What ``name`` holds after ``s`` where ``s`` only adds to it, else None."""
    if isinstance(known, AtLeast) and _appends(name, s):
        return AtLeast(known.n + 1)
    if isinstance(known, frozenset) and _appends(name, s):
        return frozenset(k + 1 for k in known)
    if isinstance(s, gast.If):
        return _branched(name, s, known)
    if isinstance(known, list) and _key_written(name, s) is not None:
        key = _key_written(name, s)
        return known + ([] if key in known else [key])
    keys = _keys_looped(name, s) if isinstance(known, list) else None
    if keys is not None:
        return known + [k for k in keys if k not in known]
    return _looped(name, s, known)


def _looped(name, s, known):
    """What ``name`` holds after ``s``, a loop over a range of constants whose body only adds
    to it or reads it, else None; ``AtLeast`` for another loop (``while``, ``range(len(x))``)
    whose header and body only read it and whose body may add to it."""
    trips = _range_trips(s)
    if trips is None:
        return _unknown_trips(name, s, known)
    if not any(isinstance(n, gast.Name) and n.id == name for n in walk(s)):
        return None
    if isinstance(known, list):
        return _block_grown(name, s.body, known)  # (constant keys: the same on every trip)
    steps = _block_grown(name, s.body, frozenset({0}))
    if steps is not None and (isinstance(known, AtLeast) or isinstance(steps, AtLeast)):
        return AtLeast(_least(known) + trips * _least(steps))
    for _ in range(trips if steps is not None else 0):
        known = frozenset(k + d for k in known for d in steps)
        if len(known) > _MOST:
            return None
    return None if steps is None else known


def _unknown_trips(name, s, known):
    """``AtLeast`` the fewest items ``known`` gives, after a loop whose trips are known only
    when it runs (a ``while``, a ``for`` over anything but a range of constants) whose body
    may add to ``name``; None for anything else."""
    if isinstance(known, list) or not isinstance(s, (gast.For, gast.While)) or s.orelse or (
            _jumps(s)) or not any(isinstance(n, gast.Name) and n.id == name for n in walk(s)):
        return None
    header = s.test if isinstance(s, gast.While) else s.iter
    if not _only_read(name, gast.Expr(header)) or (
            isinstance(s, gast.For) and name in {n.id for n in walk(s.target)
                                                 if isinstance(n, gast.Name)}):
        return None
    steps = _block_grown(name, s.body, frozenset({0}))
    if steps is None:
        return None
    if steps == frozenset({0}):
        return known  # (read only)
    return AtLeast(_least(known))


def _least(known):
    return known.n if isinstance(known, AtLeast) else min(known)


_MOST = 8  # lengths a list may have at a spread (each a call of its own)


def _branched(name, s, known):
    """What ``name`` holds after the ``if`` statement ``s`` whose branches only add to it or
    read it (and its test only reads it): the lengths either branch leaves; the same keys in
    the same order from both; else None."""
    if _jumps(s) or not _only_read(name, gast.Expr(s.test)):
        return None
    body, orelse = _block_grown(name, s.body, known), _block_grown(name, s.orelse, known)
    if body is None or orelse is None:
        return None
    if isinstance(known, list):
        return body if body == orelse else None
    if isinstance(body, AtLeast) or isinstance(orelse, AtLeast):
        return AtLeast(min(_least(body), _least(orelse)))
    return body | orelse if len(body | orelse) <= _MOST else None


def _block_grown(name, stmts, known):
    """What ``name`` holds after ``stmts`` that only add to it or read it, else None."""
    for t in stmts:
        if not any(isinstance(n, gast.Name) and n.id == name for n in walk(t)):
            continue
        grown = _grown(name, t, known)
        if grown is None and not _only_read(name, t):
            return None
        known = known if grown is None else grown
    return known


def _appends(name, s):
    call = s.value if isinstance(s, gast.Expr) else None
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "append" and isinstance(call.func.value, gast.Name)
            and call.func.value.id == name and len(call.args) == 1 and not call.keywords
            and not isinstance(call.args[0], gast.Starred)
            and not any(isinstance(n, gast.Name) and n.id == name for n in walk(call.args[0])))


def _key_written(name, s):
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
        return None
    t = s.targets[0]
    if not (isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)
            and t.value.id == name and isinstance(t.slice, gast.Constant)
            and isinstance(t.slice.value, str)):
        return None
    if any(isinstance(n, gast.Name) and n.id == name for n in walk(s.value)):
        return None
    return t.slice.value


def _keys_looped(name, s):
    """The keys of ``for k in ("a", "b"): kw[k] = v`` (each statement of the body that names
    ``kw`` writes it at ``k``), else None."""
    if not _over_constant_keys(s):
        return None
    for t in s.body:
        if not any(isinstance(n, gast.Name) and n.id == name for n in walk(t)):
            continue
        written = t.targets[0] if isinstance(t, gast.Assign) and len(t.targets) == 1 else None
        if not (isinstance(written, gast.Subscript) and _named(written.value, name)
                and _named(written.slice, s.target.id)
                and not any(_named(n, name) for n in walk(t.value))):
            return None
    if any(_named(n, s.target.id) and isinstance(n.ctx, gast.Store)
           for t in s.body for n in walk(t)):
        return None  # (the key rebound in the body)
    return [e.value for e in s.iter.elts]


def _over_constant_keys(s):
    """Whether ``s`` is ``for k in ("a", "b"): ...`` with no jump out of its body."""
    return (isinstance(s, gast.For) and not s.orelse and isinstance(s.target, gast.Name)
            and isinstance(s.iter, (gast.Tuple, gast.List)) and all(
                isinstance(e, gast.Constant) and isinstance(e.value, str) for e in s.iter.elts)
            and not any(isinstance(n, (gast.Break, gast.Continue)) for n in walk(s)))


def _range_trips(s):
    """The trips of ``for _ in range(<constants>)`` with no jump out of its body, else None."""
    if not (isinstance(s, gast.For) and not s.orelse and isinstance(s.iter, gast.Call)
            and isinstance(s.iter.func, gast.Name) and s.iter.func.id == "range"
            and not s.iter.keywords and 1 <= len(s.iter.args) <= 3
            and all(isinstance(a, gast.Constant) and type(a.value) is int for a in s.iter.args)):
        return None
    if _jumps(s):
        return None
    return len(range(*(a.value for a in s.iter.args)))


def _jumps(s):
    """Whether ``s`` may leave its block other than at its end, or defines a function."""
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.Raise, gast.Try,
                              gast.FunctionDef, gast.Lambda)) for n in walk(s))


def _only_read(name, s):
    """Whether every mention of ``name`` in ``s`` reads it without changing what it holds."""
    allowed = reading_mentions(s, loops=True)
    return all(id(n) in allowed for n in walk(s)
               if isinstance(n, gast.Name) and n.id == name)


def reading_mentions(node, loops):
    """The ids of the nodes in ``node`` that are read without a change of what they hold:
    indexed, unpacked (``*xs``, ``**kw``), measured (``len(xs)``) and, with ``loops``, looped
    over."""
    allowed = set()
    for n in walk(node):
        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            allowed.add(id(n.value))
        elif isinstance(n, gast.Starred) or (isinstance(n, gast.keyword) and n.arg is None):
            allowed.add(id(n.value))
        elif loops and isinstance(n, gast.For):
            allowed.add(id(n.iter))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id == "len":
            allowed.update(id(a) for a in n.args)
    return allowed


def _spell(name, s, known):
    if isinstance(known, frozenset) and len(known) > 1:
        _spell_each_length(name, s, sorted(known))
        return
    for n in walk(s):
        if not isinstance(n, gast.Call):
            continue
        if isinstance(known, frozenset):
            count = min(known)
            n.args = [a for arg in n.args for a in (
                [_item(arg.value, i) for i in range(count)] if _spreads(arg, name) else [arg])]
        else:
            n.keywords = [k for kw in n.keywords for k in (
                [gast.keyword(key, _item(kw.value, key)) for key in known]
                if kw.arg is None and _named(kw.value, name) else [kw])]


def _spell_each_length(name, s, lengths):
    """Each call of ``s`` spreading ``name``, which may have any of ``lengths`` items there,
    a choice on its length between the calls spelled out for each (``f(xs[0], xs[1]) if
    len(xs) == 2 else f(xs[0], xs[1], xs[2])``): ``s`` only reads ``name``, so its length is
    the same where the call evaluates its arguments. A call spreading it inside another is
    left, and refused."""
    calls = [n for n in walk(s) if isinstance(n, gast.Call) and any(
        _spreads(a, name) for a in n.args)]
    if any(c is not d and any(e is d for e in walk(c)) for c in calls for d in calls):
        return
    for call in calls:
        choice = _spelled(call, name, lengths[-1])
        for count in reversed(lengths[:-1]):
            measured = gast.Call(gast.Name("len", gast.Load(), None, None), [
                gast.Name(name, gast.Load(), None, None)], [])
            choice = gast.IfExp(gast.Compare(measured, [gast.Eq()], [gast.Constant(count, None)]),
                                _spelled(call, name, count), choice)
        become(call, gast.copy_location(choice, call))


def _spelled(call, name, count):
    return gast.copy_location(gast.Call(clone(call.func), [a for arg in call.args for a in (
        [_item(arg.value, i) for i in range(count)] if _spreads(arg, name) else [clone(arg)])],
        [clone(k) for k in call.keywords]), call)


def _spreads(arg, name):
    return isinstance(arg, gast.Starred) and _named(arg.value, name)


def _named(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _item(node, index):
    read = gast.Subscript(clone(node), gast.Constant(index, None), gast.Load())
    return gast.copy_location(read, node)


def arity_spread(name, s, least, arity, checks):
    """The call of ``s`` spreading ``name`` (a list of ``least`` or more items, how many known
    only when it runs) spelled for each length Python's call takes (the function it names has
    fixed positional parameters: ``arity``), chosen by ``len(name)`` (``_spell_each_length``),
    after a check raising Python's TypeError for any other length (into ``checks``, by the
    statement it goes before). Left as it is (refused) for a function ``arity`` does not know,
    one taking ``*args``, or more than one such call in ``s``::

        while k < n:                          while k < n:
            xs.append(x[k])                       xs.append(x[k])
        y = f(*xs)              ->            if len(xs) < 2 or len(xs) > 3:
                                                  raise TypeError('f() takes from 2 to 3 ...')
        (def f(a, b, c=1.0))                  y = f(xs[0], xs[1]) if len(xs) == 2 else f(...)
    """
    calls = [n for n in walk(s) if isinstance(n, gast.Call) and any(
        _spreads(a, name) for a in n.args)]
    lengths = _lengths_taken(calls[0], least, arity) if len(calls) == 1 else None
    if not lengths:
        return
    call = calls[0]
    checks.setdefault(id(s), []).append(_arity_check(name, call, lengths, least, s))
    if len(lengths) == 1:
        become(call, _spelled(call, name, lengths[0]))
    else:
        _spell_each_length(name, s, lengths)


def _lengths_taken(call, least, arity):
    """The lengths (``least`` or more, at most ``_MOST`` of them) of the spread list with which
    Python's ``call`` binds the positional parameters of the function it names (none given
    both by position and by keyword, every one without a default given), or None."""
    found = arity(call.func)
    stars = [a for a in call.args if isinstance(a, gast.Starred)]
    if found is None or len(stars) != 1 or any(k.arg is None for k in call.keywords):
        return None
    params, defaults = found
    given = len(call.args) - 1
    keywords = {k.arg for k in call.keywords}
    fixed = [i for i, p in enumerate(params) if p in keywords]
    most = min(fixed + [len(params)]) - given  # (a keyword's parameter is not filled twice)
    required = [i + 1 for i, p in enumerate(params[:len(params) - defaults]) if p not in keywords]
    fewest = max(required + [0]) - given
    lengths = list(range(max(fewest, least, 0), most + 1))
    return lengths if len(lengths) <= _MOST else None


def _arity_check(name, call, lengths, least, where):
    """``if len(xs) < lo or len(xs) > hi: raise TypeError(...)``, located at ``where``."""
    given = len(call.args) - 1
    lo, hi = lengths[0] + given, lengths[-1] + given
    takes = f"from {lo} to {hi}" if lo < hi else f"{lo}"
    count = f"len({name}) + {given}" if given else f"len({name})"
    text = (f"{_call_text(call.func)}() takes {takes} positional argument{'s' * (hi != 1)} "
            f"here, but {{{count}}} were given")
    test = f"len({name}) > {lengths[-1]}"
    if lengths[0] > least:  # (fewer than it surely holds: no test)
        test = f"len({name}) < {lengths[0]} or {test}"
    check = gast.parse(f"if {test}:\n    raise TypeError(f{text!r})\n").body[0]
    for n in walk(check):
        if isinstance(n, (gast.stmt, gast.expr)):
            gast.copy_location(n, where)
    return check


def _call_text(func):
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return f"{_call_text(func.value)}.{func.attr}"
    return "the function"


def signature_arity(fn):
    """``(positional parameter names, how many have defaults)`` of a Python function with no
    ``*args``, else None."""
    if not inspect.isfunction(fn):
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    kinds = inspect.Parameter
    if any(p.kind is kinds.VAR_POSITIONAL for p in sig.parameters.values()):
        return None
    positional = [p for p in sig.parameters.values()
                  if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    return [p.name for p in positional], sum(p.default is not p.empty for p in positional)


def node_arity(fn_node):
    """``signature_arity`` of a local function's tree."""
    args = fn_node.args
    if args.vararg is not None:
        return None
    params = args.posonlyargs + args.args
    return [p.id for p in params], len(args.defaults)
