"""Callables known at transform time: functions passed as arguments, held in tuples and dicts,
``functools.partial``, ``lru_cache``d functions, bound methods and callable objects.

Requires: an A-normal-form body (``inline`` runs this as it goes). Guarantees: ``StaticValues``
follows, statement by statement, the names that hold a callable the transform can know: a
parameter given one at the call (``ctx.static``, from a derivative specialized when it is
called), a name assigned once from a static expression (a global function, ``fs[0]`` of a
static tuple, ``{"f": g}``, ``functools.partial(g, a=a)``); ``target`` turns a call of any such
callable into a call of a plain Python function, with what the callable binds spelled out as
arguments, so the inliner sees only functions:

    p = functools.partial(sq, a=a)     p_a = a
    y = p(x)                     ->    y = sq(x, a=p_a)             (then inlined)
    y = model(x)                       y = Model.__call__(model, x) (model: a global object)

A partial's arguments are copied into names of their own where it is made, so a later change of
``a`` does not reach it, as in Python. A name of the body that is called but cannot be known is
traced to the parameters it came from: a parameter the caller must give as a function raises
:class:`StaticArgumentNeeded`, and the transform makes a derivative specialized per function
passed (``api.Specializing``) instead of refusing. Tuples and lists of local functions are
measured and unrolled in ``function_sequences``, and what is known of an object's fields in
``built_fields``.
"""

from __future__ import annotations

import functools
import inspect
from collections import Counter
from dataclasses import dataclass

import gast

from .. import runtime
from ..astutil import clone
from ..derived import plain
from ..emit import naming
from ..errors import NoRuleError, UnsupportedSyntaxError
from ..frontend.resolve import MISSING, HeldItems, items_of
from . import built_fields, chosen_passed_fields
from .built_fields import built_here, drop_field_writes, escapes, is_parameter, own_writes
from .function_sequences import LocalFunction, fold_length, holds_own_values, local_functions_in
from .function_sequences import displays_named as displays_named  # (inline's callables.*)
from .function_sequences import unrolled as unrolled
from .object_classes import fields_of, is_function_value, user_class

# Objects that can stand where Python would call a function, and how many layers of them a
# call may go through (a partial of a bound method of ...).
MAX_LAYERS = 8


class StaticArgumentNeeded(NoRuleError):
    """A parameter of the transformed function is called as a function: the derivative must be
    specialized per function passed (``param``), which the api does at call time."""

    def __init__(self, param, message, held=False, **where):
        self.param = param
        # read out of an attribute of the parameter (`f = P.layer.apply`): the parameter may
        # be an object holding what is called, whose gradient `wrt` may ask for
        self.held = held
        super().__init__(message, **where)


@dataclass
class Bound:
    """``functools.partial(fn, *args, **keywords)`` made in the body: its arguments are atoms
    (names of their own, or constants) of the generated code."""

    fn: object
    args: list
    keywords: dict


def is_callable_value(value):
    """Whether a value is one the transform resolves statically when it is passed along: a
    callable that is not an array, a partial made in the body, a local function, or a
    tuple/list/dict holding one."""
    if isinstance(value, (Bound, LocalFunction)):
        return True
    if isinstance(value, (tuple, list)):
        return any(is_callable_value(v) for v in value)
    if isinstance(value, dict):
        return any(is_callable_value(v) for v in value.values())
    return callable(value) and not hasattr(value, "__array__")


