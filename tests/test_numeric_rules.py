"""The conventions, refusals and mixed second derivatives of the rules of NumPy's numerical
methods (``srcgrad/rules/numeric_rules.py``); their rows against central differences are
``NUMERIC_ROWS`` in ``tests/test_rules.py``."""

import re

import numpy as np
import pytest
from second_order_check import check_second_order

import srcgrad
from srcgrad import grad, jvp
from srcgrad.errors import NoRuleError, SrcgradError, UnsupportedCaseError

XP = np.array([0.0, 1.0, 1.5, 3.0])
FP = np.array([0.0, 2.0, 2.5, 1.0])


def interp_at(t):
    return np.sum(np.interp(t, XP, FP))


def test_interp_slope_at_knots_and_outside():
    """At a knot the slope of the segment to its right, at the last knot the one to its left,
    outside the range 0 (as JAX), in both modes."""
    t = np.array([0.0, 1.0, 1.5, 3.0, -1.0, 4.0])
    expected = [2.0, 1.0, -1.0, -1.0, 0.0, 0.0]
    np.testing.assert_array_equal(grad(interp_at)(t), expected)
    tangent = jvp(interp_at)
    for i, want in enumerate(expected):
        assert tangent(t, np.eye(6)[i])[1] == want


def running_max(a, w):
    return np.sum(np.maximum.accumulate(a) * w)


def running_min(a, w):
    return np.sum(np.minimum.accumulate(a) * w)


def test_running_extremes_give_a_tie_to_the_earlier_element():
    w = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    a = np.array([1.0, 3.0, 3.0, 2.0, 5.0])  # running max 1, 3, 3, 3, 5: all three 3s are a[1]
    np.testing.assert_array_equal(grad(running_max)(a, w), [1.0, 14.0, 0.0, 0.0, 16.0])
    assert jvp(running_max)(a, w, np.arange(5.0))[1] == np.sum(w * [0, 1, 1, 1, 4])
    b = np.array([2.0, np.nan, 1.0])  # a NaN propagates: it is the minimum from where it is
    np.testing.assert_array_equal(grad(running_min)(b, w[:3]), [1.0, 6.0, 0.0])


def close_to_real(z):
    return np.real_if_close(z)


def close_to_real_times_complex(z):
    return np.sum(np.imag(np.real_if_close(z) * (1 + 2j)))


def close_to_real_in_complex64(x, w):
    return np.sum(np.real_if_close(np.asarray(x, dtype=np.complex64)) * w)


def test_real_if_close_of_complex_input():
    """A negligible imaginary part is dropped: the tangent is the real part of the tangent and
    the gradient has the complex dtype of the input; otherwise both pass unchanged."""
    dz = np.array([1.0 + 2.0j, 3.0 - 1.0j])
    near = np.array([1.0 + 1e-20j, 2.0 + 0j])
    value, tangent = jvp(close_to_real)(near, dz)
    assert not np.iscomplexobj(value) and not np.iscomplexobj(tangent)
    np.testing.assert_array_equal(tangent, [1.0, 3.0])
    g = srcgrad.vjp(close_to_real)(near, np.array([1.0, 2.0]))
    assert g.dtype == np.complex128
    np.testing.assert_array_equal(g, [1.0, 2.0])
    far = np.array([1.0 + 1.0j, 2.0 + 0j])
    np.testing.assert_array_equal(jvp(close_to_real)(far, dz)[1], dz)
    # the identity where it is complex: the seed itself (its conjugate before)
    np.testing.assert_array_equal(srcgrad.vjp(close_to_real)(far, dz), dz)
    # a real result times a complex number: its cotangent is complex, of which only the real
    # part reaches a nearly real input (Im(Re(z) (1 + 2j)) = 2 Re(z))
    np.testing.assert_array_equal(grad(close_to_real_times_complex)(near), [2.0, 2.0])
    # the cotangent of a complex64 value is complex64, as in JAX: float64 weights are rounded
    w = np.array([0.1, 1.0 / 3.0, 1.0 + 2.0**-30])
    g = grad(close_to_real_in_complex64)(np.array([0.5, 1.5, 2.5]), w)
    np.testing.assert_array_equal(g, w.astype(np.float32))


def unwrapped(p):
    return np.sum(np.unwrap(p) * np.arange(1.0, 6.0))


def where_indices(x):
    return np.sum(x[np.where(x > 0)] ** 2)


