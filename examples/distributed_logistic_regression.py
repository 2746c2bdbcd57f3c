"""Logistic regression on a data set larger than any worker's memory, on a Dask cluster.

The loss is ordinary NumPy code. Called on chunked ``dask.array`` data, srcgrad's generated
gradient is itself a lazy Dask graph (every runtime helper dispatches to Dask instead of
converting to NumPy), so each gradient step streams the data through the workers chunk by chunk.
The data set is generated chunk by chunk on the workers and never exists in one process: at the
default size it is 205 MB, each of the two workers may hold 200 MB (an idle worker process
already takes about 90 MB of it).

The run never hangs: a step that takes more than STEP_SECONDS, a worker that dies or is
restarted (a worker over its memory limit is), or a whole run longer than RUN_SECONDS ends it
with an error.

Run: python examples/distributed_logistic_regression.py [rows]
(needs the Dask extra: pip install -e ".[test]")
"""

import faulthandler
import sys
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster, wait

from srcgrad import grad

D = 16
LIMIT = "200MB"  # per worker
STEP_SECONDS = 120  # a step takes about 4 s
RUN_SECONDS = 240  # cluster start and shutdown included; about 30 s on an idle machine


def loss(w, b, X, y):
    z = X @ w + b
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.mean(softplus - y * z) + 1e-3 * np.sum(w**2)


def dataset(rows, chunk=100_000, seed=0):
    """Features and labels of a known logistic model, generated lazily in chunks."""
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, D), chunks=(chunk, D))
    w_true = np.linspace(-1.0, 1.0, D)
    noise = rng.logistic(size=rows, chunks=chunk)
    y = (X @ w_true + 0.5 > noise).astype(float)
    return X, y, w_true


def _peak_rss_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def compute(client, *values):
    """``dask.compute(*values)`` on the cluster; an error after STEP_SECONDS (``TimeoutError``)
    or if a worker died (``KilledWorker``: the scheduler allows no task to be retried)."""
    futures = client.compute(list(values))
    wait(futures, timeout=STEP_SECONDS)
    return client.gather(futures)


def check_workers(client, started):
    """Fail if a worker was restarted: one over its memory limit is, and its tasks run again."""
    now = set(client.scheduler_info()["workers"])
    if now != started:
        raise SystemExit(f"a worker died or was restarted: {sorted(started)} -> {sorted(now)}")


def main(rows=1_600_000):
    # the last resort: whatever hangs (the cluster's start or close included), print where and
    # exit with an error; the workers exit with this process
    faulthandler.dump_traceback_later(RUN_SECONDS, exit=True)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=LIMIT,
                               dashboard_address=None)
        client = Client(cluster)
        try:
            fit(client, rows)
        finally:
            client.close()
            cluster.close()
    faulthandler.cancel_dump_traceback_later()


def fit(client, rows):
    started = set(client.scheduler_info()["workers"])
    idle = sorted(client.run(_peak_rss_mb).values())
    X, y, w_true = dataset(rows)
    print(f"data: {X.nbytes / 1e6:.0f} MB in {X.npartitions} chunks; "
          f"each of 2 workers may hold {LIMIT[:-2]} MB")

    dloss = grad(loss, wrt=("w", "b"))
    w, b = np.zeros(D), 0.0
    first = None
    for step in range(3):
        start = time.perf_counter()
        value, dw, db = compute(client, loss(w, b, X, y), *dloss(w, b, X, y))
        check_workers(client, started)
        first = value if first is None else first
        w, b = w - 4.0 * dw, b - 4.0 * db
        print(f"step {step}  loss {value:.5f}  ({time.perf_counter() - start:.2f} s)")

    # the lazy gradient against the same gradient on NumPy arrays, on a subsample
    Xs, ys = compute(client, X[:20_000], y[:20_000])
    lazy = compute(client, *dloss(w, b, X[:20_000], y[:20_000]))
    eager = dloss(w, b, Xs, ys)
    for got, want in zip(lazy, eager):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    print("gradient on a 20,000-row subsample: equal to NumPy's")
    cosine = w @ w_true / np.linalg.norm(w) / np.linalg.norm(w_true)
    print(f"cosine(w, w_true) = {cosine:.3f}")
    check_workers(client, started)
    peaks = sorted(client.run(_peak_rss_mb).values())
    print("memory of the workers, idle: " + ", ".join(f"{p:.0f} MB" for p in idle)
          + "; at their peak: " + ", ".join(f"{p:.0f} MB" for p in peaks))
    if not (value < 0.85 * first and cosine > 0.95):
        raise SystemExit(f"fit failed: loss {first:.4f} -> {value:.4f}, cosine {cosine:.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
