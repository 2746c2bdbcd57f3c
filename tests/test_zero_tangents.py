"""Derivatives where a tangent is zero or a value is an int, at points where a factor is infinite.

``x1 ** x2`` (``np.power``, ``np.float_power``, ``operator.pow``, ``math.pow``): the exponent's
tangent is zero where the exponent's tangent is zero, and an int exponent has no cotangent. An
int exponent held in a tuple or list with values that carry tangents (``t = (2, x)``, a loop's
saved tuple at second order) has the tangent 0, not None: ``0 * y * log(x1)`` was nan at a
negative base (a ValueError for ``math.log``), in a first-order ``jvp`` and in every ``hvp``
through it, where grad was right. The base's derivative of ``x ** 0`` at ``x == 0`` was
``0 * 0 ** -1``, nan (a polynomial's gradient at 0).

The same int held in a container, given to ``sqrt``/``cbrt`` at 0 or ``arcsin``/``arccos`` at 1,
made ``0 * inf``: its jvp and hvp were nan (a ZeroDivisionError for ``math``)."""

import math

import numpy as np
import pytest
from gradcheck import check_jvp_and_hvp, numeric_grad

from srcgrad import grad, hvp, jvp

X = np.array([0.5, -1.2])
V = np.array([0.3, -0.7])


def held_in_a_tuple(x):
    t = (2, x)
    return np.sum(t[1] ** t[0])


def power_held_in_a_list(x):
    t = [x, 3]
    return np.sum(np.power(t[0], t[1]))


def float_power_held(x):
    t = (x, 2)
    return np.sum(np.float_power(t[0], t[1]))


def listed_exponents(x):
    out = 0.0
    for p in [1, 2]:
        out = out + np.sum(x ** p)
    return out


def loop_index_exponent(x):  # (k + 1 is saved with x ** (k + 1) for the reverse sweep)
    out = 0.0
    for k in range(2):
        out = out + np.sum(x ** (k + 1))
    return out


def scalar_math_pow(a):
    t = (a, 2)
    return math.pow(t[0], t[1]) + a


FORMS = [held_in_a_tuple, power_held_in_a_list, float_power_held, listed_exponents,
         loop_index_exponent]


@pytest.mark.parametrize("f", FORMS)
def test_an_int_exponent_held_with_active_values(f):
    check_jvp_and_hvp(f, X, V)


def scalar_operator_pow(a):
    t = (a, 2)
    return t[0] ** t[1] + a


def math_pow_of_a_loop_index(a):
    out = 0.0
    for k in range(2):
        out = out + math.pow(a, k + 1)
    return out


@pytest.mark.parametrize("f", [scalar_math_pow, scalar_operator_pow, math_pow_of_a_loop_index])
def test_an_int_exponent_of_a_scalar_held_with_an_active_value(f):
    # (math.pow: a ValueError, math.log of the negative base, in grad or at second order; `**`:
    # nan in jvp and grad(grad(f)), reverse over reverse reading the exponent's cotangent)
    a = -1.5
    assert grad(f)(a) == pytest.approx(2 * a + 1.0)
    assert jvp(f)(a, 1.0)[1] == pytest.approx(2 * a + 1.0)
    assert grad(grad(f))(a) == pytest.approx(2.0)
    assert hvp(f)(a, 1.0) == pytest.approx(2.0)


def active_exponent(x, p):
    return np.sum(x ** p) + np.sum(np.power(x, 0.5 * p))


def test_an_active_exponent_keeps_its_tangent():
    x, p, dp = np.array([0.7, 1.3]), 1.7, 0.6
    want = numeric_grad(active_exponent, [x, p], 1)
    assert jvp(active_exponent, wrt=1)(x, p, dp)[1] == pytest.approx(want * dp, rel=1e-6)
    eps = 1e-5
    dg = grad(active_exponent, wrt=1)
    assert hvp(active_exponent, wrt=1)(x, p, dp) == pytest.approx(
        (dg(x, p + eps * dp) - dg(x, p - eps * dp)) / (2 * eps), rel=1e-5)
    # a zero tangent of a float exponent, a negative base: the directional derivative is 0
    assert jvp(active_exponent, wrt=1)(np.array([-0.7, 1.3]), 2.0, 0.0)[1] == 0.0


