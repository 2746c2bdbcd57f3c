"""How a derivative compiled by numba is called: one compilation per kinds of its arguments.

Requires: the Python derivative, its lowering (``numba_backend.lower``: the text checked at
transform time) and, for derivatives that can be specialized, a function giving the Python
derivative specialized to given argument kinds (``analysis/argkinds.py``; generated with
``Options(kinds=..., for_numba=True)`` through the transform caches, on disk too). Guarantees:
the first call with new argument kinds generates the derivative specialized to them (its
scalars numbers, its saves of numbers typed arrays: ``optimize/scalars.py``,
``optimize/typed_saves.py``), lowers it and compiles it with ``numba.njit(cache=True)`` from a
module file named after its text and srcgrad's sources (so numba's cache finds it in a later
process, and never code compiled with helpers since changed); later calls
with these kinds go straight to it through a test of the kinds written into the wrapper's own
code (a ``type()`` per argument with a kind, and ``ndim``/``dtype`` for an array), so the
dispatch costs what numba's alone does plus that test. A call whose arguments have no kind
runs the unspecialized lowering. ``source()`` shows the module compiled last (the
unspecialized lowering before the first call).

Without ``SRCGRAD_NUMBA_OPT``, a first call whose code numba has neither compiled nor cached runs
a quick compile of the module and the full one is compiled behind it (``numba_tiers.py``);
``SRCGRAD_NUMBA_OPT`` sets the LLVM optimization level the first call compiles the module at
instead (:func:`opt_level`, :func:`at_level`).

A failure of numba's type inference for some argument kinds is the located error of
``numba_backend.typing_failure`` (``backend="numba"``) or a run of the Python derivative
(``backend="auto"``) for those kinds from then on.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import sys
import tempfile
import threading
from typing import Any

import numpy as np

from ..analysis.argkinds import signature_kind, stable
from ..errors import SrcgradError
from ..frontend.source import GENERATED_SOURCE
from . import diskcache, numba_tiers
from .compile import compile_function

_TEMP: list[str] = []
_DISPATCHERS: dict[str, Any] = {}  # module file -> numba's dispatcher of its function


def _directory() -> tuple[str, bool]:
    """Where the modules numba compiles are written, and whether numba caches them."""
    if diskcache.enabled():
        return os.path.join(diskcache.directory(), "numba"), True
    if not _TEMP:
        _TEMP.append(tempfile.mkdtemp(prefix="srcgrad-numba-"))
    return _TEMP[0], False


# numba's LLVM optimization level for the derivative's own module (SRCGRAD_NUMBA_OPT=0..3;
# unset: numba's own, 3). LLVM's optimizations are most of a first call: at 0 the benchmark's
# RNN first call took 1.2-1.8 s of CPU time instead of 3.4-4.3 s, its MLP 2.0-2.9 s instead of
# 4.6-7.8 s, their calls then about 1.5x and 2.2x as long (benchmarks/RESULTS.md). numba does
# not cache a module compiled at 0 (its unoptimized code keeps "dynamic globals"): each process
# compiles it again. The helpers the module calls come optimized from their own caches; helpers
# compiled anew meanwhile are compiled at that level.
OPT_VARIABLE = "SRCGRAD_NUMBA_OPT"


def opt_level() -> int | None:
    """The level ``SRCGRAD_NUMBA_OPT`` asks for, None when unset (numba's own)."""
    text = os.environ.get(OPT_VARIABLE, "").strip()
    if not text:
        return None
    if text not in ("0", "1", "2", "3"):
        raise SrcgradError(f"{OPT_VARIABLE} must be 0, 1, 2 or 3 (numba's LLVM optimization "
                           f"level for compiled derivatives); got {text!r}")
    return int(text)


@contextlib.contextmanager
def at_level(level: int | None) -> Any:
    """numba compiling at LLVM optimization ``level`` meanwhile (``numba.config.OPT`` is global:
    set under numba's compiler lock, which every compilation takes, so no other compilation of
    the process sees it); nothing changed for None."""
    if level is None:
        yield
        return
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        saved = config.OPT
        config.OPT = type(saved)(level)
        try:
            yield
        finally:
            config.OPT = saved


def jit(numba: Any, lowered: Any, level: int | None = None) -> tuple[Any, str]:
    """``lowered`` written to a module file named after its text (and the optimization
    ``level`` it is compiled at) and srcgrad's sources and versions, imported, and wrapped by
    ``numba.njit``; and the file's path."""
    import hashlib

    directory, cache = _directory()
    # numba's cache of the module holds the helpers it calls compiled in, and follows only the
    # module's own file: srcgrad's sources and versions (diskcache.environment) name it too
    text = lowered.text
    if level is not None:  # (last: the module's line numbers stay lowered.generated_line's)
        text += f"# compiled at numba's optimization level {level} ({OPT_VARIABLE})\n"
    named = repr((diskcache.environment(), text))
    digest = hashlib.sha1(named.encode()).hexdigest()[:16]
    module_name = f"srcgrad_numba_{lowered.name}_{digest}"
    path = os.path.abspath(os.path.join(directory, module_name + ".py"))
    if not os.path.exists(path):  # never rewritten: numba's cache is keyed by its time stamp
        os.makedirs(directory, exist_ok=True)
        scratch = f"{path}.{os.getpid()}.tmp"
        with open(scratch, "w") as handle:
            handle.write(text)
        os.replace(scratch, path)
    jitted = _DISPATCHERS.get(path)
    if jitted is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        # bounds checked: an index out of range is Python's IndexError, never a stray read; at
        # level 0 not cached (numba refuses, with a warning: "it uses dynamic globals")
        jitted = numba.njit(cache=cache and level != 0, boundscheck=True)(
            getattr(module, lowered.name))
        _DISPATCHERS[path] = jitted
    return jitted, path


class Compiled:
    """One compilation: the lowered module, numba's dispatcher of it, its staleness test."""

    def __init__(self, numba: Any, py_fn: Any, lowered: Any) -> None:
        self.py_fn, self.lowered = py_fn, lowered
        self.numba = numba
        self.level = opt_level()  # the first call compiles at it (SRCGRAD_NUMBA_OPT)
        self.jitted, self.path = jit(numba, lowered, self.level)
        self.serving = self.jitted  # what the calls run: the quick tier until this is compiled
        self.served: Any = None  # called when ``serving`` changes (Calls._serve)
        self.first = True
        self.stale = stale_test(py_fn, lowered)
        self.failed: dict[tuple, Exception] = {}  # argument types -> numba's error for them

    def invoke(self, args: tuple) -> Any:
        """The compiled function's result for ``args`` (the arrays it returns that the caller
        allocates allocated here: ``numba_backend._outputs``)."""
        outputs = self.lowered.outputs
        made = [np.empty(args[index].shape) for _, _, index in outputs]
        level, first, self.level, self.first = self.level, self.first, None, False
        tiered = first and level is None  # without SRCGRAD_NUMBA_OPT: in tiers (numba_tiers)
        sig = self._quick((*args, *made)) if tiered else None
        try:
            with at_level(level):
                rest = self.serving(*args, *made)
        finally:  # (after the quick code's first run: its objmode calls take numba's lock once)
            if sig is not None:
                numba_tiers.behind(self.jitted, sig, lambda: self._serve(self.jitted))
        if not outputs:
            return rest
        return _assembled(self.lowered, made, rest)

    def _quick(self, args: tuple) -> tuple | None:
        """The quick tier compiled for ``args`` and serving, and their numba types (for the full
        compile behind it); None when numba has the full code for them already (compiled, or in
        its cache), or tiers are off (``SRCGRAD_NUMBA_TIERS=0``)."""
        if not numba_tiers.enabled():
            return None
        sig = numba_tiers.signature(self.jitted, args)
        if sig is None or numba_tiers.ready(self.jitted, sig):
            return None
        quick = numba_tiers.quick(self.numba, self.jitted, self.path)
        quick.compile(sig)  # (numba's typing errors: Calls.run's)
        self._serve(quick)
        return sig

    def _serve(self, jitted: Any) -> None:
        self.serving = jitted
        if self.served is not None:
            self.served(self)


def _assembled(lowered: Any, made: list, rest: Any) -> Any:
    """The returned value: the allocated arrays ``made`` in their places, ``rest`` (a tuple)
    in the others."""
    if lowered.arity is None:
        return made[0]
    places = {place: array for (place, _, _), array in zip(lowered.outputs, made)}
    others = iter(rest or ())
    return tuple(places[i] if i in places else next(others) for i in range(lowered.arity))


class Calls:
    """The compilations of one derivative, by the kinds of the arguments (module docstring)."""

    def __init__(self, numba: Any, py_fn: Any, lowered: Any, backend: str,
                 specialized: Any) -> None:
        from numba.core.errors import NumbaError

        self.numba, self.py_fn, self.backend = numba, py_fn, backend
        self.generic_lowered = lowered
        self.generic: Compiled | None = None
        self.specialized = specialized
        self.params = _params(py_fn)
        self.made: dict[tuple, Compiled] = {}
        # (numba's lowering raises NotImplementedError for some calls it typed, such as a
        # ufunc's `out=` keyword in a checkpointed loop's step: "auto" runs Python)
        self.errors = (NumbaError, NotImplementedError)
        self.fn: Any = None  # the wrapper (made by ``wrapper``)
        self.routed = False  # numba failed for some arguments: every call goes through call()
        self.scope: dict[str, Any] = {}  # its globals
        self.lock = threading.Lock()

    def call(self, *args: Any) -> Any:
        """A call through the kinds of its arguments (the first with new kinds compiles)."""
        key = tuple(map(signature_kind, args))
        compiled = self.made.get(key)
        if compiled is None:
            compiled = self._make(key)
        return self.run(compiled, args)

    def run(self, compiled: Compiled, args: tuple) -> Any:
        if compiled.stale is not None and compiled.stale():
            return self.py_fn(*args)  # a function it inlined was redefined: Python regenerates
        known = compiled.failed.get(_types(args)) if compiled.failed else None
        if known is not None:
            return self.failed(compiled, known, args)
        try:
            return compiled.invoke(args)
        except self.errors as error:
            return self.failed(compiled, error, args)

    def failed(self, compiled: Compiled, error: Exception, args: tuple) -> Any:
        """numba could not compile ``compiled`` for ``args``: the located error, or Python."""
        from .numba_refusals import typing_failure

        compiled.failed[_types(args)] = error
        if not self.routed:  # later calls look at the argument types first
            self.routed = True
            _replace_code(self.fn, SLOW.format(name=self.py_fn.__name__,
                                               params=", ".join(self.params)),
                          self.scope, GENERATED_SOURCE[self.fn.__code__][0])
        if self.backend == "numba":
            raise typing_failure(compiled.py_fn, compiled.lowered, compiled.path, error,
                                 args) from None
        return self.py_fn(*args)

    def _make(self, key: tuple) -> Compiled:
        kinds = tuple(sorted((p, stable(k)) for p, k in zip(self.params, key) if k is not None))
        if kinds and self.specialized is not None:
            from .numba_backend import lowered

            try:
                py_fn = self.specialized(kinds)
                arrays = frozenset(p for p, k in kinds if k[0] == "array")
                compiled = Compiled(self.numba, py_fn, lowered(py_fn, arrays))
            except SrcgradError:  # (a simpler form of the code checked at transform time;
                compiled = self._generic()  # were it refused, the unspecialized module runs)
        else:
            compiled = self._generic()
        self.made[key] = compiled
        compiled.served = self._serve
        self._install(key, compiled)
        return compiled

    def _serve(self, compiled: Compiled) -> None:
        """``compiled`` serves from another dispatcher (numba_tiers): the wrapper calls it."""
        with self.lock:
            if self.scope.get("__srcgrad_compiled__") is compiled:
                self.scope["__srcgrad_jit__"] = compiled.serving

    def _generic(self) -> Compiled:
        if self.generic is None:
            self.generic = Compiled(self.numba, self.py_fn, self.generic_lowered)
        return self.generic

    def _install(self, key: tuple, compiled: Compiled) -> None:
        """The wrapper's code becomes: a test of ``key``'s kinds, then ``compiled`` directly;
        anything else through :meth:`call`."""
        params = ", ".join(self.params)
        tests = []
        for i, (p, kind) in enumerate(zip(self.params, key)):
            tests.extend(_tests(p, kind, i, self.scope))
        stale = ""
        if compiled.stale is not None:
            self.scope["__srcgrad_stale__"] = compiled.stale
            stale = (f"\n        if __srcgrad_stale__():\n"
                     f"            return __srcgrad_python__({params})")
        with self.lock:  # (numba_tiers' thread may change what ``compiled`` serves)
            self.scope["__srcgrad_jit__"] = compiled.serving
            self.scope["__srcgrad_compiled__"] = compiled
        template = SLOW if self.routed else FAST
        call, result = f"return __srcgrad_jit__({params})", ""
        outputs = compiled.lowered.outputs
        if outputs:  # the arrays numba fills allocated here (numba_backend._outputs)
            self.scope["__srcgrad_empty__"] = np.empty
            made = [f"__srcgrad_out_{i}__" for i in range(len(outputs))]
            allocations = "".join(
                f"{made[i]} = __srcgrad_empty__({self.params[index]}.shape)\n            "
                for i, (_, _, index) in enumerate(outputs))
            call = (f"{allocations}__srcgrad_rest__ = __srcgrad_jit__("
                    f"{', '.join([*self.params, *made])})")
            places = {place: made[i] for i, (place, _, _) in enumerate(outputs)}
            arity = compiled.lowered.arity
            if arity is None:
                result = f"\n        return {made[0]}"
            else:
                others = iter(range(arity))
                parts = [places[i] if i in places else f"__srcgrad_rest__[{next(others)}]"
                         for i in range(arity)]
                result = f"\n        return ({', '.join(parts)},)"
        text = template.format(name=self.py_fn.__name__, params=params,
                               test=" and ".join(tests) or "True", stale=stale, call=call,
                               result=result)
        shown = compiled.lowered.text
        if self.backend == "auto":
            shown = "# backend='auto' chose numba\n" + shown
        _replace_code(self.fn, text, self.scope, shown)
        self.fn.__srcgrad_numba__ = compiled.jitted


FAST = """\
def {name}({params}):
    if {test}:{stale}
        try:
            {call}
        except __srcgrad_errors__ as __srcgrad_error__:
            return __srcgrad_calls__.failed(__srcgrad_compiled__, __srcgrad_error__, ({params},))\
{result}
    return __srcgrad_calls__.call({params})
"""
SLOW = """\
def {name}({params}):
    return __srcgrad_calls__.call({params})
"""
CHOSEN_PYTHON = """\
def {name}({params}):
    return __srcgrad_python__({params})
"""


def _tests(param: str, kind: Any, i: int, scope: dict[str, Any]) -> list[str]:
    """The tests that the argument of ``param`` has ``kind`` (none for an argument without a
    kind: the specialized code handles it as the unspecialized code does)."""
    if kind is None:
        return []
    if kind[0] in ("float", "int"):
        return [f"type({param}) is {kind[0]}"]
    if kind[0] == "scalar":
        scope[f"__srcgrad_type_{i}__"] = kind[1].type
        return [f"type({param}) is __srcgrad_type_{i}__"]
    scope["__srcgrad_ndarray__"] = np.ndarray
    scope[f"__srcgrad_dtype_{i}__"] = kind[2]
    return [f"type({param}) is __srcgrad_ndarray__", f"{param}.ndim == {kind[1]}",
            f"{param}.dtype is __srcgrad_dtype_{i}__"]


def _types(args: tuple) -> tuple:
    return tuple((type(a), getattr(a, "ndim", None), getattr(a, "dtype", None)) for a in args)


def _params(py_fn: Any) -> list[str]:
    code = py_fn.__code__
    return list(code.co_varnames[: code.co_argcount])


def _replace_code(fn: Any, text: str, scope: dict[str, Any], shown: str) -> None:
    """``fn`` runs ``text`` (one ``def``, reading ``scope``, ``fn``'s globals) from now on."""
    made: dict[str, Any] = {}
    exec(compile(text, fn.__code__.co_filename, "exec"), scope, made)  # noqa: S102
    fn.__code__ = made[fn.__name__].__code__
    GENERATED_SOURCE[fn.__code__] = (shown, fn.__code__.co_filename, 1, 0)


def made(py_fn: Any, template: str, bound: dict[str, Any], shown: str, filename: str) -> Any:
    """A function with ``py_fn``'s parameters (and defaults, names, documentation) running
    ``template``, its globals ``bound``; ``source()`` shows ``shown``."""
    from .numba_backend import PYTHON

    params = ", ".join(_params(py_fn))
    scope = {**bound, PYTHON: py_fn}
    text = template.format(name=py_fn.__name__, params=params)
    local: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), scope, local)  # noqa: S102
    fn = local[py_fn.__name__]
    fn.__defaults__ = py_fn.__defaults__
    fn.__qualname__ = py_fn.__qualname__
    fn.__module__ = py_fn.__module__
    fn.__doc__ = py_fn.__doc__
    setattr(fn, PYTHON, py_fn)
    if hasattr(py_fn, "__srcgrad_depends__"):
        fn.__srcgrad_depends__ = py_fn.__srcgrad_depends__
    GENERATED_SOURCE[fn.__code__] = (shown, filename, 1, 0)
    return fn


