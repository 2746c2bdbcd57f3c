"""The first call of ``grad(f, backend="numba")`` on a benchmark workload, in this process, then
its steady state.

numba is started first by a cached function of its own (numba's start is not srcgrad's); the
first call (transform + lowering + numba's compile, or the load from numba's cache) is timed in
wall and CPU time (``time.process_time``), its gradient compared with the Python backend's, and
the steady state is the median thread CPU time of 40 calls, three rounds. Run it in a fresh
process per measurement, with ``SRCGRAD_CACHE_DIR`` a new directory for a cold first call (the
same one again for a second process with a warm cache), and ``SRCGRAD_NUMBA_OPT`` for an LLVM
optimization level of the derivative's module:

    SRCGRAD_CACHE_DIR=$(mktemp -d) OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        PYTHONPATH=$PWD python benchmarks/numba_first_call.py rnn
"""

import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@numba.njit(cache=True)
def _started(x):
    return x + 1.0


def main(name):
    _started(1.0)
    import workloads

    import srcgrad

    wl = next(w for w in workloads.WORKLOADS if w.name == name)
    inputs = wl.make_inputs(0)
    args = [inputs[a] for a in wl.arg_names()]
    wall, cpu = time.perf_counter(), time.process_time()
    g = srcgrad.grad(wl.forward, wrt=wl.wrt_positions(), backend="numba")
    got = g(*args)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # the fully optimized code compiled behind the first call (emit/numba_tiers.py): waited for
    # here, its CPU time (all threads) counted from the first call's end
    from srcgrad.emit import numba_tiers

    behind = time.process_time()
    numba_tiers.settle()
    behind = time.process_time() - behind
    want = srcgrad.grad(wl.forward, wrt=wl.wrt_positions())(*args)
    pairs = zip(got, want) if isinstance(got, tuple) else [(got, want)]
    error = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in pairs)

    def median(n=40):
        times = []
        for _ in range(n):
            start = time.thread_time()
            g(*args)
            times.append(time.thread_time() - start)
        return float(np.median(times)) * 1e6

    steady = ", ".join(f"{median():.0f}" for _ in range(3))
    level = os.environ.get("SRCGRAD_NUMBA_OPT", "unset")
    print(f"{name} SRCGRAD_NUMBA_OPT={level}: first call {wall:.2f}s wall {cpu:.2f}s cpu; "
          f"full code behind it {behind:.2f}s cpu; "
          f"max abs error {error:.1e}; steady [thread CPU us] {steady}; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