class StaticValues:
    """The statically known values of a body's names, shared by every inlined body (their
    locals are renamed apart, so one table serves all)."""

    def __init__(self, namespace, static, params, stores, examples=None, node=None):
        self.namespace = namespace
        self.values = {}  # name -> object or Bound
        self.defs = {}  # name assigned once -> its value expression (to trace a parameter)
        self.stores = Counter(stores)
        self.params = set(params) - set(stores)  # the transformed function's, never rebound
        self.rebound_params = set(params) & set(stores)
        # a parameter is bound once by the call: `g = np.sin` in the body binds it again
        # (`if g is None: g = np.sin`), so `g` holds no one value known here
        self.stores.update(set(params))
        self.local_functions = {}  # the lambdas and nested defs of the bodies, by name (inline)
        for name, value in (static or {}).items():
            if name in self.params:
                self.values[name] = value
        # parameter -> the objects a call passes (a derivative specialized per the functions
        # their fields hold): `cfg.act(x)` calls the function `cfg.act` holds, as a constant
        self.examples = {p: v for p, v in (examples or {}).items() if p in self.params}
        self.arguments = dict(examples or {})  # (an argument's field read before it is written)
        self.set_fields = set()  # (name, field) of each `name = set_field(name, "field", v)`
        # the attributes the bodies write (`cfg.act = ...`), ITEMS if they write items
        self.written = set() if node is None else written_attributes(node)
        self.root = node
        self.bodies = []  # the inlined helpers' bodies (``add_body``), read with ``root``
        self.field_reads = []  # (fields, whether items too, where) of each `held_field` read
        self.local_fields = {}  # name -> {field: the function it holds} of objects built here
        # name -> (the name it was given an object built here from, the writes of each field
        # noted until then): a helper's parameter, `c = b` (``record``)
        self.field_aliases = {}
        self.alias_reads = {}  # id of a read `name.f` -> (writes of `f` noted then, loops)
        self.field_writes = Counter()  # the writes of each field noted (``note_field``)
        self.write_nodes = {}  # field -> the statements of those writes, as noted
        self.alias_values = {}  # a name given an object built here -> the name it was given
        self.field_sources = {}  # (name, field) -> the expression the function was read from
        # the loops the statement being inlined is in, each by a number of its own
        self.loop_stack, self.loop_serial = (), 0
        # (name, function) where a name in a loop is given a local function holding values of
        # its own (defaults, a helper's variables), which another trip makes anew
        self.aliases_in_loops = []

    @property
    def loops(self):
        """How many loops the statement being inlined is in (``InlineCalls._control``)."""
        return len(self.loop_stack)

    @loops.setter
    def loops(self, count):
        while len(self.loop_stack) < count:
            self.loop_serial += 1
            self.loop_stack += (self.loop_serial,)
        self.loop_stack = self.loop_stack[:count]

    def add_body(self, stores, node=None):
        """The store counts of an inlined body (its names are fresh), and the attributes it
        writes. A name known here that the body stores too (the caller's list, written into
        by a helper it is passed to: ``fs[0] = np.tanh``) is known no more: a later call of
        ``fs[0]`` read the function it held before (a wrong value and gradient)."""
        for name in [n for n, count in stores.items() if count and n in self.stores]:
            self.values.pop(name, None)
            self.defs.pop(name, None)
        self.stores.update(stores)
        if node is not None:
            self.written |= written_attributes(node)
            self.bodies.append(node)

    def trees(self):
        """The function's tree and the bodies of the helpers inlined into it so far."""
        return [] if self.root is None else [self.root] + self.bodies

    def note_field(self, stmt, locals_):
        """Note ``b = set_field(b, "f", g)`` of a function ``g`` known here (``b.f = np.tanh``,
        ``Box(np.tanh)``'s ``__init__``): ``b.f`` read later holds ``g`` (checked at the end,
        ``check_field_reads``: no other write of a field ``f``, ``b`` only ever an object
        built here). ``n = len(fs)`` of a tuple of functions known here: ``fold_length``."""
        fold_length(self, stmt, locals_)
        value = getattr(stmt, "value", None)
        if isinstance(stmt, gast.Assign) and isinstance(value, gast.Call) and len(
                value.args) == 3 and isinstance(value.args[1], gast.Constant) and isinstance(
                value.args[0], gast.Name) and isinstance(stmt.targets[0], gast.Name) and (
                value.args[0].id == stmt.targets[0].id) and self.namespace.resolve(
                value.func, locals_) is runtime.set_field:
            held = self.value(value.args[2], locals_)
            self.set_fields.add((stmt.targets[0].id, value.args[1].value))
            fields = self.local_fields.setdefault(stmt.targets[0].id, {})
            self.field_writes[value.args[1].value] += 1
            # (a tuple: ``InlineCalls._probe`` restores a shallow copy of these tables)
            self.write_nodes[value.args[1].value] = self.write_nodes.get(
                value.args[1].value, ()) + ((stmt, self.loop_stack),)
            fields.pop(value.args[1].value, None)  # (another value: not known here)
            if isinstance(held, LocalFunction) or is_function_value(held):
                fields[value.args[1].value] = held
                # where it was read (`helper`, a global): the guard notices it redefined
                self.field_sources[(stmt.targets[0].id, value.args[1].value)] = value.args[2]

    def held_field(self, expr, locals_):
        """The function a field of an object a call passes holds (``cfg.act``,
        ``model.layers[0].act``, ``self.act`` of an inlined method of such an object, through
        the names assigned once on the way), or MISSING. The derivative is specialized per the
        functions those fields hold (``object_classes.classes_key``): it holds it as a
        constant, and a call passing another makes another derivative. A field the function
        writes is not read here."""
        if isinstance(expr, gast.Attribute) and isinstance(expr.value, gast.Name) and (
                expr.attr in self.local_fields.get(expr.value.id, {})):
            self.field_reads.append((expr.attr, expr.value.id, expr))
            # (the writes of the field noted until this read, whether it is in a loop)
            self.alias_reads[id(expr)] = (self.field_writes[expr.attr], self.loop_stack)
            return self.local_fields[expr.value.id][expr.attr]
        found = self._argument_field(expr)
        if found is not MISSING:
            return found
        root, path = self._field_path(expr, locals_)
        steps = [s for s in path if isinstance(s, str)]
        items = len(steps) < len(path)
        if root is None or not steps or self.written & set(steps) or items and (
                ITEMS in self.written):
            return MISSING  # (no field read, or one the body writes)
        found = self.examples[root] if root in self.examples else self._raw(root, ())
        for step in reversed(path):
            fields = {step[0]: _item(found, step[0])} if isinstance(step, tuple) else (
                fields_of(found) or {})
            found = fields.get(step[0] if isinstance(step, tuple) else step, MISSING)
            if found is MISSING:
                return MISSING
        if not is_function_value(found):
            return MISSING
        self.field_reads.append((set(steps), items, expr))
        return found

    def _argument_field(self, expr):
        """The function ``cfg.act`` of an argument holds, where the function's own block
        writes that field later (checked at the end, ``_check_fields``), or MISSING."""
        if not (isinstance(expr, gast.Attribute) and isinstance(expr.value, gast.Name) and (
                expr.value.id, expr.attr) not in self.set_fields and (
                expr.value.id in self.arguments) and expr.attr in self.written):
            return MISSING
        found = (fields_of(self.arguments[expr.value.id]) or {}).get(expr.attr, MISSING)
        if is_function_value(found):
            self.field_reads.append((expr.attr, (expr.value.id,), expr))
            return found
        return MISSING

    def _field_path(self, expr, locals_):
        """(the parameter given an example or the global ``expr`` reads out of, the fields
        and ``(key,)`` items read on the way, last first), or (None, [])."""
        path, seen = [], set()
        while not (isinstance(expr, gast.Name) and (
                expr.id in self.examples or self._global(expr.id, locals_))):
            if isinstance(expr, gast.Name) and expr.id in self.defs and expr.id not in seen:
                seen.add(expr.id)
                expr = self.defs[expr.id]
            elif isinstance(expr, gast.Attribute):
                path.append(expr.attr)
                expr = expr.value
            elif isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant):
                path.append((expr.slice.value,))
                expr = expr.value
            else:
                return None, []
        return expr.id, path

    def check_field_reads(self, location, node, dispatched=()):
        """Refuse a function read out of a field (``held_field``) that a body inlined after
        the read writes (``cfg.act = g`` in a helper called later in a loop): the derivative
        would call the function the field held first on every trip. Refuse a name bound in a
        loop to a local function holding values of its own (``h = g`` of ``g = lambda t,
        c=c: ...`` or ``g = make(c)``, a helper returning a closure), made again on a later
        trip: its calls would read the values of the last one made."""
        self._check_aliases(location)
        chosen_passed_fields.check(location, node, dispatched,
                                   self.written | written_attributes(node))
        self._check_fields(location, node)
        self._drop_function_fields(node)

    def _drop_function_fields(self, node):
        """``b = set_field(b, "f", lambda_2)`` of a local function whose every read ``b.f`` was
        resolved here, ``b`` reached by no other name (but names given it whose reads were
        too, ``field_aliases``): the field is read no more, and a local function is no value
        the derivative could hold."""
        pairs = {(name, attr) for name, fields in self.local_fields.items()
                 for attr, held in fields.items() if isinstance(held, LocalFunction)}
        def unread(name, attr, group):
            return not escapes(name, node, group) and not any(
                isinstance(n, gast.Attribute) and n.attr == attr and isinstance(
                    n.value, gast.Name) and n.value.id == name for n in gast.walk(node))

        # (with the other names it was given, a helper's parameter: none of them reached
        # otherwise, no read of the field of any of them left)
        groups = {name: {name} | {a for a, (o, *_) in self.field_aliases.items() if o == name}
                  for name, _ in pairs}
        pairs = {(name, attr) for name, attr in pairs if name not in self.field_aliases and all(
            unread(n, attr, groups[name]) for n in groups[name])}
        if pairs:
            drop_field_writes(node, pairs)

    def _check_aliases(self, location):
        for where, _ in self.aliases_in_loops:
            raise location.error(UnsupportedSyntaxError, where, (
                "srcgrad does not support another name (or a tuple, list or dict) given, in a "
                "loop, a function made there that holds values of its own (default values, "
                "or the variables of the helper that returned it): a later trip makes it "
                "anew, and its calls would read the values of the last one made; call it in "
                "the trip that makes it, or make it after the loop"))

    def _check_fields(self, location, node):
        written = self.written | written_attributes(node)
        writes = Counter(written_attributes(node, counted=True))
        for steps, items, expr in self.field_reads:
            if isinstance(steps, str) and isinstance(items, tuple):  # an argument's, before
                items = items[0]  # the writes: checked as after them
            if isinstance(steps, str):  # `b.f` of an object built here, set once by one write
                if self._built_field_read(steps, items, node, writes, expr):
                    continue
                items = self.field_aliases.get(items, (items,))[0]  # (the caller's name)
                raise location.error(UnsupportedSyntaxError, expr, (
                    f"srcgrad does not support calling here the function a field `{steps}` of "
                    f"an object built here holds, when the function (or a helper it calls) "
                    f"writes fields `{steps}` in a branch or a loop (or elsewhere, more than "
                    f"once), or `{items}` may hold an object not built here (an argument, one "
                    f"another name reaches): call the function where it is named, or pass it "
                    f"as an argument of its own"))
            if steps & written or items and ITEMS in written or "*" in written:
                raise location.error(UnsupportedSyntaxError, expr, (
                    "srcgrad does not support calling here a function held in a field that the "
                    "function (or a helper it calls) also writes: call the function where it "
                    "is named, or pass it as an argument of its own"))

    def _built_field_read(self, attr, name, node, writes, expr):
        """Whether ``name.attr``, read where ``local_fields`` knew what it holds, holds that:
        ``name`` only ever an object built here, whose field ``attr`` one write on every path to the
        read sets (or writes of its own block, in order), no other name reaching it while another
        write of such a field exists; or ``name`` given such an object later (a helper's parameter,
        ``self`` of its method), no field ``attr`` written after that, or none between that and this
        read, neither in a loop."""
        def builds(func):
            return user_class(self.namespace.resolve(func, ()))

        if self._written_just_before(attr, name, node, writes, expr, builds):
            return True
        top = gast.Module([s for s in node.body if isinstance(s, gast.Assign)], [])
        if name in self.field_aliases:  # (every write of such a field: the owner's, in its
            owner, seen, looped = self.field_aliases[name]  # own block)
            read, in_loop = self.alias_reads.get(id(expr), (None, 1))
            ordered = writes[attr] == seen[attr] or (  # (none after, or none between)
                read == seen[attr] and not looped and not in_loop)
            return writes["*"] == 0 and ordered and writes[attr] == own_writes(
                owner, attr, node) == own_writes(owner, attr, top) and built_here(
                owner, node, builds)
        return self._own_field_read(attr, name, node, writes, expr, builds, top)

    @staticmethod
    def _own_field_read(attr, name, node, writes, expr, builds, top):
        """``_built_field_read`` of ``name`` itself: its writes of ``attr`` one that runs
        before the read on every path, or all in the block that builds it, in order (an
        argument's: in the function's own block only, the caller may pass it twice)."""
        argument = is_parameter(name, node)
        own = own_writes(name, attr, node)
        block = built_fields.built_in(name, node) if not argument else None
        top = top if block is None else gast.Module([s for s in block if isinstance(
            s, gast.Assign)], [])
        once = own == 1 and not argument and own_writes(name, attr, node, expr) or (
            own == own_writes(name, attr, top))
        return once and writes["*"] == 0 and built_here(name, node, builds, argument) and (
            writes[attr] == own or not argument and not escapes(name, node))

    def _written_just_before(self, attr, name, node, writes, expr, builds):
        """Whether the last write of a field ``attr`` noted before the read ``expr`` is
        ``owner = set_field(owner, "attr", v)`` of the object ``name`` holds, in a block holding,
        later, with no loop between, the read (``name`` the owner) or the statement giving
        the object to ``name`` (a helper's parameter, ``self``: then no write noted between
        that and the read, and none after it in a loop entered after that); every write of
        such a field in ``node`` noted (so none runs between), no name but these reaching it."""
        read, loops = self.alias_reads.get(id(expr), (0, ()))
        owner, where = name, expr
        noted = self.write_nodes.get(attr, ())
        if name in self.field_aliases:
            owner, seen, looped = self.field_aliases[name]
            where = self.alias_values.get(name)
            entered = set(loops[len(looped):])
            if seen[attr] != read or loops[:len(looped)] != looped or any(
                    entered & set(stack) for _, stack in noted[read:]):
                return False
        if not 0 < read <= len(noted) or writes[attr] != len(noted) or writes["*"] or (
                built_fields.bindings(owner, node) != 1):
            return False
        write = noted[read - 1][0]
        group = {owner} | {a for a, (o, *_) in self.field_aliases.items() if o == owner}
        return write.targets[0].id == owner and built_here(owner, node, builds) and not any(
            escapes(n, node, group) for n in group) and built_fields.written_just_before(
            write, where, node)

    def value(self, expr, locals_):
        """The object ``expr`` denotes at transform time, or MISSING."""
        if isinstance(expr, gast.Name):
            if expr.id in self.values:
                return self.values[expr.id]
            if expr.id in self.local_functions:
                return LocalFunction(expr.id)
            return MISSING if expr.id in locals_ or self.stores[expr.id] else (  # (assigned:
                self.namespace.lookup(expr.id))  # a temporary named as a global is no global)
        if isinstance(expr, gast.Attribute):
            base = self.value(expr.value, locals_)
            if base is MISSING:
                return self.held_field(expr, locals_)
            if isinstance(base, Bound):
                return MISSING
            return getattr(base, expr.attr, MISSING)
        if isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant):
            found = _item(self.value(expr.value, locals_), expr.slice.value)
            return self.held_field(expr, locals_) if found is MISSING else found
        if isinstance(expr, gast.Constant):
            return expr.value
        return self._literal(expr, locals_)

    def _literal(self, expr, locals_):
        """A tuple, list or dict (constant keys) of values known at transform time."""
        if isinstance(expr, (gast.Tuple, gast.List)):
            elts = [self.value(e, locals_) for e in expr.elts]
            if any(e is MISSING for e in elts):
                return MISSING
            return tuple(elts) if isinstance(expr, gast.Tuple) else elts
        if isinstance(expr, gast.Dict) and all(isinstance(k, gast.Constant) for k in expr.keys):
            values = [self.value(v, locals_) for v in expr.values]
            if any(v is MISSING for v in values):
                return MISSING
            return {k.value: v for k, v in zip(expr.keys, values)}
        return MISSING

    def holds_none(self, expr, locals_, depth=0):
        """Whether ``expr`` surely holds None: the constant, a name assigned it once, an item
        of a value known at transform time (a global tuple), or an item at a constant index of
        a tuple, list or dict display assigned once (through the names it was given): a
        parameter's None copy held in a list (normalize/chosen_held.py), which a call then
        calls, as Python's TypeError has it."""
        while self._once(expr) and depth < 16:
            expr, depth = self.defs[expr.id], depth + 1
        if isinstance(expr, gast.Constant):
            return expr.value is None
        if not (isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant)):
            return False
        if isinstance(expr.value, gast.Name) and _item(  # (a global tuple's item; no field
                self.value(expr.value, locals_), expr.slice.value) is None:  # read noted)
            return True
        held = expr.value
        while self._once(held) and depth < 16:  # (never written into: stored once)
            held, depth = self.defs[held.id], depth + 1
        key = expr.slice.value
        if isinstance(held, (gast.Tuple, gast.List)) and isinstance(key, int) and (
                -len(held.elts) <= key < len(held.elts)):
            return self.holds_none(held.elts[key], locals_, depth + 1)
        if isinstance(held, gast.Dict) and key in [getattr(k, "value", MISSING)
                                                    for k in held.keys]:
            return self.holds_none(held.values[[k.value for k in held.keys].index(key)],
                                   locals_, depth + 1)
        return False

    def _once(self, expr):
        return isinstance(expr, gast.Name) and expr.id in self.defs and (
            self.stores[expr.id] == 1)

    def record(self, target, value, locals_, made=False):
        """Note ``target = value`` (assigned once): its static value, if it has one, and its
        definition, to trace a parameter through. ``made``: the name a helper's result is
        bound to (``f = make(a)``), where the function it returns is made."""
        if self.stores[target] != 1:
            return
        self.defs[target] = value
        known = self.value(value, locals_)
        held = [f for f in local_functions_in(known) if f != target and holds_own_values(
            self.local_functions.get(f))]
        if held and self.loops and not made:
            self.aliases_in_loops.append((value, held[0]))
        if known is not MISSING and is_callable_value(known):
            self.values[target] = known
        if isinstance(value, gast.Name) and value.id in self.local_fields:
            # another name for an object built here: its function fields, as they are now
            # (checked at the end: no write of those fields after this, ``_check_fields``)
            self.local_fields[target] = dict(self.local_fields[value.id])
            self.field_sources.update({(target, f): e for (n, f), e in list(
                self.field_sources.items()) if n == value.id})
            owner = self.field_aliases.get(value.id, (value.id,))[0]
            self.field_aliases[target] = (owner, Counter(self.field_writes), self.loop_stack)
            self.alias_values[target] = value  # (where it was given: ``_written_just_before``)

    def source(self, func, locals_, obj, direct=False):
        """(the expression of a global or closure variable a static local ``func`` was assigned
        from, ``h = ACT``, ``g = h``, ``h = cfg.act``; the object it holds), or None: the
        derivative calls what it held then (``obj``), and its guard (emit/guard.py) must notice
        when it is rebound. None for a name srcgrad made and for a read that gives a new object
        each time (a bound method, ``rng.normal``): nothing to compare by identity.
        ``direct``: also for ``func`` read from outside itself (``NET.act``), whose object the
        derivative holds as a constant."""
        expr, seen = func, set()
        while isinstance(expr, gast.Name) and expr.id in self.defs and expr.id not in seen:
            seen.add(expr.id)
            expr = self.defs[expr.id]
        parts = []
        root = expr
        while isinstance(root, gast.Attribute):
            parts.append(root.attr)
            root = root.value
        if (expr is func and not direct) or not isinstance(root, gast.Name) or (
                root.id in locals_):
            return None
        held = [self._raw(root.id, reversed(parts)) for _ in range(2)]
        if held[0] is MISSING or held[0] is not held[1] or plain(held[0]) is not plain(obj):
            return None
        return expr, held[0]

    def watch(self, expr, locals_, obj, dependencies):
        """Note in ``dependencies`` (for the guard, emit/guard.py) where ``expr``, a static
        local or a field of a global (``NET.act``), was read from outside (``source``); the
        derivative holds ``obj`` as a constant, so it is made again once that holds another;
        also an item of a container from outside it is, or a bound method's object is."""
        held = self.source(expr, locals_, obj, isinstance(expr, gast.Attribute))
        if held is None and self.held_field(expr, locals_) is obj:
            held = self._field_source(expr, locals_, obj)
        if held is None and isinstance(expr, gast.Attribute) and isinstance(expr.value, gast.Name):
            read = self.field_sources.get((expr.value.id, expr.attr))  # `b.f` of `b.f = helper`
            held = None if read is None else self.source(read, locals_, obj, True)
        if held is not None:
            dependencies.append((self.namespace, clone(held[0]), held[1]))
        receiver = inspect.ismethod(obj) and isinstance(expr, gast.Attribute)  # `G.d["a"].s`
        self.watch_item(expr.value if receiver else expr, locals_, dependencies)

    def watch_item(self, expr, locals_, dependencies):
        """Note in ``dependencies`` (``HeldItems``) the tuple, list or dict of callables from
        outside that ``expr``, or the name it was assigned from, is an item of by a constant
        key (``NET.d["a"]``): the derivative holds that item as a constant, so it is made
        again once the container holds other items."""
        seen = set()
        while isinstance(expr, gast.Name) and expr.id in self.defs and expr.id not in seen:
            seen.add(expr.id)
            expr = self.defs[expr.id]
        if not (isinstance(expr, gast.Subscript) and isinstance(expr.slice, gast.Constant)):
            return
        held = self.namespace.resolve(expr.value, locals_)
        if isinstance(held, (tuple, list, dict)) and is_callable_value(held):
            dependencies.append((HeldItems(self.namespace, items_of(held)), clone(expr.value),
                                 HeldItems.SAME))

    def _global(self, name, locals_):
        """Whether ``name`` reads the user's global or closure variable (which the guard reads
        again when the derivative runs, emit/guard.py)."""
        return name not in locals_ and (name in self.namespace.cells or (
            name in self.namespace.globals and name not in self.namespace.extras))

    def _field_source(self, expr, locals_, obj):
        """(``G.a.act``, obj): a global's field holding ``obj`` that ``expr`` reads through
        names assigned once (``s = G; s.a.act``, ``self.layers[0].act`` of a global's inlined
        method), for the guard; or None."""
        root, path = self._field_path(expr, locals_)
        if root is None or root in self.examples or not path:
            return None
        read = gast.Name(root, gast.Load(), None, None)
        for step in reversed(path):
            read = gast.Subscript(read, gast.Constant(step[0], None), gast.Load()) if (
                isinstance(step, tuple)) else gast.Attribute(read, step, gast.Load())
        return read, obj

    def _raw(self, name, attrs):
        """What ``name.attrs`` holds now, as the generated code reads it (not unwrapped)."""
        cell = self.namespace.cells.get(name)
        found = self.namespace.globals.get(name, MISSING) if cell is None else (
            cell.cell_contents)
        for attr in attrs:
            found = MISSING if found is MISSING else getattr(found, attr, MISSING)
        return found

    def bind(self, target, bound):
        """``target = functools.partial(...)``, its arguments already copied to atoms."""
        if self.stores[target] == 1:
            self.values[target] = bound

    def origin(self, expr, seen=None, through=None):
        """A parameter of the transformed function that ``expr`` was taken from (``f``,
        ``fs[0]``, ``g = f``, a helper's parameter bound to it), or None. ``through`` (a list)
        gets the attributes read on the way."""
        seen = set() if seen is None else seen
        if isinstance(expr, gast.Name):
            if expr.id in self.params:
                return expr.id
            if expr.id in seen or expr.id not in self.defs:
                return None
            seen.add(expr.id)
            return self.origin(self.defs[expr.id], seen, through)
        if isinstance(expr, (gast.Subscript, gast.Attribute)):
            if isinstance(expr, gast.Attribute) and through is not None:
                through.append(expr.attr)
            return self.origin(expr.value, seen, through)
        if isinstance(expr, (gast.Tuple, gast.List)):
            found = [self.origin(e, seen, through) for e in expr.elts]
        elif isinstance(expr, gast.Dict):
            found = [self.origin(v, seen, through) for v in expr.values]
        else:
            return None
        return next((f for f in found if f is not None), None)


