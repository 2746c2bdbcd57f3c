"""Second order of functions whose first-order code writes, views and saves arrays.

A derivative of a derivative transforms srcgrad's own generated code. Its element writes go into
buffers it made, its saved views stand for the values they had when made (the in-place restore
of the first-order sweep puts those values back), and its helpers return fresh arrays: a second
transform must model all of that rather than refuse it as aliasing in code the user never wrote.
Each case is checked against central differences of the gradient (the order below), reverse over
reverse and forward over reverse (`second_order_check.py`).
"""

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import check_second_order

from srcgrad import TangentShapeError, UnsupportedSyntaxError, grad, hessian, hvp, jvp, vjp


def assemble(A, M):
    # finite-element assembly: overlapping blocks added into a global matrix
    K = np.zeros((5, 5))
    for e in range(4):
        K[e:e + 2, e:e + 2] += A[e] * M
    return np.sum(np.tanh(K) ** 2)


def scale_blocks(A, M):
    K = np.ones((5, 5))
    for e in range(4):
        K[e:e + 2, e:e + 2] *= A[e] * M
    return np.sum(K ** 2)


def row_recurrence(x, M):
    c = 2.0
    for _ in range(3):
        M[1] = (M[-2] + x) / c
    return np.sum(np.sin(M))


def strided_view(x):
    v = x[-1::-3]
    x[1] *= np.tanh(np.sum(np.cos(v)))  # writes into an element v views
    return np.sum(np.tanh(x))


def strided_in_branch(x):
    # found by the random programs (issue 20), shrunk
    if np.sum(np.cos(x[-1::-3])) > -0.25:
        x[-4] *= np.tanh(np.sum(np.cos(x[-1::-3])))
    return np.sum(np.tanh(x))


def history(x):
    # found by the random programs (/work/notes/found.md S1): the first-order sweep rebinds L
    # from its save (`L = L_old`) and pops the append from it in place
    z = np.zeros(3)
    L = []
    for _ in range(2):
        z -= x
        L.append(z)
    return np.sum(np.array(L) ** 2)


def popper(x):
    L = []
    for i in range(3):
        L.append(x * (i + 1.0))
    s = 0.0
    for _ in range(2):
        s = s + np.sum(np.sin(L.pop()) ** 2)
    return s + np.sum(L[0] ** 3)


def copied_history(x):
    z = np.zeros(3)
    L = [z]
    for _ in range(3):
        z += np.sin(x) * L[-1] + x
        L.append(z * 1.0)
    return np.sum(np.array(L) ** 2)


def copyto_then_strided(x, M):
    # found by the random programs (/work/notes/found.md S2)
    if np.sum(np.cos(x[-1::-3])) > -0.25:
        np.copyto(x, -(M[0, 1] * x))
        x[-4] *= np.tanh(np.sum(np.cos(x[-1::-3])))
    return np.sum(x ** 2)


def dict_loop(x, a):
    # found by the random programs: at second order the key travels in the first-order code's
    # saved tuple, and its tangent was read from None
    d = {"h": x}
    d["t"] = a + x
    s = 0.0
    for k in d:
        s = s + np.sum(np.tanh(d[k]))
    return s


def dict_inactive_write(x, c):
    # found by the random programs: the tangent of a dict after a write of a value without
    # tangent held None at that key, and the loop's tangent computed with it (TypeError, jvp)
    d = {"h": x}
    d["t"] = np.array(c)
    s = 0.0
    for k in d:
        s = s + np.sum(np.tanh(d[k]) * x[0])
    return s


def list_inactive_write(x, c):
    L = [x, x]
    L[1] = np.array(c)
    s = 0.0
    for v in L:
        s = s + np.sum(np.tanh(v) * x[0])
    return s


def shared_update_then_written(x, M):
    # found by the random programs (checkpoint family, seed 57216), shrunk. The first-order code
    # saves `x` before `x = put_shared(x, ...)` (x itself: nothing in x is d["q"]), then writes
    # x[-1] in place, and its sweep restores x[-1] in place. Differentiated again the restore
    # wrote into a copy, so the saved x kept the write: hessian[4] and vjp(grad) wrong
    d = {"q": x * 1.0, "p": M.T @ (M @ (x / (1.0 + x**2)))}
    d["q"] *= 2.0
    x[-1] = d["p"][-3]
    return np.tanh(np.sum(x))


