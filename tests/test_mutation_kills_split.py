"""Cases that only a surviving mutant of ``srcgrad/runtime/recursion.py`` showed untested
(docs/development.md, mutation testing): the split derivatives of a call (``rules/derived.py``)
driven by hand, at the points generated code reaches only with a missing (None) cotangent or a
skipped step.

Each number is checked against the derivative of ``cube`` by hand; the comment names the mutant
of ``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import numpy as np
import pytest

from srcgrad import runtime
from srcgrad.errors import SrcgradError
from srcgrad.rules import derived

X = 0.7


def cube(x):
    return x * x * x


def square_past_the_largest_float(x):
    return x * x + np.inf


def test_a_split_call_of_a_split_derivative_finished_without_its_seed_takes_a_zero_seed():
    # split2_finish when step 2 (the seed in, the gradients out) was never taken: the seed is
    # zero, so the cotangent of x is that of the value alone, 3 x**2 * dvalue.
    # Kills recursion:188 split2_finish (condition negated) and :189 (call dropped): without
    # step 2 the value's cotangent would go in as the seed.
    s = derived.Splitter2(cube, ("x",))(X)
    assert s.value == pytest.approx(X**3)
    runtime.split2_finish(s, 1.5)
    assert s.final == {"x": pytest.approx(1.5 * 3 * X**2)}
    assert runtime.split2_final(s, s) is s.final  # finished once
    # the seed is a zero, not the value: with an infinite value (and a finite gradient 2 x)
    # a seed other than zero gives nan. Kills recursion:189 (zeros_like dropped).
    s = derived.Splitter2(square_past_the_largest_float, ("x",))(X)
    with np.errstate(invalid="ignore"):
        runtime.split2_finish(s, 1.5)
    assert s.value == np.inf
    assert s.final == {"x": pytest.approx(1.5 * 2 * X)}


def test_a_split_call_of_a_split_derivative_finished_after_its_seed():
    # the same after step 2 took the seed 2.0 (gradient 2 * 3 x**2) and step 3 a cotangent 0.5
    # of that gradient: the cotangent of x is 3 x**2 * dvalue + 0.5 * 2 * 6 x
    s = derived.Splitter2(cube, ("x",))(X)
    assert runtime.split2_send(s, 2.0) == {"x": pytest.approx(2 * 3 * X**2)}
    assert runtime.split2_seed_back(s, {"x": 0.5}) == pytest.approx(0.5 * 3 * X**2)
    runtime.split2_finish(s, 1.5)
    assert s.final == {"x": pytest.approx(1.5 * 3 * X**2 + 0.5 * 2 * 6 * X)}


def _split_jvp(tangent):
    splitter = derived.splitter(cube).with_wrt(("x",))
    return derived.split_jvp(splitter, ("x",))((tangent,), X)


def test_a_split_call_in_forward_mode_sent_no_cotangent_gives_none_and_stays_open():
    # recursion_send_pair with seed None: nothing is sent, the generator is kept; sent later,
    # the gradient 2 * 3 x**2 and its tangent (2 * 6 x * dx + 1 * 3 x**2) come out once.
    # Kills recursion:82 recursion_send_pair (boolean operator `or` -> `and`).
    s = _split_jvp(0.5)
    assert (s.value, s.tangent) == (pytest.approx(X**3), pytest.approx(3 * X**2 * 0.5))
    assert runtime.recursion_send_pair(s, None, None) is None
    assert runtime.recursion_send_pair(s, 2.0, 1.0) == {"x": pytest.approx(2 * 3 * X**2)}
    assert runtime.recursion_sent_tangent(s) == {"x": pytest.approx(2 * 6 * X * 0.5 + 3 * X**2)}
    assert runtime.recursion_send_pair(s, 2.0, 1.0) is None  # sent already: nothing more


def test_the_cotangent_of_a_gradient_read_from_nothing_sent_is_none():
    # recursion_grad_back: no gradients (nothing was sent) or no cotangent of the one read
    # gives no cotangent, never a number. Kills recursion:212 (boolean operator `or` -> `and`).
    assert runtime.recursion_grad_back(1.0, None, "x") is None
    assert runtime.recursion_grad_back(None, {"x": 2.0}, "x") is None
    assert runtime.recursion_grad_back(3.0, {"x": 2.0}, "x") == {"x": 3.0}


def test_a_cotangent_sent_to_a_step_already_taken_is_refused_not_dropped():
    # step_take after its step was taken: a zero or the value it was taken with is accepted,
    # any other value raises (a cotangent dropped silently would be a wrong gradient).
    # Kills recursion:307 step_take (condition negated).
    s = derived.SplitterN(cube, (("x",), ("x",)))(X)
    assert runtime.step_take(s, 2, 2.0) is s
    assert runtime.step_got(s, 2) == {"x": pytest.approx(2 * 3 * X**2)}
    assert runtime.step_take(s, 2, 0.0) is s
    assert runtime.step_take(s, 2, None) is s
    assert runtime.step_take(s, 2, s.sent[2]) is s
    with pytest.raises(SrcgradError, match="step 2 of a split derivative was taken before"):
        runtime.step_take(s, 2, 1.0)
