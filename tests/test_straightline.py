"""Straight-line code: every function here is checked against central differences."""

import math

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import check_grad

from srcgrad import grad, source, value_and_grad, vjp

rng = np.random.default_rng(0)

# Module globals read by the functions below (constants for the compiler).
SCALE = 3.0
OFFSET = -1.25
C4 = np.array([0.5, -1.0, 2.0, 0.25])
M34 = rng.normal(size=(3, 4))

# Inputs.
X0, Y0, Z0 = 0.7, 1.3, -0.4
V3 = rng.normal(size=3)
V4 = rng.normal(size=4)
W4 = rng.normal(size=4)
POS4 = rng.uniform(0.5, 2.0, size=4)
POS4B = rng.uniform(0.5, 2.0, size=4)
SMALL4 = rng.uniform(-1.0, 1.0, size=4)
A34 = rng.normal(size=(3, 4))
B34 = rng.normal(size=(3, 4))
B42 = rng.normal(size=(4, 2))
B32 = rng.normal(size=(3, 2))
COL31 = rng.normal(size=(3, 1))
ROW14 = rng.normal(size=(1, 4))
ROW13 = rng.normal(size=(1, 3))
POS34 = rng.uniform(0.5, 2.0, size=(3, 4))
X53 = rng.normal(size=(5, 3))
W32 = rng.normal(size=(3, 2))
B2 = rng.normal(size=2)
Y52 = rng.normal(size=(5, 2))


# ---- Python floats -------------------------------------------------------------------------


def s_add_mul(x, y):
    return x * y + x


def s_sub_div(x, y):
    return (x - y) / (x + 2.0)


def s_pow_const(x):
    return x**3 + x**0.5


def s_pow_var(x, y):
    return x**y


def s_neg(x, y):
    return -x * y - (-y)


def s_constants(x):
    return 2.0 * x + 1.5 - x / 4.0 + 3 * x**2


def s_globals(x):
    return SCALE * x**2 + OFFSET * x


def s_reassign(x):
    x = x * 2
    x = math.sin(x)
    return x * x


def s_tuple_unpack(x, y):
    a, b = x, y * 2.0
    return a * b + a


def s_swap(x, y):
    a, b = x, y
    a, b = b, a
    return a / b + a


def s_many_uses(x):
    return x * x * x + x / (1.0 + x * x)


def s_intermediate_reuse(x, y):
    t = x * y
    u = t + x
    return t * u - u


def s_math_trig(x):
    return math.sin(x) + math.cos(x) * math.tan(x)


def s_math_exp_log_sqrt(x):
    return math.exp(x) * math.log(x) + math.sqrt(x)


def s_math_pow(x, y):
    return math.pow(x, y) + math.pow(x, 2.0)


def s_math_tanh(x):
    return math.tanh(3.0 * x) * x


def s_numpy_on_float(x):
    return np.exp(x) * np.sin(x) + np.sqrt(x)


def pytorch_example(x, y, z):
    q = x + y
    f = q * z
    return f


# ---- NumPy arrays --------------------------------------------------------------------------


def a_sum_square(x):
    return np.sum(x**2)


def a_mean_exp(x):
    return np.mean(np.exp(x))


def a_log_sqrt(x):
    return np.sum(np.log(x) * np.sqrt(x))


def a_trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.tan(x))


def a_tanh(x):
    return np.sum(np.tanh(x) ** 2)


def a_unary_neg(x, y):
    return np.sum(-x * y)


def a_div(x, y):
    return np.sum(x / y)


def a_pow_elementwise(x, y):
    return np.sum(x**y)


def a_square_power(x):
    return np.sum(np.square(x) + np.power(x, 3))


def a_np_power_arrays(x, y):
    return np.sum(np.power(x, y))


def a_reassign(x):
    x = x * 2.0
    x = np.sin(x)
    return np.sum(x * x)


def a_chain(x):
    y = np.exp(-(x**2))
    z = np.log(1.0 + y)
    return np.mean(z * x)


def a_sum_axis0(x):
    return np.sum(np.sum(x**2, axis=0) * C4)


def a_sum_axis1_keepdims(x):
    s = np.sum(x, axis=1, keepdims=True)
    return np.sum(s * x)


def a_mean_axis0(x):
    return np.sum(np.mean(x, axis=0) ** 2)


def a_mean_keepdims(x):
    m = np.mean(x, axis=1, keepdims=True)
    return np.mean((x - m) ** 2)


