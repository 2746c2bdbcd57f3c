"""Derivative modes: seeded vjp, forward mode, Jacobians, Hessians and any order by composition.

Forward mode is checked against central differences of directional derivatives, vjp against
explicit (numerical) Jacobians, and higher orders against exact derivatives of polynomials or
against differences of a lower-order derivative.
"""

import dataclasses
import math

import numpy as np
import pytest
from golden_source import assert_golden
from test_control_flow import CASES as CONTROL_FLOW_CASES
from test_control_flow import _case_id as control_flow_id
from test_control_flow import decay, piecewise
from test_straightline import CASES

from srcgrad import (
    SeedShapeError,
    SrcgradError,
    TangentShapeError,
    grad,
    hessian,
    hvp,
    jacobian,
    jvp,
    source,
    value_and_grad,
    vjp,
)

STEP = 1e-6

rng = np.random.default_rng(6)
V3 = rng.normal(size=3)
U3 = rng.normal(size=3)
V4 = rng.normal(size=4)
A34 = rng.normal(size=(3, 4))
A23 = rng.normal(size=(2, 3))
COL31 = rng.normal(size=(3, 1))
M34 = rng.normal(size=(3, 4))
POS3 = rng.uniform(0.5, 2.0, size=3)


def random_like(x):
    if isinstance(x, np.ndarray):
        return rng.normal(size=x.shape)
    return float(rng.normal())


def _replace(args, slots, values):
    args = list(args)
    for slot, value in zip(slots, values, strict=True):
        args[slot] = value
    return args


def numeric_directional(f, args, slots, tangents, step=STEP):
    """Central difference of f along ``tangents`` of the arguments at ``slots``."""
    plus = _replace(args, slots, [args[s] + step * t for s, t in zip(slots, tangents)])
    minus = _replace(args, slots, [args[s] - step * t for s, t in zip(slots, tangents)])
    return (np.asarray(f(*plus), float) - np.asarray(f(*minus), float)) / (2 * step)


def numeric_jacobian(f, args, slot, step=STEP):
    """J[out_index + in_index] by central differences, one input element at a time."""
    x = np.asarray(args[slot], dtype=float)
    columns = []
    for index in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[index] = 1.0
        if not isinstance(args[slot], np.ndarray):
            e = 1.0
        columns.append(numeric_directional(f, args, [slot], [e], step))
    out_shape = np.shape(columns[0])
    return np.stack(columns, axis=-1).reshape(out_shape + x.shape)


def slots_of(f, wrt):
    selectors = wrt if isinstance(wrt, tuple) else (wrt,)
    names = list(f.__code__.co_varnames[: f.__code__.co_argcount])
    return [s if isinstance(s, int) else names.index(s) for s in selectors]


# ---- forward mode against central differences ------------------------------------------------


