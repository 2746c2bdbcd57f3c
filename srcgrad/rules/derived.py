"""Rules for functions srcgrad generated, so a derived function can be called inside a body that
is differentiated again (``def h(x): return grad(g)(x) * x``).

A generated function needs no inlining: its derivatives are generated functions too. The rule for
a call ``D(a, b)`` says that the cotangent of ``a`` is ``vjp(D, wrt="a")(a, b, dy)`` and its tangent
contribution is the forward-mode tangent of ``D`` along ``da``. Those functions are generated
lazily, the first time a template asks for them, and the generated code calls them by name
(``dg_vjp_x``), so ``source()`` shows exactly what runs. The callee's primal is recomputed inside
its vjp: the price of not inlining, paid only where a derived function is itself differentiated.

Template names are private aliases (``_a0``, ``_dy``), not the callee's parameter names, because a
parameter may well be called ``y`` or ``dy``.
"""

from __future__ import annotations

import inspect

import gast

from .. import transforms
from ..frontend.resolve import MISSING
from ..frontend.source import GENERATED_SOURCE
from .kinds import Kind
from .registry import COTANGENT, RESULT, Rule, Template, param, tangent

_RULES: dict = {}


def derived_rule(fn):
    """The rule of a function srcgrad generated, or None for any other function."""
    code = getattr(fn, "__code__", None)
    if code is None or code not in GENERATED_SOURCE:
        return None
    if fn not in _RULES:
        _RULES[fn] = _build(fn)
    return _RULES[fn]


def recursive_rule(fn):
    """The rule of a user function called recursively, which cannot be inlined into itself.

    Like a generated function, it is differentiated through its own generated vjp and tangent;
    those are generated at the first call (the function's own transform is still being built
    when the rule is made).
    """
    if not inspect.isfunction(fn) or getattr(fn, "__code__", None) is None:
        return None
    key = ("recursive", fn)
    if key not in _RULES:
        _RULES[key] = _build(fn, lazy=True)
    return _RULES[key]


class _Lazy:
    """A derivative generated on its first call."""

    def __init__(self, fn, mode, wrt):
        self.fn, self.mode, self.wrt = fn, mode, wrt
        self.__name__ = f"{fn.__name__}_{mode}_{wrt}"
        self.made = None

    def __call__(self, *args, **kwargs):
        return self.generated()(*args, **kwargs)

    def generated(self):
        """The generated function, made now if it was not yet."""
        if self.made is None:
            self.made = transforms.derived(self.fn, self.mode, self.wrt)
        return self.made


class _Derivatives:
    """Template namespace: ``<name>_vjp_<param>`` and ``<name>_tangent_<param>``, generated when
    first looked up."""

    def __init__(self, fn, lazy=False):
        self.fn = fn
        self.lazy = lazy
        self.made = {}

    def lookup(self, name):
        if name not in self.made:
            base = self.fn.__name__
            for mode in ("vjp", "tangent"):
                prefix = f"{base}_{mode}_"
                if name.startswith(prefix):
                    wrt = name[len(prefix):]
                    if self.lazy:
                        self.made[name] = _Lazy(self.fn, mode, wrt)
                    else:
                        self.made[name] = transforms.derived(self.fn, mode, wrt)
                    break
            else:
                return MISSING
        return self.made[name]


def _build(fn, lazy=False):
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    aliases = {p.name: f"_a{i}" for i, p in enumerate(params)}
    roles = {aliases[p.name]: param(p.name) for p in params}

    def call(callee, last):
        args = [_name(aliases[p.name]) for p in params if p.kind != p.KEYWORD_ONLY]
        keywords = [
            gast.keyword(p.name, _name(aliases[p.name])) for p in params if p.kind == p.KEYWORD_ONLY
        ]
        return gast.Call(_name(callee), args + [_name(last)], keywords)

    namespace = _Derivatives(fn, lazy)
    base = fn.__name__
    vjp_outputs = {p.name: call(f"{base}_vjp_{p.name}", "_dy") for p in params}
    vjp = Template([], vjp_outputs, namespace, {**roles, "_y": RESULT, "_dy": COTANGENT})
    jvp_outputs = {p.name: call(f"{base}_tangent_{p.name}", f"_t{i}") for i, p in enumerate(params)}
    tangent_roles = {f"_t{i}": tangent(p.name) for i, p in enumerate(params)}
    jvp = Template([], jvp_outputs, namespace, {**roles, "_y": RESULT, **tangent_roles})
    return Rule(fn, signature, vjp_template=vjp, jvp_template=jvp, kind=Kind.DERIVED,
                namespace=namespace)


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)
