"""Parameter defaults as the values ``def`` computed, not as their source text.

Python evaluates a default once, when the ``def`` or ``lambda`` runs. Re-evaluating its text in
generated code gives another value whenever the names it reads have changed since, as in the
common ``for c in cs: fs.append(lambda x, c=c: c * x)``, where every lambda's text says ``c=c``.
So a default whose text is not plainly its value (a literal equal to it, or a global that is
still that very object) is bound in generated code to the function's own default object:

    lambda x, c=c: c * x       # c was 1.0 when the lambda was made, is 3.0 now
    def dlambda(x, c=c_default):  # c_default is the object in __defaults__ (1.0)

An inlined helper's defaults are bound the same way (its default text would otherwise be read in
the caller's namespace, at call time).
"""

from __future__ import annotations

import gast

from ..emit.naming import DEFAULT


def bind_default_values(node, ctx, fn, namespace=None):
    """Replace default expressions of ``node`` (the parsed ``fn``) that may not evaluate to
    ``fn``'s actual defaults by names bound to those values. A global name is kept where
    ``namespace`` (the one generated code reads it in) still holds that very value."""
    args = node.args
    values = getattr(fn, "__defaults__", None) or ()
    if len(values) == len(args.defaults):
        params = (list(getattr(args, "posonlyargs", [])) + list(args.args))[-len(values):] \
            if values else []
        args.defaults = [
            _bound(expr, value, param.id, ctx, namespace)
            for expr, value, param in zip(args.defaults, values, params)
        ]
    kw_values = getattr(fn, "__kwdefaults__", None) or {}
    args.kw_defaults = [
        expr if expr is None or param.id not in kw_values
        else _bound(expr, kw_values[param.id], param.id, ctx, namespace)
        for expr, param in zip(args.kw_defaults, args.kwonlyargs)
    ]
    return node


def _bound(expr, value, param, ctx, namespace):
    if _is_plainly(expr, value, namespace):
        return expr
    name = ctx.global_name(value, DEFAULT.format(param))
    return gast.Name(name, gast.Load(), None, None)


def _is_plainly(expr, value, namespace):
    if isinstance(expr, gast.Constant):
        return _same_literal(expr.value, value)
    if (
        isinstance(expr, gast.UnaryOp)
        and isinstance(expr.op, gast.USub)
        and isinstance(expr.operand, gast.Constant)
        and isinstance(expr.operand.value, (int, float, complex))
        and not isinstance(expr.operand.value, bool)
    ):
        return _same_literal(-expr.operand.value, value)
    if isinstance(expr, gast.Name) and namespace is not None:
        return namespace.lookup(expr.id) is value
    return False


def _same_literal(literal, value):
    if literal is None or isinstance(literal, bool):
        return literal is value
    return type(literal) is type(value) and literal == value


def default_values_bound(node, fn, namer):
    """``bind_default_values`` for code compiled outside a pipeline (``checkpoint=``'s rewrite
    of ``fn``, whose default text may read a name of the scope ``fn`` was made in): every
    default bound to its value; the names bound, for the compile's extras."""
    extras = {}

    class Names:
        def global_name(self, value, preferred):
            name = namer.fresh(preferred)
            extras[name] = value
            return name

    bind_default_values(node, Names(), fn)
    return extras