def test_unwrap_passes_the_gradient_and_one_argument_where_has_none():
    p = np.array([0.0, 3.0, 6.5, -0.5, 2.0])  # jumps of more than pi are unwrapped
    assert not np.allclose(np.unwrap(p), p)
    np.testing.assert_array_equal(grad(unwrapped)(p), np.arange(1.0, 6.0))
    x = np.array([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(grad(where_indices)(x), [2.0, 0.0, 6.0])


def interp_period(t):
    return np.sum(np.interp(t, XP, FP, period=3.0))


def interp_knots(xp):
    return np.sum(np.interp(np.array([0.5, 2.0]), xp, FP))


def gradient_spacing(h):
    return np.sum(np.gradient(np.array([1.0, 4.0, 9.0]), h))


def polyfit_full(y):
    return np.sum(np.polyfit(np.arange(4.0), y, 1, full=True)[0])


def polyfit_cov(y):
    return np.sum(np.polyfit(np.arange(4.0), y, 1, cov=True)[0])


def polyval_matrix(p):
    return np.sum(np.polyval(p, np.array([1.0, 2.0])))


def cov_matrix(a):
    return np.sum(np.abs(np.cov(a)) ** 2)  # real: of complex data, the refusal is cov's


def corrcoef_matrix(a):
    return np.sum(np.corrcoef(a) ** 2)


def max_reduce_where(a):
    return np.maximum.reduce(a, where=a > 0, initial=0.0)


def svd_full_of_a_tall_matrix(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u[:, :2] * s) + np.sum(vt)


def test_second_derivative_of_corrcoef():
    """Its helpers are differentiated by their source (it used to be refused here)."""
    a = np.arange(8.0).reshape(2, 4) ** 1.5 + np.eye(2, 4)
    check_second_order(corrcoef_matrix, [a])


def test_refusals():
    with pytest.raises(UnsupportedCaseError, match="period"):
        grad(interp_period)(np.array([0.5, 2.0]))
    with pytest.raises(NoRuleError, match="knots"):
        grad(interp_knots)(XP)
    with pytest.raises(NoRuleError, match="spacings"):
        grad(gradient_spacing)(0.5)
    for transform in (grad, lambda f: lambda y: jvp(f)(y, np.ones(4))):
        for f in (polyfit_full, polyfit_cov):
            with pytest.raises(UnsupportedCaseError, match="full=False"):
                transform(f)(np.array([1.0, 2.0, 0.5, 3.0]))
    tall = np.arange(6.0).reshape(3, 2) ** 1.5
    for transform in (grad, lambda f: lambda y: jvp(f)(y, np.ones((3, 2)))):
        with pytest.raises(UnsupportedCaseError, match="^" + re.escape(
                "srcgrad differentiates np.linalg.svd of a non-square matrix only with "
                "full_matrices=False (the extra singular vectors are not unique)") + "\n"):
            transform(svd_full_of_a_tall_matrix)(tall)
    with pytest.raises(UnsupportedCaseError, match="1-D coefficients"):
        grad(polyval_matrix)(np.ones((2, 2)))
    a = np.arange(8.0).reshape(2, 4) ** 1.5
    with pytest.raises(UnsupportedCaseError, match="real data"):
        grad(cov_matrix)(a * (1 + 1j))
    with pytest.raises(SrcgradError, match="signature"):
        grad(max_reduce_where)(np.array([1.0, -2.0, 3.0]))


# Second derivatives where one vector feeds several parameters (mixed partials included).
XS = np.array([0.0, 0.3, 1.0, 1.4, 2.5])
MASK = np.array([True, False, True, True, False, True])


def mixed_polyval(z):
    return np.sum(np.polyval(z[:3], z[3:]) ** 2)


def mixed_interp(z):
    return np.sum(np.interp(z[:2], XP, z[2:]) ** 2)


def mixed_trapezoid(z):
    """The integral is not the last operation, so its adjoint's own cotangent carries gradient."""
    a = np.reshape(z**2, (2, 3))
    return (np.sum(np.trapezoid(a, np.cumsum(z[3:] ** 2), axis=1) ** 2)
            + np.sum(np.trapezoid(np.reshape(z, (3, 2)), dx=z[0] ** 2, axis=0) ** 2))


def mixed_select(z):
    return np.sum(np.select([z[:3] > 0], [z[:3] * z[3:]], z[3:] ** 2) ** 2)


def mixed_polyfit(z):
    return np.sum(np.polyfit(XS, z[:5] ** 2, 2, w=XS + 1.0) ** 2)


def mixed_cov(z):
    """Data that are not linear in z, so the tangents are active too (the helpers' rules in dm,
    dother run), with the keywords away from their defaults, ``other`` of another shape than
    ``m``, and ``other`` absent."""
    m, other = np.reshape(z**2, (3, 2)), np.reshape(z[:3] * z[3:], (3, 1))
    return np.sum(np.cov(m, other, rowvar=False, ddof=2, fweights=np.array([1, 2, 1]),
                         aweights=np.array([1.0, 2.0, 0.5])) ** 2) + np.sum(
        np.cov(m.T * z[0], other.T, bias=True) ** 2) + np.sum(np.cov(m.T, ddof=0) ** 2)


def masked_reductions(z):
    return (np.sum(z**3, where=MASK) + np.mean(z**2, where=MASK) * np.prod(z, where=MASK)
            + np.add.reduce(z**2, initial=1.0) * np.sum(np.gradient(z**2, 0.5))
            + np.sum(np.gradient(np.reshape(z**2, (2, 3)), XS[:3], axis=1, edge_order=2) ** 2)
            + np.sum(np.prod(np.gradient(np.reshape(z**2, (2, 3)), 1.0, XS[:3]), axis=0)))


@pytest.mark.parametrize(
    "f, z",
    [
        (mixed_polyval, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
        (mixed_interp, np.array([0.4, 2.2, 1.0, -0.5, 2.0, 0.7])),
        (mixed_trapezoid, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
        (mixed_select, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
        (mixed_cov, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
        (mixed_polyfit, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
        (masked_reductions, np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_mixed_second_order(f, z):
    """Reverse over reverse, forward over reverse, forward over forward (``jvp(jvp(f))``, which
    runs the tangent helpers' own tangents) and reverse over forward (their adjoints) against
    differences of the gradient."""
    hessian = check_second_order(f, [z])
    u = np.linspace(-1.0, 1.0, np.size(z))
    (_, _), (_, second) = jvp(jvp(f))(z, u, u)
    np.testing.assert_allclose(second, u @ hessian @ u, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcgrad.vjp(jvp(f))(z, u, (0.0, 1.0)), hessian @ u, rtol=1e-5,
                               atol=1e-6)


# For tests/mutate_rules.py: the checks of these rules beyond their rows in tests/test_rules.py
# (the helpers' rules are checked by the second derivatives alone).
_Z = np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])
_Z_INTERP = np.array([0.4, 2.2, 1.0, -0.5, 2.0, 0.7])
_rt = srcgrad.runtime
def logaddexp_sum(a, b):
    return np.sum(np.logaddexp(a, b) * np.array([1.0, -2.0, 0.5]))


def test_logaddexp_of_two_boolean_arrays():
    # the gradient of logaddexp at booleans is the one at 0.0 and 1.0 (its vjp writes
    # `x2 - (x1 + 0.0)`: NumPy has no `-` of two boolean arrays)
    a, b = np.array([True, False, True]), np.array([False, False, True])
    want = grad(logaddexp_sum, wrt=(0, 1))(a.astype(float), b.astype(float))
    got = grad(logaddexp_sum, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    np.testing.assert_allclose(want[1], np.array([1.0, -2.0, 0.5]) / (1 + np.exp(a - 0.0 - b)))


A_VAR = np.array([[0.5, -1.0, 2.0], [0.3, 0.7, -0.4]])


def var_about_a_given_mean(m):
    mean = m[:, None] * 1.0
    spread = np.var(A_VAR, axis=1, ddof=1, keepdims=True, mean=mean)
    return np.sum(spread * np.array([[1.0], [2.0]]))


def test_the_tangent_of_var_in_its_mean_alone():
    # np.var of a constant array about an active mean: the divisor is the count of the array's
    # elements per mean (np.size(a) / np.size(y)), read from the array, which has no tangent,
    # less ddof
    m, t = np.array([0.2, -0.1]), np.array([1.0, 0.5])
    h = 1e-6
    want = (var_about_a_given_mean(m + h * t) - var_about_a_given_mean(m - h * t)) / (2 * h)
    np.testing.assert_allclose(jvp(var_about_a_given_mean)(m, t)[1], want, rtol=1e-6)
    # d/dm sum((a - m)^2) / (n - 1) = -2 n (mean(a) - m) / (n - 1), n = 3
    want_by_hand = -3 * np.sum((A_VAR.mean(1) - m) * t * [1.0, 2.0])
    np.testing.assert_allclose(want, want_by_hand, rtol=1e-6)


def var_about_one_number(a, m):
    return np.sum(np.var(a, axis=1, ddof=1, mean=m) * np.array([1.0, -2.0]))


def test_var_about_one_given_number_with_ddof():
    # sum((a - m)^2) / (n - ddof) per row, n = 3, ddof = 1, about one number m (1, 1) for both
    # rows: d/da = w (a - m), d/dm = -sum(w (a - m)); the divisor is the count per row (not per
    # mean: np.size(a) / np.size(y), 3, not 6), less ddof (not plus)
    m = np.array([[0.3]])
    w = np.array([[1.0], [-2.0]])
    want_a, want_m = w * (A_VAR - m), -np.sum(w * (A_VAR - m))
    got_a, got_m = grad(var_about_one_number, wrt=(0, 1))(A_VAR, m)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-13)
    np.testing.assert_allclose(got_m, [[want_m]], rtol=1e-13)
    t = np.array([[1.0, 0.5, -2.0], [0.3, 0.0, 1.0]])
    tangent = jvp(var_about_one_number, wrt=0)(A_VAR, m, t)[1]  # in a alone: m is constant
    assert tangent == pytest.approx(np.sum(want_a * t), rel=1e-13)


def std_about_one_number(a, m):
    return np.sum(np.std(a, axis=1, ddof=1, mean=m) * np.array([1.0, -2.0]))


def test_std_about_one_given_number_with_ddof_and_a_zero_row():
    # sqrt(sum((a - m)^2) / (n - ddof)) per row, n = 3, ddof = 1, about one number m (1, 1):
    # d/da = w (a - m) / ((n - ddof) std), d/dm = -sum(d/da); the first row is all m: its std
    # is 0, and its gradient and tangent 0 (as test_a_zero_std_has_gradient_and_tangent_zero's)
    m = np.array([[0.3]])
    a = np.array([[0.3, 0.3, 0.3], [0.3, 0.7, -0.4]])
    spread = a[1] - m[0, 0]
    want_a = np.array([np.zeros(3), -2.0 * spread / (2 * np.sqrt(np.sum(spread**2) / 2))])
    got_a, got_m = grad(std_about_one_number, wrt=(0, 1))(a, m)
    np.testing.assert_allclose(got_a, want_a, rtol=1e-13, atol=0.0)
    np.testing.assert_allclose(got_m, [[-np.sum(want_a)]], rtol=1e-13)
    t = np.array([[1.0, 0.5, -2.0], [0.3, 0.0, 1.0]])
    tangent = jvp(std_about_one_number, wrt=0)(a, m, t)[1]  # in a alone: m is constant
    assert tangent == pytest.approx(np.sum(want_a * t), rel=1e-13)
    tangent = jvp(std_about_one_number, wrt=1)(a, m, np.array([[0.7]]))[1]  # in m alone
    assert tangent == pytest.approx(-0.7 * np.sum(want_a), rel=1e-13)


def weighted_angle(z):
    return np.sum(np.angle(z) * np.array([2.0, 3.0]))


def test_the_tangent_of_angle_at_zero_is_zero():
    # the convention of its gradient (zero at z == 0) holds for its tangent: a complex tangent
    # at 0 adds nothing; at 1 + 1j the tangent is Im(dz / z)
    z, t = np.array([0.0 + 0.0j, 1.0 + 1.0j]), np.array([0.3 + 0.4j, 0.5 - 0.2j])
    np.testing.assert_allclose(jvp(weighted_angle)(z, t)[1], 3 * np.imag(t[1] / z[1]), rtol=1e-14)
    assert grad(weighted_angle)(z)[0] == 0


def ediff1d_in_to_begin(b):
    return np.ediff1d(A_VAR[0], to_end=np.array([1.0, -2.0]), to_begin=b * 2.0)


def test_the_tangent_of_ediff1d_in_to_begin_alone():
    # ary and to_end constant: the tangent's zeros stand for their pieces at their shapes (two
    # differences of three elements, two elements at the end), not at their tangents' (None)
    b, t = np.array([0.5, -1.5]), np.array([1.0, 0.3])
    y, dy = jvp(ediff1d_in_to_begin)(b, t)
    np.testing.assert_array_equal(y, [1.0, -3.0, -1.5, 3.0, 1.0, -2.0])
    np.testing.assert_array_equal(dy, [2.0, 0.6, 0.0, 0.0, 0.0, 0.0])


def ediff1d_between_ends(ary, to_end):
    return np.ediff1d(ary * 2.0, to_end=to_end * 2.0, to_begin=np.array([1.0, -2.0]))


def ediff1d_of_ends(to_begin, to_end):
    return np.ediff1d(np.array([0.5, -1.0, 2.0]), to_end=to_end, to_begin=to_begin)


def test_the_tangent_of_ediff1d_in_ary_alone_and_in_to_end_alone():
    # the constant pieces keep their places (two at the beginning, two at the end), at their
    # own shapes, not at their absent tangents'
    ary, end = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25])
    _, t = jvp(ediff1d_between_ends, wrt=0)(ary, end, np.array([1.0, 3.0, -2.0]))
    np.testing.assert_array_equal(t, [0.0, 0.0, 4.0, -10.0, 0.0, 0.0])
    _, t = jvp(ediff1d_between_ends, wrt=1)(ary, end, np.array([1.0, -1.0]))
    np.testing.assert_array_equal(t, [0.0, 0.0, 0.0, 0.0, 2.0, -2.0])
    # complex tangents of the (real) ends: the zeros standing for the constant ary take the
    # tangents' dtype (NumPy refuses a complex end of a real array)
    tangents = (np.array([1.0 + 2.0j]), np.array([2.0 - 1.0j]))
    _, t = jvp(ediff1d_of_ends, wrt=(0, 1))(np.array([1.0]), np.array([-1.0]), tangents)
    np.testing.assert_array_equal(t, [1.0 + 2.0j, 0.0, 0.0, 2.0 - 1.0j])


def vdot_with_a_list(a):
    return np.vdot(a, [1.0, 2.0, 3.0])


def test_the_gradient_of_vdot_with_a_list():
    # the list is raveled into an array before the cotangent (a number) multiplies it
    np.testing.assert_array_equal(grad(vdot_with_a_list)(np.array([0.5, 1.0, 2.0])), [1, 2, 3])


_E1, _E2, _E3, _E4 = (np.arange(1.0, 7.0).reshape(2, 3) / k for k in (1.0, 2.0, 3.0, 4.0))


def correlation_energy(v):
    return np.sum(np.correlate(np.array([0.5, -1.0, 2.0, 0.3]), v, "full") ** 2)


def test_the_hessian_of_a_correlation_in_its_second_operand():
    # |C v|^2 with C the linear map v -> correlate(a, v): its hessian is 2 C^T C (the second
    # derivative reads the rule's vjp in v as the adjoint of operand 1, v)
    c = np.stack([np.correlate(np.array([0.5, -1.0, 2.0, 0.3]), e, "full") for e in np.eye(3)], 1)
    h = srcgrad.hessian(correlation_energy)(np.array([1.0, -0.5, 0.25]))
    np.testing.assert_allclose(h, 2 * c.T @ c, rtol=1e-13)


def matrix_times(v):
    return np.einsum("ij,j->i", _E1, v)


def chain_of_four(d):
    return np.einsum("ij,jk,kl,lm->im", _E1, _E2.T, _E3, d)


def chain_of_five(e):
    return np.einsum("ij,jk,kl,lm,m->i", _E1, _E2.T, _E3, _E4.T, e)


def test_the_tangent_of_einsum_in_its_last_operand_alone():
    # two, four and five operands, the last alone active: its tangent takes the last operand's
    # place, the constant ones theirs (none of them is dropped from the einsum)
    v, dv = np.array([1.0, 0.5, -1.0]), np.array([2.0, 0.0, 1.0])
    np.testing.assert_allclose(jvp(matrix_times)(v, dv)[1], matrix_times(dv), rtol=1e-14)
    d, t = np.arange(6.0).reshape(3, 2), np.ones((3, 2))
    np.testing.assert_allclose(jvp(chain_of_four)(d, t)[1], chain_of_four(t), rtol=1e-14)
    e, u = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    np.testing.assert_allclose(jvp(chain_of_five)(e, u)[1], chain_of_five(u), rtol=1e-14)


def diff_after_a_given_start(p):
    return np.diff(A_VAR, prepend=p * 2.0, axis=1)


def test_the_tangent_of_diff_in_prepend_alone():
    # a constant: its piece of the joined array is read from a's shape, not its tangent's (None)
    p, t = np.array([[0.5], [1.0]]), np.array([[1.0], [-3.0]])
    _, dy = jvp(diff_after_a_given_start)(p, t)
    np.testing.assert_array_equal(dy, [[-2.0, 0.0, 0.0], [6.0, 0.0, 0.0]])


def diff_before_a_constant_end(a):
    return np.diff(a * 2.0, append=np.array([[0.5], [1.0]]), axis=1)


def diff_between_a_start_and_a_constant_end(p):
    return np.diff(A_VAR, prepend=p * 2.0, append=np.array([[0.5], [1.0]]), axis=1)


def test_the_tangent_of_diff_with_a_constant_append():
    # the appended piece is constant (its tangent None) but there: a's tangent goes through the
    # joined array (three differences, the last against the constant end), and so does the
    # prepended piece's
    t = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.0]])
    _, dy = jvp(diff_before_a_constant_end)(A_VAR, t)
    np.testing.assert_array_equal(dy, [[-2.0, 4.0, -4.0], [-2.0, 2.0, 0.0]])
    _, dy = jvp(diff_between_a_start_and_a_constant_end)(np.array([[0.5], [1.0]]),
                                                        np.array([[1.0], [-3.0]]))
    np.testing.assert_array_equal(dy, [[-2.0, 0.0, 0.0, 0.0], [6.0, 0.0, 0.0, 0.0]])


def logspace_along_the_last_axis(s, t, b):
    return np.sum(np.logspace(s, t, 3, base=b, axis=2) * np.cos(np.arange(18.0)).reshape(2, 3, 3))


def test_the_gradient_of_logspace_in_a_base_of_two_axes_along_the_last_axis():
    # start (2, 3), stop (3,), base (2, 1): y (2, 3, 3), the samples' axis last, after base's
    # axes (base's gradient is summed back to (2, 1))
    args = (np.array([[0.2, 0.5, 0.3], [0.7, 0.4, 0.6]]), np.array([1.1, 0.9, 1.3]),
            np.array([[1.5], [2.5]]))
    got = grad(logspace_along_the_last_axis, wrt=(0, 1, 2))(*args)
    h = 1e-6
    for i, g in enumerate(got):
        want = np.zeros(np.shape(args[i]))
        for k in np.ndindex(np.shape(args[i])):
            e = np.zeros(np.shape(args[i]))
            e[k] = h
            up = [a + e if j == i else a for j, a in enumerate(args)]
            down = [a - e if j == i else a for j, a in enumerate(args)]
            f = logspace_along_the_last_axis
            want[k] = (f(*up) - f(*down)) / (2 * h)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def geomspace_to_three_ends(s):
    return np.geomspace(s, np.array([2.0, 3.0, 5.0]), 4)


def test_the_tangent_of_geomspace_in_its_start_alone_towards_a_vector_stop():
    # y[k] = s^(1 - k/3) stop^(k/3): dy/ds = (1 - k/3) y / s, each of the three columns (the
    # stop's zero tangent shaped like stop, not like its absent tangent)
    y, t = jvp(geomspace_to_three_ends)(1.5, 1.0)
    np.testing.assert_allclose(t, (1.0 - np.arange(4.0)[:, None] / 3) * y / 1.5, rtol=1e-13)


def spread_about_a_given_mean(a):
    return np.std(a, axis=1, keepdims=True, mean=np.array([[0.1], [0.2]]))


def spread_about_a_given_mean_kept(a, m):
    return np.std(a, axis=1, keepdims=True, mean=m)


def test_the_tangent_of_std_about_a_given_mean_with_keepdims():
    # the tangent keeps the reduced axis, as y does: (2, 1)
    t = np.cos(A_VAR)
    got = jvp(spread_about_a_given_mean)(A_VAR, t)[1]
    h = 1e-6
    want = (spread_about_a_given_mean(A_VAR + h * t) - spread_about_a_given_mean(A_VAR - h * t))
    assert got.shape == (2, 1)
    np.testing.assert_allclose(got, want / (2 * h), rtol=1e-6)
    # the tangent in the mean alone keeps the axis too
    _, got = jvp(spread_about_a_given_mean_kept, wrt=1)(A_VAR, np.array([[0.1], [0.2]]), t[:, :1])
    assert got.shape == (2, 1)
    # and the gradient: the kept (2, 1) cotangent spread over the rows
    g = srcgrad.vjp(spread_about_a_given_mean)(A_VAR, np.array([[1.0], [-2.0]]))
    assert np.sum(g * t) == pytest.approx(np.sum(want / (2 * h) * [[1.0], [-2.0]]), rel=1e-6)


def product_from_an_initial_value(c):
    return np.sum(np.prod(A_VAR, axis=1, keepdims=True, initial=c) * np.array([[1.0], [-2.0]]))


def test_the_gradient_of_prod_in_initial_with_keepdims():
    # d/dc sum(w * c * prod(rows)) = sum(w * prod(rows)), each row's product with its own weight
    want = np.sum(np.prod(A_VAR, axis=1) * np.array([1.0, -2.0]))
    np.testing.assert_allclose(grad(product_from_an_initial_value)(0.7), want, rtol=1e-14)
    # the tangent too: shaped like the kept product (2, 1), not (2,), which the weights (2, 1)
    # would broadcast to (2, 2)
    assert jvp(product_from_an_initial_value)(0.7, 1.0)[1] == pytest.approx(want, rel=1e-14)


def cast_and_weigh(x):
    # (weights of an array: float64 cotangents for the float16 and float32 values)
    return np.sum(np.float16(x) * np.array([0.1, 0.3])) + np.sum(np.float32(x) * np.array([0.7]))


A_LONG, B_LONG = float.fromhex("0x1.c8bd68ab1e4a4p-3"), float.fromhex("0x1.44a4e4006a518p-34")


def long_and_plain(x):
    return np.sum(np.longdouble(x) * A_LONG) + np.sum(x * B_LONG)


def wide_and_single(x):
    return np.sum(np.float64(x) * 0.637) + np.sum(x * np.float32(0.27))


def test_the_gradient_through_calls_of_floating_types_is_of_the_arguments_type():
    # np.float16(x) ... np.longdouble(x) pass the cotangent back in x's type, not in the type
    # called: not rounded to float16 or float32, and added in float64 arithmetic to x's other
    # contributions (A_LONG + B_LONG rounds otherwise through longdouble), or in float32 for a
    # float32 x (0.637 + 0.27 is 0.90700006 in float32, 0.907 rounded from float64)
    got = grad(cast_and_weigh)(np.array([0.5, -1.25]))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0.8, 1.0], rtol=1e-15)
    assert grad(long_and_plain)(np.array([0.5]))[0] == A_LONG + B_LONG
    single = grad(wide_and_single)(np.array([0.5, 2.0], dtype=np.float32))
    assert single.dtype == np.float32
    np.testing.assert_array_equal(single, np.float32(0.637) + np.float32(0.27))


def var_about_one_mean(m):
    return np.sum(np.var(A_VAR, axis=1, mean=m * 1.0) * np.array([1.0, 2.0]))


def test_the_tangent_of_var_about_a_mean_broadcast_to_every_row():
    # a number for the mean of each row: the divisor is still the count per row, 3, which
    # np.size(a) / np.size(y) gives (not np.size(a) / np.size(mean), 6)
    m = 0.25
    want = -2 * np.sum((A_VAR.mean(axis=1) - m) * np.array([1.0, 2.0]))
    np.testing.assert_allclose(jvp(var_about_one_mean)(m, 1.0)[1], want, rtol=1e-12)


def nan_spread_kept(x):
    return np.sum(np.nanvar(x, axis=1, keepdims=True) * np.array([[1.0], [-2.0]]))


def test_the_gradient_of_nanvar_with_keepdims():
    x = A_VAR.copy()
    x[0, 1] = np.nan
    got = grad(nan_spread_kept)(x)
    centered = x - np.nanmean(x, axis=1, keepdims=True)
    counts = np.array([[2.0], [3.0]])
    want = np.where(np.isnan(x), 0.0, 2 * centered / counts * np.array([[1.0], [-2.0]]))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the tangent at the NaN is not read, even an infinite one
    t = np.array([[1.0, np.inf, 0.5], [0.0, 2.0, -1.0]])
    np.testing.assert_allclose(jvp(nan_spread_kept)(x, t)[1], np.sum(np.nan_to_num(want * t)),
                               rtol=1e-12)


def diff_after_a_constant_start(a):
    return np.diff(a * 2.0, prepend=np.array([[0.5], [1.0]]), axis=1)


def test_the_tangent_of_diff_in_a_with_a_constant_prepend():
    # the prepended piece is constant (its tangent None): a's tangent still goes through the
    # joined array, one difference per column of a (3), not the differences of a alone (2)
    t = np.array([[1.0, 0.0, 2.0], [0.0, -1.0, 0.0]])
    _, dy = jvp(diff_after_a_constant_start)(A_VAR, t)
    np.testing.assert_array_equal(dy, [[2.0, -2.0, 4.0], [0.0, -2.0, 2.0]])


def spread_about_its_own_value(a):
    return np.sum(np.std(a, axis=1, mean=np.array([[0.5], [0.5]])) * np.array([1.0, 2.0]))


def test_the_tangent_of_std_about_a_given_mean_at_zero():
    # every element at the given mean: std 0, where its tangent is 0 (as its gradient), not 0 / 0
    got = jvp(spread_about_its_own_value)(np.full((2, 3), 0.5), np.ones((2, 3)))[1]
    assert got == 0.0


def reshaped_by_the_method(x):
    return np.sum(np.ndarray.reshape(x, (3, 2), order="F") * np.arange(6.0).reshape(3, 2))


def test_ndarray_reshape_called_on_the_class_with_order():
    w = np.arange(6.0).reshape(3, 2)
    want = np.reshape(w, (2, 3), order="F")
    np.testing.assert_array_equal(grad(reshaped_by_the_method)(A_VAR), want)
    t = np.arange(6.0).reshape(2, 3)
    got = jvp(reshaped_by_the_method)(A_VAR, t)[1]
    assert got == np.sum(np.reshape(t, (3, 2), order="F") * w)


def weighted_by_exponents(x):
    return np.sum(x**2 * np.frexp(x)[1])


def test_the_gradient_through_the_exponent_of_frexp_alone():
    # the mantissa's cotangent is absent: frexp's adjoint takes zeros of x's shape for it
    x = np.array([0.3, -1.7, 5.0])
    np.testing.assert_array_equal(grad(weighted_by_exponents)(x), 2 * x * np.frexp(x)[1])


def nanstd_of_rows(x):
    return np.sum(np.nanstd(x, axis=1) * np.array([1.0, -2.0]))


def test_a_zero_nanstd_has_gradient_and_tangent_zero():
    # as np.std's (test_rules.py): a row of equal numbers (its NaN skipped) has std 0, gradient
    # and tangent 0; the NaNs get none, and their tangent is not read, even an infinite one
    x = np.array([[1.5, np.nan, 1.5, 1.5], [1.0, 2.0, np.nan, 4.0]])
    g = grad(nanstd_of_rows)(x)
    numbers = np.array([1.0, 2.0, 4.0])
    spread = -2.0 * (numbers - np.mean(numbers)) / (3 * np.std(numbers))
    np.testing.assert_allclose(g, [[0.0, 0.0, 0.0, 0.0], [spread[0], spread[1], 0.0, spread[2]]],
                               rtol=1e-12, atol=0.0)
    t = np.array([[1.0, np.inf, -2.0, 0.5], [0.3, 0.1, np.inf, -0.4]])
    want = np.sum(spread * [0.3, 0.1, -0.4])
    assert jvp(nanstd_of_rows)(x, t)[1] == pytest.approx(want, rel=1e-12)


def sums_from(c):
    return np.outer(np.sum(A_VAR, axis=0, initial=c), np.array([1.0, 2.0]))


def test_the_tangent_of_sum_in_initial_alone_has_the_results_shape():
    # initial is added to each of the three sums: its tangent, a number, spread to y's shape
    # (a tangent left 0-d made the outer product's tangent one row instead of three)
    _, t = jvp(sums_from)(0.5, 2.0)
    np.testing.assert_array_equal(t, [[2.0, 4.0]] * 3)


def masked_kept_product(a):
    kept = np.prod(a, axis=1, keepdims=True, where=np.array([True, False, True]))
    return np.sum(kept * np.array([[1.0], [-2.0]]))


def test_the_gradient_of_a_masked_product_with_keepdims():
    # d/da[i, j] of w[i] prod_k a[i, k] over the selected k: w[i] times the other selected one
    want = np.array([[2.0, 0.0, 0.5], [-2.0 * -0.4, 0.0, -2.0 * 0.3]])
    np.testing.assert_allclose(grad(masked_kept_product)(A_VAR), want, rtol=1e-14)
    t = np.array([[1.0, 5.0, -1.0], [0.5, 7.0, 2.0]])
    assert jvp(masked_kept_product)(A_VAR, t)[1] == pytest.approx(np.sum(want * t), rel=1e-14)


def product_of_no_element(a):
    return np.sum(np.prod(a, axis=1, where=False) * np.array([1.0, -2.0]))


def test_a_product_over_no_element_has_gradient_and_tangent_zero():
    # where=False selects nothing: each product is `initial` (1), constant in a
    np.testing.assert_array_equal(grad(product_of_no_element)(A_VAR), np.zeros((2, 3)))
    assert jvp(product_of_no_element)(A_VAR, np.ones((2, 3)))[1] == 0.0


MUTATION_CHECKS = {
    np.interp: [test_interp_slope_at_knots_and_outside,
                lambda: test_mixed_second_order(mixed_interp, _Z_INTERP)],
    np.maximum.accumulate: [test_running_extremes_give_a_tie_to_the_earlier_element],
    np.minimum.accumulate: [test_running_extremes_give_a_tie_to_the_earlier_element],
    np.unwrap: [test_unwrap_passes_the_gradient_and_one_argument_where_has_none],
    np.polyfit: [test_refusals],
    np.real_if_close: [test_real_if_close_of_complex_input],
    np.logaddexp: [test_logaddexp_of_two_boolean_arrays],
    np.var: [test_the_tangent_of_var_in_its_mean_alone, test_var_about_one_given_number_with_ddof,
             test_the_tangent_of_var_about_a_mean_broadcast_to_every_row],
    np.nanvar: [test_the_gradient_of_nanvar_with_keepdims],
    np.nanstd: [test_a_zero_nanstd_has_gradient_and_tangent_zero],
    np.frexp: [test_the_gradient_through_the_exponent_of_frexp_alone],
    np.ndarray.reshape: [test_ndarray_reshape_called_on_the_class_with_order],
    np.logspace: [test_the_gradient_of_logspace_in_a_base_of_two_axes_along_the_last_axis],
    np.geomspace: [test_the_tangent_of_geomspace_in_its_start_alone_towards_a_vector_stop],
    np.vdot: [test_the_gradient_of_vdot_with_a_list],
    np.einsum: [test_the_tangent_of_einsum_in_its_last_operand_alone],
    np.correlate: [test_the_hessian_of_a_correlation_in_its_second_operand],
    np.ediff1d: [test_the_tangent_of_ediff1d_in_to_begin_alone,
                 test_the_tangent_of_ediff1d_in_ary_alone_and_in_to_end_alone],
    np.diff: [test_the_tangent_of_diff_in_prepend_alone,
              test_the_tangent_of_diff_with_a_constant_append,
              test_the_tangent_of_diff_in_a_with_a_constant_prepend],
    np.std: [test_std_about_one_given_number_with_ddof_and_a_zero_row,
             test_the_tangent_of_std_about_a_given_mean_with_keepdims,
             test_the_tangent_of_std_about_a_given_mean_at_zero],
    **dict.fromkeys((np.float16, np.float32, np.float64, np.longdouble),
                    [test_the_gradient_through_calls_of_floating_types_is_of_the_arguments_type]),
    np.angle: [test_the_tangent_of_angle_at_zero_is_zero],
    np.polyval: [lambda: test_mixed_second_order(mixed_polyval, _Z)],
    np.trapezoid: [lambda: test_mixed_second_order(mixed_trapezoid, _Z)],
    _rt.trapezoid_grad: [lambda: test_mixed_second_order(mixed_trapezoid, _Z)],
    _rt.trapezoid_grad_x: [lambda: test_mixed_second_order(mixed_trapezoid, _Z)],
    _rt.select_choice_grad: [lambda: test_mixed_second_order(mixed_select, _Z)],
    _rt.select_tangent: [lambda: test_mixed_second_order(mixed_select, _Z)],
    _rt.cov_vjp: [lambda: test_mixed_second_order(mixed_cov, _Z)],
    _rt.cov_jvp: [lambda: test_mixed_second_order(mixed_cov, _Z)],
    _rt.polyfit_grad: [lambda: test_mixed_second_order(mixed_polyfit, _Z)],
    _rt.polyfit_tangent: [lambda: test_mixed_second_order(mixed_polyfit, _Z)],
    _rt.gradient_vjp: [lambda: test_mixed_second_order(masked_reductions, _Z)],
    _rt.gradient_jvp: [lambda: test_mixed_second_order(masked_reductions, _Z)],
    np.sum: [lambda: test_mixed_second_order(masked_reductions, _Z),
             test_the_tangent_of_sum_in_initial_alone_has_the_results_shape],
    np.prod: [lambda: test_mixed_second_order(masked_reductions, _Z),
              test_the_gradient_of_prod_in_initial_with_keepdims,
              test_the_gradient_of_a_masked_product_with_keepdims,
              test_a_product_over_no_element_has_gradient_and_tangent_zero],
    np.add.reduce: [lambda: test_mixed_second_order(masked_reductions, _Z)],
}
