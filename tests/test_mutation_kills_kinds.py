"""Tests that kill surviving mutants of srcgrad/rules/kinds.py (tangents derived from a rule's
kind): the derived tangent of a product, a matrix product and a negation reads as the operator
(``dx * y + x * dy``, ``dx @ y + x @ dy``, ``-dx``), not as a call of the function, in the
generated code a user reads (DESIGN.md).

Each test fails under the mutants it names (re-planted with ``tests/mutate_code.py --code
srcgrad.rules.kinds --rerun``) and passes on main."""

import operator

import numpy as np

import srcgrad


def products(x, y):
    return np.sum(np.multiply(x, y)) + np.sum(np.matmul(x, y)) + np.sum(np.negative(x))


def test_derived_tangents_read_as_operators():
    # kinds:127 (`if keywords` negated), 129 and 131 (the argument counts of the binary and
    # unary operator forms): the tangents became np.multiply(dx, y) + ..., np.negative(dx)
    text = srcgrad.source(srcgrad.jvp(products, wrt=(0, 1)))
    assert "    dmultiply_x_y = dx * y + x * dy\n" in text
    assert "    dmatmul_x_y = dx @ y + x @ dy\n" in text
    assert "    dnegative_x = -dx\n" in text
    x, y = np.array([0.5, -1.0]), np.array([2.0, 0.25])
    dx, dy = np.array([1.0, 0.5]), np.array([-0.5, 2.0])
    want = np.sum(dx * y + x * dy) + (dx @ y + x @ dy) - np.sum(dx)
    assert srcgrad.jvp(products, wrt=(0, 1))(x, y, (dx, dy))[1] == want


def negations(x):
    return np.sum(operator.neg(x)) + np.sum(operator.pos(x) * x)


def test_derived_tangent_of_a_negation_reads_as_the_operator():
    # kinds:131 (the unary operator form's argument count): operator.neg(dx)
    text = srcgrad.source(srcgrad.jvp(negations))
    assert "    dneg_x = -dx\n" in text
    x, dx = np.array([0.5, -1.0]), np.array([1.0, 0.5])
    assert srcgrad.jvp(negations)(x, dx)[1] == -np.sum(dx) + np.sum(2 * x * dx)
