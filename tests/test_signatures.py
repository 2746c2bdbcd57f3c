"""Derived functions keep the user's signature: defaults, keywords, and a trailing seed."""

import numpy as np
import pytest

from srcgrad import grad, hvp, jvp, value_and_grad, vjp


def scaled(x, a=2.0, *, power=2):
    return np.sum(a * x ** power)


def elementwise(x, a=2.0):
    return x * a


X = np.array([0.5, -1.5])
ONES = np.ones(2)


def test_grad_keeps_defaults_and_keywords():
    np.testing.assert_allclose(grad(scaled)(X), 4.0 * X)
    np.testing.assert_allclose(grad(scaled)(X, 3.0), 6.0 * X)
    np.testing.assert_allclose(grad(scaled)(X, a=3.0, power=3), 9.0 * X ** 2)
    value, g = value_and_grad(scaled)(X, power=3)
    assert value == pytest.approx(np.sum(2.0 * X ** 3))
    np.testing.assert_allclose(g, 6.0 * X ** 2)


def test_vjp_seed_is_the_last_positional_argument_after_optional_ones():
    np.testing.assert_allclose(vjp(elementwise)(X, ONES), 2.0 * ONES)
    np.testing.assert_allclose(vjp(elementwise)(X, 5.0, ONES), 5.0 * ONES)
    np.testing.assert_allclose(vjp(elementwise)(X, ONES, a=4.0), 4.0 * ONES)
    with pytest.raises(TypeError, match="multiple values"):
        vjp(elementwise)(X, 5.0, ONES, a=4.0)


def test_jvp_and_hvp_tangent_is_the_last_positional_argument():
    value, tangent = jvp(elementwise)(X, ONES)
    np.testing.assert_allclose(value, 2.0 * X)
    np.testing.assert_allclose(tangent, 2.0 * ONES)
    value, tangent = jvp(elementwise)(X, 3.0, ONES)
    np.testing.assert_allclose(tangent, 3.0 * ONES)
    np.testing.assert_allclose(hvp(scaled)(X, ONES), 4.0 * ONES)
    np.testing.assert_allclose(hvp(scaled)(X, 3.0, ONES), 6.0 * ONES)