ITEMS = "[]"  # what ``written_attributes`` gives for a body that may write items
_CHANGES = ("append", "extend", "insert", "setitem", "pop", "remove", "clear", "sort",
            "reverse", "update", "delitem", "setdefault")


def needs_static(values, ctx, func, stmt):
    """A callee that is a parameter of the transformed function (or taken from one): raise
    ``StaticArgumentNeeded`` so the derivative is specialized per function passed."""
    through = []
    param = values.origin(func, through=through) if isinstance(func, gast.Name) else None
    if param is None and isinstance(func, gast.Name) and func.id in values.rebound_params and (
            func.id not in values.defs):
        where = func if getattr(func, "lineno", None) is not None else stmt
        raise ctx.location.error(UnsupportedSyntaxError, where, (
            f"srcgrad does not support calling the parameter `{func.id}` here: the function "
            f"assigns it where srcgrad cannot tell which function it holds (a test such as "
            f"`{func.id} is None` after an assignment in a branch on a run-time value, or an "
            f"assignment that is not `{func.id} = ...`); test `{func.id} is None` before "
            f"assigning it in such a branch, or give what is assigned a name of its own "
            f"(`h = np.cos`, then `h(x)`)"))
    if param is None:
        return
    if param in ctx.receivers.known and getattr(func, "classes_of", None) == param:
        return  # an object read out of `self`: specialized per its classes (analysis/ops)
    where = func if getattr(func, "lineno", None) is not None else stmt
    if param in ctx.receivers.known:  # `self`: an object, not a function passed
        raise ctx.location.error(UnsupportedSyntaxError, where, (
            "srcgrad does not support calling a method or object taken out of a list, "
            "tuple or dict held by an object here; call it where it is named "
            "(`self.layer.g(x)`, or `g = self.layer.g; g(x)`)"))
    if param in ctx.wrt and (param in ctx.examples or param in ctx.static):
        raise ctx.location.error(UnsupportedSyntaxError, where, (
            f"srcgrad does not support calling here a function held by `{param}`, which "
            f"wrt selects (a function has no gradient; the methods and `__call__` of "
            f"objects of your classes are inlined): differentiate with respect to the "
            f"values it holds, or pass the function as an argument of its own"))
    filename, lineno, offset, line = ctx.location.of(func)
    raise StaticArgumentNeeded(
        param, f"`{param}` is called as a function here: srcgrad specializes the "
        f"derivative per function passed as `{param}`, so call the derivative with a "
        f"function (or a tuple or dict of functions) there", held=bool(through),
        filename=filename, lineno=lineno, offset=offset, line=line,
    )


