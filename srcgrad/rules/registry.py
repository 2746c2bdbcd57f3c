"""The rule registry: what srcgrad knows about functions it does not look into.

A rule says how a function's result changes with its inputs, as Python templates that the
transform inlines into generated code. Templates are strings (in the tables) or function bodies
(``srcgrad.adjoint`` / ``srcgrad.tangent``); both become a :class:`Template`.

Names a template may use (their :class:`Role` in :attr:`Template.names`):
  * the parameter names of the rule's signature (``PARAM``, bound to the call's arguments),
  * ``y`` the primal result (``RESULT``) and ``dy`` its cotangent (``COTANGENT``, reverse mode),
  * ``d<param>`` the tangent of a parameter (``TANGENT``, forward mode),
  * any other name is a global of the rule's namespace (``np``, ``math``, runtime helpers).

A rule's kind has behaviour (``kinds.py``): a forward template that the kind determines (a linear
function applied to the tangent, the product rule of a bilinear one, an elementwise rule's reverse
template with ``dy`` renamed) is derived when it is first needed, not written in the tables.
"""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import math
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

import gast
import numpy as np

from .. import runtime
from ..astutil import ordered_walk
from ..errors import SrcgradError
from .kinds import Kind, spelling, tangent_expr


class Role(enum.Enum):
    """What a name in a template stands for."""

    RESULT = "y"  # the primal result
    COTANGENT = "dy"  # the cotangent of the result (reverse mode)
    PARAM = "param"  # an argument of the call
    TANGENT = "tangent"  # the tangent of an argument (forward mode), None when inactive


class Binding(NamedTuple):
    role: Role
    param: str | None = None  # the parameter, for PARAM and TANGENT


RESULT = Binding(Role.RESULT)
COTANGENT = Binding(Role.COTANGENT)


def param(name):
    return Binding(Role.PARAM, name)


def tangent(name):
    return Binding(Role.TANGENT, name)


@dataclass
class Template:
    """Parsed rule code: statements to run first, then one expression per output."""

    prelude: list
    outputs: dict  # param name -> expression (gast), or "*" -> whole expression
    namespace: object  # lookup(name) for the template's global names
    names: dict = field(default_factory=dict)  # rule-visible name -> Binding
    # where a user's rule was written (frontend.source.Location), for errors at its lines;
    # None for srcgrad's own rules
    location: object = None

    def reads(self, role, outputs=None):
        """The bindings of ``role`` that the prelude and ``outputs`` (default: all) read."""
        wanted = self.outputs if outputs is None else outputs
        nodes = list(self.prelude) + [self.outputs[k] for k in wanted]
        found = set()
        for node in nodes:
            for n in ordered_walk(node):
                if isinstance(n, gast.Name) and n.id in self.names:
                    binding = self.names[n.id]
                    if binding.role is role:
                        found.add(binding)
        return found


@dataclass
class Rule:
    fn: object
    signature: inspect.Signature
    vjp_src: dict = field(default_factory=dict)  # param -> template string
    jvp_src: dict = field(default_factory=dict)
    broadcast: bool = False  # elementwise over broadcast operands: unbroadcast contributions
    nondiff: bool = False  # the output carries no gradient
    vjp_template: Template | None = None
    jvp_template: Template | None = None
    kind: Kind = Kind.GENERAL
    namespace: object = None  # where template globals resolve; None means TEMPLATE_NAMESPACE
    # Parameters the result depends on but whose derivative the rule does not give: param -> why.
    # They count as differentiable, so activity sees the dependence, and an active one is a
    # NoRuleError at transform time (analysis/activity.py), never a silently dropped gradient.
    unsupported: dict = field(default_factory=dict)

    def __post_init__(self):
        self.kind = Kind(self.kind)

    @property
    def name(self):
        return _qualname(self.fn)

    def vjp(self):
        if self.vjp_template is None and not self.vjp_src and self.jvp_template is not None:
            from ..errors import NoRuleError

            raise NoRuleError(
                f"{self.name} has a tangent rule (srcgrad.tangent) but no adjoint; reverse mode "
                f"needs one: register it with @srcgrad.adjoint({getattr(self.fn, '__name__', '')})"
            )
        if self.vjp_template is None:
            self.vjp_template = _string_template(self.vjp_src, self.signature, "dy", self.namespace)
        return self.vjp_template

    def jvp(self):
        if self.jvp_template is None:
            template = _string_template(
                self.jvp_src, self.signature, None, self._tangent_namespace()
            )
            for p in self.differentiable_params():
                if p not in template.outputs and p not in self.unsupported:
                    expr = tangent_expr(self, p, template.namespace)
                    if expr is not None:
                        template.outputs[p] = expr
            self.jvp_template = template
        return self.jvp_template

    def _tangent_namespace(self):
        """The rule's namespace; for a derived call of a function it has no name for (a user's
        function), with the function under its own name."""
        namespace = self.namespace or TEMPLATE_NAMESPACE
        name = getattr(self.fn, "__name__", None)
        if (
            self.kind in LINEAR_KINDS and name and name not in namespace.mapping
            and spelling(self.fn, namespace) is None
        ):
            namespace = DictNamespace({**namespace.mapping, name: self.fn})
        return namespace

    def derived_tangents(self):
        """The parameters whose forward template the rule's kind determines (not written)."""
        if self.kind in (Kind.CUSTOM, Kind.DERIVED):
            return []
        return [p for p in self.jvp().outputs if p != "*" and p not in self.jvp_src]

    def differentiable_params(self):
        if self.nondiff:
            return ()
        if self.vjp_template is not None:
            params = tuple(p for p in self.vjp_template.outputs if p != "*")
        elif self.kind is Kind.CUSTOM and not self.vjp_src and self.jvp_template is not None:
            roles = self.jvp_template.names.values()
            params = tuple(b.param for b in roles if b.role is Role.TANGENT)
        else:
            params = tuple(self.vjp_src)
        return params + tuple(p for p in self.unsupported if p not in params)

    def unsupported_message(self, param):
        """Why an active ``param`` of this rule cannot be differentiated."""
        return (
            f"{self.name} has no derivative rule with respect to its parameter `{param}`: "
            f"{self.unsupported[param]}"
        )


