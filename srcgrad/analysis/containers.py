"""Container suspects: the variables that may hold a tuple, list, dict or a structured object.

Requires: the :class:`Op` of every assignment. Guarantees: every variable built by a tuple, list
or dict literal, indexed or unpacked (``x[...]``), whose attributes are differentiated (``p.W``),
or passed whole as a sequence argument (``np.concatenate(xs)``) or to a function srcgrad
generated is a suspect. Everything else is a number or an array. The reverse sweep
adds the adjoints of suspects elementwise (``add(dxs, g)``) instead of with ``+``, and returns
them with the structure of the argument.

    xs = (a, b)            suspects: xs, ys
    z = np.stack(ys)
"""

from __future__ import annotations

import operator

import gast
import numpy as np

from .. import runtime
from ..astutil import ordered_walk, walk
from ..rules.kinds import Kind

# arithmetic (an operator's rule): a number or an array
_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
               operator.mod, operator.pow, operator.matmul, operator.neg, operator.pos}
# Rule parameters that take a sequence of arrays (np.concatenate's `arrays`, ...).
SEQUENCE_PARAMS = {"arrays", "tup", "items", "iterable", "xs", "operands", "mapping"}


def container_suspects(body, ops):
    out = set()
    for n in ordered_walk(gast.Module(body, [])):
        if isinstance(n, gast.Assign) and id(n) in ops:
            out |= _suspects_of(n, ops[id(n)])
    assigns = [n for n in ordered_walk(gast.Module(body, []))
               if isinstance(n, gast.Assign) and ops.get(id(n)) is not None]
    copies = [(n.targets[0].id, ops[id(n)].args["x"].id) for n in assigns
              if ops[id(n)].kind == "copy"]
    # an object whose attributes are read is one as the copy of an argument it writes into too
    objects = {a.id for n in assigns for a in [_object_read(ops[id(n)])] if a is not None}
    copies_of_objects = copies + [(n.targets[0].id, ops[id(n)].args["x"].id) for n in assigns
                                  if _fresh_copy(ops[id(n)])]
    objects |= _held_structures(body, assigns, ops)
    return _closed(out, copies) | _closed(objects, copies_of_objects)


def _held_structures(body, assigns, ops):
    """The names a tuple, list or dict literal holds that may be structures: all but those
    every binding of which is NumPy's or arithmetic's result, and but those held only by
    literals NumPy alone reads (``np.concatenate((x, h))``: arrays). An argument an object or
    a dataclass was given to (``invariants = (P,)`` of two checkpointed loops) gets a
    cotangent from the literal's and from another use: they are added with ``add``."""
    numeric, targets, by_numpy = _numeric(assigns, ops)
    loads = {}
    for n in ordered_walk(gast.Module(body, [])):  # (a loop's target, unpacking: any value)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in targets:
            numeric[n.id] = False
        elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    held = {a.id for n in assigns if ops[id(n)].kind in ("tuple", "dict")
            and not (isinstance(n.targets[0], gast.Name) and loads.get(n.targets[0].id)
                     == by_numpy.get(n.targets[0].id))
            for a in ops[id(n)].args.values() if isinstance(a, gast.Name)}
    return {v for v in held if not numeric.get(v, False)}


def _numeric(assigns, ops):
    """``{name: whether every assignment binds it to NumPy's or arithmetic's result}``, the
    ids of those assignments' target names, and ``{name: its reads in such assignments}``."""
    numeric, targets, by_numpy = {}, set(), {}
    for n in assigns:
        fn = getattr(getattr(ops[id(n)], "rule", None), "fn", None)
        sure = fn in _ARITHMETIC or isinstance(fn, np.ufunc) or (
            getattr(fn, "__module__", None) or "").startswith("numpy")
        if len(n.targets) == 1 and isinstance(n.targets[0], gast.Name):
            targets.add(id(n.targets[0]))
            numeric[n.targets[0].id] = numeric.get(n.targets[0].id, True) and sure
        for m in walk(n.value) if sure else ():
            if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load):
                by_numpy[m.id] = by_numpy.get(m.id, 0) + 1
    return numeric, targets, by_numpy


def _suspects_of(n, op):
    """The names the assignment ``n`` (its op ``op``) shows may hold a container."""
    out = set()
    if op.kind in ("tuple", "dict") or op.kind == "rule" and any(
            op.rule.fn is f for f in _STRUCTURE_RESULTS):
        out.add(n.targets[0].id)
    out |= _taken_apart(op, n.value)
    if op.kind == "rule":
        derived = op.rule.kind is Kind.DERIVED  # a generated function: any argument may be
        for p, a in op.args.items():  # a tuple, whose gradient its vjp returns as a tuple
            if (derived or p in SEQUENCE_PARAMS) and isinstance(a, gast.Name):
                out.add(a.id)
    return out


def built_objects(body, ops):
    """The variables every binding of which builds or changes an object of the user's classes
    (``p = new_instance(Dense)``, ``p = set_field(p, "w", v)``, or ``p = None`` before): they
    hold that object, never an array, so what a list write (``layers[i] = p``) gives them is
    the object's cotangent, which no broadcast changed."""
    verdict, targets, others = {}, set(), set()
    for n in ordered_walk(gast.Module(body, [])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in targets:
            others.add(n.id)  # (a loop's target, `+=`, unpacking)
        if not (isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], gast.Name)):
            continue
        targets.add(id(n.targets[0]))
        if isinstance(n.value, gast.Constant) and n.value.value is None:
            continue  # (no value yet: nothing to broadcast)
        op = ops.get(id(n))
        fn = getattr(getattr(op, "rule", None), "fn", None)  # (new_instance's op: a constant)
        built = any(fn is f for f in (runtime.new_instance,) + _STRUCTURE_RESULTS)
        verdict[n.targets[0].id] = verdict.get(n.targets[0].id, True) and built
    verdict.update(dict.fromkeys(others, False))
    return {name for name, built in verdict.items() if built}


def _closed(out, copies):
    while True:  # `seq = xs` and seq holds a container: so does xs
        more = {x for t, x in copies if t in out and x not in out}
        if not more:
            return out
        out |= more


def _taken_apart(op, value):
    """The variable whose element (``x[i]``) or attribute (``p.W``, a structure's) ``value``
    reads, as a set."""
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
        return {value.value.id}
    read = _object_read(op)
    return set() if read is None else {read.id}


def _fresh_copy(op):
    return (op.kind == "rule" and op.rule.fn is runtime.fresh_copy
            and isinstance(op.args.get("x"), gast.Name))


def _object_read(op):
    """The variable whose attribute (of a structure) ``op`` reads, or that it takes whole as
    a structure (``dataclasses.asdict(p)``, ``replace``, a field written), or None."""
    if op.kind == "rule" and any(op.rule.fn is f for f in _STRUCTURE_READS) and isinstance(
            op.args.get("obj"), gast.Name):
        return op.args["obj"]
    return None


_STRUCTURE_READS = (getattr, runtime.as_dict, runtime.own_fields, runtime.replace_field,
                    runtime.set_field, runtime.field_updated)
# helpers whose result is an object (its cotangents from several uses are added with `add`)
_STRUCTURE_RESULTS = (runtime.set_field, runtime.replace_field, runtime.field_updated)
