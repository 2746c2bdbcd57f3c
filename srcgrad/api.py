"""The transforms: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hvp``, ``jacobian``,
``hessian``, ``holomorphic_grad``; and ``source`` / ``show``.

Each transform returns the generated function itself (no wrapper between the caller and the
generated code), compiled once and cached by the function's code object and closure, the
transform, ``wrt`` and options. The transforms and that cache are registered with
``transforms.py`` for the modules below this one that run them. What a transform reads of a
callable (its function, ``wrt`` as names, the cache key) is ``targets.py``; how Jacobians,
Hessians and complex derivatives are built from the generated transforms is ``matrices.py``.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from dataclasses import replace
from typing import Any, Callable, Protocol, cast, overload

from . import transforms
from .context import Options
from .derived import Derived, unwrap, wrap
from .emit import diskcache, numba_backend
from .emit.unparse import highlight
from .errors import ClassesNeeded, SrcgradError
from .frontend.source import GENERATED_SOURCE
from .kinds import AFTER, Specialized
from .matrices import METHODS, hessian_of, holomorphic, jacobian_of
from .normalize.callables import StaticArgumentNeeded
from .normalize.methods import bound_to
from .pipeline import derive
from .rebuilding import (
    MADE_BY_REBUILDING,
    REBUILD,
    Rebuilding,
    RebuildingSpecializing,
    plans_key,
)
from .reverse_options import _reverse_options
from .rules.custom import adjoint, nondifferentiable, stop_gradient, tangent
from .runtime.pytrees import register_pytree
from .specialize import Specializing
from .targets import Fn, Wrt, after_self, cache_key, current, target, wrt_names

_CACHE: dict[Any, Any] = {}
REVERSE_MODES = ("grad", "value_and_grad", "vjp", "pullback")
BY_KINDS = "__srcgrad_by_kinds__"  # on a generated function: the Specialized a transform returns


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
        return wrap(fn, mode, f, wrt, _asked(options), by_kinds(fn, _after(mode)))

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
        return wrap(fn, mode, f, wrt, _asked(options), by_kinds(fn, _after(mode)))

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
        return wrap(fn, mode, f, wrt, _asked(options), by_kinds(fn, _after(mode)))

    transform.__name__ = mode
    transform.__qualname__ = mode
    return cast(Transform, transform)


def by_kinds(fn: Any, after: int = AFTER) -> Any:
    """What a transform returns of the derivative ``fn`` it generated as Python code: ``fn``
    regenerated for the kinds of the arguments it is called with (``kinds.py``) from the
    ``after``-th call of a signature on, made once per ``fn``; anything else (a derivative numba
    compiled, a method, one specialized per function passed) as it is."""
    if isinstance(fn, Rebuilding):  # (the derivative it runs where nothing is rebuilt)
        fn.called = by_kinds(fn.plain, after)
        return fn
    if (type(fn) is not types.FunctionType or getattr(fn, "__srcgrad_recipe__", None) is None
            or hasattr(fn, numba_backend.PYTHON)):
        return fn
    made = fn.__dict__.get(BY_KINDS)
    if made is None:
        made = fn.__dict__[BY_KINDS] = Specialized(fn, after=after)
    return made


def _after(mode: str) -> int:
    """From which call of a signature a derivative runs code specialized to its arguments'
    kinds: the first for ``pullback`` and ``linearize``, whose ``back``/``jvp_fn`` (made by
    that call, specialized with it) is meant to be called again and again."""
    return 1 if mode in ("pullback", "linearize") else AFTER


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
        # for_numba: without the rewrites numba has no helpers for (optimize/steps.py)
        python = _derived(f, mode, wrt, replace(plain, for_numba=True))
        if options.checkpoint is not None and mode in (*REVERSE_MODES, "tangent"):  # steps
            from .emit import numba_checkpoint

            stepped = numba_checkpoint.compiled(unwrap(python), options.backend, target(f))
            if stepped is not None:
                return cast(Fn, stepped)
        return cast(Fn, numba_backend.compiled(python, options.backend, lambda kinds: unwrap(
            _derived(f, mode, wrt, replace(plain, kinds=kinds, for_numba=True))), target(f)))
    read = getattr(target(f), "__srcgrad_differentiate_as__", target(f))
    if options.checkpoint is not None and mode in REVERSE_MODES:
        read = checkpoint_mod.checkpointed(read, options.checkpoint, options.max_memory)
    names = wrt_names(read, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    try:
        if options.rebuild:  # (plans name classes: kept in this process only)
            fn = derive(read, mode, names, options, as_tuple)[0]
        else:
            fn = diskcache.derive_cached(f, read, mode, names, as_tuple, options, derive)
    except (StaticArgumentNeeded, ClassesNeeded) as need:
        if need.param in names and not need.held:
            raise SrcgradError(
                f"wrt selects `{need.param}`, which {read.__name__} calls as a function: a "
                f"function has no gradient; differentiate with respect to the values it is "
                f"given instead"
            ) from None
        # a parameter called as a function (holding objects called), or unpacked in a call
        # (`f(*xs)`: per length, normalize/starred_params.py): specialized at the call
        made = RebuildingSpecializing(
            lambda static: _specialization(read, mode, names, options, as_tuple, static),
            read, mode, () if options.rebuild or options.checkpoint is not None else names)
        made.lengths = frozenset(getattr(need, "unpacked", ()))
        return made
    return _rebuilding(fn, f, mode, wrt, names, options)


def _specialization(read: Fn, mode: str, names: tuple[str, ...], options: Options,
                    as_tuple: bool, static: dict[str, Any]) -> Fn:
    """The derivative of ``read`` specialized to ``static`` (``specialize.Specializing``),
    seeing the registered objects of its plans (``static[REBUILD]``) rebuilt, where srcgrad
    can differentiate that (else without: an attribute derived from the children is refused
    where it is read)."""
    plans = static.pop(REBUILD, ())
    if plans:
        try:
            return cast(Fn, derive(read, mode, names, replace(options, rebuild=plans),
                                   as_tuple, static)[0])
        except SrcgradError:
            pass
    return cast(Fn, derive(read, mode, names, options, as_tuple, static)[0])


def _rebuilding(fn: Fn, f: Fn, mode: str, wrt: Wrt, names: tuple[str, ...],
                options: Options) -> Fn:
    """``fn``, or where it may read attributes of the arguments ``names``, a ``Rebuilding``
    of it: a call passing registered objects with attributes derived from their children runs
    the derivative of the function that sees them as their unflatten builds them (JAX's)."""
    if (options.backend != "python" or options.for_numba or options.kinds or options.rebuild
            or not names
            or not inspect.isfunction(target(f)) or getattr(f, MADE_BY_REBUILDING, False)):
        return fn
    shown = GENERATED_SOURCE.get(getattr(fn, "__code__", None))
    if shown is None or not ("attr_grad(" in shown[0] or "attr_of(" in shown[0]):
        return fn
    cast(Any, fn).__srcgrad_recipe__ = (f, mode, wrt, options, _generated)  # (by_kinds regenerates)
    return Rebuilding(fn, lambda plans: _derived(f, mode, wrt, replace(
        options, rebuild=plans_key(plans))), target(f), mode, names)


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
    return wrap(fn, "hvp", f, wrt, _asked(options), by_kinds(fn))


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
    if method not in METHODS:
        raise SrcgradError(
            f"jacobian method must be 'auto', 'rev' or 'fwd' ('reverse' and 'forward' are the "
            f"same); got {method!r}"
        )
    try:
        fn = _cached(unwrap(f), ("jacobian", METHODS[method]), wrt, options, jacobian_of)
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
        fn = _cached(unwrap(f), "hessian", wrt, options, hessian_of)
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
        fn = _cached(unwrap(f), "holomorphic_grad", wrt, options, holomorphic)
    except SrcgradError as error:
        raise _trimmed(error) from error.__cause__
    return wrap(fn, "holomorphic_grad", f, wrt, _asked(options))


def _cached(f: Fn, mode: Any, wrt: Wrt, options: Options, build: Fn) -> Fn:
    if inspect.ismethod(f) and isinstance(f.__func__, Rebuilding):  # (its code, as before)
        f = types.MethodType(f.__func__.plain, f.__self__)
    elif not isinstance(f, Rebuilding):  # (its transforms rebuild as it does)
        f = getattr(f, numba_backend.PYTHON, f)  # a compiled derivative: the code it compiles
    if not callable(f):
        raise SrcgradError(f"{mode} expects a function, got {type(f).__name__}")
    if inspect.ismethod(f) and (getattr(f.__func__, "__code__", None) is not None
                                or isinstance(f.__func__, Specializing)):
        # `grad(model.loss)`: the derivative of the function with `self` its first parameter,
        # specialized for the instance's classes, bound to the instance
        with bound_to(f.__func__, f.__self__):
            inner = _cached(f.__func__, mode, after_self(wrt), options, build)
        return types.MethodType(inner, f.__self__)
    key, keep = cache_key(f, mode, wrt, options)
    cached = _CACHE.get(key)
    if cached is not None and current(cached[0]):
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
    called = fn.func if type(fn) is Derived else fn  # (by_kinds: specialized to the last call)
    if isinstance(called, types.MethodType) and isinstance(called.__func__, Rebuilding):
        called = called.__func__  # (`grad(model.loss)`: bound to the instance)
    if isinstance(called, Rebuilding):
        fn = called if called.made else called.called  # (no object rebuilt yet)
    else:
        fn = called if isinstance(called, Specialized) else unwrap(fn)
    shown = GENERATED_SOURCE.get(getattr(fn, "__code__", None))
    if shown is not None and hasattr(fn, numba_backend.PYTHON):
        return str(shown[0])
    header = fn.signature() if isinstance(fn, Specialized) else ""
    if isinstance(fn, (Specializing, Specialized)):
        fn = fn.last()
    entry = GENERATED_SOURCE.get(getattr(fn, "__code__", None))
    if entry is None:
        raise SrcgradError(f"{fn!r} was not generated by srcgrad; source() shows derived functions")
    return header + str(entry[0])


def show(fn: Fn) -> None:
    """Print the generated source of a derived function (highlighted on a terminal); in Jupyter
    or IPython, display it as highlighted HTML with line numbers, each ``# grad of:`` block
    beside the line of the user's source it differentiates."""
    text = source(fn)
    shell = _ipython()
    if shell is not None:
        from IPython.display import display

        from .emit.display import GeneratedSource

        called = fn.func if type(fn) is Derived else fn
        shown = called.last() if isinstance(called, Specialized) else unwrap(fn)
        cast(Any, display)(GeneratedSource(shown))
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
