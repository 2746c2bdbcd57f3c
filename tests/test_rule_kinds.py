"""What a rule's kind derives (rules/kinds.py): the forward templates the tables do not write.

The numbers are checked by the rule tables (test_rules, test_scalar_rules, test_scipy_rules,
test_helper_rules run every rule in forward mode against central differences); here: the text
of derived templates, the templates the derivation must refuse, and that every rule whose kind
determines its tangents has one for each differentiable parameter.
"""

import ast
import operator

import gast
import numpy as np
import pytest

import srcgrad
from srcgrad.rules import RULES, bilinear, defrule, elementwise, linear, lookup
from srcgrad.rules.kinds import Kind
from srcgrad.rules.registry import load_optional_rules


def _text(rule, param):
    return ast.unparse(gast.gast_to_ast(rule.jvp().outputs[param]))


def f2(x1, x2, axes=None):
    return x1 * x2


@pytest.fixture
def scratch():
    """Register rules for ``f2`` and forget them afterwards."""
    roll = RULES[np.roll]
    yield
    RULES.pop(f2, None)
    RULES[np.roll] = roll
    srcgrad.transforms.forget()


@pytest.mark.parametrize("fn, param, text", [
    (np.tanh, "x", "dx * (1 - y * y)"),
    (np.divide, "x2", "-dx2 * y / x2"),
    (np.where, "x2", "np.where(condition, 0.0, dx2)"),
    (np.multiply, "x2", "x1 * dx2"),  # bilinear: the product rule, in the operands' order
    (np.matmul, "x1", "dx1 @ x2"),
    (operator.neg, "x", "-dx"),  # linear in one argument, and written as its operator
    (np.mean, "a", "np.mean(da, axis=axis, keepdims=keepdims, where=where)"),
    (np.transpose, "a", "np.transpose(da, axes=axes)"),
    (np.tensordot, "b", "np.tensordot(a, db, axes=axes)"),
    (srcgrad.runtime.unreduce, "g", "unreduce(dg, x, axis=axis, keepdims=keepdims, where=where)"),
])
def test_derived_text(fn, param, text):
    rule = lookup(fn)
    assert param in rule.derived_tangents()
    assert _text(rule, param) == text


@pytest.mark.parametrize("vjp", [
    "np.sum(dy) * x2",  # a reduction of dy
    "unbroadcast(dy * x1, x1)",  # summed back to another operand's shape
    "dy + x1",  # not linear in dy
    "dy * dy",
    "x1 / dy",
    "np.exp(dy)",
    "np.where(dy > 0, dy, 0.0)",  # the mask reads dy
    "np.where(x1 > 0, dy, 1.0)",  # the other branch is not zero
    "x1",  # does not read dy at all
])
def test_elementwise_derivation_refuses_what_is_not_pointwise_in_dy(scratch, vjp):
    rule = elementwise(f2, "x1, x2", vjp={"x2": vjp})
    assert rule.jvp().outputs == {}
    assert rule.derived_tangents() == []


@pytest.mark.parametrize("vjp, text", [
    ("unbroadcast(dy * x1, x2)", "dx2 * x1"),  # the outermost sum back to x2's own shape
    ("-dy / (x1 * x2) * 3.0", "-dx2 / (x1 * x2) * 3.0"),
    ("np.where(x1 > 0, 0, dy * x1)", "np.where(x1 > 0, 0, dx2 * x1)"),
])
def test_elementwise_derivation_renames_dy(scratch, vjp, text):
    rule = elementwise(f2, "x1, x2", vjp={"x2": vjp})
    assert _text(rule, "x2") == text


def test_linear_rules_derive_only_in_a_single_argument(scratch):
    """A function jointly linear in two arguments has no one-argument call for each tangent."""
    rule = linear(f2, "x1, x2", vjp=("dy * x2", "dy * x1"))
    assert rule.jvp().outputs == {}
    rule = bilinear(f2, "x1, x2", vjp=("dy * x2", "dy * x1"))
    assert rule.derived_tangents() == ["x1", "x2"]


def test_linear_derivation_needs_the_real_keyword_names(scratch):
    """The derived call passes keywords by the rule's names: they must be the function's own."""
    assert _text(lookup(np.roll), "a") == "np.roll(da, shift, axis=axis)"
    rule = linear(f2, "x1, x2, axes=None", vjp={"x1": "dy * x2"})
    assert _text(rule, "x1") == "f2(dx1, x2, axes=axes)"  # a user function names itself
    assert rule.jvp().namespace.lookup("f2") is f2
    rule = linear(np.roll, "a, shift, axes=None", vjp="np.roll(dy, np.negative(shift), axis=axes)")
    RULES.pop(np.roll)
    assert rule.jvp().outputs == {}  # np.roll has no `axes`


def test_general_rules_derive_nothing(scratch):
    rule = defrule(f2, "x1, x2", vjp=("dy * x2", "dy * x1"))
    assert rule.kind is Kind.GENERAL and rule.jvp().outputs == {}


def test_every_rule_has_a_tangent_for_each_differentiable_parameter():
    try:  # SciPy's rules register at the first lookup after SciPy is imported
        import scipy.special

        lookup(scipy.special.gamma)
    except ImportError:
        pass
    load_optional_rules(installed=True)  # SciPy's too
    for rule in {id(r): r for r in RULES.values()}.values():
        if rule.nondiff or rule.kind in (Kind.CUSTOM, Kind.DERIVED):
            continue
        outputs = rule.jvp().outputs
        missing = [
            p for p in rule.differentiable_params()
            if p not in outputs and p not in rule.unsupported and "*" not in outputs
        ]
        assert not missing, f"{rule.name}: no forward template for {missing}"


