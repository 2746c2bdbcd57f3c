"""What a rule's kind implies: the forward templates a rule does not spell out.

Requires: a rule's signature, kind, namespace and reverse templates (strings).
Guarantees: for a differentiable parameter ``p`` without a written forward template, an expression
for its tangent contribution, or None when the kind does not determine one:

* ``LINEAR`` in one argument (autograd's ``def_linear``, JAX's ``deflinear``): the same call with
  ``p`` replaced by its tangent, every other argument as it is::

      np.sum(a, axis=axis, keepdims=keepdims)   ->   np.sum(da, axis=axis, keepdims=keepdims)

* ``BILINEAR`` / ``MULTILINEAR`` (JAX's ``defbilinear``): the product rule, one term per active
  argument, each the call with that argument replaced by its tangent (the transform sums them)::

      x1 @ x2   ->   dx1 @ x2  +  x1 @ dx2

* ``ELEMENTWISE``: the reverse template with the cotangent ``dy`` replaced by ``dp``. An
  elementwise rule's partial derivative is a pointwise factor, so its reverse template is
  ``dy * factor`` (up to sign, division by factors and ``np.where`` masks) and its forward one is
  ``dp * factor``. The derivation checks that shape, and refuses templates in which ``dy`` goes
  through anything else (a reduction, an unbroadcast other than the outermost one back to
  ``p``'s own shape, a call)::

      dy * (1 - y * y)   ->   dx * (1 - y * y)

A function whose tangent would be spelled differently (``float(dx)`` for ``dx``, ``np.full_like``
whose dtype follows its first argument) keeps a hand-written template in its table.
"""

from __future__ import annotations

import enum
import inspect
import operator
import types

import gast
import numpy as np

from ..astutil import ordered_walk, walk


class Kind(str, enum.Enum):
    """What a rule knows about its function; equal to its value as a string."""

    GENERAL = "general"
    LINEAR = "linear"  # linear in its differentiable arguments, jointly
    BILINEAR = "bilinear"  # linear in each differentiable argument separately
    MULTILINEAR = "multilinear"
    ELEMENTWISE = "elementwise"  # a ufunc-like map: the partials are pointwise factors
    NONDIFF = "nondiff"
    CUSTOM = "custom"  # srcgrad.adjoint / srcgrad.tangent
    DERIVED = "derived"  # a generated derivative's own derivatives


# _PASSED_ON: a derived call passes every argument on except `out` (rules declare it only so that
# `out=` is refused) and an optional `dtype`: tangents keep their own precision, as the reverse
# templates do, so the two modes agree even where a dtype would truncate (`np.sum(a, dtype=int)`).

# Functions whose call reads as an operator: their tangent is written the same way (`dx1 @ x2`).
_BINARY = {
    operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult,
    operator.truediv: gast.Div, operator.matmul: gast.MatMult, np.add: gast.Add,
    np.subtract: gast.Sub, np.multiply: gast.Mult, np.divide: gast.Div, np.matmul: gast.MatMult,
    np.linalg.matmul: gast.MatMult,
}
_UNARY = {operator.neg: gast.USub, operator.pos: gast.UAdd, np.negative: gast.USub,
          np.positive: gast.UAdd}


def tangent_expr(rule, param, namespace):
    """The tangent contribution of ``param`` that ``rule``'s kind determines, or None."""
    if rule.kind is Kind.ELEMENTWISE and param in rule.vjp_src:
        return _elementwise(rule.vjp_src[param], param, namespace)
    if rule.kind is Kind.LINEAR and list(rule.vjp_src) == [param]:
        return _applied(rule, param, namespace)
    if rule.kind in (Kind.BILINEAR, Kind.MULTILINEAR):
        return _applied(rule, param, namespace)
    return None


# --- linear in an argument: the function applied to its tangent -------------------------------


def _applied(rule, param, namespace):
    """``fn(...)`` with ``param`` replaced by its tangent ``d<param>``, or None."""
    passed = _arguments(rule.signature, param)
    if passed is None:
        return None
    args, keywords = passed
    fn = rule.fn
    written = _operator_form(fn, args, keywords)
    if written is not None:
        return written
    callee = spelling(fn, namespace)
    if callee is None or not _accepts(fn, [k.arg for k in keywords]):
        return None
    return gast.Call(callee, args, keywords)


