"""Classify the operation on the right-hand side of an A-normal-form statement.

Requires: a statement value in A-normal form. Guarantees: an :class:`Op` that names the rule
differentiating it and binds the rule's parameters to the statement's atoms, so that activity
analysis and the transforms see one and the same view of every operation. Calls that cannot be
differentiated are classified, not rejected: the caller decides, since a call on inactive values
needs no rule at all.

    y = np.sum(a, axis=1)     ->   Op("rule", rule=<np.sum>, args={a: a, axis: 1, dtype: None, ...})
    y = x.T                   ->   Op("rule", rule=<np.transpose>, args={a: x, axes: None})
    n = x.shape               ->   Op("constant")
"""

from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import rules, runtime, transforms
from ..astutil import index_value
from ..derived import plain, unwrap
from ..errors import ClassesNeeded, NoRuleError, UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from ..rules import random_draws
from ..rules.derived import (
    derived_rule,
    lazy_rule,
    pair_rule,
    recursive_rule,
    refuse_writes_into_arguments,
    split_rule,
    step_rule,
)
from ..rules.structures import structure_rule
from . import casts

BINOPS = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.Pow: operator.pow,
    gast.MatMult: operator.matmul,
    gast.BitAnd: operator.and_,
    gast.BitOr: operator.or_,
    gast.BitXor: operator.xor,
}
UNARYOPS = {
    gast.USub: operator.neg,
    gast.UAdd: operator.pos,
    gast.Not: operator.not_,
    gast.Invert: operator.invert,
}
# Array methods and the NumPy function each one is (self becomes the first argument).
METHODS = {
    "sum": np.sum,
    "mean": np.mean,
    "dot": np.dot,
    "transpose": np.transpose,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "var": np.var,
    "std": np.std,
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "trace": np.trace,
    "reshape": np.ndarray.reshape,
    "view": np.ndarray.view,
    "ravel": np.ravel,
    "flatten": np.ravel,
    "squeeze": np.squeeze,
    "swapaxes": np.swapaxes,
    "diagonal": np.diagonal,
    "repeat": np.repeat,
    "take": np.take,
    "clip": np.clip,
    "astype": runtime.astype,
    "copy": np.copy,
    "conj": np.conj,
    "conjugate": np.conj,
    "round": np.round,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "argsort": np.argsort,
    "nonzero": np.nonzero,
    "all": np.all,
    "any": np.any,
    "item": runtime.item,
}
# Libraries whose functions need rules: never inlined nor differentiated through their source.
# (warnings, logging and contextlib work on state, not values: called as they are, with values
# that carry no gradient)
OPAQUE_MODULES = (
    "numpy", "scipy", "srcgrad", "math", "builtins", "warnings", "logging", "contextlib",
)
# Keywords a method spells differently from its function: x.clip(min=0) is np.clip(x, a_min=0).
METHOD_KEYWORDS = {("clip", "min"): "a_min", ("clip", "max"): "a_max"}
INACTIVE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}
CLASS_ADVICE = (
    "The class is known for `self` of a transformed method (grad(model.loss)), a parameter, "
    "field or variable annotated with it (`model: MLP`, `layers: list[Dense]`, "
    "`lay: Dense = P.layers[0]`), a global object, and an object built in the function"
)


def _refused(error, func):
    """``error``, or where the object called was read out of a parameter (``func.classes_of``,
    noted by normalize/methods.py) a ``ClassesNeeded`` with its message: the transform then
    generates the derivative when called, knowing the classes of the objects passed."""
    param = getattr(func, "classes_of", None)
    if param is not None:
        return ClassesNeeded(param, error)
    passed = getattr(func, "passed_in", None)
    if passed is None:
        return error
    return type(error)(
        f"{error.message}. Here the objects the call passes in `{passed}` do not tell it "
        f"either (a list or tuple of objects of several classes, iterated, or a variable given "
        f"objects of two classes): read each item by its index (`P.ps[0].affine(h)`, "
        f"`P.ps[1].affine(h)`), or keep one list per class", filename=error.filename,
        lineno=error.lineno, offset=error.offset, line=error.line)


def _key_advice(fn):
    """What to write instead of ``max``/``min`` with ``key=`` or ``default=``."""
    if fn is not max and fn is not min:
        return ""
    return ("; for `key=` take `np.argmax` / `np.argmin` of the keys, then index "
            "(`xs[int(np.argmax([abs(v) for v in xs]))]`); for `default=` test the length "
            "with `if`")


