"""Logistic regression on a data set larger than any worker's memory, on a Dask cluster.

The loss is ordinary NumPy code. Called on chunked ``dask.array`` data, srcgrad's generated
gradient is itself a lazy Dask graph (every runtime helper dispatches to Dask instead of
converting to NumPy), so each gradient step streams the data through the workers chunk by chunk.
The data set is generated chunk by chunk on the workers and never exists in one process: at the
default size it is 205 MB, each of the two workers may hold 300 MB (an idle worker process
already takes about 110 MB of it).

Run: python examples/distributed_logistic_regression.py [rows]
(needs the Dask extra: pip install -e ".[test]")
"""

import sys
import time

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

from srcgrad import grad

D = 16


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


def main(rows=1_600_000):
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="300MB",
                           dashboard_address=None)
    client = Client(cluster)
    X, y, w_true = dataset(rows)
    print(f"data: {X.nbytes / 1e6:.0f} MB in {X.npartitions} chunks; "
          f"each of 2 workers may hold 300 MB")

    dloss = grad(loss, wrt=("w", "b"))
    w, b = np.zeros(D), 0.0
    first = None
    for step in range(3):
        start = time.perf_counter()
        value, dw, db = dask.compute(loss(w, b, X, y), *dloss(w, b, X, y))
        first = value if first is None else first
        w, b = w - 4.0 * dw, b - 4.0 * db
        print(f"step {step}  loss {value:.5f}  ({time.perf_counter() - start:.2f} s)")

    # the lazy gradient against the same gradient on NumPy arrays, on a subsample
    Xs, ys = dask.compute(X[:20_000], y[:20_000])
    lazy = dask.compute(*dloss(w, b, X[:20_000], y[:20_000]))
    eager = dloss(w, b, Xs, ys)
    for got, want in zip(lazy, eager):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    print("gradient on a 20,000-row subsample: equal to NumPy's")
    cosine = w @ w_true / np.linalg.norm(w) / np.linalg.norm(w_true)
    print(f"cosine(w, w_true) = {cosine:.3f}")
    peaks = sorted(client.run(_peak_rss_mb).values())
    print("peak memory of the workers: " + ", ".join(f"{p:.0f} MB" for p in peaks))
    client.close()
    cluster.close()
    if not (value < 0.85 * first and cosine > 0.95):
        raise SystemExit(f"fit failed: loss {first:.4f} -> {value:.4f}, cosine {cosine:.3f}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
