"""Cases that only a surviving mutant showed untested (docs/development.md, mutation testing).

Each is a composition a user can write, checked against central differences or exact values;
the comment names the mutant of ``tests/mutate_code.py`` it kills and what the mutant did.
"""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import check_grad, numeric_grad

import srcgrad
from srcgrad.errors import (
    DerivedCallError,
    NonScalarOutputError,
    SeedShapeError,
    SrcgradError,
    TangentShapeError,
    UnsupportedCaseError,
)


def test_of_repeated_indices_only_the_write_that_lands_gets_gradient():
    # runtime.indexing.take_item: `np.unique(flat[::-1], ...)` without the reversal gave the
    # gradient to the first write of a repeated index instead of the last (which NumPy keeps)
    w = np.array([2.0, 3.0, 5.0])

    def f(v):
        y = np.zeros(3)
        y[[0, 0, 2]] = v
        return np.sum(y * w)

    g = check_grad(f, (np.array([0.5, -1.0, 4.0]),))
    np.testing.assert_array_equal(g, [0.0, 2.0, 5.0])


def test_the_norm_of_a_number_has_gradient_zero_at_zero():
    # runtime.linalg.norm_grad of a 0-d x: `dy / np.sign(x)` gave inf at 0 (the convention: 0)
    def f(x):
        return np.linalg.norm(x)

    assert srcgrad.grad(f)(0.0) == 0.0
    assert srcgrad.grad(f)(-2.0) == -1.0


def test_cov_of_two_observations_in_columns():
    # runtime.numerics._unstack: rowvar=False with exactly 2 observations (rows) was the one
    # shape `!= 2` for `!= 1` left untransposed
    w = np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 1.5], [-2.0, 1.0, 0.25]])

    def f(a):
        return np.sum(np.cov(a, rowvar=False) * w)

    check_grad(f, (np.array([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]]),))


def test_put_of_nothing():
    # runtime.writes._cycle: the positions of an empty np.put are integers (`np.zeros(shape)`
    # without `dtype=np.intp` made them floats, which cannot index)
    def f(x):
        y = x * 1.0
        np.put(y, np.array([], dtype=int), np.array([]))
        return np.sum(y * y)

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(check_grad(f, (x,)), 2 * x, rtol=1e-12)


def test_put_out_of_bounds_names_the_index():
    # runtime.writes.put_index: the message named another index than the one out of bounds
    def f(x):
        y = x * 1.0
        np.put(y, [1, 7], x[:2])
        return np.sum(y)

    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
        srcgrad.grad(f)(np.array([0.5, -1.0, 2.0]))



def test_derivatives_of_lgamma_below_one_half():
    # runtime.special.trigamma: the reflection below 1/2 adds (pi / sin(pi a))**2; with `pi`
    # alone the second derivative was wrong there. Exact: trigamma(1/4) = pi**2 + 8 G (Catalan's
    # G), trigamma(-1/2) = trigamma(1/2) + 4 = pi**2 / 2 + 4
    catalan = 0.915965594177219015
    d2 = srcgrad.grad(srcgrad.grad(math.lgamma))
    assert d2(0.25) == pytest.approx(math.pi**2 + 8 * catalan, rel=1e-12)
    assert d2(-0.5) == pytest.approx(math.pi**2 / 2 + 4, rel=1e-12)
    # and the first derivative (digamma's reflection): digamma(1/4) = -gamma - pi/2 - 3 log 2,
    # digamma(-1/2) = digamma(1/2) + 2 = -gamma - 2 log 2 + 2
    euler = 0.5772156649015329
    d1 = srcgrad.grad(math.lgamma)
    assert d1(0.25) == pytest.approx(-euler - math.pi / 2 - 3 * math.log(2), rel=1e-12)
    assert d1(-0.5) == pytest.approx(-euler - 2 * math.log(2) + 2, rel=1e-12)


@pytest.mark.parametrize("subset", ["index", "value"])
def test_tangent_of_a_subset_of_eigenvalues(subset):
    # runtime.scipy_helpers.eigh_tangent: the eigenvectors of the subset asked for (a mutant
    # that dropped the subset keyword took all of them)
    linalg = pytest.importorskip("scipy.linalg")
    a = np.diag([1.0, 2.0, 3.0]) + 0.1 * np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0],
                                                   [2.0, -1.0, 0.0]])
    da = np.array([[0.3, -0.2, 0.5], [-0.2, 1.0, 0.1], [0.5, 0.1, -0.7]])

    def by_index(a):
        return linalg.eigh(a, eigvals_only=True, subset_by_index=[1, 2])

    def by_value(a):
        return linalg.eigh(a, eigvals_only=True, subset_by_value=(1.5, 10.0))

    f = by_index if subset == "index" else by_value
    h = 1e-6
    _, t = srcgrad.jvp(f)(a, da)
    assert np.shape(t) == (2,)
    np.testing.assert_allclose(t, (f(a + h * da) - f(a - h * da)) / (2 * h), rtol=1e-7)


