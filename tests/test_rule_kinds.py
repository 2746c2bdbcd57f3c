"""What a rule's kind derives (rules/kinds.py): the forward templates the tables do not write.

The numbers are checked by the rule tables (test_rules, test_scalar_rules, test_scipy_rules,
test_helper_rules run every rule in forward mode against central differences); here: the text
of derived templates, the templates the derivation must refuse, and that every rule whose kind
determines its tangents has one for each differentiable parameter.
"""

import ast

import gast
import numpy as np
import pytest

import srcgrad
from srcgrad.rules import RULES, bilinear, defrule, elementwise, linear, lookup
from srcgrad.rules.kinds import Kind


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
    (np.sum, "a", "np.sum(da, axis=axis, keepdims=keepdims)"),
    (np.transpose, "a", "np.transpose(da, axes=axes)"),
    (np.tensordot, "b", "np.tensordot(a, db, axes=axes)"),
    (srcgrad.runtime.unreduce, "g", "unreduce(dg, x, axis=axis, keepdims=keepdims)"),
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
    for rule in {id(r): r for r in RULES.values()}.values():
        if rule.nondiff or rule.kind in (Kind.CUSTOM, Kind.DERIVED):
            continue
        outputs = rule.jvp().outputs
        missing = [
            p for p in rule.differentiable_params()
            if p not in outputs and p not in rule.unsupported and "*" not in outputs
        ]
        assert not missing, f"{rule.name}: no forward template for {missing}"
