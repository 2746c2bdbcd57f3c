"""Cases that only a surviving mutant of a runtime helper showed untested (docs/development.md,
mutation testing, session of mutants20h): the helpers of higher derivatives, of batched sweeps,
of shapes and numerics, of scipy, odeint, complex values, special functions and the FFT.

Each is a program a user can write (or, for a helper that only third-order code calls, a user's
function that calls the helper itself, as in ``tests/test_mutation_kills_rules.py``), checked
against central differences or exact values; the comment names the mutant of
``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

import srcgrad
from srcgrad.errors import SrcgradError

_H = srcgrad.runtime.higher_order
_A23 = np.array([[1.0, -2.0, 0.5], [0.3, 0.4, -0.2]])


def _forward_over_reverse(f, x, t):
    """jvp of grad along ``t`` against central differences of the gradient."""
    df = srcgrad.grad(f)
    _, tangent = srcgrad.jvp(df)(x, t)
    h = 1e-6
    np.testing.assert_allclose(tangent, (df(x + h * t) - df(x - h * t)) / (2 * h), rtol=1e-6,
                               atol=1e-8)


def matrix_norm_by_ord(a, o):
    return np.linalg.norm(a, o) ** 2 * 1.5


@pytest.mark.parametrize("o", [-1, np.inf, -np.inf])
def test_second_order_of_the_piecewise_linear_matrix_norms(o):
    # higher_order.norm_power: the matrix norms of ord -1, inf and -inf have a piecewise
    # constant gradient (norm_grad_dx 0); mutants of the tuple (1, -1, np.inf, -np.inf) sent
    # them to the "internal error" refusal
    t = np.cos(np.arange(6.0) + 1.0).reshape(2, 3)
    _forward_over_reverse(lambda a: matrix_norm_by_ord(a, o), _A23, t)


def norm_of_a_number(x):
    return np.linalg.norm(x) * 3.0


def test_the_second_derivative_of_the_norm_of_a_number_is_zero_even_at_zero():
    # higher_order.norm_power: the norm of a 0-d array is |x|, whose gradient is piecewise
    # constant: 0 (as np.abs's) also at 0, where `return 1, ()` for `0, ()` gave nan
    for x in (np.array(0.0), np.array(-2.0)):
        assert srcgrad.hessian(norm_of_a_number)(x) == 0.0
        assert srcgrad.grad(norm_of_a_number)(x) == (0.0 if x == 0 else -3.0)


def product_of_a_number(a, b):
    return np.prod(a) * np.sin(b)


def test_forward_over_reverse_of_the_product_of_a_number_along_a_zero_tangent():
    # higher_order.prod_grad_tangent of a 0-d array: 0.0 * t, finite for t = 0 (0.0 / t: nan)
    a, b = np.array(1.5), 0.7
    df = srcgrad.grad(product_of_a_number, wrt=(0, 1))
    (ga, gb), (ta, tb) = srcgrad.jvp(df, wrt=(0, 1))(a, b, (np.array(0.0), 1.0))
    assert (ga, gb) == pytest.approx((np.sin(b), 1.5 * np.cos(b)), rel=1e-12)
    assert ta == pytest.approx(np.cos(b), rel=1e-12) and tb == pytest.approx(-1.5 * np.sin(b))


# --- helpers that only third-order code calls, called directly (first order) ----------------
_PIECES = [np.zeros((3, 2)), np.zeros((3, 1))]
_W9 = np.cos(np.arange(9.0) * 0.7)


def joined_flat(p0, p1):
    # axis=None: the pieces raveled and concatenated
    return np.sum(_H.join_cotangents([p0, p1], _PIECES, "concatenate", None) * _W9)


def test_join_cotangents_along_no_axis():
    # higher_order.join_cotangents, axis None: np.concatenate of the raveled pieces (a list of
    # them was returned)
    args = (np.sin(np.arange(6.0)).reshape(3, 2), np.cos(np.arange(3.0)).reshape(3, 1))
    check_grad(joined_flat, args, wrt=(0, 1))


_G6, _KA, _KB = np.sin(np.arange(6.0) + 0.5), np.array([0.7, -1.3]), np.array([0.4, 1.1, -0.6])
_CA, _CB = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]]), np.array([0.2, 0.9, -1.1])
_G23 = np.cos(np.arange(6.0) * 0.8).reshape(2, 3)


def _weighted(out):
    return np.sum(out * np.cos(np.arange(np.size(out)) + 1.0).reshape(np.shape(out)))


def kron_partner(g, a, b, w, wrt, param):
    return _weighted(_H.kron_vjp_partner(g, a, b, w, wrt=wrt, param=param))


def kron_tangent(g, a, b, t, wrt, param):
    return _weighted(_H.kron_vjp_tangent(g, a, b, t, wrt=wrt, param=param))


def cross_partner(g, a, b, w, wrt, param):
    return _weighted(_H.cross_vjp_partner(g, a, b, w, wrt=wrt, param=param))


def cross_tangent(g, a, b, t, wrt, param):
    return _weighted(_H.cross_vjp_tangent(g, a, b, t, wrt=wrt, param=param))


def convolve_partner(g, a, v, w, wrt, param):
    return _weighted(_H.convolve_vjp_partner(g, a, v, w, "full", wrt=wrt, param=param))


def convolve_tangent(g, a, v, t, wrt, param):
    return _weighted(_H.convolve_vjp_tangent(g, a, v, t, "full", wrt=wrt, param=param))


def correlate_partner(g, a, v, w, wrt, param):
    return _weighted(_H.correlate_vjp_partner(g, a, v, w, "full", wrt=wrt, param=param))


def correlate_tangent(g, a, v, t, wrt, param):
    return _weighted(_H.correlate_vjp_tangent(g, a, v, t, "full", wrt=wrt, param=param))


_PARTNERS = (kron_partner, cross_partner, convolve_partner, correlate_partner)
_OPERANDS = {"kron": (_G6, _KA, _KB), "cross": (_G23, _CA, _CB),
             "convolve": (np.sin(np.arange(6.0)), np.array([0.5, -1.0, 2.0, 0.3]), _CB),
             "correlate": (np.sin(np.arange(6.0)), np.array([0.5, -1.0, 2.0, 0.3]), _CB)}


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("helper", [kron_partner, kron_tangent, cross_partner, cross_tangent,
                                    convolve_partner, convolve_tangent, correlate_partner,
                                    correlate_tangent], ids=lambda h: h.__name__)
def test_product_helpers_of_the_other_operand_called_directly(helper, wrt):
    # higher_order.kron_vjp_partner/_tangent and cross_vjp_partner/_tangent call kron_vjp
    # (cross_vjp) in the operand they do not differentiate; its rule reads operand `wrt` only
    # for its shape (param == wrt: zeros), so kron_vjp(..., 2) for kron_vjp(..., 1) made the
    # derivative in that operand nonzero (third order of np.kron, np.cross, np.convolve,
    # np.correlate)
    param = 1 - wrt
    g, a, b = _OPERANDS[helper.__name__.split("_")[0]]
    extra = (a, b)[wrt if helper in _PARTNERS else param]
    args = (g, a, b, extra * 0.9 + 0.2)
    check_grad(lambda g, a, b, v: helper(g, a, b, v, wrt, param), args, wrt=(0, 1, 2, 3))


_B3 = np.zeros((2, 3, 2))  # (read for its number of axes alone: a stack of matrices)


def outer_of_stacked_matrices(w, v):
    return _weighted(_H.vec_outer(w, v, _B3))


def test_vec_outer_of_a_stack_of_matrices():
    # higher_order.vec_outer, b of 3 axes: w @ v^T per matrix of the stack (swapaxes(v, 1, -2)
    # for (-1, -2) transposes a matrix but not the matrices of a stack)
    w = np.sin(np.arange(12.0)).reshape(2, 3, 2)
    v = np.cos(np.arange(16.0)).reshape(2, 4, 2)
    check_grad(outer_of_stacked_matrices, (w, v), wrt=(0, 1))


_W24 = np.cos(np.arange(8.0)).reshape(2, 4)


def spaced_along_the_last_axis(a):
    return np.sum(np.linspace(a, 2 * a + 1.0, 4, axis=-1) ** 2 * _W24)


def test_reverse_over_reverse_of_linspace_along_a_negative_axis():
    # higher_order.linspace_tangent (the adjoint of linspace_grad in its cotangent): the
    # weights laid along axis % ndim (along `axis` itself, -1: a ValueError)
    df = srcgrad.grad(spaced_along_the_last_axis)
    check_grad(lambda z: np.sum(df(z) * np.array([1.0, 0.3])), (np.array([0.5, -1.0]),))


_WEIGHTS = np.array([1.5, -0.5])


def norms_of_rows(x):
    return np.sum(np.linalg.norm(x, axis=1) * _WEIGHTS)


def test_the_hessian_of_norms_of_rows_beside_a_zero_row_is_finite():
    # higher_order.norm_grad_dx: the norm's partial g / safe, safe 1 where the norm is 0 (a
    # convention: the norm has no second derivative there); with `yk == 1` for `yk == 0` the
    # zero row's block was inf * 0 = nan. The other row's block: central differences
    x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
    h = srcgrad.hessian(norms_of_rows)(x)
    assert np.isfinite(h).all()
    df = srcgrad.grad(norms_of_rows)
    num = np.stack([numeric_grad(lambda r, j=j: df(np.stack([x[0], r]))[1, j], (x[1],), 0)
                    for j in range(3)])
    np.testing.assert_allclose(h[1, :, 1, :], num, rtol=1e-6, atol=1e-9)


def test_the_mutation_tool_shows_srcgrad_each_mutant_in_the_source_it_reads():
    # tests/mutate_code.py puts a code mutant in its function's code object and, since the
    # session of mutants20h, in the lines linecache holds for its file: the helpers srcgrad
    # differentiates by their source (`by_source`) are read from there, so their derivatives
    # are the mutant's too (the kron_vjp_partner mutant above survived every test before)
    import inspect
    import linecache

    import mutate_code

    module = srcgrad.runtime.handlers
    lines = linecache.getlines(inspect.getsourcefile(module))
    mutants = mutate_code.code_mutants(module.__name__)
    for label, _, _, fn_node, _ in mutants:
        edited = mutate_code._mutated_lines(lines, fn_node)
        assert edited is not None and len(edited) == len(lines), label
        changed = [i + 1 for i, (a, b) in enumerate(zip(lines, edited)) if a != b]
        assert changed and fn_node.lineno <= min(changed) <= max(changed) <= fn_node.end_lineno
    assert len(mutants) > 10


# --- np.kron, np.cross, np.convolve, np.correlate at second order in their second operand:
# the vjp templates pass wrt=1 to a helper whose own rule compares wrt with the operand it
# differentiates (higher_order.kron_vjp_partner's `param == wrt`), so wrt=2, which the helper
# itself reads as 1, is no equivalent (listed as one before: a ValueError or a nonzero second
# derivative in b of a function linear in b)
def _with_second(op):
    def f(a, b):
        out = op(a, b)
        return np.sum(out * np.cos(np.arange(out.size) * 0.6)) + np.sum(np.sin(b) * b)
    return f


@pytest.mark.parametrize("op, a, b", [
    (np.kron, _KA, _KB),
    (np.cross, np.array([0.5, -1.0, 2.0]), _CB),
    (np.linalg.cross, np.array([0.5, -1.0, 2.0]), _CB),
    (np.convolve, np.array([0.5, -1.0, 2.0, 0.3]), _CB),
    (lambda a, v: np.correlate(a, v, "full"), np.array([0.5, -1.0, 2.0, 0.3]), _CB),
], ids=["kron", "cross", "linalg_cross", "convolve", "correlate"])
def test_forward_over_reverse_in_the_second_operand_of_a_product(op, a, b):
    f = _with_second(op)
    df = srcgrad.grad(f, wrt=1)
    t = np.array([0.3, -1.0, 0.8])
    _, tangent = srcgrad.jvp(df, wrt=1)(a, b, t)
    h = 1e-6
    np.testing.assert_allclose(tangent, (df(a, b + h * t) - df(a, b - h * t)) / (2 * h),
                               rtol=1e-6, atol=1e-8)


# --- runtime/batched.py: the Jacobian's rows by one sweep for many seeds -------------------------
def _numeric_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        e = e.reshape(x.shape)
        cols.append(((f(x + e) - f(x - e)) / (2 * h)).ravel())
    return np.stack(cols, axis=1).reshape(np.shape(f(x)) + x.shape)


_B34 = np.cos(np.arange(12.0)).reshape(3, 4)


def times_a_matrix(a):
    return np.tanh(a @ _B34)


def test_the_rows_of_a_jacobian_in_the_left_operand_of_a_matrix_product():
    # batched.matmul_vjp_left, a and b matrices: each row dy @ b.T (dy * b.T: a ValueError)
    a = np.sin(np.arange(6.0)).reshape(2, 3)
    np.testing.assert_allclose(srcgrad.jacobian(times_a_matrix, method="rev")(a),
                               _numeric_jacobian(times_a_matrix, a), rtol=1e-6, atol=1e-9)


def mixed(x):
    return np.sin(x) * x[::-1] + np.cumsum(x)


@pytest.mark.parametrize("rows", [2, 3])
def test_the_rows_of_a_jacobian_in_several_blocks(monkeypatch, rows):
    # batched.rows_of: seeds in blocks of at most ROWS_BYTES; block lo:hi has hi - lo seeds
    # (hi seeds: a ValueError from the second block on), and two blocks are concatenated too
    # (`len(b) == 2` took the first block alone)
    from srcgrad.runtime import batched

    x = np.array([0.5, -1.0, 2.0, 0.3, 1.2])
    monkeypatch.setattr(batched, "ROWS_BYTES", 8 * 5 * rows)  # three blocks, or two
    np.testing.assert_allclose(srcgrad.jacobian(mixed, method="rev")(x),
                               _numeric_jacobian(mixed, x), rtol=1e-6, atol=1e-9)


_STACK = np.cos(np.arange(24.0)).reshape(2, 3, 4)


def times_a_stack(a):
    return np.tanh(a @ _STACK)


def read_at_repeated_indices(x):
    y = x * 1.0
    out = y[[0, 1]] * 1.0
    return out + y[[1, 1]] ** 2 + y[np.array([2, 2])]


def stack_times_a_vector(b):
    return np.tanh(_STACK @ b)


def complex_joined(x):
    return np.abs(np.concatenate([x * (1.0 + 2.0j), np.exp(1j * x) * x]))


def joined_along_the_last_axis(x):
    return np.tanh(np.concatenate([x, x**2], axis=-1))


def scaled_by_the_maximum(x):
    return np.max(x) * x


def running_sums_along_the_last_axis(x):
    return np.cumsum(x, axis=-1) ** 2


def vector_times_a_stack(b):
    return np.tanh(np.array([0.5, -1.0]) @ b)


_C3 = np.array([0.3, -0.8, 1.1])


def scaled_by_a_dot(x):
    return np.dot(x, _C3) * x


def scaled_by_a_vector_product(b):
    return (_C3 @ b) * b


def indices_apart(x):
    return np.sin(x[0, :, [1, 2]])


def flat_with_a_list(x):
    return np.concatenate([x, [x[0] * 2.0, x[1] ** 2]], axis=None) * 1.5


def maximum_of_a_list(x):
    return np.max([x[0], x[1] * 2.0]) * x


def maxima_of_columns_kept(x):
    return np.max(x, axis=0, keepdims=True) * x


def minima_of_rows_squared(x):
    return np.min(x, axis=-1) ** 2


def vector_dot_a_stack(x):
    return np.dot(x, _STACK)


def matrix_dot_a_stack(b):
    return np.dot(np.cos(np.arange(6.0)).reshape(2, 3), b)


def stack_times_a_vector_in_the_stack(a):
    return np.tanh(a @ np.array([0.5, -1.0, 2.0, 0.3]))


def product_of_an_intermediate(x):
    return np.tanh(np.sin(x) @ _B34)


def matrix_times_a_stack_in_the_stack(b):
    return np.tanh(np.cos(np.arange(6.0)).reshape(2, 3) @ b)


def three_joined(x):
    return np.concatenate([x, x**2, np.sin(x)]) * 1.5


def maximum_of_an_item(x):
    return np.max(x[0]) * x


def sums_of_rows(x):
    return np.sum(x**2, axis=-1) * np.array([1.0, 2.0])


def stacked_with_a_list(x):
    return np.stack([x[:2], [x[0] * 2.0, x[1] ** 2]]).ravel()


_MASK = np.array([[True, False, True], [True, True, False]])


def masked_sums_of_rows(x):
    return np.sum(x * x, axis=1, where=_MASK)


def written_at_advanced_indices(x):
    y = x * 1.0
    y[[0, 2]] = x[:2] ** 2
    return y * 3.0


def written_then_spread(x):
    y = x * 1.0
    y[1] = x[0] ** 2
    return np.sum(y) * np.ones(2)


def complex_read_at_repeated_indices(x):
    y = x * (1.0 + 2.0j)
    return np.abs(y[[0, 1]]) + np.abs(y[[1, 1]]) ** 2


def written_twice(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    y[1:3] = x[1:] ** 2
    return y * 1.5


def joined_with_a_list(x):
    return np.concatenate([x, [x[0] * 2.0, x[1] ** 2]]) * 1.5


_X3 = np.array([0.5, -1.0, 2.0])
_X23 = np.sin(np.arange(6.0)).reshape(2, 3)


@pytest.mark.parametrize("f, x", [
    (times_a_stack, _X23),
    (read_at_repeated_indices, _X3),
    (stack_times_a_vector, np.array([0.5, -1.0, 2.0, 0.3])),
    (complex_joined, _X3),
    (joined_along_the_last_axis, _X23),
    (scaled_by_the_maximum, np.array([1.0, 3.0, 3.0])),
    (running_sums_along_the_last_axis, _X23),
    (vector_times_a_stack, np.cos(np.arange(24.0)).reshape(3, 2, 4)),
    (scaled_by_a_dot, _X3),
    (scaled_by_a_vector_product, _X3),
    (indices_apart, np.cos(np.arange(24.0)).reshape(2, 3, 4)),
    (flat_with_a_list, _X3),
    (maximum_of_a_list, _X3),
    (maxima_of_columns_kept, np.array([[1.0, 3.0, 3.0], [2.0, 3.0, 0.5]])),
    (minima_of_rows_squared, np.array([[1.0, 1.0, 3.0], [2.0, -1.0, 0.5]])),
    (vector_dot_a_stack, _X3),
    (matrix_dot_a_stack, np.cos(np.arange(24.0)).reshape(2, 3, 4)),
    (stack_times_a_vector_in_the_stack, np.cos(np.arange(24.0)).reshape(2, 3, 4)),
    (product_of_an_intermediate, _X23),
    (matrix_times_a_stack_in_the_stack, np.cos(np.arange(24.0)).reshape(2, 3, 4)),
    (three_joined, _X3),
    (maximum_of_an_item, _X3),
    (sums_of_rows, _X23),
    (stacked_with_a_list, _X3),
    (masked_sums_of_rows, _X23),
    (written_at_advanced_indices, _X3),
    (written_then_spread, _X3),
    (complex_read_at_repeated_indices, _X3),
    (written_twice, _X3),
    (joined_with_a_list, _X3),
], ids=["matrix_times_a_stack", "repeated_indices", "stack_times_a_vector", "complex_joined",
        "joined_along_axis_-1", "maximum_with_ties", "cumsum_along_axis_-1",
        "vector_times_a_stack", "dot_of_vectors", "vector_product", "indices_apart",
        "flat_with_a_list", "maximum_of_a_list", "column_maxima_with_ties_kept",
        "row_minima_with_ties", "vector_dot_a_stack", "matrix_dot_a_stack",
        "stack_times_a_vector_in_the_stack", "product_of_an_intermediate",
        "matrix_times_a_stack_in_the_stack", "three_joined", "maximum_of_an_item",
        "sum_along_axis_-1", "stacked_with_a_list", "masked_sums", "written_at_advanced_indices",
        "written_then_spread", "complex_read_at_repeated_indices", "written_twice",
        "joined_with_a_list"])
def test_the_rows_of_a_jacobian_through_batched_helpers(f, x):
    # batched.matmul_vjp_left of a matrix times a stack of matrices: row by row (with `and` for
    # `or` it took the matrix branch: a ValueError); batched.add_at at an advanced index with
    # repeated positions: np.add.at, which adds each (a basic `+=` kept one of x[1]'s two
    # contributions: the Jacobian's [0, 1] was 0 for -2); matmul_vjp_right of a stack times a
    # vector: row by row (the vector branch: a ValueError); _like keeps a complex cotangent of
    # a complex piece (its real part was taken); concatenate_grad and cumsum_grad read a
    # negative axis modulo the rank (axis + 1 was the seeds' axis); chooser_grad splits the
    # maximum's cotangent among ties (each got all of it); matmul_vjp_right of a vector times a
    # stack, and of two vectors (dy[:, None] * a), and dot_vjp_left of two vectors, each in its
    # own branch (mutants of their tests sent them to another: a ValueError or a wrong row);
    # _at refuses advanced indices apart (NumPy moves their axes first), concatenate_grad and
    # chooser_grad a Python list among the operands (_plain: Unbatched), whose cotangent the
    # batched sweep would hold as an array, its rows read as the list's items; chooser_grad
    # along an axis (kept, or -1) with ties: each tie's share, its axis modulo the rank;
    # dot_vjp_left/_right of stacks (np.dot is no matmul there: row by row), matmul_vjp_left
    # and _right of stacks in each operand and of an intermediate (a wrong row shape met the
    # next adjoint), concatenate_grad of three pieces, chooser_grad of a number (Unbatched);
    # unreduce along axis -1 (modulo the rank), stack_grad of a Python list (Unbatched);
    # unreduce with `where` and take_item at advanced indices refused (Unbatched: a str raised
    # was a TypeError; `and` for `or` ignored the mask), zero_item copies a read-only cotangent
    # (unreduce's view) before zeroing the written item; getitem_advanced's zeros in dy's dtype
    # (complex: float64 zeros were a casting error), take_item's copy (copy=False kept a view
    # of the buffer written next), concatenate_grad of a Python list along an axis (Unbatched)
    np.testing.assert_allclose(srcgrad.jacobian(f, method="rev")(x), _numeric_jacobian(f, x),
                               rtol=1e-6, atol=1e-9)


def the_maximum_spread(x):
    return np.max(x) * np.arange(1.0, 4.0)


def test_the_jacobian_of_a_maximum_all_tied():
    # batched.chooser_grad: three elements all equal to the maximum share its cotangent (the
    # fast path taken where every element is chosen gave each all of it)
    jac = srcgrad.jacobian(the_maximum_spread, method="rev")(np.array([3.0, 3.0, 3.0]))
    np.testing.assert_allclose(jac, np.outer(np.arange(1.0, 4.0), np.full(3, 1.0 / 3.0)),
                               rtol=1e-12)


def the_sum_spread(x):
    return np.sum(x) * np.ones(3)


def test_a_jacobian_from_a_spread_cotangent_is_an_array_the_caller_owns():
    # batched.copy_grad: the rows are a copy (copy=False kept unreduce's read-only broadcast
    # view, and the Jacobian was read-only)
    x = np.array([0.5, -1.0, 2.0])
    jac = srcgrad.jacobian(the_sum_spread, method="rev")(x)
    np.testing.assert_array_equal(jac, np.ones((3, 3)))
    jac[0, 0] = 5.0  # the caller's own array
    assert jac.flags.writeable and jac[1, 0] == 1.0


def a_slice_of_a_list(x):
    items = [x, 2.0 * x, 3.0 * x]
    first_two = items[0:2]
    return first_two[0] * first_two[1]


def test_the_jacobian_through_a_slice_of_a_list():
    # batched.getitem_grad of a list read with a slice: Unbatched, so the per-seed sweep
    # (raising a str instead: a TypeError)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.jacobian(a_slice_of_a_list, method="rev")(x),
                               np.diag(4.0 * x), rtol=1e-12)


def nan_maxima_of_rows(x):
    return np.nanmax(x, axis=1) * 2.0


def maxima_of_rows(x):
    return np.max(x, axis=1) * 2.0


def test_the_jacobian_of_a_maximum_that_is_nan():
    # batched.chooser_grad: a NaN maximum chose its row's NaN alone (np.isnan(yk) for
    # np.isnan(a) & np.isnan(yk) chose every element of that row)
    x = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, 4.0]])
    with np.errstate(invalid="ignore"):
        jac = srcgrad.jacobian(maxima_of_rows, method="rev")(x)
    np.testing.assert_array_equal(jac[0], [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(jac[1], [[0.0, 0.0, 0.0], [0.0, 2.0, 0.0]])


def test_the_jacobian_of_nanmax_beside_an_all_nan_row():
    # batched.chooser_grad: where some row's maximum is NaN (an all-NaN row, which chose its
    # NaNs), the NaNs of the other rows are not chosen (`chosen |= np.isnan(a)` gave the NaN of
    # row 1 half of its cotangent)
    x = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 3.0]])
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="All-NaN"):
        jac = srcgrad.jacobian(nan_maxima_of_rows, method="rev")(x)
    np.testing.assert_array_equal(jac[1], [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    np.testing.assert_allclose(jac[0, 0], np.full(3, 2.0 / 3.0), rtol=1e-12)


def dict_of_a_list(x, key):
    d = {"k": [x * 2.0, np.sin(x)], "j": x}
    return d[key][1] * 3.0


def test_the_jacobian_through_a_list_held_by_a_dict():
    # batched._rows refuses a list's cotangents where an array's rows are wanted (Unbatched: the
    # per-seed sweep); raising a str instead was a TypeError
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.jacobian(dict_of_a_list, method="rev")(x, "k"),
                               np.diag(3.0 * np.cos(x)), rtol=1e-12)


def twice_the_modulus(z):
    return np.abs(z) * 2.0


def test_the_jacobian_of_a_complex_argument_is_refused_by_the_batched_sweep_too():
    # batched.rows_of checks each argument (jacobian_argument): without it a complex argument
    # got rows instead of the error
    with pytest.raises(SrcgradError, match="complex"):
        srcgrad.jacobian(twice_the_modulus, method="rev")(np.array([1.0 + 1j, 2.0]))


def scaled_range(x):
    return x * np.arange(3.0)


@pytest.mark.parametrize("x", [0.5, 2], ids=["float", "int"])
def test_the_jacobian_of_a_python_number_is_real(x):
    # batched.cast_like: the rows of a Python float's (or int's) gradient are float64 (the
    # branches swapped made them complex128)
    jac = srcgrad.jacobian(scaled_range, method="rev")(x)
    assert jac.dtype == np.float64
    np.testing.assert_array_equal(jac, np.arange(3.0))


# --- runtime/shapes.py ----------------------------------------------------------------------------
def tuple_argument_extended(x, t):
    b = t + (x[0],)
    return b[0] * b[2]


def test_a_tuple_argument_concatenated_is_refused_with_its_message():
    # shapes._unbroadcast_sequences: cotangents of two lengths are a concatenation, refused
    # with a located SrcgradError (a str raised instead: a TypeError)
    with pytest.raises(SrcgradError, match="concatenation or repetition"):
        srcgrad.grad(tuple_argument_extended)(np.array([0.5, 1.5]), (2.0, 3.0))
