"""Second derivatives through the NumPy rule library: the rules of its runtime helpers.

Each case is a small function whose gradient code calls one helper (``prod_grad``,
``concatenate_grad``, ``solve_vjp_a``, ...). ``hessian`` (forward over reverse) is checked against
central differences of ``grad`` for every case; reverse over reverse (``grad`` of a function calling
``grad(f)``), reverse over forward and forward over forward for the cases whose helpers are not
plain linear maps. Then: adjoint pairs of the decomposition helpers, the ``unsupported`` hook, and
which runtime helpers still lack rules (the list may only shrink).
"""

import inspect

import numpy as np
import pytest

import srcgrad
from srcgrad import grad, hessian, jacobian, jvp, runtime
from srcgrad.errors import NoRuleError
from srcgrad.rules import RULES, defrule, lookup
from srcgrad.runtime import higher_order as helper_runtime
from srcgrad.runtime import shapes
from srcgrad.runtime.shapes import BY_SOURCE

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4))
X[1, 2] = 0.0  # products and cumulative products are exact at zeros
V = RNG.normal(size=5)
_B = RNG.normal(size=(3, 3))
SPD = _B @ _B.T + 3 * np.eye(3)
# not symmetric (its symmetric part SPD, so det > 0): a transpose dropped from the rules of
# det_vjp and slogdet_vjp gives the same result at a symmetric matrix only
NONSYMMETRIC = SPD + 0.5 * (_B - _B.T)
W4 = np.arange(1.0, 5.0)
W5 = np.arange(1.0, 6.0)


def f_prod(x):
    return np.sum(np.prod(x, axis=0) ** 2)


def f_prod_all(x):
    return np.prod(x) * np.sum(x)


def f_prod_keepdims(x):
    return np.sum(np.sin(np.prod(x, axis=1, keepdims=True)) * x)


def f_var_std(x):
    return np.sum(np.var(x, axis=1, ddof=1) ** 2) + np.std(x)


def f_var_about_mean(x):
    return np.sum(np.std(x, axis=1, mean=np.mean(x, axis=1, keepdims=True), correction=1) ** 3)


def f_diff_edges(v):
    return np.sum(np.diff(v, prepend=v[0] ** 2, append=np.sin(v[:2])) ** 3)


def f_geomspace(v):
    return np.sum(np.geomspace(v[0], v[1:], 4, axis=1) * W4)


def f_logspace(v):
    return np.sum(np.logspace(v[0], v[1], 5, base=v[2]) * W5)


def f_nan_functions(x):
    return np.sum(np.nanstd(x, axis=1, ddof=1) ** 3) + np.sum(np.nancumprod(x, axis=0) * X)


def f_outer(v):
    return np.sum(np.multiply.outer(v, np.sin(v)) ** 2) + np.sum(np.subtract.outer(v, v) ** 3)


def f_vander_ediff1d(v):
    return np.sum(np.vander(v, 4) ** 2) + np.sum(np.ediff1d(v, to_begin=v[:2] ** 2) ** 3)


def f_modf_frexp(v):
    return np.sum(np.modf(v * 3.0)[0] ** 2 + np.frexp(v * 5.0)[0] ** 3)


def f_max_min(x):
    return np.sum(np.max(x, axis=0) ** 2) + np.min(x) ** 3


def f_ptp(x):
    return np.ptp(x, axis=1) @ np.ptp(x, axis=1)


def f_mean(x):
    return np.mean(x**2) ** 2


def f_cumsum(x):
    return np.sum(np.cumsum(x, axis=1) ** 3)


def f_cumsum_flat(x):
    return np.sum(np.cumsum(x) ** 3)


def f_cumprod(x):
    return np.sum(np.cumprod(x, axis=1) ** 2)


def f_cumprod_flat(x):
    return np.sum(np.cumprod(x) * np.arange(x.size))


def f_average(x):
    return np.average(x**2, axis=1, weights=W4) @ np.arange(3.0)


def f_median(v):
    return np.median(v**3) ** 2


def f_quantile(x):
    return np.sum(np.quantile(x**3, [0.3, 0.6], axis=1) ** 2)


