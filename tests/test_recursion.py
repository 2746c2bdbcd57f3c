"""Recursion in linear time (issue 14, item 7).

In reverse-mode code a recursive call starts the callee's split derivative: its primal runs once,
its adjoint once when the cotangent arrives (normalize/recursion.py). Each case is checked against
central differences in float64, forward mode against the same differences, and second order
(which differentiates the derivative's plain version) against differences of the gradient.
"""

import contextlib
import io

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import check_second_order, hessian_by_differences

import srcgrad
from srcgrad import grad, jvp, source

CALLS = []


def counted_power(x, n):
    CALLS.append(n)
    print("level", n)  # runs in the primal, once per call at every order (counted_runs)
    if n == 0:
        return 1.0
    return x * counted_power(x, n - 1)


def deep(x):
    return counted_power(x, 30)


def test_each_level_runs_its_primal_once():
    df = grad(deep)
    got, runs = counted_runs(df, 1.01)  # the first call generates the split derivative
    assert got == pytest.approx(30 * 1.01**29, rel=1e-12)
    assert runs == list(range(31))  # once per level, not once per level below each
    assert "recursion_send(" in source(df)


def tree_sum(x, depth):
    if depth == 0:
        return np.sum(np.sin(x))
    half = len(x) // 2
    return tree_sum(x[:half], depth - 1) * 1.5 + tree_sum(x[half:], depth - 1) - np.sum(x) ** 2


def in_a_loop(x, W):
    total = 0.0
    for k in range(3):
        total = total + np.sum(layers(x * (k + 1.0), W, k))
    return total


def layers(h, W, n):
    if n == 0:
        return h
    return np.tanh(W @ layers(h, W, n - 1))


def unused_result(x):
    counted_power(x, 2)  # for its effect: still runs
    return x * 2.0


def with_keywords(x, y):
    return scaled_power(x, n=3, scale=y) + scaled_power(y, 2, scale=x)


def scaled_power(x, n, scale=1.0):
    if n == 0:
        return scale
    return x * scaled_power(x, n - 1, scale)


def labelled(x, label, n):
    if n == 0:
        return x if label == "id" else 2.0 * x
    return np.cos(labelled(x, label, n - 1)) + x


def with_a_label(x):
    return labelled(x, "id", 3) + labelled(x, "double", 2)


def even(x, n):
    if n == 0:
        return x
    return odd(np.sin(x) * 1.2, n - 1)


def odd(x, n):
    if n == 0:
        return x * x
    return even(x + 0.3 * x * x, n - 1)


def mutual(x):
    return even(x, 5)


def over_a_list(xs, n):
    if n == 0:
        return xs[0] * xs[1]
    return over_a_list([np.sin(xs[0]), xs[1] + xs[0]], n - 1) + xs[1]


def calls_over_a_list(x, y):
    return over_a_list([x, y], 3)


X = np.array([0.3, -0.7, 1.1, 0.4])
W = np.array([[0.5, -0.2, 0.1, 0.3], [0.2, 0.4, -0.3, 0.1], [0.1, 0.1, 0.6, -0.2],
              [-0.3, 0.2, 0.1, 0.5]])
CASES = [
    (tree_sum, (X, 2), 0),
    (in_a_loop, (X, W), 0),
    (in_a_loop, (X, W), 1),
    (with_keywords, (0.7, 1.3), 0),
    (with_keywords, (0.7, 1.3), 1),
    (with_a_label, (0.4,), 0),
    (mutual, (0.6,), 0),
    (calls_over_a_list, (0.6, -0.4), 0),
    (calls_over_a_list, (0.6, -0.4), 1),
]
ids = [f"{f.__name__}-{k}" for f, _, k in CASES]


@pytest.mark.parametrize("f, args, k", CASES, ids=ids)
def test_reverse_and_forward_against_differences(f, args, k):
    check_grad(f, args, k)
    want = numeric_grad(f, args, k)
    t = np.ones_like(np.asarray(args[k], dtype=float)) * 0.5
    _, tangent = jvp(f, wrt=k)(*args, t)
    assert tangent == pytest.approx(np.sum(want * t), rel=1e-6)


# second order is slower: one case per kind of recursion (in a loop, over a list, mutual)
SECOND = [c for c in CASES if c[0] in (in_a_loop, mutual, calls_over_a_list) and c[2] == 0]


