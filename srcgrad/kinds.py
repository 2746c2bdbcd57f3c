"""Derivatives specialized to the kinds of their arguments: ``srcgrad.specialize(df)``.

A derivative is generated once for every kind of argument (a Python float, an int, a NumPy
scalar of some dtype, an array of some dtype and number of dimensions: ``analysis/argkinds.py``).
Code for known kinds can do less: a contribution to a number needs no ``unbroadcast``, a
value read only for its shape needs no saving, and scalar code stays on Python floats
(``optimize/scalars.py``). ``specialize`` records the kinds of the first call, generates that
derivative (through the same caches as every transform) and calls it. A later call with the
kinds of the call before it goes straight to its code through a test of those kinds written as
code (``_fast``: a ``type()`` per argument, ``ndim`` and ``dtype`` for an array; measured 0.7-0.8
us over calling the specialized code directly for two arguments, under load 17, where the
lookup below took 1.3-1.45 us); any other call computes its arguments' kinds and looks them up
among the signatures made so far, and generates for a new signature, keeping at most
``signatures``, the least recently used dropped first, like numba's dispatcher.

    dpend = srcgrad.specialize(srcgrad.grad(pendulum, wrt=("c", "L")))
    dpend(0.1, 1.0, 0.5, 0.0)      # generated for four Python floats; source(dpend) shows it

Arguments without a kind (lists, structures, objects) leave their parameters as the
unspecialized derivative treats them; a call where no argument has a kind runs the
unspecialized derivative. Specialized code computes the same numbers in the same dtypes; where
it runs scalar math on Python floats (``math.sin`` for ``np.sin``), a float operation Python
refuses where NumPy returns inf or nan (a division by zero, ``math.sqrt(-1.0)``) makes the call
run the unspecialized derivative instead, which gives NumPy's result and warning.

Every transform generating Python code returns its derivative specialized this way
(``api.by_kinds``), but later: ``grad(f)`` is generated (and refused) at the transform as
before, the first ``AFTER - 1`` calls of a signature run that unspecialized code, and the call
number ``AFTER`` generates the code for its kinds (``srcgrad.specialize`` generates at the
first call). Generating again costs about what the transform did (10-30 ms), which a
derivative called once or twice never earns back: every ``grad`` specialized at its first
call made ``tests/test_rules.py`` and ``tests/test_passes.py`` 67% slower. ``df.__wrapped__``
is the unspecialized derivative; ``source(df)`` shows the code specialized last under a
comment naming its kinds (the unspecialized code before). Where the code for some kinds
cannot be generated (a refusal only specialized code makes), the unspecialized derivative
runs for them.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any

import numpy as np

from . import transforms
from .analysis.argkinds import signature_kind, stable
from .derived import PYTHON_BEHIND, unwrap
from .errors import SrcgradError
from .rebuilding import Rebuilding
from .specialize import Specializing

SIGNATURES = 8  # specializations kept by default
# what a transform returns generates the code for a signature at its call number AFTER (the
# calls before run the unspecialized code): see the module docstring
AFTER = 8
# what Python floats raise where NumPy returns inf or nan (optimize/scalars.py)
FLOAT_ERRORS = (ZeroDivisionError, OverflowError, ValueError)


class Specialized:
    """A derivative generated per signature of argument kinds (see the module docstring)."""

    def __init__(self, derived: Any, signatures: int = SIGNATURES, after: int = 1) -> None:
        generic = unwrap(derived)
        recipe = getattr(generic, "__srcgrad_recipe__", None)
        if recipe is None or getattr(generic, PYTHON_BEHIND, None) is not None:
            raise SrcgradError(
                f"specialize() takes a derivative srcgrad generated as Python code (grad(f), "
                f"vjp(f), ...), got {derived!r}"
            )
        if not isinstance(signatures, int) or signatures < 1:
            raise SrcgradError(f"signatures must be a positive int, got {signatures!r}")
        self.derived = derived
        self.signatures = signatures
        self.recipe = recipe[:4]  # (function, mode, wrt, options)
        if isinstance(generic, Specializing):  # also specialized per function passed
            self.positional = tuple(generic._positional)
        else:
            code = generic.__code__
            self.positional = code.co_varnames[: code.co_argcount]
        self.made: OrderedDict = OrderedDict()  # kinds -> generated function
        self.after = after  # the call of a signature that generates its code
        self.calls: dict = {}  # kinds -> calls run unspecialized before that (after > 1)
        self._fast: Any = self._call  # a call of the signature called last: its kinds tested
        self._fasts: dict = {}  # kinds -> that test, made once per signature
        setattr(self, PYTHON_BEHIND, generic)  # what transforms of it differentiate
        self.__name__ = generic.__name__
        self.__module__ = generic.__module__
        self.__qualname__ = generic.__qualname__
        self.__doc__ = generic.__doc__
        self.__wrapped__ = generic

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fast(*args, **kwargs)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        key = tuple(map(signature_kind, args))
        if kwargs:
            key += tuple((k, signature_kind(v)) for k, v in kwargs.items())
        fn = self.made.get(key)
        if fn is None:
            if self.after > 1 and self._cold(key):
                return self.__wrapped__(*args, **kwargs)
            fn = self._make(key, args, kwargs)
        elif len(self.made) > 1:
            self.made.move_to_end(key)
        if not kwargs:
            self._fast = self._fasts.get(key) or self._fasts.setdefault(key, _fast(
                key, fn, self.__wrapped__, self._call))
        generic = self.__wrapped__
        if fn is generic:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except FLOAT_ERRORS:  # where NumPy's scalars give inf or nan (optimize/scalars.py)
            pass
        return generic(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<specialized {self.derived!r}>"

    def __reduce__(self) -> Any:
        return (Specialized, (self.derived, self.signatures, self.after))

    def _cold(self, key: tuple[Any, ...]) -> bool:
        """Whether this call of the signature ``key`` runs the unspecialized code (counted)."""
        n = self.calls.get(key, 0) + 1
        if n >= self.after:
            self.calls.pop(key, None)
            return False
        if len(self.calls) >= 4 * self.signatures and key not in self.calls:
            self.calls.clear()  # (bounded: the counts of many signatures start again)
        self.calls[key] = n
        return True

    def kinds(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Parameter -> stable kind of its argument, for the arguments with a kind."""
        given = dict(zip(self.positional, args))
        given.update(kwargs)
        return {p: k for p, v in given.items() if (k := stable(signature_kind(v))) is not None}

    def _make(self, key: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        kinds = self.kinds(args, kwargs)
        generic = getattr(self, PYTHON_BEHIND)
        if not kinds:
            fn = generic
        else:
            f, mode, wrt, options = self.recipe
            options = dataclasses.replace(options, kinds=tuple(sorted(kinds.items())))
            try:
                fn = unwrap(transforms.derived(f, mode, wrt, options))
            except SrcgradError:  # (the unspecialized derivative was made: it runs instead)
                fn = generic
        self.made[key] = fn
        while len(self.made) > self.signatures:
            self._fasts.pop(self.made.popitem(last=False)[0], None)
        return fn

    def last(self) -> Any:
        """The generated function called last (the unspecialized one before any call)."""
        fn = next(reversed(self.made.values())) if self.made else getattr(self, PYTHON_BEHIND)
        return fn.last() if isinstance(fn, Specializing) else fn

    def signature(self) -> str:
        """A comment line naming the kinds the code called last was generated for ("" for the
        unspecialized code): what ``source()`` shows above it."""
        if not self.made:
            return ""
        fn = next(reversed(self.made.values()))
        recipe = getattr(fn, "__srcgrad_recipe__", None)
        if fn is getattr(self, PYTHON_BEHIND) or recipe is None:
            return ""
        kinds = dict(recipe[3].kinds)
        order = [p for p in self.positional if p in kinds] + sorted(set(kinds) - set(
            self.positional))
        shown = ", ".join(f"{p}: {_spelled(kinds[p])}" for p in order)
        return f"# specialized to the kinds of its arguments: {shown}\n"


def _spelled(kind: tuple) -> str:
    """A kind as ``source()`` names it: ``float``, ``int``, ``float64 scalar``,
    ``float64 array, 2-d``."""
    if kind[0] in ("float", "int"):
        return kind[0]
    dtype = np.dtype(kind[-1]).name
    return f"{dtype} scalar" if kind[0] == "scalar" else f"{dtype} array, {kind[1]}-d"


FAST = """\
def fast(*args, **kwargs):
    if not kwargs and len(args) == {n} and {tests}:
        try:
            return fn(*args)
        except FLOAT_ERRORS:
            return generic(*args)
    return slow(*args, **kwargs)
"""


def _fast(key: tuple, fn: Any, generic: Any, slow: Any) -> Any:
    """A function calling ``fn`` for positional arguments of the kinds ``key`` (tested in its
    own code: a ``type()`` per argument with a kind, ``ndim`` and ``dtype`` for an array: a
    fraction of a microsecond), and ``slow`` for anything else."""
    scope: dict[str, Any] = {"fn": fn, "generic": generic, "slow": slow,
                             "FLOAT_ERRORS": FLOAT_ERRORS, "ndarray": np.ndarray}
    tests = []
    for i, kind in enumerate(key):
        if kind is None:
            continue  # (the specialized code treats this argument as the unspecialized one)
        if kind[0] in ("float", "int"):
            tests.append(f"type(args[{i}]) is {kind[0]}")
        elif kind[0] == "scalar":
            scope[f"type_{i}"] = kind[1].type
            tests.append(f"type(args[{i}]) is type_{i}")
        else:
            scope[f"dtype_{i}"] = kind[2]
            tests.append(f"type(args[{i}]) is ndarray and args[{i}].ndim == {kind[1]} "
                         f"and args[{i}].dtype is dtype_{i}")
    text = FAST.format(n=len(key), tests=" and ".join(tests) or "True")
    if fn is generic:
        text = text.replace("        try:\n            return fn(*args)\n        except "
                            "FLOAT_ERRORS:\n            return generic(*args)\n",
                            "        return fn(*args)\n")
    made: dict[str, Any] = {}
    exec(compile(text, "<srcgrad specialize>", "exec"), scope, made)  # noqa: S102
    return made["fast"]


def specialize(df: Any, *, signatures: int = SIGNATURES) -> Specialized | Rebuilding:
    """``df`` (a derivative srcgrad generated) regenerated for the kinds of the arguments it is
    called with, at most ``signatures`` kinds kept (see the module docstring)."""
    if isinstance(df, Specialized):
        return df
    rebuilding = unwrap(df)
    if isinstance(rebuilding, Rebuilding):  # (of a function reading attributes: rebuilding.py)
        # specialized where no registered object is rebuilt; a call that rebuilds one runs the
        # derivative made for it, as ``df`` does
        return Rebuilding(rebuilding.plain, rebuilding.build, rebuilding.base, rebuilding.mode,
                          rebuilding.names, called=Specialized(rebuilding.plain, signatures))
    return Specialized(df, signatures)  # (of what a transform returns: of its generated code)
