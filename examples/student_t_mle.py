"""Maximum-likelihood fit of a Student-t model with scipy.optimize and srcgrad's gradient.

The negative log-likelihood is written with ``scipy.stats.t.logpdf``; srcgrad knows its derivative
in every argument (the degrees of freedom through the digamma function), so ``grad`` gives the
exact gradient that ``scipy.optimize.minimize`` uses as ``jac``. The parameters are unconstrained:
``df = exp(log_df)`` and ``scale = exp(log_scale)``. The example checks that the fit recovers
the parameters; with matplotlib installed it saves ``student_t_mle.png``: the data's histogram
and the fitted density.

    python examples/student_t_mle.py
"""

import os
from pathlib import Path

import numpy as np
from scipy import optimize, stats

from srcgrad import grad, source


def nll(theta, data):
    df = np.exp(theta[0])
    loc = theta[1]
    scale = np.exp(theta[2])
    return -np.mean(stats.t.logpdf(data, df, loc, scale))


dnll = grad(nll)


def main(quiet=False, n=2000, seed=0):
    truth = np.array([4.0, 1.5, 0.7])  # df, loc, scale
    data = stats.t.rvs(truth[0], truth[1], truth[2], size=n, random_state=seed)
    start = np.array([np.log(10.0), np.median(data), 0.0])
    fit = optimize.minimize(nll, start, args=(data,), jac=dnll, method="BFGS")
    params = np.array([np.exp(fit.x[0]), fit.x[1], np.exp(fit.x[2])])
    if not quiet:
        print(source(dnll))
        print(f"converged: {fit.success} after {fit.nit} iterations ({fit.njev} gradients)")
        print("         df      loc    scale")
        print("truth  ", "  ".join(f"{v:6.3f}" for v in truth))
        print("fit    ", "  ".join(f"{v:6.3f}" for v in params))
    return {
        "converged": fit.success,
        "params": params,
        "truth": truth,
        "jac_at_optimum": dnll(fit.x, data),
        "data": data,
    }


def check(result):
    if not (result["converged"]
            and np.allclose(result["params"], result["truth"], rtol=0.25, atol=0.1)):
        raise SystemExit(f"the fit did not recover the parameters: {result['params']}")


def plot(result):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df, loc, scale = result["params"]
    grid = np.linspace(-6.0, 9.0, 400)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.hist(result["data"], bins=np.linspace(-6.0, 9.0, 80), density=True, alpha=0.4,
            label="data")
    ax.plot(grid, stats.t.pdf(grid, df, loc, scale),
            label=f"fit: df {df:.2f}, loc {loc:.2f}, scale {scale:.2f}")
    ax.set(title="Student-t maximum likelihood", xlabel="x")
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, "student_t_mle.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    outcome = main()
    check(outcome)
    plot(outcome)