def a_dot_vectors(x, y):
    return np.dot(x, y) ** 2


def a_dot_matvec(A, x):
    return np.sum(np.dot(A, x) ** 2)


def a_matmul_operator(A, B):
    return np.sum((A @ B) ** 2)


def a_np_matmul(A, x):
    return np.sum(np.sin(np.matmul(A, x)))


def a_outer(x, y):
    return np.sum(np.outer(x, y) * M34)


def a_transpose(A, B):
    return np.sum((A.T @ B) ** 2)


def a_maximum(x, y):
    return np.sum(np.maximum(x, y) ** 2)


def a_minimum_scalar(x):
    return np.sum(np.minimum(x, 0.25) * x)


def a_abs(x):
    return np.sum(np.abs(x) * x)


def a_where(x):
    return np.sum(np.where(x > 0.0, x**2, 3.0 * x))


def a_where_compare_args(x, y):
    return np.sum(np.where(x > y, x * y, y - x))


# ---- broadcasting --------------------------------------------------------------------------


def b_scalar_plus_array(s, x):
    return np.sum((s + x) * x)


def b_array_op_scalar(x, s):
    return np.sum(x * s - x / s + s - x)


def b_col_plus_row(a, b):
    return np.sum(np.sin(a + b) * a)


def b_vector_times_matrix(v, M):
    return np.sum((v * M) ** 2) + np.sum(M - v)


def b_matrix_over_vector(M, v):
    return np.sum(np.exp(M / (2.0 + v)))


# ---- shapes, unused arguments, size-1 outputs, a small model -------------------------------


def n_size_normalise(x):
    return np.sum(x**2) / np.size(x)


def n_shape_to_ones(x):
    return np.sum(x * np.ones(x.shape) * 2.0 + x**2)


def u_unused(x, y):
    return np.sum(x**2)


def o_shape_1(x):
    return np.sum(x**2, keepdims=True)


def o_shape_1_1(x):
    return x @ x.T


def loss(X, W, b, y):
    z = np.tanh(X @ W + b)
    return np.mean((z - y) ** 2)


def case(f, args, wrt=0, tag=""):
    name = f.__name__ + (f"[{tag}]" if tag else "")
    return pytest.param(f, args, wrt, id=name)


CASES = [
    case(s_add_mul, (X0, Y0), (0, 1)),
    case(s_sub_div, (X0, Y0), (0, 1)),
    case(s_sub_div, (X0, Y0), (1, "x"), tag="wrt-mixed"),
    case(s_pow_const, (X0,)),
    case(s_pow_var, (X0, Y0), (0, 1)),
    case(s_neg, (X0, Y0), (0, 1)),
    case(s_constants, (X0,)),
    case(s_globals, (X0,)),
    case(s_reassign, (X0,)),
    case(s_tuple_unpack, (X0, Y0), (0, 1)),
    case(s_swap, (X0, Y0), ("x", "y")),
    case(s_many_uses, (X0,)),
    case(s_intermediate_reuse, (X0, Y0), (0, 1)),
    case(s_math_trig, (X0,)),
    case(s_math_exp_log_sqrt, (X0,)),
    case(s_math_pow, (X0, Y0), (0, 1)),
    case(s_math_tanh, (X0,)),
    case(s_numpy_on_float, (X0,)),
    case(pytorch_example, (-2.0, 5.0, -4.0), (0, 1, 2)),
    case(a_sum_square, (V4,)),
    case(a_mean_exp, (A34,)),
    case(a_log_sqrt, (POS4,)),
    case(a_trig, (SMALL4,)),
    case(a_tanh, (A34,)),
    case(a_unary_neg, (V4, W4), (0, 1)),
    case(a_div, (V4, POS4), (0, 1)),
    case(a_pow_elementwise, (POS4, V4), (0, 1)),
    case(a_square_power, (V4,)),
    case(a_np_power_arrays, (POS4, V4), 1),
    case(a_reassign, (V4,)),
    case(a_chain, (A34,)),
    case(a_sum_axis0, (A34,)),
    case(a_sum_axis1_keepdims, (A34,)),
    case(a_mean_axis0, (A34,)),
    case(a_mean_keepdims, (A34,)),
    case(a_dot_vectors, (V4, W4), (0, 1)),
    case(a_dot_matvec, (A34, V4), (0, 1)),
    case(a_matmul_operator, (A34, B42), (0, 1)),
    case(a_np_matmul, (A34, V4), ("A", "x")),
    case(a_outer, (V3, V4), (0, 1)),
    case(a_transpose, (A34, B32), (0, 1)),
    case(a_maximum, (V4, W4), (0, 1)),
    case(a_minimum_scalar, (V4,)),
    case(a_abs, (V4,)),
    case(a_where, (A34,)),
    case(a_where_compare_args, (V4, W4), (0, 1)),
    case(b_scalar_plus_array, (X0, A34), (0, 1)),
    case(b_array_op_scalar, (A34, Y0), (0, 1)),
    case(b_col_plus_row, (COL31, ROW14), (0, 1)),
    case(b_vector_times_matrix, (V4, A34), (0, 1)),
    case(b_matrix_over_vector, (POS34, POS4), (0, 1)),
    case(n_size_normalise, (A34,)),
    case(n_shape_to_ones, (A34,)),
    case(u_unused, (V4, A34), 1),
    case(u_unused, (V4, X0), (0, 1), tag="float"),
    case(o_shape_1, (V4,)),
    case(o_shape_1_1, (ROW13,)),
    case(loss, (X53, W32, B2, Y52), ("W", "b")),
    case(loss, (X53, W32, B2, Y52), ("X", "y"), tag="X-y"),
]


