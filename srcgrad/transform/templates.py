"""Inline a rule's template into generated code.

Requires: a :class:`~srcgrad.rules.registry.Template` and an environment binding the template's
names (``y``, ``dy``, parameters, tangents) to expressions of the generated function;
:func:`bind_template` builds it from the call's arguments, for either mode.
Guarantees: fresh copies of the template's statements and output expressions in which bound names
are replaced by their expressions, the template's own locals get fresh names, and its globals are
renamed to what the generated function calls them. Keyword arguments equal to a callee's default
are dropped, so ``unreduce(dy, x, axis=None, keepdims=False)`` reads ``unreduce(dy, x)``.

    template  dy * (1 - y * y)         with  y -> z,  dy -> dz
    becomes   dz * (1 - z * z)
"""

from __future__ import annotations

import inspect

import gast

from .. import rules, runtime
from ..astutil import NodeTransformer, clone, ordered_walk
from ..errors import SrcgradError, UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from ..rules.registry import Role


def bind_template(template, args, *, result=None, cotangent=None, tangents=None):
    """The environment of ``template`` at a call: each name bound by its role.

    ``args`` maps the rule's parameters to the call's atoms (a parameter missing from it is None);
    ``result`` and ``cotangent`` are the expressions of ``y`` and ``dy``; ``tangents`` maps the
    active parameters to their tangents (an inactive one is None).
    """
    none = gast.Constant(None, None)
    env = {}
    for tname, (role, param) in template.names.items():
        if role is Role.RESULT:
            env[tname] = result
        elif role is Role.COTANGENT:
            env[tname] = cotangent
        elif role is Role.PARAM:
            env[tname] = args.get(param, none)
        elif tangents is not None:
            env[tname] = tangents.get(param, none)
    return env


def instantiate(template, env, ctx, outputs=None):
    """Statements and ``{output: expression}`` for the requested outputs of ``template``."""
    locals_ = set()
    for stmt in template.prelude:
        for node in ordered_walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                locals_.add(node.id)
    subst = _Substitute(template, env, ctx, {n: ctx.namer.fresh(n) for n in locals_})
    prelude = [subst.visit(clone(s)) for s in template.prelude]
    wanted = template.outputs if outputs is None else outputs
    exprs = {k: subst.visit(clone(template.outputs[k])) for k in wanted}
    return prelude, exprs


class _Substitute(NodeTransformer):
    def __init__(self, template, env, ctx, renamed):
        self.template = template
        self.env = env
        self.ctx = ctx
        self.renamed = renamed
        self.resolved = {}  # generated name -> object, for dropping default keywords

    def visit_Name(self, node):
        if node.id in self.renamed:
            return gast.Name(self.renamed[node.id], node.ctx, None, None)
        if node.id in self.env:
            return clone(self.env[node.id])
        obj = self.template.namespace.lookup(node.id)
        if obj is MISSING:
            if self.template.location is None:
                raise SrcgradError(
                    f"internal error: a rule template uses the unknown name {node.id!r}")
            raise self.template.location.error(
                UnsupportedSyntaxError, node,
                f"the gradient rule reads the name {node.id!r}, which is not defined where the "
                f"rule is (neither a parameter, a local, a global of its module nor a builtin)",
            )
        name = self.ctx.global_name(obj, node.id)
        self.resolved[name] = obj
        return gast.Name(name, node.ctx, None, None)

    def visit_Call(self, node):
        self.generic_visit(node)
        # a keyword given UNSET is one not given (the optional parameters of a derived function
        # whose own defaults were bound into the call: transform/defaults.py)
        node.keywords = [k for k in node.keywords if not (
            isinstance(k.value, gast.Constant) and k.value.value is runtime.UNSET)]
        callee = self._callee(node.func)
        if callee is not MISSING:
            defaults = _defaults(callee)
            node.keywords = [
                k for k in node.keywords
                if not (
                    k.arg in defaults
                    and isinstance(k.value, gast.Constant)
                    and _same(k.value.value, defaults[k.arg])
                )
            ]
        return node


    def _callee(self, func):
        """The object a call in the template calls (``unreduce``, ``np.sum``), or MISSING."""
        if isinstance(func, gast.Name):
            return self.resolved.get(func.id, MISSING)
        if isinstance(func, gast.Attribute):
            base = self._callee(func.value)
            return MISSING if base is MISSING else getattr(base, func.attr, MISSING)
        return MISSING


def _same(a, b):
    return type(a) is type(b) and a == b


_DEFAULTS: dict = {}


def _defaults(fn):
    """Keyword defaults of ``fn``; for a function with a rule, the defaults its rule states (NumPy
    reports sentinels such as ``np._NoValue`` where the rule says ``keepdims=False``)."""
    key = id(fn)
    rule = rules.lookup(fn)
    if rule is not None:
        params = rule.signature.parameters.values()
        return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    if key not in _DEFAULTS:
        try:
            params = inspect.signature(fn).parameters.values()
            _DEFAULTS[key] = {
                p.name: p.default for p in params if p.default is not inspect.Parameter.empty
            }
        except (TypeError, ValueError):
            _DEFAULTS[key] = {}
    return _DEFAULTS[key]
