"""Recover a decay rate from noisy observations of an ODE solution.

The model is ``y' = -k y``, solved with ``scipy.integrate.odeint``. srcgrad differentiates the
least-squares loss through the solver by the adjoint sensitivity method: the backward ODE needs
vector-Jacobian products of ``decay``, which srcgrad generates from its source. The gradient is
as accurate as the solver tolerances (``rtol``, ``atol``) make the solution.

    python examples/ode_fit.py
"""

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
    return {"converged": fit.success, "rate": k, "amount": y0, "truth": (rate, amount)}


if __name__ == "__main__":
    main()