# --- forward mode through helpers whose tangent is derived -------------------------------------
# Generated code reaches most helpers only at second or third order; here each is called directly
# and differentiated in forward mode in the argument it is linear in, against central differences.
# (Decompositions: their helpers take a factor computed once, outside the differentiated code.)

_R = np.random.default_rng(4)
_M = _R.normal(size=(3, 3))
_SPD = _M @ _M.T + 3 * np.eye(3)
_RECT = _R.normal(size=(4, 3))
_A34 = _R.uniform(0.5, 1.5, size=(3, 4))
HELPER_GLOBALS = {
    "rt": srcgrad.runtime, "hr": srcgrad.runtime.higher_order, "np": np, "SPD": _SPD,
    "L": np.linalg.cholesky(_SPD), "EIG": np.linalg.eigh(_SPD), "RECT": _RECT,
    "USV": np.linalg.svd(_RECT, full_matrices=False), "QR": np.linalg.qr(_RECT),
    "PINV": np.linalg.pinv(_RECT), "A34": _A34, "V3": _R.normal(size=3),
    "W34": _R.normal(size=(3, 4)), "W33": _R.normal(size=(3, 3)), "W43": _R.normal(size=(4, 3)),
    "W3": _R.normal(size=3), "NRM": np.linalg.norm(_A34, axis=1, keepdims=True),
    "IDX": np.array([2, 0, 2]), "SORTED": np.sort(_A34, axis=1),
}

# (expression of the argument g, shape of g)
HELPER_CASES = [
    ("np.sum(W33 * rt.cholesky_jvp(L, g))", (3, 3)),
    ("np.sum(W33 * rt.cholesky_vjp(g, L))", (3, 3)),
    ("np.sum(W3 * rt.eigh_jvp(EIG, g)[0]) + np.sum(W33 * rt.eigh_jvp(EIG, g)[1])", (3, 3)),
    ("np.sum(W33 * rt.eigh_vjp((g, W33), EIG))", (3,)),
    ("np.sum(W3 * rt.eigvalsh_jvp(SPD, g))", (3, 3)),
    ("np.sum(W33 * rt.eigvalsh_vjp(g, SPD))", (3,)),
    ("np.sum(W3 * rt.svd_jvp(USV, RECT, g, False)[1])", (4, 3)),
    ("np.sum(W43 * rt.svd_vjp((W43, g, W33), USV, RECT, False))", (3,)),
    ("np.sum(W43 * rt.qr_jvp(QR, RECT, g)[0])", (4, 3)),
    ("np.sum(W43 * rt.qr_vjp((W43, g), QR, RECT))", (3, 3)),
    ("np.sum(W43.T * rt.pinv_jvp(PINV, RECT, g))", (4, 3)),
    ("np.sum(W43 * rt.pinv_vjp(g, PINV, RECT))", (3, 4)),
    ("np.sum(W33 * rt.matrix_power_jvp(SPD, g, 3))", (3, 3)),
    ("np.sum(W33 * rt.matrix_power_vjp(g, SPD, -2))", (3, 3)),
    ("np.sum(W34 * hr.cumprod_hvp(g, A34, W34, axis=1))", (3, 4)),
    ("np.sum(W34 * hr.cumprod_hvp(W34, A34, g, axis=1))", (3, 4)),
    ("np.sum(W34 * hr.cumprod_second(A34, g, W34, axis=1))", (3, 4)),
    ("np.sum(W34 * hr.cumprod_second(A34, W34, g, axis=1))", (3, 4)),
    ("np.sum(W3 * hr.vec_matmul(g, V3, V3))", (3, 3)),
    ("np.sum(W3 * hr.vec_matmul(SPD, g, V3))", (3,)),
    ("np.sum(W33 * hr.vec_outer(g, V3, V3))", (3,)),
    ("np.sum(W33 * hr.vec_outer(W3, g, V3))", (3,)),
    ("np.sum(W34 * rt.broadcast_like(g, A34))", (4,)),
    ("np.sum(W34 * rt.broadcast_like(g, A34))", (2, 1, 4)),  # longer along an axis: summed
    ("np.sum(W3 * rt.dot_vjp_left(g, RECT, V3))", (4,)),
    ("np.sum(W3 * rt.dot_vjp_right(g, RECT, V3))", (4,)),
    ("np.sum(W34 * rt.permute_like(g, A34, SORTED, axis=1))", (3, 4)),
    ("np.sum(W33 * hr.select_gather(g, A34, np.take, IDX, axis=1))", (3, 4)),
    ("np.sum(W34 * hr.pad_gather(g, 1))", (1, 2)),
    ("np.sum(W34 * hr.norm_grad_dx(g, A34, NRM, axis=1, keepdims=True))", (3, 1)),
    ("np.sum(W34 * hr.norm_grad_dnorm(g, A34, NRM, axis=1, keepdims=True))", (3, 1)),
    ("np.sum(W3 * rt.pick_extreme(g, [1.0, 3.0, 2.0]))", (3,)),
    ("np.sum(W34 * rt.cast_tangent(g, np.float64))", (3, 4)),
    ("np.sum(W34 * rt.cast_grad(g, A34, np.float64))", (3, 4)),
    ("np.float64(g) * 3.0 + np.longdouble(g) * 2.0", ()),
]


@pytest.mark.parametrize("expression, shape", HELPER_CASES, ids=[c[0][7:40] for c in HELPER_CASES])
def test_forward_mode_through_linear_helpers(expression, shape):
    from test_rules import define

    f = define(["g"], [f"return {expression}"], HELPER_GLOBALS)
    g = _R.normal(size=shape) if shape else 0.7
    t = _R.normal(size=shape) if shape else 1.3
    _, out = srcgrad.jvp(f)(g, t)
    eps = 1e-6
    want = (f(g + eps * t) - f(g - eps * t)) / (2 * eps)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-8)