def test_tangent_of_a_dirichlet_density_with_a_list_of_concentrations():
    # runtime.scipy_helpers.dirichlet_jvp: alpha given as a list (np.asarray dropped: a list
    # minus 1 is a TypeError)
    stats = pytest.importorskip("scipy.stats")

    def f(p):
        return stats.dirichlet.logpdf(p / np.sum(p), [1.5, 2.0, 3.0])

    p, dp = np.array([0.2, 0.3, 0.5]), np.array([0.1, -0.3, 0.2])
    h = 1e-6
    _, t = srcgrad.jvp(f)(p, dp)
    assert t == pytest.approx((f(p + h * dp) - f(p - h * dp)) / (2 * h), rel=1e-7)


def test_logsumexp_with_weights_of_more_axes_than_its_argument():
    # runtime.scipy_helpers._logsumexp_weights: the weights' axes count (`b is not None` for
    # `b is None` took a's alone)
    special = pytest.importorskip("scipy.special")
    w = np.array([[1.0, -2.0], [0.5, 3.0]])

    def f(a, b):
        return np.sum(special.logsumexp(a, axis=-1, b=b) * w[0])

    a = np.array([0.3, -1.0, 0.8])
    b = np.array([[1.0, 2.0, 0.5], [0.25, 1.5, 3.0]])
    check_grad(f, (a, b), wrt=(0, 1))


def test_qr_of_a_mode_without_a_derivative_is_refused():
    # runtime.linalg._qr_parts: refused with srcgrad's message (a mutant raised the string)
    def f(a):
        return np.sum(np.linalg.qr(a, mode="complete")[0])

    with pytest.raises(UnsupportedCaseError, match="with mode 'reduced' or 'r'; got "
                       "mode='complete'"):
        srcgrad.grad(f)(np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 1.0]]))


def test_a_banded_solve_differentiates_every_entry():
    # runtime.scipy_helpers: the gradient of solve(..., assume_a='banded') was projected on the
    # band of `a` (a wrong gradient, found from a mutant of _bandwidth that no test ran): SciPy
    # finds the band from the values, so an entry outside it, perturbed, is read. The
    # tridiagonal solver does read only its band
    linalg = pytest.importorskip("scipy.linalg")
    a = np.array([[4.0, 1.0, 0.0, 0.0], [0.0, 3.0, 0.5, 0.0], [0.0, 0.0, 2.0, 1.0],
                  [0.0, 0.0, 0.0, 5.0]])
    b = np.array([1.0, 2.0, 3.0, -1.0])

    def banded(a):
        return np.sum(linalg.solve(a, b, assume_a="banded") * b)

    def tridiagonal(a):
        return np.sum(linalg.solve(a, b, assume_a="tridiagonal") * b)

    g = check_grad(banded, (a,))
    assert g[3, 0] != 0.0
    da = np.ones((4, 4))
    h = 1e-6
    _, t = srcgrad.jvp(banded)(a, da)
    assert t == pytest.approx((banded(a + h * da) - banded(a - h * da)) / (2 * h), rel=1e-7)
    g = check_grad(tridiagonal, (a,))
    assert g[3, 0] == 0.0


def test_cross_products_of_stacked_2_vectors():
    # runtime.products._as3: 2-vectors get a zero third component, for a stack of them too
    w = np.array([1.0, -2.0, 0.5])

    def f(a, b):
        return np.sum(np.cross(a, b) * w)

    a = np.array([[0.3, -1.2], [2.0, 0.7], [1.1, 0.4]])
    b = np.array([[1.0, 0.5], [-0.3, 0.9], [0.2, -1.4]])
    check_grad(f, (a, b), wrt=(0, 1))