def check_jvp(f, args, wrt):
    slots = slots_of(f, wrt)
    tangents = [random_like(args[s]) for s in slots]
    tangent = tuple(tangents) if isinstance(wrt, tuple) else tangents[0]
    value, tangent_out = jvp(f, wrt=wrt)(*args, tangent)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    expected = numeric_directional(f, args, slots, tangents)
    np.testing.assert_allclose(tangent_out, expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, args, wrt", CASES)
def test_jvp_matches_central_differences(f, args, wrt):
    check_jvp(f, args, wrt)


@pytest.mark.parametrize(
    "f, args, wrt", CONTROL_FLOW_CASES, ids=[control_flow_id(c) for c in CONTROL_FLOW_CASES]
)
def test_jvp_through_control_flow(f, args, wrt):
    check_jvp(f, args, wrt)


def test_forward_mode_keeps_loops_and_branches():
    text = source(jvp(decay))
    assert text.count("for i in range(100):") == 1
    assert "reversed" not in text and "_saved" not in text  # nothing is stored for later
    assert_golden("decay_jvp.py", text)
    text = source(jvp(piecewise))
    assert text.count("if ") == 2 and "else:" in text


def array_out(x, W):
    h = np.tanh(W @ x)
    return h * x[:3] + np.sum(x) / 2.0


def broadcast_out(a, b):
    return np.sin(a + b) - a * 2.0


def sliced_out(x):
    return x[1:] * x[:-1] - np.exp(x[::2]).sum()


def outer_out(x, y):
    return np.outer(x, y) + M34


def mean_axis_out(X):
    return np.mean(X**2, axis=0) + np.sum(X, axis=1, keepdims=True)


ARRAY_CASES = [
    pytest.param(array_out, (V4, A34), 0, id="array_out-x"),
    pytest.param(array_out, (V4, A34), 1, id="array_out-W"),
    pytest.param(broadcast_out, (COL31, V4), 0, id="broadcast_out-col"),
    pytest.param(broadcast_out, (COL31, V4), 1, id="broadcast_out-row"),
    pytest.param(sliced_out, (V4,), 0, id="sliced_out"),
    pytest.param(outer_out, (V3, V4), 1, id="outer_out"),
    pytest.param(mean_axis_out, (A34,), 0, id="mean_axis_out"),
]


@pytest.mark.parametrize("f, args, wrt", ARRAY_CASES)
def test_jvp_of_array_outputs(f, args, wrt):
    tangent = random_like(args[wrt])
    value, tangent_out = jvp(f, wrt=wrt)(*args, tangent)
    assert np.shape(tangent_out) == np.shape(value)
    expected = numeric_directional(f, args, [wrt], [tangent])
    np.testing.assert_allclose(tangent_out, expected, rtol=1e-5, atol=1e-7)


def add_broadcast(s, x):
    return s + x


def test_tangent_of_broadcast_operand_has_the_output_shape():
    value, tangent_out = jvp(add_broadcast)(0.5, A34, 2.0)
    assert tangent_out.shape == A34.shape
    np.testing.assert_allclose(tangent_out, np.full(A34.shape, 2.0))


def scalar_poly(x, y):
    return x * x * y + y


def test_jvp_types_follow_the_arguments():
    value, t = jvp(scalar_poly)(2.0, 3.0, 1.0)
    assert isinstance(t, float) and t == pytest.approx(12.0)
    value, t = jvp(scalar_poly, wrt=(0, 1))(2.0, 3.0, (1.0, 1.0))
    assert t == pytest.approx(12.0 + 5.0)


def constant_in_x(x, y):
    return y * 2.0


def test_jvp_of_output_independent_of_wrt_is_zero():
    value, t = jvp(constant_in_x)(V4, A34, V4)
    assert t.shape == A34.shape and not t.any()


def test_tangent_shape_mismatch_names_both_shapes():
    with pytest.raises(TangentShapeError, match=r"\(3,\).*\(4,\)"):
        jvp(array_out)(V4, A34, V3)


def test_tuple_wrt_needs_a_tuple_tangent_of_matching_shapes():
    with pytest.raises(TangentShapeError, match="'W'"):
        jvp(array_out, wrt=(0, 1))(V4, A34, (V4, V4))


# ---- vjp against explicit Jacobians -------------------------------------------------------------


@pytest.mark.parametrize("f, args, wrt", ARRAY_CASES)
def test_vjp_matches_explicit_jacobian(f, args, wrt):
    out = f(*args)
    seed = rng.normal(size=np.shape(out))
    g = vjp(f, wrt=wrt)(*args, seed)
    J = numeric_jacobian(f, args, wrt)
    expected = np.tensordot(seed, J, axes=np.ndim(out))
    assert np.shape(g) == np.shape(args[wrt])
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-7)


def doubled_square(x):
    y = 2 * x**2
    return y


def test_vjp_seed_is_grad_tensors():
    g = vjp(doubled_square)(np.ones(3), np.array([0.1, 1.0, 0.001]))
    np.testing.assert_allclose(g, [0.4, 4.0, 0.004], rtol=1e-12)


def test_vjp_seed_shape_mismatch_names_both_shapes():
    with pytest.raises(SeedShapeError) as info:
        vjp(doubled_square)(np.ones(3), np.ones((2, 3)))
    assert "(2, 3)" in str(info.value) and "(3,)" in str(info.value)


@dataclasses.dataclass
class SineAndSum:
    s: np.ndarray
    total: float
    n: int


def object_output(x):
    return SineAndSum(np.sin(x), np.sum(x), 3)


def dict_output(d):
    return {"a": np.sin(d["a"]), "b": d["b"] * 2.0}


def dict_argument(d):
    return np.sum(np.sin(d["a"])) + np.sum(d["b"] ** 2)