@dataclass
class Op:
    """What a statement's value computes.

    kind is one of: "copy" (``a = b``), "rule" (a call or operator with a rule), "constant"
    (no operand can carry gradient), "unknown" (a call with neither rule nor source).
    """

    kind: str
    rule: object = None
    args: dict = field(default_factory=dict)  # rule parameter -> atom expression
    func: object = None  # the resolved callee, for "unknown"
    node: object = None
    refused: str = None  # why the rule cannot differentiate this call, if it is active

    def operands(self):
        """Atoms that can carry gradient into the result."""
        if self.kind == "copy":
            return [self.args["x"]]
        if self.kind == "rule":
            params = self.rule.differentiable_params()
            return [a for p in params if p in self.args for a in _atoms(self.args[p])]
        if self.kind in ("unknown", "tuple", "dict"):
            return list(self.args.values())
        return []


def _known_rule(fn):
    """A registered rule, or that of a function srcgrad generated or of a structure."""
    return (rules.lookup(fn) or derived_rule(fn) or split_rule(fn) or lazy_rule(fn)
            or pair_rule(fn) or step_rule(fn) or structure_rule(fn))


def _generated(fn):
    """Whether ``fn`` is a function srcgrad generated (a derivative)."""
    return derived_rule(fn) is not None


def _rebindable(namespace, func, fn):
    """Whether the callee ``func`` is a variable of the user's module or closure (not a builtin,
    not one srcgrad bound), or an attribute of an object one holds (``cfg.act``; not of a
    module: ``np.sin``), holding ``fn``, which a later assignment may rebind."""
    if (getattr(fn, "__module__", None) or "").split(".")[0] == "srcgrad":
        return False  # srcgrad's own (`checkpointed_loop`, in the closure of a rewritten loop)
    root = func
    while isinstance(root, gast.Attribute):
        root = root.value
    if fn is MISSING or not isinstance(root, gast.Name) or root.id in namespace.extras or not (
            root.id in namespace.cells or root.id in namespace.globals):
        return False
    # (a bound method, `rng.normal`, is a new object at each read: no identity to watch; the
    # guard compares what the variable holds, not the function `plain` unwraps from it)
    held = _held(namespace, func)
    return held is _held(namespace, func) and plain(held) is fn and (
        root is func or not inspect.ismodule(_held(namespace, root)))


def _held(namespace, expr):
    """What the variable ``expr`` holds itself (the ``Derived`` or specialized derivative the
    guard compares with what it holds at call time; ``resolve`` gives the function inside)."""
    if isinstance(expr, gast.Attribute):
        return getattr(_held(namespace, expr.value), expr.attr, None)
    cell = namespace.cells.get(expr.id)
    if cell is not None:
        return cell.cell_contents
    return namespace.globals.get(expr.id)


def derived_callee(node, namespace, locals_, dependencies=None):
    """``grad(g, wrt=1)`` called in place: the function it derives, generated now.

    Only srcgrad's own transforms are evaluated at transform time, and only on static values.
    The functions it derives, read from a global or closure variable, are appended to
    ``dependencies`` (``ctx.dependencies``): the staleness guard (emit/guard.py) regenerates
    the caller's derivative when such a variable is rebound, as for a function it inlined.
    """
    transform = namespace.resolve(node.func, locals_)
    if not transforms.is_transform(transform):
        return MISSING
    given = list(node.args) + [k.value for k in node.keywords]
    values = [_static_value(a, namespace, locals_) for a in given]
    if any(v is MISSING for v in values):
        return MISSING
    if dependencies is not None:
        dependencies.extend((namespace, a, v) for a, v in zip(given, values)
                            if callable(v) and isinstance(a, (gast.Name, gast.Attribute)))
    args, kwargs = values[:len(node.args)], dict(zip([k.arg for k in node.keywords],
                                                     values[len(node.args):]))
    fn = unwrap(transform(*args, **kwargs))
    # (a derivative choosing per call whether to rebuild registered objects, rebuilding.py:
    # the one it runs otherwise, whose code is generated)
    return getattr(fn, "plain", fn) if type(fn).__name__ == "Rebuilding" else fn


def _static_value(node, namespace, locals_):
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple):
        values = tuple(_static_value(e, namespace, locals_) for e in node.elts)
        return MISSING if any(v is MISSING for v in values) else values
    return namespace.resolve(node, locals_)


def _bound_args(rule, bound):
    """Rule parameter -> the call's atom (a ``*args`` one packs a Tuple, a ``**kwargs`` one a
    Dict); a parameter not given, its default."""
    out = {}
    for name, param in rule.signature.parameters.items():
        if name in bound.arguments and param.kind == param.VAR_POSITIONAL:
            out[name] = gast.Tuple(list(bound.arguments[name]), gast.Load())
        elif name in bound.arguments and param.kind == param.VAR_KEYWORD:
            keys = [gast.Constant(k, None) for k in bound.arguments[name]]
            out[name] = gast.Dict(keys, list(bound.arguments[name].values()))
        elif name in bound.arguments:
            out[name] = bound.arguments[name]
        elif param.default is not inspect.Parameter.empty:
            out[name] = gast.Constant(param.default, None)
    return out