def f_sort(v):
    return np.sum(np.sort(v) ** 3 * np.arange(5))


def f_diagonal(x):
    return np.sum(np.diagonal(x, 1) ** 3)


def f_trace(x):
    return np.trace(x) ** 3


def f_diag_of_matrix(x):
    return np.sum(np.diag(x) ** 3)


def f_diag_of_vector(v):
    return np.sum(np.diag(v, 1) ** 3 * 2.0)


def f_diff(v):
    return np.sum(np.diff(v, 2) ** 3)


def f_reshape(x):
    return np.sum(x.reshape((4, 3)) ** 3 * np.arange(12).reshape((4, 3)))


def f_tile(v):
    return np.sum(np.tile(v, 2) ** 3 * np.arange(10))


def f_repeat(x):
    return np.sum(np.repeat(x, 2, axis=1) ** 3)


def f_take(v):
    return np.sum(np.take(v, [0, 2, 2, 4]) ** 3)


def f_pad_reflect(v):
    return np.sum(np.pad(v, (2, 3), mode="reflect") ** 3 * np.arange(10))


def f_pad_constant(x):
    return np.sum(np.pad(x, 1) ** 3)


def f_linspace(s):
    return np.sum(np.linspace(s[0], s[1], 7) ** 3)


def f_concatenate(v):
    return np.sum(np.concatenate((v, v**2)) ** 3 * np.arange(10))


def f_stack(v):
    return np.sum(np.stack((v, np.sin(v)), axis=1) ** 3)


def f_vstack(v):
    return np.sum(np.vstack((v, np.sin(v))) ** 3)


def f_hstack(v):
    return np.sum(np.hstack((v, v**2)) ** 3)


def f_split(v):
    a, b = np.split(np.concatenate((v, v)), 2)
    return np.sum(a**2 * b)


def f_einsum(x):
    return np.einsum("ij,kj->", x, x**2)


def f_einsum_matrix(x):
    return np.sum(np.einsum("ij,ik->jk", x, np.sin(x)) ** 2)


def f_tensordot(x):
    return np.sum(np.tensordot(x, x, axes=([0], [0])) ** 2)


def f_inner(x):
    return np.sum(np.inner(x, np.sin(x)) ** 2)


def f_kron(v):
    return np.sum(np.kron(v, v**2) ** 2)


def f_cross(x):
    return np.sum(np.cross(x[0], x[1]) ** 2 * np.cross(x[1], x[0]))


def f_convolve(v):
    return np.sum(np.convolve(v, v**2) ** 2)


def f_correlate(v):
    return np.sum(np.correlate(v, v[:3] ** 2, mode="same") ** 2)


def f_cross_axes(x):
    return np.sum(np.cross(x, np.sin(x), axisa=0, axisb=0, axisc=0) ** 2)


def f_convolve_valid(v):
    return np.sum(np.convolve(v, np.sin(v[:3]), mode="valid") ** 2)


def f_tuple_elements(v):
    t = (v * 2.0, np.sin(v))
    a, b = t
    return np.sum(a * b * t[1])


def f_det(a):
    return np.linalg.det(a) ** 2


def f_slogdet(a):
    _, logdet = np.linalg.slogdet(a)
    return logdet**2


def f_solve_vector(a):
    return np.sum(np.linalg.solve(a, np.arange(3.0)) ** 2)


def f_solve_matrix(a):
    return np.sum(np.linalg.solve(a, np.sin(a)) ** 2)


def f_inv(a):
    return np.sum(np.linalg.inv(a) ** 2)


def f_norm(v):
    return np.linalg.norm(v) ** 3


def f_norm_ord3(v):
    return np.linalg.norm(v, ord=3) ** 2


def f_norm_axis(x):
    return np.sum(np.linalg.norm(x, axis=1) ** 3)


def f_norm_fro(x):
    return np.linalg.norm(x, "fro") * np.sum(x)


def f_vector_norm(x):
    return np.linalg.vector_norm(x, axis=0) @ np.arange(4.0)


def f_element_write(v):
    y = v * 1.0
    y[1] = v[0] * v[2]
    y[3] = np.sin(v[4])
    return np.sum(np.sin(y) * v)