def test_structured_seeds_and_tangents_are_checked_part_by_part():
    # a part of a dict or object seed (or tangent) of the wrong shape, a key missing or too
    # many, a list for an array: each was taken without a word (a gradient of the seed's shape,
    # a missing key a zero, an extra key dropped)
    x = np.array([0.7, -1.3, 2.1])
    d = {"a": x, "b": 2.0 * x}
    ones = np.ones(3)
    for seed, where in ((SineAndSum(np.ones((2, 3)), 1.0, 0), r"seed\.s has shape \(2, 3\)"),
                        (SineAndSum(ones, ones, 0), r"seed\.total has shape \(3,\)")):
        with pytest.raises(SeedShapeError, match=where):
            vjp(object_output)(x, seed)
    for seed, where in (({"a": ones, "b": np.ones(2)}, r"seed\['b'\] has shape \(2,\)"),
                        ({"a": ones}, r"keys \['a'\] but the function's output is a dict"),
                        ({"a": ones, "b": ones, "c": ones}, "keys"),
                        ({"a": np.ones((1, 3)), "b": ones}, r"seed\['a'\] has shape \(1, 3\)")):
        with pytest.raises(SeedShapeError, match=where):
            vjp(dict_output)(d, seed)
    with pytest.raises(SeedShapeError, match="list of 3 values"):
        vjp(doubled_square)(x, [1.0, 1.0, 1.0])
    for tangent in ({"a": ones}, {"a": ones, "b": ones, "c": ones}):
        with pytest.raises(TangentShapeError, match="keys"):
            jvp(dict_argument)(d, tangent)
    # None is a zero part; a field that carries no gradient (an int) takes anything
    g = vjp(dict_output)(d, {"a": ones, "b": None})
    np.testing.assert_allclose(g["a"], np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(g["b"], 0.0)
    assert jvp(dict_argument)(d, {"a": ones, "b": None})[1] == pytest.approx(np.sum(np.cos(x)))
    g = vjp(object_output)(x, SineAndSum(ones, 1.0, None))
    np.testing.assert_allclose(g, np.cos(x) + 1.0, rtol=1e-12)


def two_outputs(x):
    return np.sin(x), x * 2.0


def test_vjp_of_tuple_output_takes_a_tuple_seed():
    g = vjp(two_outputs)(V3, (U3, V3))
    np.testing.assert_allclose(g, U3 * np.cos(V3) + 2.0 * V3, rtol=1e-12)


def test_jvp_of_tuple_output_gives_a_tuple_tangent():
    (s, d), (ds, dd) = jvp(two_outputs)(V3, U3)
    np.testing.assert_allclose(ds, U3 * np.cos(V3), rtol=1e-12)
    np.testing.assert_allclose(dd, 2.0 * U3, rtol=1e-12)


def tanh_loss(W, b, X, y):
    z = np.tanh(X @ W + b)
    return np.mean((z - y) ** 2)


def test_value_and_grad_vjp_and_jvp_run_the_primal_once():
    for fn in (value_and_grad(tanh_loss), vjp(tanh_loss), jvp(tanh_loss, wrt=("W", "b"))):
        code = [line for line in source(fn).splitlines() if not line.strip().startswith("#")]
        assert sum("np.tanh(" in line for line in code) == 1, code
        assert sum(" @ W" in line for line in code) == 1, code


# ---- Jacobians and Hessians -----------------------------------------------------------------


@pytest.mark.parametrize("method", ["auto", "forward", "reverse"])
@pytest.mark.parametrize("f, args, wrt", ARRAY_CASES)
def test_jacobian_shape_and_values(f, args, wrt, method):
    J = jacobian(f, wrt=wrt, method=method)(*args)
    out = f(*args)
    assert J.shape == np.shape(out) + np.shape(args[wrt])
    np.testing.assert_allclose(J, numeric_jacobian(f, args, wrt), rtol=1e-5, atol=1e-7)


def test_jacobian_with_tuple_wrt_gives_a_tuple():
    Jx, JW = jacobian(array_out, wrt=(0, 1))(V4, A34)
    assert Jx.shape == (3, 4) and JW.shape == (3, 3, 4)
    np.testing.assert_allclose(JW, numeric_jacobian(array_out, (V4, A34), 1), rtol=1e-5, atol=1e-7)


def test_jacobian_of_scalar_function_of_scalar_is_a_float():
    J = jacobian(scalar_poly)(2.0, 3.0)
    assert isinstance(J, float) and J == pytest.approx(12.0)


def test_jacobian_of_numpy_function():
    np.testing.assert_allclose(jacobian(np.sin)(V3), np.diag(np.cos(V3)), rtol=1e-12)


def test_jacobian_of_grad_is_the_hessian():
    H = jacobian(grad(rosenbrock))(V4)
    np.testing.assert_allclose(H, hessian(rosenbrock)(V4), rtol=1e-10)


def rosenbrock(x):
    return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def test_hessian_of_rosenbrock_matches_differences_of_the_gradient():
    x = np.array([1.2, 0.8, -0.5, 1.1, 0.3])
    H = hessian(rosenbrock)(x)
    assert H.shape == (5, 5)
    np.testing.assert_allclose(H, H.T, rtol=1e-12)
    expected = numeric_jacobian(grad(rosenbrock), (x,), 0)
    np.testing.assert_allclose(H, expected, rtol=1e-6, atol=1e-5)


def cubic_sum(X):
    return np.sum(X**3) + np.sum(X[0] * X[1])


def test_hessian_shape_is_arg_shape_twice():
    H = hessian(cubic_sum)(A23)
    assert H.shape == (2, 3, 2, 3)
    expected = numeric_jacobian(grad(cubic_sum), (A23,), 0)
    np.testing.assert_allclose(H, expected, rtol=1e-6, atol=1e-6)


def test_hessian_with_tuple_wrt_gives_blocks():
    (hxx, hxy), (hyx, hyy) = hessian(scalar_poly, wrt=(0, 1))(2.0, 3.0)
    assert (hxx, hxy, hyx, hyy) == pytest.approx((6.0, 4.0, 4.0, 0.0))


def test_hvp_is_the_hessian_times_a_vector():
    x = np.array([1.2, 0.8, -0.5, 1.1])
    v = rng.normal(size=4)
    got = hvp(rosenbrock)(x, v)
    # independent of srcgrad's second order: central differences of the gradient along v, and
    # the Hessian of Rosenbrock's function written out by hand
    h = 1e-5
    dg = grad(rosenbrock)
    np.testing.assert_allclose(got, (dg(x + h * v) - dg(x - h * v)) / (2 * h), rtol=1e-6)
    H = np.zeros((4, 4))
    for i in range(3):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i, i + 1] = H[i + 1, i] = -400 * x[i]
        H[i + 1, i + 1] += 200
    np.testing.assert_allclose(got, H @ v, rtol=1e-12)
    assert "def drosenbrock_tangent(x, tangent):" in source(hvp(rosenbrock))


