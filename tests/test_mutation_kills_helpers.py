"""Second derivatives that only a surviving mutant of a rule of the rule library's own helpers
(``rules/helper_rules.py``) showed untested (docs/development.md, mutation testing).

Those rules are read only when a transform differentiates generated code that calls the helper:
forward over forward (``jvp`` of a ``jvp``), forward over reverse (``jvp`` of a ``grad``) and
reverse over reverse. Each case is a program a user can write; its derivative is checked against
central differences of srcgrad's own first derivative (float64), which the first-order tests
check against central differences of the function. ``tests/mutate_rules.py`` records which of
these tests read which rules and runs them against that rule's mutants; the comment of each
names the mutants it kills.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad

import srcgrad

W2 = np.array([0.7, -1.3])
X23 = np.array([[0.3, -0.7, 1.1], [0.5, 0.9, -0.4]])
T23 = np.array([[0.4, 0.25, -0.6], [-0.3, 0.8, 0.1]])
V4 = np.array([0.6, -0.2, 1.3, 0.45])


def _along(f, x, t, h=1e-6):
    """The central difference of f at x along t."""
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


def einsum_operands_1_and_4_constant(v):
    return np.einsum("i,i,i,i,i,i->", v, W2, np.sin(v), np.cos(v), W2**2, np.tanh(v)) ** 2


def einsum_first_of_six_constant(v):
    return np.einsum("i,i,i,i,i,i->", W2, v, np.sin(v), np.cos(v), v**2, np.tanh(v)) ** 2


def einsum_second_of_six_constant(v):
    return np.einsum("i,i,i,i,i,i->", v, W2, np.sin(v), np.cos(v), v**2, np.tanh(v)) ** 2


def einsum_third_of_six_constant(v):
    return np.einsum("i,i,i,i,i,i->", v, np.sin(v), W2, np.cos(v), v**2, np.tanh(v)) ** 2


def einsum_fourth_of_six_constant(v):
    return np.einsum("i,i,i,i,i,i->", v, np.sin(v), np.cos(v), W2, v**2, np.tanh(v)) ** 2


def einsum_last_of_six_constant(v):
    return np.einsum("i,i,i,i,i,i->", v, np.sin(v), np.cos(v), v**2, np.tanh(v), W2) ** 2


def einsum_operand_0_constant(v):
    return np.einsum("i,i,i->", W2, np.sin(v), v) ** 2


def einsum_of_one_operand(v):
    return np.einsum("i->", np.sin(v) * v) ** 3


@pytest.mark.parametrize("f", [einsum_operands_1_and_4_constant, einsum_first_of_six_constant,
                               einsum_second_of_six_constant, einsum_third_of_six_constant,
                               einsum_fourth_of_six_constant, einsum_last_of_six_constant,
                               einsum_operand_0_constant, einsum_of_one_operand],
                         ids=["six_operands", "first_of_six_constant", "second_of_six_constant",
                              "third_of_six_constant", "fourth_of_six_constant",
                              "last_of_six_constant", "first_constant", "one_operand"])
def test_forward_over_forward_of_einsum_with_constant_operands(f):
    # einsum_jvp's tangent in operand j (active) with another operand constant, its tangent
    # None: `einsum_given(j, ...)` must read operand j, not that tangent. Kills helper_rules
    # einsum_jvp jvp[x5] (x5=dx1), jvp[x3] (x3=dx4) and jvp[x0] (x0=dx1, which the einsum of
    # one operand, x1 not given, kills too), and jvp[x1] (x1=dx0, the first operand constant):
    # each gave a zero second derivative for operand j; and jvp[x5] (x5=dx0, the first of six
    # constant: a ValueError from generated code under it), jvp[x4] (x4=dx0, x4=dx1, x4=dx3):
    # each operand of six constant in turn, for every operand j given the tangent of another.
    v, u, u2 = np.array([0.6, -0.2]), np.array([0.3, -0.8]), np.array([1.1, 0.4])
    tangent = srcgrad.jvp(f)

    def h(z):
        return tangent(z, u)[1]

    np.testing.assert_allclose(srcgrad.jvp(h)(v, u2)[1], _along(h, v, u2), rtol=1e-6)


W6 = np.cos(np.arange(6.0))


def kron_weighted(a, b):
    return np.sum(np.kron(a, b) ** 2 * W6)


def convolved_weighted(a, b):
    out = np.convolve(a, b)
    return np.sum(np.sin(out) * out * np.arange(1.0, len(out) + 1.0))


def correlated_weighted(a, b):
    out = np.correlate(a, b, mode="full")
    return np.sum(np.sin(out) * out * np.arange(1.0, len(out) + 1.0))


def crossed_weighted(a, b):
    out = np.cross(a, b)
    return np.sum(np.sin(out) * out * W6.reshape(out.shape))


def crossed_along_axis_0(a, b):
    out = np.cross(a, b, axis=0)
    return np.sum(np.sin(out) * out * W6.reshape(out.shape))


A2, B3 = np.array([0.5, -1.2]), np.array([0.3, 0.8, -0.6])
A3, B23 = np.array([0.5, -1.2, 0.9]), np.array([[0.3, 0.8, -0.6], [1.1, -0.2, 0.4]])
A31, B32 = A3.reshape(3, 1), B23.T.copy()
OPERANDS = {"two": (A2, B3), "cross": (A3, B23), "axis0": (A31, B32)}


@pytest.mark.parametrize("wrt", [0, 1])
@pytest.mark.parametrize("f, shapes", [(kron_weighted, "two"), (convolved_weighted, "two"),
                                       (correlated_weighted, "two"), (crossed_weighted, "cross"),
                                       (crossed_along_axis_0, "axis0")],
                         ids=["kron", "convolve", "correlate", "cross", "cross_axis"])
def test_second_derivatives_of_products_of_two_operands_of_two_shapes(f, shapes, wrt):
    # the gradient in operand wrt of np.kron, np.convolve or np.correlate (full) of a
    # (2,) and b (3,), or np.cross of a (3,) and b (2, 3) (along axis 0 of a (3, 1) and b (3, 2)),
    # both active: reverse over reverse reads the helper's partner adjoints,
    # forward over reverse its tangents, in both operands (the rows of tests/test_helper_rules.py
    # use one variable for both operands, or operands of one shape), along each operand alone
    # (the other's tangent None). Kills helper_rules kron_vjp, convolve_vjp
    # correlate_vjp and cross_vjp vjp[a], vjp[b] (vjp[v]) with an operand replaced by the other,
    # by g, dy or y (the shape or the length of another), jvp[a] and jvp[b] (jvp[v]) with an
    # operand replaced by a tangent (None, or of another shape), and cross_vjp's with the
    # caller's `axis` dropped.
    a, b = OPERANDS[shapes]
    da, db = np.cos(a + 0.3), np.sin(b - 0.2)
    g = srcgrad.grad(f, wrt=wrt)
    w = np.sin(np.arange(1.0, 1.0 + (a, b)[wrt].size)).reshape((a, b)[wrt].shape)

    def h(a, b):
        return np.sum(g(a, b) * w)

    check_grad(h, (a, b), wrt=(0, 1))
    got = srcgrad.jvp(g, wrt=1)(a, b, db)[1]
    np.testing.assert_allclose(got, _along(lambda z: g(a, z), b, db), rtol=1e-6, atol=1e-9)
    got = srcgrad.jvp(g, wrt=0)(a, b, da)[1]
    np.testing.assert_allclose(got, _along(lambda z: g(z, b), a, da), rtol=1e-6, atol=1e-9)


def einsum_product_squared(a, b):
    return np.sum(np.einsum("ij,jk->ik", a, b) ** 2)


@pytest.mark.parametrize("ashape, bshape", [((2, 3), (3, 4)), ((3, 3), (3, 1))],
                         ids=["error", "silent"])
def test_forward_in_the_second_operand_over_its_own_gradient_of_an_einsum(ashape, bshape):
    # the gradient in b (operand k = 1), differentiated in b: einsum_vjp's tangent in its own
    # operand is zero shaped like b. Kills helper_rules einsum_vjp jvp[x1] (name replaced:
    # x1=x0), whose zeros took a's shape: a ValueError for (2, 3) and (3, 4), and for (3, 3)
    # and (3, 1) a tangent of shape (3, 3), broadcast silently, for b's (3, 1).
    a = np.cos(np.arange(np.prod(ashape))).reshape(ashape)
    b = np.sin(np.arange(np.prod(bshape)) + 0.5).reshape(bshape)
    db = np.linspace(-1.0, 1.0, b.size).reshape(bshape)
    gb = srcgrad.grad(einsum_product_squared, wrt=1)
    got = srcgrad.jvp(gb, wrt=1)(a, b, db)[1]
    assert got.shape == bshape
    np.testing.assert_allclose(got, _along(lambda z: gb(a, z), b, db), rtol=1e-6, atol=1e-9)


def sine_of_matrix_vector_norm(x):
    # the 2-norm of all of x's elements (vector_norm of a matrix, axis None): not the spectral
    # norm np.linalg.norm(x, 2) gives
    return np.sin(np.linalg.vector_norm(x)) + np.sum(np.linalg.vector_norm(x, axis=(0, 1)) * x)


def test_forward_over_reverse_of_a_vector_norm_of_a_matrix():
    # the tangent of vector_norm_grad in x for ord 2 takes norm_grad_x_jvp, which must be told
    # kind='vector': with np.linalg.norm's kind ('norm') a matrix with axis None or two axes
    # has the spectral norm's derivative. Kills helper_rules vector_norm_grad jvp[x] (keyword
    # dropped: `norm_grad_x_jvp(dx, g, x, nrm, ord=ord, axis=axis, keepdims=keepdims)`).
    df = srcgrad.grad(sine_of_matrix_vector_norm)
    got = srcgrad.jvp(df)(X23, T23)[1]
    np.testing.assert_allclose(got, _along(df, X23, T23), rtol=1e-6, atol=1e-9)


def vector_norms_of_a_matrix(x):
    # np.linalg.vector_norm of all of x's elements with ord 2 (the default) and -2, and of its
    # rows with ord 3
    return (np.sin(np.linalg.vector_norm(x)) + np.linalg.vector_norm(x, ord=-2) ** 2
            + np.sum(np.linalg.vector_norm(x, ord=3, axis=1) ** 2))


def vector_3_norm_of_a_matrix(x):
    return np.sin(np.linalg.vector_norm(x)) + np.linalg.vector_norm(x, ord=3) ** 2


@pytest.mark.parametrize("over, f", [("reverse", vector_norms_of_a_matrix),
                                     ("forward", vector_norms_of_a_matrix),
                                     ("forward", vector_3_norm_of_a_matrix)],
                         ids=["reverse", "forward", "forward-ord3"])
def test_second_derivatives_of_vector_norms_of_a_matrix(over, f):
    # reverse over reverse (and forward over reverse) of vector_norm with ord 2 and -2, the
    # ords the rule sends to norm_grad_x_vjp: kind='vector' and the caller's ord must reach it
    # (np.linalg.norm's kind takes a matrix's 2-norm for the spectral norm; ord None for -2 is
    # the 2-norm; for ord 3, np.linalg.norm's kind reads a matrix's matrix norm), and the
    # partials the caller's axis and x itself (for ord -2 they read its values). Kills
    # helper_rules vector_norm_grad vjp[x] (keyword dropped: kind, ord; axis for ord 3; x
    # replaced by y or dy) and jvp[x] (kind dropped for ord 3 over all of x).
    df = srcgrad.grad(f)
    if over == "forward":
        got = srcgrad.jvp(df)(X23, T23)[1]
        np.testing.assert_allclose(got, _along(df, X23, T23), rtol=1e-6, atol=1e-9)
        return

    def h(z):
        return np.sum(df(z) * np.cos(X23))

    check_grad(h, (X23,))


W43 = np.arange(12.0).reshape(4, 3)


def column_stacked(v):
    return np.sum(np.column_stack((v, np.sin(v), v[:, None] ** 2)) ** 3 * W43)


def hsplit_of_a_matrix(x):
    left, right = np.hsplit(np.concatenate((x, x**2), axis=1), 2)
    return np.sum(left**2 * np.sin(right))


def hsplit_of_a_vector(v):
    a, b = np.hsplit(np.concatenate((v, np.cos(v))), [3])
    return np.sum(a**3) * np.sum(b**2)


@pytest.mark.parametrize("f, x", [(column_stacked, V4), (hsplit_of_a_matrix, X23),
                                  (hsplit_of_a_vector, V4)],
                         ids=["column_stack", "hsplit_matrix", "hsplit_vector"])
def test_grad_of_grad_of_column_stack_and_hsplit(f, x):
    # reverse over reverse reads the adjoints of column_stack_grad and hsplit_grad (the
    # gradients of np.column_stack and np.hsplit), which no other test read: a 1-D operand of
    # column_stack is a column, a 2-D one is itself; hsplit splits axis 1 of a matrix and
    # axis 0 of a vector
    df = srcgrad.grad(f)
    w = np.cos(np.arange(x.size)).reshape(x.shape)

    def h(z):
        return np.sum(df(z) * w)

    check_grad(h, (x,))


def crossed(a, b):
    return np.sum(np.cross(a, b) ** 2 * X23)


def test_forward_in_one_operand_over_the_gradient_of_cross_in_the_other():
    # the gradient in a, differentiated in b alone (a has no tangent there): cross_vjp's
    # tangent in b reads a itself. Kills helper_rules cross_vjp jvp[b] (name replaced:
    # `cross_vjp_tangent(g, da, b, db, ...)`, which reads a's tangent, None here).
    a, b = np.array([0.5, -1.0, 2.0]), X23
    ga = srcgrad.grad(crossed, wrt=0)
    got = srcgrad.jvp(ga, wrt=1)(a, b, T23)[1]
    np.testing.assert_allclose(got, _along(lambda z: ga(a, z), b, T23), rtol=1e-6, atol=1e-9)


def cross_broadcast(x):
    return np.sum(np.cross(np.sin(x[0]), x) ** 2) + np.sum(np.cross(x, np.cos(x[1])) ** 2)


def test_grad_of_grad_of_cross_of_operands_of_two_shapes():
    # reverse over reverse reads cross_vjp's partner adjoints, which take the shape of the
    # operand they are the adjoint in: (3,) and (2, 3) here. Kills helper_rules cross_vjp
    # vjp[b] (name replaced: `cross_vjp_partner(g, a, a, dy, ..., param=1)`).
    df = srcgrad.grad(cross_broadcast)

    def h(z):
        return np.sum(df(z) * np.cos(X23))

    check_grad(h, (X23,))


def correlated(a, v, mode):
    out = np.correlate(a, v, mode=mode)
    return np.sum(np.arange(1.0, len(out) + 1.0) * out**2)


def convolved(a, v, mode):
    out = np.convolve(a, v, mode=mode)
    return np.sum(np.arange(1.0, len(out) + 1.0) * out**2)


@pytest.mark.parametrize("f, mode", [(correlated, "full"), (correlated, "valid"),
                                     (convolved, "full"), (convolved, "valid")],
                         ids=["correlate-full", "correlate-valid", "convolve-full",
                              "convolve-valid"])
def test_forward_in_v_over_the_gradient_of_correlate_in_a(f, mode):
    # the gradient in a, differentiated in v: correlate_vjp's (convolve_vjp's) tangent in v
    # reads a (its length sets the gradient's). Kills helper_rules correlate_vjp jvp[v] (name
    # replaced: `correlate_vjp_tangent(g, g, v, dv, ...)`: the output's length, 5 or 3, for
    # a's 4) and convolve_vjp jvp[v] (name replaced: `convolve_vjp_tangent(g, da, v, dv, ...)`,
    # a's tangent, None here); in a along v, the same with the operands' roles exchanged.
    a, v, t = np.array([0.5, -1.0, 2.0, 0.7]), np.array([0.3, 0.9]), np.array([1.0, -0.5])
    ga = srcgrad.grad(f, wrt=0)
    got = srcgrad.jvp(ga, wrt=1)(a, v, mode, t)[1]
    np.testing.assert_allclose(got, _along(lambda z: ga(a, z, mode), v, t), rtol=1e-6)
    # and the gradient in v along a alone (the tangent in a reads v's length)
    gv, s = srcgrad.grad(f, wrt=1), np.array([0.2, 0.6, -1.0, 0.4])
    got = srcgrad.jvp(gv, wrt=0)(a, v, mode, s)[1]
    np.testing.assert_allclose(got, _along(lambda z: gv(z, v, mode), a, s), rtol=1e-6)


def popped(x):
    L = [x, x**2, np.sin(x)]
    last = L.pop()
    return np.sum(sum(L) ** 2 * last) + np.sum(np.cos(L[1]))


def test_grad_of_grad_of_a_list_pop():
    # reverse over reverse reads the rule of append_none (the adjoint of L.pop(): the list's
    # cotangent with a zero last item), which no other test read: the list after the pop is
    # summed by the builtin sum, whose gradient's adjoint adds every item of its cotangent (one
    # for the popped item too, with the rule's adjoint dropped: `dy` for append_grad_items(dy))
    df = srcgrad.grad(popped)

    def h(z):
        return np.sum(df(z) * np.cos(V4))

    check_grad(h, (V4,))


def summed_items(x):
    return sum([x, x**2, np.sin(x)]) ** 2


def test_third_derivative_of_the_builtin_sum_of_a_list():
    # reverse over reverse over reverse reads the rule of sum_grad_adjoint (the adjoint of
    # sum_grad, the gradient of the builtin sum), which no other test read
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(summed_items)))
    d2 = srcgrad.grad(srcgrad.grad(summed_items))
    np.testing.assert_allclose(d3(0.7), _along(d2, 0.7, 1.0, h=1e-5), rtol=1e-6)


def solved(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(np.sin(x) * x)


A33 = np.array([[2.0, 0.7, -0.3], [-0.4, 1.5, 0.6], [0.9, -0.2, 1.8]])  # not symmetric


@pytest.mark.parametrize("b", [V4[:3], X23.T], ids=["vector", "matrix"])
def test_second_derivatives_of_solve_in_a_matrix_that_is_not_symmetric(b):
    # the gradient of np.linalg.solve in a (solve_vjp_a), differentiated in a and in b: its
    # rules solve with a^T (F = solve(a^T, g)), which a symmetric a cannot tell from a. Kills
    # helper_rules solve_vjp_a jvp[a] and vjp[x], solve_vjp_b jvp[a] (call dropped:
    # `solve_like(a, g, b)` for `solve_like(mT(a), g, b)`).
    ga = srcgrad.grad(solved, wrt=0)
    w = np.cos(np.arange(9.0)).reshape(3, 3)

    def h(a, b):
        return np.sum(ga(a, b) * w)

    check_grad(h, (A33, b), wrt=(0, 1))
    da = np.sin(np.arange(9.0)).reshape(3, 3)
    got = srcgrad.jvp(ga, wrt=0)(A33, b, da)[1]
    np.testing.assert_allclose(got, _along(lambda z: ga(z, b), A33, da), rtol=1e-6, atol=1e-9)
    gb = srcgrad.grad(solved, wrt=1)  # solve_vjp_b, differentiated in a
    got = srcgrad.jvp(gb, wrt=0)(A33, b, da)[1]
    np.testing.assert_allclose(got, _along(lambda z: gb(z, b), A33, da), rtol=1e-6, atol=1e-9)


def hstacked(x):
    return np.sum(np.hstack((x, np.sin(x))) ** 2 * np.cos(np.arange(12.0)).reshape(2, 6))


def vstacked(x):
    return np.sum(np.vstack((x, np.sin(x))) ** 2 * np.cos(np.arange(12.0)).reshape(4, 3))


def dstacked(x):
    return np.sum(np.dstack((x, np.sin(x))) ** 2 * np.cos(np.arange(12.0)).reshape(2, 3, 2))


def linspace_along_axis_1(x):
    out = np.linspace(x[0], x[1] ** 2, num=4, axis=1)
    return np.sum(np.sin(out) * np.arange(12.0).reshape(3, 4))


def split_along_columns(x):
    a, b = np.split(x, [1], axis=1)
    return np.sum(a**3) * np.sum(np.sin(b) * b)


def reshaped_in_fortran_order(x):
    return np.sum(np.sin(x.reshape((3, 2), order="F")) * np.arange(6.0).reshape(3, 2))


def slogdet_of_a_stack(x):
    m = np.stack((x[:, :2] + 2.0 * np.eye(2), x[:, 1:] * x[:, 1:] + 1.5 * np.eye(2)))
    return np.sum(np.sin(np.linalg.slogdet(m)[1]) * np.array([1.0, -0.5]))


@pytest.mark.parametrize("f", [hstacked, vstacked, dstacked, linspace_along_axis_1,
                               split_along_columns, reshaped_in_fortran_order, slogdet_of_a_stack],
                         ids=["hstack", "vstack", "dstack", "linspace_axis_1", "split_axis_1",
                              "reshape_order_F", "slogdet_stack"])
def test_grad_of_grad_of_joins_splits_reshapes_and_slogdet(f):
    # reverse over reverse reads the rules of hstack_grad, vstack_grad, dstack_grad (their
    # adjoints join the pieces' cotangents dy), linspace_grad (along the caller's axis),
    # split_grad (split along the caller's axis), reshape_like (reshaped like g, in the
    # caller's order) and slogdet_vjp (summed over each matrix of a stack). Kills helper_rules
    # hstack_grad and vstack_grad vjp[g] (name replaced: y or g for dy), linspace_grad vjp[g]
    # and split_grad vjp[g] (keyword dropped: axis), reshape_like vjp[g] (dy for g; order
    # dropped), slogdet_vjp vjp[g] (keyword dropped: axis; unary dropped: axis=(-2, 1)).
    df = srcgrad.grad(f)

    def h(z):
        return np.sum(df(z) * np.cos(X23))

    check_grad(h, (X23,))


def padded_at_its_edges(t):
    v = np.array([t, t**2, np.sin(t)])
    return np.sum(np.pad(v, (1, 2), mode="edge") ** 3 * np.arange(1.0, 7.0))


def linspace_of_two_rows(t):
    out = np.linspace(np.array([t, 2.0 * t]), np.array([t**2, np.sin(t)]), num=3,
                      endpoint=False, axis=1)
    return np.sum(np.sin(out) * np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("f", [padded_at_its_edges, linspace_of_two_rows], ids=["pad", "linspace"])
def test_third_derivatives_of_pad_and_linspace(f):
    # reverse over reverse over reverse reads the rules of pad_gather and linspace_tangent (the
    # adjoints of pad_grad and linspace_grad), which no other test read (the helper_rules run
    # printed NO CHECKS for their 11 mutants): the caller's pad_width and mode, num, endpoint,
    # axis and start must reach them
    d3, d2 = srcgrad.grad(srcgrad.grad(srcgrad.grad(f))), srcgrad.grad(srcgrad.grad(f))
    np.testing.assert_allclose(d3(0.7), _along(d2, 0.7, 1.0, h=1e-5), rtol=1e-6)