def f_sort_method(v):
    v.sort()  # the argument sorted in place (on srcgrad's copy): `array_only` copies it first
    return np.sum(np.tanh(v) * W5)


K3 = np.array([1.0, 2.0, 3.0])  # a float array: its dtype is read when the function runs


def f_written(v):
    k = np.zeros_like(K3)
    k[0] = v[0] ** 2
    k[2] = v[1] * v[3]
    return np.sum(np.sin(k * v[:3]))


def f_vector_norm_sin(x):
    return np.sum(np.sin(np.linalg.vector_norm(x, axis=0)))


def f_einsum_six(v):
    # (squared: the cotangent of the einsum depends on v, so forward over reverse reads the
    # tangent rule of einsum_vjp in g; operands 3 (4,), 4 (2, 3) and 5 (3,) of shapes no other
    # operand has, and a result (2,) that does not broadcast to them: the partner adjoints in
    # operands 3 to 5 take their shapes, and so do the zeros of einsum_vjp's tangent in the
    # operand it is the adjoint of)
    w = v[[0, 1, 0]]
    return np.sum(np.einsum("i,i,i,k,ij,j->i", v, v**2, np.sin(v), np.cos(v[[0, 1, 0, 1]]),
                            np.outer(v, w + 1.0), np.tanh(w)) ** 2)


SPD2 = np.stack([SPD[:2, :2], SPD[1:, 1:]])  # a stack of two 2 x 2 symmetric positive definite


def f_det_stack(a):
    return np.sum(np.linalg.det(a) ** 2)


CASES = [
    (f_prod, X), (f_prod_all, X[:2]), (f_prod_keepdims, X), (f_var_std, X), (f_max_min, X),
    (f_ptp, X), (f_mean, X), (f_cumsum, X), (f_cumsum_flat, X), (f_cumprod, X),
    (f_cumprod_flat, X), (f_average, X), (f_median, V), (f_quantile, X), (f_sort, V),
    (f_diagonal, X), (f_trace, X), (f_diag_of_matrix, X), (f_diag_of_vector, V), (f_diff, V),
    (f_reshape, X), (f_tile, V), (f_repeat, X), (f_take, V), (f_pad_reflect, V),
    (f_pad_constant, X), (f_linspace, np.array([0.3, 1.7])), (f_concatenate, V), (f_stack, V),
    (f_vstack, V), (f_hstack, V), (f_split, V), (f_einsum, X), (f_einsum_matrix, X),
    (f_tensordot, X), (f_inner, X), (f_kron, V[:3]), (f_cross, X[:2, :3]), (f_convolve, V),
    (f_correlate, V), (f_det, NONSYMMETRIC), (f_slogdet, NONSYMMETRIC), (f_solve_vector, SPD),
    (f_solve_matrix, SPD), (f_inv, SPD), (f_norm, V), (f_norm_ord3, V), (f_norm_axis, X),
    (f_norm_fro, X), (f_vector_norm, X), (f_element_write, V), (f_sort_method, V),
    (f_written, V), (f_vector_norm_sin, X), (f_einsum_six, V[:2]), (f_det_stack, SPD2),
    (f_cross_axes, X[:, :2]), (f_convolve_valid, V), (f_var_about_mean, X), (f_diff_edges, V),
    (f_geomspace, np.array([0.5, 1.5, 2.0])), (f_logspace, np.array([0.3, -0.4, 2.5])),
    (f_nan_functions, X), (f_outer, V), (f_vander_ediff1d, V), (f_modf_frexp, V),
]
IDS = [f.__name__[2:] for f, _ in CASES]
# Helpers that depend on primal values non-linearly, on lists of cotangents, or that appear only in
# forward-mode code: also checked in the other three orders of composition.
NONLINEAR = {
    f_prod, f_prod_keepdims, f_var_std, f_max_min, f_cumprod, f_cumprod_flat, f_quantile,
    f_sort, f_tile, f_pad_reflect, f_concatenate, f_stack, f_split, f_einsum_matrix,
    f_tensordot, f_kron, f_cross, f_convolve, f_det, f_slogdet, f_solve_vector,
    f_solve_matrix, f_norm, f_norm_ord3, f_norm_axis, f_median, f_linspace, f_average,
    f_det_stack, f_cross_axes, f_convolve_valid, f_var_about_mean,
}
COMPOSED = [(f, x) for f, x in CASES if f in NONLINEAR]
COMPOSED_IDS = [f.__name__[2:] for f, _ in COMPOSED]


