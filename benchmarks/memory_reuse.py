"""Issue 17: memory (binomial checkpointing) and reuse (pullback, the reverse Jacobian).

    python benchmarks/memory_reuse.py                 # n = 1e4, 1e5 (about 10 minutes loaded)
    python benchmarks/memory_reuse.py --sizes 1e4     # one size
    python benchmarks/memory_reuse.py --sizes 1e6     # the million-step pendulum (long)

1. The damped pendulum of ``workloads.py`` with ``n`` explicit-Euler steps (``n`` a parameter),
   gradient w.r.t. (c, L): CPU time (median of ``--repeat`` rounds, the rows of a size called in
   turn in each round, no tracing) and peak extra memory
   of the gradient call (``tracemalloc``, a separate call), without checkpointing, with
   ``checkpoint="auto", max_memory="50MB"`` and with ``checkpoint=100``; the steps the schedule
   runs again besides the primal (``recomp``, replayed from the snapshots the loop keeps),
   against the binomial optimum (the offline schedule whose first sweep is the primal) for its
   segments (``opt(seg)``, segments of ``segment_width(n, state)`` steps, in steps) and for
   single steps with the same snapshots and no segment (``opt(step)``, up to 1e5). The same
   loop as a ``while`` loop (trip count unknown at entry: the online schedule) in a second
   table.
2. The Jacobian of ``tanh(A @ x)``, A 100x1000: ``jacobian(f, method="rev")`` (one primal, 100
   ``back``) against 100 ``vjp`` calls.
3. A second ``back(seed)`` of ``pullback`` against one ``vjp`` call, on the pendulum (n = 1e4),
   the MLP of ``workloads.py`` and ``relax`` (n = 1e4 element writes the sweep restores in
   place), and on the pendulum with ``checkpoint=100`` and ``checkpoint=10`` (both
   checkpointed); a second ``jvp_fn(tangent)`` of ``linearize`` against one ``jvp`` call
   (pendulum).
   The two are called in turn (``paired_times``): the medians of each, and the median of the
   ratios of the calls made side by side.

Only srcgrad runs here (the peers have no binomial checkpointing or reusable pullback to compare
on these exact terms; ``run.py`` compares them on the gradients themselves).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import srcgrad
except ImportError:  # run from a checkout
    sys.path.insert(0, os.path.dirname(HERE))
    import srcgrad
import workloads  # noqa: E402

from srcgrad.checkpoint import snapshots_for  # noqa: E402
from srcgrad.schedule import (  # noqa: E402
    binomial_advances,
    first_sweep,
    interval_plan,
    online_intervals,
    replayed_advances,
    segment_width,
)


def pendulum(c, L, theta0, omega0, n):
    g = 9.81
    dt = 0.01
    theta = theta0
    omega = omega0
    for _ in range(n):
        alpha = -(g / L) * np.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta


def pendulum_until(c, L, theta0, omega0, n):
    """The same loop as a ``while`` loop: its trip count is not known when it starts."""
    g = 9.81
    dt = 0.01
    theta = theta0
    omega = omega0
    t = 0
    while t < n:
        alpha = -(g / L) * np.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
        t = t + 1
    return theta * theta


def schedule_counts(n, k, entry_state, online):
    """(trips recomputed by the schedule that ran, the binomial optimum in segments, in single
    trips): the optimum is the offline schedule of n trips with k snapshots whose first sweep is
    the primal (it recomputes binomial_advances less the primal's advances to its last
    snapshot)."""
    w = segment_width(n, entry_state)
    units = -(-n // w)
    sweep = first_sweep(units, k)
    optimum_seg = binomial_advances(units, k) * w - min(sweep[-1] * w, n)
    optimum_step = binomial_advances(n, k) - first_sweep(n, k)[-1] if n <= 10**5 else None
    if online:
        intervals = online_intervals(n, k, entry_state)
    else:
        intervals = interval_plan([min(u * w, n) for u in sweep], n, entry_state)
        intervals = [(lo, hi, w) for lo, hi, _ in intervals]
    return replayed_advances(intervals, k), optimum_seg, optimum_step


def relax(x, n):
    """A sweep that restores the array it overwrites element by element (its pullback's back
    logs and rewinds those writes)."""
    y = x * 1.0
    m = 16
    for i in range(n):
        y[i % m] = 0.5 * (y[(i + 15) % m] + y[(i + 1) % m]) * np.cos(y[i % m])
    return np.sum(y * y)


def tanh_map(x, A):
    return np.tanh(A @ x)


def rel_err(g, w):
    """|g - w| / |w|; 0 where both are 0, inf where only the reference is."""
    if w == 0:
        return 0.0 if g == 0 else float("inf")
    return abs(g - w) / abs(w)


def median_time(fn, repeat):
    """The median CPU time (``time.process_time``) of ``repeat`` calls of ``fn``, and what the
    last call returned."""
    times = []
    for _ in range(repeat):
        t = time.process_time()
        result = fn()
        times.append(time.process_time() - t)
    return statistics.median(times), result


def paired_times(first, second, repeat):
    """The two functions called in turn ``repeat`` times (the load of a shared machine changes
    within a second: timed apart, their ratio moved by the load between the two blocks), in CPU
    time (``time.process_time``): the medians of each, and the median of the ratios of the
    calls made side by side."""
    a, b = [], []
    for _ in range(repeat):
        for fn, out in ((first, a), (second, b)):
            t = time.process_time()
            fn()
            out.append(time.process_time() - t)
    return statistics.median(a), statistics.median(b), statistics.median(
        x / y for x, y in zip(a, b))


def peak_memory(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def euler_table(sizes, repeat, checkpoints=(None, "auto", 100), loop="for"):
    """The rows of one loop form; per size the rows' gradients are timed in interleaved rounds
    (``time.process_time``: the CPU time of this process, which the load of a shared machine
    moves less than the wall clock), medians of ``repeat`` rounds."""
    # c = 0.09: Euler's amplitude then shrinks by exp(-41) over 1e6 steps (with c = 0.3 it shrank
    # by exp(-1092): theta underflowed to 0.0 and both gradients were exactly 0, the error 0/0)
    args = (0.09, 1.2, 1.0, 0.0)
    f = pendulum if loop == "for" else pendulum_until
    print(f"pendulum ({loop} loop), gradient wrt (c, L)")
    print(f"{'n':>8} {'checkpoint':>12} {'snapshots':>9} {'time':>9} {'x plain':>8} "
          f"{'peak MB':>8} {'recomp':>9} {'opt(seg)':>9} {'opt(step)':>9} {'rel err':>8}")
    dfs = [srcgrad.grad(f, wrt=("c", "L"), checkpoint=c, max_memory="50MB")
           for c in checkpoints]
    for df in dfs:  # steady state: the code specialized to the arguments' kinds (from the 8th
        for _ in range(8):  # call), a checkpointed step's specialized reverse (from 4096 trips)
            df(*args, 10)
        df(*args, 10**4)
    for n in sizes:
        times = [[] for _ in dfs]
        got = [None] * len(dfs)
        for _ in range(repeat):
            for k, df in enumerate(dfs):
                t = time.process_time()
                got[k] = df(*args, n)
                times[k].append(time.process_time() - t)
        base = statistics.median(times[0])
        for checkpoint, df, ts, g in zip(checkpoints, dfs, times, got):
            # (omega, theta) when the loop starts, and t for the while loop
            entry_state = (0.0, 1.0) if loop == "for" else (0.0, 0, 1.0)
            steps = range(n) if loop == "for" else None
            k = (snapshots_for(50 * 10**6, entry_state, steps) if checkpoint == "auto"
                 else checkpoint)
            t = statistics.median(ts)
            peak = peak_memory(lambda df=df: df(*args, n))  # noqa: B023
            err = max(rel_err(a, w) for a, w in zip(g, got[0]))
            counts = (schedule_counts(n, k, entry_state, loop != "for") if k
                      else (0, "-", "-"))
            print(f"{n:>8} {str(checkpoint):>12} {str(k if k else '-'):>9} {t:>8.3f}s "
                  f"{t / base:>7.2f}x {peak / 1e6:>8.1f} {counts[0]:>9} {counts[1]:>9} "
                  f"{str(counts[2]):>9} {err:>8.1e}", flush=True)


def jacobian_table(repeat):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((100, 1000)) / 30
    x = rng.standard_normal(1000)
    jac = srcgrad.jacobian(tanh_map, method="rev")
    vjp = srcgrad.vjp(tanh_map)
    J = jac(x, A)
    rows = np.stack([vjp(x, A, e) for e in np.eye(100)])
    assert np.allclose(J, rows, rtol=1e-13, atol=1e-15)
    t_jac, t_vjp, ratio = paired_times(lambda: jac(x, A),
                                       lambda: [vjp(x, A, e) for e in np.eye(100)], repeat)
    print("\nJacobian of tanh(A @ x), A 100x1000")
    print(f"jacobian(method='rev') {t_jac * 1e3:8.2f} ms   100 vjp calls {t_vjp * 1e3:8.2f} ms   "
          f"ratio {ratio:.2f}x")


def pullback_table(repeat):
    print("\nA second back(seed) of pullback against one vjp call")
    args = (0.09, 1.2, 1.0, 0.0, 10**4)
    mlp_args = tuple(workloads.mlp_inputs().values())
    relax_args = (np.linspace(-1.0, 1.0, 16), 10**4)
    for label, f, call_args, wrt, options in (
        ("pendulum n=1e4", pendulum, args, ("c", "L"), {}),
        ("mlp", workloads.mlp, mlp_args, (0, 1, 2, 3), {}),
        ("relax n=1e4", relax, relax_args, 0, {}),
        # back plays the schedule from the primal's snapshots: no first sweep, the rest again
        ("pendulum k=100", pendulum, args, ("c", "L"), {"checkpoint": 100}),
        ("pendulum k=10", pendulum, args, ("c", "L"), {"checkpoint": 10}),
    ):
        value, back = srcgrad.pullback(f, wrt=wrt, **options)(*call_args)
        vjp = srcgrad.vjp(f, wrt=wrt, **options)
        back(1.0)
        for g, w in zip(back(1.0), vjp(*call_args, 1.0)):
            assert np.allclose(g, w, rtol=1e-13, atol=1e-15)
        assert "_vjp(" not in srcgrad.source(srcgrad.pullback(f, wrt=wrt, **options))
        t_back, t_vjp, ratio = paired_times(lambda back=back: back(1.0),  # noqa: B023
                                            lambda f=vjp, a=call_args: f(*a, 1.0), repeat)
        print(f"{label:16} back {t_back * 1e3:8.2f} ms   vjp {t_vjp * 1e3:8.2f} ms   "
              f"ratio {ratio:.2f}x", flush=True)


def linearize_table(repeat):
    print("\nA second jvp_fn(tangent) of linearize against one jvp call")
    tangent = (1.0, 0.5)
    args = (0.09, 1.2, 1.0, 0.0, 10**4)
    value, jvp_fn = srcgrad.linearize(pendulum, wrt=("c", "L"))(*args)
    jvp = srcgrad.jvp(pendulum, wrt=("c", "L"))
    assert "_jvp(" not in srcgrad.source(srcgrad.linearize(pendulum, wrt=("c", "L")))
    jvp_fn(tangent)
    assert np.allclose(jvp_fn(tangent), jvp(*args, tangent)[1], rtol=1e-13, atol=1e-15)
    t_fn, t_jvp, ratio = paired_times(lambda: jvp_fn(tangent), lambda: jvp(*args, tangent),
                                      repeat)
    print(f"{'pendulum n=1e4':16} jvp_fn {t_fn * 1e3:8.2f} ms   jvp {t_jvp * 1e3:8.2f} ms   "
          f"ratio {ratio:.2f}x", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip", default="",
                        help="comma list of euler, while, jacobian, pullback, linearize")
    parser.add_argument("--checkpoints", default="none,auto,100",
                        help="the pendulum rows: comma list of none, auto and numbers (the first "
                             "is the reference, so it should be none)")
    opts = parser.parse_args()
    print(f"load average {os.getloadavg()}")
    skip = set(opts.skip.split(","))
    if "pullback" not in skip:
        pullback_table(max(opts.repeat, 15))
    if "linearize" not in skip:
        linearize_table(max(opts.repeat, 15))
    if "jacobian" not in skip:
        jacobian_table(opts.repeat)
    if "euler" not in skip:
        rows = [None if c == "none" else c if c == "auto" else int(c)
                for c in opts.checkpoints.split(",")]
        euler_table([int(float(s)) for s in opts.sizes.split(",")], opts.repeat, rows)
    if "while" not in skip:
        rows = [None if c == "none" else c if c == "auto" else int(c)
                for c in opts.checkpoints.split(",")]
        euler_table([int(float(s)) for s in opts.sizes.split(",")], opts.repeat, rows, "while")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
