"""Transform inputs that are not plain functions, and derivatives specialized per function passed.

``shim(f)``: a callable that is not a plain function (``functools.partial``, a
``functools.wraps`` wrapper, an ``lru_cache``d function, an object with ``__call__``) is
transformed through a generated function with ``f``'s signature (as ``inspect.signature`` gives
it: a partial's remaining parameters, the wrapped function's, ``__call__``'s after ``self``) whose
body calls ``f``; the inliner then sees through ``f`` (``normalize/callables.py``). A partial's
bound keywords stay parameters with the bound values as defaults, so ``wrt`` may name them:

    grad(functools.partial(loss, reg=0.1), wrt="reg")   # through  def loss(w, *, reg=0.1):
                                                        #              return f(w, reg=reg)

``Specializing``: the derivative of a function that calls one of its parameters (``def
rk4_step(f, y, h)``). Which function is called is known only at the call, so the derivative is
generated there, once per function passed (keyed by identity: a function, a partial, a tuple or
dict of them), and kept in a bounded cache, most recently used last. Transforms of it
(``grad(grad(f))``, ``hvp``, ``jacobian``) are specialized the same way. The same holds for a
function calling a method of an object it reads out of a parameter (``P.ps[0].affine(x)`` of
an unannotated ``P``): the derivative is generated per classes of the objects passed
(``methods.classes_key``), with the methods those classes define inlined, each after a
run-time class check.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections import OrderedDict
from typing import Any, Callable

from .emit import naming
from .emit.compile import compile_function
from .errors import ClassesNeeded
from .normalize.callables import Bound, is_callable_value
from .normalize.object_classes import Example, classes_key, held_functions, holds_objects

CACHE_SIZE = 32  # specializations kept per derivative


@dataclasses.dataclass(frozen=True)
class Packed:
    """What a derivative specialized per length knows of a tuple or list passed (``length``,
    its ``len``) or a dict (``keys``), for ``f(*xs)`` / ``f(**kw)`` of the parameter
    (normalize/starred_params.py)."""

    length: Any
    fixed: bool = False  # a tuple: its length cannot change, wherever it is passed

    @staticmethod
    def of(value: Any) -> Any:
        """``Packed`` of ``value``, or None where it is no tuple, list or dict of str keys."""
        if isinstance(value, (tuple, list)):
            return Packed(len(value), isinstance(value, tuple))
        if isinstance(value, dict) and all(type(k) is str for k in value):
            return Packed(tuple(value))
        return None


class Specializing:
    """A derivative generated per function passed to it: ``build(static) -> generated
    function``, where ``static`` maps parameters of ``base`` to the callables a call passes."""

    def __init__(self, build: Callable[[dict[str, Any]], Any], base: Any, mode: str,
                 trailing: int = 0) -> None:
        from .pipeline import TRAILING_MODES

        self.build = build
        self.base = base  # the function whose parameters a call's arguments bind
        self.mode = mode
        # the seeds and tangents after base's arguments (`vjp(f)(x, seed)`, `vjp(vjp(f))`):
        # no argument of base, whatever default they pass over
        self.trailing = trailing + (mode in TRAILING_MODES)
        self.made = OrderedDict()  # identity key -> (generated function, the static values)
        self.lengths: frozenset[str] = frozenset()  # parameters specialized per their length
        self.__name__ = self.__qualname__ = f"{base.__name__}_{mode}"
        self.__doc__ = (
            f"The {mode} of {base.__name__}, generated per function passed to it (see "
            f"srcgrad.source for the last one generated)."
        )
        parameters = inspect.signature(base).parameters.values()
        self._positional = [
            p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        self._defaults = {p.name: p.default for p in parameters if p.default is not p.empty}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.specialized(self.static(args, kwargs))(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<srcgrad {self.__name__}: specialized per function passed>"

    def static(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The parameters a call gives callables (its defaults included), and the ``Example``
        of each value holding objects of the user's classes."""
        given = dict(self._defaults)
        given.update(zip(self._positional, args[:len(args) - self.trailing]))
        given.update(kwargs)
        # (None too: `if g is None: g = np.sin` is decided per call, normalize/chosen.py)
        static = {k: Example(v) if holds_objects(v) else v for k, v in given.items()
                  if is_callable_value(v) or holds_objects(v) or v is None}
        for k in self.lengths:
            packed = Packed.of(given.get(k))
            if k not in static and packed is not None:
                static[k] = packed
        return static

    def specialized(self, static: dict[str, Any]) -> Any:
        """The derivative generated for the callables ``static`` (made now if new)."""
        key = tuple(sorted((name, _identity(v)) for name, v in static.items()))
        entry = self.made.get(key)
        if entry is None:
            # the callables keep their ids meaningful (an example's classes are in the key)
            given = {k: v.value if isinstance(v, Example) else v for k, v in static.items()}
            kept = {k: v for k, v in given.items() if is_callable_value(v)}
            # and the functions held in the objects' fields (their ids are in the key)
            kept[None] = [f for v in static.values() if isinstance(v, Example)
                          for f in held_functions(v.value)]
            try:
                entry = (self.build(static), kept)
            except ClassesNeeded as need:  # the objects passed do not tell the class either
                raise need.refusal from None
            self.made[key] = entry
            while len(self.made) > CACHE_SIZE:
                self.made.popitem(last=False)
        else:
            self.made.move_to_end(key)
        return entry[0]

    def transformed(self, transform: Callable[[Any], Any], mode: str) -> Specializing:
        """``transform`` applied to every specialization of this derivative, as a derivative
        specialized the same way (``grad(grad(f))``)."""
        made = Specializing(lambda static: transform(self.specialized(static)), self.base, mode,
                            self.trailing)
        made.lengths = self.lengths
        return made

    def last(self) -> Any:
        """The specialization generated or used last."""
        if not self.made:
            from .errors import SrcgradError

            raise SrcgradError(
                f"{self.__name__} is generated per function passed to it and was not called "
                f"yet: call it once, then source() shows what it generated"
            )
        return next(reversed(self.made.values()))[0]