@pytest.mark.parametrize("f, args, k", SECOND, ids=[f"{f.__name__}-{k}" for f, _, k in SECOND])
def test_second_order(f, args, k):
    check_second_order(f, args, k)


def test_hvp_and_hessian_run_each_level_once():
    # forward mode over the split calls: each level's primal and tangent once, its adjoint and
    # the adjoint's tangent once (66 runs for depth 10 when the plain vjp was differentiated)
    want = 30 * 29 * 1.01**28
    for derived, args in ((srcgrad.hvp(deep), (1.01, 1.0)), (srcgrad.hessian(deep), (1.01,))):
        got, runs = counted_runs(derived, *args)
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


def test_hessian_through_a_recursive_function_with_defaults():
    # forward over the split derivative needs no vjp with `*rest` (grad of grad does, below)
    want = hessian_by_differences(with_keywords, (0.7, 1.3), 1)
    assert srcgrad.hessian(with_keywords, wrt=1)(0.7, 1.3) == pytest.approx(want, rel=1e-6)


def test_reverse_over_reverse_runs_each_level_once():
    # reverse mode over the split calls: each level's split derivative of its split derivative
    # runs once (506 runs at depth 10 when the plain vjp was differentiated, 31 here at 30)
    want = 30 * 29 * 1.01**28
    for derived, args in ((grad(grad(deep)), (1.01,)), (srcgrad.vjp(grad(deep)), (1.01, 1.0)),
                          (grad(grad_of_deep), (1.01,))):
        got, runs = counted_runs(derived, *args)
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


def grad_of_deep(x):
    return grad(deep)(x)


def test_forward_over_reverse_over_a_gradient_called_inside():
    # the third derivative as hvp of a function calling grad(power): its gradient splits the
    # call of grad(power), whose split call forward mode starts and sends its seed even where
    # only tangents are returned (dead-code elimination dropped the send: 0.0)
    got = srcgrad.hvp(grad_of_power)(1.1, 1.0)
    assert got == pytest.approx(120 * 1.1**3, rel=1e-12)


def grad_of_power(x):
    return grad(counted_power, wrt=0)(x, 6)


def test_second_order_through_a_recursive_function_with_defaults():
    # reverse mode over the split calls needs no vjp with `*rest` (it was refused: the plain
    # first-order code called scaled_power's vjp, whose `*rest` no rule differentiates); a
    # derivative of forward mode pairs the callee's jvp taking every parameter (refused too)
    want = hessian_by_differences(with_keywords, (0.7, 1.3), 1)
    got = grad(grad(with_keywords, wrt=1), wrt=1)(0.7, 1.3)
    assert got == pytest.approx(want, rel=1e-6)
    (_, _), (_, second) = jvp(jvp(with_keywords, wrt=1), wrt=1)(0.7, 1.3, 1.0, 1.0)
    assert second == pytest.approx(want, rel=1e-6)
    got = grad(tangent_with_keywords, wrt=1)(0.7, 1.3)
    assert got == pytest.approx(want, rel=1e-6)


def tangent_with_keywords(x, y):
    return jvp(with_keywords, wrt=1)(x, y, 1.0)[1]


def g_with_default(x, a=2.0):
    return a * x**3


def seed_from_x(x):
    return srcgrad.vjp(g_with_default)(x, x * x) * x


def test_a_derivative_given_a_seed_with_gradient_is_refused_not_wrong():
    # the seed x * x went into `*rest` and its gradient was dropped: 18 x**4 for 30 x**4
    with pytest.raises(srcgrad.NoRuleError, match=r"\*rest"):
        grad(seed_from_x)(0.7)


def test_grad_of_grad_through_recursion():
    # d2/dx2 of x**5 + 2 x**2, with power recursive, as grad of grad
    d2 = grad(grad(lambda x: counted_power(x, 5) + 2.0 * counted_power(x, 2)))
    assert d2(0.7) == pytest.approx(20 * 0.7**3 + 4.0, rel=1e-12)


def test_an_unused_recursive_result_still_runs():
    CALLS.clear()
    assert grad(unused_result)(0.5) == pytest.approx(2.0)
    assert sorted(CALLS) == [0, 1, 2]