ELEMENT = np.array([[1.0, -0.5], [-0.5, 1.0]])

CASES = [
    (assemble, (np.array([0.3, -0.2, 0.5, 0.4]), ELEMENT), 0),
    (assemble, (np.array([0.3, -0.2, 0.5, 0.4]), ELEMENT), 1),
    (scale_blocks, (np.array([1.1, 1.2, 0.9, 0.8]), ELEMENT), 0),
    (row_recurrence, (np.array([0.3, 0.4]), np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])), 0),
    (row_recurrence, (np.array([0.3, 0.4]), np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]])), 1),
    # the first-order sweep read np.sin(v) after the write changed v (a wrong gradient): the
    # write is now undone before the sweep reads the view
    (strided_view, (np.array([0.5, 0.3, 0.2, 0.7, 0.4]),), 0),
    (strided_in_branch, (np.array([0.5, 0.3, 0.2, 0.7, 0.4]),), 0),
    (copyto_then_strided, (np.array([0.5, -1, 2, 0.3, -0.2]), 0.7 * np.ones((2, 5))), 0),
    (history, (np.array([0.5, -1.0, 2.0]),), 0),
    (popper, (np.array([0.5, -1.0, 0.3]),), 0),
    (copied_history, (np.array([0.5, -1.0, 0.3]),), 0),
    (dict_loop, (np.array([0.5, -1.0, 0.3]), 0.3), 0),
    (dict_loop, (np.array([0.5, -1.0, 0.3]), 0.3), 1),
    (dict_inactive_write, (np.array([0.5, -1.0, 0.3]), np.array([0.2, 0.4, 0.1])), 0),
    (list_inactive_write, (np.array([0.5, -1.0, 0.3]), np.array([0.2, 0.4, 0.1])), 0),
    (shared_update_then_written, (np.array([1.32, -0.79, 0.63, 1.5, 1.37]),
                                  np.array([[0.05, 0.37, -0.05, 1.32, -1.44],
                                            [1.3, -0.1, -0.52, -0.34, -0.26]])), 0),
]


@pytest.mark.parametrize("f, args, k", CASES, ids=lambda v: getattr(v, "__name__", None))
def test_second_order_of_writes_into_views(f, args, k):
    check_second_order(f, args, k)


@pytest.mark.parametrize("f", [dict_inactive_write, list_inactive_write])
def test_jvp_after_writing_a_value_without_tangent_into_a_container(f):
    x, c, t = np.array([0.5, -1.0, 0.3]), np.array([0.2, 0.4, 0.1]), np.array([1.0, -2.0, 0.5])
    value, tangent = jvp(f)(x, c, t)
    assert value == pytest.approx(f(x, c), rel=1e-15)
    assert tangent == pytest.approx(numeric_grad(f, (x, c), 0) @ t, rel=1e-7)


# --- an argument updated in place by a helper, then written into again ------------------------


def scale_in_place(w, u):
    w *= u


def grow_in_place(w, u):
    w += u * w
    return np.sum(w)


def scaled_then_set(x):
    y = x + 0.0
    scale_in_place(y, x)
    y[1] = 2.0 * x[0]
    return np.sum(y * y)


def grown_then_added(x):
    # found by the random programs (seed 45102): the second transform copied `w`, the value
    # the first order's `shared_positions` looks for by identity among `y`'s holders, so the
    # update never reached `y` and hvp was wrong ([0.6, 11.15, ...] for [20.6, 48.0, ...])
    y = x + 0.0
    s = grow_in_place(y, x[0])
    y[2] += 3.0
    return s * np.sum(y * x)


def grown_in_a_loop(x):
    y = x + 0.0
    for i in range(2):
        grow_in_place(y, x[i])
        y[i] = x[i + 1] * 2.0
    return np.sum(y ** 3)