def test_reverse_over_reverse_through_a_correlation():
    # runtime.higher_order.correlate_vjp_partner: the adjoint of correlate's adjoint in the
    # operand it was taken for is zero, of that operand's shape (the mutant took the other's)
    def f(a, v):
        return np.sum(np.correlate(a, v, "full") ** 2)

    def g(a, v):
        return np.sum(srcgrad.grad(f, wrt=0)(a, v) ** 2)

    check_grad(g, (np.array([0.3, -1.2, 2.0, 0.7]), np.array([1.0, 0.5])), wrt=(0, 1))


def test_tangent_of_odeint_with_a_right_hand_side_that_returns_a_number():
    # runtime.scipy_helpers._flat: a one-state right-hand side may return a number (SciPy takes
    # it); with the list test negated the number was iterated
    integrate = pytest.importorskip("scipy.integrate")
    times = np.linspace(0.0, 1.0, 5)

    def decay(y, t, k):
        return -k * y[0]

    def f(y0):
        return np.sum(integrate.odeint(decay, y0, times, args=(0.7,)))

    y0, h = np.array([1.5]), 1e-6
    _, t = srcgrad.jvp(f)(y0, np.ones(1))
    assert t == pytest.approx((f(y0 + h) - f(y0 - h)) / (2 * h), rel=1e-6)


def test_put_at_minus_the_size():
    # runtime.writes.put_index: -size is the first element (a mutant refused it as out of bounds)
    w = np.array([2.0, 3.0, 5.0])

    def f(x, v):
        y = x * 1.0
        np.put(y, [-3], v)
        return np.sum(y * w)

    gx, gv = check_grad(f, (np.array([0.5, -1.0, 2.0]), np.array([4.0])), wrt=(0, 1))
    np.testing.assert_array_equal(gx, [0.0, 3.0, 5.0])
    np.testing.assert_array_equal(gv, [2.0])


def test_holomorphic_grad_of_a_one_element_array():
    # runtime.complex_values.holomorphic_seed: the seed has the output's shape (1,), (1, 1)
    # (a number seed was refused for them)
    z = np.array([1.0 + 0.5j])

    def f(z):
        return z**2

    def g(z):
        return np.reshape(np.sum(z**3), (1, 1))

    np.testing.assert_allclose(srcgrad.holomorphic_grad(f)(z), 2 * z, rtol=1e-15)
    np.testing.assert_allclose(srcgrad.holomorphic_grad(g)(z), 3 * z**2, rtol=1e-15)


def test_put_along_a_negative_axis():
    # runtime.writes.along_axis_index: axis -1 is the last axis (a mutant left it negative)
    w = np.array([[2.0, 3.0, 5.0], [7.0, 11.0, 13.0]])
    index = np.array([[2], [0]])

    def f(x, v):
        y = x * 1.0
        np.put_along_axis(y, index, v, axis=-1)
        return np.sum(y * w)

    x, v = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]), np.array([[4.0], [-2.0]])
    gx, gv = check_grad(f, (x, v), wrt=(0, 1))
    np.testing.assert_array_equal(gx, [[2.0, 3.0, 0.0], [0.0, 11.0, 13.0]])
    np.testing.assert_array_equal(gv, [[5.0], [7.0]])


def test_convolution_of_complex_signals_in_mode_same():
    # runtime.products._full_cotangent: the cotangent of the 'full' result has dy's dtype
    # (zeros of float64 dropped the imaginary part of a complex dy)
    v = np.array([1.0 - 0.5j, 0.25 + 2.0j, -1.0 + 0.0j])

    def f(z):
        return np.sum(np.abs(np.convolve(z, v, "same")) ** 2)

    check_grad(f, (np.array([0.3 + 1.0j, -1.2 + 0.2j, 2.0 - 0.7j, 0.5 + 0.5j]),))


def test_tangent_of_a_symmetric_solve_that_reads_the_lower_triangle():
    # runtime.scipy_helpers.linalg_solve_jvp: solve(..., lower=True) in forward mode reads the
    # lower triangle (a mutant read the upper one, which holds other values here); the tangent
    # follows the symmetric convention, so it is checked along a symmetric da
    linalg = pytest.importorskip("scipy.linalg")
    a = np.array([[4.0, 9.0, -7.0], [1.0, 3.0, 8.0], [0.5, -0.2, 2.0]])
    b = np.array([1.0, 2.0, 3.0])
    da = np.array([[0.3, -0.2, 0.5], [-0.2, 1.0, 0.1], [0.5, 0.1, -0.7]])

    def f(a):
        return linalg.solve(a, b, assume_a="pos", lower=True)

    h = 1e-6
    _, t = srcgrad.jvp(f)(a, da)
    np.testing.assert_allclose(t, (f(a + h * da) - f(a - h * da)) / (2 * h), rtol=1e-7)