def wrapper(numba: Any, py_fn: Any, lowered: Any, backend: str, specialized: Any) -> Any:
    """The derivative ``py_fn`` compiled by numba per kinds of its arguments."""
    calls = Calls(numba, py_fn, lowered, backend, specialized)
    shown = lowered.text
    if backend == "auto":
        shown = "# backend='auto' chose numba\n" + shown
    fn = made(py_fn, SLOW, {"__srcgrad_calls__": calls, "__srcgrad_errors__": calls.errors},
              shown, f"<srcgrad {backend} {py_fn.__name__}>")
    calls.fn, calls.scope = fn, fn.__globals__
    return fn


# Why "auto" runs a derivative without a loop in Python: its time is NumPy's vectorized calls,
# which numba runs no faster (the MLP and logistic regression gradients measured equal, once
# numba_cached calls NumPy's own tanh and exp on arrays; before, 1.6-2x slower with numba).
NO_LOOP = "no loop (NumPy's vectorized calls are as fast in Python)"


def has_loop(py_fn: Any) -> bool:
    """Whether the generated derivative has a ``for`` or ``while`` loop."""
    tree = ast.parse(GENERATED_SOURCE[py_fn.__code__][0])
    return any(isinstance(n, (ast.For, ast.While)) for n in ast.walk(tree))


def python_choice(py_fn: Any, reason: str) -> Any:
    """``backend="auto"``'s choice of the Python derivative ``py_fn``, for ``reason``."""
    text = GENERATED_SOURCE[py_fn.__code__][0]
    shown = f"# backend='auto' chose Python: {reason}\n{text}"
    return made(py_fn, CHOSEN_PYTHON, {}, shown, f"<srcgrad auto {py_fn.__name__}>")


STALE = "__srcgrad_stale__"


def stale_test(py_fn: Any, lowered: Any) -> Any:
    """A function telling whether the compiled code no longer computes what the Python
    derivative would: a function it inlined redefined (the guard's test), or a number it
    compiled in (a global or closure variable of the user's) rebound. None when neither can."""
    tests = [] if lowered.guard is None else [f"({lowered.guard})"]
    pinned = {}
    for i, (name, value) in enumerate(lowered.constants.items()):
        pinned[f"__srcgrad_pinned_{i}__"] = value
        tests.append(f"{name} is not __srcgrad_pinned_{i}__")
    if not tests:
        return None
    text = f"def {STALE}():\n    return " + " or ".join(tests) + "\n"
    return compile_function(text, STALE, py_fn, pinned)