def scalar_exponent(p):
    return np.sum(np.array([0.7, 1.3]) ** p) + math.pow(1.3, p)


def test_an_active_exponent_at_third_order():
    p, eps = 1.7, 1e-4
    d2 = grad(grad(scalar_exponent))
    want = (d2(p + eps) - d2(p - eps)) / (2 * eps)
    assert grad(grad(grad(scalar_exponent)))(p) == pytest.approx(want, rel=1e-6)


def polynomial(x):
    c = [1.0, 2.0, 3.0]
    return np.sum(sum(c[k] * x ** k for k in range(3)))


def zeroth_powers(x):
    return np.sum(np.power(x, 0)) + np.sum(np.float_power(x, 0) * x) + np.sum(x ** 1)


def scalar_polynomial(a):
    return a ** 0 + 2.0 * a ** 1 + math.pow(a, 0) + 3.0 * a ** 2


@pytest.mark.parametrize("f", [polynomial, zeroth_powers])
def test_a_zeroth_power_at_a_zero_base(f):
    # x2 * x1 ** (x2 - 1) was 0 * 0 ** -1 = nan for `x ** k` with k == 0 at x == 0 (a
    # polynomial's gradient at 0), in grad, jvp and hvp
    x, v = np.array([0.0, 0.5, -1.5]), np.array([1.0, -0.5, 0.25])
    np.testing.assert_allclose(grad(f)(x), numeric_grad(f, [x], 0), rtol=1e-6, atol=1e-9)
    check_jvp_and_hvp(f, x, v)


def test_a_zeroth_power_of_a_zero_scalar():
    # (a ZeroDivisionError, 0.0 ** -1, for Python floats)
    assert grad(scalar_polynomial)(0.0) == pytest.approx(2.0)
    assert jvp(scalar_polynomial)(0.0, 1.0)[1] == pytest.approx(2.0)
    assert grad(grad(scalar_polynomial))(0.0) == pytest.approx(6.0)


def int_weights(x):
    terms = [(0, x[0]), (1, x[1]), (2, x[2])]
    return sum(np.sqrt(k) * c for k, c in terms)


def int_in_a_dict(x):
    d = {"n": 0, "w": x, "m": 1}
    return (np.sum(d["w"]) * np.sqrt(d["n"]) + np.sum(d["w"] ** 2) * np.cbrt(d["n"])
            + np.sum(d["w"]) * (np.arcsin(d["m"]) + np.arccos(d["m"])))


def int_pairs_in_a_loop(x):
    out = 0.0
    for k, c in [(0, x), (1, 2 * x)]:
        out = out + np.sqrt(k) * np.sum(c * c)
    return out


@pytest.mark.parametrize("f", [int_weights, int_in_a_dict, int_pairs_in_a_loop])
def test_an_int_held_with_active_values_where_a_derivative_is_infinite(f):
    # the int's tangent is the number 0, and sqrt's tangent 0 * 0.5 / sqrt(0) was nan (cbrt's
    # at 0, arcsin's and arccos' at 1 too): jvp and hvp nan where grad was right
    check_jvp_and_hvp(f, np.array([0.3, -0.5, 0.8]), np.array([1.0, -0.5, 0.25]))


def math_of_held_ints(a):
    t = (0, a, 1)
    return math.sqrt(t[0]) * a + t[1] * math.asin(t[2]) + a * math.acos(t[2])


def test_math_functions_of_an_int_held_with_an_active_value():
    # (a ZeroDivisionError in jvp before)
    assert jvp(math_of_held_ints)(0.4, 1.0)[1] == pytest.approx(math.pi / 2)
