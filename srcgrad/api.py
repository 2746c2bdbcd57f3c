"""The transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp``, ``jacobian``,
``hessian``, ``holomorphic_grad``; and ``source`` / ``show``.

Each transform returns the generated function itself (no wrapper between the caller and the
generated code), compiled once and cached by the function's code object and closure, the
transform, ``wrt`` and options. The transforms and that cache are registered with
``transforms.py`` for the modules below this one that run them.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import re
import sys
import types
from dataclasses import replace
from typing import Any, Callable, Iterator, Protocol, Union, cast, overload

import numpy as np

from . import rules, runtime, transforms
from .batched import seeded
from .context import Options
from .derived import Derived, unwrap, wrap
from .emit import diskcache, numba_backend
from .emit.compile import compile_function
from .emit.naming import DERIVED, WRAPPER_LOCALS, Namer
from .emit.unparse import highlight
from .errors import SrcgradError
from .frontend.source import GENERATED_SOURCE
from .kinds import Specialized
from .normalize.callables import StaticArgumentNeeded
from .normalize.methods import bound_instance, bound_key, bound_to
from .pipeline import derive
from .reverse_options import _reverse_options
from .rules.custom import adjoint, nondifferentiable, stop_gradient, tangent
from .runtime.batched import rows
from .runtime.pytrees import register_pytree
from .specialize import Specializing, shim
from .wrappers import (
    HESSIAN,
    HOLOMORPHIC,
    JACOBIAN_AUTO,
    JACOBIAN_AUTO_MANY,
    JACOBIAN_AUTO_TWIN,
    JACOBIAN_FORWARD,
    JACOBIAN_FORWARD_TWIN,
    JACOBIAN_REVERSE,
    JACOBIAN_REVERSE_MANY,
    JACOBIAN_REVERSE_TWIN,
)

_CACHE: dict[Any, Any] = {}
REVERSE_MODES = ("grad", "value_and_grad", "vjp", "pullback")
_RUNTIME: Any = runtime  # the helpers generated code calls (untyped)

Fn = Callable[..., Any]
Selector = Union[int, str]
#: ``wrt``: a parameter by position or name, or a tuple (or list) of them
Wrt = Union[Selector, "tuple[Selector, ...]", "list[Selector]"]


class Transform(Protocol):
    """``vjp``, ``jvp``: applied to a function, or (without one) a decorator."""

    @overload
    def __call__(self, f: Fn, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
                 dump: bool = False, backend: str = "python") -> Derived: ...

    @overload
    def __call__(self, f: None = None, wrt: Wrt = 0, *, verbose: bool = False,
                 optimize: bool = True, dump: bool = False,
                 backend: str = "python") -> Callable[[Fn], Derived]: ...


class ScalarTransform(Protocol):
    """``grad``, ``value_and_grad``: a transform that also takes ``has_aux``."""

    @overload
    def __call__(self, f: Fn, wrt: Wrt = 0, *, has_aux: bool = False, verbose: bool = False,
                 optimize: bool = True, dump: bool = False,
                 backend: str = "python") -> Derived: ...

    @overload
    def __call__(self, f: None = None, wrt: Wrt = 0, *, has_aux: bool = False,
                 verbose: bool = False, optimize: bool = True,
                 dump: bool = False, backend: str = "python") -> Callable[[Fn], Derived]: ...


def _transform(mode: str) -> Transform:
    def transform(f: Fn | None = None, wrt: Wrt = 0, *, verbose: bool = False,
                  optimize: bool = True, dump: bool = False, backend: str = "python") -> Any:
        options = Options(optimize=optimize, verbose=verbose, dump=dump,
                          backend=numba_backend.check(backend))
        if f is None:
            return functools.partial(transform, wrt=wrt, **_kw(options))
        try:
            fn = _derived(unwrap(f), mode, wrt, options)
        except SrcgradError as error:
            raise _trimmed(error) from error.__cause__
        return wrap(fn, mode, f, wrt, _asked(options))

    transform.__name__ = mode
    transform.__qualname__ = mode
    return cast(Transform, transform)


def _scalar_transform(mode: str) -> ScalarTransform:
    """``grad``, ``value_and_grad`` and ``pullback``, which also take ``has_aux``, and
    ``checkpoint`` as every reverse transform does."""

    def transform(f: Fn | None = None, wrt: Wrt = 0, *, has_aux: bool = False,
                  checkpoint: Any = None, max_memory: Any = "200MB", verbose: bool = False,
                  optimize: bool = True, dump: bool = False, backend: str = "python") -> Any:
        options = _reverse_options(optimize, verbose, dump, bool(has_aux), checkpoint,
                                   max_memory, backend)
        if f is None:
            return functools.partial(transform, wrt=wrt, has_aux=has_aux, **_kw(options))
        try:
            fn = _derived(unwrap(f), mode, wrt, options)
        except SrcgradError as error:
            raise _trimmed(error) from error.__cause__
        return wrap(fn, mode, f, wrt, _asked(options))

    transform.__name__ = mode
    transform.__qualname__ = mode
    return cast(ScalarTransform, transform)


def _reverse_transform(mode: str) -> Transform:
    """``vjp``: a reverse transform without ``has_aux``."""

    def transform(f: Fn | None = None, wrt: Wrt = 0, *, checkpoint: Any = None,
                  max_memory: Any = "200MB", verbose: bool = False, optimize: bool = True,
                  dump: bool = False, backend: str = "python") -> Any:
        options = _reverse_options(optimize, verbose, dump, False, checkpoint, max_memory,
                                   backend)
        if f is None:
            return functools.partial(transform, wrt=wrt, **_kw(options))
        try:
            fn = _derived(unwrap(f), mode, wrt, options)
        except SrcgradError as error:
            raise _trimmed(error) from error.__cause__
        return wrap(fn, mode, f, wrt, _asked(options))

    transform.__name__ = mode
    transform.__qualname__ = mode
    return cast(Transform, transform)


def _asked(options: Options, **more: Any) -> dict[str, Any]:
    """The options a transform was called with that another process needs to call it again."""
    asked: dict[str, Any] = {"optimize": options.optimize}
    if options.has_aux:
        asked["has_aux"] = True
    if options.backend != "python":
        asked["backend"] = options.backend
    if options.checkpoint is not None:
        asked.update(checkpoint=options.checkpoint, max_memory=options.max_memory)
    asked.update(more)
    return asked


def _trimmed(error: SrcgradError) -> SrcgradError:
    """A transform-time error as the user sees it: raised where they called the transform,
    without the frames of the compiler under it (``SRCGRAD_TRACEBACK=full`` keeps them)."""
    if os.environ.get("SRCGRAD_TRACEBACK") == "full":
        return error
    return error.with_traceback(None)


def _kw(options: Options) -> dict[str, Any]:
    kw = {"verbose": options.verbose, "optimize": options.optimize, "dump": options.dump,
          "backend": options.backend}
    if options.checkpoint is not None:
        kw.update(checkpoint=options.checkpoint, max_memory=options.max_memory)
    return kw


def _derived(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    return _cached(f, mode, wrt, options, _generated)


def _generated(f: Fn, mode: str, wrt: Wrt, options: Options) -> Fn:
    if isinstance(f, Specializing):  # grad(grad(f)) of an f called with functions
        return f.transformed(lambda inner: _derived(inner, mode, wrt, options), mode)
    if options.backend != "python":
        plain = replace(options, backend="python")
        python = _derived(f, mode, wrt, plain)
        return cast(Fn, numba_backend.compiled(python, options.backend, lambda kinds: unwrap(
            _derived(f, mode, wrt, replace(plain, kinds=kinds, for_numba=True)))))
    target = getattr(_target(f), "__srcgrad_differentiate_as__", _target(f))
    if options.checkpoint is not None and mode in REVERSE_MODES:
        target = checkpoint_mod.checkpointed(target, options.checkpoint, options.max_memory)
    names = _wrt_names(target, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    try:
        fn: Fn = diskcache.derive_cached(f, target, mode, names, as_tuple, options, derive)
    except StaticArgumentNeeded as need:
        if need.param in names:
            raise SrcgradError(
                f"wrt selects `{need.param}`, which {target.__name__} calls as a function: a "
                f"function has no gradient; differentiate with respect to the values it is "
                f"given instead"
            ) from None
        # a parameter called as a function: specialized per function passed, at the call
        return Specializing(
            lambda static: derive(target, mode, names, options, as_tuple, static)[0],
            target, mode,
        )
    return fn


def _target(f: Fn) -> Fn:
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
        return _rule_wrapper(f)
    if getattr(f, "__code__", None) is not None and not inspect.isfunction(f):
        return f  # a bound method: its function, `self` its first parameter
    return shim(f, _Host) or _rule_wrapper(f)


def _current(fn: Fn, seen: set[int] | None = None) -> bool:
    """Whether every function inlined into ``fn`` is still the one its name denotes, and so on
    through the derivatives ``fn`` was built on or calls (``hvp`` holds a ``grad``)."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return True
    seen.add(id(fn))
    return all(
        namespace.resolve(expr) is callee and _current(callee, seen)
        for namespace, expr, callee in getattr(fn, "__srcgrad_depends__", ())
    )


