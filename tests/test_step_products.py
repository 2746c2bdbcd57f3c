"""A reversed loop's per-step contributions to a weight's gradient, summed once after it
(``optimize/steps.py``; ``runtime.matmul_vjp_right_steps``, ``unbroadcast_steps``): each form
against central differences (the batched path for matrices and vectors, the per-step path for
a vector ``W`` and for values whose rank changes between steps), second order through the
helpers' source, the generated text, and loops the pass must leave alone."""

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import check_grad

from srcgrad import grad, jvp, source, specialize, value_and_grad, vjp
from srcgrad.runtime import joined, unbroadcast_steps, unbroadcast_steps_known

RNG = np.random.default_rng(16)
WX = RNG.normal(size=(2, 3)) / 2
WH = RNG.normal(size=(3, 3)) / 2
B = RNG.normal(size=3) / 4
XS = RNG.normal(size=(4, 5, 2))  # 4 steps, batch 5, input 2
H0 = RNG.normal(size=(5, 3)) / 2


def rnn(Wx, Wh, b, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def vector_rnn(Wx, Wh, xs, h0):  # one sequence: every factor a vector (outer products)
    h = h0
    for t in range(len(xs)):
        h = np.sin(xs[t] @ Wx + h @ Wh)
    return np.sum(h**3)


def vector_weight(w, xs, s0):  # W a vector: x @ w is a number each step, a product per step
    s = s0
    for t in range(len(xs)):
        s = np.tanh(xs[t] @ w + 0.5 * s)
    return np.sum(s * s)


@pytest.mark.parametrize("wrt", [0, 1, 2])
def test_rnn_against_differences(wrt):
    check_grad(rnn, (WX, WH, B, XS, H0), wrt)


def test_bias_of_a_row_is_summed_stacked():  # b (1, 3): the batch axis summed, kept
    check_grad(rnn, (WX, WH, B[None, :], XS, H0), 2)


def test_rnn_generates_one_product_after_the_loop():
    text = source(grad(rnn, wrt=("Wx", "Wh", "b")))
    assert_golden("rnn_step_products.py", text)
    assert text.count("matmul_vjp_right_steps(") == 2 and "matmul_vjp_right(" not in text
    assert "db += unbroadcast_steps(db_parts, b)" in text


def test_vectors_stacked_against_differences():
    xs, h0 = RNG.normal(size=(4, 2)), RNG.normal(size=3) / 2
    for wrt in (0, 1):
        check_grad(vector_rnn, (WX, WH, xs, h0), wrt)
    assert "matmul_vjp_right_steps" in source(grad(vector_rnn, wrt=(0, 1)))


def test_vector_weight_and_changing_rank_run_per_step():
    xs = RNG.normal(size=(3, 4, 2))
    check_grad(vector_weight, (RNG.normal(size=2), xs, 0.3), 0)
    assert "matmul_vjp_right_steps" in source(grad(vector_weight))
    # h0 a vector, the later h matrices: the factors' ranks differ, so no joined product
    check_grad(rnn, (WX, WH, B, XS, H0[0]), 1)
    check_grad(rnn, (WX, WH, B, XS, H0[0]), 2)  # the bias's contributions of two shapes


def test_no_steps():
    g = grad(rnn, wrt=("Wx", "Wh"))(WX, WH, B, XS[:0], H0)
    assert all(np.array_equal(x, np.zeros_like(w)) for x, w in zip(g, (WX, WH)))


def test_value_and_grad_and_vjp():
    value, g = value_and_grad(rnn, wrt="Wh")(WX, WH, B, XS, H0)
    assert value == rnn(WX, WH, B, XS, H0)
    np.testing.assert_allclose(vjp(rnn, wrt="Wh")(WX, WH, B, XS, H0, 2.0), 2.0 * g, rtol=1e-12)


def grad_along(Wh, Wx, xs, h0, v):  # reverse over reverse: grad of <grad(rnn)(Wh), v>
    return np.sum(grad(rnn, wrt="Wh")(Wx, Wh, B, xs, h0) * v)


def test_second_order():
    xs, h0, v = XS[:3, :2], H0[:2], RNG.normal(size=WH.shape)
    check_grad(grad_along, (WH, WX, xs, h0, v), 0)
    # forward over reverse: the tangent of the gradient along v, against its differences
    tangent = jvp(grad(rnn, wrt="Wh"), wrt=1)(WX, WH, B, xs, h0, v)[1]
    step = 1e-6
    ahead = grad(rnn, wrt="Wh")(WX, WH + step * v, B, xs, h0)
    behind = grad(rnn, wrt="Wh")(WX, WH - step * v, B, xs, h0)
    np.testing.assert_allclose(tangent, (ahead - behind) / (2 * step), rtol=1e-6, atol=1e-8)


def written_in_place(W, xs):  # the loop writes into an array: its products stay per step
    h = np.ones(3)
    acc = np.zeros((len(xs), 3))
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ W + h)
        acc[t] = h
    return np.sum(acc**2)


def accumulated_before(W, xs, h0):  # the gradient of W gets a product before the loop too
    h = h0 @ W
    for t in range(len(xs)):
        h = np.cos(xs[t] @ W + h)
    return np.sum(h)


