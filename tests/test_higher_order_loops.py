"""Second derivatives of functions with loops, branches, list stacks and in-place writes.

Generated code is itself input to every transform: its stacks (`x_saved.append`, `.pop()`),
element saves and branch replays must differentiate again.
"""

import numpy as np
import pytest

from srcgrad import grad, hessian, jacobian, source


def decay(k, x0):
    x = x0
    for _ in range(5):
        x = x - 0.1 * k * x * x
    return x * x


def rosen_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def newton_sqrt(a):
    x = 1.0
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x * x * x


def piecewise(x):
    if x > 0:
        y = np.exp(x)
    else:
        y = x * x * x
    return y


def filled(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    return np.sum(y * y)


def _second_difference(df, x, eps=1e-5):
    x = np.asarray(x, dtype=float)
    cols = []
    for e in np.eye(x.size).reshape((x.size,) + x.shape):
        cols.append((np.asarray(df(x + eps * e)) - np.asarray(df(x - eps * e))) / (2 * eps))
    return np.array(cols).T.reshape(x.shape + x.shape)


@pytest.mark.parametrize("x", [0.5, -0.5, 1.3])
def test_grad_of_grad_scalar_functions(x):
    for f in (piecewise, lambda_free_decay):
        second = grad(grad(f))(x)
        expected = (grad(f)(x + 1e-5) - grad(f)(x - 1e-5)) / 2e-5
        assert second == pytest.approx(expected, rel=1e-5, abs=1e-6)


def lambda_free_decay(k):
    return decay(k, 2.0)


def test_grad_of_grad_of_a_while_loop():
    second = grad(grad(newton_sqrt))(2.0)
    assert second == pytest.approx(0.75 / np.sqrt(2.0), rel=1e-6)


@pytest.mark.parametrize("f", [rosen_loop, filled])
def test_hessian_of_a_loop_matches_differences_of_the_gradient(f):
    x = np.array([0.3, -0.2, 1.1])
    np.testing.assert_allclose(
        hessian(f)(x), _second_difference(grad(f), x), rtol=1e-5, atol=1e-6
    )


def _jac_target(x):
    return np.sin(x) * np.sum(x ** 2)


def _hess_target(x):
    return np.sum(np.sin(x) ** 2) * x[0]


def trace_of_hessian(x):
    return np.trace(hessian(_hess_target)(x))


def size_of_jacobian(x):
    return np.sum(jacobian(_jac_target)(x) ** 2)


@pytest.mark.parametrize("f", [trace_of_hessian, size_of_jacobian])
def test_jacobian_and_hessian_are_input_to_transforms(f):
    x = np.array([0.3, -0.4, 1.2])
    expected = [(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-5)
    assert "def " in source(jacobian(_jac_target)) and "def " in source(hessian(_hess_target))
