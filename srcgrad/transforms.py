"""The registry of srcgrad's transforms, for the modules below ``api`` that run them.

Some rules and passes differentiate while srcgrad runs: a generated or recursive function is
differentiated through its own generated vjp and tangent (``rules/derived.py``), an ODE's
right-hand side through its generated vjp or jvp (``rules/scipy_runtime.py``), ``grad(g)`` inside
a differentiated body is evaluated at transform time (``analysis/ops.py``), and registering a
rule forgets the derivatives generated before it (``rules/custom.py``). They find the transforms
here: ``api`` registers them when it is imported (importing any part of srcgrad imports it), so
no module below ``api`` imports it.

    transforms.derived(fn, "vjp", "x")   # the generated vjp of fn with respect to x (cached)
    transforms.get("jvp")(func, wrt=0)   # srcgrad.jvp
    transforms.is_transform(obj)         # whether obj is one of srcgrad's transforms
    transforms.forget()                  # drop every cached derivative
    transforms.refreshed(fn)             # fn regenerated after a helper it inlined was redefined
"""

from __future__ import annotations

from typing import Any

from .context import Options

_TRANSFORMS: dict = {}  # public name -> transform (grad, vjp, ...)
_HOOKS: dict = {}  # "derived" and "forget", the api's cache of generated functions


def register(derived: Any, forget: Any, refreshed: Any, **transforms: Any) -> None:
    """Called once by ``api``: ``derived(fn, mode, wrt, options)`` returns the cached generated
    function, ``forget()`` empties that cache, ``refreshed(fn)`` regenerates a derivative whose
    inlined functions were redefined, ``transforms`` are the public transforms."""
    _HOOKS.update(derived=derived, forget=forget, refreshed=refreshed)
    _TRANSFORMS.update(transforms)


def derived(fn, mode, wrt, options=None):
    """The generated ``mode`` derivative of ``fn`` with respect to ``wrt`` (cached)."""
    return _HOOKS["derived"](fn, mode, wrt, options or Options())


def forget():
    """Drop every cached derivative, so the next transform generates it anew."""
    _HOOKS["forget"]()


def refreshed(fn):
    """The derivative to call instead of the generated ``fn``, whose staleness guard found a
    function it inlined redefined: generated anew from the current definitions (cached)."""
    return _HOOKS["refreshed"](fn)


def get(name):
    """The public transform called ``name`` (``"grad"``, ``"vjp"``, ``"jvp"``, ...)."""
    return _TRANSFORMS[name]


def is_transform(obj):
    """Whether ``obj`` is one of srcgrad's public transforms (``grad``, ``hvp``, ...)."""
    return any(obj is t for t in _TRANSFORMS.values())
