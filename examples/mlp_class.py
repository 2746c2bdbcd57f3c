"""Train a small multilayer perceptron written as classes, with ``grad(model.loss)``.

The model is an object holding its layers; each layer is a callable object whose parameters
live in a dataclass. srcgrad inlines ``MLP.loss``, ``MLP.forward`` and ``Dense.__call__`` into
one generated function of the model (``wrt="self"``), whose gradient is an ``MLP`` again: its
layers are ``Dense`` objects whose ``params`` are ``DenseParams`` holding the gradients.

The data set is generated: two interleaved spirals, classified by softmax regression on the
network's output.

Run: python examples/mlp_class.py
"""

import time
from dataclasses import dataclass

import numpy as np

from srcgrad import grad, source


@dataclass
class DenseParams:
    W: np.ndarray
    b: np.ndarray


class Dense:
    params: DenseParams

    def __init__(self, n_in, n_out, rng, activation=True):
        scale = np.sqrt(2.0 / n_in)
        self.params = DenseParams(rng.normal(size=(n_in, n_out)) * scale, np.zeros(n_out))
        self.activation = activation

    def __call__(self, x):
        z = x @ self.params.W + self.params.b
        if self.activation:
            return np.tanh(z)
        return z


class MLP:
    layers: list[Dense]

    def __init__(self, sizes, rng, weight_decay=1e-4):
        last = len(sizes) - 2
        self.layers = [Dense(a, b, rng, activation=i < last)
                       for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]
        self.weight_decay = weight_decay

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    @staticmethod
    def log_softmax(z):
        shifted = z - np.max(z, axis=1, keepdims=True)
        return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))

    def loss(self, x, onehot):
        logp = self.log_softmax(self.forward(x))
        penalty = 0.0
        for layer in self.layers:
            penalty = penalty + np.sum(layer.params.W ** 2)
        return -np.mean(np.sum(onehot * logp, axis=1)) + self.weight_decay * penalty

    def accuracy(self, x, labels):
        return np.mean(np.argmax(self.forward(x), axis=1) == labels)

    def sgd_step(self, g, lr):
        for layer, g_layer in zip(self.layers, g.layers):
            layer.params.W -= lr * g_layer.params.W
            layer.params.b -= lr * g_layer.params.b


def spirals(n, rng):
    """Two interleaved spirals: points ``(n, 2)`` and labels ``(n,)`` in {0, 1}."""
    labels = rng.integers(0, 2, size=n)
    t = rng.uniform(0.25, 1.0, size=n) * 3.0 * np.pi
    radius = t / (3.0 * np.pi)
    angle = t + np.pi * labels
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return x + rng.normal(scale=0.03, size=x.shape), labels


def main(quiet=False, steps=500):
    say = (lambda *a: None) if quiet else print
    rng = np.random.default_rng(0)
    x, labels = spirals(400, rng)
    onehot = np.eye(2)[labels]
    model = MLP([2, 32, 32, 2], rng)

    start = time.perf_counter()
    dloss = grad(model.loss, wrt="self")  # the gradient is an MLP of gradients
    transform_seconds = time.perf_counter() - start
    say(f"transform time of grad(model.loss, wrt='self'): {transform_seconds * 1e3:.1f} ms")
    if not quiet:
        say("The generated gradient:\n")
        say(source(dloss))

    first = model.loss(x, onehot)
    for step in range(steps + 1):
        g = dloss(x, onehot)
        model.sgd_step(g, lr=0.5)
        if step % 100 == 0:
            say(f"step {step:4d}  loss {model.loss(x, onehot):.4f}  "
                f"accuracy {model.accuracy(x, labels):.3f}")
    last = model.loss(x, onehot)
    accuracy = model.accuracy(x, labels)
    if steps >= 500 and not (last < 0.5 * first and accuracy > 0.9):
        raise SystemExit(f"training failed: loss {first:.4f} -> {last:.4f}, accuracy {accuracy}")
    return {"model": model, "x": x, "onehot": onehot, "labels": labels, "dloss": dloss,
            "first": first, "last": last, "accuracy": accuracy,
            "transform_seconds": transform_seconds}


if __name__ == "__main__":
    main()
