"""What a derivative pays per call for staying current and for naming the user's line on errors.

    python benchmarks/guard_overhead.py

1. The statements alone: a function that only returns its argument, bare; with the staleness
   guard's test for one inlined name (a global read and ``is not`` a closure cell); for two names
   of another module (module attribute reads); and with its body inside the ``try``/``except``
   that adds the error note (CPython 3.11+: free unless something raises).
2. A real derivative: ``grad`` of a scalar function that inlines a helper, as generated, against
   the same text compiled without the guard and without the handler.

CPU time (``time.process_time``), best of many repeats: the machine may be shared.
"""

import pathlib
import sys
import tempfile
import time
import timeit

import srcgrad
from srcgrad.emit import guard, notes
from srcgrad.emit.compile import compile_function
from srcgrad.frontend.source import GENERATED_SOURCE

HELPERS = "def inner(v):\n    return v * v\n\n\ndef outer(v):\n    return inner(v)\n"


def act(v):
    return v * v


def f(x):
    return act(x) * 3.0


def best(fn, number, repeat):
    times = timeit.repeat(lambda: fn(2.0), number=number, repeat=repeat, timer=time.process_time)
    return min(times) / number * 1e9


def statements_alone(helpers):
    inlined_act, inlined_outer, inlined_inner = act, helpers.outer, helpers.inner
    note = print

    def bare(x):
        return x

    def one_name(x):
        if act is not inlined_act:
            return None
        return x

    def two_module_names(x):
        if helpers.outer is not inlined_outer or helpers.inner is not inlined_inner:
            return None
        return x

    def in_try(x):
        try:
            return x
        except Exception as error:
            note(error)
            raise

    t = {fn.__name__: best(fn, 1_000_000, 25) for fn in (bare, one_name, two_module_names, in_try)}
    extra = {k: v - t["bare"] for k, v in t.items()}
    print(f"statements alone: bare {t['bare']:.1f} ns; guard, one name "
          f"{extra['one_name']:+.1f} ns; guard, two names of another module "
          f"{extra['two_module_names']:+.1f} ns; try/except {extra['in_try']:+.1f} ns")


def variant(fn, keep_guard, keep_handler):
    text = GENERATED_SOURCE[fn.__code__][0]
    if not keep_guard:
        text = guard.without_guard(text, fn)
    cells = {n: c.cell_contents for n, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())}
    cells.pop(notes.NOTE, None)
    lines = notes.LINES[fn.__code__] if keep_handler else None
    return compile_function(text, fn.__name__, f, cells, lines)


def real_derivative():
    d = srcgrad.grad(f)
    plain = variant(d, False, False)
    assert d(2.0) == plain(2.0)
    t = {"plain": best(plain, 200_000, 15), "generated": best(d, 200_000, 15)}
    print(f"grad of a scalar function inlining one helper: without guard and handler "
          f"{t['plain']:.0f} ns, as generated {t['generated']:.0f} ns "
          f"({t['generated'] - t['plain']:+.0f} ns)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "guard_overhead_helpers.py").write_text(HELPERS)
        sys.path.insert(0, tmp)
        import guard_overhead_helpers

        print(sys.version.split()[0])
        for _ in range(2):
            statements_alone(guard_overhead_helpers)
            real_derivative()
