"""What a transform reads: the Python function behind a callable, ``wrt`` as parameter names,
and the key a derivative is cached under.

Requires: a callable (a function, a bound method, a partial, a callable object, a function known
only by its rule). Guarantees: ``target(f)`` is a Python function of ``f``'s parameters whose
source the pipeline can read; ``wrt_names`` and ``cache_key`` are pure functions of ``f`` and
``wrt``; ``current(fn)`` says whether a generated derivative still inlines the functions its names
denote.

    wrt_names(loss, ("W", 1))        ->  ("W", "b")
    target(functools.partial(f, 2))  ->  a generated ``def f(x): return fn(x)``
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Union

from . import rules
from .context import Options
from .emit.compile import compile_function
from .errors import SrcgradError
from .frontend.source import GENERATED_SOURCE
from .normalize.methods import bound_instance, bound_key
from .specialize import Specializing, shim

Fn = Callable[..., Any]
Selector = Union[int, str]
#: ``wrt``: a parameter by position or name, or a tuple (or list) of them
Wrt = Union[Selector, "tuple[Selector, ...]", "list[Selector]"]


def target(f: Fn) -> Fn:
    """The Python function a transform of ``f`` reads: ``f`` itself, or for a callable that is
    not a plain function (a partial, a ``functools.wraps`` wrapper, an ``lru_cache``d function,
    a callable object) a generated function of ``f``'s parameters calling it; for a function
    with a rule only, a function calling it."""
    if isinstance(f, Specializing):
        base: Fn = f.base
        return base
    if inspect.isfunction(f) and (
        not hasattr(f, "__wrapped__") or f.__code__ in GENERATED_SOURCE
    ):
        return f
    if rules.lookup(f) is not None or not callable(f):
        return rule_wrapper(f)
    if getattr(f, "__code__", None) is not None and not inspect.isfunction(f):
        return f  # a bound method: its function, `self` its first parameter
    return shim(f, Host) or rule_wrapper(f)


def current(fn: Fn, seen: set[int] | None = None) -> bool:
    """Whether every function inlined into ``fn`` is still the one its name denotes, and so on
    through the derivatives ``fn`` was built on or calls (``hvp`` holds a ``grad``)."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return True
    seen.add(id(fn))
    return all(
        namespace.resolve(expr) is callee and current(callee, seen)
        for namespace, expr, callee in getattr(fn, "__srcgrad_depends__", ())
    )


def cache_key(f: Fn, mode: Any, wrt: Wrt, options: Options) -> tuple[Any, Any]:
    """The cache key of a transform of ``f``, and the objects that keep its ids meaningful.

    Code objects compare equal across modules when their bodies match, so identity is used: the
    code object, the globals it reads, its closure cells and its default values. Holding them in
    the cache entry keeps their ids from being reused by other objects.
    """
    code = getattr(f, "__code__", None)
    cells = tuple(getattr(f, "__closure__", None) or ())
    globals_ = getattr(f, "__globals__", None)
    # defaults are values of this function object (lambdas made in a loop share their code)
    defaults = tuple(getattr(f, "__defaults__", None) or ())
    kwdefaults = tuple((getattr(f, "__kwdefaults__", None) or {}).items())
    ident = id(code) if code is not None else id(f)
    key = (
        ident, id(globals_), tuple(id(c) for c in cells), tuple(id(d) for d in defaults),
        tuple((k, id(v)) for k, v in kwdefaults), mode, hashable(wrt), options, bound_key(f),
    )
    instance = bound_instance(f)
    return key, (code if code is not None else f, globals_, cells, defaults, kwdefaults, instance)


def after_self(wrt: Wrt) -> Wrt:
    """``wrt`` of a bound method as ``wrt`` of its function: positions count after ``self``."""
    def one(sel: Selector) -> Selector:
        return sel + 1 if isinstance(sel, int) and not isinstance(sel, bool) and sel >= 0 else sel

    if isinstance(wrt, (tuple, list)):
        return tuple(one(w) for w in wrt)
    return one(wrt)


def hashable(wrt: Wrt) -> Any:
    return tuple(wrt) if isinstance(wrt, list) else wrt


def params_of(fn: Any) -> list[str]:
    code = fn.__code__
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def wrt_names(fn: Any, wrt: Wrt) -> tuple[str, ...]:
    """``wrt`` (an int, a str, or a tuple of them) as a tuple of parameter names."""
    params = params_of(fn)
    selectors = wrt if isinstance(wrt, (tuple, list)) else (wrt,)
    names = []
    for sel in selectors:
        if isinstance(sel, bool) or not isinstance(sel, (int, str)):
            raise SrcgradError(
                f"wrt selects parameters by position (int) or name (str); got {sel!r}"
            )
        if isinstance(sel, int):
            positional = params[: fn.__code__.co_argcount]
            if not -len(positional) <= sel < len(positional):
                raise SrcgradError(
                    f"wrt={sel} is out of range: {fn.__name__} has {len(positional)} positional "
                    f"parameters {positional}"
                )
            names.append(positional[sel])
        else:
            if sel not in params:
                raise SrcgradError(f"wrt={sel!r}: {fn.__name__} has no parameter {sel!r}; "
                                   f"its parameters are {params}")
            names.append(sel)
    if len(set(names)) != len(names):
        raise SrcgradError(f"wrt={wrt!r} selects the same parameter twice")
    return tuple(names)


def rule_wrapper(f: Fn) -> Fn:
    """A Python function calling ``f``, for transforms of functions known only by their rule."""
    rule = rules.lookup(f)
    if rule is None:
        name = getattr(f, "__name__", repr(f))
        raise SrcgradError(
            f"cannot differentiate {name}: it has no Python source and no gradient rule; "
            f"register one with @srcgrad.adjoint({name})"
        )
    params = [p for p, spec in rule.signature.parameters.items()
              if spec.default is spec.empty and spec.kind == spec.POSITIONAL_OR_KEYWORD]
    name = getattr(f, "__name__", "fn")
    text = f"def {name}({', '.join(params)}):\n    return fn({', '.join(params)})\n"
    host: Fn = compile_function(text, name, Host, {"fn": f})
    return host


class Host:
    """Stands in for a user function when compiling a rule wrapper: no globals, no closure."""

    __globals__ = {"__builtins__": __builtins__}
    __code__ = None
    __module__ = "srcgrad"
