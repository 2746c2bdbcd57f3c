"""srcgrad's gradient on a Dask cluster: time per gradient and peak memory per worker.

The workload is the logistic regression of examples/distributed_logistic_regression.py (loss
with an L2 penalty, 16 features), on a data set generated chunk by chunk on the workers, so it
never exists in one process. For each data size and each number of workers (1 and 2, one thread
each, a fresh LocalCluster per configuration), it reports the median wall time of one gradient
(computed on the cluster) for

- srcgrad: ``grad(loss)`` called on the Dask arrays, a lazy graph that is then computed;
- hand: the same gradient written by hand with dask.array (``X.T @ (sigmoid(z) - y) / n``),

the ratio srcgrad / hand, and the peak resident memory of each worker process (its ``ru_maxrss``
at the end, which includes the ~100 MB of an idle worker) against the data size and the memory
limit. Both gradients are checked equal first.

Run: python benchmarks/dask_cluster.py [--rows 500000,2000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

import dask
import numpy as np
from dask.distributed import Client, LocalCluster

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))

from distributed_logistic_regression import dataset, loss  # noqa: E402

from srcgrad import grad  # noqa: E402


def hand_gradient(w, b, X, y):
    """The gradient of ``loss`` by hand, in dask.array."""
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    r = (p - y) / X.shape[0]
    return X.T @ r + 2e-3 * w, r.sum()


def _peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(rows, workers, repeat, limit):
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit=limit,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        X, y, _ = dataset(rows, chunk=250_000)
        w, b = np.linspace(-0.2, 0.2, X.shape[1]), 0.1
        dloss = grad(loss, wrt=("w", "b"))
        ours = dask.compute(*dloss(w, b, X, y))
        theirs = dask.compute(*hand_gradient(w, b, X, y))
        for a, c in zip(ours, theirs):
            np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-14)
        times = {"srcgrad": [], "hand": []}
        for _ in range(repeat):
            for name, fn in (("srcgrad", dloss), ("hand", hand_gradient)):
                start = time.perf_counter()
                dask.compute(*fn(w, b, X, y))
                times[name].append(time.perf_counter() - start)
        peaks = sorted(client.run(_peak_rss_mb).values())
        return {k: statistics.median(v) for k, v in times.items()}, peaks, X.nbytes / 1e6
    finally:
        client.close()
        cluster.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="500000,2500000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", default="300MB", help="memory limit of each worker")
    args = parser.parse_args()
    print(f"worker memory limit {args.limit}; median of {args.repeat} gradients each")
    print("| rows | data MB | workers | srcgrad s | hand s | srcgrad/hand "
          "| peak RSS per worker MB |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    for rows in (int(r) for r in args.rows.split(",")):
        for workers in (1, 2):
            t, peaks, mb = measure(rows, workers, args.repeat, args.limit)
            print(f"| {rows:,} | {mb:.0f} | {workers} | {t['srcgrad']:.2f} | {t['hand']:.2f} | "
                  f"{t['srcgrad'] / t['hand']:.2f} | {', '.join(f'{p:.0f}' for p in peaks)} |",
                  flush=True)


if __name__ == "__main__":
    main()