def test_value_and_grad_and_vjp_split_too():
    v, g = srcgrad.value_and_grad(deep)(1.01)
    assert v == pytest.approx(1.01**30) and g == pytest.approx(30 * 1.01**29)
    assert srcgrad.vjp(deep)(1.01, 2.0) == pytest.approx(60 * 1.01**29)


def doubles_in_place(v, n):
    if n == 0:
        return 0.0
    v[0] = v[0] * 2.0
    return doubles_in_place(v, n - 1)


def calls_a_writer(x):
    y = x * 1.0
    doubles_in_place(y, 2)  # Python: y[0] *= 4, seen here
    return np.sum(y * y)


@pytest.mark.parametrize("transform", [grad, jvp])
def test_a_recursive_function_writing_into_its_argument_is_refused(transform):
    # its derivatives write into a copy: the caller read y unchanged ([8, 3] for [16, 3])
    with pytest.raises(srcgrad.NoRuleError, match=r"changes its argument `v` in place") as info:
        transform(calls_a_writer)(np.array([0.5, 1.5]), *([np.ones(2)] if transform is jvp
                                                          else []))
    assert "v[0] = v[0] * 2.0" in str(info.value)


def test_forward_mode_runs_each_level_once():
    # one call of the callee's jvp gives a level's value and tangent
    (value, tangent), runs = counted_runs(jvp(deep), 1.01, 1.0)
    assert runs == list(range(31))
    assert (value, tangent) == pytest.approx((1.01**30, 30 * 1.01**29), rel=1e-12)


def doubled_cube(x):
    return counted_power(x, 3) * 2.0


def test_reverse_over_forward_through_recursion():
    # d/dx of (2 x**3 + 6 x**2 t) for t = 1: 6 x**2 + 12 x
    got = srcgrad.vjp(jvp(doubled_cube))(1.5, 1.0, (1.0, 1.0))
    assert got == pytest.approx(6 * 1.5**2 + 12 * 1.5, rel=1e-12)
    # the (value, tangent) pair of the recursive call is named after its value (kills
    # forward:344 ForwardAD._recursive_pair, call dropped: a fresh name made from the value's)
    text = srcgrad.source(jvp(doubled_cube))
    assert "counted_power_2_pair = counted_power_jvp_pair((dx,), x_2, n_minus_1)" in text
    assert "dcounted_power_2 = counted_power_2_pair[1]" in text


def counted_runs(derived, *args):
    """The value of ``derived(*args)`` on its second call and the levels of counted_power that
    call ran (the first call generates the code); each printed its level once, as Python
    does (README: "`print` runs in the primal")."""
    derived(*args)
    CALLS.clear()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        got = derived(*args)
    assert sorted(printed.getvalue().splitlines()) == sorted(f"level {n}" for n in CALLS)
    return got, sorted(CALLS)


def jvp_of_deep(x):
    return jvp(deep)(x, 1.0)[1]


def test_forward_over_forward_and_reverse_over_forward_run_each_level_once():
    # the jvp's own value-and-tangent pairs are paired again (forward) or split (reverse):
    # 77 runs at depth 10 when the plain code was differentiated, 31 here at depth 30
    want = 30 * 29 * 1.01**28
    for derived, args in ((jvp(jvp(deep)), (1.01, 1.0, 1.0)),
                          (grad(jvp_of_deep), (1.01,)),
                          (srcgrad.vjp(jvp(deep)), (1.01, 1.0, (0.0, 1.0)))):
        got, runs = counted_runs(derived, *args)
        got = got[1] if isinstance(got, tuple) else got
        got = got[1] if isinstance(got, tuple) else got
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


def test_second_order_through_forward_mode():
    # jvp(jvp(f)) and vjp(jvp(f)) against central differences of the gradient (one case for
    # test time: recursion in a loop, with respect to an array)
    f, args, k = in_a_loop, (X, W), 0
    x = args[k]
    n = int(np.size(x))
    v = np.linspace(0.3, 1.1, n).reshape(np.shape(x))
    w = np.linspace(-0.5, 0.9, n).reshape(np.shape(x))
    h = hessian_by_differences(f, args, k).reshape(n, n)
    (_, _), (_, second) = jvp(jvp(f, wrt=k), wrt=k)(*args, v, w)
    assert second == pytest.approx(np.ravel(w) @ h @ np.ravel(v), rel=1e-6)
    hv = srcgrad.vjp(jvp(f, wrt=k), wrt=k)(*args, v, (0.0, 1.0))
    np.testing.assert_allclose(np.ravel(hv), h @ np.ravel(v), rtol=1e-6, atol=1e-8)