LINEAR_KINDS = (Kind.LINEAR, Kind.BILINEAR, Kind.MULTILINEAR)


class DictNamespace:
    def __init__(self, mapping):
        self.mapping = mapping

    def lookup(self, name):
        from ..frontend.resolve import MISSING

        return self.mapping.get(name, MISSING)


# The namespace string templates are written in.
TEMPLATE_NAMESPACE = DictNamespace(
    {"np": np, "math": math, **{k: v for k, v in vars(runtime).items() if callable(v)}}
)

RULES: dict = {}
# (kind, fn, rule function) of every rule the user registered (rules/custom.py), in order: part
# of the key of every disk cache entry (emit/diskcache.py)
CUSTOM_RULES: list = []


def _key(fn):
    try:
        hash(fn)
    except TypeError:
        return id(fn)
    return fn


# library -> the module of its rules, imported at the first lookup after the user imported the
# library (``rules/__init__.py`` fills it in), so that ``import srcgrad`` never imports SciPy
OPTIONAL_RULES: dict = {}


def load_optional_rules(installed=False):
    """Register the rules of every optional library the user has imported by now; with
    ``installed``, of every one that is installed (importing it: for tests that read every rule).
    """
    wanted = [name for name in OPTIONAL_RULES if installed or name in sys.modules]
    for library in wanted:
        module = OPTIONAL_RULES.pop(library)
        try:
            importlib.import_module(module)
        except ImportError:  # a version without some function the rules name: no rules, as if
            pass  # the library were not installed (a call is then a NoRuleError, never a guess)


def lookup(fn: object, load: bool = True) -> Rule | None:
    """The rule of ``fn`` (None if it has none); where none is registered and ``fn`` may be an
    optional library's object, after registering the rules of the optional libraries imported
    by now (unless ``load`` is false)."""
    try:
        rule = RULES.get(_key(fn))
    except TypeError:
        return None
    if rule is None and OPTIONAL_RULES and load and _maybe_optional(fn, OPTIONAL_RULES):
        load_optional_rules()  # an optional library's rules add keys of its own objects only
        rule = RULES.get(_key(fn))
    return rule


def _maybe_optional(fn: object, libraries: dict) -> bool:
    """Whether ``fn`` may be an object an optional library's rules are for: one of the
    library's (or srcgrad's helper named after it), or one that does not say its module (a
    ufunc). Importing SciPy's rules takes seconds; a user's function or a builtin never needs
    them (``import numba`` imports ``scipy``, and a miss for every inlined user function would
    load them)."""
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        return True
    return any(module.split(".")[0] == library or library in module
               for library in libraries)


@functools.lru_cache(maxsize=None)  # 558 rules share 220 parameter lists (Signature is immutable)
def _signature(spec):
    scope: dict = {}
    exec(f"def _rule_signature({spec}): pass", {"np": np, "math": math}, scope)
    return inspect.signature(scope["_rule_signature"])


def _as_dict(templates, params):
    if templates is None:
        return {}
    if isinstance(templates, str):
        return {params[0]: templates}
    if isinstance(templates, dict):
        return dict(templates)
    return {p: t for p, t in zip(params, templates) if t is not None}


def defrule(
    fn, signature, *, vjp=None, jvp=None, broadcast=False, kind=Kind.GENERAL, namespace=None,
    unsupported=None,
):
    """Register the derivative of ``fn``.

    ``signature`` is the parameter list as a string (``"x1, x2"``); ``vjp`` and ``jvp`` give one
    template per differentiable parameter: a string for the first parameter, a tuple aligned with
    the parameters (``None`` where there is no gradient), or a dict keyed by parameter name.
    ``namespace`` (a dict) adds names the templates may use beyond ``np``, ``math`` and the
    runtime helpers. ``unsupported`` (a dict param -> reason) names parameters the result depends
    on but that have no template: differentiating through one of them is a ``NoRuleError``.
    """
    sig = _signature(signature)
    params = list(sig.parameters)
    unsupported = dict(unsupported or {})
    unknown = [p for p in unsupported if p not in params]
    if unknown:
        raise SrcgradError(f"unsupported names {unknown} that are not parameters of {signature!r}")
    rule = Rule(
        fn,
        sig,
        vjp_src=_as_dict(vjp, params),
        jvp_src=_as_dict(jvp, params),
        broadcast=broadcast,
        kind=kind,
        namespace=None if namespace is None else DictNamespace(
            {**TEMPLATE_NAMESPACE.mapping, **namespace}
        ),
        unsupported=unsupported,
    )
    RULES[_key(fn)] = rule
    return rule


