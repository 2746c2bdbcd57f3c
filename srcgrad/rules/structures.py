"""Rules for building a structure in differentiated code: ``Params(W, b)``, ``State(h=h, c=c)``,
``Pair(a, b)`` of a dataclass or a namedtuple, made per class the first time one is called.

A constructor is linear in its fields jointly: the cotangent of a field is the field's part of
the cotangent of the object (``attr_of``), and the tangent of the object is an instance of the
class built from the fields' tangents (``structure_tangent``, zeros for inactive float fields).
Like the rules of generated functions (``derived.py``), the templates use private aliases
(``_a0``, ``_dy``) for the parameters, which may well be called ``y`` or ``dy``.

    s = State(h=h, c=c)    vjp:  dh = attr_of(ds, s, 'h'); dc = attr_of(ds, s, 'c')
                           jvp:  ds = structure_tangent(s, {'h': dh, 'c': dc})
"""

from __future__ import annotations

import dataclasses
import inspect

import gast

from ..runtime.pytrees import ARRAY_ATTRIBUTES
from .kinds import Kind
from .registry import COTANGENT, RESULT, TEMPLATE_NAMESPACE, Rule, Template, param, tangent

_RULES: dict = {}


def structure_rule(cls):
    """The rule of calling ``cls`` when it is a dataclass or a namedtuple class whose
    parameters are its fields, or None."""
    if not isinstance(cls, type):
        return None
    if not (dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))):
        return None
    if hasattr(cls, "__post_init__"):  # it may change the fields: inlined (normalize/methods.py)
        return None
    if cls not in _RULES:
        _RULES[cls] = _build(cls)
    return _RULES[cls]


def _fields(cls):
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    return list(cls._fields)


def _build(cls):
    signature = inspect.signature(cls)
    params = list(signature.parameters.values())
    if [p.name for p in params] != _fields(cls) or any(
        p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    ):
        return None  # an __init__ of its own, InitVars: the call is not a plain pack of fields
    aliases = {p.name: f"_a{i}" for i, p in enumerate(params)}
    roles = {aliases[p.name]: param(p.name) for p in params}
    vjp_outputs = {
        p.name: _call("attr_of", _name("_dy"), _name("_y"), gast.Constant(p.name, None))
        for p in params
    }
    vjp = Template([], vjp_outputs, TEMPLATE_NAMESPACE, {**roles, "_y": RESULT, "_dy": COTANGENT})
    parts = gast.Dict([gast.Constant(p.name, None) for p in params],
                      [_name(f"_t{i}") for i in range(len(params))])
    jvp_outputs = {"*": _call("structure_tangent", _name("_y"), parts)}
    tangent_roles = {f"_t{i}": tangent(p.name) for i, p in enumerate(params)}
    jvp = Template([], jvp_outputs, TEMPLATE_NAMESPACE, {**roles, "_y": RESULT, **tangent_roles})
    # `.size` of a variable is read as the array attribute: such a field is refused, not dropped
    unsupported = {
        p.name: f"srcgrad reads `.{p.name}` as the array attribute; rename the field"
        for p in params if p.name in ARRAY_ATTRIBUTES
    }
    for name in unsupported:
        del vjp_outputs[name]
    return Rule(cls, signature, vjp_template=vjp, jvp_template=jvp, kind=Kind.GENERAL,
                unsupported=unsupported)


def _call(helper, *args):
    return gast.Call(_name(helper), list(args), [])


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)
