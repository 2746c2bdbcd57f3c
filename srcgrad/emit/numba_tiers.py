"""A derivative's first numba compile in two tiers: quick code for the first calls, the full
optimization behind them.

Requires: numba's dispatcher (``compile``, ``typeof_pyval``, ``overloads``, its cache's index,
a compiler ``pipeline_class``: numba 0.6x), a ``numba_calls.Compiled``. Guarantees: a first call
whose code numba's cache does not hold (nor the process: :func:`ready`) is compiled by a second
dispatcher of the same function, its own module optimized at LLVM level :data:`QUICK` (function
passes, module passes; the helpers it calls, compiled with their own dispatchers, at numba's
level), and runs that code; a thread then compiles the derivative's own dispatcher (cached,
numba's level) for the same argument types, and the calls go to it once it is compiled. The
thread is not a daemon: a process ending meanwhile waits for it, so numba's cache holds the
fully optimized code, and a later process loads it at its first call (no quick compile). Both
tiers compile the same module for the same types: the same result, to the last bit
(tests/test_numba_backend.py). :func:`settle` waits for the threads.

Measured on the benchmark's RNN and MLP (benchmarks/RESULTS.md, session 10): LLVM's passes and
code generation over the derivative's own module were 61-78% of a first call at level 3; at the
quick levels the RNN's module compiled in 0.66 s instead of 1.9-2.9 s, its calls 8% slower.
"""

from __future__ import annotations

import os
import threading
from typing import Any

#: LLVM optimization levels of the quick tier: (function passes, module passes)
QUICK = (0, 1)
#: "0" turns the tiers off: a first call compiles the full code itself (less CPU time in all)
VARIABLE = "SRCGRAD_NUMBA_TIERS"

_QUICK: dict[str, Any] = {}  # module file -> the quick dispatcher of its function
_THREADS: list[threading.Thread] = []
_LOCK = threading.Lock()


def enabled() -> bool:
    """Whether first calls compile in tiers (``SRCGRAD_NUMBA_TIERS`` unset or not "0")."""
    return os.environ.get(VARIABLE, "").strip() != "0"


def signature(dispatcher: Any, args: tuple) -> tuple | None:
    """The numba types ``dispatcher`` compiles ``args`` for (as its ``_compile_for_args``
    does); None where numba lacks ``typeof_pyval``."""
    typeof = getattr(dispatcher, "typeof_pyval", None)
    if typeof is None:  # pragma: no cover - another numba
        return None
    return tuple(typeof(a) for a in args)


def ready(dispatcher: Any, sig: tuple) -> bool:
    """Whether ``dispatcher`` has code for ``sig`` without compiling: compiled in this process,
    or in numba's cache (its index lists it for this machine and these sources); also True
    where numba vectorizes through Intel's SVML (its vectorized functions may round otherwise
    than the scalar ones the quick code calls: the full code is compiled at once, so a call
    gives what every other call gives)."""
    from numba.core import config

    if sig in dispatcher.overloads or getattr(config, "USING_SVML", True):
        return True
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if not getattr(cache, "_enabled", False) or cache_file is None:
        return False
    try:
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache_file._load_index()
    except Exception:  # noqa: BLE001 - a cache numba cannot read: compiled, as numba would
        return False


def quick(numba: Any, jitted: Any, path: str) -> Any:
    """The dispatcher compiling ``jitted``'s function with ``jitted``'s options at the quick
    level (one per module file, not cached: numba's cache holds only the full code)."""
    dispatcher = _QUICK.get(path)
    if dispatcher is None:
        options = {k: v for k, v in jitted.targetoptions.items() if k != "nopython"}
        dispatcher = numba.njit(pipeline_class=_pipeline(), **options)(jitted.py_func)
        _QUICK[path] = dispatcher
    return dispatcher


def behind(jitted: Any, sig: tuple, done: Any) -> None:
    """``jitted`` compiled for ``sig`` by a thread, then ``done()`` called in it; on an error
    (not expected: the quick tier compiled the same module for the same types) the quick code
    goes on serving."""

    def full() -> None:
        try:
            jitted.compile(sig)
        except Exception:  # noqa: BLE001 - the calls keep the quick code, as correct
            return
        done()

    thread = threading.Thread(target=full, name="srcgrad numba compile")
    with _LOCK:
        _THREADS[:] = [t for t in _THREADS if t.is_alive()]
        _THREADS.append(thread)
    thread.start()


def settle() -> None:
    """Wait until every full compile started so far is done (also before a fork: a child
    process would inherit numba's compiler lock held)."""
    with _LOCK:
        threads = list(_THREADS)
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=settle)


_PIPELINE: list[Any] = []


def _pipeline() -> Any:
    """numba's compiler, the library of the function it compiles optimized at :data:`QUICK`."""
    if _PIPELINE:
        return _PIPELINE[0]
    from numba.core.compiler import Compiler

    class QuickCompiler(Compiler):
        def __init__(self, typingctx: Any, targetctx: Any, library: Any, *rest: Any) -> None:
            if library is None:
                library = targetctx.codegen().create_library("srcgrad_quick")
                _quick_library(library)
            super().__init__(typingctx, targetctx, library, *rest)

    _PIPELINE.append(QuickCompiler)
    return QuickCompiler


def _quick_library(library: Any) -> None:
    """``library``'s function passes and module passes run at the :data:`QUICK` levels."""
    from .numba_calls import at_level

    functions, module = library._optimize_functions, library._optimize_final_module

    def optimize_functions(ll_module: Any) -> None:
        with at_level(QUICK[0]):
            functions(ll_module)

    def optimize_module() -> None:
        with at_level(QUICK[1]):
            module()

    library._optimize_functions = optimize_functions
    library._optimize_final_module = optimize_module
    library._srcgrad_levels = QUICK
