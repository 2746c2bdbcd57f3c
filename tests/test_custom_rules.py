"""User rules: @adjoint and @tangent bodies inlined into generated code, stop_gradient,
nondifferentiable."""

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

import srcgrad
from srcgrad import adjoint, grad, jvp, nondifferentiable, source, stop_gradient, tangent


def softplus(x):
    return np.log1p(np.exp(x))


# A rule with a body of its own, for a function that has source: the rule is used, not the source.
@adjoint(softplus)
def softplus_adjoint(dy, y, x):
    sigmoid = 1 / (1 + np.exp(-x))
    return dy * sigmoid


@tangent(softplus)
def softplus_tangent(y, x, dx):
    return dx / (1 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x) * 2.0)


def test_adjoint_body_is_inlined_and_correct():
    x = np.array([-1.0, 0.5, 2.0])
    check_grad(uses_softplus, (x,))
    text = source(grad(uses_softplus))
    assert "1 / (1 + np.exp(-x))" in text
    assert "* sigmoid" in text or "sigmoid" in text


def test_tangent_body_is_inlined_and_correct():
    x, t = np.array([-1.0, 0.5, 2.0]), np.array([0.3, -1.0, 2.0])
    value, out = jvp(uses_softplus)(x, t)
    assert np.isclose(out, np.sum(grad(uses_softplus)(x) * t))
    assert "dx / (1 + np.exp(-x))" in source(jvp(uses_softplus))


def leaky(x):
    return x * 2.0  # the rule below says 3: the source is never differentiated


@adjoint(leaky)
def leaky_adjoint(dy, y, x):
    return dy * 3.0


def call_leaky(x):
    return leaky(x)


def test_rule_wins_over_source():
    assert grad(call_leaky)(2.0) == 3.0


def scale(x, w, factor=2.0):
    return x * w * factor


@adjoint(scale)
def scale_adjoint(dy, y, x, w, factor):
    return dy * w * factor, dy * x * factor, None


def call_scale(x, w):
    return np.sum(scale(x, w, factor=3.0))


def test_keyword_parameters_reach_the_rule():
    x, w = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    gx, gw = grad(call_scale, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(gx, 3.0 * w)
    np.testing.assert_allclose(gw, 3.0 * x)
    assert "* w * 3.0" in source(grad(call_scale, wrt=(0, 1)))


def test_adjoint_is_differentiable_again():
    def second(x):
        return grad(uses_softplus)(x)[0]

    x = np.array([0.3, -0.2, 1.0])
    h = grad(second)(x)
    np.testing.assert_allclose(h, numeric_grad(second, (x,), 0), rtol=1e-5, atol=1e-8)


def test_stop_gradient():
    def f(x):
        return x * stop_gradient(x)

    assert grad(f)(3.0) == 3.0
    assert stop_gradient(4.0) == 4.0


@nondifferentiable
def bucket(x):
    return np.floor(x * 10.0)


def with_bucket(x):
    return np.sum(x * bucket(x))


def test_nondifferentiable():
    x = np.array([0.12, 0.57])
    np.testing.assert_allclose(grad(with_bucket)(x), np.floor(x * 10.0))
    assert bucket(0.5) == 5.0


def only_tangent(x):
    return x * 2.0


@tangent(only_tangent)
def only_tangent_tangent(y, x, dx):
    return dx * 2.0


def test_tangent_without_adjoint_is_a_clear_error_in_reverse_mode():
    def f(x):
        return only_tangent(x)

    assert jvp(f)(1.0, 1.0)[1] == 2.0
    with pytest.raises(srcgrad.NoRuleError, match="no adjoint"):
        grad(f)(1.0)


def test_rule_for_a_scipy_function():
    special = pytest.importorskip("scipy.special")

    @adjoint(special.expit)
    def expit_adjoint(dy, y, x):
        return dy * y * (1 - y)

    @tangent(special.expit)
    def expit_tangent(y, x, dx):
        return dx * y * (1 - y)

    def loss(w, x):
        return np.sum(special.expit(x @ w))

    w, x = np.array([0.5, -1.0]), np.array([[1.0, 2.0], [0.3, -0.4], [2.0, 1.0]])
    check_grad(loss, (w, x))
    assert "(1 - expit" in source(grad(loss))
    _, out = jvp(loss)(w, x, np.array([1.0, 0.0]))
    assert np.isclose(out, grad(loss)(w, x)[0])