def test_loops_left_alone_and_others_right():
    xs = RNG.normal(size=(3, 3))
    check_grad(written_in_place, (WH, xs), 0)
    assert "matmul_vjp_right_steps" not in source(grad(written_in_place))
    check_grad(accumulated_before, (WH, xs, RNG.normal(size=3)), 0)
    text = source(grad(accumulated_before))
    assert "matmul_vjp_right_steps" in text and "matmul_vjp_right(" in text


@pytest.mark.parametrize("wx, h0, xs", [(WX, H0, XS), (WX, H0[:1], XS), (WX, H0[:1], XS[:, :1]),
                                        (WX[:1], H0[:1], XS[:, :1, :1])],
                         ids=["batch", "one_row", "batch_of_one", "one_input"])
def test_specialized_sums_share_what_they_join_only_where_it_is_the_same(wx, h0, xs):
    # specialized code joins db's, Wx's and Wh's per-step contributions once where they are the
    # same arrays; with h0 of one row, Wh's first contribution is summed to one row (another
    # array): its join is its own. Against the unspecialized code (same bits) and differences.
    generic = grad(rnn, wrt=(0, 1, 2))
    df = specialize(generic)
    args = (wx, WH, B, xs, h0)
    df(*args)
    text = source(df)
    # the kinds prove the layout of the products' lists (their checks skipped), the gradient's
    # kind holds through the loop (its unbroadcasts a shape test, `1 -` of a float)
    assert "joins = []" in text and "dWh += matmul_vjp_right_steps_known(dWh_dys, dWh_xs, " \
        "joins)" in text, text
    # Wx's rows are xs's, read back from xs (in reversed order), not saved step by step
    assert "dWx += matmul_vjp_right_rows(dWx_dys, xs, joins)" in text, text
    assert "xs[t]" not in text.replace("# grad of: h = np.tanh(xs[t]", ""), text
    # and the forward saves the shapes of what only they read; db's sum checks only shapes
    assert "dh_matmul_Wh = dplus if dplus.shape == h_matmul_Wh_shape else unbroadcast(dplus, " \
        "of_shape(h_matmul_Wh_shape))" in text and "dh * (f64_1_0 - h * h)" in text, text
    assert "loop_saved.append((xs_item_matmul_Wx.shape, h_matmul_Wh.shape, plus.shape, " \
        "h_old))" in text, text
    assert "db += unbroadcast_steps_known(db_parts, b, joins, False)" in text, text
    got = df.last()(*args)  # the specialized code itself (df runs the other on a ValueError)
    want = generic.__wrapped__(*args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w)
    for i in range(3):
        check_grad(rnn, args, i)


@pytest.mark.parametrize("steps", [3, 0])
def test_specialized_sums_of_unproven_kinds_check_them(steps):
    # vectors (h @ Wh of a vector h has no kind here): the products' lists are checked; no
    # steps: no gradient; the same bits as the unspecialized code's
    generic = grad(vector_rnn, wrt=(0, 1))
    df = specialize(generic)
    args = (WX, WH, XS[:steps, 0], H0[0])
    df(*args)
    text = source(df)
    assert "dWh += matmul_vjp_right_steps_joined(dWh_dys, dWh_xs, Wh, joins)" in text, text
    got = df.last()(*args)
    want = generic.__wrapped__(*args)
    for g, w in zip(got, want):
        assert g.shape == w.shape and np.array_equal(g, w) and (steps or not g.any())
    if steps:
        check_grad(vector_rnn, args, 1)


def test_specialized_sums_of_no_steps_are_no_gradient():
    generic = grad(rnn, wrt=(0, 1, 2))
    df = specialize(generic)
    args = (WX, WH, B, XS[:0], H0)
    df(*args)
    assert "matmul_vjp_right_steps_known(" in source(df)
    for g, w in zip(df.last()(*args), generic.__wrapped__(*args)):
        assert g.shape == w.shape and np.array_equal(g, w) and not g.any()


def test_joined_reuses_only_the_same_arrays_joined_the_same_way():
    a, b, c = RNG.normal(size=(3, 2, 4))
    joins = []
    first = joined([a, b], False, joins)
    assert joined([a, b], False, joins) is first
    for other in ([a, b.copy()], [b, a], [a], [a, b, c]):
        assert not np.shares_memory(joined(other, False, joins), first)
    assert joined([a, b], True, joins).shape == (2, 2, 4)
    np.testing.assert_array_equal(first, np.concatenate([a, b]))


def test_sums_of_known_kinds_check_only_the_shapes():
    # the unproven form's numbers, bit for bit: rows joined, stacked, steps of other shapes
    # (one step summed per step then), no steps
    rows = [RNG.normal(size=(5, 3)) for _ in range(4)]
    cases = [(rows, B, False), (rows, np.zeros((5, 3)), True),
             (rows + [RNG.normal(size=(1, 3))], B, False), ([], B, False)]
    for gs, x, stack in cases:
        got = unbroadcast_steps_known(gs, x, [], stack)
        want = unbroadcast_steps(gs, x)
        assert np.shape(got) == np.shape(want) and np.array_equal(got, want)
    assert unbroadcast_steps_known([], B, [], False) == 0.0
