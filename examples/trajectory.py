"""Trajectory optimization through a physics simulation: steer a rocket to a landing pad.

A point mass under gravity and air drag is integrated with explicit Euler steps in a Python
loop; the control is the thrust at each of the 80 steps. The loss asks for the pad at the final
step, at rest, with little fuel (the sum of squared thrusts). srcgrad differentiates the whole
simulation loop with respect to the 160 thrust components, and SciPy's L-BFGS-B (thrust bounded
per axis) finds the controls. The example checks the gradient against central differences and
that the rocket lands on the pad nearly at rest. With matplotlib installed it saves
``trajectory.png``: the flight path and the thrust over time.

    python examples/trajectory.py
"""

import os
from pathlib import Path

import numpy as np
from scipy import optimize

from srcgrad import value_and_grad

STEPS, DT = 80, 0.05
GRAVITY = np.array([0.0, -9.81])
DRAG = 0.1
START = np.array([0.0, 10.0])
START_VELOCITY = np.array([4.0, 0.0])
PAD = np.array([8.0, 0.0])


def simulate(thrust):
    """Positions of the flight, one row per step, for ``thrust`` of shape (STEPS, 2)."""
    position = START.copy()
    velocity = START_VELOCITY.copy()
    path = [position]
    for i in range(STEPS):
        speed = np.sqrt(np.sum(velocity**2) + 1e-12)
        acceleration = GRAVITY + thrust[i] - DRAG * speed * velocity
        velocity = velocity + DT * acceleration
        position = position + DT * velocity
        path.append(position)
    return np.array(path), velocity


def cost(flat):
    thrust = flat.reshape(STEPS, 2)
    position = START
    velocity = START_VELOCITY
    for i in range(STEPS):
        speed = np.sqrt(np.sum(velocity**2) + 1e-12)
        acceleration = GRAVITY + thrust[i] - DRAG * speed * velocity
        velocity = velocity + DT * acceleration
        position = position + DT * velocity
    miss = np.sum((position - PAD) ** 2)
    return 100.0 * miss + 10.0 * np.sum(velocity**2) + 1e-3 * np.sum(thrust**2)


cost_and_grad = value_and_grad(cost)


def check_gradient(flat, h=1e-6):
    _, g = cost_and_grad(flat)
    direction = np.random.default_rng(1).normal(size=flat.size)
    numeric = (cost(flat + h * direction) - cost(flat - h * direction)) / (2 * h)
    np.testing.assert_allclose(g @ direction, numeric, rtol=1e-6)


def main(quiet=False):
    hover = np.tile(-GRAVITY, (STEPS, 1)).ravel()
    check_gradient(hover)
    losses = []
    fit = optimize.minimize(cost_and_grad, hover, jac=True, method="L-BFGS-B",
                            bounds=[(-20.0, 20.0)] * hover.size,
                            callback=lambda x: losses.append(cost(x)),
                            options={"maxiter": 500})
    thrust = fit.x.reshape(STEPS, 2)
    path, velocity = simulate(thrust)
    miss = np.linalg.norm(path[-1] - PAD)
    if not quiet:
        print(f"gradient matches central differences; L-BFGS-B: {fit.nit} iterations, "
              f"{fit.njev} gradients")
        print(f"cost {cost(hover):.1f} (hovering thrust) -> {fit.fun:.3f}")
        print(f"lands {miss:.3f} from the pad at speed {np.linalg.norm(velocity):.3f}")
    if not (miss < 0.05 and np.linalg.norm(velocity) < 0.1):
        raise SystemExit(f"the rocket missed: {miss} from the pad at velocity {velocity}")
    return path, thrust, losses


def plot(path, thrust, losses):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.plot(path[:, 0], path[:, 1], "-", color="tab:blue")
    left.quiver(path[:-1:4, 0], path[:-1:4, 1], thrust[::4, 0], thrust[::4, 1],
                color="tab:orange", scale=80, width=0.004)
    left.plot(*START, "ko")
    left.plot(PAD[0], PAD[1], "s", color="tab:green", markersize=10)
    left.set(title="flight path and thrust", xlabel="x", ylabel="height", aspect="equal")
    t = np.arange(STEPS) * DT
    right.plot(t, thrust[:, 0], label="thrust x")
    right.plot(t, thrust[:, 1], label="thrust y")
    right.axhline(-GRAVITY[1], color="gray", linestyle=":", label="hover")
    right.set(title="controls", xlabel="time")
    right.legend()
    fig.tight_layout()
    save(fig, "trajectory.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    plot(*main())