def test_second_order_of_an_argument_updated_in_place_by_a_helper():
    check_second_order(scaled_then_set, (np.array([0.2, 0.3, 0.1, 0.8]),), 0)


@pytest.mark.parametrize("f", [grown_then_added, grown_in_a_loop])
def test_second_order_that_would_copy_a_value_found_by_identity_is_refused(f):
    x = np.array([0.2, 0.3, 0.1, 0.8, 0.4])
    assert grad(f)(x) == pytest.approx(numeric_grad(f, (x,), 0), rel=1e-6)
    with pytest.raises(UnsupportedSyntaxError, match="by identity"):
        hvp(f)(x, np.ones(5))


# --- derivatives of derivatives of functions with defaults ----------------------------------


def spaced(x, y, num=5):
    return np.sum(np.sin(np.linspace(x, y, num)) ** 2)


def scaled(x, a=2.0):
    return np.sum(np.sin(a * x) ** 2)


@pytest.mark.parametrize("f, args, k", [
    (spaced, (0.4, 1.3), 0),
    (spaced, (0.4, 1.3), 1),
    (spaced, (0.4, 1.3, 7), 1),
    (scaled, (np.array([0.3, -0.5]),), 0),
    (scaled, (np.array([0.3, -0.5]), 1.5), 1),
], ids=lambda v: getattr(v, "__name__", None))
def test_second_order_with_defaulted_parameters(f, args, k):
    check_second_order(f, args, k)


def linspaced(x, y, num=5):
    return np.linspace(x, y, num) ** 2


def test_vjp_of_vjp_and_jvp_of_vjp_with_a_default():
    x, y, seed = 0.4, 1.3, np.array([0.5, -1.0, 2.0, 0.3, 1.1])
    back = vjp(linspaced)
    # d/dx of seed @ d(linspace**2)/dx = seed @ (2 * (1 - t) ** 2) with t = i / (num - 1)
    t = np.linspace(0.0, 1.0, 5)
    assert back(x, y, seed) == pytest.approx(seed @ (2 * (1 - t) * np.linspace(x, y, 5)))
    for call in (lambda s: vjp(back)(x, y, seed, s), lambda s: vjp(back)(x, y, 5, seed, s),
                 lambda s: vjp(back)(x, y, seed, s, num=5)):
        assert call(1.0) == pytest.approx(seed @ (2 * (1 - t) ** 2), rel=1e-12)
    _, tangent = jvp(back)(x, y, seed, 1.0)
    assert tangent == pytest.approx(seed @ (2 * (1 - t) ** 2), rel=1e-12)
    # the seed of the first vjp is differentiated too: its vjp is the Jacobian's column
    third = vjp(vjp(back))(x, y, seed, 1.0, 1.0)
    assert third == pytest.approx(0.0, abs=1e-12)  # linear in x: no third derivative
    want = numeric_grad(lambda x: back(x, y, seed), (x,), 0)
    assert vjp(back)(x, y, seed, 1.0) == pytest.approx(want, rel=1e-6)


def test_second_order_in_an_optional_parameter_by_keyword_or_position():
    x = np.array([0.3, -0.5])

    def f(x, a=2.0):
        return np.sin(a * x)

    back = vjp(f, wrt="a")
    seed = np.array([1.0, -2.0])
    want = seed @ (-x * x * np.sin(2.0 * x))
    assert vjp(back, wrt="a")(x, seed, 1.0) == pytest.approx(want, rel=1e-12)
    assert vjp(back, wrt="a")(x, seed, 1.0, a=2.0) == pytest.approx(want, rel=1e-12)
    assert vjp(back, wrt="a")(x, 2.0, seed, 1.0) == pytest.approx(want, rel=1e-12)
    assert jvp(back, wrt="a")(x, seed, 1.0)[1] == pytest.approx(want, rel=1e-12)