def _identity(value):
    """What a specialization depends on in a value passed: the identity of every callable."""
    if isinstance(value, Packed):
        return "packed", value.length, value.fixed
    if isinstance(value, Example):
        return classes_key(value.value), _identity(value.value)
    if isinstance(value, (tuple, list)):
        return tuple(_identity(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _identity(v)) for k, v in value.items())
    if inspect.ismethod(value):  # a new bound method object at every attribute read
        return (id(value.__func__), id(value.__self__))
    if isinstance(value, Bound) or is_callable_value(value):
        return id(value)
    return None  # not read at transform time: the generated code reads it when it runs


def shim(f: Any, host: Any) -> Any:
    """A generated function with ``f``'s signature calling ``f`` (None without a signature)."""
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        return None
    name = _name(f)
    namer = naming.Namer(set(signature.parameters) | {name})
    called = namer.fresh(naming.CALLED)
    extras = {called: f}
    params, args = [], []
    star = False
    for i, p in enumerate(signature.parameters.values()):
        text = p.name
        if p.default is not p.empty:
            default = namer.fresh(naming.DEFAULT.format(p.name))
            extras[default] = p.default
            text += f"={default}"
        if p.kind is p.VAR_POSITIONAL:
            params.append("*" + p.name)
            args.append("*" + p.name)
            star = True
        elif p.kind is p.VAR_KEYWORD:
            params.append("**" + p.name)
            args.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            if not star:
                params.append("*")
                star = True
            params.append(text)
            args.append(f"{p.name}={p.name}")
        else:
            params.append(text)
            args.append(p.name)
        if p.kind is p.POSITIONAL_ONLY and (
            i + 1 == len(signature.parameters)
            or list(signature.parameters.values())[i + 1].kind is not p.POSITIONAL_ONLY
        ):
            params.append("/")
    text = f"def {name}({', '.join(params)}):\n    return {called}({', '.join(args)})\n"
    fn = compile_function(text, name, host, extras)
    fn.__doc__ = f"Calls {f!r} (srcgrad transforms it through this function)."
    # its parameters are the user's: normalize/inplace.py checks a written one against the
    # others and what the function reads from outside (`partial(g, W)` called with W as x)
    fn.__srcgrad_user_parameters__ = frozenset()
    return fn


def _name(f):
    """A Python name for ``f``: its function's, or its class's for an object."""
    inner = f
    while isinstance(inner, functools.partial) or hasattr(inner, "__wrapped__"):
        inner = inner.func if isinstance(inner, functools.partial) else inner.__wrapped__
    name = getattr(inner, "__name__", None) or type(f).__name__.lower()
    return name if name.isidentifier() else "fn"