@pytest.mark.parametrize("f, args, wrt", CASES)
def test_gradient_matches_central_differences(f, args, wrt):
    check_grad(f, args, wrt)


# ---- exact values and API shapes ------------------------------------------------------------


def test_pytorch_backward_example():
    dx, dy, dz = grad(pytorch_example, wrt=(0, 1, 2))(-2.0, 5.0, -4.0)
    assert (dx, dy, dz) == (-4.0, -4.0, 3.0)
    assert grad(pytorch_example, wrt=("z", "x"))(-2.0, 5.0, -4.0) == (3.0, -4.0)


def test_single_selector_gives_single_gradient():
    g = grad(s_add_mul)(X0, Y0)
    assert isinstance(g, (float, np.floating))
    assert g == pytest.approx(Y0 + 1.0)
    assert grad(s_add_mul, wrt="y")(X0, Y0) == pytest.approx(X0)


def test_tuple_wrt_keeps_the_given_order():
    dx, dy = grad(s_sub_div, wrt=(0, 1))(X0, Y0)
    assert grad(s_sub_div, wrt=(1, 0))(X0, Y0) == pytest.approx((dy, dx), rel=1e-12)
    assert grad(s_sub_div, wrt=("y", "x"))(X0, Y0) == pytest.approx((dy, dx), rel=1e-12)
    (only,) = grad(s_sub_div, wrt=(1,))(X0, Y0)
    assert only == pytest.approx(dy, rel=1e-12)


def test_unused_argument_gets_zeros_of_its_shape():
    g = grad(u_unused, wrt=1)(V4, A34)
    assert isinstance(g, np.ndarray) and g.shape == A34.shape
    assert np.all(g == 0.0)
    g = grad(u_unused, wrt=1)(V4, X0)
    assert isinstance(g, (float, np.floating)) and g == 0.0


def test_swap_gives_the_swapped_gradient():
    # a, b = b, a: the result is y / x + y.
    dx, dy = grad(s_swap, wrt=(0, 1))(2.0, 3.0)
    assert dx == pytest.approx(-3.0 / 4.0)
    assert dy == pytest.approx(1.0 / 2.0 + 1.0)


def test_loss_gradients_have_parameter_shapes():
    dW, db = grad(loss, wrt=("W", "b"))(X53, W32, B2, Y52)
    assert dW.shape == W32.shape and db.shape == B2.shape


def with_default(x, scale=2.0):
    return scale * x**2


def with_keyword_only(x, *, scale=2.0, shift=0.0):
    return scale * (x - shift) ** 2


def test_keyword_arguments_and_defaults_keep_working():
    df = grad(with_default)
    assert df(3.0) == pytest.approx(12.0)
    assert df(3.0, 3.0) == pytest.approx(18.0)
    assert df(3.0, scale=3.0) == pytest.approx(18.0)
    assert df(x=3.0) == pytest.approx(12.0)
    assert df(scale=1.0, x=3.0) == pytest.approx(6.0)
    assert grad(with_default, wrt="scale")(3.0) == pytest.approx(9.0)
    assert grad(with_default, wrt="scale")(3.0, scale=5.0) == pytest.approx(9.0)


