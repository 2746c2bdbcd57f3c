"""The rules of ``math``, Python's numeric builtins and operators, one row per rule.

Each row is a call over named float inputs, differentiated in reverse mode (``grad``) and forward
mode (``jvp``) and twice (``hessian``), each against central differences in float64. Most of
these rules have no hand-written forward template: their tangents are derived from the kind
(``rules/kinds.py``), so these rows are what checks the derivation on scalars. The meta-test
checks that every rule of these modules has a row.
"""

import builtins
import math
import operator

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from test_rules import define

import srcgrad
from srcgrad.rules import RULES

REAL = (-2.0, 2.0)
POS = (0.5, 2.0)
UNIT = (-0.9, 0.9)

# (function, expression over x and z, domain of x, domain of z)
ROWS = [
    (math.sin, "math.sin(x)", REAL, REAL),
    (math.cos, "math.cos(x)", REAL, REAL),
    (math.tan, "math.tan(x)", UNIT, REAL),
    (math.asin, "math.asin(x)", UNIT, REAL),
    (math.acos, "math.acos(x)", UNIT, REAL),
    (math.atan, "math.atan(x)", REAL, REAL),
    (math.sinh, "math.sinh(x)", REAL, REAL),
    (math.cosh, "math.cosh(x)", REAL, REAL),
    (math.tanh, "math.tanh(x)", REAL, REAL),
    (math.exp, "math.exp(x)", REAL, REAL),
    (math.expm1, "math.expm1(x)", REAL, REAL),
    (math.log, "math.log(x)", POS, REAL),
    (math.log2, "math.log2(x)", POS, REAL),
    (math.log10, "math.log10(x)", POS, REAL),
    (math.log1p, "math.log1p(x)", POS, REAL),
    (math.sqrt, "math.sqrt(x)", POS, REAL),
    (math.fabs, "math.fabs(x * z)", POS, POS),
    (math.copysign, "math.copysign(x * z, z - 3.0)", REAL, REAL),
    (math.pow, "math.pow(x, z)", POS, REAL),
    (math.hypot, "math.hypot(x, z)", REAL, REAL),
    (math.atan2, "math.atan2(x, z)", REAL, POS),
    (math.erf, "math.erf(x)", REAL, REAL),
    (math.lgamma, "math.lgamma(x * z)", POS, POS),
    (math.gamma, "math.gamma(x + z)", POS, POS),
    (math.fsum, "math.fsum([x, z, x * z])", REAL, REAL),
    (math.log, "math.log(x, z)", POS, (1.5, 3.0)),
    (math.log, "math.log(x * z, 2.0)", POS, POS),
    (math.erfc, "math.erfc(x * z)", REAL, REAL),
    (math.asinh, "math.asinh(x * z)", REAL, REAL),
    (math.acosh, "math.acosh(x + z)", (1.2, 2.0), POS),
    (math.atanh, "math.atanh(x * z)", UNIT, UNIT),
    (math.exp2, "math.exp2(x * z)", REAL, REAL),
    (math.cbrt, "math.cbrt(x * z)", POS, POS),
    (math.cbrt, "math.cbrt(x - 3.0) * z", REAL, REAL),
    (math.radians, "math.radians(x * z)", REAL, REAL),
    (math.degrees, "math.degrees(x * z)", REAL, REAL),
    (math.fmod, "math.fmod(x, z)", POS, (0.3, 0.4)),
    (math.fmod, "math.fmod(x - 3.0, z)", REAL, (0.3, 0.4)),
    (math.remainder, "math.remainder(x, z)", POS, (0.3, 0.4)),
    (math.remainder, "math.remainder(x - 3.0, z)", REAL, (0.3, 0.4)),
    (math.ldexp, "math.ldexp(x * z, 3)", REAL, REAL),
    (builtins.pow, "pow(x, z)", POS, REAL),
    (builtins.float, "float(x * z)", REAL, REAL),
    (builtins.max, "max(x, z + 5.0)", REAL, REAL),
    (builtins.max, "max(x + 5.0, z)", REAL, REAL),
    (builtins.min, "min(x, z + 5.0)", REAL, REAL),
    (builtins.min, "min(x + 5.0, z)", REAL, REAL),
    (builtins.abs, "abs(x * z)", POS, POS),
    (builtins.sum, "sum([x, z, x * z], x)", REAL, REAL),
    (operator.add, "x + z", REAL, REAL),
    (operator.sub, "x - z", REAL, REAL),
    (operator.mul, "x * z", REAL, REAL),
    (operator.truediv, "x / z", REAL, POS),
    (operator.pow, "x ** z", POS, REAL),
    (operator.mod, "x % z", POS, (0.3, 0.4)),
    (operator.neg, "-x * z", REAL, REAL),
    (operator.pos, "+x * z", REAL, REAL),
    # sign-dependent rules again where their argument is negative (the rows above may sample it
    # positive only): mutation runs found `dy` for `dy * np.sign(x)` passing every row
    (math.fabs, "math.fabs(x - 3.0) * z", REAL, REAL),
    (math.copysign, "math.copysign(x - 3.0, z)", REAL, REAL),
    (builtins.abs, "abs(x - 3.0) * z", REAL, REAL),
]


