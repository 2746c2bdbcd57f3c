"""Transform time with the disk cache: ``grad(f)`` in a fresh process, cold and warm.

    python benchmarks/transform_cache.py [--runs 7]

Each measurement is a new Python process that imports srcgrad and the module defining the
function, then times ``srcgrad.grad(f, wrt=...)`` alone (the import is timed separately).
"cold" runs with an empty cache directory (the derivative is generated and stored), "warm" with
the directory the cold run filled, "off" with ``SRCGRAD_CACHE=0``. Medians over ``--runs``
processes are printed, wall time and the process's CPU time (on a loaded machine the second is
the one to read). Bytecode may be written (``PYTHONDONTWRITEBYTECODE`` is unset for the
processes), as it is for an installed package. The function is ``model_loss`` below: 20
lines, a helper, a loop and a branch.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap

MODEL = textwrap.dedent('''\
    import numpy as np


    def layer(x, W, b):
        return np.tanh(x @ W + b)


    def model_loss(W1, b1, W2, b2, X, Y, decay=1e-3):
        h = layer(X, W1, b1)
        logits = h @ W2 + b2
        z = logits - np.max(logits, axis=1, keepdims=True)
        logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
        loss = -np.sum(Y * logp) / X.shape[0]
        penalty = 0.0
        for W in (W1, W2):
            penalty = penalty + np.sum(W * W)
        if decay > 0:
            loss = loss + decay * penalty
        margin = np.max(logp, axis=1)
        spread = np.mean(margin * margin)
        loss = loss + 1e-4 * spread
        scale = np.sqrt(1.0 + np.sum(b1 * b1))
        loss = loss * scale
        entropy = -np.sum(np.exp(logp) * logp) / X.shape[0]
        loss = loss + 1e-3 * entropy
        return loss
''')

PROBE = textwrap.dedent('''\
    import json, sys, time
    t0, c0 = time.perf_counter(), time.process_time()
    import srcgrad
    t1, c1 = time.perf_counter(), time.process_time()
    import model
    t2, c2 = time.perf_counter(), time.process_time()
    df = srcgrad.grad(model.model_loss, wrt=(0, 1, 2, 3))
    t3, c3 = time.perf_counter(), time.process_time()
    print(json.dumps({"import_s": t1 - t0, "grad_s": t3 - t2,
                      "import_cpu_s": c1 - c0, "grad_cpu_s": c3 - c2}))
''')


def run(directory, env, runs):
    out = []
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-c", PROBE], cwd=directory, env=env, check=True,
            capture_output=True, text=True,
        )
        out.append(json.loads(result.stdout))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="srcgrad-cache-bench-")
    try:
        with open(os.path.join(work, "model.py"), "w") as handle:
            handle.write(MODEL)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, PYTHONPATH=root, SRCGRAD_CACHE_DIR=os.path.join(work, "cache"),
                   PYTHONPYCACHEPREFIX=os.path.join(work, "pycache"))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        run(work, dict(env, SRCGRAD_CACHE="0"), 1)  # bytecode written once
        cold = []
        for _ in range(args.runs):
            shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
            cold += run(work, env, 1)
        warm = run(work, env, args.runs)
        off = run(work, dict(env, SRCGRAD_CACHE="0"), args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"grad(model_loss) in a fresh process, median of {args.runs} processes "
          f"(wall time; CPU time of the process in parentheses)")
    for label, rows in (("cold cache", cold), ("warm cache", warm), ("cache off", off)):
        ms = {k: statistics.median(r[k] for r in rows) * 1e3 for k in rows[0]}
        print(f"  {label:10s}  grad() {ms['grad_s']:8.2f} ms ({ms['grad_cpu_s']:7.2f})"
              f"   import srcgrad {ms['import_s']:6.1f} ms ({ms['import_cpu_s']:6.1f})")


if __name__ == "__main__":
    main()