def _atoms(arg):
    """The atoms of a rule's argument: those a ``*args`` / ``**kwargs`` parameter packs."""
    if isinstance(arg, gast.Tuple):
        return list(arg.elts)
    if isinstance(arg, gast.Dict):
        return list(arg.values)
    return [arg]


class OpClassifier:
    def __init__(self, namespace, local_names, location, dependencies=None, slice_name="slice"):
        self.namespace = namespace
        self.locals = local_names
        self.location = location
        self.dependencies = dependencies  # ctx.dependencies (derived_callee)
        # the name an index's slice is called by (ctx.global_name: the user's module may bind
        # `slice` to its own function)
        self.slice_name = slice_name

    def classify(self, value):
        if isinstance(value, gast.Name):
            if value.id in self.locals:
                return Op("copy", args={"x": value}, node=value)
            return Op("constant", node=value)
        if isinstance(value, gast.Constant):
            return Op("constant", node=value)
        if isinstance(value, gast.JoinedStr) or _formats_a_string(value):
            return Op("constant", node=value)  # text carries no gradient
        if isinstance(value, gast.BinOp):
            return self._rule_op(BINOPS[type(value.op)], [value.left, value.right], [], value)
        if isinstance(value, gast.UnaryOp):
            return self._rule_op(UNARYOPS[type(value.op)], [value.operand], [], value)
        if isinstance(value, (gast.Compare, gast.BoolOp)):
            return Op("constant", node=value)
        if isinstance(value, gast.Attribute):
            return self._attribute(value)
        if isinstance(value, gast.Subscript):
            index = index_value(value.slice, self.slice_name)
            return self._rule_op(operator.getitem, [value.value, index], [], value)
        if isinstance(value, gast.Call):
            return self._call(value)
        if isinstance(value, gast.Dict):
            return Op("dict", args={str(i): v for i, v in enumerate(value.values)}, node=value)
        if isinstance(value, (gast.Tuple, gast.List)):
            return Op("tuple", args={str(i): e for i, e in enumerate(value.elts)}, node=value)
        raise self.location.error(
            UnsupportedSyntaxError, value, f"srcgrad does not support {type(value).__name__} here"
        )

    def _attribute(self, node):
        if not self._is_local(node.value):
            return Op("constant", node=node)
        if node.attr == "T":
            return self._rule_op(np.transpose, [node.value], [], node)
        if node.attr in ("real", "imag"):  # z.real, z.imag of an array or number
            return self._rule_op(getattr(np, node.attr), [node.value], [], node)
        if node.attr in INACTIVE_ATTRIBUTES:
            return Op("constant", node=node)
        # an attribute of a structure (runtime/pytrees.py), differentiated like `d["name"]`
        return self._rule_op(getattr, [node.value, gast.Constant(node.attr, None)], [], node)

    def _is_local(self, node):
        return isinstance(node, gast.Name) and node.id in self.locals

    def _call(self, node):
        func = node.func
        args = list(node.args)
        if isinstance(func, gast.Attribute) and self._is_local(func.value):
            fn = METHODS.get(func.attr)
            if fn is None and func.attr in random_draws.METHODS:
                return self._draw(node, func.value.id, func.attr, [func.value])
            if fn is None:
                raise _refused(self.location.error(
                    UnsupportedSyntaxError, func, f"srcgrad does not support the method "
                    f"`.{func.attr}()` here: it knows the array methods, and inlines the methods "
                    f"of objects whose class it knows at transform time. {CLASS_ADVICE}. A "
                    f"function an object's field holds (`cfg.act = np.tanh`) is called from a "
                    f"dict or tuple of functions (`cfg = {{'act': np.tanh}}`, `cfg['act'](x)`) "
                    f"or given as an argument of its own"
                ), func)
            if func.attr in ("reshape", "transpose") and len(args) > 1:
                args = [gast.Tuple(args, gast.Load())]  # x.reshape(2, 3) is x.reshape((2, 3))
            keywords = [
                gast.keyword(METHOD_KEYWORDS.get((func.attr, k.arg), k.arg), k.value)
                for k in node.keywords
            ]
            return self._rule_op(fn, [func.value] + args, keywords, node)
        else:
            fn = self.namespace.resolve(func, self.locals)
            if fn is MISSING and isinstance(func, gast.Call):
                fn = derived_callee(func, self.namespace, self.locals, self.dependencies)
            else:
                self._note_held(func, fn)
            if fn is MISSING and self._is_local(func):
                raise _refused(self.location.error(
                    NoRuleError, func, f"cannot resolve `{dotted(func)}` at transform time: a "
                    f"called variable must hold an object whose class srcgrad knows (its "
                    f"`__call__` is inlined), or a function given as a static argument. "
                    f"{CLASS_ADVICE}"
                ), func)
            if fn is MISSING:
                raise self.location.error(
                    NoRuleError, func, f"cannot resolve `{dotted(func)}` at transform time: "
                    f"the callee must be a global, a closure variable or a builtin"
                )
            if random_draws.is_draw(fn) and rules.lookup(fn) is None:
                owner = dotted(func.value) if isinstance(func, gast.Attribute) else "rng"
                return self._draw(node, owner, fn.__name__, [])
        return self._rule_op(fn, args, node.keywords, node)

    def _note_held(self, func, fn):
        """A callee read from a variable the guard (emit/guard.py) must watch."""
        if self.dependencies is None or not isinstance(func, (gast.Name, gast.Attribute)):
            return
        if _generated(fn):
            # a derivative held in a variable (`H = grad(f)`, then `H(x)`): its rule is that
            # of the function it holds now; the guard regenerates the caller's derivative when
            # the variable is rebound, as for an inlined helper
            self.dependencies.append((self.namespace, func, _held(self.namespace, func)))
        elif not self._is_local(func) and _rebindable(self.namespace, func, fn):
            # a function with a rule held in a global or closure variable of the user's
            # (`act = np.tanh`, then `act(x)`): the derivative applies that rule, and its
            # guard regenerates it when the variable is rebound (`act = np.sin`)
            self.dependencies.append((self.namespace, func, _held(self.namespace, func)))

    def _draw(self, node, owner, method, receiver):
        """A random draw (``rules/random_draws.py``): its values carry no gradient, and an
        operand that carries gradient is refused with the spelling that differentiates."""
        operands = receiver + list(node.args) + [k.value for k in node.keywords]
        if method == "shuffle" and node.args:
            # refused whatever it shuffles: an array without gradient (an index) read before
            # the shuffle and after it is two values, which the derivative would read as one
            raise self.location.error(
                UnsupportedSyntaxError, node,
                random_draws.shuffle_refusal(owner, dotted(node.args[0])),
            )
        else:
            refused = random_draws.refusal(owner, method)
        return Op("unknown", args={str(i): a for i, a in enumerate(operands)}, node=node,
                  refused=refused)

    @staticmethod
    def _recursive(fn):
        """A call the inliner left in place is recursive: it goes through the callee's vjp."""
        module = (getattr(fn, "__module__", "") or "").split(".")[0]
        if module in OPAQUE_MODULES:
            return None
        rule = recursive_rule(fn)
        if rule is not None:
            refuse_writes_into_arguments(fn)
        return rule

    def _rule_op(self, fn, args, keywords, node):
        rule = _known_rule(fn) or self._recursive(fn)
        if rule is None:
            bound = {str(i): a for i, a in enumerate(args)}
            bound.update({k.arg: k.value for k in keywords})
            return Op("unknown", func=fn, args=bound, node=node)
        kwargs = {k.arg: k.value for k in keywords}
        try:
            bound = rule.signature.bind(*args, **kwargs)
        except TypeError as exc:
            advice = _key_advice(rule.fn) if kwargs else ""
            raise self.location.error(
                UnsupportedSyntaxError, node, f"the call to {rule.name} does not match the "
                f"signature srcgrad knows for it ({rule.signature}): {exc}{advice}"
            ) from None
        if rule.nondiff:
            return Op("constant", rule=rule, node=node)
        cast = casts.static_dtype(bound.arguments.get("dtype"), self.namespace, self.locals)
        if cast == casts.DISCRETE:
            return Op("constant", rule=rule, node=node)  # x.astype(int): no gradient
        out = bound.arguments.get("out")
        if out is not None and not (isinstance(out, gast.Constant) and out.value is None):
            raise self.location.error(
                UnsupportedSyntaxError, out, f"`out=` in a call to {rule.name}: srcgrad needs "
                f"every result as a new value; write `y = {rule.name}(...)` instead"
            )
        bound_args = _bound_args(rule, bound)
        refused = None
        if cast == casts.DYNAMIC and not any(rule.fn is f for f in casts.run_time_casts()):
            refused = (
                f"{rule.name} with a dtype held in a variable: srcgrad cannot tell at transform "
                f"time whether it is an integer type (no gradient) or a floating one; write the "
                f"dtype itself, or cast with `.astype(...)`"
            )
        return Op("rule", rule=rule, args=bound_args, node=node, refused=refused)


def _formats_a_string(value):
    """``"%.3f" % y`` and ``"{:.3f}".format(y)``: a string made from values."""
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mod):
        return isinstance(value.left, gast.Constant) and isinstance(value.left.value, str)
    func = getattr(value, "func", None)
    return (
        isinstance(value, gast.Call) and isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Constant) and isinstance(func.value.value, str)
    )


def dotted(node):
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return type(node).__name__