def test_interp_with_knots_given_as_a_list():
    # runtime.numerics.interp_index: the knots may be a list (np.asarray dropped: a list has no
    # shape)
    def f(x, fp):
        return np.sum(np.interp(x, [0.0, 1.0, 2.5], fp) ** 2)

    check_grad(f, (np.array([0.3, 1.7, 2.2]), np.array([1.0, -0.5, 2.0])), wrt=(0, 1))



def test_putmask_of_nothing():
    # runtime.writes.putmask_sources: an empty mask with empty values is allowed, as in NumPy
    # (a mutant refused it)
    def f(x):
        y = x * 1.0
        np.putmask(y, x > 10.0, np.array([]))
        return np.sum(y * y)

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(check_grad(f, (x,)), 2 * x, rtol=1e-12)


def _tuple_that_drops_an_element(s):
    t = (np.array([s, s * s]), np.array([s * 2.0, 1.0]))
    t = (t[0] * 1.5, t[1] + 1)
    return np.sum(t[0] ** 3)


def test_third_derivative_through_a_tuple_whose_element_is_unused():
    # runtime.shapes.unbroadcast: adding the (co)tangents of tuples element by element, an element
    # without a cotangent (None) stays None (with `or -> and` it became an object array of None,
    # and the third order raised TypeError)
    # f(s) = 1.5**3 (s**3 + s**6), whose third derivative is 1.5**3 (6 + 120 s**3)
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(_tuple_that_drops_an_element)))(0.7)
    assert d3 == pytest.approx(1.5**3 * (6.0 + 120.0 * 0.7**3), rel=1e-12)


def test_reverse_over_reverse_of_a_concatenation_of_matrices():
    # runtime.higher_order.join_cotangents: the pieces' cotangents are joined along the axis
    # (with `axis is None -> is not None` they were raveled and joined flat)
    def f(a, b):
        return np.sum(np.concatenate((a * a, b), axis=1) ** 2)

    def g(a, b):
        return np.sum(srcgrad.grad(f, wrt=0)(a, b) ** 2)

    a, b = np.array([[0.3, -0.6], [0.5, 0.7]]), np.array([[1.0], [-0.4]])
    check_grad(g, (a, b), wrt=(0, 1))


def test_interp_below_and_above_its_second_and_last_knots():
    # runtime.numerics.interp_outside: `left` applies below the first knot only (a mutant took
    # the second: x in [xp[0], xp[1]) got `left`'s gradient)
    xp = np.array([0.0, 1.0, 1.5, 3.0])

    def f(x, fp, lo, hi):
        return np.sum(np.interp(x, xp, fp, left=lo, right=hi) ** 2)

    x = np.array([-0.5, 0.4, 1.2, 2.6, 3.5])
    args = (x, np.array([1.0, -0.5, 2.0, 0.7]), 0.3, -0.8)
    check_grad(f, args, wrt=(0, 1, 2, 3))


def test_tangent_of_cho_solve_in_a_factor_with_values_in_its_other_triangle():
    # runtime.scipy_helpers.cho_solve_jvp_c: cho_solve((c, True), b) reads c's lower triangle
    # only, so a tangent in the upper one changes nothing (the mutant used all of dc)
    linalg = pytest.importorskip("scipy.linalg")
    c = np.array([[2.0, 9.0, -7.0], [0.5, 1.5, 8.0], [-0.3, 0.2, 1.2]])
    dc = np.array([[0.3, -0.2, 0.5], [0.4, 1.0, 0.1], [0.5, -0.6, -0.7]])
    b = np.array([1.0, 2.0, 3.0])

    def f(c):
        return linalg.cho_solve((c, True), b)

    h = 1e-6
    _, t = srcgrad.jvp(f)(c, dc)
    np.testing.assert_allclose(t, (f(c + h * dc) - f(c - h * dc)) / (2 * h), rtol=1e-7)



