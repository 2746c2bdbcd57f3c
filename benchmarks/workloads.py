"""The five benchmark workloads.

Each workload has
  * a forward function, plain NumPy, written the way a user would write it for srcgrad
    (Python loops and subscripts where the problem calls for them);
  * a hand-written NumPy gradient of that forward function;
  * an input builder with a fixed seed, all arrays float64.

The forward functions refer to NumPy only through the module-level name ``np``. The benchmark
harness relies on that to run the very same code under autograd and JAX, by rebinding ``np`` to
``autograd.numpy`` or ``jax.numpy`` (see ``rebind_numpy``). PyTorch has its own spelling of these
functions in ``torch_workloads.py``.
"""

from __future__ import annotations

import inspect
import math
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------------------------
# 1. Rosenbrock over a Python loop (length-100 vector), gradient wrt x.
# --------------------------------------------------------------------------------------------


def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def rosen_grad(x):
    head = x[:-1]
    tail = x[1:]
    r = tail - head**2
    g = np.zeros_like(x)
    g[:-1] = -400.0 * r * head - 2.0 * (1.0 - head)
    g[1:] += 200.0 * r
    return (g,)


def rosen_inputs(seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.uniform(-1.5, 1.5, size=100)}


# --------------------------------------------------------------------------------------------
# 2. Logistic regression, mean log-loss written stably, gradient wrt w.
# --------------------------------------------------------------------------------------------


def logreg(w, X, y):
    z = X @ w
    # log(1 + exp(z)) - y * z is the negative log-likelihood of y in {0, 1}.
    return np.mean(np.logaddexp(0.0, z) - y * z)


def logreg_grad(w, X, y):
    z = X @ w
    p = 0.5 * (np.tanh(0.5 * z) + 1.0)  # sigmoid(z) without overflow
    return (X.T @ (p - y) / X.shape[0],)


def logreg_inputs(seed=0):
    rng = np.random.default_rng(seed)
    n, d = 10000, 100
    X = rng.standard_normal((n, d))
    w_true = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-(X @ w_true)))).astype(np.float64)
    w = 0.1 * rng.standard_normal(d)
    return {"w": w, "X": X, "y": y}


# --------------------------------------------------------------------------------------------
# 3. 100-256-10 tanh MLP, softmax cross-entropy over a batch of 256, gradient wrt all weights.
# --------------------------------------------------------------------------------------------


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(Y * logp) / X.shape[0]


def mlp_grad(W1, b1, W2, b2, X, Y):
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    dlogits = (p - Y) / n
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dpre = (dlogits @ W2.T) * (1.0 - h * h)
    dW1 = X.T @ dpre
    db1 = dpre.sum(axis=0)
    return (dW1, db1, dW2, db2)


def mlp_inputs(seed=0):
    rng = np.random.default_rng(seed)
    n, d_in, d_hid, d_out = 256, 100, 256, 10
    X = rng.standard_normal((n, d_in))
    labels = rng.integers(0, d_out, size=n)
    Y = np.zeros((n, d_out))
    Y[np.arange(n), labels] = 1.0
    return {
        "W1": rng.standard_normal((d_in, d_hid)) / np.sqrt(d_in),
        "b1": 0.1 * rng.standard_normal(d_hid),
        "W2": rng.standard_normal((d_hid, d_out)) / np.sqrt(d_hid),
        "b2": 0.1 * rng.standard_normal(d_out),
        "X": X,
        "Y": Y,
    }


# --------------------------------------------------------------------------------------------
# 4. 50-step tanh RNN over a Python loop, hidden 32, input 8, batch 16.
#    Loss: sum of the squared final hidden state. Gradient wrt Wx, Wh, b.
# --------------------------------------------------------------------------------------------


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def rnn_grad(Wx, Wh, b, xs, h0):
    # The strongest hand-written form: the recurrence runs step by step, but the input
    # projection is one product for all steps, and the weight gradients are one product each
    # over all steps after the loop (no per-step outer products).
    steps = len(xs)
    pre_x = xs @ Wx + b  # (steps, batch, hidden), all steps at once
    hs = np.empty((steps + 1,) + h0.shape)
    hs[0] = h0
    for t in range(steps):
        hs[t + 1] = np.tanh(pre_x[t] + hs[t] @ Wh)
    dpres = np.empty((steps,) + h0.shape)
    dh = 2.0 * hs[-1]
    for t in range(steps - 1, -1, -1):
        h = hs[t + 1]
        dpre = dh * (1.0 - h * h)
        dpres[t] = dpre
        dh = dpre @ Wh.T
    d_in, hidden = Wx.shape
    dWx = xs.reshape(-1, d_in).T @ dpres.reshape(-1, hidden)
    dWh = hs[:-1].reshape(-1, hidden).T @ dpres.reshape(-1, hidden)
    db = dpres.sum(axis=(0, 1))
    return (dWx, dWh, db)


