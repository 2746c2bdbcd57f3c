"""Rules for NumPy, one entry per function, grouped by family.

Elementwise rules reuse the primal result ``y`` wherever the derivative is expressed through it
(exp, tanh, sqrt, ...), so generated code never recomputes the primal.
"""

import numpy as np

from .registry import defrule, elementwise, linear, nondiff

# --- elementwise, one operand ---------------------------------------------------------------
elementwise(np.negative, "x", vjp="-dy", jvp="-dx")
elementwise(np.positive, "x", vjp="dy", jvp="dx")
elementwise(np.exp, "x", vjp="dy * y", jvp="dx * y")
elementwise(np.log, "x", vjp="dy / x", jvp="dx / x")
elementwise(np.sqrt, "x", vjp="dy * 0.5 / y", jvp="dx * 0.5 / y")
elementwise(np.square, "x", vjp="dy * 2 * x", jvp="dx * 2 * x")
elementwise(np.sin, "x", vjp="dy * np.cos(x)", jvp="dx * np.cos(x)")
elementwise(np.cos, "x", vjp="-dy * np.sin(x)", jvp="-dx * np.sin(x)")
elementwise(np.tan, "x", vjp="dy * (1 + y * y)", jvp="dx * (1 + y * y)")
elementwise(np.tanh, "x", vjp="dy * (1 - y * y)", jvp="dx * (1 - y * y)")
elementwise(np.abs, "x", vjp="dy * np.sign(x)", jvp="dx * np.sign(x)")

# --- elementwise, two operands (broadcasting) ---------------------------------------------
elementwise(np.add, "x1, x2", vjp=("dy", "dy"), jvp=("dx1", "dx2"))
elementwise(np.subtract, "x1, x2", vjp=("dy", "-dy"), jvp=("dx1", "-dx2"))
elementwise(np.multiply, "x1, x2", vjp=("dy * x2", "dy * x1"), jvp=("dx1 * x2", "x1 * dx2"))
elementwise(
    np.divide, "x1, x2", vjp=("dy / x2", "-dy * y / x2"), jvp=("dx1 / x2", "-dx2 * y / x2")
)
elementwise(
    np.power,
    "x1, x2",
    vjp=("dy * x2 * x1 ** (x2 - 1)", "dy * y * np.log(x1)"),
    jvp=("dx1 * x2 * x1 ** (x2 - 1)", "dx2 * y * np.log(x1)"),
)
# Ties go to the first operand, as in np.maximum's choice of which value to return.
elementwise(
    np.maximum,
    "x1, x2",
    vjp=("dy * (x1 >= x2)", "dy * (x1 < x2)"),
    jvp=("dx1 * (x1 >= x2)", "dx2 * (x1 < x2)"),
)
elementwise(
    np.minimum,
    "x1, x2",
    vjp=("dy * (x1 <= x2)", "dy * (x1 > x2)"),
    jvp=("dx1 * (x1 <= x2)", "dx2 * (x1 > x2)"),
)
elementwise(
    np.where,
    "condition, x1, x2",
    vjp={"x1": "np.where(condition, dy, 0.0)", "x2": "np.where(condition, 0.0, dy)"},
    jvp={"x1": "np.where(condition, dx1, 0.0)", "x2": "np.where(condition, 0.0, dx2)"},
)

# --- reductions -------------------------------------------------------------------------------
linear(
    np.sum,
    "a, axis=None, dtype=None, out=None, keepdims=False",
    vjp="unreduce(dy, a, axis=axis, keepdims=keepdims)",
    jvp="np.sum(da, axis=axis, keepdims=keepdims)",
)
linear(
    np.mean,
    "a, axis=None, dtype=None, out=None, keepdims=False",
    vjp="mean_grad(dy, a, axis=axis, keepdims=keepdims)",
    jvp="np.mean(da, axis=axis, keepdims=keepdims)",
)

# --- products ---------------------------------------------------------------------------------
defrule(
    np.matmul,
    "x1, x2",
    vjp=("matmul_vjp_left(dy, x1, x2)", "matmul_vjp_right(dy, x1, x2)"),
    jvp=("dx1 @ x2", "x1 @ dx2"),
    kind="bilinear",
)
defrule(
    np.dot,
    "a, b",
    vjp=("dot_vjp_left(dy, a, b)", "dot_vjp_right(dy, a, b)"),
    jvp=("np.dot(da, b)", "np.dot(a, db)"),
    kind="bilinear",
)
defrule(
    np.outer,
    "a, b",
    vjp=(
        "np.reshape(dy @ np.ravel(b), np.shape(a))",
        "np.reshape(np.ravel(a) @ dy, np.shape(b))",
    ),
    jvp=("np.outer(da, b)", "np.outer(a, db)"),
    kind="bilinear",
)

# --- shape ------------------------------------------------------------------------------------
linear(
    np.transpose,
    "a, axes=None",
    vjp="np.transpose(dy, None if axes is None else np.argsort(axes))",
    jvp="np.transpose(da, axes)",
)

# --- no gradient ------------------------------------------------------------------------------
nondiff(
    np.shape,
    np.size,
    np.ndim,
    np.sign,
    np.floor,
    np.ceil,
    np.round,
    np.rint,
    np.trunc,
    np.argmax,
    np.argmin,
    np.argsort,
    np.isnan,
    np.isfinite,
    np.isinf,
    np.zeros,
    np.ones,
    np.empty,
    np.zeros_like,
    np.ones_like,
    np.empty_like,
    np.full,
    np.arange,
    np.linspace,
    np.eye,
    np.identity,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
    np.logical_and,
    np.logical_or,
    np.logical_not,
)
