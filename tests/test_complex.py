"""Complex numbers (docs/complex.md): one convention everywhere, checked against central
differences along the real and the imaginary axis.

For a real-valued ``f`` of complex ``z = x + 1j*y``, ``grad(f)(z) == df/dx + 1j*df/dy``; a vjp's
seed ``s`` of a complex output ``w`` stands for the real function ``Re(sum(conj(s) * w))``, whose
gradient the vjp returns; a real argument always gets a real gradient. The rule table's complex
rows (tests/test_rules.py ``complex_rows``, ``fft_rows``) check each rule at first order; here: the
issue's examples, the refusals, ``holomorphic_grad``, and second order.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from gradcheck import numeric_grad
from test_rules import define

import srcgrad
from srcgrad import grad, holomorphic_grad, hvp, jvp, vjp
from srcgrad.errors import SrcgradError, UnsupportedCaseError

RNG = np.random.default_rng(4)
Z = RNG.uniform(0.3, 1.2, (2, 3)) + 1j * RNG.uniform(0.3, 1.2, (2, 3))
H = RNG.uniform(-1.0, 1.0, (2, 3))


def _f(body, params=("z",), **consts):
    return define(list(params), [body], consts)


# --- a real input gets a real gradient (the examples) ----------------------------------


@pytest.mark.parametrize(
    "body, arg, want",
    [
        ("return np.abs(x * 1j)", 0.5, 1.0),
        ("return np.sum(np.abs(x * (1 + 2j)))", np.array([0.3, -0.2]),
         np.sqrt(5) * np.array([1, -1])),
        ("return np.sum(np.real(np.exp(1j * x)))", np.array([1.0]), -np.sin([1.0])),
        ("return np.sum(np.real(-1j * x))", np.array([1.0, 2.0]), np.zeros(2)),
        ("return np.sum(np.imag(-1j * x))", np.array([1.0, 2.0]), -np.ones(2)),
    ],
)
def test_a_real_input_gets_a_real_gradient(body, arg, want):
    g = grad(_f(body, ("x",)))(arg)
    assert not np.iscomplexobj(g)
    assert isinstance(g, float) or g.dtype == np.float64
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)


def test_one_function_written_four_ways_has_one_gradient():
    """|z|^2 as abs squared, z * conj(z), real**2 + imag**2: all 2z (steepest ascent)."""
    for body in (
        "return np.sum(np.abs(z) ** 2)",
        "return np.sum(np.real(z * np.conj(z)))",
        "return np.sum(np.real(z) ** 2 + np.imag(z) ** 2)",
        "return np.sum(np.abs(z * z))",
        "return np.sum(z.real ** 2 + z.imag ** 2)",
        "return np.sum(np.real(z.conj() * z))",
    ):
        g = grad(_f(body))(Z)
        np.testing.assert_allclose(g, 2 * Z, rtol=1e-12, err_msg=body)
    g = grad(_f("return np.sum(np.real(z) + 2 * np.imag(z))"))(Z)
    np.testing.assert_allclose(g, np.full(Z.shape, 1 + 2j))


def test_descent_along_minus_the_gradient_lowers_a_real_function():
    f = _f("return np.sum(np.abs(z - T) ** 2 + np.real(z) * np.imag(z))", T=1 - 2j)
    step = 1e-3 * grad(f)(Z)
    assert f(Z - step) < f(Z) < f(Z + step)


def test_indexing_with_repeated_indices_sums_complex_gradients():
    g = grad(_f("return np.sum(np.abs(z[[0, 1, 1], ::2] - 1j) ** 2)"))(Z)
    want = np.zeros_like(Z)
    want[:, ::2] = 2 * (Z[:, ::2] - 1j)
    want[1] *= 2
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_a_complex_scalar_argument_gets_a_complex_number():
    for body in ("return np.abs(z) ** 2 + np.real(z)", "return abs(z) ** 2 + z.real"):
        g = grad(_f(body))(1.0 + 2.0j)
        assert isinstance(g, complex) and g == pytest.approx(3.0 + 4.0j)
    g32 = grad(_f("return np.sum(np.abs(z) ** 2)"))(Z.astype(np.complex64))
    assert g32.dtype == np.complex64


# --- vjp and jvp of complex-valued functions -----------------------------------------------


def test_vjp_of_a_complex_output_is_the_gradient_of_its_pairing_with_the_seed():
    """vjp(f)(z, s) = grad of Re(sum(conj(s) * f(z))): conj(f'(z)) * s for a holomorphic f (as
    PyTorch's backward(s)); autograd and JAX return f'(z) * s for the seed conj(s)."""
    f = _f("return np.exp(z) * z")
    s = RNG.normal(size=Z.shape) + 1j * RNG.normal(size=Z.shape)
    paired = _f("return np.real(np.sum(np.conj(S) * np.exp(z) * z))", S=s)
    np.testing.assert_allclose(vjp(f)(Z, s), numeric_grad(paired, (Z,), 0), rtol=1e-7)
    np.testing.assert_allclose(vjp(f)(Z, s), np.conj(np.exp(Z) * (1 + Z)) * s, rtol=1e-12)
    t = RNG.normal(size=Z.shape) + 1j * RNG.normal(size=Z.shape)
    np.testing.assert_allclose(jvp(f)(Z, t)[1], np.exp(Z) * (1 + Z) * t, rtol=1e-12)


def test_grad_of_a_complex_output_is_an_error_naming_vjp_and_holomorphic_grad():
    with pytest.raises(SrcgradError, match="vjp.*holomorphic_grad"):
        grad(_f("return z * z"))(1.0 + 1.0j)
    with pytest.raises(SrcgradError, match="holomorphic_grad"):
        grad(_f("return np.exp(x * 1j)", ("x",)))(0.5)  # a real input, a complex output


# --- holomorphic_grad ----------------------------------------------------------------------


def test_holomorphic_grad_is_the_complex_derivative_to_second_order():
    f = _f("return np.sin(z) * z ** 2")
    z = 0.3 + 0.7j
    d1 = np.cos(z) * z**2 + 2 * z * np.sin(z)
    d2 = -np.sin(z) * z**2 + 4 * z * np.cos(z) + 2 * np.sin(z)
    assert holomorphic_grad(f)(z) == pytest.approx(d1, rel=1e-12)
    assert holomorphic_grad(holomorphic_grad(f))(z) == pytest.approx(d2, rel=1e-12)
    g = holomorphic_grad(_f("return np.sum(np.exp(z) * W)", W=np.arange(1.0, 4.0)))
    zs = np.array([0.1 + 0.2j, -0.3j, 1.0 + 0j])
    np.testing.assert_allclose(g(zs), np.exp(zs) * np.arange(1.0, 4.0), rtol=1e-12)


def test_holomorphic_grad_refuses_what_has_no_complex_derivative():
    f = _f("return np.sin(z)")
    with pytest.raises(SrcgradError, match="complex argument"):
        holomorphic_grad(f)(0.5)
    with pytest.raises(SrcgradError, match="one number"):
        holomorphic_grad(_f("return z * np.ones(2)"))(1j)


# --- rules defined for real values only refuse complex ones ----------------------------------

REFUSED = [
    "np.maximum(z, 0.5)", "np.minimum(z, w)", "np.fmax(z, w)", "np.fmin(w, z)",
    "np.clip(z, 0, 1)", "np.max(z)", "np.min(z, axis=0)", "np.ptp(z)", "np.sort(z)",
    "np.partition(z, 1)", "np.median(z)",
    "np.var(z)", "np.std(z)", "np.sinc(z)", "np.sign(z)", "np.correlate(z[0], w[0])",
    "np.linalg.slogdet(z[:, :2])[1]", "np.linalg.cholesky(z[:, :2])", "np.linalg.eigh(z[:, :2])[0]",
    "np.linalg.eigvalsh(z[:, :2])", "np.linalg.svd(z, full_matrices=False)[1]",
    "np.linalg.svdvals(z)", "np.linalg.qr(z.T)[1]", "np.linalg.pinv(z)",
    "np.linalg.lstsq(z.T, w[0])[0]", "np.linalg.norm(z, 'nuc')", "np.linalg.norm(z, 2)",
    "np.linalg.matrix_norm(z, ord=-2)", "np.linalg.cond(z[:, :2])",
]


@pytest.mark.parametrize("call", REFUSED)
def test_rules_for_real_values_refuse_complex_ones(call):
    f = _f(f"return np.sum(np.abs({call}))", ("z", "w"))
    with pytest.raises(UnsupportedCaseError, match="for real (values|matrices) only") as info:
        grad(f)(Z, Z[::-1])
    assert "while differentiating" in "".join(getattr(info.value, "__notes__", []))
    # forward mode refuses too, or is right (np.correlate's tangent holds for complex values)
    try:
        tangent = jvp(f)(Z, Z[::-1], Z)[1]
    except UnsupportedCaseError as e:
        assert re.search("for real (values|matrices) only", str(e))
    else:
        h = 1e-6
        assert tangent == pytest.approx((f(Z + h * Z, Z[::-1]) - f(Z - h * Z, Z[::-1])) / (2 * h),
                                        rel=1e-6)


SCIPY_REFUSED = [  # their gradients of a complex (Hermitian) matrix were wrong, or crashed in SciPy
    "scipy.linalg.solve(s + 3 * np.eye(2), w[0, :2])", "scipy.linalg.cholesky(h)",
    "scipy.linalg.cho_factor(h)[0]", "scipy.linalg.cho_solve(scipy.linalg.cho_factor(h), w[0, :2])",
    "scipy.linalg.eigh(h, eigvals_only=True)",
]


@pytest.mark.parametrize("call", SCIPY_REFUSED)
def test_scipy_rules_for_real_values_refuse_complex_ones(call):
    pytest.importorskip("scipy")
    import scipy.linalg

    f = define(["z", "w"], ["s = z[:, :2]", "h = s @ np.conj(s).T + 3 * np.eye(2)",
                            f"return np.sum(np.abs({call}))"], {"scipy": scipy})
    with pytest.raises(UnsupportedCaseError, match="for real values only") as info:
        grad(f)(Z, Z[::-1])
    assert "while differentiating" in "".join(getattr(info.value, "__notes__", []))


# --- second order ----------------------------------------------------------------------------


def _check_second(f, z):
    """hvp (the jvp of grad(f)) and vjp(grad(f)) against central differences of grad(f)."""
    g = grad(f)
    v = RNG.normal(size=np.shape(z)) + (1j * RNG.normal(size=np.shape(z)) if np.iscomplexobj(z)
                                        else 0)
    h = 1e-6
    want = (g(z + h * v) - g(z - h * v)) / (2 * h)
    np.testing.assert_allclose(hvp(f)(z, v), want, rtol=1e-6, atol=1e-7)  # jvp of grad(f)
    paired = lambda a: np.real(np.sum(np.conj(v) * g(a)))  # noqa: E731
    np.testing.assert_allclose(vjp(g)(z, v), numeric_grad(paired, (z,), 0), rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize(
    "body",
    [
        "return np.sum(np.abs(np.exp(z) * z) + np.angle(z) * np.real(z))",
        "return np.sum(np.real(np.conj(z) * np.log(z)) + np.imag(np.sqrt(z)) ** 2)",
        "return np.linalg.norm(np.linalg.inv(z[:, :2] + 2 * np.eye(2)) @ z)",
        "return np.abs(np.vdot(z, np.sin(z))) + np.abs(np.prod(z)) + np.linalg.norm(z, np.inf)"
        " + np.linalg.vector_norm(z, ord=3) * np.linalg.norm(z[0], 1)",
    ],
)
def test_second_order_of_real_functions_of_complex_values(body):
    _check_second(_f(body), Z)


@pytest.mark.parametrize(
    "call, arg",
    [
        ("np.fft.rfft(a, 5)", H),
        ("np.fft.irfft(a, 5, axis=0)", Z),  # odd length
        ("np.fft.rfftn(a, s=(2, 4), axes=(0, 1))", H),
        ("np.fft.hfft(a, norm='forward')", Z),
        ("np.fft.ihfft(a, 4)", H),
    ],
)
def test_second_order_of_the_fft(call, arg):
    """A nonlinear function of each transform: its second derivative differentiates the
    transform's adjoint (reverse over reverse) and tangent (forward over reverse)."""
    out = np.shape(eval(call, {"np": np, "a": arg}))
    weights = np.resize(np.arange(1.0, 31.0), out)
    f = _f(f"y = {call}\n    return np.sum(np.abs(y) ** 2 * W) + np.sum(np.real(y) ** 3)", ("a",),
           W=weights)
    _check_second(f, arg)


def test_differentiated_derivatives_keep_the_convention():
    """A generated vjp called inside a function that is differentiated again (rules/derived.py)
    takes and returns public-convention cotangents."""
    inner = vjp(_f("return np.exp(z) * z"))

    def outer(z):
        return np.sum(np.abs(inner(z, z)) ** 2)

    z = Z[0]
    np.testing.assert_allclose(srcgrad.grad(outer)(z), numeric_grad(outer, (z,), 0), rtol=1e-6)


def test_jacobian_and_hessian_refuse_complex_arrays():
    """Their rows (vjp) and columns (jvp) would be different matrices of a complex argument."""
    f = _f("return np.exp(z)")
    for method in ("reverse", "forward", "auto"):
        with pytest.raises(SrcgradError, match="real arrays"):
            srcgrad.jacobian(f, method=method)(Z[0])
    with pytest.raises(SrcgradError, match="real arrays"):
        srcgrad.jacobian(_f("return np.exp(1j * x)", ("x",)), method="reverse")(H[0])
    with pytest.raises(SrcgradError, match="real arrays"):
        srcgrad.hessian(_f("return np.sum(np.abs(z) ** 2)"))(Z[0])
    J = srcgrad.jacobian(_f("return np.sin(x) * 2", ("x",)))(H[0])  # real arrays: unchanged
    np.testing.assert_allclose(J, np.diag(2 * np.cos(H[0])))


def _power_chain(z, n):
    if n == 0:
        return z
    return _power_chain(z * (0.5 + 0.5j), n - 1) + z


def _recursive_loss(z):
    return np.sum(np.abs(_power_chain(z, 3)) ** 2)


def test_a_recursive_function_of_complex_values():
    """A recursive call runs its split derivative (runtime/recursion.py), which takes and gives
    public-convention cotangents: conjugated across, like a generated vjp."""
    z = Z[0]
    np.testing.assert_allclose(grad(_recursive_loss)(z), numeric_grad(_recursive_loss, (z,), 0),
                               rtol=1e-6)


def _joined(z):
    return np.ediff1d(z, to_begin=z[:1] * 2, to_end=z[1:2])


def test_the_tangent_of_ediff1d_of_complex_ends():
    # the tangent of to_begin / to_end was np.ediff1d of real zeros: NumPy refused the complex
    # ends ("dtype of `to_begin` must be compatible with input `ary`")
    z = np.array([1 + 2j, 0.5 - 1j, 2 + 0.3j, -1 + 1j])
    t = np.array([0.3 + 1j, -1 + 0.2j, 0.5, 1j])
    value, tangent = jvp(_joined)(z, t)
    np.testing.assert_allclose(value, _joined(z))
    step = 1e-6
    expected = (_joined(z + step * t) - _joined(z - step * t)) / (2 * step)
    np.testing.assert_allclose(tangent, expected, rtol=1e-7, atol=1e-9)