def _arguments(signature, param):
    """The positional and keyword arguments of the call with ``param`` replaced by its tangent:
    required parameters by position, the others by name; None for ``*args``/``**kwargs``."""
    args, keywords = [], []
    for p, spec in signature.parameters.items():
        if p == "out" or p == "dtype" and spec.default is not spec.empty:
            continue  # see _PASSED_ON
        if spec.kind in (spec.VAR_POSITIONAL, spec.VAR_KEYWORD):
            return None
        value = _name(tangent_name(p, signature) if p == param else p)
        if spec.kind is not spec.KEYWORD_ONLY and spec.default is spec.empty:
            args.append(value)
        else:
            keywords.append(gast.keyword(p, value))
    return args, keywords


def tangent_name(param, signature):
    """``registry.tangent_name`` (imported here late: registry imports this module)."""
    from .registry import tangent_name as name

    return name(param, signature)


def _operator_form(fn, args, keywords):
    """``dx1 @ x2``, ``-dx``, ``dx[index]`` for the functions operators call, else None."""
    if keywords:
        return None
    if fn in _BINARY and len(args) == 2:
        return gast.BinOp(args[0], _BINARY[fn](), args[1])
    if fn in _UNARY and len(args) == 1:
        return gast.UnaryOp(_UNARY[fn](), args[0])
    if fn is operator.getitem and len(args) == 2:
        return gast.Subscript(args[0], args[1], gast.Load())
    return None


def spelling(fn, namespace):
    """An expression naming ``fn`` in the template ``namespace`` (``np.sum``, ``unreduce``)."""
    name = getattr(fn, "__name__", None)
    if name is None:
        return None
    mapping = getattr(namespace, "mapping", {})
    if mapping.get(name) is fn:
        return _name(name)
    for key, module in mapping.items():
        if not isinstance(module, types.ModuleType):
            continue
        if getattr(module, name, None) is fn:
            return gast.Attribute(_name(key), name, gast.Load())
        for sub in ("linalg", "fft"):
            if getattr(getattr(module, sub, None), name, None) is fn:
                path = gast.Attribute(_name(key), sub, gast.Load())
                return gast.Attribute(path, name, gast.Load())
    return None


def _accepts(fn, keywords):
    """Whether ``fn`` takes each of ``keywords`` by name (the rule's names must be the real
    ones, or the derived call would fail)."""
    if not keywords:
        return True
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    kinds = {p.kind for p in params.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds and inspect.Parameter.VAR_POSITIONAL not in kinds:
        return True  # np.pad passes constant_values on (np.einsum's operands are positional)
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return all(k in params and params[k].kind in named for k in keywords)


# --- elementwise: the reverse template with dy renamed ------------------------------------------


def _elementwise(source, param, namespace):
    """``source`` (a reverse template of an elementwise rule) with ``dy`` renamed ``d<param>``,
    or None when ``source`` is not a pointwise multiple of ``dy``."""
    expr = gast.parse(source.strip()).body[0].value
    if _calls(expr, namespace, "no_gradient"):
        return expr  # raises when it runs, in either mode
    if (
        _calls(expr, namespace, "unbroadcast")
        and len(expr.args) == 2
        and not expr.keywords
        and _is_name(expr.args[1], param)
    ):
        expr = expr.args[0]  # summing back to param's shape is the reverse half of broadcasting
    if not _linear_in(expr, "dy", namespace):
        return None
    for node in ordered_walk(expr):
        if _is_name(node, "dy"):
            node.id = "d" + param
    return expr


def _linear_in(node, dy, namespace):
    """Whether ``node`` is ``dy`` times pointwise factors that do not read ``dy``."""
    if _is_name(node, dy):
        return True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return _linear_in(node.operand, dy, namespace)
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        left, right = _reads(node.left, dy), _reads(node.right, dy)
        if left != right:
            return _linear_in(node.left if left else node.right, dy, namespace)
        return False
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Div):
        return _linear_in(node.left, dy, namespace) and not _reads(node.right, dy)
    if _calls(node, namespace, "where") and len(node.args) == 3 and not node.keywords:
        condition, a, b = node.args
        if _reads(condition, dy):
            return False
        return all(_linear_in(e, dy, namespace) or _is_zero(e) for e in (a, b))
    return False


def _calls(node, namespace, name):
    """Whether ``node`` calls the function ``name`` of srcgrad's helpers or NumPy."""
    if not isinstance(node, gast.Call):
        return False
    func = node.func
    if isinstance(func, gast.Name):
        obj = namespace.lookup(func.id)
    elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
        obj = getattr(namespace.lookup(func.value.id), func.attr, None)
    else:
        return False
    module = getattr(obj, "__module__", None) or ""
    known = module.startswith("srcgrad") or obj is getattr(np, name, None)
    return known and getattr(obj, "__name__", None) == name


def _reads(node, name):
    return any(_is_name(n, name) for n in walk(node))


def _is_zero(node):
    return isinstance(node, gast.Constant) and type(node.value) in (int, float) and not node.value


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)
