"""Casts carry the gradient a cast has, and einsum's interleaved form is differentiated (issue 13).

Integer and boolean casts (``astype(int)``, ``np.array(x, dtype=bool)``, ``np.int64(x)``,
``int()``, ``round``, ``np.floor`` and friends) are piecewise constant: zero gradient. Floating
casts (``astype(np.float32)``, ``np.float64(x)``) pass it on. Checked against central differences
away from the jumps, in reverse and forward mode and second order.
"""

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

import srcgrad
from srcgrad import grad, hessian, jvp

X = np.array([1.3, 2.6, -0.7])
B0 = np.arange(6.0).reshape(3, 2) / 5
SUB = (1, 2)


def astype_int(x):
    return np.sum(x.astype(int) * x)


def astype_bool_and_int16(x):
    return np.sum(x.astype(bool) * x) + np.sum(x.astype("int16") * x**2)


def builtin_casts(x):
    return int(x[1]) * x[0] + round(x[1] * 3.0) * x[1] + round(x[2], 1) * x[0]


def numpy_scalar_casts(x):
    return np.int64(x[0]) * x[1] + np.sum(np.int32(x) * x) + np.bool_(x[2]) * x[2]


def piecewise_constant(x):
    return np.sum(
        np.floor(x) * x + np.ceil(x) * x + np.trunc(x) * x + np.rint(x) * x + np.sign(x) * x
    )


def dtype_arguments(x):
    return np.sum(np.array(x, dtype=int) * x) + np.sum(x, dtype=np.int32) * x[0]


def dtype_in_a_variable(x):
    discrete = x.astype(int).dtype
    continuous = x.dtype
    return np.sum(x.astype(discrete) * x) + np.sum(x.astype(continuous) * x)


def einsum_interleaved(x):
    a = np.outer(x, x)
    return np.sum(np.einsum(a, [0, 1], B0, [1, 2]) ** 2)


def einsum_interleaved_output(x):
    a = np.outer(x, x)
    w = np.arange(6.0).reshape(2, 3)
    return np.sum(np.einsum(a, [0, 1], B0, SUB, [2, 0]) * w)


def einsum_interleaved_ellipsis(x):
    a = np.outer(x, x)
    return np.einsum(a, [Ellipsis, 0], x, [0]) @ x


def einsum_interleaved_scalar(x):
    return np.einsum(x, [0], x**2, [0], [])


def write_into_integer_arrays(x):
    k = np.zeros(3, dtype=int)
    k[0] = x[0] * 3.0  # truncated: no gradient
    b = np.zeros(3, bool)
    b[2] = x[2]
    c = np.full(3, 0, np.int32)
    for i in range(3):
        c[i] = x[i] * 2.0
    m = np.array(x, dtype=int)
    np.copyto(m, x * 2.0, where=x > 1.0, casting="unsafe")
    return np.sum(k * x) + np.sum(b * x) + np.sum(c * x) + np.sum(m * x**2)


CASES = [
    write_into_integer_arrays,
    astype_int, astype_bool_and_int16, builtin_casts, numpy_scalar_casts, piecewise_constant,
    dtype_arguments, dtype_in_a_variable, einsum_interleaved, einsum_interleaved_output,
    einsum_interleaved_ellipsis, einsum_interleaved_scalar,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_reverse_mode(f):
    check_grad(f, (X.copy(),))
    np.testing.assert_allclose(
        grad(f, optimize=False)(X.copy()), numeric_grad(f, (X.copy(),), 0), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_forward_mode(f):
    t = np.array([0.4, -1.1, 0.7])
    value, tangent = jvp(f)(X.copy(), t)
    np.testing.assert_allclose(value, f(X.copy()))
    np.testing.assert_allclose(tangent, numeric_grad(f, (X.copy(),), 0) @ t, rtol=1e-6)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_second_order(f):
    df = grad(f)
    step = 1e-5
    expected = np.stack(
        [(df(X + step * e) - df(X - step * e)) / (2 * step) for e in np.eye(3)], axis=-1
    )
    np.testing.assert_allclose(hessian(f)(X.copy()), expected, rtol=1e-5, atol=1e-6)


def test_the_issue_example():
    np.testing.assert_allclose(grad(astype_int)(np.array([1.5, 2.5])), [1.0, 2.0])


def float_casts(x):
    return np.sum(x.astype(np.float32).astype(np.float64) * x) + np.float32(x[0]) * x[1]


def test_floating_casts_carry_the_gradient():
    # float32 rounding makes central differences too coarse: the exact gradient instead
    x = np.array([1.5, 2.25, -0.75])  # exact in float32
    expected = 2 * x + np.array([x[1], x[0], 0.0])
    np.testing.assert_allclose(grad(float_casts)(x), expected, rtol=1e-6)
    _, tangent = jvp(float_casts)(x, np.ones(3))
    np.testing.assert_allclose(tangent, expected.sum(), rtol=1e-6)


def dtype_variable_elsewhere(x, dtype):
    return np.sum(np.sum(x, dtype=dtype) * x)


def einsum_dynamic_sublist(x, sub):
    return np.einsum(x, [0], x, sub)


def einsum_unknown_first(spec, x):
    return np.einsum(spec, x, x)


@pytest.mark.parametrize("f, message", [
    (dtype_variable_elsewhere, "np.sum with a dtype held in a variable"),
    (einsum_dynamic_sublist, "interleaved form with a sublist srcgrad cannot read"),
], ids=["dtype_variable", "einsum_dynamic_sublist"])
def test_refused_at_transform_time(f, message):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=message) as info:
        grad(f)(X.copy(), np.float64 if f is dtype_variable_elsewhere else [0])
    assert "test_numpy_forms.py" in str(info.value) and "^" in str(info.value)


def test_einsum_needs_a_literal_subscripts_string():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="cannot tell at transform time"):
        grad(einsum_unknown_first, wrt=1)("i,i", X.copy())