def rnn_inputs(seed=0):
    rng = np.random.default_rng(seed)
    steps, batch, d_in, d_hid = 50, 16, 8, 32
    return {
        "Wx": rng.standard_normal((d_in, d_hid)) / np.sqrt(d_in),
        "Wh": 0.9 * rng.standard_normal((d_hid, d_hid)) / np.sqrt(d_hid),
        "b": 0.1 * rng.standard_normal(d_hid),
        "xs": rng.standard_normal((steps, batch, d_in)),
        "h0": np.zeros((batch, d_hid)),
    }


# --------------------------------------------------------------------------------------------
# 5. Damped pendulum, 1000 explicit-Euler steps of theta'' = -(g/L) sin(theta) - c theta'.
#    Loss: final angle squared. Gradient wrt the damping c and the length L (scalars).
# --------------------------------------------------------------------------------------------


def pendulum(c, L, theta0, omega0):
    g = 9.81
    dt = 0.01
    theta = theta0
    omega = omega0
    for _ in range(1000):
        alpha = -(g / L) * np.sin(theta) - c * omega
        theta = theta + dt * omega
        omega = omega + dt * alpha
    return theta * theta


def pendulum_grad(c, L, theta0, omega0):
    # Forward sensitivities: carry d(theta)/dp and d(omega)/dp for p in (c, L) along the steps.
    # Scalar arithmetic on Python floats with math.sin/math.cos: the fastest hand-written form
    # (NumPy's functions on scalars cost a microsecond each).
    g = 9.81
    dt = 0.01
    theta = float(theta0)
    omega = float(omega0)
    c = float(c)
    L = float(L)
    gL = g / L
    gLL = g / (L * L)
    th_c = om_c = th_L = om_L = 0.0
    for _ in range(1000):
        s = math.sin(theta)
        k = math.cos(theta) * gL
        alpha = -gL * s - c * omega
        alpha_c = -k * th_c - omega - c * om_c
        alpha_L = -k * th_L + gLL * s - c * om_L
        theta, th_c, th_L = theta + dt * omega, th_c + dt * om_c, th_L + dt * om_L
        omega, om_c, om_L = omega + dt * alpha, om_c + dt * alpha_c, om_L + dt * alpha_L
    return (2.0 * theta * th_c, 2.0 * theta * th_L)


def pendulum_inputs(seed=0):
    # No randomness needed; the seed is accepted for a uniform interface.
    return {"c": 0.3, "L": 1.5, "theta0": 1.0, "omega0": 0.0}


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    forward: Callable[..., Any]
    hand_grad: Callable[..., tuple]
    make_inputs: Callable[..., dict]
    wrt: tuple[str, ...]
    vectorized: bool = False
    notes: str = field(default="")

    def arg_names(self):
        return tuple(inspect.signature(self.forward).parameters)

    def wrt_positions(self, names=None):
        names = names or self.arg_names()
        return tuple(names.index(w) for w in self.wrt)


WORKLOADS = (
    Workload(
        "rosenbrock",
        "Rosenbrock, Python loop over a length-100 vector",
        rosen,
        rosen_grad,
        rosen_inputs,
        ("x",),
    ),
    Workload(
        "logreg",
        "logistic regression mean log-loss, X 10000x100",
        logreg,
        logreg_grad,
        logreg_inputs,
        ("w",),
        vectorized=True,
    ),
    Workload(
        "mlp",
        "100-256-10 tanh MLP, softmax cross-entropy, batch 256",
        mlp,
        mlp_grad,
        mlp_inputs,
        ("W1", "b1", "W2", "b2"),
        vectorized=True,
    ),
    Workload(
        "rnn",
        "tanh RNN, 50 steps in a Python loop, hidden 32, input 8, batch 16",
        rnn,
        rnn_grad,
        rnn_inputs,
        ("Wx", "Wh", "b"),
    ),
    Workload(
        "pendulum",
        "damped pendulum, 1000 explicit-Euler steps, grad wrt scalars c, L",
        pendulum,
        pendulum_grad,
        pendulum_inputs,
        ("c", "L"),
    ),
)


def rebind_numpy(fn, numpy_module):
    """Return a copy of ``fn`` whose global name ``np`` means ``numpy_module``."""
    namespace = dict(fn.__globals__)
    namespace["np"] = numpy_module
    copy = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy
