"""Rules for the ``math`` module and numeric builtins, on Python scalars."""

import builtins
import math

from .. import runtime
from .registry import defrule, elementwise, linear, nondiff

elementwise(math.sin, "x", vjp="dy * math.cos(x)")
elementwise(math.cos, "x", vjp="-dy * math.sin(x)")
elementwise(math.tan, "x", vjp="dy * (1.0 + y * y)")
# (along a zero tangent, an int's held in a container with values that carry tangents, the
# derivative is 0: not a ZeroDivisionError where it is infinite; numpy_rules' np.sqrt)
elementwise(math.asin, "x", vjp="dy / math.sqrt(1.0 - x * x)",
            jvp="dx / math.sqrt(1.0 - x * x if dx != 0 else 1.0)")
elementwise(math.acos, "x", vjp="-dy / math.sqrt(1.0 - x * x)",
            jvp="-dx / math.sqrt(1.0 - x * x if dx != 0 else 1.0)")
elementwise(math.atan, "x", vjp="dy / (1.0 + x * x)")
elementwise(math.sinh, "x", vjp="dy * math.cosh(x)")
elementwise(math.cosh, "x", vjp="dy * math.sinh(x)")
elementwise(math.tanh, "x", vjp="dy * (1.0 - y * y)")
elementwise(math.exp, "x", vjp="dy * y")
elementwise(math.expm1, "x", vjp="dy * (y + 1.0)")
# math.log(x, base) is log(x) / log(base)
defrule(
    math.log,
    "x, base=None",
    vjp={"x": "dy / x if base is None else dy / (x * math.log(base))",
         "base": "-dy * y / (base * math.log(base))"},
    jvp={"x": "dx / x if base is None else dx / (x * math.log(base))",
         "base": "-dbase * y / (base * math.log(base))"},
    kind="elementwise",
)
elementwise(math.log2, "x", vjp="dy / (x * math.log(2.0))")
elementwise(math.log10, "x", vjp="dy / (x * math.log(10.0))")
elementwise(math.log1p, "x", vjp="dy / (1.0 + x)")
elementwise(math.sqrt, "x", vjp="dy * 0.5 / y", jvp="dx * 0.5 / (y if dx != 0 else 1.0)")
elementwise(math.fabs, "x", vjp="dy * math.copysign(1.0, x)")
# |x1| with the sign of x2: piecewise constant in x2, so only x1 has a gradient.
elementwise(
    math.copysign, "x1, x2", vjp={"x1": "dy * math.copysign(1.0, x1) * math.copysign(1.0, y)"}
)
# (an int exponent held with values that carry gradients, `t = (a, 2)`: its cotangent and tangent
# are zero, no log of a negative base, a ValueError for math: numpy_rules' POWER_EXPONENT_GRAD)
elementwise(math.pow, "x1, x2", vjp=(
    "dy * x2 * math.pow(x1, x2 - (x2 != 0))",
    "dy * y * math.log(1.0 if np.result_type(x2).kind in 'biu' else x1)"),
            jvp=("dx1 * x2 * math.pow(x1, x2 - (x2 != 0))",
                 "dx2 * y * math.log(x1 if dx2 != 0 else 1.0)"))
elementwise(math.hypot, "x1, x2", vjp=("dy * x1 / y", "dy * x2 / y"))
elementwise(
    math.atan2,
    "x1, x2",
    vjp=("dy * x2 / (x1 * x1 + x2 * x2)", "-dy * x1 / (x1 * x1 + x2 * x2)"),
)
elementwise(math.lgamma, "x", vjp="dy * digamma(x)")
elementwise(math.gamma, "x", vjp="dy * y * digamma(x)")
elementwise(runtime.digamma, "x", vjp="dy * trigamma(x)")
# the third derivative of lgamma (tetragamma) is not implemented: refused, never a wrong number
defrule(runtime.trigamma, "x", vjp={"x": None}, unsupported={"x": "the third derivative of "
        "math.lgamma (srcgrad differentiates it twice)"})
elementwise(builtins.pow, "base, exp", vjp=("dy * exp * base ** (exp - 1)",
                                             "dy * y * np.log(base)"))
elementwise(math.erf, "x", vjp="dy * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)")
elementwise(math.erfc, "x", vjp="-dy * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)")
elementwise(math.asinh, "x", vjp="dy / math.sqrt(x * x + 1.0)")
elementwise(math.acosh, "x", vjp="dy / (math.sqrt(x - 1.0) * math.sqrt(x + 1.0))")
elementwise(math.atanh, "x", vjp="dy / (1.0 - x * x)")
elementwise(math.exp2, "x", vjp="dy * y * math.log(2.0)")
elementwise(math.cbrt, "x", vjp="dy / (3.0 * y * y)")
elementwise(math.radians, "x", vjp="dy * (math.pi / 180.0)")
elementwise(math.degrees, "x", vjp="dy * (180.0 / math.pi)")
# x1 - n * x2 with n piecewise constant: truncated for fmod, rounded to even for remainder (read
# off the result, so that n is the one the function took)
elementwise(math.fmod, "x1, x2", vjp=("dy", "-dy * math.floor((x1 - y) / x2 + 0.5)"))
elementwise(math.remainder, "x1, x2", vjp=("dy", "-dy * math.floor((x1 - y) / x2 + 0.5)"))
elementwise(math.ldexp, "x, i", vjp={"x": "dy * math.ldexp(1.0, i)"})

# float(x) of a number is x: its tangent is dx, not float(dx) (dx may be a 0-d array).
linear(builtins.float, "x", vjp="dy", jvp="dx")
# max(a, b) and min(a, b) of two numbers; ties go to the first argument, as Python returns it.
elementwise(builtins.max, "x1, x2", vjp=("dy * (x1 >= x2)", "dy * (x1 < x2)"))
elementwise(builtins.min, "x1, x2", vjp=("dy * (x1 <= x2)", "dy * (x1 > x2)"))
# abs(z) of a complex number: as np.abs (numpy_rules.py)
defrule(
    builtins.abs,
    "x",
    vjp="dy * real_sign(x) if not np.iscomplexobj(x) else "
    "np.real(dy) * np.conj(x) / np.where(x == 0, 1.0, np.abs(x))",
    jvp="dx * real_sign(x) if not np.iscomplexobj(x) else "
    "np.real(np.conj(x) * dx) / np.where(x == 0, 1.0, np.abs(x))",
)

# math.fsum(iterable) is sum(iterable), rounded once
defrule(
    math.fsum,
    "iterable",
    vjp={"iterable": "sum_grad(dy, iterable)"},
    jvp={"iterable": "sum_tangent(diterable)"},
    kind="linear",
)

# sum(iterable, start) is linear in both jointly: its tangent is the sum of both tangents.
defrule(
    builtins.sum,
    "iterable, start=0",
    vjp={"iterable": "sum_grad(dy, iterable)", "start": "dy"},
    jvp={"iterable": "sum_tangent(diterable)", "start": "dstart"},
    kind="linear",
)

nondiff(
    math.floor,
    math.ceil,
    math.trunc,
    math.isnan,
    math.isinf,
    math.isfinite,
    math.isclose,
    math.factorial,
    math.comb,
    math.perm,
    math.gcd,
    math.lcm,
    math.isqrt,
    math.nextafter,
    math.ulp,
    builtins.int,
    builtins.bool,
    builtins.len,
    builtins.round,
    builtins.isinstance,
    builtins.print,
    builtins.range,
    builtins.slice,  # an index (generated code spells `x[a:b]` as `slice(a, b, None)`)
    builtins.str,
    builtins.repr,
    builtins.format,
)