def complex_power(z, n):
    if n == 0:
        return 1.0 + 0j
    return z * complex_power(z, n - 1)


def through_complex(x):
    z = complex_power(x * (1.0 + 0.5j), 3)
    return np.real(z * (0.3 - 0.7j)) + np.imag(z) ** 2


def test_reverse_over_reverse_through_a_complex_recursion():
    # the split steps take and give cotangents in the public convention (conjugated): a
    # missing conjugation of the seed's cotangent gave 19.73 for 40.09
    want = hessian_by_differences(through_complex, (0.8,), 0)
    assert grad(grad(through_complex))(0.8) == pytest.approx(want, rel=1e-6)


def two_carried(x, y, n):
    if n == 0:
        return x * y
    return two_carried(np.sin(x), x * y + 0.5, n - 1) + y


def both_carried(x):
    return two_carried(x, x * x, 3)


def test_reverse_over_reverse_with_two_gradients_from_one_call():
    # the cotangents of both gradients a split call gives are summed by name (the sweep's `+`
    # of two dicts was a TypeError)
    want = hessian_by_differences(both_carried, (0.6,), 0)
    assert grad(grad(both_carried))(0.6) == pytest.approx(want, rel=1e-6)


def cubed(x):
    return x**3


def test_a_derivative_called_inside_follows_its_function_when_rebound():
    # `jvp(f)` inside a differentiated body is generated at transform time; rebinding `f` kept
    # the old derivative (6 x for -sin x): the staleness guard now watches `f` too
    global chosen
    chosen = cubed
    d = grad(tangent_of_rebound)
    assert d(0.6) == pytest.approx(6 * 0.6)
    chosen = np.sin
    assert d(0.6) == pytest.approx(-np.sin(0.6))


def tangent_of_rebound(x):
    return jvp(chosen)(x, 1.0)[1]


class Recurrent:
    def __init__(self, c):
        self.c = c

    def rec(self, x, n):
        if n == 0:
            return self.c * x
        return np.sin(self.rec(x, n - 1)) * self.c + x


RECURRENT = Recurrent(1.3)


def through_a_method(x):
    return RECURRENT.rec(x, 3) * x


def gives_a_dict(x, n):
    if n == 0:
        return {"u": x, "v": x * x}
    d = gives_a_dict(x, n - 1)
    return {"u": np.sin(d["u"]) + d["v"], "v": d["u"] * d["v"]}


def through_a_dict(x):
    d = gives_a_dict({"a": x}["a"], 3)
    return d["u"] + 2 * d["v"]


def test_second_order_through_a_method_and_a_dict():
    # reverse over forward through a method, reverse over reverse through a recursion giving a
    # dict, against differences of the gradient (also checked: the other orders, a list, a
    # mutual recursion, a callable object)
    want = hessian_by_differences(through_a_method, (0.6,), 0)
    assert grad(lambda x: jvp(through_a_method)(x, 1.0)[1])(0.6) == pytest.approx(want, rel=1e-6)
    want = hessian_by_differences(through_a_dict, (0.6,), 0)
    assert grad(grad(through_a_dict))(0.6) == pytest.approx(want, rel=1e-6)


def test_third_order_runs_each_level_once():
    # reverse over reverse over reverse: each split call of order 2 starts the split derivative
    # of order 3 of the callee (980 runs at depth 6 through the plain code, 31 here at 30)
    want = 30 * 29 * 28 * 1.01**27
    for derived, args in ((grad(grad(grad(deep))), (1.01,)),
                          (srcgrad.vjp(grad(grad(deep))), (1.01, 1.0))):
        got, runs = counted_runs(derived, *args)
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