# ---- any order by composition ----------------------------------------------------------------


def quartic(x):
    return 3 * x**4 - 2 * x**3 + x**2 - 5 * x + 1


def trig_poly(x):
    return x**3 * math.sin(x)


def test_third_derivative_of_a_polynomial():
    for x in (0.7, -1.3, 2.0):
        assert grad(grad(grad(quartic)))(x) == pytest.approx(72 * x - 12, rel=1e-12)
        assert grad(grad(quartic))(x) == pytest.approx(36 * x**2 - 12 * x + 2, rel=1e-12)


def test_fourth_derivative_mixing_modes():
    dddf = grad(grad(grad(quartic)))
    assert grad(dddf)(0.3) == pytest.approx(72.0)
    assert jvp(dddf)(0.3, 1.0)[1] == pytest.approx(72.0)
    assert grad(hvp(quartic))(0.5, 2.0) == pytest.approx(2.0 * 72 * 0.5 - 2.0 * 12)


def test_second_derivative_through_math_functions():
    x = 0.9
    expected = (6 * x - x**3) * math.sin(x) + 6 * x**2 * math.cos(x)
    assert grad(grad(trig_poly))(x) == pytest.approx(expected, rel=1e-10)


def sin_x_times_x(x):
    return np.sin(x) * x


def test_vjp_of_vjp():
    f_vjp = vjp(sin_x_times_x)
    wrt_x = vjp(f_vjp, wrt=0)(V3, U3, POS3)
    expected = numeric_directional(lambda x: f_vjp(x, U3), (V3,), [0], [np.ones(3)])
    np.testing.assert_allclose(wrt_x, POS3 * expected, rtol=1e-6)
    # a vjp is linear in its seed: the vjp of that is the Jacobian-vector product
    wrt_seed = vjp(f_vjp, wrt=1)(V3, U3, POS3)
    np.testing.assert_allclose(wrt_seed, (np.cos(V3) * V3 + np.sin(V3)) * POS3, rtol=1e-12)


def test_jvp_of_vjp():
    f_vjp = vjp(sin_x_times_x)
    value, t = jvp(f_vjp, wrt=0)(V3, U3, POS3)
    np.testing.assert_allclose(value, f_vjp(V3, U3), rtol=1e-12)
    expected = numeric_directional(f_vjp, (V3, U3), [0], [POS3])
    np.testing.assert_allclose(t, expected, rtol=1e-6, atol=1e-8)


def test_jvp_of_jvp_is_a_second_directional_derivative():
    (_, _), (_, second) = jvp(jvp(sin_x_times_x))(V3, U3, POS3)
    f2 = 2 * np.cos(V3) - V3 * np.sin(V3)
    np.testing.assert_allclose(second, f2 * U3 * POS3, rtol=1e-12)