def test_the_seed_and_the_tangent_come_after_star_args():
    def f(x, *a):
        return x * a[0] * a[1]

    # the seed was bound before *a: vjp(f)(2.0, 3.0, 5.0, 7.0) took 3.0 as the seed
    assert vjp(f)(2.0, 3.0, 5.0, 7.0) == pytest.approx(3.0 * 5.0 * 7.0, rel=1e-15)
    assert jvp(f)(2.0, 3.0, 5.0, 7.0) == pytest.approx((30.0, 105.0), rel=1e-15)
    assert vjp(vjp(f))(2.0, 3.0, 5.0, 7.0, 1.0) == pytest.approx(0.0, abs=1e-15)


def test_jvp_of_a_tuple_of_arrays_of_different_shapes():
    # check_tangent took np.shape of the tuple: ValueError (inhomogeneous shape)
    def f(p):
        a, B = p
        return np.sum(np.sin(a)) * np.sum(B ** 2) + a @ B[0]

    p = (np.array([0.3, -0.2]), np.array([[0.5, 1.0], [-0.4, 0.2], [0.1, 0.7]]))
    t = (np.array([1.0, 2.0]), np.array([[0.3, -1.0], [0.5, 0.2], [-0.6, 0.4]]))
    value, tangent = jvp(f)(p, t)
    assert value == pytest.approx(f(p), rel=1e-15)
    h = 1e-6
    shifted = [tuple(x + s * h * d for x, d in zip(p, t)) for s in (1, -1)]
    assert tangent == pytest.approx((f(shifted[0]) - f(shifted[1])) / (2 * h), rel=1e-7)
    with pytest.raises(TangentShapeError, match=r"\[1\]"):
        jvp(f)(p, (t[0], t[1].T))
    with pytest.raises(TangentShapeError):
        jvp(f)(p, (t[0],))


def appends_states(x):
    z = np.zeros(3)
    L = []
    for _ in range(2):
        z = z - x * z - x
        L.append(z)
    return np.sum(np.array(L) ** 2)


def pops_states(x):
    L = [x * 1.0, np.sin(x)]
    for _ in range(2):
        L.append(L[-1] * x)
    return np.sum(L.pop() * L.pop())


@pytest.mark.parametrize("f", [appends_states, pops_states], ids=lambda f: f.__name__)
def test_reverse_over_forward_of_lists(f):
    # the tangent code's append_tangent changed its list in place: no rule (NoRuleError)
    x, t = np.array([0.5, -1.0, 0.3]), np.array([1.0, 0.5, -0.2])
    forward = jvp(f)
    value_part = vjp(forward)(x.copy(), t, (1.0, 0.0))
    np.testing.assert_allclose(value_part, numeric_grad(f, (x,), 0), rtol=1e-6, atol=1e-8)
    tangent_part = vjp(forward)(x.copy(), t, (0.0, 1.0))
    want = numeric_grad(lambda z: forward(z.copy(), t)[1], (x,), 0)  # (H t), H symmetric
    np.testing.assert_allclose(tangent_part, want, rtol=1e-6, atol=1e-8)


W_SPLIT = np.array([-0.179, 0.870, 1.291, 1.290, -0.189])


def split_then_written(x):
    w = np.split(x, 5)[1]  # a view of x, from a list of views
    s = np.sum(np.sin(w))
    np.copyto(x, W_SPLIT)  # writes into x, which w views
    return np.tanh(s)


def array_split_then_written(x):
    w = np.array_split(x, 2)[0]
    s = np.sum(np.sin(w) * w)
    x[:] = W_SPLIT
    return np.tanh(s) + np.sum(x)


@pytest.mark.parametrize("f", [split_then_written, array_split_then_written])
def test_a_view_from_a_list_of_views_read_after_a_write_into_its_base(f):
    # the copy where the view is made was a shallow copy of the list, its items still views
    # of x: hessian[1, 1] -0.8664 for -0.8607, vjp(grad) -0.8200 (random programs, seed 56121)
    x = np.array([1.5, 0.74, 0.52, 1.2, 0.14])
    g = grad(f)
    want = np.stack([(g(x + 1e-5 * e) - g(x - 1e-5 * e)) / 2e-5 for e in np.eye(5)])
    np.testing.assert_allclose(hessian(f)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(vjp(g)(x, np.eye(5)[1]), want[1], rtol=1e-6, atol=1e-8)
