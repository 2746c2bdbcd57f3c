"""Minimize the Rosenbrock function with SciPy's BFGS, given srcgrad's exact gradient as ``jac``.

The function is written as a Python loop over the coordinates, as one would write it by hand;
``grad(rosen)`` differentiates the loop. The gradient is checked against SciPy's own
``rosen_der``, and BFGS with it reaches the minimum at ``(1, ..., 1)``. With matplotlib
installed, the example saves ``rosenbrock.png``: the path BFGS takes in two dimensions and the
loss curve in twenty.

    python examples/rosenbrock.py
"""

import os
from pathlib import Path

import numpy as np
from scipy import optimize

from srcgrad import grad


def rosen(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


drosen = grad(rosen)


def minimize(x0):
    """BFGS from ``x0`` with the generated gradient; the result and the iterates."""
    path = [x0.copy()]
    fit = optimize.minimize(rosen, x0, jac=drosen, method="BFGS", callback=path.append,
                            options={"gtol": 1e-8})
    return fit, np.array(path)


def main(quiet=False):
    x = np.random.default_rng(0).normal(size=20)
    np.testing.assert_allclose(drosen(x), optimize.rosen_der(x), rtol=1e-12)
    fit2, path2 = minimize(np.array([-1.2, 1.0]))
    fit20, path20 = minimize(np.full(20, -0.5))
    for fit in (fit2, fit20):
        if not np.allclose(fit.x, 1.0, atol=1e-5):
            raise SystemExit(f"BFGS did not reach (1, ..., 1): {fit.x}")
    if not quiet:
        print("gradient equals scipy.optimize.rosen_der at a random 20-d point")
        for fit, n in ((fit2, 2), (fit20, 20)):
            print(f"{n:2d}-d: minimum {fit.fun:.2e} at x = 1 (max error "
                  f"{np.max(np.abs(fit.x - 1)):.1e}) after {fit.nit} iterations, "
                  f"{fit.njev} gradients")
    return path2, [rosen(p) for p in path20]


def plot(path2, losses20):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    u, v = np.meshgrid(np.linspace(-1.6, 1.6, 300), np.linspace(-0.6, 1.8, 300))
    left.contour(u, v, 100 * (v - u**2) ** 2 + (1 - u) ** 2, levels=np.logspace(-1, 3, 12),
                 cmap="viridis", linewidths=0.8)
    left.plot(path2[:, 0], path2[:, 1], "o-", color="crimson", markersize=3, linewidth=1)
    left.plot([1], [1], "k*", markersize=10)
    left.set(title="BFGS path in 2-d", xlabel="x[0]", ylabel="x[1]")
    right.semilogy(np.maximum(losses20, 1e-20), "o-", markersize=3)
    right.set(title="rosen(x) in 20-d", xlabel="BFGS iteration", ylabel="loss")
    fig.tight_layout()
    save(fig, "rosenbrock.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    plot(*main())