def test_keyword_only_parameters_keep_working():
    df = grad(with_keyword_only)
    assert df(3.0) == pytest.approx(12.0)
    assert df(3.0, shift=1.0) == pytest.approx(8.0)
    assert df(3.0, scale=1.0, shift=1.0) == pytest.approx(4.0)
    check_grad(with_keyword_only, (3.0,), "shift", scale=0.5, shift=1.0)


def test_array_keyword_argument():
    check_grad(a_dot_matvec, (A34,), 0, x=V4)


@pytest.mark.parametrize(
    "f, args, wrt",
    [
        case(s_math_trig, (X0,)),
        case(a_chain, (A34,)),
        case(loss, (X53, W32, B2, Y52), ("W", "b")),
        case(o_shape_1, (V4,)),
    ],
)
def test_value_and_grad_matches_f_and_grad(f, args, wrt):
    value, g = value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    expected = grad(f, wrt=wrt)(*args)
    if isinstance(wrt, tuple):
        assert isinstance(g, tuple) and len(g) == len(wrt)
        for gi, ei in zip(g, expected, strict=True):
            np.testing.assert_allclose(gi, ei, rtol=1e-12)
    else:
        np.testing.assert_allclose(g, expected, rtol=1e-12)


def elementwise(x):
    y = 2 * x**2
    return y


def sin_times_x(x):
    return np.sin(x) * x


def matvec(A, x):
    return A @ x


def test_vjp_of_elementwise_function_scales_the_derivative():
    seed = np.array([0.1, 1.0, 0.001])
    g = vjp(elementwise)(np.ones(3), seed)
    np.testing.assert_allclose(g, [0.4, 4.0, 0.004], rtol=1e-12)


def test_vjp_matches_seed_times_derivative():
    seed = rng.normal(size=A34.shape)
    g = vjp(sin_times_x)(A34, seed)
    np.testing.assert_allclose(g, seed * (np.cos(A34) * A34 + np.sin(A34)), rtol=1e-12)


def test_vjp_of_matrix_vector_product():
    seed = rng.normal(size=3)
    dA, dx = vjp(matvec, wrt=(0, 1))(A34, V4, seed)
    np.testing.assert_allclose(dA, np.outer(seed, V4), rtol=1e-12)
    np.testing.assert_allclose(dx, A34.T @ seed, rtol=1e-12)


def test_decorator_forms():
    @grad
    def d_square(x):
        return x * x

    @grad(wrt="w")
    def d_weighted(x, w):
        return np.sum(x * w**2)

    assert d_square(3.0) == pytest.approx(6.0)
    np.testing.assert_allclose(d_weighted(V4, W4), 2.0 * V4 * W4, rtol=1e-12)


def test_decorator_with_tuple_wrt():
    @grad
    def d_cube(x):
        return x * x * x

    @grad(wrt=("x", "y"))
    def d_prod(x, y):
        return np.sum(x * y)

    assert d_cube(2.0) == pytest.approx(12.0)
    dx, dy = d_prod(V4, W4)
    np.testing.assert_allclose(dx, W4)
    np.testing.assert_allclose(dy, V4)


def test_grad_of_numpy_function_with_a_rule():
    assert grad(np.sin)(0.3) == pytest.approx(math.cos(0.3), rel=1e-12)


def mean_by_first_dim(x):
    return np.sum(x) / x.shape[0]


def test_shape_subscript_as_normaliser():
    check_grad(mean_by_first_dim, (A34,))


def accumulates_and_copies(x, w):
    a = x * w
    b = np.sin(x)
    z = a
    return np.sum(z * b + x * 3.0) + np.sum(np.tanh(x))


def accumulates_after_a_read_only_seed(x):
    a = np.sin(x)
    b = np.cos(x)
    return np.sum(x) + np.sum(a * b)


@pytest.mark.parametrize("f", [accumulates_and_copies, accumulates_after_a_read_only_seed],
                         ids=lambda f: f.__name__)
def test_accumulation_source_is_golden(f):
    # the adjoint of a copy (`z = a`) is the same name, with no statement; an adjoint that holds
    # an array made here accumulates in place (`dx += ...`), one that holds the read-only view
    # `unreduce` returns adds into a new array first (`dx = dx + ...`)
    args = (A34[0, :3], A34[1, :3])[: f.__code__.co_argcount]
    check_grad(f, args)
    assert_golden(f"straight_{f.__name__}.py", source(grad(f)))