def numeric_hessian(f, x, eps=1e-6):
    """``H[..., i] = d grad(f) / dx_i`` by central differences of srcgrad's own gradient."""
    g = grad(f)
    x = np.asarray(x, dtype=float)
    h = np.zeros(x.shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        h[(...,) + i] = (g(x + e) - g(x - e)) / (2 * eps)
    return h


def assert_close(got, want):
    scale = 1.0 + np.max(np.abs(want))
    assert np.max(np.abs(np.asarray(got) - want)) <= 1e-6 * scale


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_hessian(f, x):
    assert_close(hessian(f)(x), numeric_hessian(f, x))


@pytest.mark.parametrize("f, x", COMPOSED, ids=COMPOSED_IDS)
def test_grad_of_grad(f, x):
    w = np.cos(np.arange(x.size)).reshape(x.shape)
    df = grad(f)

    def h(z):
        return np.sum(df(z) * w)

    want = np.tensordot(numeric_hessian(f, x), w, axes=x.ndim)
    assert_close(grad(h)(x), want)


def test_grad_of_grad_of_einsum_with_six_operands():
    # reverse over reverse reads the partner adjoints of operands 4 and 5 (hessian, forward over
    # reverse, their tangents: CASES)
    test_grad_of_grad(f_einsum_six, V[:2])
    test_jvp_of_jvp(f_einsum_six, V[:2])
    # reverse over forward: the partner adjoints of einsum_jvp read every operand but k
    test_grad_of_jvp(f_einsum_six, V[:2])
    # forward over forward with operands 2 and 3 constant (their tangents None)
    test_jvp_of_jvp(f_einsum_one_constant, V[:2])
    # forward over reverse with constant operands
    test_hessian(f_einsum_mixed, V[:2])


W2 = np.array([0.7, -1.3])


def f_einsum_mixed(v):
    # operand 2 constant and 4 active: the tangent helper in operand 4 must not read operand
    # 2's tangent (None)
    return np.einsum("i,i,i,i,i,i->", v, v**2, W2, np.sin(v), v + 1.0, np.tanh(v)) ** 2


def f_einsum_one_constant(v):
    # (operand 4 constant too: the tangent helper of operand 5 must not read operand 4's)
    return np.einsum("i,i,i,i,i,i->", v, v**2, W2, W2**2, W2 + 1.0, np.tanh(v))


def test_compositions_that_reach_the_in_place_helpers_rules():
    # (only the composition that reads each rule, to keep the suite fast)
    test_grad_of_jvp(f_element_write, V)  # scatter_last's adjoint
    test_grad_of_grad(f_sort_method, V)  # array_only's adjoint
    test_grad_of_grad(f_written, V)  # written_grad's adjoint


class Accumulator:
    def __init__(self, start):
        self.total = start
        self.scale = start * start  # a second field, whose tangent depends on the point

    def add(self, v):
        self.total = self.total + v * v
        return self


def f_field_write(x):
    acc = Accumulator(x * 0.5)
    acc.add(np.sin(x))  # set_field_tangent: the object's tangent with one field replaced
    return np.sum(acc.total * acc.scale)


def f_list_insert(x):
    hs = [x, x * 3.0]
    hs.insert(-1, np.sin(x))  # insert_tangent
    return np.sum(hs[0] * hs[1] * hs[2])


def test_compositions_that_reach_the_container_helpers_rules():
    # reverse over forward reads set_field_tangent's adjoint (the cotangent of the fields it
    # keeps), forward over forward insert_tangent's tangent
    test_grad_of_jvp(f_field_write, V)
    test_jvp_of_jvp(f_list_insert, V)


def test_grad_of_grad_through_tuple_elements():
    # the first gradient reads the tuple's cotangent element by element (`elem`)
    test_grad_of_grad(f_tuple_elements, V)


@pytest.mark.parametrize("f, x", COMPOSED, ids=COMPOSED_IDS)
def test_grad_of_jvp(f, x):
    u = np.sin(1.0 + np.arange(x.size)).reshape(x.shape)
    tangent = jvp(f)

    def h(z):
        return tangent(z, u)[1]

    want = np.tensordot(numeric_hessian(f, x), u, axes=x.ndim)
    assert_close(grad(h)(x), want)


@pytest.mark.parametrize("f, x", COMPOSED, ids=COMPOSED_IDS)
def test_jvp_of_jvp(f, x):
    u = np.sin(1.0 + np.arange(x.size)).reshape(x.shape)
    u2 = np.cos(2.0 + np.arange(x.size)).reshape(x.shape)
    tangent = jvp(f)

    def h(z):
        return tangent(z, u)[1]

    want = np.sum(np.tensordot(numeric_hessian(f, x), u, axes=x.ndim) * u2)
    assert_close(jvp(h)(x, u2)[1], want)


def test_sinc_second_derivative_is_exact_at_zero():
    def f(v):
        return np.sum(np.sinc(v) ** 2)

    x = np.array([0.0, 1e-3, 0.3, -1.2, 2.5])
    s = np.sinc(x)
    safe = np.where(x == 0, 1.0, x)
    ds = np.where(x == 0, 0.0, (np.cos(np.pi * x) - s) / safe)
    d2s = np.where(x == 0, -np.pi**2 / 3, -np.pi**2 * s - 2 * ds / safe)
    np.testing.assert_allclose(hessian(f)(x), np.diag(2 * ds**2 + 2 * s * d2s), atol=1e-9)


def test_third_order_through_linear_helpers():
    def f(x):
        return np.sum(np.diff(np.cumsum(x, axis=1), axis=0) ** 4)

    x = X
    w = np.cos(np.arange(x.size)).reshape(x.shape)
    df = grad(f)

    def h(z):
        return np.sum(df(z) * w)

    dh = grad(h)
    got = hessian(h)(x)  # third derivative of f contracted with w
    assert_close(got, numeric_hessian(h, x))
    assert_close(dh(x), np.tensordot(numeric_hessian(f, x), w, axes=2))


# --- decompositions: the cotangent part of their rules ------------------------------------------


def _dot(a, b):
    if isinstance(a, (tuple, list)):
        return sum(_dot(p, q) for p, q in zip(a, b) if p is not None and q is not None)
    return float(np.sum(np.asarray(a) * np.asarray(b)))


def test_decomposition_helpers_are_adjoint_pairs():
    """The rule of each vjp helper in its cotangent is the tangent helper, and back: exact only
    if <W, vjp(g)> == <jvp(W), g>."""
    rng = np.random.default_rng(1)
    a = SPD
    m = rng.normal(size=(4, 3))
    w, wm = rng.normal(size=(3, 3)), rng.normal(size=(4, 3))
    g = rng.normal(size=(3, 3))
    g3 = rng.normal(size=3)
    low = np.linalg.cholesky(a)
    eig = np.linalg.eigh(a)
    usv = np.linalg.svd(m, full_matrices=False)
    qr = np.linalg.qr(m)
    p = np.linalg.pinv(m)
    pairs = [
        (_dot(w, runtime.cholesky_vjp(g, low)), _dot(runtime.cholesky_jvp(low, w), g)),
        (_dot(w, runtime.eigh_vjp((g3, g), eig)), _dot(runtime.eigh_jvp(eig, w), (g3, g))),
        (_dot(w, runtime.eigvalsh_vjp(g3, a)), _dot(runtime.eigvalsh_jvp(a, w), g3)),
        (_dot(wm, runtime.svd_vjp((wm, g3, g), usv, m, False)),
         _dot(runtime.svd_jvp(usv, m, wm, False), (wm, g3, g))),
        (_dot(wm, runtime.svd_vjp(g3, None, m, False, False)),
         _dot(runtime.svd_jvp(None, m, wm, False, False), g3)),
        (_dot(wm, runtime.qr_vjp((wm, g), qr, m)), _dot(runtime.qr_jvp(qr, m, wm), (wm, g))),
        (_dot(wm, runtime.pinv_vjp(wm.T, p, m)), _dot(runtime.pinv_jvp(p, m, wm), wm.T)),
        (_dot(w, runtime.matrix_power_vjp(g, a, 3)), _dot(runtime.matrix_power_jvp(a, w, 3), g)),
        (_dot(w, runtime.matrix_power_vjp(g, a, -2)),
         _dot(runtime.matrix_power_jvp(a, w, -2), g)),
    ]
    for left, right in pairs:
        assert left == pytest.approx(right, rel=1e-9, abs=1e-12)


def test_mixed_second_derivative_through_cholesky():
    """d/dx of the gradient in ``a``: the cholesky factor is constant in x, only the cotangent
    of the helper varies, so the derivative exists although cholesky's Hessian is not there."""

    def f(a, x):
        return x @ np.linalg.cholesky(a) @ x

    x = np.array([0.3, -1.1, 0.7])
    df = grad(f, wrt=0)
    eps = 1e-6
    want = np.stack(
        [(df(SPD, x + eps * e) - df(SPD, x - eps * e)) / (2 * eps) for e in np.eye(3)], axis=-1
    )
    assert_close(jacobian(df, wrt=1)(SPD, x), want)


@pytest.mark.parametrize("decomposition", [
    np.linalg.cholesky, lambda a: np.linalg.matrix_power(a, -1),
    lambda a: np.linalg.eigh(a)[1] ** 2 * np.linalg.eigh(a)[0],
], ids=["cholesky", "matrix_power_inverse", "eigh"])
def test_hessian_through_a_decomposition(decomposition):
    """The helpers of the decompositions are differentiated by their source (``by_source``):
    second derivatives w.r.t. the matrix exist (issue 15; tests/test_third_order.py walks every
    decomposition to third order). (Of a symmetric matrix built from
    ``a``: cholesky and eigh read one triangle, and their gradients are the symmetric ones.)"""

    def f(a):
        return np.sum(decomposition(a @ a.T + 3 * np.eye(3)) ** 2 * W3)

    assert_close(hessian(f)(_B), numeric_hessian(f, _B))


W3 = np.cos(np.arange(9.0)).reshape(3, 3)


# --- the unsupported hook ------------------------------------------------------------------------


def half_known(a, b):
    return a * np.sin(b)


def test_an_active_unsupported_parameter_is_a_transform_time_error():
    defrule(half_known, "a, b", vjp={"a": "dy * np.sin(b)"}, jvp={"a": "da * np.sin(b)"},
            unsupported={"b": "this test gives no derivative in b"})
    try:
        assert lookup(half_known).differentiable_params() == ("a", "b")

        def f(a, b):
            return np.sum(half_known(a, b))

        a, b = np.array([1.0, 2.0]), np.array([0.5, -0.3])
        np.testing.assert_allclose(grad(f, wrt=0)(a, b), np.sin(b))  # b inactive: fine
        np.testing.assert_allclose(jvp(f, wrt=0)(a, b, np.ones(2))[1], np.sum(np.sin(b)))
        for transform in (grad, jvp):
            with pytest.raises(NoRuleError, match="`b`: this test gives no derivative in b"):
                transform(f, wrt=1)
    finally:
        RULES.pop(half_known, None)
        srcgrad.transforms.forget()


def test_unsupported_names_must_be_parameters():
    with pytest.raises(srcgrad.SrcgradError, match="not parameters"):
        defrule(half_known, "a, b", vjp={"a": "dy"}, unsupported={"c": "no such parameter"})
    assert lookup(half_known) is None


# --- coverage of the runtime helpers -------------------------------------------------------------

# Helpers of srcgrad/runtime/ that generated code may call and that have no rule yet: a second
# derivative through them stops with NoRuleError. Remove a name when it gets a rule; never add one.
WITHOUT_RULES = {
    "append_tangent",  # containers: forward mode over list appends
}


def _helpers(module):
    return {
        name: fn for name, fn in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(fn)
        and fn.__module__.startswith(module.__name__)
    }


def test_runtime_helpers_without_rules_only_shrink():
    missing = {
        name for name, fn in _helpers(runtime).items()
        if lookup(fn) is None and fn not in BY_SOURCE  # differentiated by their source
    }
    assert missing <= WITHOUT_RULES, f"new runtime helpers without rules: {missing - WITHOUT_RULES}"
    assert WITHOUT_RULES <= missing, (
        f"{WITHOUT_RULES - missing} have rules now: remove them from WITHOUT_RULES"
    )
    assert all(lookup(fn) is not None or fn in BY_SOURCE
               for fn in _helpers(helper_runtime).values())


def test_helper_rule_signatures_match_the_helpers():
    """Template instantiation drops a keyword equal to the default the rule states, so a rule's
    defaults must be the helper's own; and ``y``/``dy`` name the result and its cotangent."""
    for module in (runtime, helper_runtime):
        for name, fn in _helpers(module).items():
            rule = lookup(fn)
            if rule is None or rule.nondiff:
                continue
            params = list(rule.signature.parameters.values())
            assert not {"y", "dy"} & {p.name for p in params}, name
            actual = inspect.signature(fn).parameters.values()
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in actual):
                continue  # select_grad(dy, x, fn, *args, **kwargs): the rule names what is used
            assert len(params) == len(actual), name
            for p, q in zip(params, actual):
                assert p.default == q.default or (p.default is q.default), (name, p.name)