def _build(expression, dx, dz, seed):
    rng = np.random.default_rng(seed)
    args = [float(rng.uniform(*dx)), float(rng.uniform(*dz))]
    # a nonlinear outer function, so second derivatives see the rule's first derivative too
    f = define(["x", "z"], [f"return math.sin({expression}) + 0.3 * ({expression}) ** 2"],
               {"math": math})
    return f, args


PARAMS = [pytest.param(r, id=f"{i}-{r[1]}") for i, r in enumerate(ROWS)]


@pytest.mark.parametrize("r", PARAMS)
def test_scalar_rule_gradient(r):
    f, args = _build(*r[1:], seed=3)
    check_grad(f, args, wrt=(0, 1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("r", PARAMS)
def test_scalar_rule_tangent(r):
    f, args = _build(*r[1:], seed=3)
    for wrt in (0, 1):
        _, out = srcgrad.jvp(f, wrt=wrt)(*args, 1.0)
        expected = numeric_grad(f, args, wrt)
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-8, err_msg=f"wrt {wrt}")


@pytest.mark.parametrize("r", PARAMS)
def test_scalar_rule_second_order(r):
    f, args = _build(*r[1:], seed=3)
    g = srcgrad.grad(f, wrt=0)
    h = srcgrad.hessian(f, wrt=0)(*args)
    np.testing.assert_allclose(h, numeric_grad(g, args, 0, step=1e-5), rtol=1e-4, atol=1e-6)
    _, out = srcgrad.jvp(g, wrt=1)(*args, 1.0)  # forward over reverse, mixed
    np.testing.assert_allclose(out, numeric_grad(g, args, 1, step=1e-5), rtol=1e-4, atol=1e-6)


# Kinks and ties, where central differences say nothing: the documented conventions, exactly.
# (function, expression over x and z, arguments, gradient with respect to x and z)
EXACT = [
    (builtins.max, "max(x, z)", (1.5, 1.5), (1.0, 0.0)),  # a tie goes to the first argument,
    (builtins.min, "min(x, z)", (1.5, 1.5), (1.0, 0.0)),  # the one Python returns
    (builtins.max, "max(x, z)", (-0.5, 2.0), (0.0, 1.0)),
    (builtins.min, "min(x, z)", (-0.5, 2.0), (1.0, 0.0)),
    (builtins.abs, "abs(x) * z", (0.0, 2.0), (0.0, 0.0)),  # np.sign(0) is 0
    # (x - y) / z is 2.9999999999999996 in floats, whose integer the rule must round to, not floor
    (math.fmod, "math.fmod(x, z)", (2.5, 0.7), (1.0, -3.0)),
    (math.remainder, "math.remainder(x, z)", (1.9, 0.7), (1.0, -3.0)),  # 2.9999999999999996
    (math.remainder, "math.remainder(x, z)", (2.5, 1.0), (1.0, -2.0)),  # x / z = 2.5 rounds to even
    (operator.mod, "x % z", (2.5, 0.7), (1.0, -3.0)),  # x - 3 z: the row above has x // z = 1
    (operator.mod, "x % z", (-2.5, 0.7), (1.0, 4.0)),  # x + 4 z
]
EXACT_PARAMS = [pytest.param(r, id=f"{i}-{r[1]}-{r[2]}") for i, r in enumerate(EXACT)]


@pytest.mark.parametrize("r", EXACT_PARAMS)
def test_scalar_rule_convention(r):
    _, expression, args, expected = r
    f = define(["x", "z"], [f"return {expression}"], {"math": math})
    assert srcgrad.grad(f, wrt=(0, 1))(*args) == expected
    for wrt in (0, 1):
        assert srcgrad.jvp(f, wrt=wrt)(*args, 1.0)[1] == expected[wrt]


def test_every_scalar_rule_has_a_row():
    covered = {id(r[0]) for r in ROWS}
    modules = ("math", "builtins", "_operator", "operator")
    registered = [
        rule for rule in RULES.values()
        if getattr(rule.fn, "__module__", None) in modules and not rule.nondiff
        and rule.fn is not operator.getitem  # x[i]: the language tests cover indexing
        and rule.fn is not getattr  # p.W: tests/test_objects.py covers attributes
        and rule.fn is not operator.matmul  # a @ b: the matmul rows of test_rules
    ]
    missing = sorted(rule.name for rule in registered if id(rule.fn) not in covered)
    assert not missing, f"rules without a row in tests/test_scalar_rules.py: {missing}"
