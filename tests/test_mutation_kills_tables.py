"""Cases that only a surviving mutant of a rule table's template showed untested
(docs/development.md, mutation testing): ``rules/numeric_rules.py`` (``np.interp`` outside its
knots with and without ``left``/``right``, ``np.cov`` of two operands with every keyword,
``np.trapezoid``'s ``dx``, ...) and ``rules/container_rules.py``.

Each is a program a user can write, its gradient checked against central differences and its
tangent against the directional central difference, in float64; ``tests/mutate_rules.py`` runs
them against the rules they name (``MUTATION_CHECKS``).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad.errors import UnsupportedCaseError

RNG = np.random.default_rng(20)


def _check(f, args, wrt):
    """grad of f with respect to each argument of ``wrt`` against central differences, and jvp
    along a random tangent of each against the central difference along it."""
    args = list(args)
    for i in wrt:
        got = srcgrad.grad(f, wrt=i)(*args)
        assert np.shape(got) == np.shape(args[i])
        np.testing.assert_allclose(got, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
        t = RNG.normal(size=np.shape(args[i]))
        t = t if np.ndim(args[i]) else float(t)
        _, out = srcgrad.jvp(f, wrt=i)(*args, t)
        h = 1e-6
        plus, minus = list(args), list(args)
        plus[i], minus[i] = args[i] + h * t, args[i] - h * t
        np.testing.assert_allclose(out, (f(*plus) - f(*minus)) / (2 * h), rtol=1e-6, atol=1e-8)


# --- np.trapezoid's dx ----------------------------------------------------------------------------

Y4 = np.array([1.0, 2.0, 4.0, 3.0])


def trapezoid_in_dx(d):
    return np.trapezoid(Y4**2, dx=d)


def trapezoid_in_y_with_array_dx(y):
    return np.trapezoid(y * y, dx=np.array([0.5, 1.0, 2.0]))


def test_trapezoid_refuses_the_derivative_in_an_array_dx():
    # NumPy multiplies an array dx into the averaged samples; the rule's dx is one number (its
    # gradient was the scalar 25.0 for [2.5, 10, 12.5], its tangent an array for a scalar)
    for d in (np.array([0.5, 1.0, 2.0]), np.array([0.7])):
        with pytest.raises(UnsupportedCaseError, match="scalar `dx`"):
            srcgrad.grad(trapezoid_in_dx)(d)
        with pytest.raises(UnsupportedCaseError, match="scalar `dx`"):
            srcgrad.jvp(trapezoid_in_dx)(d, np.ones_like(d))
    _check(trapezoid_in_dx, [0.7], [0])
    _check(trapezoid_in_dx, [np.array(0.7)], [0])
    _check(trapezoid_in_y_with_array_dx, [Y4], [0])  # y's gradient with an array dx is right


MUTATION_CHECKS = {
    np.trapezoid: [test_trapezoid_refuses_the_derivative_in_an_array_dx],
}
