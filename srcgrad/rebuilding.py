"""Derivatives that see a registered object as JAX's function sees it: rebuilt by its unflatten.

JAX differentiates ``f(b, x)`` with respect to a registered ``b`` by calling ``f`` on
``unflatten(aux, children)``: an attribute that is neither a child nor aux data (``self.a2 = a *
a``, computed in ``__init__``) is what the user's ``unflatten`` makes of it, recomputed from the
children (an ``unflatten`` that calls ``__init__``), or missing (one that does not: Python's
``AttributeError`` where it is read). ``Rebuilding`` does the same: a call whose differentiated
arguments hold such objects (``pytrees.rebuild_plan``) runs a derivative generated with
``Options.rebuild`` set to their plans, whose function starts by rebuilding them
(``normalize/rebuilt_arguments.py``), so the gradient flows through the user's ``flatten``,
``unflatten`` and ``__init__``, inlined like any helper, at every order. One such derivative is
made per plan (the classes and the places of those objects); every other call runs the
derivative made when the transform was called, as before.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .derived import PYTHON_BEHIND
from .errors import SrcgradError
from .runtime.pytrees import DerivedAttributeError, rebuild_plan
from .specialize import CACHE_SIZE, Specializing

MADE_BY_REBUILDING = "__srcgrad_rebuilt__"  # marks what needs no second rebuild


class Rebuilding(Specializing):
    """``called`` (``plain``, the derivative made when transformed, or the same specialized to
    the kinds of the arguments, ``kinds.py``), or for a call whose arguments ``names`` hold
    registered objects with attributes derived from their children, ``build`` of the plans of
    those arguments (the derivative made with ``Options.rebuild``)."""

    def __init__(self, plain: Any, build: Callable[[dict[str, Any]], Any], base: Any,
                 mode: str, names: tuple[str, ...], called: Any = None) -> None:
        super().__init__(build, base, mode)
        self.plain = plain
        self.called = plain if called is None else called
        self.names = names
        self.refused: dict[Any, SrcgradError] = {}  # plans -> why no derivative was made
        for made in (self, plain):  # (a transform of them chooses by this one's plans)
            setattr(made, MADE_BY_REBUILDING, True)
        # what another function calling this derivative inlines (frontend/resolve.py); its
        # name and signature (`inspect` follows `__wrapped__`)
        setattr(self, PYTHON_BEHIND, plain)
        if inspect.isfunction(plain):
            for name in ("__name__", "__qualname__", "__module__", "__doc__"):
                setattr(self, name, getattr(plain, name))
            self.__wrapped__ = plain

    @property
    def __srcgrad_depends__(self) -> Any:
        return getattr(self.plain, "__srcgrad_depends__", ())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plans = self.static(args, kwargs)
        if not plans:
            return self.called(*args, **kwargs)
        fn = self.specialized(plans)
        if fn is not None:
            return fn(*args, **kwargs)
        try:  # (the attributes may never be read: the derivative made before runs)
            return self.called(*args, **kwargs)
        except DerivedAttributeError as error:
            raise self.refused[plans_key(plans)] from error

    def __repr__(self) -> str:
        return f"<srcgrad {self.__name__}: rebuilding registered objects as unflatten does>"

    def static(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The rebuild plan of each differentiated argument that needs one."""
        return plans_of(self._positional, self.names, args, kwargs)

    def specialized(self, static: dict[str, Any]) -> Any:
        """The derivative made for ``static`` (now, if new), None where it was refused."""
        key = plans_key(static)
        entry = self.made.get(key)
        if entry is None and key not in self.refused:
            try:
                fn = self.build(static)
            except SrcgradError as error:
                self.refused[key] = SrcgradError(
                    f"{self.base.__name__} reads attributes of the registered objects in "
                    f"{sorted(static)} that are neither children nor aux data; srcgrad sees "
                    f"such objects as their unflatten builds them (as JAX does) and could not "
                    f"differentiate that here: {error}")
                return None
            setattr(fn, MADE_BY_REBUILDING, True)
            entry = self.made[key] = (fn, {})
            while len(self.made) > CACHE_SIZE:
                self.made.popitem(last=False)
        if entry is None:
            return None
        self.made.move_to_end(key)
        return entry[0]

    def transformed(self, transform: Callable[[Any], Any], mode: str) -> Rebuilding:
        """``transform`` of this derivative (``grad(grad(f))``, ``hvp``): of ``plain`` and of
        each rebuilding derivative, chosen per call as here."""
        return Rebuilding(transform(self.plain),
                          lambda plans: transform(self.specialized(plans)), self.base, mode,
                          self.names)

    def last(self) -> Any:
        """The derivative called last (``plain`` before any rebuilding one)."""
        fn = next(reversed(self.made.values()))[0] if self.made else self.plain
        return fn.last() if isinstance(fn, Specializing) else fn


def plans_key(plans: dict[str, Any]) -> tuple[Any, ...]:
    """``plans`` as the hashable value ``Options.rebuild`` holds."""
    return tuple(sorted(plans.items(), key=lambda item: item[0]))


def plans_of(positional: list[str], names: tuple[str, ...], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> dict[str, Any]:
    """The rebuild plan of each argument ``names`` selects that needs one."""
    given = dict(zip(positional, args))
    given.update(kwargs)
    plans = {}
    for name in names:
        plan = rebuild_plan(given[name]) if name in given else None
        if plan is not None:
            plans[name] = plan
    return plans


REBUILD = "(rebuilt)"  # the key of a specialization's plans (no parameter's name)


class RebuildingSpecializing(Specializing):
    """A ``Specializing`` (a derivative made per function or classes passed) whose
    specializations also see the registered objects of the arguments ``names`` as their
    unflatten builds them: ``static`` holds their plans at ``REBUILD``."""

    def __init__(self, build: Callable[[dict[str, Any]], Any], base: Any, mode: str,
                 names: tuple[str, ...], trailing: int = 0) -> None:
        super().__init__(build, base, mode, trailing)
        self.names = names

    def static(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        static = super().static(args, kwargs)
        plans = plans_of(self._positional, self.names, args[:len(args) - self.trailing], kwargs)
        if plans:
            static[REBUILD] = plans_key(plans)
        return static

    def transformed(self, transform: Callable[[Any], Any], mode: str) -> Specializing:
        made = RebuildingSpecializing(lambda static: transform(self.specialized(static)),
                                      self.base, mode, self.names, self.trailing)
        made.lengths = self.lengths
        return made