@pytest.mark.parametrize(
    "gshape, xshape",
    [((4, 3), (1, 3)), ((4, 3), (4, 1)), ((2, 4, 3), (2, 1, 3)), ((4, 3), (3,)), ((4, 3), ()),
     ((2, 4, 3), (1, 4, 1)), ((4, 3), (1, 1))],
)
def test_unbroadcast_sums_exactly_the_broadcast_axes(gshape, xshape):
    g = RNG.normal(size=gshape)
    x = np.zeros(xshape)
    got = runtime.unbroadcast(g, x)
    # the adjoint of broadcasting: <unbroadcast(g), v> == <g, broadcast(v)> for every v
    v = RNG.normal(size=xshape)
    assert np.shape(got) == xshape
    assert np.isclose(np.sum(got * v), np.sum(g * np.broadcast_to(v, gshape)))
    if len(gshape) == len(xshape):  # (the fast path for length-one axes: the general one's sum)
        assert np.array_equal(got, shapes._unbroadcast_shapes(g, x))


def test_shape_like_is_the_broadcast_shape():
    shapes = [(3, 1), (4,), (), (2, 1, 1)]
    assert runtime.shape_like(*(np.zeros(s) for s in shapes)).shape == (2, 3, 4)
    for _ in range(2):  # (again: the view kept for those shapes and dtypes)
        with pytest.raises(ValueError):
            runtime.shape_like(np.zeros(3), np.zeros(4))
        view = runtime.shape_like(np.zeros((3, 1)), np.zeros(4), np.zeros((2, 1, 1)))
        assert view.shape == (2, 3, 4) and view.dtype == np.float64
        single = runtime.shape_like(np.zeros((2, 1), np.float32), np.zeros(3, np.float32))
        assert single.shape == (2, 3) and single.dtype == np.float32
        assert runtime.shape_like(np.zeros((2, 1), np.float32), np.zeros(3)).dtype == np.float64