@pytest.mark.parametrize("f", [both_carried, through_complex], ids=["two-gradients", "complex"])
def test_third_order_against_differences_of_the_second(f):
    # the steps of order 3 carry gradients by name (two of them, their cotangents depending on
    # x through the arguments x * y + 0.5) and conjugated complex values (each was wrong before
    # it was right)
    second = grad(grad(f))
    want = (second(0.7 + 1e-4) - second(0.7 - 1e-4)) / 2e-4
    assert grad(grad(grad(f)))(0.7) == pytest.approx(want, rel=1e-6)


def test_fourth_order_runs_each_level_once():
    # the split derivative of order 4 (25672 runs at depth 8 through the plain code, 31 here at
    # 30); it was wrong (7/8 of the value at depth 8) while a step read with a zero token
    # (`got(s, None)`) dropped the cotangent it was to send: the send now goes through the handle
    want = 30 * 29 * 28 * 27 * 1.01**26
    for derived, args in ((grad(grad(grad(grad(deep)))), (1.01,)),
                          (srcgrad.vjp(grad(grad(grad(deep)))), (1.01, 1.0))):
        got, runs = counted_runs(derived, *args)
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


def two_complex(z, w, n):
    if n == 0:
        return z * w
    return two_complex(np.sin(z) * (0.5 + 0.2j), z * w + 0.3j, n - 1) + w * (0.1 - 0.4j)


def through_two_complex(x):
    v = two_complex(x * (1.0 + 0.5j), x * x - 0.2j, 3)
    return np.real(v * (0.3 - 0.7j)) + np.imag(v) ** 2


@pytest.mark.parametrize("f", [mutual, through_two_complex], ids=["mutual", "two-complex"])
def test_fourth_order_against_differences_of_the_third(f):
    # at order 4 a step of an adjoint gives (step 10) or is sent (step 11) gradients by name that
    # are not G_i's own (the cotangents of G_1's gradients): read as a plain value, the mutual
    # recursion's were taken for zeros (312.4 for 364.7) and two gradients were a TypeError
    # (two complex values: the conjugations of those steps are checked too)
    third = grad(grad(grad(f)))
    want = (third(0.6 + 1e-4) - third(0.6 - 1e-4)) / 2e-4
    assert grad(third)(0.6) == pytest.approx(want, rel=1e-6)


def test_forward_over_reverse_over_reverse_runs_each_level_once():
    # forward mode over split calls of order k (2 and 3 here) starts the jvp of the callee's split
    # derivative of order k, each step sent and read with its tangent (jvp(grad(grad)) ran 551
    # levels at depth 10 through the plain code; 31 here at depth 30)
    want = 30 * 29 * 28 * 1.01**27
    for derived, args in ((jvp(grad(grad(deep))), (1.01, 1.0)),
                          (srcgrad.hvp(grad(deep)), (1.01, 1.0))):
        got, runs = counted_runs(derived, *args)
        got = got[1] if isinstance(got, tuple) else got
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))
    got, runs = counted_runs(srcgrad.hvp(grad(grad(deep))), 1.01, 1.0)
    assert got == pytest.approx(want * 27 / 1.01, rel=1e-12)
    assert runs == list(range(31))


@pytest.mark.parametrize("f", [mutual, through_two_complex], ids=["mutual", "two-complex"])
def test_forward_over_reverse_over_reverse_against_differences(f):
    second = grad(grad(f))
    want = (second(0.7 + 1e-4) - second(0.7 - 1e-4)) / 2e-4
    assert jvp(second)(0.7, 1.0)[1] == pytest.approx(want, rel=1e-6)
    assert srcgrad.hvp(grad(f))(0.7, 1.0) == pytest.approx(want, rel=1e-6)


def power_times_cube(x, y):
    return counted_power(x, 4) * y * y * y


