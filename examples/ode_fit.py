"""Recover a decay rate from noisy observations of an ODE solution.

The model is ``y' = -k y``, solved with ``scipy.integrate.odeint``. srcgrad differentiates the
least-squares loss through the solver by the adjoint sensitivity method: the backward ODE needs
vector-Jacobian products of ``decay``, which srcgrad generates from its source. The gradient is
as accurate as the solver tolerances (``rtol``, ``atol``) make the solution. The example checks
that the fit recovers the rate and the initial amount; with matplotlib installed it saves
``ode_fit.png``: the observations and the fitted solution.

    python examples/ode_fit.py
"""

import os
from pathlib import Path

import numpy as np
from scipy import optimize
from scipy.integrate import odeint

from srcgrad import grad

TIMES = np.linspace(0.0, 5.0, 30)


def decay(y, t, k):
    return -k * y


def loss(theta, observed):
    k = np.exp(theta[0])  # the rate stays positive
    y0 = theta[1]
    y = odeint(decay, y0, TIMES, args=(k,), rtol=1e-8, atol=1e-10)
    return np.sum((y[:, 0] - observed) ** 2)


dloss = grad(loss)


def main(quiet=False, seed=0):
    rate, amount = 0.8, 3.0
    rng = np.random.default_rng(seed)
    observed = amount * np.exp(-rate * TIMES) + 0.05 * rng.normal(size=TIMES.size)
    start = np.array([np.log(0.2), 1.0])
    fit = optimize.minimize(loss, start, args=(observed,), jac=dloss, method="BFGS")
    k, y0 = np.exp(fit.x[0]), fit.x[1]
    if not quiet:
        print(f"converged: {fit.success} after {fit.nit} iterations ({fit.njev} gradients)")
        print(f"decay rate: true {rate:.3f}, fitted {k:.3f}")
        print(f"initial amount: true {amount:.3f}, fitted {y0:.3f}")
    return {"converged": fit.success, "rate": k, "amount": y0, "truth": (rate, amount),
            "observed": observed}


def check(result):
    rate, amount = result["truth"]
    if not (result["converged"] and abs(result["rate"] / rate - 1) < 0.05
            and abs(result["amount"] / amount - 1) < 0.05):
        raise SystemExit(f"the fit did not recover the parameters: {result}")


def plot(result):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    times = np.linspace(0.0, 5.0, 200)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(TIMES, result["observed"], "k.", label="observed")
    ax.plot(times, result["amount"] * np.exp(-result["rate"] * times),
            label=f"fit: k = {result['rate']:.3f}")
    rate, amount = result["truth"]
    ax.plot(times, amount * np.exp(-rate * times), ":", label=f"truth: k = {rate}")
    ax.set(title="y' = -k y, fitted through odeint", xlabel="t", ylabel="y")
    ax.legend()
    fig.tight_layout()
    save(fig, "ode_fit.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    outcome = main()
    check(outcome)
    plot(outcome)