def test_odeint_gradient_in_times_given_as_integers():
    # runtime.scipy_helpers._odeint_adjoint: the times' gradient is float even when the times are
    # integers (without dtype=float it was stored in an integer array and truncated)
    integrate = pytest.importorskip("scipy.integrate")

    def rhs(y, t, k):
        return -k * y * y + np.sin(t)

    def f(y0, t):
        return np.sum(integrate.odeint(rhs, y0, t, args=(0.7,)) ** 2)

    y0 = np.array([1.0, 0.5])
    got = srcgrad.grad(f, wrt=1)(y0, np.array([0, 1, 2]))
    want = numeric_grad(f, (y0, np.array([0.0, 1.0, 2.0])), 1)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vjp_seed_of_a_tuple_output_with_too_few_parts_is_refused():
    # runtime.boundary.check_seed: a tuple output's seed has as many parts, and the error gives
    # both structures by their shapes (a mutant went on, and a later check printed the arrays)
    def f(x):
        return np.sin(x), x * 2.0

    x = np.array([0.5, -1.0])
    with pytest.raises(SeedShapeError, match=r"shape \(\(2,\),\) but .* \(\(2,\), \(2,\)\);"):
        srcgrad.vjp(f)(x, (x,))
    with pytest.raises(SeedShapeError, match=r"shape \(2,\) but"):
        srcgrad.vjp(f)(x, x)


def test_register_pytree_takes_a_class_and_two_callables():
    # runtime.pytrees.register_pytree: the checks of its arguments (with the class test negated
    # a class was refused)
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    def flatten(p):
        return (p.a, p.b), None

    def unflatten(aux, children):
        return Pair(*children)

    assert srcgrad.register_pytree(Pair, flatten, unflatten) is Pair
    with pytest.raises(SrcgradError, match="expects a class"):
        srcgrad.register_pytree(Pair(1.0, 2.0), flatten, unflatten)
    with pytest.raises(SrcgradError, match="both must be callables"):
        srcgrad.register_pytree(Pair, flatten, None)
    with pytest.raises(SrcgradError, match="both must be callables"):  # a truthy non-callable
        srcgrad.register_pytree(Pair, "flatten", unflatten)
    with pytest.raises(SrcgradError, match="both must be callables"):
        srcgrad.register_pytree(Pair, flatten, "unflatten")

    def f(p):
        return np.sum(p.a * p.b)

    g = srcgrad.grad(f)(Pair(np.array([1.0, 2.0]), np.array([3.0, -1.0])))
    np.testing.assert_array_equal(g.b, [1.0, 2.0])


def test_grad_of_a_one_element_list_is_refused():
    # runtime.boundary.unit_seed: a container output is refused even with one element (with the
    # raise dropped, `[np.sum(x)]` has shape (1,) and grad went on), and says what it is
    def f(x):
        return [np.sum(x * x)]

    with pytest.raises(NonScalarOutputError, match="list of 1 values"):
        srcgrad.grad(f)(np.array([0.5, -1.0]))


# --- runtime/boundary.py (tests/mutate_code.py, session of 2026-12-02 10:45) ----------------

def _dict_argument(d):
    return np.sum(d["a"] * 2.0) + np.sum(d["b"] ** 2)


def _sum_of_sines(x):
    return np.sum(np.sin(x))


def test_jvp_tangents_are_checked_against_their_arguments():
    # check_tangent: a dict tangent's entries are checked (`k not in tangent` skipped them), a
    # key missing is an error (it was taken for a zero without a word; None says zero), a
    # structured tangent for an array is refused naming the shapes (with `_structure(x)`
    # dropped it named the array's values)
    x = np.array([0.5, -1.0, 2.0])
    d = {"a": x, "b": x[:2]}
    with pytest.raises(TangentShapeError, match=r"\['b'\]"):
        srcgrad.jvp(_dict_argument)(d, {"a": x, "b": x})
    assert srcgrad.jvp(_dict_argument)(d, {"a": x, "b": None})[1] == pytest.approx(
        2.0 * np.sum(x))
    with pytest.raises(TangentShapeError, match=r"keys \['a'\] but the argument is a dict"):
        srcgrad.jvp(_dict_argument)(d, {"a": x})
    with pytest.raises(TangentShapeError, match=r"the argument has shape \(3,\);"):
        srcgrad.jvp(_sum_of_sines)(x, (x,))


def _one_output(x):
    return np.sin(x[:1]) * np.sum(x)


def _two_outputs_of_one(x):
    return np.array([1.0, 2.0]) * np.sin(x[0]) ** 2 + x[0]


def _two_outputs(x):
    return np.array([np.sum(x**2), np.sin(x[0]) * x[2]])


def _forward_jacobian_loss(x):
    w = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1]])
    return np.sum(srcgrad.jacobian(_two_outputs, method="fwd")(x) * w)