def test_max_gradient_goes_to_the_nan_when_the_maximum_is_nan():
    a = np.array([[1.0, np.nan, 2.0], [3.0, 0.5, 3.0]])
    y = np.max(a, axis=1, keepdims=True)
    got = runtime.chooser_grad(np.ones((2, 1)), a, y, axis=1, keepdims=True)
    assert np.array_equal(got, [[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])



def f_ptp_keepdims(x):
    return np.sum(np.ptp(x, axis=1, keepdims=True) ** 2 * x)


def f_norm_nuclear(x):
    # (+ the spectral norm, and a vector norm of a matrix: ord and kind="vector" read in reverse
    # over reverse; and the vector 2-norms of the rows, whose ord 2 takes the branch of the
    # singular values in norm_grad's rule, where norm_grad_x_vjp reads the norms)
    return (np.linalg.norm(x, "nuc") ** 2 + np.linalg.norm(x, 2) ** 2
            + np.linalg.vector_norm(x, ord=3) ** 2 + np.sum(np.linalg.norm(x, ord=2, axis=1) ** 3))


def f_vector_norm_ord3(x):
    # (+ the vector 2-norms of the rows: ord 2 takes the branch of singular values in
    # norm_grad's rule, where the tangent helper norm_grad_x_jvp reads the norms)
    return (np.sum(np.sin(np.linalg.vector_norm(x, ord=3, axis=0)))
            + np.sum(np.linalg.norm(x, ord=2, axis=1) ** 3))


def f_correlate_same(v):
    return np.sum(np.correlate(v, np.sin(v[:3]), mode="same") ** 2)


def f_convolve_same(v):
    return np.sum(np.convolve(np.cos(v[:3]), v, mode="same") ** 2)


def f_cross_broadcast(x):
    return np.sum(np.cross(np.sin(x[0]), x) ** 2) + np.sum(np.cross(x, np.cos(x[1])) ** 2)


def f_einsum_vector_matrix(x):
    return np.einsum("j,ij->", np.sin(x[0]), x) ** 2


MASK23 = np.array([[True, False, True], [True, True, False]])


def f_mean_axis(x):
    return np.sum(np.mean(x**2, axis=0, keepdims=True) ** 2 * x) + np.sum(
        np.mean(x**3, axis=1, where=MASK23) ** 2)


W13 = np.array([[0.5, -1.0, 0.3]])
K23 = np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.4]])