def test_steps_whose_call_varies_not_along_the_last_derivative():
    # d/dy of d3/dx3 of x**4 y**3: the split call power(x, 4) does not vary along y, what its
    # steps are sent does; a step read with a zero token, got(s, None), counted as constant and
    # its tangent (forward) or the cotangent it was to send (reverse) was dropped: 6.912 for
    # 27.648 (the started split derivative now counts as varying)
    third = grad(grad(grad(power_times_cube)))
    want = 72 * 0.6 * 0.8**2
    assert jvp(third, wrt=1)(0.6, 0.8, 1.0)[1] == pytest.approx(want, rel=1e-12)
    assert grad(third, wrt=1)(0.6, 0.8) == pytest.approx(want, rel=1e-12)
    # d/dy of the tangent along x of d/dy: the split call's first layer asks for no gradient,
    # forward mode over its chain starts the jvp along x, the forward layer's (a TypeError)
    tangent = jvp(grad(power_times_cube, wrt=1), wrt=0)
    got = jvp(lambda x, y: tangent(x, y, 1.0)[1], wrt=1)(0.6, 0.8, 1.0)[1]
    assert got == pytest.approx(24 * 0.6**3 * 0.8, rel=1e-12)
    # and along y of d2/dy2: no layer asks for anything, its jvp is with respect to nothing
    # (an internal error "not specialized to its arguments")
    second = jvp(grad(power_times_cube, wrt=1), wrt=1)
    got = jvp(lambda x, y: second(x, y, 1.0)[1], wrt=1)(0.6, 0.8, 1.0)[1]
    assert got == pytest.approx(6 * 0.6**4, rel=1e-12)


def test_broadcast_like_of_the_cotangents_of_a_list_goes_element_by_element():
    # the adjoint of unbroadcast on the cotangents of np.stack([w, w])'s list, met at fourth
    # order through a recursion (np.shape of [None, array] was a ValueError; the fourth
    # derivative then matched differences: -9.7473350 against -9.7473350 extrapolated)
    from srcgrad.runtime.containers import Cotangents
    from srcgrad.runtime.shapes import broadcast_like
    like = Cotangents([np.zeros(3), np.zeros((2, 3))])
    got = broadcast_like(Cotangents([None, np.ones(3)]), like)
    assert isinstance(got, Cotangents) and got[0] is None
    np.testing.assert_array_equal(got[1], np.ones((2, 3)))


def hvp_of_deep(x):
    return srcgrad.hvp(deep)(x, 1.0)


def tangent_of_the_gradient(x):
    return jvp(grad_of_deep)(x, 1.0)[1]


def test_reverse_and_forward_over_forward_over_reverse_run_each_level_once():
    # forward mode's split calls (the jvp of a split derivative) differentiated again are steps
    # of a chain whose layer is that jvp, each step a pair (normalize/recursion.unpair): grad of
    # hvp ran 1121 levels at depth 6 through the plain code, jvp(jvp(grad)) 155; 31 here at 30
    want = 30 * 29 * 28 * 1.01**27
    for derived, args in ((grad(hvp_of_deep), (1.01,)),
                          (jvp(tangent_of_the_gradient), (1.01, 1.0))):
        got, runs = counted_runs(derived, *args)
        got = got[1] if isinstance(got, tuple) else got
        assert got == pytest.approx(want, rel=1e-12)
        assert runs == list(range(31))


def test_reverse_and_forward_over_forward_over_reverse_against_differences():
    # the pairs of a forward layer cross conjugated as their value does, gradients by name
    # (two complex values carried through the recursion)
    second = grad(grad(through_two_complex))
    want = (second(0.7 + 1e-4) - second(0.7 - 1e-4)) / 2e-4
    h, g = srcgrad.hvp(through_two_complex), jvp(grad(through_two_complex))
    assert grad(lambda x: h(x, 1.0))(0.7) == pytest.approx(want, rel=1e-6)
    assert jvp(lambda x: g(x, 1.0)[1])(0.7, 1.0)[1] == pytest.approx(want, rel=1e-6)


def test_cotangents_of_a_split_calls_gradients_add_zero_and_none_as_nothing():
    # runtime.recursion._GradCotangents: the sweep's `+` of two cotangents read from one split
    # call, where a zero 0.0 or None adds nothing, and a sum is again summed key by key (a
    # plain DictCotangents plus 0.0 raises)
    from srcgrad.runtime.recursion import _GradCotangents
    g = _GradCotangents({"x": 1.0})
    for zero in (None, 0.0, 0):
        assert g + zero == {"x": 1.0}
        assert zero + g == {"x": 1.0}
    total = g + {"x": 2.0, "y": 4.0}
    assert total == {"x": 3.0, "y": 4.0}
    assert total + 0.0 == {"x": 3.0, "y": 4.0}
    assert 0 + total == {"x": 3.0, "y": 4.0}
