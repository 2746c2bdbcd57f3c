"""Fit the hyper-parameters of a Gaussian process by maximizing its marginal likelihood.

The negative log marginal likelihood of an RBF-kernel Gaussian process is written with NumPy's
Cholesky factorization and triangular solves; srcgrad differentiates it (through
``np.linalg.cholesky`` and ``np.linalg.solve``) with respect to the log length scale, log signal
variance and log noise variance, and SciPy's L-BFGS-B maximizes the likelihood. The data are
drawn from a Gaussian process with known hyper-parameters, and the example checks that the fit
recovers them. With matplotlib installed it saves ``gp_fit.png``: the data, the posterior mean
and its two-standard-deviation band.

    python examples/gp_fit.py
"""

import os
from pathlib import Path

import numpy as np
from scipy import optimize

from srcgrad import value_and_grad


def kernel(a, b, length, variance):
    return variance * np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / length**2)


def nll(log_params, x, y):
    """Negative log marginal likelihood of ``y`` at ``x`` (an RBF kernel plus noise)."""
    length = np.exp(log_params[0])
    variance = np.exp(log_params[1])
    noise = np.exp(log_params[2])
    K = kernel(x, x, length, variance) + noise * np.eye(x.shape[0])
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L, y)
    return 0.5 * np.sum(alpha**2) + np.sum(np.log(np.diag(L))) + 0.5 * x.shape[0] * np.log(
        2.0 * np.pi
    )


nll_and_grad = value_and_grad(nll)

TRUTH = {"length": 0.8, "variance": 1.5, "noise": 0.01}


def data(n, rng):
    x = np.sort(rng.uniform(-5.0, 5.0, size=n))
    K = kernel(x, x, TRUTH["length"], TRUTH["variance"]) + TRUTH["noise"] * np.eye(n)
    return x, np.linalg.cholesky(K) @ rng.normal(size=n)


def main(quiet=False):
    rng = np.random.default_rng(0)
    x, y = data(80, rng)
    start = np.log([3.0, 0.3, 0.5])
    _, g = nll_and_grad(start, x, y)
    e, h = np.eye(3), 1e-6
    numeric = [(nll(start + h * e[i], x, y) - nll(start - h * e[i], x, y)) / (2 * h)
               for i in range(3)]
    np.testing.assert_allclose(g, numeric, rtol=1e-6)
    losses = [nll(start, x, y)]
    fit = optimize.minimize(nll_and_grad, start, args=(x, y), jac=True, method="L-BFGS-B",
                            callback=lambda p: losses.append(nll(p, x, y)))
    fitted = dict(zip(TRUTH, np.exp(fit.x)))
    if not quiet:
        print(f"gradient matches central differences; L-BFGS-B: {fit.nit} iterations, "
              f"{fit.njev} gradients")
        print(f"negative log likelihood {losses[0]:.2f} -> {fit.fun:.2f}")
        print("             true   fitted")
        for name, value in TRUTH.items():
            print(f"{name:10s} {value:6.3f}  {fitted[name]:7.3f}")
    recovered = all(0.5 < fitted[k] / TRUTH[k] < 2.0 for k in TRUTH)
    if not (fit.fun < losses[0] and recovered):
        raise SystemExit(f"the fit did not recover the hyper-parameters: {fitted}")
    return x, y, fitted, losses


def plot(x, y, fitted, losses):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = np.linspace(-5.5, 5.5, 300)
    K = kernel(x, x, fitted["length"], fitted["variance"]) + fitted["noise"] * np.eye(x.size)
    Ks = kernel(grid, x, fitted["length"], fitted["variance"])
    mean = Ks @ np.linalg.solve(K, y)
    var = fitted["variance"] - np.sum(Ks * np.linalg.solve(K, Ks.T).T, axis=1)
    sd = np.sqrt(np.maximum(var, 0.0))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6),
                                      gridspec_kw={"width_ratios": [2, 1]})
    left.fill_between(grid, mean - 2 * sd, mean + 2 * sd, alpha=0.25, label="mean ± 2 sd")
    left.plot(grid, mean, label="posterior mean")
    left.plot(x, y, "k.", markersize=4, label="data")
    left.set(title="fitted Gaussian process", xlabel="x")
    left.legend(fontsize=8)
    right.plot(losses, "o-", markersize=3)
    right.set(title="negative log likelihood", xlabel="L-BFGS-B iteration")
    fig.tight_layout()
    save(fig, "gp_fit.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    plot(*main())