def f_sum_axis(x):
    # (the last two terms: the cotangent of a keepdims sum and of a broadcast operand go into a
    # matmul alone, which reads their exact shape: unreduce's and unbroadcast's adjoints)
    return (np.sum(np.sum(x**2, axis=0, keepdims=True) ** 2 * x)
            + np.sum(np.sum(x**3, axis=1, where=MASK23) ** 2)
            + np.sum(np.diff(x**2, n=2, axis=1) ** 2)
            + np.sum(np.sin(np.sum(x**2, axis=1, keepdims=True) @ W13))
            + np.sum(np.sin((np.cos(x[:1]) + K23) @ x.T)))


def f_matmul(x):
    return (np.sum((x @ np.sin(x.T)) ** 2) + np.sum((x[0] @ np.cos(x.T)) ** 3)
            + np.sum(np.inner(x, np.sin(x)) ** 2)
            + np.sum(np.tensordot(x, np.cos(x[0]), axes=([1], [0])) ** 3))


@pytest.mark.parametrize("check, f, x", [
    (test_grad_of_grad, f_matmul, X[:2, :3]), (test_grad_of_grad, f_mean_axis, X[:2, :3]),
    (test_grad_of_grad, f_sum_axis, X[:2, :3]),
    (test_grad_of_grad, f_ptp_keepdims, X[:2, :3]), (test_grad_of_grad, f_norm_nuclear, X[:2, :3]),
    (test_hessian, f_vector_norm_ord3, X[:2, :3]), (test_grad_of_grad, f_correlate_same, V[:4]),
    (test_grad_of_grad, f_convolve_same, V[:4]), (test_hessian, f_cross_broadcast, X[:2, :3]),
    (test_hessian, f_einsum_vector_matrix, X[:2, :3]),
], ids=["matmul", "mean_axis", "sum_axis", "ptp_keepdims", "norm_nuclear", "vector_norm_ord3",
        "correlate_same", "convolve_same", "cross_broadcast", "einsum_vector_matrix"])
def test_keywords_of_the_helpers_at_second_order(check, f, x):
    """Where a helper's keyword changes the result (keepdims, a norm's ord of singular values or
    an odd one, a mode other than the default), in the composition that reads the rule: mutants
    dropping the keyword in the helpers' rules passed the cases above; and operands of different
    shapes (a zero tangent shaped like the other operand broadcast the gradient's)."""
    check(f, x)
