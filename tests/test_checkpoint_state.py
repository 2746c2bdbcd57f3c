"""checkpoint=: what the step copies of its state, and the gradients of arguments its loops read
(issue 13, found by random-program hunts). Values against Python, gradients against central
differences, jvp against the gradient, with ``checkpoint=2`` and ``"auto"``."""

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad import value_and_grad, vjp


def _agrees(f, args, wrt, k, second_order=False):
    """``f``'s value with ``checkpoint=k`` is Python's, its gradient central differences', its
    vjp the gradient's and jvp (no checkpoint) the gradient's; with ``second_order``, hvp with
    ``checkpoint=k`` is central differences of the gradient. The arguments are not modified."""
    before = [np.copy(a) for a in args]
    value, g = value_and_grad(f, wrt=wrt, checkpoint=k)(*args)
    assert value == f(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    np.testing.assert_allclose(g, numeric_grad(f, args, wrt), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(vjp(f, wrt=wrt, checkpoint=k)(*args, 2.0), 2.0 * g, rtol=1e-14)
    t = np.linspace(0.1, 0.9, np.size(args[wrt])).reshape(np.shape(args[wrt]))
    np.testing.assert_allclose(srcgrad.jvp(f, wrt=wrt)(*args, t)[1], np.sum(g * t), rtol=1e-12)
    if second_order:
        grad = srcgrad.grad(f, wrt=wrt)
        eps = 1e-6
        shifted = [list(args), list(args)]
        shifted[0][wrt], shifted[1][wrt] = args[wrt] + eps * t, args[wrt] - eps * t
        central = (grad(*shifted[0]) - grad(*shifted[1])) / (2 * eps)
        np.testing.assert_allclose(srcgrad.hvp(f, wrt=wrt, checkpoint=k)(*args, t), central,
                                   rtol=1e-6, atol=1e-8)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


# --- (1) a name of the state only passed to a helper, in a step that copies its whole state ----

def scaled_by(u, w):
    return np.cumsum(w) * 2.0 * u


def not_scaled(u, w):
    return np.cumsum(w) * 2.0


def halves(u, w):
    u *= 0.5  # writes into its argument
    return np.sum(w) * u


def passes_a_float(x, a, M):
    s = 0.0
    for _ in range(1, 3):
        s = s + np.sum(scaled_by(a, w=M[-2]))  # (M[-2] to a helper: the step copies all)
        M = M * x
    return s + np.sum(M)


def passes_an_int(x, a, M):
    n = 2
    s = 0.0
    for _ in range(2):
        s = s + np.sum(scaled_by(n, w=M[-2])) * a
        M = M * x
    return s + np.sum(M)


def passes_a_tuple(x, a, M):
    t = (1.0, a)
    s = 0.0
    for _ in range(2):
        s = s + np.sum(not_scaled(t, M[-2]))
        M = M * x
    return s + np.sum(M)


def passes_none(x, a, M):
    t = None
    s = 0.0
    for _ in range(2):
        s = s + np.sum(not_scaled(t, w=M[-2])) * a
        M = M * x
    return s + np.sum(M)


def passes_a_float_bound_in_the_loop(x, a, M):
    s = 0.0
    for i in range(1, 3):
        if i > 1:
            s = s + np.sum(scaled_by(c, w=M[-2]))  # noqa: F821 (c: bound the trip before)
        c = a * i  # noqa: F841 (read on the next trip)
        M = M * x
    return s + np.sum(M)


def passes_an_array_a_list_holds(x, a, M):
    y = x * 1.0
    L = [y]
    s = 0.0
    for _ in range(2):
        s = s + np.sum(halves(y, w=M[-2] * x))  # writes into y, which L[0] is
        O = [L]
        O[0][-1] = O[0][-1] + x * a
        M = M * 0.9
    return s + np.sum(M) + np.sum(y * x) + np.sum(L[0] * L[-1])


PASSED = [(passes_a_float, 2), (passes_an_int, "auto"), (passes_a_tuple, 2), (passes_none, "auto"),
          (passes_a_float_bound_in_the_loop, 2), (passes_an_array_a_list_holds, 2),
          (passes_an_array_a_list_holds, "auto")]


@pytest.mark.parametrize("f, k", PASSED, ids=[f"{f.__name__}-{k}" for f, k in PASSED])
def test_a_name_only_passed_to_a_helper_in_a_step_that_copies_its_whole_state(f, k):
    """A write through an item (``M[-2]`` given to a helper, ``O[0][-1] = ...``) makes the step
    copy its whole state at once (``copy_state``); it then copied again, with ``v.copy()``,
    each name the body only passes to a helper: an AttributeError for a float, int, tuple or
    None (random programs, seeds 56066, 56076), and for an array a list of the state holds, a
    copy apart from the list's: the helper's write missed ``L[0]``, a wrong value (0.45 off)
    and gradient."""
    x, M = np.array([0.3, -0.2, 0.5, 0.1, 0.2]), np.ones((2, 5)) * np.linspace(0.5, 1.0, 5)
    _agrees(f, (x, 0.7, M), 2 if f is passes_a_float else 0, k,
            second_order=f is passes_a_float)