def elementwise(fn, signature, *, vjp, jvp=None, namespace=None):
    """A ufunc-like rule: contributions are summed back to each operand's broadcast shape.

    Without ``jvp``, a parameter's tangent is its ``vjp`` template with ``dy`` renamed.
    """
    return defrule(
        fn, signature, vjp=vjp, jvp=jvp, broadcast=True, kind=Kind.ELEMENTWISE,
        namespace=namespace,
    )


def linear(fn, signature, *, vjp, jvp=None, namespace=None, unsupported=None):
    """A rule for a function linear in its differentiable arguments.

    Without ``jvp``, the tangent of a function linear in one argument is the function applied to
    that argument's tangent.
    """
    return defrule(
        fn, signature, vjp=vjp, jvp=jvp, kind=Kind.LINEAR, namespace=namespace,
        unsupported=unsupported,
    )


def bilinear(fn, signature, *, vjp, jvp=None, broadcast=False, namespace=None, unsupported=None):
    """A rule for a function linear in each differentiable argument separately (a product).

    ``vjp`` gives the transposes, one per argument; without ``jvp``, the tangent is the product
    rule: the sum over active arguments of the function with that argument replaced by its
    tangent. ``broadcast`` as for :func:`elementwise` (``np.multiply``).
    """
    return defrule(
        fn, signature, vjp=vjp, jvp=jvp, broadcast=broadcast, kind=Kind.BILINEAR,
        namespace=namespace, unsupported=unsupported,
    )


def transposes(left, right, product, *, extra=""):
    """The rules of the two transposes of a bilinear product, from the product alone.

    ``left(g, a, b)`` is the adjoint of ``A -> product(A, b)`` applied to ``g`` and ``right(g, a,
    b)`` that of ``B -> product(a, B)`` (``a``, resp. ``b``, gives only a shape). Each is bilinear
    in ``g`` and its partner; its transposes are the product itself and the other transpose:
    ``<left(g, a, b), W> = <g, product(W, b)> = <right(g, W, b), b>``. ``product`` formats the
    product of two operands (``"{} @ {}"``); ``extra`` are keyword parameters passed along
    (``", axes=2"``).
    """
    names = [e.split("=")[0].strip() for e in extra.split(",") if e.strip()]
    kw = "".join(f", {n}={n}" for n in names)
    lname, rname = left.__name__, right.__name__
    bilinear(left, "g, a, b" + extra, vjp={
        "g": product.format("dy", "b"), "b": f"{rname}(g, dy, b{kw})",
    })
    bilinear(right, "g, a, b" + extra, vjp={
        "g": product.format("a", "dy"), "a": f"{lname}(g, a, dy{kw})",
    })


def nondiff(*fns, signature="*args, **kwargs"):
    """Functions whose output carries no gradient (argmax-like, shapes, comparisons)."""
    for fn in fns:
        RULES[_key(fn)] = Rule(fn, _signature(signature), nondiff=True, kind=Kind.NONDIFF)


def _parse_expr(text):
    return gast.parse(text.strip()).body[0].value


def _string_template(sources, signature, cotangent, namespace=None):
    outputs = {p: _parse_expr(src) for p, src in sources.items()}
    names = {p: param(p) for p in signature.parameters}
    # a parameter called like the result or its cotangent is read as `y_` / `dy_`
    names.update({p + "_": param(p) for p in ("y", "dy") if p in signature.parameters})
    names["y"] = RESULT
    if cotangent is not None:
        names[cotangent] = COTANGENT
    else:
        names.update({tangent_name(p, signature): tangent(p) for p in signature.parameters})
    return Template([], outputs, namespace or TEMPLATE_NAMESPACE, names)


def tangent_name(param, signature):
    """The template name of ``param``'s tangent: ``d<param>``, or ``d_<param>`` where that is the
    name of another parameter (``np.trapezoid(y, x, dx)``: ``dx`` is the spacing, ``d_x`` the
    tangent of ``x``)."""
    name = "d" + param
    return "d_" + param if name in signature.parameters else name


def _qualname(fn):
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if module in ("numpy", "math", "builtins", "_operator", "operator"):
        short = {"numpy": "np", "_operator": "operator"}.get(module, module)
        return f"{short}.{name}" if module != "builtins" else name
    if isinstance(fn, np.ufunc):
        return f"np.{fn.__name__}"
    return f"{module}.{name}" if module else name