def dense_model(W, x):
    return np.sum(np.tanh(W @ x) ** 2)


def test_second_order_through_matmul_helpers():
    H = hessian(dense_model, wrt=1)(A34, V4)
    expected = numeric_jacobian(grad(dense_model, wrt=1), (A34, V4), 1)
    np.testing.assert_allclose(H, expected, rtol=1e-6, atol=1e-6)
    HW = hessian(dense_model, wrt=0)(A34, V4)
    assert HW.shape == (3, 4, 3, 4)
    expected = numeric_jacobian(grad(dense_model, wrt=0), (A34, V4), 0)
    np.testing.assert_allclose(HW, expected, rtol=1e-6, atol=1e-6)


def reductions(X):
    return np.sum(np.mean(X**2, axis=0) * np.sum(X, axis=1).sum()) + np.dot(X[0], X[1])


def test_hessian_through_reduction_helpers():
    H = hessian(reductions)(A23)
    expected = numeric_jacobian(grad(reductions), (A23,), 0)
    np.testing.assert_allclose(H, expected, rtol=1e-6, atol=1e-6)


def inner(x):
    return x**3


def outer_uses_grad(x):
    return grad(inner)(x) * x


def test_nested_transform_inside_a_differentiated_body():
    # h(x) = grad(inner)(x) * x = 3 x^3: h' = 9 x^2, h'' = 18 x
    assert grad(outer_uses_grad)(1.5) == pytest.approx(9 * 1.5**2)
    assert jvp(outer_uses_grad)(1.5, 2.0) == pytest.approx((3 * 1.5**3, 2.0 * 9 * 1.5**2))
    assert grad(grad(outer_uses_grad))(1.5) == pytest.approx(18 * 1.5)
    assert "dinner_vjp_x(x, " in source(grad(outer_uses_grad))


def weighted_grad(x, w):
    return np.sum(grad(dense_model, wrt=1)(w, x) * x)


def test_nested_transform_with_arrays_and_wrt():
    check = numeric_jacobian(weighted_grad, (V4, A34), 0)
    np.testing.assert_allclose(grad(weighted_grad)(V4, A34), check, rtol=1e-6, atol=1e-8)
    check = numeric_jacobian(weighted_grad, (V4, A34), 1)
    np.testing.assert_allclose(grad(weighted_grad, wrt=1)(V4, A34), check, rtol=1e-6, atol=1e-8)


# ---- decorators, errors, generated source ------------------------------------------------------


def test_decorator_forms():
    @jvp
    def f1(x):
        return x * x

    @jacobian(wrt="x")
    def f2(x, w):
        return x * w

    @hessian
    def f3(x):
        return np.sum(x**4)

    assert f1(3.0, 1.0) == pytest.approx((9.0, 6.0))
    np.testing.assert_allclose(f2(V3, 2.0), 2.0 * np.eye(3))
    np.testing.assert_allclose(f3(V3), np.diag(12 * V3**2), rtol=1e-12)


def test_transforms_are_cached():
    assert jvp(quartic) is jvp(quartic)
    assert hvp(rosenbrock) is hvp(rosenbrock)
    assert jacobian(array_out) is jacobian(array_out)
    assert hessian(rosenbrock) is hessian(rosenbrock)


def test_jacobian_of_tuple_output_is_a_clear_error():
    with pytest.raises(SrcgradError, match="tuple"):
        jacobian(two_outputs, method="reverse")(V3)


def test_forward_mode_source_is_golden():
    assert_golden("tanh_loss_jvp.py", source(jvp(tanh_loss, wrt=("W", "b"))))


def loop_reads_before_it_assigns(x):
    total = 0.0
    for i in range(3):
        if i > 0:
            total = total + prev * x  # noqa: F821 - `prev` of the previous iteration
        prev = np.sin(x) * i  # noqa: F841
    return total


def loop_branch_reads_before_the_other_assigns(x):
    for i in range(3):
        if i > 0:
            s = s * x  # noqa: F821 - `s` of the previous iteration
        else:
            s = x * 1.0
    return s


@pytest.mark.parametrize("f", [loop_reads_before_it_assigns,
                               loop_branch_reads_before_the_other_assigns],
                         ids=lambda f: f.__name__)
def test_jvp_of_a_loop_reading_a_variable_textually_before_its_assignment(f):
    value, tangent = jvp(f)(1.5, 1.0)
    h = 1e-6
    assert value == pytest.approx(f(1.5))
    assert tangent == pytest.approx((f(1.5 + h) - f(1.5 - h)) / (2 * h), rel=1e-6)
