"""User rules: ``adjoint``, ``tangent``, ``stop_gradient``, ``nondifferentiable``.

A user rule is a plain Python function. Its body is parsed and stored as a
:class:`~srcgrad.rules.registry.Template`, which the transforms inline into generated code, so
``source()`` shows it and a second transform differentiates it again like any other code::

    @srcgrad.adjoint(expit)
    def expit_adjoint(dy, y, x):        # dy: cotangent of y = expit(x); then expit's parameters
        return dy * y * (1 - y)         # one gradient per positional parameter (None: no gradient)

becomes, inside a generated gradient, ``dz = dexpit_z * expit_z * (1 - expit_z)``.

The rule's parameters after ``dy, y`` (adjoint) or ``y`` (tangent) are matched to the function's
parameters by position, and keyword-only ones by name; a tangent rule then takes one tangent per
positional parameter, None where that parameter is inactive. Statements before the final
``return`` are inlined too, their locals renamed apart.

Registering a rule replaces any rule srcgrad had for the function and forgets derivatives
generated before, so they are generated again with the new rule.
"""

from __future__ import annotations

import inspect

import gast

from .. import transforms
from ..errors import SrcgradError
from ..frontend.resolve import Namespace
from ..frontend.source import parse_function
from .kinds import Kind
from .registry import (
    COTANGENT,
    CUSTOM_RULES,
    RESULT,
    RULES,
    Rule,
    Template,
    _key,
    load_optional_rules,
    lookup,
    nondiff,
    param,
)
from .registry import tangent as tangent_of

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def adjoint(fn):
    """Register the decorated function as the reverse-mode rule of ``fn``."""

    def register(rule_fn):
        sig = _fn_signature(fn, rule_fn, 2)
        prelude, value, params, location = _parse(rule_fn, "adjoint", fn)
        positional = [p for p, spec in sig.parameters.items() if spec.kind in POSITIONAL]
        returned = value.elts if isinstance(value, gast.Tuple) else [value]
        if len(returned) > len(positional):
            raise SrcgradError(
                f"the adjoint {rule_fn.__name__} returns {len(returned)} gradients but "
                f"{_name(fn)} has {len(positional)} positional parameters {positional}"
            )
        outputs = {
            p: e for p, e in zip(positional, returned)
            if not (isinstance(e, gast.Constant) and e.value is None)
        }
        names = {params[0]: COTANGENT, params[1]: RESULT, **_param_roles(params[2:], sig)}
        template = Template(prelude, outputs, Namespace(rule_fn), names, location)
        _rule_for(fn, sig).vjp_template = template
        CUSTOM_RULES.append(("adjoint", fn, rule_fn))
        return rule_fn

    return register


def tangent(fn):
    """Register the decorated function as the forward-mode rule of ``fn``.

    The rule is stored as a template with one output ``"*"`` (the tangent of the result) and the
    roles ``RESULT``, ``PARAM`` (a parameter of ``fn``) and ``TANGENT`` (its tangent, None when
    inactive).
    """

    def register(rule_fn):
        prelude, value, params, location = _parse(rule_fn, "tangent", fn)
        n = (len(params) - 1) // 2
        sig = _fn_signature(fn, rule_fn, 1, n)
        specs = [s for s in sig.parameters.values() if s.kind in POSITIONAL]
        required = [s for s in specs if s.default is inspect.Parameter.empty]
        if not len(required) <= n <= len(specs) or len(params) != 1 + 2 * n:
            raise SrcgradError(
                f"the tangent {rule_fn.__name__} should take y, positional parameters of "
                f"{_name(fn)} ({[s.name for s in specs]}) and then one tangent for each; it "
                f"takes {params}"
            )
        positional = [s.name for s in specs[:n]]
        primals, tangents = params[1 : 1 + n], params[1 + n :]
        names = {params[0]: RESULT, **_param_roles(primals, sig)}
        names.update({t: tangent_of(p) for t, p in zip(tangents, positional)})
        template = Template(prelude, {"*": value}, Namespace(rule_fn), names, location)
        _rule_for(fn, sig).jvp_template = template
        CUSTOM_RULES.append(("tangent", fn, rule_fn))
        return rule_fn

    return register


def stop_gradient(x):
    """``x`` itself, through which no gradient flows."""
    return x


def nondifferentiable(fn):
    """Mark ``fn``'s output as carrying no gradient (argmax-like). Returns ``fn``."""
    load_optional_rules()  # first, so that they do not replace this mark later
    nondiff(fn)
    CUSTOM_RULES.append(("nondifferentiable", fn, None))
    transforms.forget()
    return fn


nondiff(stop_gradient, signature="x")


def _rule_for(fn, sig):
    # A library's rules load before a rule for one of its functions, so that they never replace
    # it later; srcgrad's own functions (checkpoint.py's rules, registered when srcgrad is
    # imported) belong to no library, and importing srcgrad after Dask (which imports part of
    # SciPy) must not import SciPy's rules: 50 MB and 400 modules in every Dask worker.
    rule = lookup(fn, load=_module_of(fn).partition(".")[0] != __name__.partition(".")[0])
    if rule is None or rule.kind is not Kind.CUSTOM:
        rule = Rule(fn, sig, kind=Kind.CUSTOM)
        RULES[_key(fn)] = rule
    transforms.forget()
    return rule


def _module_of(fn):
    """The name of the module that defines ``fn`` ("" for an object without one)."""
    module = getattr(fn, "__module__", None)
    return module if isinstance(module, str) else ""


def _fn_signature(fn, rule_fn, skip, count=None):
    """``fn``'s signature; for a callable without one, the rule's parameters stand in."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        params = list(inspect.signature(rule_fn).parameters.values())[skip:]
        if count is not None:
            params = params[:count]
        return inspect.Signature(
            [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
        )


def _parse(rule_fn, what, fn):
    parsed = parse_function(rule_fn)
    node = parsed.node
    body = list(node.body)
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        raise SrcgradError(
            f"the {what} rule {rule_fn.__name__} for {_name(fn)} must end with `return <value>`"
        )
    args = node.args
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    return body[:-1], body[-1].value, params, parsed.location


def _param_roles(rule_params, sig):
    """Rule parameters matched to ``fn``'s: by name when they share one, else by position."""
    fn_params = list(sig.parameters)
    roles = {}
    for i, p in enumerate(rule_params):
        if p in sig.parameters:
            roles[p] = param(p)
        elif i < len(fn_params):
            roles[p] = param(fn_params[i])
    return roles


def _name(fn):
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))

