"""Rules for Python's operators (``+ - * / ** @``, unary ``-``), by their ``operator`` function.

The transform maps each operator node to the function here (``a * b`` -> ``operator.mul``).
"""

import operator

from .registry import defrule, elementwise, nondiff

elementwise(operator.add, "x1, x2", vjp=("dy", "dy"), jvp=("dx1", "dx2"))
elementwise(operator.sub, "x1, x2", vjp=("dy", "-dy"), jvp=("dx1", "-dx2"))
elementwise(operator.mul, "x1, x2", vjp=("dy * x2", "dy * x1"), jvp=("dx1 * x2", "x1 * dx2"))
elementwise(
    operator.truediv,
    "x1, x2",
    vjp=("dy / x2", "-dy * y / x2"),
    jvp=("dx1 / x2", "-dx2 * y / x2"),
)
elementwise(
    operator.pow,
    "x1, x2",
    vjp=("dy * x2 * x1 ** (x2 - 1)", "dy * y * np.log(x1)"),
    jvp=("dx1 * x2 * x1 ** (x2 - 1)", "dx2 * y * np.log(x1)"),
)
elementwise(
    operator.mod,
    "x1, x2",
    vjp=("dy", "-dy * np.floor_divide(x1, x2)"),
    jvp=("dx1", "-dx2 * np.floor_divide(x1, x2)"),
)
defrule(
    operator.matmul,
    "x1, x2",
    vjp=("matmul_vjp_left(dy, x1, x2)", "matmul_vjp_right(dy, x1, x2)"),
    jvp=("dx1 @ x2", "x1 @ dx2"),
    kind="bilinear",
)
defrule(operator.neg, "x", vjp="-dy", jvp="-dx", kind="linear")
defrule(operator.pos, "x", vjp="dy", jvp="dx", kind="linear")

nondiff(
    operator.floordiv,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
    operator.not_,
    operator.invert,
    operator.and_,
    operator.or_,
    operator.xor,
)

# `x[index]`: the index arrives as a value (`a:b` becomes `slice(a, b, None)`).
defrule(
    operator.getitem,
    "x, index",
    vjp={"x": "getitem_grad(dy, x, index)"},
    jvp={"x": "dx[index]"},
    kind="linear",
)
