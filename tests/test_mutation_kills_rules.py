"""Cases that only a surviving mutant of a rule of srcgrad's runtime helpers
(``rules/runtime_rules.py``) showed untested (docs/development.md, mutation testing): the rules a
transform reads only when it differentiates generated code that calls the helper, a complex
norm's gradient, ``np.real_if_close``'s, forward mode over ``max`` of a list, ``np.fft`` with a
length, ``holomorphic_grad`` and ``has_aux`` differentiated again.

Each is a program a user can write, its derivative checked against central differences;
``tests/mutate_rules.py`` runs these tests against the rules they read (the comment names the
mutants each kills).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

import srcgrad

Z = np.array([0.5 + 0.3j, -1.0 + 0.8j, 0.2 - 0.6j])
W = np.array([0.7 - 0.2j, 0.1 + 0.9j, -0.5 + 0.4j])
X = np.array([0.3, -0.7, 1.1])
T = np.array([0.4, 0.25, -0.6])


def _along(f, x, t, h=1e-6):
    """The central difference of f at x along t."""
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def _check_complex_second_order(f):
    """grad of z -> Re sum(grad(f)(z) * W), a complex argument, against central differences."""
    df = srcgrad.grad(f)

    def h(z):
        return np.real(np.sum(df(z) * W))

    np.testing.assert_allclose(srcgrad.grad(h)(Z), numeric_grad(h, (Z,), 0), rtol=1e-6, atol=1e-8)


def norm_of_square(z):
    return np.linalg.norm(z * z)


def real_if_close_squared(z):
    return np.real(np.sum(np.real_if_close(z * z) ** 2))


@pytest.mark.parametrize("f", [norm_of_square, real_if_close_squared])
def test_second_order_through_complex_boundaries(f):
    # norm_of_square: the gradient of a complex norm is taken at |x| (norm_input), whose vjp
    # passes the cotangent: kills norm_input vjp[x] `x` and `y`.
    # real_if_close_squared: its vjp conjugates back (conj_like), whose vjp is conj_like of
    # the cotangent: kills conj_like vjp[g] `conj_like(g, x)` and `conj_like(y, x)`.
    _check_complex_second_order(f)


def extremes_of_a_list(x):
    return max([x[0], x[1] ** 2, x[2]]) ** 2 + min([x[0] * x[2], x[2]]) ** 3


def test_reverse_over_forward_of_max_and_min_of_a_list():
    # the tangent of max(items) is pick_extreme(ditems, items, True), whose vjp scatters the
    # cotangent to the chosen item: kills pick_extreme vjp[d] (4 names replaced). At this point
    # the items chosen (x[1] ** 2 and x[0] * x[2]) have tangents that depend on x.
    x = np.array([0.3, -1.2, 1.1])

    def h(x):
        return srcgrad.jvp(extremes_of_a_list)(x, T)[1]

    np.testing.assert_allclose(h(x), _along(extremes_of_a_list, x, T), rtol=1e-6)
    check_grad(h, (x,))


M = np.array([[0.5, -1.0, 2.0], [0.3, 0.7, -0.4]])


def broadcast_along_the_last_axis(x):
    return np.sum(np.sin((x * x)[:, None] * 2.0 + M) ** 2)


def test_reverse_over_forward_of_a_tangent_broadcast_along_its_last_axis():
    # the tangent of the (2, 1) operand is spread to (2, 3) (broadcast_like), whose vjp sums the
    # cotangent back to (2, 1): kills broadcast_like vjp[t] `unbroadcast(dy, y)` and
    # `unbroadcast(dy, dy)` (a (2, 3) cotangent for the (2, 1) operand).
    def h(x):
        return srcgrad.jvp(broadcast_along_the_last_axis)(x, T[:2])[1]

    np.testing.assert_allclose(h(X[:2]), _along(broadcast_along_the_last_axis, X[:2], T[:2]),
                               rtol=1e-6)
    check_grad(h, (X[:2],))


def fft_with_a_length(x):
    padded = np.abs(np.fft.fft(x * x, n=5)) ** 2
    cropped = np.real(np.fft.irfft(np.fft.rfft(np.sin(x)), n=2))
    return np.sum(padded) + np.sum(cropped**3)


def test_grad_of_grad_of_fft_with_a_length():
    # np.fft with n: the gradient pads or crops (fit_axes), whose vjp crops or pads back:
    # kills fit_axes vjp[g] (4 names replaced).
    df = srcgrad.grad(fft_with_a_length)
    check_grad(lambda x: np.sum(df(x) * X), (X,))


def cubic_times_sine(z):
    return z * z * np.sin(z)


def test_holomorphic_grad_differentiated_again():
    # holomorphic_grad ends in holomorphic_result (a conjugate): its vjp and jvp conjugate the
    # cotangent and the tangent. Kills holomorphic_result vjp[g] and jvp[g] (3 mutants each).
    dz = srcgrad.holomorphic_grad(cubic_times_sine)

    def h(x):
        d = dz(x[0] + 1j * x[1])
        return np.real(d) * x[2] + np.imag(d) ** 2

    check_grad(h, (X,))
    np.testing.assert_allclose(srcgrad.jvp(h)(X, T)[1], _along(h, X, T), rtol=1e-6)


def _pair(x):
    if x[0] > 0:
        return np.sum(np.sin(x) * x), x * x
    return np.sum(x), x


def loss_and_stats(x):
    return _pair(x)


def test_grad_with_aux_differentiated_again():
    # a pair the function does not build itself is split at run time (split_aux), whose vjp
    # and jvp pass the cotangent and tangent of the pair: kills split_aux vjp[pair] and
    # jvp[pair] (`pair`, `y`).
    df = srcgrad.grad(loss_and_stats, has_aux=True)

    def h(x):
        g, stats = df(x)
        return np.sum(g * x) + np.sum(stats * g)

    check_grad(h, (X,))
    np.testing.assert_allclose(srcgrad.jvp(h)(X, T)[1], _along(h, X, T), rtol=1e-6)


V = np.array([0.6, -0.4, 1.3, 0.2, -0.9])


def correlate_valid(v):
    return np.sum(np.correlate(v, v[:3] ** 2, mode="valid") ** 2)


def test_grad_of_grad_of_correlate_in_valid_mode():
    # the first-order code calls correlate_vjp(g, a, v, wrt=0), whose adjoint in a is zero (a
    # is read for its length only): zeros of a's length, not of g's (3 here, against 5).
    # Kills correlate_vjp vjp[a] `correlate_vjp_partner(g, g, v, dy, ...)`.
    df = srcgrad.grad(correlate_valid)
    check_grad(lambda v: np.sum(df(v) * np.cos(V)), (V,))


Y2 = np.array([[0.5, -1.0, 2.0], [0.3, 0.7, -0.4]])


def cross_weighted(x, y):
    return np.sum(np.cross(x, y) ** 2 * np.sin(x))


def test_forward_over_the_gradient_of_the_second_operand_of_cross():
    # the gradient in y calls cross_vjp(g, x, y, wrt=1); forward mode in x alone reads its
    # tangent in operand a, where y has no tangent. Kills cross_vjp jvp[a]
    # `cross_vjp_tangent(g, a, db, da, ...)` (an error where db is not y's shape).
    gy = srcgrad.grad(cross_weighted, wrt=1)

    def h(x):
        return np.sum(gy(x, Y2) * Y2)

    x = np.array([[0.2, -0.4, 0.9], [1.0, 0.1, -0.3]])
    t = np.array([[0.1, 0.5, -0.2], [0.3, -0.6, 0.2]])
    np.testing.assert_allclose(srcgrad.jvp(h)(x, t)[1], _along(h, x, t), rtol=1e-6)


def product_along_rows(x):
    return np.sum(np.prod(x, axis=1) ** 3)


def test_grad_of_grad_of_a_product_along_the_last_axis():
    # prod_grad's adjoint in g reads only the shape of g's ones (a product along axis 0 hides
    # a g spread to a's shape; along axis 1 it cannot broadcast). Kills prod_grad vjp[g]
    # `prod_grad(np.ones_like(y), ...)`.
    df = srcgrad.grad(product_along_rows)
    check_grad(lambda x: np.sum(df(x) * np.cos(Y2)), (Y2,))


S3 = np.stack([Y2, np.cos(Y2)])  # two 2x3 matrices
K = np.array([[[1.5]], [[-0.5]]])


def matrix_norms(x):
    fro = np.linalg.matrix_norm(x, keepdims=True)  # (2, 1, 1)
    nuc = np.linalg.matrix_norm(np.sin(x), ord="nuc")  # (2,)
    return np.sum(fro**3 * K) + np.sum(nuc**2 * K[:, 0, 0])


def test_second_order_of_matrix_norms_of_a_stack():
    # grad of grad and jvp of grad read matrix_norm_grad's rules (the Frobenius norm's partials
    # and the nuclear norm's, through its SVD), over the last two axes of a stack, one of them
    # with keepdims: kills matrix_norm_grad's mutants that drop or change axis=(-2, -1),
    # keepdims or kind='matrix', or read another name
    df = srcgrad.grad(matrix_norms)

    def h(x):
        return np.sum(df(x) * np.cos(S3))

    check_grad(h, (S3,))
    t = np.cos(3 * S3)
    np.testing.assert_allclose(srcgrad.jvp(df)(S3, t)[1], _along(df, S3, t), rtol=1e-6, atol=1e-9)


def matrix_norm_squared(x, o):
    return np.sum(np.linalg.matrix_norm(x, ord=o) ** 2 * K[:, 0, 0])


@pytest.mark.parametrize("o", [1, 2, -2])
def test_second_order_of_a_matrix_norm_of_a_stack_by_ord(o):
    # ord as an argument: the derivative keeps matrix_norm_grad's conditional on ord, and each
    # ord takes its branch. ord=1's gradient is piecewise constant (its partial in x is zero,
    # not g / nrm: kills the mutants that drop ord= from norm_grad_dx); 2 and -2 take the SVD
    # branch (kills the mutants of ('nuc', 2, -2) that send them to norm_grad_dx, which refuses
    # them)
    df = srcgrad.grad(matrix_norm_squared)

    def h(x):
        return np.sum(df(x, o) * np.cos(S3))

    check_grad(h, (S3,))
    t = np.cos(3 * S3)
    np.testing.assert_allclose(
        srcgrad.jvp(df)(S3, o, t)[1], _along(lambda x: df(x, o), S3, t), rtol=1e-6, atol=1e-9
    )


W8 = np.arange(1.0, 9.0).reshape(2, 4)


def taken(x):
    return np.sum(np.take(x, [0, 2, 3, 5], axis=1, mode="wrap") ** 3 * W8)


def test_reverse_over_a_hessian_vector_product_of_take():
    # np.take's gradient gathers (select_grad, with its axis and mode), whose tangent scatters
    # (select_scatter); reverse mode over that forward-over-reverse code reads select_scatter's
    # adjoint, and the indices 3 and 5 wrap only with mode="wrap" along axis 1
    dt = srcgrad.grad(taken)
    t = np.cos(3 * Y2)

    def h(x):
        return np.sum(srcgrad.jvp(dt)(x, t)[1] * np.cos(Y2))

    check_grad(h, (Y2,))
    # forward over it reads select_scatter's tangent in g (with the same axis and mode)
    u = np.sin(2 * Y2)
    np.testing.assert_allclose(srcgrad.jvp(h)(Y2, u)[1], _along(h, Y2, u), rtol=1e-6)


def test_third_order_reverse_of_take():
    # grad of grad of take's gradient: the second gathers (select_gather) a cotangent that
    # depends on x (h squares the gradient), so the third reads select_gather's adjoint, a
    # scatter with take's axis and mode
    dt = srcgrad.grad(taken)

    def h(x):
        return np.sum(dt(x) ** 2 * np.cos(Y2))

    dh = srcgrad.grad(h)
    check_grad(lambda x: np.sum(dh(x) * np.sin(Y2)), (Y2,))


X23 = np.array([[0.4, -0.9, 1.2], [0.8, 0.3, -0.5]])


def einsum_of_four_shapes(x):
    # four operands (x4, x5 not given) of three shapes: (3,), (2, 3), (2,), (2, 3)
    out = np.einsum("j,ij,i,ij->ij", np.sin(x[0]), x, np.cos(x[:, 0]), x**2)  # (2, 3)
    return np.sum(out**2 * X23)


def einsum_of_six_shapes(x):
    # six operands, each of another shape than the next: (3,), (2, 3), (2,), (2, 3), (3,), (2,)
    out = np.einsum("j,ij,i,ij,j,i->", np.sin(x[0]), x, np.cos(x[:, 0]), x**2, x[1], x[:, 1])
    return out**2


def test_reverse_over_forward_of_einsum_with_six_operands_of_other_shapes():
    # einsum_jvp's partner adjoints read their operand's shape (operands 3, 4, 5 here)
    tangent = srcgrad.jvp(einsum_of_six_shapes)
    check_grad(lambda x: tangent(x, np.sin(2 * X23))[1], (X23,))


def test_second_order_of_einsum_with_four_operands_of_other_shapes():
    # reverse over reverse reads einsum_vjp's partner adjoints, which read each operand's shape
    # (kills a partner given another operand's shape); forward over reverse its tangents with
    # x4 and x5 not given (kills a tangent given None, an absent operand's tangent, for x3, and
    # zeros of another operand's shape, or of the output's)
    df = srcgrad.grad(einsum_of_four_shapes)

    def h(x):
        return np.sum(df(x) * np.cos(X23))

    check_grad(h, (X23,))
    t = np.sin(2 * X23)
    np.testing.assert_allclose(srcgrad.jvp(df)(X23, t)[1], _along(df, X23, t), rtol=1e-6, atol=1e-9)


W2 = np.array([0.7, -1.3])


def einsum_of_five_third_constant(v):
    return np.einsum("i,i,i,i,i->", v, v**2, W2, np.sin(v), np.cos(v)) ** 2


def test_forward_over_forward_of_einsum_with_a_constant_operand():
    # einsum_jvp's tangent in operand 4 with operand 2 constant (its tangent None)
    u, u2 = np.array([0.3, -0.8]), np.array([1.1, 0.4])
    tangent = srcgrad.jvp(einsum_of_five_third_constant)

    def h(v):
        return tangent(v, u)[1]

    v = np.array([0.6, -0.2])
    np.testing.assert_allclose(srcgrad.jvp(h)(v, u2)[1], _along(h, v, u2), rtol=1e-6)


def sine_of_row_norms(x):
    rows = np.linalg.vector_norm(x, axis=1, keepdims=True)  # (2, 1)
    return np.sum(np.sin(np.linalg.vector_norm(x, axis=1))) + np.sum(np.cos(rows) * X23)


def test_second_order_of_vector_norms_along_an_axis():
    # the norms' cotangents depend on x: reverse over reverse reads vector_norm_grad's adjoint
    # in g, ones of the norm's shape spread back along axis 1 (ones of x's shape, spread along
    # a new axis 1, would sum the cotangent over the rows); forward over reverse its tangent in
    # g, with keepdims (without, the tangent would get a new axis 1, and the adjoint in nrm
    # would lose the kept axis 1: (2,) against (2, 1))
    df = srcgrad.grad(sine_of_row_norms)

    def h(x):
        return np.sum(df(x) * np.cos(X23))

    check_grad(h, (X23,))
    t = np.sin(2 * X23)
    np.testing.assert_allclose(srcgrad.jvp(df)(X23, t)[1], _along(df, X23, t), rtol=1e-6, atol=1e-9)


def kron_of_two_sizes(x):
    return np.sum(np.kron(np.sin(x[:2]), x) ** 2)


def test_forward_over_reverse_of_kron_of_two_sizes():
    # kron_vjp's tangent in b for the gradient of b: zeros of b's shape (3,), not a's (2,)
    df = srcgrad.grad(kron_of_two_sizes)
    x, t = np.array([0.3, -0.7, 1.1]), np.array([0.4, 0.25, -0.6])
    np.testing.assert_allclose(srcgrad.jvp(df)(x, t)[1], _along(df, x, t), rtol=1e-6, atol=1e-9)


def depth_stacked(x):
    return np.sum(np.dstack((x, np.sin(x))) ** 3 * np.arange(12.0).reshape(2, 3, 2))


def test_grad_of_grad_of_dstack():
    # dstack_grad's adjoint in g joins the pieces' cotangents along axis 2 of 2-d pieces
    df = srcgrad.grad(depth_stacked)

    def h(x):
        return np.sum(df(x) * np.cos(X23))

    check_grad(h, (X23,))


def norm_squared(x, o):
    return np.linalg.norm(x, o) ** 2


@pytest.mark.parametrize("o", ["nuc", 2, -2])
def test_forward_over_reverse_of_a_norm_of_singular_values(o):
    # forward over reverse reads norm_grad's tangent in x through its SVD branch, which reads
    # x and g (ord an argument: one derivative for the three)
    df = srcgrad.grad(norm_squared)
    t = np.cos(3 * X23)
    np.testing.assert_allclose(
        srcgrad.jvp(df)(X23, o, t)[1], _along(lambda x: df(x, o), X23, t), rtol=1e-6, atol=1e-9
    )


def cumprod_along_rows(x):
    return np.sum(np.cumprod(x, axis=1) ** 2)


def test_forward_over_forward_of_cumprod_along_the_point_itself():
    # the inner tangent is the point itself, so the outer tangent differentiates cumprod_jvp in
    # its tangent t too (cumprod_jvp(a, dt): a, not cumprod_jvp's own result)
    tangent = srcgrad.jvp(cumprod_along_rows)

    def h(x):
        return tangent(x, x)[1]

    t = np.cos(2 * X23)
    np.testing.assert_allclose(srcgrad.jvp(h)(X23, t)[1], _along(h, X23, t), rtol=1e-6)


def logspace_of_a_vector(x):
    # start (2,), stop a number, base an element of x: base is made 1-d (leading_ones)
    return np.sum(np.logspace(x[:2], 0.5, 4, base=x[2]) * np.arange(1.0, 9.0).reshape(4, 2))


def test_grad_of_grad_of_logspace_with_a_vector_start():
    df = srcgrad.grad(logspace_of_a_vector)
    v = np.array([0.3, -0.4, 2.5])

    def h(x):
        return np.sum(df(x) * np.array([0.7, -0.2, 1.1]))

    check_grad(h, (v,))


def diagonals_of_a_stack(x):
    return np.sum(np.diagonal(x, offset=1, axis1=1, axis2=2) ** 3)


def test_grad_of_grad_of_diagonals_along_the_last_two_axes():
    # reverse over reverse reads diagonal_grad's adjoint in g: np.diagonal of the cotangent with
    # the same offset and axes (axis1=1, not the default 0)
    df = srcgrad.grad(diagonals_of_a_stack)
    x = np.stack([X23, np.cos(X23)]).reshape(2, 2, 3)

    def h(z):
        return np.sum(df(z) * np.sin(x))

    check_grad(h, (x,))


def sorted_down_the_columns(x):
    return np.sum(np.sort(x, axis=0) ** 3 * np.array([[1.0], [-2.0]]))


def test_grad_of_grad_of_sort_along_axis_0():
    # sort's gradient permutes the cotangent back (permutation_grad), and its adjoint permutes
    # along the same axis, 0 here (the default is -1)
    df = srcgrad.grad(sorted_down_the_columns)
    x = np.array([[0.4, -0.9, 1.2], [-0.8, 0.3, 1.5]])  # column 0 and 1 swap, column 2 not

    def h(z):
        return np.sum(df(z) * np.cos(X23))

    check_grad(h, (x,))


def transposed_cubed(x):
    return np.sum(np.linalg.matrix_transpose(x) ** 3 * np.arange(6.0).reshape(3, 2))


def diagonal_placed(v):
    return np.sum(np.diag(v, k=1) ** 3 * np.arange(9.0).reshape(3, 3))


def spaced_without_the_end(v):
    return np.sum(np.linspace(v[0], v[1], 4, endpoint=False) ** 3 * np.arange(1.0, 5.0))


def determinant_squared(a):
    return np.linalg.det(a) ** 2


def eigenvalues_cubed(a):
    return np.sum(np.linalg.eigh(a + a.T)[0] ** 3)


@pytest.mark.parametrize(
    "f, x",
    [
        # mT's adjoint transposes back: (3, 2) -> (2, 3)
        (transposed_cubed, X23),
        # diag_grad's adjoint extracts the diagonal k=1 of the cotangent
        (diagonal_placed, np.array([0.6, -1.1])),
        # linspace_grad's adjoint spreads with the same endpoint=False
        (spaced_without_the_end, np.array([0.6, -1.1])),
        # det_vjp's adjoint in det reads inv(a) transposed: a is not symmetric
        (determinant_squared, np.array([[1.2, 0.7], [-0.4, 0.9]])),
        # eigh_vjp (by_source) reads the eigenvalues' cotangent through as_array, whose
        # adjoint passes its cotangent on
        (eigenvalues_cubed, np.array([[1.5, 0.3], [0.3, -0.8]])),
    ],
    ids=["matrix_transpose", "diag", "linspace", "det", "eigh"],
)
def test_grad_of_grad_through_helpers_that_rows_leave_square_or_default(f, x):
    df = srcgrad.grad(f)
    w = np.cos(np.arange(x.size)).reshape(x.shape)
    check_grad(lambda z: np.sum(df(z) * w), (x,))


# --- the helpers only third-order code calls (their rules: rules/helper_rules.py), called here
# directly: a user's function that calls one is differentiated with the helper's rule, at first
# order, far cheaper than a third derivative of np.linalg.solve or np.concatenate. Each kills
# the mutants of its rule's templates that `--record test_third_order` left surviving or
# without checks (solve_like, vec_matmul, vec_outer, join/split_cotangents, split_pieces,
# unstack_pieces, stack_cotangents, permute_like).
_H = srcgrad.runtime.higher_order
_R3 = np.random.default_rng(5)
_A3 = _R3.normal(size=(3, 3)) + 3 * np.eye(3)
_B1, _B2 = np.zeros(3), np.zeros((3, 2))  # read for their number of axes alone
_W3, _W32, _W33 = _R3.normal(size=3), _R3.normal(size=(3, 2)), _R3.normal(size=(3, 3))
_PIECES = [np.zeros((2, 3)), np.zeros((1, 3))]
_PIECES_T = [np.zeros((3, 2)), np.zeros((3, 1))]  # (along axis 1)
_S = np.array([0.3, -1.2, 0.8, 0.1])
_W34 = np.outer(_W3, _S)


def solve_vector(a, w):
    return np.sum(_H.solve_like(a, w, _B1) * _W3)


def solve_matrix(a, w):
    return np.sum(_H.solve_like(a, w, _B2) * _W32)


def solve_stacked(a, w):
    # two matrices, one right-hand side for both: w's gradient sums the two
    return np.sum(_H.solve_like(a, w, _B1) * _W32.T)


def times_vector(m, v):
    return np.sum(_H.vec_matmul(m, v, _B1) * _W3[::-1])


def times_matrix(m, v):
    return np.sum(_H.vec_matmul(m, v, _B2) * _W32[::-1])


def times_stacked(m, v):
    # two matrices times one vector: v's gradient sums the two
    return np.sum(_H.vec_matmul(m, v, _B1) * _W32.T)


def outer_of_vectors(w, v):
    return np.sum(_H.vec_outer(w, v, _B1) * _W34)


def outer_of_matrices(w, v):
    return np.sum(_H.vec_outer(w, v, _B2) * _W34)


def outer_of_a_stack(w, v):
    # two vectors w times one v: v's gradient sums the two outer products' parts
    return np.sum(_H.vec_outer(w, v, _B1) * np.stack([_W34, -_W34**2]))


def joined(p0, p1):
    return np.sum(_H.join_cotangents([p0, p1], _PIECES_T, "concatenate", 1) * _W33)


def split_back(g):
    parts = _H.split_cotangents(g, _PIECES_T, "concatenate", 1)
    return np.sum(parts[0] * _W33[:, :2]) + np.sum(parts[1] * _W33[:, 2:])


def cut(w):
    parts = _H.split_pieces(w, 2, 1)
    return np.sum(parts[0] * _W33[:, :2]) + np.sum(parts[1] * _W33[:, 2:])


def unstacked(w):
    parts = _H.unstack_pieces(w, 1)  # w (2, 3): three pieces (2,), the middle one unread
    return np.sum(parts[0] * _W3[:2]) - np.sum(parts[2] * _W3[1:] ** 2)


def stacked(p0, p1):
    return np.sum(srcgrad.runtime.stack_cotangents([p0, p1], _W32, 1) * _W32)


def permuted(t):
    a = np.stack([_S, _S[::-1] * 2.0])
    return np.sum(srcgrad.runtime.permute_like(t, a, np.sort(a, axis=0), axis=0) * _S)


@pytest.mark.parametrize(
    "f, args",
    [
        (solve_vector, (_A3, _W3)),
        (solve_matrix, (_A3, _W32)),
        (solve_stacked, (np.stack([_A3, _A3.T + np.eye(3)]), _W3)),
        (times_vector, (_W33, _W3)),
        (times_matrix, (_W33, _W32)),
        (times_stacked, (np.stack([_W33, _A3]), _W3)),
        (outer_of_vectors, (_W3, _S)),
        (outer_of_matrices, (_W32, np.stack([_S, _S**2], axis=1))),
        (outer_of_a_stack, (_W32.T, _S)),
        (joined, (_W32, _W3[:, None])),
        (split_back, (_A3,)),  # (inputs other than the weights: y is not dy)
        (cut, (_A3,)),
        (unstacked, (_W32.T,)),
        (stacked, (_W3, _W3 + 1.0)),
        (permuted, (np.stack([_W3 + 1.0, _W3[::-1] ** 2])[:, [0, 1, 2, 0]],)),
    ],
)
def test_third_order_helpers_called_directly(f, args):
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt=wrt)
    tangents = tuple(np.cos(np.arange(np.size(a)) + 1.0).reshape(np.shape(a)) for a in args)
    _, t = srcgrad.jvp(f, wrt=wrt)(*args, tangents)
    want = sum(np.sum(numeric_grad(f, args, i) * tangents[i]) for i in wrt)
    assert t == pytest.approx(want, rel=1e-6)


# --- the reductions' helpers (chooser_grad, ptp_grad, var_grad, prod_grad, cumprod_jvp,
# reduce_jvp, trace_grad, quantile_grad, diff_part_grad) with an axis and keepdims,
# differentiated twice: reverse over reverse reads their vjp, forward over reverse (a
# hessian-vector product) their jvp, reverse over forward in the tangent the adjoints of the
# tangents' helpers
_X34 = np.array([[0.3, -1.2, 0.8, 0.5], [1.1, 0.2, -0.4, 0.9], [-0.7, 0.6, 0.1, 1.4]])


def max_kept(x):
    return np.sum(np.sin(np.max(x, axis=1, keepdims=True)) * x)


def min_along(x):
    return np.sum(np.min(x, axis=1) ** 2 * np.arange(1.0, 4.0))


def spread_along(x):
    return np.sum(np.ptp(x, axis=-1) ** 2 * np.arange(1.0, 4.0))


def var_kept(x):
    return np.sum(np.var(x, axis=1, ddof=1, keepdims=True) * x)


def product_kept(x):
    return np.sum(np.prod(x, axis=1, keepdims=True) * np.cos(x))


def running_products(x):
    return np.sum(np.cumprod(x, axis=1) * np.cos(x))


def traced(x):
    return np.sum(np.trace(x[:, :, None] * x[:, None, :], offset=1, axis1=1, axis2=2) ** 2)


def quantiles_kept(x):
    return np.sum(np.quantile(x**2, 0.3, axis=1, keepdims=True, method="weibull") * x)


def norms_kept(x):
    return np.sum(np.linalg.norm(x, axis=1, keepdims=True) * x)


def matrix_norms_kept(x):
    # the smallest singular value (ord -2) of two matrices, axes (1, 2) kept
    stack = np.stack([x, np.cos(x)])
    return np.sum(np.linalg.norm(stack, ord=-2, axis=(1, 2), keepdims=True) * stack)


def differences_after_a_start(x):
    return np.sum(np.diff(x, prepend=x[:, :1] ** 2, axis=1) ** 3)


@pytest.mark.parametrize(
    "f",
    [max_kept, min_along, spread_along, var_kept, product_kept, running_products, traced,
     quantiles_kept, differences_after_a_start, norms_kept, matrix_norms_kept],
)
def test_second_derivatives_of_reductions_with_an_axis_and_keepdims(f):
    w = np.cos(np.arange(12.0)).reshape(3, 4)
    df = srcgrad.grad(f)

    def along(z):
        return np.sum(df(z) * w)

    g = srcgrad.grad(along)(_X34)  # reverse over reverse: the hessian times w
    u = np.sin(np.arange(12.0) + 1.0).reshape(3, 4)
    assert np.sum(g * u) == pytest.approx(_along(along, _X34, u), rel=1e-6)
    _, hw = srcgrad.jvp(df)(_X34, w)  # forward over reverse: the same (the hessian is symmetric)
    np.testing.assert_allclose(hw, g, rtol=1e-9, atol=1e-12)

    def tangent(z, t):
        return srcgrad.jvp(f)(z, t)[1]

    # reverse over forward, in the tangent: the tangent is linear in it, its gradient f's
    np.testing.assert_allclose(srcgrad.grad(tangent, wrt=1)(_X34, w), df(_X34), rtol=1e-12)


def test_forward_over_forward_of_running_products():
    # the tangent's own tangent reads cumprod_jvp's jvp: along z * w, then along u, against a
    # central difference of the first tangent along u
    w = np.cos(np.arange(12.0)).reshape(3, 4)
    u = np.sin(np.arange(12.0) + 1.0).reshape(3, 4)

    def tangent(z):  # along a direction that moves with z: the inner tangent is active too
        return srcgrad.jvp(running_products)(z, z * w)[1]

    _, second = srcgrad.jvp(tangent)(_X34, u)
    assert second == pytest.approx(_along(tangent, _X34, u), rel=1e-6)


def vector_norm_minus_2(x):
    return np.linalg.vector_norm(x, ord=-2)


def test_forward_over_the_gradient_of_a_vector_norm_of_order_minus_2():
    # ord -2 of a vector is a power norm (no singular values): the tangent of its gradient in x
    # reads |x| ** (p - 2) of x itself. Kills helper_rules vector_norm_grad jvp[x] (name
    # replaced: `norm_grad_x_jvp(dx, g, y, nrm, ...)`, the gradient for x: errors of 1e6).
    g = srcgrad.grad(vector_norm_minus_2)
    want = _along(g, X, T, h=1e-5)
    np.testing.assert_allclose(srcgrad.jvp(g)(X, T)[1], want, rtol=1e-6)


CONVOLVE_W = np.array([0.3, -1.2, 0.8, 0.5, -0.4])


def convolved(a, v, mode):
    return np.sum(CONVOLVE_W[: len(np.convolve(a, v, mode=mode))] * np.convolve(a, v, mode=mode))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_forward_in_one_operand_over_the_gradient_of_convolve_in_the_other(mode):
    # the gradient in v, differentiated in a: convolve_vjp's tangent in a reads v (its length
    # sets the shape of the gradient). Kills helper_rules convolve_vjp jvp[a] (name replaced:
    # `convolve_vjp_tangent(g, a, g, da, ...)`).
    a, v = np.array([0.5, -1.0, 2.0, 0.7]), np.array([0.3, 0.9])
    gv = srcgrad.grad(convolved, wrt=1)
    want = _along(lambda s: gv(s, v, mode), a, np.array([1.0, -0.5, 0.25, 2.0]))
    got = srcgrad.jvp(gv, wrt=0)(a, v, mode, np.array([1.0, -0.5, 0.25, 2.0]))[1]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _einsum_square(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


def test_mixed_second_derivative_of_an_einsum_along_its_other_operand():
    # the gradient in a, differentiated along b alone (a carries no tangent): einsum_vjp's
    # tangent in operand 1 with operand 0 given, its tangent None. Kills the helper_rules
    # survivor einsum_vjp jvp[x1] (name replaced: x1=dx0), under which operand 1 counted as
    # not given and the tangent was that of operand 0 alone ([[0.526, ...]] for [[0.956, ...]])
    a = np.array([[0.3, -0.2], [0.5, 1.1]])
    b, db = np.array([[0.7, 0.1], [-0.4, 0.9]]), np.array([[1.0, 0.5], [-0.3, 0.2]])
    ga = srcgrad.grad(_einsum_square, wrt=0)
    h = 1e-6
    want = (ga(a, b + h * db) - ga(a, b - h * db)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(ga, wrt=1)(a, b, db)[1], want, rtol=1e-6)


def _einsum_of_five(a, b, c, d, e):
    return np.sum(np.einsum("i,i,i,i,i->i", a, b, c, d, e) ** 2)


def test_mixed_second_derivative_of_an_einsum_along_its_fifth_operand():
    # as above with five operands, along the last (x5 not given): kills the helper_rules
    # survivors einsum_vjp jvp[x4] (name replaced: x4=x5, x4=dx5), under which operand 4
    # counted as not given (zeros)
    ops = [np.array([0.3, -0.2, 0.5]) + k * 0.1 for k in range(5)]
    de = np.array([1.0, 0.5, -0.3])
    ga = srcgrad.grad(_einsum_of_five, wrt=0)
    h = 1e-6
    want = (ga(*ops[:4], ops[4] + h * de) - ga(*ops[:4], ops[4] - h * de)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(ga, wrt=4)(*ops, de)[1], want, rtol=1e-6)


def _einsum_of_four(a, b, c, d):
    return np.sum(np.einsum("i,i,i,i->i", a, b, c, d) ** 2)


def test_forward_over_forward_of_an_einsum_along_its_last_operand():
    # the tangent of einsum_jvp in operand 3 of four (x4 not given): kills the helper_rules
    # survivor einsum_jvp jvp[x3] (name replaced: x3=x4), under which operand 3 counted as not
    # given (a ValueError from generated code)
    ops = [np.array([0.3, -0.2, 0.5]) + k * 0.1 for k in range(4)]
    da, dd = np.array([1.0, 0.5, -0.3]), np.array([0.2, -0.4, 0.6])

    def along_a(a, b, c, d):
        return srcgrad.jvp(_einsum_of_four, wrt=0)(a, b, c, d, da)[1]

    h = 1e-6
    want = (along_a(*ops[:3], ops[3] + h * dd) - along_a(*ops[:3], ops[3] - h * dd)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(along_a, wrt=3)(*ops, dd)[1], want, rtol=1e-6)