def test_jacobians_with_one_row_or_one_column():
    # stack_rows: one row of a (1,)-shaped output keeps its axis (with `or` for `and` the
    # Jacobian was x's shape); stack_columns: one column of a (1,)-shaped argument too (the
    # mutant tested np.ndim(x) == 1); unstack_columns: the adjoint of a forward Jacobian
    x = np.array([0.5, -1.0, 2.0])
    rows = srcgrad.jacobian(_one_output, method="rev")(x)
    assert rows.shape == (1, 3)
    np.testing.assert_allclose(rows, srcgrad.jacobian(_one_output, method="fwd")(x), rtol=1e-12)
    for method in ("fwd", "rev"):
        J = srcgrad.jacobian(_two_outputs_of_one, method=method)(np.array([0.7]))
        assert J.shape == (2, 1)
        np.testing.assert_allclose(J[:, 0], np.array([1.0, 2.0]) * np.sin(1.4) + 1.0, rtol=1e-12)
    check_grad(_forward_jacobian_loss, (x,))


def _with_default(x, a=2.0):
    return np.sum(x * x * a)


def test_a_derivative_of_a_derivative_with_defaults_counts_its_last_arguments():
    # bind_optional's messages for two trailing arguments (seed of the vjp, then of its vjp)
    twice = srcgrad.vjp(srcgrad.vjp(_with_default))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(twice(x, 1.0, np.ones(3)), np.full(3, 4.0), rtol=1e-12)
    with pytest.raises(DerivedCallError, match="missing its last positional 2 arguments"):
        twice(x, 1.0)
    with pytest.raises(DerivedCallError,
                       match="at most 1 optional positional arguments before the last 2, got 2"):
        twice(x, 1.0, 2.0, 1.0, np.ones(3))


def test_jacobian_of_a_complex_argument_and_has_aux_without_a_pair_are_refused():
    # jacobian_argument and split_aux: refused with SrcgradError (with the error's call dropped
    # a string was raised: TypeError)
    with pytest.raises(SrcgradError, match="jacobian and hessian take real arrays"):
        srcgrad.jacobian(_sum_of_sines)(np.array([1.0 + 1.0j, 2.0]))

    def three(x):
        return np.sum(x), x, x

    with pytest.raises(SrcgradError, match="needs three to return a pair"):
        srcgrad.grad(three, has_aux=True)(np.array([0.5, 2.0]))
    with pytest.raises(SrcgradError, match="it returned a float64"):  # no pair at all
        srcgrad.grad(_sum_of_sines, has_aux=True)(np.array([0.5, 2.0]))

    def keyed(x):
        return {"a": np.sum(x)}

    with pytest.raises(NonScalarOutputError, match=r"dict with keys \['a'\]"):
        srcgrad.grad(keyed)(np.array([0.5, 2.0]))


_Pair = collections.namedtuple("_Pair", "a b")


def _pair_product(p):
    return np.sum(p.a * p.b)


def test_the_tangent_of_a_structure_has_its_class():
    # check_tangent: a tuple tangent for a namedtuple argument is refused (with the error's call
    # dropped a string was raised: TypeError)
    p = _Pair(np.array([1.0, 2.0]), np.array([3.0, -1.0]))
    assert srcgrad.jvp(_pair_product)(p, p)[1] == pytest.approx(2.0 * np.sum(p.a * p.b))
    with pytest.raises(SrcgradError, match="jvp tangent for 'p' is a tuple, but the argument"):
        srcgrad.jvp(_pair_product)(p, (p.a, p.b))


# --- transform/linearize.py: the split of a forward Jacobian's primal from its tangent map ----

def _appends_after(x):
    hs = [x * 2.0]
    y = np.sin(x) * hs[0]
    hs.append(x * 3.0)
    hs[0] = hs[0] + 1.0
    return y + hs[0] * hs[1]


def _writes_after(x):
    c = np.ones(3) * 2.0
    y = np.sin(x) * c  # its tangent reads c, which the primal then changes in place
    c[0] = 10.0
    c *= 3.0
    return y * c


def _pops_after(x):
    hs = [x * 2.0, np.ones(3)]
    y = np.sin(x) * hs[1]
    last = hs.pop()
    last = last * 5.0
    return y + hs[0] * last


@pytest.mark.parametrize("f", [_appends_after, _writes_after, _pops_after],
                         ids=lambda f: f.__name__)
