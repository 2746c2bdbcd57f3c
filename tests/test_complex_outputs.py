"""``grad`` of a complex-valued output is an error naming ``vjp`` and ``holomorphic_grad``, for
every transform that needs a real scalar output, also where the reverse transform seeds a full
reduction without computing it (``analysis/realness.py``: the seed then checks what the
output's type follows from).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import srcgrad
from srcgrad import grad, hvp, jvp, source, specialize, value_and_grad, vjp
from srcgrad.errors import SrcgradError

Z = np.array([1.0 + 1.0j, 2.0 - 0.5j])
X = np.array([0.5, -1.0])
C = np.array([1.0 + 2.0j, 3.0])  # a complex global
R = np.array([1.0, 2.0])
COMPLEX = "grad needs .* real number.*vjp.*holomorphic_grad"


@dataclasses.dataclass
class Holder:
    w: np.ndarray


def full_sum(z):
    return np.sum(z)


def full_mean(z):
    return np.mean(np.sin(z) * 2.0)


def looped(z, n=3):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(z) * i)
    return s


def times_global(x):
    return np.sum(x * C)


def times_real_global(x):
    return np.sum(x * R)


def listed(ps, x):
    return np.sum(ps[0] * x + ps[1])


def held(p, x):
    return np.sum(p.w * x)


def spectrum(x):
    return np.sum(np.fft.fft(x))


def inner(x, c):
    return np.dot(x, c)


def half_complex(x, z):
    return np.sum(x) + np.sum(np.abs(z))


def root_of_a_float(x):
    s = float(np.sum(x)) ** 0.5  # a negative Python float to a fractional power is complex
    return np.sum(s * x)


def power_of_a_float(x, p):
    return np.sum(x * float(x[0]) ** p)


def root_in_place(x):
    s = float(np.sum(x))
    s **= 0.5
    return np.sum(x * s)


def pow_of_a_float(x):
    return np.sum(x * pow(float(x[0]), 1.5))


def looped_root(x):
    s = 0.0
    for v in (-1.0, 1.0):
        s = s + v ** 0.5
    return np.sum(x * s)


# (function, complex arguments: refused, real arguments: the gradient as before)
CASES = [
    (full_sum, (Z,), (X,)),
    (full_mean, (Z,), (X,)),
    (looped, (Z,), (X,)),
    (times_global, (X,), None),
    (listed, ([Z, X], X), ([X, X], X)),
    (held, (Holder(Z), X), (Holder(X), X)),
    (spectrum, (X,), None),
    (inner, (X, Z), (X, X)),
    (half_complex, (Z, X), (X, Z)),
    # real operands, a complex value (the real part of its gradient, silently, before)
    (root_of_a_float, (-R,), (R,)),
    (power_of_a_float, (-R, 0.5), (R, 0.5)),
    (root_in_place, (-R,), (R,)),
    (pow_of_a_float, (-R,), (R,)),
    (looped_root, (R,), None),
]


@pytest.mark.parametrize("f, refused, accepted", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_grad_of_a_complex_full_reduction_is_refused(f, refused, accepted):
    with pytest.raises(SrcgradError, match=COMPLEX):
        grad(f)(*refused)
    if accepted is not None:
        g = grad(f)(*accepted)
        assert not np.iscomplexobj(g) or np.iscomplexobj(accepted[0])


@pytest.mark.parametrize(
    "transform",
    [
        grad,
        value_and_grad,
        lambda f: grad(lambda z: (f(z), 1.0), has_aux=True),
        lambda f: specialize(grad(f)),
        lambda f: specialize(value_and_grad(f)),
        lambda f: lambda z: hvp(f)(z, z),
        lambda f: lambda z: jvp(grad(f))(z, z),
        lambda f: lambda z: vjp(grad(f))(z, z),
        lambda f: grad(lambda z: np.sum(np.abs(grad(f)(z)))),
    ],
    ids=["grad", "value_and_grad", "has_aux", "specialize", "specialize_value_and_grad", "hvp",
         "jvp_of_grad", "vjp_of_grad", "grad_of_grad"],
)
def test_every_transform_needing_a_real_output_refuses_a_complex_one(transform):
    with pytest.raises(SrcgradError, match=COMPLEX):
        transform(full_mean)(Z)


def test_checkpointed_loop_refuses_a_complex_output():
    with pytest.raises(SrcgradError, match=COMPLEX):
        grad(looped, checkpoint=2)(Z)
    np.testing.assert_allclose(grad(looped, checkpoint=2)(X), grad(looped)(X))


def test_a_real_output_of_complex_values_needs_no_check():
    # np.abs, np.real make a real value whatever they are given: no check in the code
    def power(z):
        return np.sum(np.abs(z) ** 2) + np.sum(np.real(z * np.conj(z)))

    df = grad(power)
    np.testing.assert_allclose(df(Z), 4 * Z)
    assert "check_real" not in source(df) and "unit_seed" not in source(df)


def test_the_check_reads_what_the_output_follows_from():
    # np.abs(z) is real whatever z is: only x is read
    assert "check_real(x)\n" in source(grad(half_complex, wrt=(0, 1)))
    assert "check_real(ps, x)" in source(grad(listed))
    assert "check_real(R, x)" in source(grad(times_real_global))  # a global is read too
    # what no leaf shows (a complex constant, np.fft) checks the output itself
    assert "check_real(sum_fft_x)" in source(grad(spectrum))
    # a fractional power is checked where it is made, whole powers of a float not at all
    assert "check_real(x_pow_c)" in source(grad(lambda x: np.sum(x ** 0.5)))
    assert "check_real(x)\n" in source(grad(lambda x: np.sum(x * float(x[0]) ** 2)))
    # a derivative specialized to real arrays knows its parameters are real
    df = specialize(grad(half_complex))
    df(X, Z)
    assert "check_real" not in source(df)


def test_a_complex_value_of_a_real_function_named_by_an_unknown_function_is_checked():
    # a function srcgrad cannot see into may make complex values: the output is computed
    @srcgrad.nondifferentiable
    def phase(n):
        return np.exp(1j * np.arange(n))

    def f(x):
        return np.sum(x * phase(2))

    with pytest.raises(SrcgradError, match=COMPLEX):
        grad(f)(X)


# --- SciPy rules with complex input (issue 15's review) ----------------------------------------

SCIPY_REFUSED = [  # wrong before (ive, the densities), or a TypeError inside SciPy (digamma)
    "scipy.special.ive(1.5, z)", "scipy.special.digamma(z)", "scipy.stats.norm.logpdf(z)",
    "scipy.stats.laplace.logpdf(z)", "scipy.stats.logistic.pdf(z)", "scipy.stats.norm.cdf(z)",
    "scipy.stats.norm.logpdf(0.5, z)", "scipy.stats.multivariate_normal.logpdf(z, np.zeros(2))",
]


@pytest.mark.parametrize("call", SCIPY_REFUSED)
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_scipy_rules_of_real_values_refuse_complex_ones(call, mode):
    pytest.importorskip("scipy")
    import scipy.special
    import scipy.stats

    from srcgrad.errors import UnsupportedCaseError

    f = _defined(f"def f(z):\n    return np.sum(np.abs({call}) ** 2)\n", scipy=scipy)
    with pytest.raises(UnsupportedCaseError, match="for real values only"):
        if mode == "grad":
            grad(f)(Z)
        else:
            jvp(f)(Z, Z)


def _defined(text, **names):
    from test_rules import define

    return define(["z"], [text.splitlines()[1].strip()], names)


@pytest.mark.parametrize("call", ["convolve(z, K)", "convolve(K, z)", "correlate(z, K)",
                                  "correlate(K, z)", "correlate(z, z[::-1])"])
def test_scipy_signal_of_complex_values_against_differences(call):
    # the adjoint correlated with the conjugate operand: 0.39 and 0.86 wrong before
    pytest.importorskip("scipy")
    import scipy.signal
    from gradcheck import numeric_grad

    f = _defined(f"def f(z):\n    return np.sum(np.abs(scipy.signal.{call}) ** 2)\n",
                 scipy=scipy, K=np.array([1.0 + 0.5j, 2.0, -1.0j]))
    np.testing.assert_allclose(grad(f)(Z), numeric_grad(f, (Z,), 0), rtol=1e-6, atol=1e-8)


def test_the_list_of_rules_refusing_complex_input():
    from complex_refusals import refusing_rules

    found = refusing_rules()
    for name in ("np.sort", "np.maximum", "np.linalg.svd", "scipy.linalg.cholesky",
                 "scipy.special.ive", "scipy.stats.norm.logpdf", "scipy.stats.poisson.pmf"):
        assert name in found
    assert "partly" in found["np.linalg.norm"] and "np.linalg.vector_norm" not in found
    assert "np.sin" not in found and "scipy.special.gamma" not in found
