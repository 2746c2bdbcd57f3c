"""A derivative's module calls srcgrad's cached helpers as functions of their own, unlinked.

Requires: numba's CPU target (its target context's ``insert_user_function``, a code library's
``_reload_init``: numba 0.6x); the helpers registered by ``numba_cached.stamped`` and the float64
reduction kernels of ``numba_reductions``. Guarantees: a call from a derivative's module (the
module files ``emit/numba_calls.jit`` writes, named ``srcgrad_numba_*``), or from the
implementation of a reduction that ``numba_reductions`` compiles in each process and the
derivative links in, to a registered helper is a call of the helper's own compiled code, not a
copy of the helper linked into the module (the benchmark MLP's two reductions then compiled in
0.04-0.05 s instead of 0.14-0.21 s each: its first call 1.08-1.17 s of CPU time instead of
1.44-1.69 s; benchmarks/RESULTS.md, session 10). numba links every function a function calls
into its module and optimizes and compiles the whole again: the benchmark MLP's module held 75
functions, most of them srcgrad's helpers already compiled (and cached) on their own; without
them it holds 10, its first call took 21-40% less CPU time, its calls as fast, and a later
process loads it 0.05-0.13 s slower, helper by helper (benchmarks/RESULTS.md, session 9). Any
other caller (a helper, a user's function) links the helper as numba does.

The compiled derivative refers to the helper by the helper's symbol. When numba's cache loads
the derivative in another process, :func:`loaded` (in the compiled result's reload list, run
before the derivative's code is loaded) first compiles or loads the helper for the same argument
types, so the symbol is defined; if the helper meanwhile got another symbol (its cache entry
written again by another process, from the same sources: the derivative's module is named after
srcgrad's sources), the old name is made an alias of the new code. Where numba lacks what this
relies on, nothing is installed and numba links as always.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

#: (module, qualified name) of each helper called unlinked -> its dispatcher
SEPARATE: dict[tuple[str, str], Any] = {}

# what the symbols of the functions calling the helpers unlinked hold (numba mangles module and
# function name): the derivative modules', and numba_reductions' implementations of a reduction
# (compiled in each process that types one, and linked into the derivative)
_CALLERS = ("srcgrad_numba_", "_cached_reduction")


def register(dispatcher: Any) -> None:
    """``dispatcher`` (a helper compiled on its own and cached) is called unlinked by
    derivative modules."""
    fn = dispatcher.py_func
    SEPARATE[(fn.__module__, fn.__qualname__)] = dispatcher


def loaded(module: str, qualname: str, key: tuple, symbol: str) -> None:
    """The helper ``module.qualname`` compiled (or loaded from numba's cache) for the argument
    types ``key``, its code reachable as ``symbol``."""
    from llvmlite import binding
    from numba.core.registry import cpu_target

    dispatcher = getattr(importlib.import_module(module), qualname)
    dispatcher.compile(key)
    result = dispatcher.overloads[tuple(key)]
    if result.fndesc.mangled_name == symbol:
        return
    engine = cpu_target.target_context.codegen()._engine
    if not engine.is_symbol_defined(symbol):
        address = result.library.get_pointer_to_function(result.fndesc.mangled_name)
        binding.add_symbol(symbol, address)


def _reloads(dispatcher: Any, fndesc: Any) -> Any:
    """The call of :func:`loaded` that makes ``fndesc``'s symbol defined in a later process."""
    key = next(k for k, r in dispatcher.overloads.items()
               if r.fndesc.mangled_name == fndesc.mangled_name)
    return functools.partial(loaded, fndesc.modname, fndesc.qualname, tuple(key),
                             fndesc.mangled_name)


def _separate(fndesc: Any, libs: tuple, dispatcher: Any) -> Any:
    """The lowering of a call of the helper ``fndesc``: unlinked from a derivative's module
    (with its reload), linked from anything else."""
    from numba.core import imputils

    call = imputils.user_function(fndesc, ())
    reload: list = []

    def imp(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        if any(caller in builder.function.name for caller in _CALLERS):
            if not reload:
                reload.append(_reloads(dispatcher, fndesc))
            context.active_code_library._reload_init.add(reload[0])
        else:
            context.add_linking_libs(libs)
        return call(context, builder, sig, args)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp


def install() -> None:
    """Calls of the registered helpers lowered by :func:`_separate` from now on (once)."""
    from numba.core.registry import cpu_target

    context = cpu_target.target_context
    insert = context.insert_user_function
    if getattr(insert, "srcgrad_linking", False) or not hasattr(context, "_defns"):
        return

    def insert_user_function(func: Any, fndesc: Any, libs: Any = ()) -> None:
        dispatcher = SEPARATE.get((fndesc.modname, fndesc.qualname))
        if dispatcher is None:
            return insert(func, fndesc, libs)
        imp = _separate(fndesc, tuple(libs), dispatcher)
        context._defns[func].append(imp, imp.signature)
        return None

    insert_user_function.srcgrad_linking = True
    context.insert_user_function = insert_user_function
