"""Cases that only a surviving mutant of srcgrad's runtime helpers showed untested
(docs/development.md, mutation testing; the session of mutants20i: ``runtime/products.py``,
``linalg.py``, ``reductions.py``, ``indexing.py``, ``writes.py``, ``arrays.py``, ``boundary.py``,
``sharing.py``, ``undo.py``).

Each is a program a user can write, its gradient checked against central differences in float64,
or a helper of generated code checked against the plain form it stands for; the comment names
the mutant of ``tests/mutate_code.py`` it kills (each re-planted: ``mutate_code.py --rerun`` of
the surviving line fails this test under it and passes on main).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad

import srcgrad
from srcgrad.errors import UnsupportedCaseError
from srcgrad.runtime import steps_layout, unbroadcast, unbroadcast_steps, unbroadcast_steps_joined

RNG = np.random.default_rng(2412)


# --- runtime/products.py ------------------------------------------------------------------------
def cross_of_stacked_pairs(a, b):
    return np.sum(np.cross(a, b) ** 2)


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated")
def test_cross_of_a_stack_of_2_vectors():
    # products:357 _as3 `axis=1` and `v.shape[:1]` for -1: the same for a matrix of 2-vectors,
    # not for a stack of them (3-D): the zero z-component joined along the wrong axis
    a, b = RNG.normal(size=(2, 3, 2)), RNG.normal(size=(2, 3, 2))
    check_grad(cross_of_stacked_pairs, (a, b), (0, 1))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors are deprecated")
def test_cross_of_a_2_vector_and_a_3_vector():
    # products:366 cross_vjp `or` for `and`: one 2-vector taken for two, the 3-vector cotangent
    # of the product read as its z-component alone
    a, b = RNG.normal(size=2), RNG.normal(size=3)
    check_grad(cross_of_stacked_pairs, (a, b), (0, 1))
    check_grad(cross_of_stacked_pairs, (b, a), (0, 1))


def dot_of_a_stack(a, b):
    return np.sum(np.dot(a, b) ** 2)


def test_dot_of_a_stack_and_a_matrix():
    # products:215 _dot_axes `max(np.ndim(b) - 2, 1)`: b's second axis contracted for its first
    # where b is a matrix (its own axis for a vector, 1 % 1, and for 3 or more dimensions)
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(4, 5))
    check_grad(dot_of_a_stack, (a, b), (0, 1))


def diagonal_of_a_complex_matrix(z):
    return np.sum(np.abs(np.einsum("ii->i", z) * np.array([1.0, 2.0, 0.5])) ** 2)


def test_the_gradient_of_a_complex_diagonal_keeps_its_imaginary_part():
    # products:281 _onto_diagonals `np.zeros(shape)` without the cotangent's dtype: a complex
    # cotangent written onto float zeros (NumPy drops the imaginary part, with a warning)
    z = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    check_grad(diagonal_of_a_complex_matrix, (z,), 0)


def times_a_list(W):
    return np.sum(np.tanh(W @ [0.5, -1.0, 2.0]))


def a_list_times(W):
    return np.sum(np.tanh([0.5, -1.0] @ W))


def test_a_product_with_a_list_operand():
    # products:14 _ndim `a.ndim` for a non-array: a constant list operand of `@` has none
    W = RNG.normal(size=(2, 3))
    check_grad(times_a_list, (W,), 0)
    check_grad(a_list_times, (W,), 0)


def batched_steps(W, xs):
    s = 0.0
    for t in range(len(xs)):
        s = s + np.sum(np.tanh(xs[t] @ W))
    return s


def test_a_loops_products_of_batched_inputs_and_of_one_step():
    # the per-step sum of W's gradient (matmul_vjp_right_steps) of inputs of 3 dimensions,
    # products:65 steps_layout `return 1` for `return 0` (their transposes stacked: a wrong
    # product), and of one step, products:63 `type(xs[1])` (an IndexError)
    W, xs = RNG.normal(size=(3, 4)) / 2, RNG.normal(size=(3, 2, 5, 3))
    assert steps_layout([np.ones((2, 5, 4))] * 3, list(xs), W) == 0
    check_grad(batched_steps, (W, xs), 0)
    check_grad(batched_steps, (W, xs[:1, 0]), 0)


def test_joined_sums_of_steps_are_the_plain_ones():
    # unbroadcast_steps_joined (specialized code whose kinds the transform could not prove) of
    # contributions with more axes than x (rows joined), as many (stacked), of two shapes;
    # products:165 `layout == 3` joins the stacked ones (no test of the suite ran it)
    rows = [RNG.normal(size=(5, 3)) for _ in range(4)]
    for gs, x in [(rows, np.zeros(3)), (rows, np.zeros((5, 3))), (rows, np.zeros((1, 3))),
                  (rows + [RNG.normal(size=(1, 3))], np.zeros(3)), ([], np.zeros(3))]:
        got, want = unbroadcast_steps_joined(gs, x, []), unbroadcast_steps(gs, x)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_sum_of_steps_of_two_ranks_is_summed_per_step():
    # products:83 sums_layout `and` for `or` (and `or` within the all()): contributions of two
    # ranks (a state that starts a vector and becomes a batch) taken for one shape, joined: a
    # ValueError
    gs = [RNG.normal(size=(5, 3)) for _ in range(3)] + [RNG.normal(size=3)]
    want = sum(unbroadcast(g, np.zeros(3)) for g in gs)
    np.testing.assert_allclose(unbroadcast_steps(gs, np.zeros(3)), want, rtol=1e-12)


# --- runtime/linalg.py --------------------------------------------------------------------------
def one_norm(x):
    return np.linalg.norm(x, ord=1) * np.sum(x * x)


def test_the_one_norm_at_a_zero_entry():
    # linalg:363 _vector_norm_grad `d / np.sign(x)` for `d * np.sign(x)`: the same where x is not
    # 0, a division by zero where it is (the subgradient there is 0, as the central difference)
    check_grad(one_norm, (np.array([0.5, 0.0, -1.0]),), 0)


B3 = np.array([1.0, -2.0, 0.5])


def residuals(a):
    return np.linalg.lstsq(a, B3)[1]


def test_the_tangent_of_no_residuals_is_empty():
    # linalg:345 lstsq_jvp `np.shape(residuals)` or `np.zeros(residuals)` for
    # `np.zeros(np.shape(residuals))`: a square system has no residuals, and their tangent is
    # an empty array too, not the tuple (0,) or a 0-d zero
    a = np.array([[2.0, 0.3, 0.1], [0.2, 1.5, -0.4], [0.1, 0.2, 1.0]])
    y, t = srcgrad.jvp(residuals)(a, np.ones((3, 3)))
    assert isinstance(t, np.ndarray) and t.shape == y.shape == (0,)


def matrix_one_norm(x):
    return np.linalg.norm(x, ord=1) * np.sum(x * x)


def test_the_matrix_one_norm_at_a_zero_entry():
    # linalg:390 _matrix_norm_grad `d / np.sign(xm)`: a division by zero at the zero entry of
    # the column of largest sum (the subgradient there is 0, as the central difference)
    check_grad(matrix_one_norm, (np.array([[1.0, 0.0], [0.5, 3.0]]),), 0)


class _Duck:
    """An array of another library (NEP-18), neither NumPy's nor Dask's."""

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented


def test_only_a_cholesky_factor_of_dask_is_refused():
    # linalg:75 _numpy_factor `'dask'` for the module test: every array of another library
    # refused, not Dask's alone (whose cholesky returns the upper factor)
    from srcgrad.runtime.linalg import _numpy_factor

    assert _numpy_factor(_Duck()) is None and _numpy_factor(np.eye(2)) is None


def cholesky_of(a):
    return np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3))


def test_the_tangent_of_a_dask_cholesky_is_refused_too():
    # linalg:95 cholesky_jvp `y` for `_numpy_factor(y)`: the tangent of Dask's upper factor taken
    # for the lower one's (tests/test_dask.py checks the gradient's refusal only)
    da = pytest.importorskip("dask.array")
    a = da.from_array(RNG.normal(size=(3, 3)), chunks=3)
    with pytest.raises(UnsupportedCaseError, match="Dask"):
        srcgrad.jvp(cholesky_of)(a, da.ones((3, 3), chunks=3))


def inf_norms_of_a_stack(x):
    return np.sum(np.linalg.norm(x, ord=np.inf, axis=(1, 2)) * np.array([1.0, 2.0]))


def test_the_inf_norm_of_a_stack_of_matrices():
    # linalg:385 _matrix_norm_grad `else 1` for `else -1`: the rows' sums taken along the
    # stack's second axis, the same as the last only for one matrix
    x = np.array([[[1.0, -2.0, 0.5], [0.3, 0.4, 2.5]], [[-1.5, 0.2, 0.1], [0.7, 1.9, -0.8]]])
    check_grad(inf_norms_of_a_stack, (x,), 0)


def matrix_one_norm_alone(x):
    return np.linalg.norm(x, ord=1)


def inf_norm(x):
    return np.linalg.norm(x, ord=np.inf) * 3.0


def test_norms_at_ties_at_zero_and_of_a_negative_largest_entry():
    # linalg:390 `* np.sum(chosen)` for `/`: columns of equal sums share the gradient (the
    # central difference there is their average); linalg:359 the inf-norm's `* np.sign(x)`
    # dropped (a negative largest entry) or `/ np.sign(x)` (NaN at x = 0, where the central
    # difference is 0)
    check_grad(matrix_one_norm_alone, (np.array([[1.0, 2.0], [3.0, 2.0]]),), 0)
    check_grad(inf_norm, (np.array([0.5, -2.0, 1.0]),), 0)
    check_grad(inf_norm, (np.zeros(3),), 0)


def zero_norm_and_squares(x):
    return np.linalg.norm(x, ord=0) + np.sum(x * x)


def log_abs_determinant(a):
    return float(np.linalg.slogdet(a)[1])


def test_the_zero_norm_and_a_log_determinant_cast_to_float():
    # linalg:361 _vector_norm_grad `np.shape(x)` or `x` for the zeros of ord=0 (no test ran the
    # count of nonzeros); linalg:42 slogdet_vjp `dlog[..., None, None]` without as_array: the
    # cotangent of float() of the log-determinant is a Python float
    check_grad(zero_norm_and_squares, (np.array([0.5, -2.0, 1.0]),), 0)
    a = np.array([[3.0, 0.5, -0.2], [0.1, 2.0, 0.4], [-0.3, 0.2, 4.0]])
    check_grad(log_abs_determinant, (a,), 0)


# --- runtime/reductions.py ----------------------------------------------------------------------
def weighted_cumprod(x):
    return np.sum(np.cumprod(x) * np.array([1.0, 2.0, 3.0]))


def test_the_tangent_of_a_cumprod_along_an_integer_direction():
    # reductions:192 cumprod_jvp `da` for `_float_array(da)`: a tangent of integers (a basis
    # direction written np.array([1, 0, 0])) kept integer, the running tangent truncated
    x = np.array([0.5, 1.5, -2.0])
    _, t_int = srcgrad.jvp(weighted_cumprod)(x, np.array([1, 2, 3]))
    _, t_float = srcgrad.jvp(weighted_cumprod)(x, np.array([1.0, 2.0, 3.0]))
    assert t_int == pytest.approx(t_float, rel=1e-12) and t_float == pytest.approx(-2.25)


def max_times_3(x):
    return np.max(x) * 3.0


def nanmax_of_row_1(x):
    return np.nanmax(x, axis=1)[1] * 3.0


def variance_of_a_number(x):
    return x * 2.0 + np.var(x) * 0.0


def quantile_kept(x):
    return np.sum(np.quantile(x, 0.3, axis=1, keepdims=True) * np.array([[1.0], [2.0]]))


def quantiles_of_one_row(x):
    return np.sum(np.quantile(x, [0.3], axis=1, keepdims=True) ** 2)


@pytest.mark.filterwarnings("ignore:All-NaN slice encountered")
def test_ties_nans_a_numbers_variance_and_kept_quantiles():
    # reductions:56 `np.count_nonzero(chosen) == chosen.size`: elements all equal took the
    # no-ties shortcut, each the whole dy instead of a share (the split is the documented rule)
    np.testing.assert_allclose(srcgrad.grad(max_times_3)(np.full(3, 2.0)), [1.0, 1.0, 1.0])
    # reductions:53 `chosen |= np.isnan(a)`: a row of NaNs (nanmax NaN) made the NaN of
    # another row, whose nanmax is a number, share that row's gradient
    g = srcgrad.grad(nanmax_of_row_1)(np.array([[np.nan, np.nan], [1.0, np.nan]]))
    np.testing.assert_allclose(g[1], [3.0, 0.0])
    # reductions:72 `0.0 / dy`: NaN where the variance's cotangent is 0
    assert srcgrad.grad(variance_of_a_number)(0.7) == 2.0
    # reductions:171 `np.squeeze(dq)`: the kept axis squeezed with the other size-1 axes
    x = np.array([[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.4, 0.9]])
    check_grad(quantile_kept, (x,), 0)
    check_grad(quantiles_of_one_row, (x[:1],), 0)


def quantile_as_a_float(x):
    return float(np.quantile(x, 0.3)) * 2.0


def test_the_gradient_of_a_quantile_cast_to_float():
    # reductions:168 quantile_grad `dq = dy` without as_array: the cotangent of float() of the
    # quantile is a Python float, which cannot be indexed (dq[()])
    check_grad(quantile_as_a_float, (np.array([0.5, -1.0, 2.0, 0.3]),), 0)



# --- runtime/indexing.py ------------------------------------------------------------------------
def test_the_adjoint_of_reading_nothing_of_an_empty_array():
    # indexing:46 getitem_grad `np.size(dy) == 1`: the cotangent (0,) of an empty read of an
    # empty (0, 5) array (an empty list made an array) assigned into it, a ValueError
    from srcgrad.runtime import getitem_grad

    g = getitem_grad(np.array([]), np.zeros((0, 5)), slice(None))
    assert g.shape == (0, 5)


def scaled_copy(P, x):
    M = P.copy()
    M[0] *= 2.0
    return M[0] * x + P[1] * x**2


def test_a_shallow_copy_of_a_list_of_numbers_is_not_refused():
    # indexing:96 check_copied_array `(...)` for `any(...)`: the generator is true, so every
    # list copied and written into was refused, not only one holding arrays
    assert srcgrad.grad(scaled_copy, wrt=1)([0.5, 1.5], 0.7) == pytest.approx(2 * 0.5 + 2.1)


def test_add_at_into_an_array_and_a_plain_list():
    # indexing:63 add_at `if acc:` (an array's truth value: a ValueError) and indexing:75's
    # branch for an accumulator that is neither an array nor a cotangent list: `acc[i] += dy`,
    # where np.add.at would add into a temporary array made of the list
    from srcgrad.runtime import add_at

    np.testing.assert_allclose(add_at(np.zeros(3), 1, 2.0), [0.0, 2.0, 0.0])
    np.testing.assert_allclose(add_at(np.zeros(3), [0, 0], np.array([1.0, 2.0])), [3.0, 0, 0])
    assert add_at([1.0, 2.0], 0, 3.0) == [4.0, 2.0]


def list_item_written_with_a_constant(z):
    L = [z, z[0]]
    L[0] = np.ones(2)
    return L[0] * 2.0 + L[1]


def test_the_tangent_of_a_list_item_written_with_a_constant_array():
    # indexing:269 zero_written's branches swapped: the item's tangent 0.0 instead of zeros like
    # the array written, so the output's tangent is a number, not of its shape (2,)
    y, t = srcgrad.jvp(list_item_written_with_a_constant)(np.array([0.5, -1.0, 2.0]), np.ones(3))
    assert np.shape(t) == np.shape(y) == (2,)
    np.testing.assert_allclose(t, [1.0, 1.0])


# --- runtime/writes.py --------------------------------------------------------------------------
V32 = np.array([[0.5, 2.0], [-1.0, 3.0], [0.25, 0.1]])
W32 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def maximum_at_rows(x):
    y = x * 1.0
    np.maximum.at(y, [0, 0, 1], V32)
    return np.sum(y * W32)


def multiply_at_rows(x):
    y = x * 1.0
    np.multiply.at(y, [0, 0, 1], V32)
    return np.sum(y * W32)


def put_out_of_bounds(x):
    y = x * 1.0
    np.put(y, [-10], 1.0)
    return np.sum(y)


def test_ufunc_at_on_rows_of_a_matrix_and_a_put_out_of_bounds():
    # writes:147 _occurrences and writes:170 _winners without np.ravel: the positions of whole
    # rows (2-D) taken for a flat list (a ValueError); writes:44 put_index `flat >= size`: a
    # negative index out of bounds not found for NumPy's message (an IndexError of its own)
    x = np.array([[0.7, 1.0], [0.2, -0.5], [1.5, 0.3]])
    check_grad(maximum_at_rows, (x,), 0)
    check_grad(multiply_at_rows, (x,), 0)
    with pytest.raises(IndexError, match="index -10 is out of bounds for axis 0 with size 3"):
        srcgrad.grad(put_out_of_bounds)(np.ones(3))


def maximum_at_rows_of_active_values(x):
    y = x * 1.0
    np.maximum.at(y, [0, 0, 1], x[::-1] * 1.5)
    return np.sum(y * W32)


def putmask_one_value(x):
    y = x * 1.0
    np.putmask(y, y > 0.6, 5.0)
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


def put_nothing(x):
    y = x * 1.0
    np.put(y, [0, 1], np.array([]))
    return np.sum(y)


def fill_diagonal_of_a_vector(x):
    y = x * 1.0
    np.fill_diagonal(y, 2.0)
    return np.sum(y)


def test_ufunc_at_of_active_rows_putmask_of_one_value_and_numpys_errors():
    # writes:239 ufunc_at_tangent's dvalues not raveled (rows of active values); writes:81
    # putmask_sources `n == 1`: one value taken for none (NumPy's error); writes:55 _cycle and
    # writes:92 diagonal_index raising a string: a TypeError, not NumPy's ValueError
    # (and writes:172 _winners `~kept[positions]`: the first occurrence taken for the largest,
    # where the second one is: x of the second case)
    t = np.cos(np.arange(6.0)).reshape(3, 2)
    f = maximum_at_rows_of_active_values
    for x in (np.array([[0.7, 1.0], [0.2, -0.5], [1.5, 0.3]]),
              np.array([[0.1, 0.1], [1.5, 2.0], [0.2, 0.3]])):
        _, out = srcgrad.jvp(f)(x, t)
        h = 1e-6
        assert out == pytest.approx((f(x + h * t) - f(x - h * t)) / (2 * h), rel=1e-6)
    x = np.array([[0.7, 1.0], [0.2, -0.5], [1.5, 0.3]])
    check_grad(putmask_one_value, (np.array([0.5, 0.7, 1.2]),), 0)
    with pytest.raises(ValueError, match="put: cannot place values from an empty array"):
        srcgrad.grad(put_nothing)(np.ones(3))
    with pytest.raises(ValueError, match="array must be at least 2-d"):
        srcgrad.grad(fill_diagonal_of_a_vector)(np.ones(3))


def multiply_at_rows_of_active_values(x):
    y = x * 1.0
    np.multiply.at(y, [0, 0, 1], x[::-1] * 1.5)
    return np.sum(y * W32)


def put_in_and_out_of_bounds(x):
    y = x * 1.0
    np.put(y, [-3, 10], 1.0)
    return np.sum(y)


def put_at_the_end(x):
    y = x * 1.0
    np.put(y, [3], 1.0)
    return np.sum(y)


def test_multiply_at_of_active_rows_and_puts_first_bad_index():
    # writes:225 ufunc_at_tangent's dvalues of multiply.at not raveled; writes:44 `flat <= -size`:
    # -3, a valid index of 3 elements, named in NumPy's message instead of 10
    x = np.array([[0.7, 1.0], [0.2, -0.5], [1.5, 0.3]])
    t = np.cos(np.arange(6.0)).reshape(3, 2)
    _, out = srcgrad.jvp(multiply_at_rows_of_active_values)(x, t)
    h = 1e-6
    f = multiply_at_rows_of_active_values
    assert out == pytest.approx((f(x + h * t) - f(x - h * t)) / (2 * h), rel=1e-6)
    with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 3"):
        srcgrad.grad(put_in_and_out_of_bounds)(np.ones(3))
    # (writes:44 `flat > size`: the index 3 of 3 elements, just out of bounds, not found)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        srcgrad.grad(put_at_the_end)(np.ones(3))


def complex_multiply_at(z):
    y = z * 1.0
    np.multiply.at(y, [0, 0, 2], z[::-1] * (0.5 + 0.25j))
    return np.real(np.sum(y * np.array([1.0 - 1.0j, 2.0, 0.5j])))


def put_along_no_axis(x):
    y = x * 1.0
    np.put_along_axis(y, np.array([[0], [1]]), 2.0, axis=None)
    return np.sum(y)


def fill_diagonal_of_unequal_axes(x):
    y = x * np.ones((2, 3, 3))
    np.fill_diagonal(y, 2.0)
    return np.sum(y)


def test_ufunc_at_gradients_complex_and_numpys_errors_of_other_writes():
    # writes:201 ufunc_at_grad_b and writes:237 ufunc_at_tangent not raveled (rows of a matrix);
    # writes:152 _others_product, writes:182 _factor and writes:219 ufunc_at_tangent making
    # float ones or zeros for complex values (NumPy drops the imaginary part); writes:117
    # along_axis_index and writes:97 diagonal_index: NumPy's ValueErrors
    x = np.array([[0.7, 1.0], [0.2, -0.5], [1.5, 0.3]])
    check_grad(maximum_at_rows_of_active_values, (x,), 0)
    check_grad(multiply_at_rows_of_active_values, (x,), 0)
    z = np.array([0.5 + 0.3j, -1.0 + 0.8j, 0.2 - 0.6j])
    check_grad(complex_multiply_at, (z,), 0)
    t = np.array([0.3 - 0.2j, 0.1 + 0.5j, -0.4 + 0.1j])
    _, out = srcgrad.jvp(complex_multiply_at)(z, t)
    h = 1e-6
    f = complex_multiply_at
    assert out == pytest.approx((f(z + h * t) - f(z - h * t)) / (2 * h), rel=1e-6)
    with pytest.raises(ValueError, match="when axis=None, `indices` must have a single"):
        srcgrad.grad(put_along_no_axis)(np.ones(3))
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        srcgrad.grad(fill_diagonal_of_unequal_axes)(1.5)


W3C = np.array([1.0 - 1.0j, 2.0, 0.5j])


def complex_item_written(z):
    y = z * 1.0
    y[0] = z[1] * 2.0j
    return np.real(np.sum(y * W3C))


def float32_added_to_a_number(v):
    s = 0.0
    s += v * 2.0
    return s


def float64_added_into_float32(x):
    y = x * 1.0
    y += np.array([1.0, 2.0]) * x[0]
    return y


def test_complex_item_writes_and_the_dtypes_of_in_place_adds():
    # writes:257 scatter_last's zeros without the tangent's dtype (a complex tangent written
    # into float zeros); writes:335 kept_dtype `and`: a float32 added to a Python number cast to
    # float64 (NumPy keeps float32); writes:343/347 kept_dtype_tangent: the tangent of a float64
    # added into a float32 array left float64
    z = np.array([0.5 + 0.3j, -1.0 + 0.8j, 0.2 - 0.6j])
    t = np.array([0.3 - 0.2j, 0.1 + 0.5j, -0.4 + 0.1j])
    _, out = srcgrad.jvp(complex_item_written)(z, t)
    h = 1e-6
    f = complex_item_written
    assert out == pytest.approx((f(z + h * t) - f(z - h * t)) / (2 * h), rel=1e-6)
    v = np.ones(2, np.float32)
    for g in (float32_added_to_a_number, float64_added_into_float32):
        y, ty = srcgrad.jvp(g)(v, v)
        assert y.dtype == g(v).dtype == ty.dtype == np.float32, (g.__name__, y.dtype, ty.dtype)


def put_along_other_ndim(x):
    y = x * np.ones((2, 2))
    np.put_along_axis(y, np.array([0, 1]), 2.0, axis=0)
    return np.sum(y)


def putmask_of_no_values(x):
    y = x * 1.0
    np.putmask(y, y > 0.0, np.array([]))
    return np.sum(y)


def test_numpys_errors_of_put_along_axis_and_putmask():
    # writes:121 along_axis_index and writes:84 putmask_sources raising a string: a TypeError,
    # not NumPy's ValueError
    with pytest.raises(ValueError, match="`indices` and `arr` must have the same number of"):
        srcgrad.grad(put_along_other_ndim)(1.5)
    with pytest.raises(ValueError, match="putmask: values must not be empty"):
        srcgrad.grad(putmask_of_no_values)(np.ones(3))


def maximum_at_of_its_own_values(x):
    y = x * 1.0
    np.maximum.at(y, [0, 1], x[:2] * 1.0)
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


def test_a_tie_of_maximum_at_goes_to_the_array():
    # writes:172 _winners `values == y_flat[positions]` without `& ~kept`: an occurrence equal to
    # the array's own element (which keeps the gradient) chosen too, the gradient counted twice
    check_grad(maximum_at_of_its_own_values, (np.array([0.5, -1.0, 2.0]),), 0)


# --- runtime/arrays.py --------------------------------------------------------------------------
W3Z = np.array([1.0 - 1.0j, 2.0, 0.5j])


def complex_cast_in_a_variable(z):
    kind = np.complex128
    return np.real(np.sum(z.astype(kind) ** 2 * W3Z))


def test_a_complex_cast_keeps_the_imaginary_part_of_the_gradient():
    # arrays:40 cast_grad `or` for `and`: a complex cotangent of a complex x reduced to its real
    # part (only a real x through a complex cast drops it)
    check_grad(complex_cast_in_a_variable, (np.array([0.5 + 0.3j, -1.0 + 0.8j, 0.2 - 0.6j]),), 0)
