"""Train a two-layer MLP classifier on a generated data set (two interleaved spirals).

The network is a plain function of its weights; ``value_and_grad`` gives the loss and the
gradients of all four weight arrays in one generated function, and Adam updates them. The
example checks that the loss fell and that the network separates the spirals. With matplotlib
installed it saves ``mlp.png``: the loss curve and the learned decision regions. (For a network
written as classes, see ``mlp_class.py``.)

    python examples/mlp.py
"""

import os
from pathlib import Path

import numpy as np

from srcgrad import value_and_grad


def spirals(n, rng):
    """``n`` points on each of two interleaved spirals, with labels 0 and 1."""
    t = np.sqrt(rng.random(n)) * 3.0 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3.0 * np.pi)
    X = np.concatenate([arm, -arm]) + 0.03 * rng.normal(size=(2 * n, 2))
    return X, np.concatenate([np.zeros(n, dtype=int), np.ones(n, dtype=int)])


def logits(W1, b1, W2, b2, X):
    h = np.tanh(X @ W1 + b1)
    return h @ W2 + b2


def loss(W1, b1, W2, b2, X, onehot):
    z = logits(W1, b1, W2, b2, X)
    z = z - np.max(z, axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * log_p, axis=1))


step = value_and_grad(loss, wrt=(0, 1, 2, 3))


def train(params, X, onehot, steps=600, rate=0.02):
    """Adam on all four weight arrays; the loss at each step."""
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    losses = []
    for t in range(1, steps + 1):
        value, grads = step(*params, X, onehot)
        losses.append(value)
        for p, g, mi, vi in zip(params, grads, m, v):
            mi[...] = 0.9 * mi + 0.1 * g
            vi[...] = 0.999 * vi + 0.001 * g * g
            p -= rate * (mi / (1 - 0.9**t)) / (np.sqrt(vi / (1 - 0.999**t)) + 1e-8)
    return np.array(losses)


def main(quiet=False):
    rng = np.random.default_rng(0)
    X, labels = spirals(200, rng)
    onehot = np.eye(2)[labels]
    hidden = 32
    params = [rng.normal(size=(2, hidden)) * 1.5, np.zeros(hidden),
              rng.normal(size=(hidden, 2)) / np.sqrt(hidden), np.zeros(2)]
    losses = train(params, X, onehot)
    accuracy = np.mean(np.argmax(logits(*params, X), axis=1) == labels)
    if not quiet:
        print(f"{len(losses)} Adam steps: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        print(f"training accuracy {accuracy:.3f} on {len(X)} points")
    if not (losses[-1] < 0.25 * losses[0] and accuracy > 0.95):
        raise SystemExit(f"training failed: loss {losses[0]} -> {losses[-1]}, accuracy {accuracy}")
    return params, X, labels, losses


def plot(params, X, labels, losses):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    left.semilogy(losses)
    left.set(title="training loss", xlabel="Adam step", ylabel="cross-entropy")
    u, v = np.meshgrid(np.linspace(-1.3, 1.3, 200), np.linspace(-1.3, 1.3, 200))
    grid = np.stack([u.ravel(), v.ravel()], axis=1)
    z = logits(*params, grid)
    right.contourf(u, v, (z[:, 1] - z[:, 0]).reshape(u.shape) > 0, alpha=0.3, cmap="coolwarm")
    right.scatter(X[:, 0], X[:, 1], c=labels, s=6, cmap="coolwarm")
    right.set(title="decision regions", aspect="equal")
    fig.tight_layout()
    save(fig, "mlp.png")


def save(fig, name):
    directory = Path(os.environ.get("SRCGRAD_FIGURES") or Path(__file__).parent / "figures")
    directory.mkdir(parents=True, exist_ok=True)
    fig.savefig(directory / name, dpi=90)
    print(f"saved {name}")


if __name__ == "__main__":
    plot(*main())