def written_attributes(node, counted=False):
    """The attributes ``node`` writes (``obj.attr = v``, ``set_field(obj, "attr", v)``), and
    ``ITEMS`` when it may write an item of a list or dict (``xs[0] = v``, ``xs.append(v)``),
    ``"*"`` any attribute (``setattr(obj, name, v)``). ``counted``: a list, once per write."""
    found = []
    for n in gast.walk(node):
        if isinstance(n, (gast.Attribute, gast.Subscript)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            found.append(n.attr if isinstance(n, gast.Attribute) else ITEMS)
        elif isinstance(n, gast.Call):
            name = n.func.attr if isinstance(n.func, gast.Attribute) else getattr(
                n.func, "id", "")
            if any(c in name for c in _CHANGES):
                found.append(ITEMS)
            if len(n.args) >= 2 and isinstance(n.args[1], gast.Constant) and isinstance(
                    n.args[1].value, str):
                found.append(n.args[1].value)  # (setattr, set_field, field_updated, ...)
            elif "setattr" in name:
                found.append("*")
    return found if counted else set(found)


def _item(container, key):
    if not isinstance(container, (tuple, list, dict)):
        return MISSING
    try:
        return container[key]
    except (KeyError, IndexError, TypeError):
        return MISSING


def is_partial(value):
    return isinstance(value, functools.partial)


def _plain_call_method(obj):
    """``type(obj).__call__`` when it is a Python function (a callable object), else None."""
    if isinstance(obj, type) or inspect.isfunction(obj) or inspect.ismethod(obj):
        return None
    method = inspect.getattr_static(type(obj), "__call__", None)
    return method if inspect.isfunction(method) else None


def target(obj, call, constant):
    """``(function, call)``: the plain Python function a call of ``obj`` ends up in, and the
    call with what ``obj`` binds spelled out as its leading arguments and keywords. ``constant``
    makes an expression for a bound value (a constant, or a name bound to it). ``obj`` itself
    when it is none of the callables unwrapped here."""
    for _ in range(MAX_LAYERS):
        if isinstance(obj, Bound):
            call = _prepend(call, [clone(a) for a in obj.args],
                            {k: clone(v) for k, v in obj.keywords.items()})
            obj = obj.fn
        elif is_partial(obj):
            call = _prepend(call, [constant(a, naming.PARTIAL_ARG) for a in obj.args],
                            {k: constant(v, k) for k, v in obj.keywords.items()})
            obj = obj.func
        elif isinstance(obj, functools._lru_cache_wrapper):
            obj = obj.__wrapped__  # the cache returns what the function computes
        elif inspect.ismethod(obj) and inspect.isfunction(obj.__func__):
            owner = naming.SELF.format(type(obj.__self__).__name__.lower())
            call = _prepend(call, [constant(obj.__self__, owner)], {})
            obj = obj.__func__
        elif _plain_call_method(obj) is not None:
            owner = naming.SELF.format(type(obj).__name__.lower())
            call = _prepend(call, [constant(obj, owner)], {})
            obj = _plain_call_method(obj)
        else:
            return obj, call
    return obj, call


def _prepend(call, args, keywords):
    given = {k.arg for k in call.keywords}
    kept = [gast.keyword(k, v) for k, v in keywords.items() if k not in given]
    new = gast.Call(call.func, args + list(call.args), kept + list(call.keywords))
    return gast.copy_location(new, call)


def partial_parts(call, values, locals_):
    """``(function, positional atoms, keyword atoms)`` of ``functools.partial(fn, ...)`` whose
    ``fn`` is static, or None for any other call."""
    if values.value(call.func, locals_) is not functools.partial or not call.args:
        return None
    fn = values.value(call.args[0], locals_)
    if fn is MISSING or not callable(fn) and not isinstance(fn, Bound):
        return None
    if any(isinstance(a, gast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    return fn, list(call.args[1:]), {k.arg: k.value for k in call.keywords}

