"""Two trees of srcgrad against each other and the hand-written gradient, in one process.

    python benchmarks/ab.py --old /tmp/snap-main [--new .] [--workloads mlp,logreg,rnn]
        [--rounds 200]

The ``srcgrad`` package of ``--old`` (a checkout or an export: ``git archive``) is copied to a
temporary folder as ``srcgrad_old`` (srcgrad imports its own modules relatively), the one of
``--new`` is imported as ``srcgrad``; both run their own generated code on their own runtime
helpers. For each workload, each tree's ``grad`` is called 12 times first (its code specialized
to the arguments' kinds from the 8th call, as every benchmark call then runs); their gradients
are compared bit for bit. Then rounds of CPU time (``time.process_time``): each round times the
hand gradient, the old and the new derivative, in a new shuffled order, each a loop count
calibrated to about 10 ms, with the garbage collector off; the medians of the per-round ratios
are printed. A loaded machine's drift hits the three alike within a round (see the README's
Method, item 5).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import shutil
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ.setdefault("SRCGRAD_CACHE", "0")  # (the two trees would share one disk cache)

HERE = pathlib.Path(__file__).resolve().parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="a tree whose srcgrad/ is the old code")
    parser.add_argument("--new", default=str(HERE.parent), help="the new tree (this checkout)")
    parser.add_argument("--workloads", default="mlp,logreg,rnn")
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)

    scratch = tempfile.mkdtemp(prefix="srcgrad-ab-")
    shutil.copytree(pathlib.Path(args.old) / "srcgrad", pathlib.Path(scratch) / "srcgrad_old")
    sys.path[:0] = [str(pathlib.Path(args.new).resolve()), scratch, str(HERE)]
    import numpy as np
    import srcgrad_old
    import workloads

    import srcgrad

    print(f"old: {args.old}  new: {srcgrad.__file__}  rounds: {args.rounds}")
    np.ones(30 * 2**20 // 8)  # the allocator settled, as run.py does (README, Method, 6)
    by_name = {w.name: w for w in workloads.WORKLOADS}
    try:
        for name in args.workloads.split(","):
            print(_compare(by_name[name], srcgrad_old, srcgrad, args.rounds, np), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _compare(wl, old, new, rounds, np):
    args = list(wl.make_inputs().values())
    wrt = wl.wrt[0] if len(wl.wrt) == 1 else wl.wrt
    calls = {"hand": lambda: wl.hand_grad(*args)}
    for label, module in (("old", old), ("new", new)):
        df = module.grad(wl.forward, wrt=wrt)
        for _ in range(12):
            df(*args)
        calls[label] = lambda df=df: df(*args)
    got = [np.atleast_1d(g) for g in _tuple(calls["new"]())]
    ref = [np.atleast_1d(g) for g in _tuple(calls["old"]())]
    same = all(a.shape == b.shape and np.array_equal(a, b) for a, b in zip(got, ref))
    loops = _calibrated(calls["hand"])
    times = {k: [] for k in calls}
    order = list(calls)
    import gc

    gc.disable()
    try:
        for _ in range(rounds):
            random.shuffle(order)
            for k in order:
                fn = calls[k]
                t0 = time.process_time()
                for _ in range(loops):
                    fn()
                times[k].append((time.process_time() - t0) / loops)
    finally:
        gc.enable()
    t = {k: np.array(v) for k, v in times.items()}

    def ratio(a, b):
        return float(np.median(t[a] / t[b]))

    return (f"{wl.name:10s} bits same: {same}  hand {np.median(t['hand']) * 1e6:8.1f} us  "
            f"old/hand {ratio('old', 'hand'):.4f}  new/hand {ratio('new', 'hand'):.4f}  "
            f"new/old {ratio('new', 'old'):.4f}  ({loops} calls a round)")


def _tuple(result):
    return result if isinstance(result, tuple) else (result,)


def _calibrated(fn):
    loops = 1
    while True:
        t0 = time.process_time()
        for _ in range(loops):
            fn()
        if time.process_time() - t0 > 0.01:
            return loops
        loops *= 2


if __name__ == "__main__":
    main()
