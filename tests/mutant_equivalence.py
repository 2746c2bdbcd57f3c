"""Sort surviving mutants of the runtime helpers into equivalent ones and result-changing ones.

Run inside mutmut's ``mutants/`` directory after ``mutmut run`` (docs/development.md):

    cd mutants && python ../tests/mutant_equivalence.py SURVIVORS.txt

``SURVIVORS.txt`` holds the names ``mutmut results`` lists as survived. For each, the mutated
helper and the original are called on the same few thousand random arguments (shapes with size-1
axes, leading batch axes, 0-d arrays, Python and NumPy scalars, float32 and integer arrays, every
axis/keepdims combination the helper takes): a mutant is *result-changing* if any call gives a
different type, dtype, shape or value, or raises where the original does not (or the reverse);
otherwise it is listed as *equivalent*, with the argument kinds it was tried on. A
result-changing survivor needs a test; an equivalent one is a fast path whose general branch
computes the same (or a message text).
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys

import numpy as np

rng = np.random.default_rng(0)
SHAPES = [(), (1,), (3,), (1, 1), (2, 1), (1, 3), (2, 3), (2, 1, 3), (1, 2, 1), (2, 2, 3)]
DTYPES = [np.float64, np.float32, np.int64]


def _array(shape, dtype=np.float64):
    a = rng.normal(size=shape) * 3
    return a.astype(dtype) if shape else dtype(a)


def _numbers():
    yield 1.5
    yield np.float64(-0.5)
    yield np.array(2.0)


def cases_unbroadcast():
    for xs, gs in itertools.product(SHAPES, SHAPES):
        for lead in [(), (2,), (2, 1)]:
            full = lead + gs
            try:
                np.broadcast_shapes(full, xs)
            except ValueError:
                continue
            for dtype in DTYPES:
                g = _array(np.broadcast_shapes(full, xs), dtype)
                yield (g, _array(xs))
                yield (g, _array(xs).tolist() if xs else float(_array(xs)))
    for xs, gs in itertools.product(SHAPES, SHAPES):
        # a cotangent that was broadcast itself: smaller than x in some axes
        try:
            np.broadcast_shapes(gs, xs)
        except ValueError:
            continue
        yield (_array(gs), _array(xs))
    for n in _numbers():
        yield (n, 2.0)
        yield (n, np.ones((2, 3)))
    yield ([1.0], [2.0])
    yield (np.ones((3, 2)), [1.0, 2.0])


def _reductions():
    for shape in SHAPES[1:]:
        axes = [None] + list(range(-len(shape), len(shape)))
        if len(shape) > 1:
            axes.append((0, len(shape) - 1))
        for axis, keep in itertools.product(axes, [False, True]):
            yield shape, axis, keep


def cases_unreduce():
    for shape, axis, keep in _reductions():
        for dtype in DTYPES:
            x = _array(shape, dtype)
            dy = np.sum(_array(shape), axis=axis, keepdims=keep)
            yield (dy, x, axis, keep)
            yield (np.asarray(dy).astype(dtype), x, axis, keep)
            if axis is None and not keep:
                yield (float(dy), x, axis, keep)
        x = _array(shape)
        dy = np.asarray(np.sum(x, axis=axis, keepdims=keep))
        if dy.ndim >= 2:
            yield (np.asfortranarray(dy), x, axis, keep)  # not C-contiguous
    for n in _numbers():
        yield (n, 1.5, None, False)
        yield (n, np.float64(2.0), None, False)


cases_mean_grad = cases_unreduce


def cases_matmul():
    pairs = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((3,), (2, 3, 4)),
             ((2, 3, 4), (4,)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
             ((3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)), ((1, 3), (3, 1))]
    for sa, sb in pairs:
        for dtype in DTYPES:
            a, b = _array(sa, dtype), _array(sb, dtype)
            dy = _array(np.shape(a @ b))
            yield (dy, a, b)


CASES = {
    "unbroadcast": cases_unbroadcast,
    "unreduce": cases_unreduce,
    "mean_grad": cases_mean_grad,
    "matmul_vjp_left": cases_matmul,
    "matmul_vjp_right": cases_matmul,
}


# Private helpers are tried through the public ones that call them.
CALLERS = {"_broadcast_view": ["unreduce", "mean_grad"], "_expand": ["unreduce", "mean_grad"],
           "_ndim": ["matmul_vjp_left", "matmul_vjp_right"],
           "_swap": ["matmul_vjp_left", "matmul_vjp_right"]}


def _outcome(fn, args, mutant):
    os.environ["MUTANT_UNDER_TEST"] = mutant
    try:
        with np.errstate(all="ignore"):
            out = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    except Exception as e:  # noqa: BLE001 - the kind of failure is the outcome
        return ("raises", type(e).__name__), None
    finally:
        os.environ["MUTANT_UNDER_TEST"] = ""
    arr = np.asarray(out)
    writeable = arr.flags.writeable if isinstance(out, np.ndarray) else None
    return (type(out).__name__, arr.dtype.str, arr.shape, writeable), arr


def _same(one, other):
    (kind1, arr1), (kind2, arr2) = one, other
    if kind1 != kind2:
        return False
    # values equal up to rounding: a fast path and the general branch may round differently
    return arr1 is None or np.allclose(arr1, arr2, rtol=1e-12, atol=1e-12, equal_nan=True)


def classify(name):
    module_name, _, rest = name.partition(".x_")
    function = rest.split("__mutmut_")[0]
    module = importlib.import_module(module_name)
    tried = 0
    for public in CALLERS.get(function, [function]):
        fn = getattr(importlib.import_module("srcgrad.runtime"), public)
        for args in CASES[public]():
            tried += 1
            if not _same(_outcome(fn, args, ""), _outcome(fn, args, name)):
                shapes = [np.shape(a) if not isinstance(a, list) else "list" for a in args]
                dtypes = [getattr(a, "dtype", type(a).__name__) for a in args]
                return "result-changing", f"{public} differs at {shapes} {dtypes}"
    del module
    return "equivalent", f"same on {tried} argument sets"


def main(path):
    names = [line.split(":")[0].strip() for line in open(path) if "survived" in line]
    for name in names:
        function = name.partition(".x_")[2].split("__mutmut_")[0]
        if function not in CASES and function not in CALLERS:
            print(f"{name}: no cases for {function}")
            continue
        verdict, why = classify(name)
        print(f"{name}: {verdict} ({why})")


if __name__ == "__main__":
    main(sys.argv[1])
