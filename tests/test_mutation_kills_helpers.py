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


def einsum_of_one_operand(v):
    return np.einsum("i->", np.sin(v) * v) ** 3


@pytest.mark.parametrize("f, v", [(einsum_operands_1_and_4_constant, np.array([0.6, -0.2])),
                                  (einsum_of_one_operand, np.array([0.6, -0.2]))],
                         ids=["six_operands", "one_operand"])
def test_forward_over_forward_of_einsum_with_constant_operands(f, v):
    # einsum_jvp's tangent in operand j (active) with another operand constant, its tangent
    # None: `einsum_given(j, ...)` must read operand j, not that tangent. Kills helper_rules
    # einsum_jvp jvp[x5] (x5=dx1), jvp[x3] (x3=dx4) and jvp[x0] (x0=dx1, which the einsum of
    # one operand, x1 not given, kills too): each gave a zero second derivative for operand j.
    u, u2 = np.array([0.3, -0.8]), np.array([1.1, 0.4])
    tangent = srcgrad.jvp(f)

    def h(z):
        return tangent(z, u)[1]

    np.testing.assert_allclose(srcgrad.jvp(h)(v, u2)[1], _along(h, v, u2), rtol=1e-6)


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
