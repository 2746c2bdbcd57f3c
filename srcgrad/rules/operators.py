"""Rules for Python's operators (``+ - * / ** @``, unary ``-``), by their ``operator`` function.

The transform maps each operator node to the function here (``a * b`` -> ``operator.mul``).
Forward templates follow from the kinds (``registry.py``): elementwise ones are the reverse
templates with ``dy`` renamed, and the tangent of a product is ``dx1 * x2 + x1 * dx2``.
"""

import operator

from .numpy_rules import POWER_EXPONENT_GRAD, POWER_EXPONENT_TANGENT
from .registry import bilinear, elementwise, linear, nondiff

elementwise(operator.add, "x1, x2", vjp=("dy", "dy"))
elementwise(operator.sub, "x1, x2", vjp=("dy", "-dy"))
bilinear(operator.mul, "x1, x2", vjp=("dy * x2", "dy * x1"), broadcast=True)
elementwise(operator.truediv, "x1, x2", vjp=("dy / x2", "-dy * y / x2"))
elementwise(operator.pow, "x1, x2", vjp=("dy * x2 * x1 ** (x2 - (x2 != 0))", POWER_EXPONENT_GRAD),
            jvp=("dx1 * x2 * x1 ** (x2 - (x2 != 0))", POWER_EXPONENT_TANGENT))
elementwise(operator.mod, "x1, x2", vjp=("dy", "-dy * np.floor_divide(x1, x2)"))
bilinear(
    operator.matmul, "x1, x2", vjp=("matmul_vjp_left(dy, x1, x2)", "matmul_vjp_right(dy, x1, x2)")
)
linear(operator.neg, "x", vjp="-dy")
# `+x` is x itself; its tangent needs no copy (tangents are never written in place).
linear(operator.pos, "x", vjp="dy", jvp="dx")

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
# Its tangent reads the element's tangent with `elem`: an element of a tuple of tangents may be
# None (zero) where its value is not (the cotangent tuples of derivative code differentiated again).
linear(
    operator.getitem, "x, index", vjp={"x": "getitem_grad(dy, x, index)"},
    jvp={"x": "elem(dx, index, y)"},
)