def test_forward_jacobian_of_values_changed_in_place_after_a_tangent_reads_them(f):
    # linearize._writes: with a primal statement's write in place not seen (`return True` ->
    # False), the tangent map ran after the whole primal and read c already changed: 263.3 for
    # 52.65 in J[0, 0]
    x = np.array([0.5, -1.0, 2.0])
    e = 1e-6
    numeric = np.stack([(f(x + e * u) - f(x - e * u)) / (2 * e) for u in np.eye(3)], axis=1)
    for method in ("fwd", "rev"):
        np.testing.assert_allclose(srcgrad.jacobian(f, method=method)(x), numeric,
                                   rtol=1e-6, atol=1e-8)


# --- transform/pullback.py: a reverse Jacobian calls the pullback's `back` once per row ------

def _history_of_a_loop(x):
    hs = []
    h = x * 1.0
    for i in range(3):
        h = np.tanh(h * x + i)
        hs.append(h)
    return hs[0] * hs[2] + np.sin(h)


def _list_grown_in_a_loop(x):
    out = []
    for v in x:
        out.append(v * v * np.sin(v))
    return np.array(out) * x[::-1]


@pytest.mark.parametrize("f", [_history_of_a_loop, _list_grown_in_a_loop],
                         ids=lambda f: f.__name__)
def test_reverse_jacobian_of_a_loop_that_fills_a_list(f):
    # pullback._in_place: the sweep changes the primal's saved lists in place, so `back` is not
    # reused as it is (with `return True` -> False the second row's call found them emptied:
    # IndexError)
    x = np.array([0.5, -1.0, 2.0])
    e = 1e-6
    numeric = np.stack([(f(x + e * u) - f(x - e * u)) / (2 * e) for u in np.eye(3)], axis=1)
    np.testing.assert_allclose(srcgrad.jacobian(f, method="rev")(x), numeric, rtol=1e-6,
                               atol=1e-8)


def _split_by_linearize(x, y):
    x = np.sin(x) * y
    y = y * 2.0
    # a local named like the tangent map linearize defines
    jvp_fn = x * y
    jvp_fn = jvp_fn + np.cos(y) + abs(y) + len(x)
    x = jvp_fn * x
    return np.sum(x)


def _rerun_by_linearize(x, n):
    # (a loop writing into an array of the primal in place: linearize reruns the jvp)
    y = x * 1.0
    for _ in range(n):
        for k in range(2):
            scale = 0.5 + k
            y = np.sin(y) * x * scale
        y[0] = y[1] * 0.5
    return y