def _key(f: Fn, mode: Any, wrt: Wrt, options: Options) -> tuple[Any, Any]:
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
        tuple((k, id(v)) for k, v in kwdefaults), mode, _hashable(wrt), options, bound_key(f),
    )
    instance = bound_instance(f)
    return key, (code if code is not None else f, globals_, cells, defaults, kwdefaults, instance)


def _after_self(wrt: Wrt) -> Wrt:
    """``wrt`` of a bound method as ``wrt`` of its function: positions count after ``self``."""
    def one(sel: Selector) -> Selector:
        return sel + 1 if isinstance(sel, int) and not isinstance(sel, bool) and sel >= 0 else sel

    if isinstance(wrt, (tuple, list)):
        return tuple(one(w) for w in wrt)
    return one(wrt)


def _hashable(wrt: Wrt) -> Any:
    return tuple(wrt) if isinstance(wrt, list) else wrt


def _params(fn: Any) -> list[str]:
    code = fn.__code__
    return list(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


def _wrt_names(fn: Any, wrt: Wrt) -> tuple[str, ...]:
    """``wrt`` (an int, a str, or a tuple of them) as a tuple of parameter names."""
    params = _params(fn)
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


def _rule_wrapper(f: Fn) -> Fn:
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
    host: Fn = compile_function(text, name, _Host, {"fn": f})
    return host


class _Host:
    """Stands in for a user function when compiling a rule wrapper: no globals, no closure."""

    __globals__ = {"__builtins__": __builtins__}
    __code__ = None
    __module__ = "srcgrad"


grad = _scalar_transform("grad")
grad.__doc__ = """Gradient of a scalar-valued function: ``grad(f, wrt=0)(*args) -> g``.

With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the derivative returns ``(g, aux)``.
"""
value_and_grad = _scalar_transform("value_and_grad")
value_and_grad.__doc__ = """``value_and_grad(f, wrt=0)(*args) -> (value, g)`` in one pass.

With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the derivative returns
``((value, aux), g)``.
"""
pullback = _scalar_transform("pullback")
pullback.__doc__ = """``pullback(f, wrt=0)(*args) -> (value, back)``: the primal once, ``back(seed)
-> g`` as many times as wanted (``jax.vjp``); with ``has_aux``, ``(value, back, aux)``."""
vjp = _reverse_transform("vjp")
vjp.__doc__ = """Vector-Jacobian product: ``vjp(f, wrt=0)(*args, seed) -> g``."""
jvp = _transform("jvp")
jvp.__doc__ = """Forward mode: ``jvp(f, wrt=0)(*args, tangent) -> (value, tangent_out)``.

With a tuple ``wrt``, ``tangent`` is a tuple with one tangent per selected argument.
"""
linearize = _transform("linearize")
linearize.__doc__ = """``linearize(f, wrt=0)(*args) -> (value, jvp_fn)``: the primal once,
``jvp_fn(tangent) -> tangent_out`` as many times as wanted (``jax.linearize``)."""


@overload
def hvp(f: Fn, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
        dump: bool = False, backend: str = "python", checkpoint: Any = None,
        max_memory: Any = "200MB") -> Derived: ...


@overload
def hvp(f: None = None, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
        dump: bool = False, backend: str = "python", checkpoint: Any = None,
        max_memory: Any = "200MB") -> Callable[[Fn], Derived]: ...


def hvp(f: Fn | None = None, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
        dump: bool = False, backend: str = "python", checkpoint: Any = None,
        max_memory: Any = "200MB") -> Any:
    """Hessian-vector product: ``hvp(f, wrt=0)(*args, v) -> H v`` without forming ``H``.

    Generated as forward over reverse: the tangent of ``grad(f, wrt)`` along ``v``. With a tuple
    ``wrt``, ``v`` and the result are tuples. With ``checkpoint=``, the tangent runs through the
    checkpointed gradient's schedule (the snapshots and their tangents, no tape of the loop).
    """
    options = _reverse_options(optimize, verbose, dump, False, checkpoint, max_memory, backend)
    if f is None:
        return functools.partial(hvp, wrt=wrt, **_kw(options))
    try:
        plain = unwrap(f)
        inner = _derived(plain, "grad", wrt, replace(options, backend="python"))
        fn = _derived(inner, "tangent", wrt, options)
    except SrcgradError as error:
        raise _trimmed(error) from error.__cause__
    return wrap(fn, "hvp", f, wrt, _asked(options))


@overload
def jacobian(f: Fn, wrt: Wrt = 0, *, method: str = "auto", verbose: bool = False,
             optimize: bool = True, dump: bool = False, backend: str = "python",
             checkpoint: Any = None, max_memory: Any = "200MB") -> Derived: ...


@overload
def jacobian(f: None = None, wrt: Wrt = 0, *, method: str = "auto", verbose: bool = False,
             optimize: bool = True, dump: bool = False, backend: str = "python",
             checkpoint: Any = None, max_memory: Any = "200MB") -> Callable[[Fn], Derived]: ...


def jacobian(f: Fn | None = None, wrt: Wrt = 0, *, method: str = "auto", verbose: bool = False,
             optimize: bool = True, dump: bool = False, backend: str = "python",
             checkpoint: Any = None, max_memory: Any = "200MB") -> Any:
    """Jacobian: ``jacobian(f, wrt=0)(*args) -> J`` with ``J.shape == out.shape + arg.shape``.

    ``method="rev"`` runs the primal once (``pullback``) and its ``back`` once per output
    element; ``"fwd"`` runs the primal once (``linearize``) and its tangent map once per input
    element; ``"auto"`` picks the side with fewer elements. ``"reverse"`` and ``"forward"`` are
    the same as ``"rev"`` and ``"fwd"``. A tuple ``wrt`` gives a tuple of Jacobians.
    ``checkpoint=`` checkpoints the loops of the reverse side (the forward side keeps no tape).
    """
    options = _reverse_options(optimize, verbose, dump, False, checkpoint, max_memory, backend)
    if f is None:
        return functools.partial(jacobian, wrt=wrt, method=method, **_kw(options))
    if method not in _METHODS:
        raise SrcgradError(
            f"jacobian method must be 'auto', 'rev' or 'fwd' ('reverse' and 'forward' are the "
            f"same); got {method!r}"
        )
    try:
        fn = _cached(unwrap(f), ("jacobian", _METHODS[method]), wrt, options, _jacobian)
    except SrcgradError as error:
        raise _trimmed(error) from error.__cause__
    return wrap(fn, "jacobian", f, wrt, _asked(options, method=method))


@overload
def hessian(f: Fn, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
            dump: bool = False, backend: str = "python", checkpoint: Any = None,
            max_memory: Any = "200MB") -> Derived: ...


@overload
def hessian(f: None = None, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
            dump: bool = False, backend: str = "python", checkpoint: Any = None,
            max_memory: Any = "200MB") -> Callable[[Fn], Derived]: ...


def hessian(f: Fn | None = None, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
            dump: bool = False, backend: str = "python", checkpoint: Any = None,
            max_memory: Any = "200MB") -> Any:
    """Hessian of a scalar-valued ``f``: ``hessian(f, wrt=0)(*args) -> H``.

    ``H.shape == arg.shape + arg.shape``; one generated Hessian-vector product (forward over
    reverse) per element of the argument. A tuple ``wrt`` gives nested tuples ``H[i][j]`` of
    shape ``arg_i.shape + arg_j.shape``. ``checkpoint=`` as in ``hvp``.
    """
    options = _reverse_options(optimize, verbose, dump, False, checkpoint, max_memory, backend)
    if f is None:
        return functools.partial(hessian, wrt=wrt, **_kw(options))
    try:
        fn = _cached(unwrap(f), "hessian", wrt, options, _hessian)
    except SrcgradError as error:
        raise _trimmed(error) from error.__cause__
    return wrap(fn, "hessian", f, wrt, _asked(options))


@overload
def holomorphic_grad(f: Fn, wrt: Wrt = 0, *, verbose: bool = False, optimize: bool = True,
                     dump: bool = False) -> Derived: ...


@overload
def holomorphic_grad(f: None = None, wrt: Wrt = 0, *, verbose: bool = False,
                     optimize: bool = True, dump: bool = False) -> Callable[[Fn], Derived]: ...


def holomorphic_grad(f: Fn | None = None, wrt: Wrt = 0, *, verbose: bool = False,
                     optimize: bool = True, dump: bool = False) -> Any:
    """The complex derivative of a holomorphic function with one complex output:
    ``holomorphic_grad(f, wrt=0)(*args) -> f'(z)`` (an array of partial derivatives for an
    array ``z``), as JAX's ``grad(f, holomorphic=True)``. The argument must be complex.

    Generated as the conjugate of ``vjp(f, wrt)`` seeded with 1 (srcgrad's gradient of a complex
    argument is ``conj(f'(z))`` times the seed, docs/complex.md). It does not check that ``f`` is
    holomorphic: of a function that is not, it is the vjp's conjugate, not a derivative.
    """
    options = Options(optimize=optimize, verbose=verbose, dump=dump)
    if f is None:
        return functools.partial(holomorphic_grad, wrt=wrt, **_kw(options))
    try:
        fn = _cached(unwrap(f), "holomorphic_grad", wrt, options, _holomorphic)
    except SrcgradError as error:
        raise _trimmed(error) from error.__cause__
    return wrap(fn, "holomorphic_grad", f, wrt, _asked(options))


def _cached(f: Fn, mode: Any, wrt: Wrt, options: Options, build: Fn) -> Fn:
    f = getattr(f, numba_backend.PYTHON, f)  # a compiled derivative: the code it compiles
    if not callable(f):
        raise SrcgradError(f"{mode} expects a function, got {type(f).__name__}")
    if inspect.ismethod(f) and getattr(f.__func__, "__code__", None) is not None:
        # `grad(model.loss)`: the derivative of the function with `self` its first parameter,
        # specialized for the instance's classes, bound to the instance
        with bound_to(f.__func__, f.__self__):
            inner = _cached(f.__func__, mode, _after_self(wrt), options, build)
        return types.MethodType(inner, f.__self__)
    key, keep = _key(f, mode, wrt, options)
    cached = _CACHE.get(key)
    if cached is not None and _current(cached[0]):
        found: Fn = cached[0]
        return found
    fn: Any = build(f, mode, wrt, options)
    _CACHE[key] = (fn, keep)
    fn.__srcgrad_recipe__ = (f, mode, wrt, options, build)
    built: Fn = fn
    return built


def _fresh(fn: Fn) -> Fn:
    """``fn`` if it is not a derivative; else the derivative the same transform gives now, of
    the current version of what it was derived from (``grad(grad(f))`` renews the inner one)."""
    recipe = getattr(fn, "__srcgrad_recipe__", None)
    if recipe is None:
        return fn
    f, mode, wrt, options, build = recipe
    return _cached(_fresh(f), mode, wrt, options, build)


def refreshed(fn: Fn) -> Fn:
    """The derivative to call instead of ``fn``, whose guard found a redefined helper."""
    fresh = _fresh(fn)
    if fresh is fn:
        raise SrcgradError(
            f"internal error: {fn.__name__} found a function it inlined redefined, but "
            f"regenerating it gave the same derivative"
        )
    return fresh


def _split_call(f: Fn, wrt: Wrt) -> tuple[tuple[str, ...], Fn]:
    """A function mapping a call's arguments to (positional, keywords, selected values).

    Derived functions with an extra last parameter take every positional parameter by position.
    """
    target = _target(f)
    names = _wrt_names(target, wrt)
    signature = inspect.signature(target)

    def split(args: Any, kwargs: Any) -> tuple[Any, Any, list[Any]]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args, bound.kwargs, [bound.arguments[n] for n in names]

    return names, split


def _basis(x: Any) -> Iterator[Any]:
    """Unit tangents (or seeds) shaped like ``x``, one per element in C order."""
    for i in range(int(np.size(x))):
        yield _RUNTIME.unit_basis(x, i)


def _assemble(parts: list[Any], out_shape: Any, in_shape: Any, axis: int) -> Any:
    """Stack per-element columns (axis=-1) or rows (axis=0) into ``out_shape + in_shape``."""
    if len(parts) == 1 and (in_shape == () if axis == -1 else out_shape == ()):
        return parts[0]
    stacked = np.stack([np.asarray(p) for p in parts], axis=axis)
    return stacked.reshape(tuple(out_shape) + tuple(in_shape))


def _plain_params(f: Fn) -> list[str] | None:
    """f's parameters when they are all positional without defaults, else None."""
    code = getattr(f, "__code__", None)
    if code is None or f.__defaults__ or code.co_kwonlyargcount:
        return None
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    return list(code.co_varnames[: code.co_argcount])


def _generate(f: Fn, name: str, template: str, extras: dict[str, Any],
              params: list[str]) -> Fn:
    """Compile a generated wrapper (Jacobian, Hessian) whose text is ``template``."""
    if not name.isidentifier():  # hessian_<lambda>
        name = re.sub(r"\W", "", name.replace("<lambda>", "lambda")) or "derived"
    taken = set(params) | {name}
    namer = Namer(taken)
    bound = {key: namer.fresh(key) for key in extras}
    local = {n: namer.fresh(n) for n in WRAPPER_LOCALS}
    text = template.format(
        name=name, args=", ".join(params), fname=getattr(f, "__name__", "f"), **bound, **local
    )
    fn: Any = compile_function(text, name, _Host, {bound[k]: v for k, v in extras.items()})
    # as current as the derivatives it calls (checked through their own dependencies)
    fn.__srcgrad_depends__ = tuple(
        (_Pinned(v), None, v) for v in extras.values() if hasattr(v, "__srcgrad_depends__")
    )
    made: Fn = fn
    return made


class _Pinned:
    """A namespace in which a dependency always resolves to the same object: what is checked
    is that object's own dependencies."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def resolve(self, expr: Any) -> Any:
        return self.obj


def _holomorphic(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    names, split = _split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    back = _derived(f, "vjp", tuple(names) if as_tuple else names[0], options)
    params = _plain_params(f)
    name = DERIVED["holomorphic_grad"].format(getattr(f, "__name__", "f"))
    if params is not None and not as_tuple:
        # generated code, so that it is itself input to every transform
        extras = {"f": f, "vjp": back, "holomorphic_seed": _RUNTIME.holomorphic_seed,
                  "holomorphic_result": _RUNTIME.holomorphic_result}
        return _generate(f, name, HOLOMORPHIC.replace("{x}", names[0]), extras, params)

    def holomorphic(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        out = f(*args, **kwargs)
        seed = None
        for x in xs:
            seed = _RUNTIME.holomorphic_seed(out, x, getattr(f, "__name__", "f"))
        g = back(*pos, seed, **kw)
        if as_tuple:
            return tuple(_RUNTIME.holomorphic_result(part) for part in g)
        return _RUNTIME.holomorphic_result(g)

    holomorphic.__name__ = holomorphic.__qualname__ = name
    holomorphic.__doc__ = f"Complex derivative of {getattr(f, '__name__', 'f')} ({names})."
    return holomorphic


def _jacobian(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    method = mode[1]
    names, split = _split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    params = _plain_params(f)
    if params is not None and not as_tuple:
        # generated code, so that a Jacobian is itself input to every transform
        common = {"f": f, "np": np, "unit_basis": _RUNTIME.unit_basis,
                  "single_output": _RUNTIME.single_output,
                  "jacobian_argument": _RUNTIME.jacobian_argument}
        extras, twin, many = dict(common), dict(common), None
        if method != "forward":  # one sweep for many seeds where it can (batched.py)
            back = _derived(f, "pullback", names[0], options)
            many = seeded(back)
            extras.update(pullback=many or back, stack_rows=_RUNTIME.stack_rows, rows=rows)
            twin.update(vjp=_derived(f, "vjp", names[0], options), stack_rows=_RUNTIME.stack_rows)
        if method != "reverse":
            extras.update(linearize=_derived(f, "linearize", names[0], options),
                          stack_columns=_RUNTIME.stack_columns)
            twin.update(jvp=_derived(f, "jvp", names[0], options),
                        stack_columns=_RUNTIME.stack_columns)
        name = DERIVED["jacobian"].format(f.__name__)
        fast = {"reverse": JACOBIAN_REVERSE_MANY if many else JACOBIAN_REVERSE,
                "forward": JACOBIAN_FORWARD, "auto": JACOBIAN_AUTO_MANY if many else
                JACOBIAN_AUTO}[method].replace("{x}", names[0])
        slow = {"reverse": JACOBIAN_REVERSE_TWIN, "forward": JACOBIAN_FORWARD_TWIN,
                "auto": JACOBIAN_AUTO_TWIN}[method].replace("{x}", names[0])
        fn: Any = _generate(f, name, fast, extras, params)
        fn.__srcgrad_differentiate_as__ = _generate(f, name, slow, twin, params)
        made: Fn = fn
        return made
    forward = [_derived(f, "jvp", n, options) for n in names]

    def jac(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        for x in xs:
            _RUNTIME.jacobian_argument(x)
        n_in = sum(int(np.size(x)) for x in xs)
        columns: list[list[Any]] = [[] for _ in xs]
        value = None
        if method != "reverse" and n_in:
            # The first column also yields the output's size, which decides the method.
            value, column = forward[0](*pos, next(_basis(xs[0])), **kw)
            columns[0].append(column)
        else:
            value = f(*args, **kwargs)
        value = _RUNTIME.single_output(value, getattr(f, "__name__", "f"))
        if method == "forward" or (method == "auto" and n_in < int(np.size(value))):
            for k, x in enumerate(xs):
                for e in itertools.islice(_basis(x), len(columns[k]), None):
                    columns[k].append(forward[k](*pos, e, **kw)[1])
            result = [_RUNTIME.stack_columns(c, value, x) for c, x in zip(columns, xs)]
        else:
            value, back = _derived(f, "pullback", tuple(names), options)(*pos, **kw)
            value = _RUNTIME.single_output(value, getattr(f, "__name__", "f"))
            rows = [back(seed) for seed in _basis(value)]
            result = [_RUNTIME.stack_rows([r[k] for r in rows], value, x) for k, x in enumerate(xs)]
        return tuple(result) if as_tuple else result[0]

    jac.__name__ = jac.__qualname__ = DERIVED["jacobian"].format(getattr(f, "__name__", "f"))
    jac.__doc__ = f"Jacobian of {getattr(f, '__name__', 'f')} with respect to {names}."
    return jac


_METHODS = {"auto": "auto", "rev": "reverse", "reverse": "reverse", "fwd": "forward",
            "forward": "forward"}


def _hessian(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    names, split = _split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    hv = unwrap(hvp(f, wrt, **_kw(options)))
    params = _plain_params(f)
    if params is not None and not as_tuple:
        # generated code, so that a Hessian is itself input to every transform
        extras = {"np": np, "hvp": hv, "unit_basis": _RUNTIME.unit_basis,
                  "jacobian_argument": _RUNTIME.jacobian_argument,
                  "stack_columns": _RUNTIME.stack_columns}
        template = HESSIAN.replace("{x}", names[0])
        return _generate(f, DERIVED["hessian"].format(f.__name__), template, extras, params)

    def hess(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        if not as_tuple:
            x = xs[0]
            columns = [hv(*pos, e, **kw) for e in _basis(x)]
            return _assemble(columns, np.shape(x), np.shape(x), -1)
        zeros = tuple(_RUNTIME.zeros_like(x) for x in xs)
        blocks = [[None] * len(xs) for _ in xs]
        for j, xj in enumerate(xs):
            columns = []
            for e in _basis(xj):
                columns.append(hv(*pos, zeros[:j] + (e,) + zeros[j + 1:], **kw))
            for i, xi in enumerate(xs):
                parts = [c[i] for c in columns]
                blocks[i][j] = _assemble(parts, np.shape(xi), np.shape(xj), -1)
        return tuple(tuple(row) for row in blocks)

    hess.__name__ = hess.__qualname__ = DERIVED["hessian"].format(getattr(f, "__name__", "f"))
    hess.__doc__ = f"Hessian of {getattr(f, '__name__', 'f')} with respect to {names}."
    return hess


# For the modules below the api: `grad(g)(x)` inside a differentiated body is evaluated at
# transform time and differentiated through (see rules/derived.py), and so on.
transforms.register(
    _derived, _CACHE.clear, refreshed, grad=grad, value_and_grad=value_and_grad, vjp=vjp,
    pullback=pullback, jvp=jvp, linearize=linearize, hvp=hvp, jacobian=jacobian, hessian=hessian,
    holomorphic_grad=holomorphic_grad,
)
from . import checkpoint as checkpoint_mod  # noqa: E402  (its rules need the transforms)


def source(fn: Fn) -> str:
    """The complete generated Python source behind a derived function (for a derivative
    specialized per function passed, the specialization made last)."""
    fn = unwrap(fn)
    shown = GENERATED_SOURCE.get(getattr(fn, "__code__", None))
    if shown is not None and hasattr(fn, numba_backend.PYTHON):
        return str(shown[0])
    if isinstance(fn, (Specializing, Specialized)):
        fn = fn.last()
    entry = GENERATED_SOURCE.get(getattr(fn, "__code__", None))
    if entry is None:
        raise SrcgradError(f"{fn!r} was not generated by srcgrad; source() shows derived functions")
    return str(entry[0])


def show(fn: Fn) -> None:
    """Print the generated source of a derived function (highlighted on a terminal); in Jupyter
    or IPython, display it as highlighted HTML with line numbers, each ``# grad of:`` block
    beside the line of the user's source it differentiates."""
    text = source(fn)
    shell = _ipython()
    if shell is not None:
        from IPython.display import display

        from .emit.display import GeneratedSource

        cast(Any, display)(GeneratedSource(unwrap(fn)))
        return
    print(highlight(text), end="")


def _ipython() -> Any:
    """The running IPython shell (never imports IPython: only one already running counts)."""
    module = sys.modules.get("IPython")
    get = getattr(module, "get_ipython", None)
    return get() if get is not None else None


__all__ = [
    "grad", "value_and_grad", "vjp", "pullback", "jvp", "linearize", "hvp", "jacobian",
    "hessian", "holomorphic_grad", "source", "show",
    "inspect", "adjoint", "tangent", "stop_gradient", "nondifferentiable", "register_pytree",
]
