"""PyTorch spellings of the forward functions in ``workloads.py``.

Same arithmetic, same loops, torch.float64 tensors. Imported only when torch is installed.
"""

from __future__ import annotations

import torch


def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def logreg(w, X, y):
    z = X @ w
    return torch.mean(torch.logaddexp(torch.zeros_like(z), z) - y * z)


def mlp(W1, b1, W2, b2, X, Y):
    h = torch.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - torch.amax(logits, dim=1, keepdim=True)
    logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
    return -torch.sum(Y * logp) / X.shape[0]


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = torch.tanh(xs[t] @ Wx + h @ Wh + b)
    return torch.sum(h * h)


def pendulum(c, L, theta0, omega0):
    g = 9.81
    dt = 0.01
    theta = theta0
    omega = omega0
    for _ in range(1000):
        alpha = -(g / L) * torch.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta


FORWARDS = {
    "rosenbrock": rosen,
    "logreg": logreg,
    "mlp": mlp,
    "rnn": rnn,
    "pendulum": pendulum,
}