def _check_linearize(f, args, golden):
    text = srcgrad.source(srcgrad.linearize(f))
    assert_golden(golden, text)
    x = args[0]
    value, jvp_fn = srcgrad.linearize(f)(*args)
    np.testing.assert_array_equal(value, f(*args))
    e = 1e-6
    for u in np.eye(3):
        want = (f(x + e * u, *args[1:]) - f(x - e * u, *args[1:])) / (2 * e)
        np.testing.assert_allclose(jvp_fn(u), want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(jvp_fn(u), want, rtol=1e-6, atol=1e-9)  # on every call


def test_linearize_of_straight_line_code_is_split_once_into_primal_and_tangent_map():
    # linearize.run/_split: the primal statements run once and the tangent statements (with
    # their "# tangent of:" comments) form jvp_fn, which the primal's `del`s of the names it
    # reads do not reach (the text is a golden file). Mutants made the split fall back to a
    # rerun of the jvp, left `del y_2` in the primal (NameError in jvp_fn), or named the
    # tangent map `jvp_fn` whatever the function's own names
    _check_linearize(_split_by_linearize, (np.array([0.5, -1.0, 2.0]), 1.5),
                     "linearize_straight.py")


def test_linearize_of_a_loop_writing_in_place_reruns_the_jvp_after_the_primal_alone():
    # linearize._primal_only/_drop: the primal is the jvp without its tangent statements and
    # comments (golden file: mutants of _drop kept the comments or dropped other statements);
    # the value the rerun path's primal returns is checked too (no test did)
    _check_linearize(_rerun_by_linearize, (np.array([0.5, -1.0, 2.0]), 2),
                     "linearize_rerun.py")


def _back_named_like_the_pullback(x, y):
    x = np.sin(x) * y
    # a local named like the pullback's `back`
    back = x * y
    back = back + np.cos(y)
    return np.sum(back * x)


def _written_with_all_kinds_of_parameters(x, s, /, *rest, **named):
    y = np.ones(3) * s
    y[0] = x[0] * named["w"]
    y = y * np.sin(x) * rest[0]
    return np.sum(y * y)


def _history_kept_in_a_list(x):
    hs = []
    h = x * 1.0
    for i in range(3):
        h = np.tanh(h * x + i)
        hs.append(h)
    return np.sum(hs[0] * hs[2] + np.sin(h))


def _indexed_reads_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(x[i]) * x[2 - i]
    return s


@pytest.mark.parametrize("f, args, kwargs, golden", [
    (_back_named_like_the_pullback, (1.5,), {}, "pullback_straight.py"),
    (_written_with_all_kinds_of_parameters, (2.0, 3.0), {"w": 1.5}, "pullback_written.py"),
    (_history_kept_in_a_list, (), {}, "pullback_history.py"),
    (_indexed_reads_in_a_loop, (), {}, "pullback_indexed.py"),
], ids=["straight", "written", "history", "indexed"])
def test_pullback_reuses_its_primal_on_every_call_of_back(f, args, kwargs, golden):
    # pullback.run/_reusable/exposed_reads/_in_place/_own_lists/_fresh: `back` reads the
    # primal's values (as defaults where the sweep rebinds them), copies the stacks it pops and
    # restores what it writes in place, but its own adjoint buffers (`dx[i] += ...`) are not the
    # primal's; the text is a golden file, the gradient is checked against differences on two
    # calls of the same back
    assert_golden(golden, srcgrad.source(srcgrad.pullback(f)))
    x = np.array([0.5, -1.0, 2.0])
    value, back = srcgrad.pullback(f)(x, *args, **kwargs)
    assert value == f(x, *args, **kwargs)
    want = numeric_grad(f, (x, *args), 0, kwargs)
    for seed in (1.0, 1.0):
        np.testing.assert_allclose(back(seed), want, rtol=1e-6, atol=1e-8)


def _one_branch_restores(x):
    h = x * 1.0
    if x[0] > 0:
        h = np.sin(h) * x
        h = np.sin(h) * x
        out = h * 2.0
    else:
        out = x * 3.0
    return np.sum(out)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_pullback_of_a_branch_only_one_side_of_which_restores_a_name(sign):
    # pullback.exposed_reads: only the sweep's `if` side pops `h` back, the other reads the
    # primal's `h` (`zeros_like(h)`), so `h` is a default of `back` (with the `if`'s `then`
    # taken as the outer `bound`, `h` counted as bound after it: UnboundLocalError in `else`)
    x = sign * np.array([0.5, -1.0, 2.0])
    value, back = srcgrad.pullback(_one_branch_restores)(x)
    assert value == _one_branch_restores(x)
    want = numeric_grad(_one_branch_restores, (x,), 0)
    for seed in (1.0, 1.0):
        np.testing.assert_allclose(back(seed), want, rtol=1e-6, atol=1e-8)


def _rerun_with_all_kinds_of_parameters(x, s, /, *rest, scale=2.0, **named):
    x_kept = x * s  # named like linearize's copy of x
    y = x_kept * 1.0
    for _ in range(2):
        for k in range(2):
            y = np.sin(y) * x * (rest[0] + k) * scale * named["w"]
        y[2] = y[1] * 0.5  # (a write in place in the primal: linearize reruns the jvp)
    return y


def test_linearize_reruns_the_jvp_with_every_kind_of_parameter():
    # pullback.rerun (linearize's rerun path): jvp_fn calls the jvp on copies of each argument
    # (positional-only, *rest, keyword-only, **named), with the tangent of wrt=(0,) a tuple.
    # Mutants dropped the positional-only parameter or **named from the call (TypeError), named
    # the copies x_kept whatever the function's own names, or passed wrt=0 (a tuple tangent
    # refused)
    f = _rerun_with_all_kinds_of_parameters
    args, kwargs = (np.array([0.5, -1.0, 2.0]), 0.7, 0.3), {"scale": 1.1, "w": 0.9}
    text = srcgrad.source(srcgrad.linearize(f, wrt=(0,)))
    assert_golden("linearize_rerun_parameters.py", text)
    value, jvp_fn = srcgrad.linearize(f, wrt=(0,))(*args, **kwargs)
    np.testing.assert_array_equal(value, f(*args, **kwargs))
    x, e = args[0], 1e-6
    for u in np.eye(3):
        want = (f(x + e * u, *args[1:], **kwargs) - f(x - e * u, *args[1:], **kwargs)) / (2 * e)
        np.testing.assert_allclose(jvp_fn((u,)), want, rtol=1e-6, atol=1e-9)
