"""Second derivatives of functions with loops, branches, list stacks and in-place writes.

Generated code is itself input to every transform: its stacks (`x_saved.append`, `.pop()`),
element saves and branch replays must differentiate again.
"""

import numpy as np
import pytest
from gradcheck import numeric_grad
from sharing_check import check_all

from srcgrad import SrcgradError, grad, hessian, jacobian, jvp, source


def decay(k, x0):
    x = x0
    for _ in range(5):
        x = x - 0.1 * k * x * x
    return x * x


def rosen_loop(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def newton_sqrt(a):
    x = 1.0
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x * x * x


def piecewise(x):
    if x > 0:
        y = np.exp(x)
    else:
        y = x * x * x
    return y


def filled(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
    return np.sum(y * y)


def _second_difference(df, x, eps=1e-5):
    x = np.asarray(x, dtype=float)
    cols = []
    for e in np.eye(x.size).reshape((x.size,) + x.shape):
        cols.append((np.asarray(df(x + eps * e)) - np.asarray(df(x - eps * e))) / (2 * eps))
    return np.array(cols).T.reshape(x.shape + x.shape)


@pytest.mark.parametrize("x", [0.5, -0.5, 1.3])
def test_grad_of_grad_scalar_functions(x):
    for f in (piecewise, lambda_free_decay):
        second = grad(grad(f))(x)
        expected = (grad(f)(x + 1e-5) - grad(f)(x - 1e-5)) / 2e-5
        assert second == pytest.approx(expected, rel=1e-5, abs=1e-6)


def lambda_free_decay(k):
    return decay(k, 2.0)


def test_grad_of_grad_of_a_while_loop():
    second = grad(grad(newton_sqrt))(2.0)
    assert second == pytest.approx(0.75 / np.sqrt(2.0), rel=1e-6)


@pytest.mark.parametrize("f", [rosen_loop, filled])
def test_hessian_of_a_loop_matches_differences_of_the_gradient(f):
    x = np.array([0.3, -0.2, 1.1])
    np.testing.assert_allclose(
        hessian(f)(x), _second_difference(grad(f), x), rtol=1e-5, atol=1e-6
    )


def _jac_target(x):
    return np.sin(x) * np.sum(x ** 2)


def _hess_target(x):
    return np.sum(np.sin(x) ** 2) * x[0]


def trace_of_hessian(x):
    return np.trace(hessian(_hess_target)(x))


def size_of_jacobian(x):
    return np.sum(jacobian(_jac_target)(x) ** 2)


@pytest.mark.parametrize("f", [trace_of_hessian, size_of_jacobian])
def test_jacobian_and_hessian_are_input_to_transforms(f):
    x = np.array([0.3, -0.4, 1.2])
    expected = [(f(x + e) - f(x - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(grad(f)(x), expected, rtol=1e-5)
    assert "def " in source(jacobian(_jac_target)) and "def " in source(hessian(_hess_target))


# ---- reproducers found by tests/test_random_programs.py -----------------------------------


def _param_reassigned_in_loop(a):
    y = 0.0
    for _ in range(3):
        y = y + a
        a = 0.5
    return y


def _iterated_name_reassigned(x):
    s = 0.0
    for e in x:
        s = s + e
        x = x * 2.0
    return s


def _update_in_one_branch(x, a):
    if x[0] > 0.0:
        a += -0.7
    return np.tanh(a)


def _while_and_break(a):
    while a < 3.0 and a > 0.0:
        break
    return a * a


def _element_then_write(x):
    a = x[0]
    x[1:3] = x[0:2]
    return np.sum(x) + np.tanh(a)


def _comprehension_after_return_loop(a, m):
    for _ in range(2):
        if a > 5.0:
            return a
    return sum([t * t for t in m[0]]) * a


@pytest.mark.parametrize(
    "f, args, k",
    [
        (_param_reassigned_in_loop, (0.7,), 0),
        (_iterated_name_reassigned, (np.array([0.3, 0.5]),), 0),
        (_update_in_one_branch, (np.array([0.3, 0.5]), 0.7), 1),
        (_while_and_break, (0.7,), 0),
        (_element_then_write, (np.array([0.3, 0.5, 0.8]),), 0),
        (_comprehension_after_return_loop, (0.7, np.array([[0.3, 0.5], [0.2, 0.1]])), 1),
    ],
)
def test_random_program_reproducers(f, args, k):
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    g = grad(f, wrt=k)(*copies)
    np.testing.assert_allclose(g, numeric_grad(f, args, k), rtol=1e-5, atol=1e-8)


def _alias_update(x):
    y = x
    y += 1.0
    return np.sum(x * x)


def _view_then_write(x):
    z = np.zeros(2)
    r = z[0:1]
    z[0] = x[0]
    return np.sum(r * x[1])


def test_aliasing_updates_are_modelled_or_refused_not_miscomputed():
    x = np.array([0.3, 0.5])
    check_all(_alias_update, (x,))  # x sees y's update, as in Python (was refused)
    with pytest.raises(SrcgradError, match="view"):
        grad(_view_then_write)


def _copy_before_rebinding(a):
    if 0.5 > 0.6:
        a = 0.5
    s = a
    a = 0.5
    return np.tanh(a) + np.tanh(s)


def test_forward_tangent_of_a_copy_survives_the_rebinding_of_its_source():
    _, tangent = jvp(_copy_before_rebinding)(0.3, 1.0)
    assert tangent == pytest.approx(1 - np.tanh(0.3) ** 2, rel=1e-12)


def _negative_base(a):
    a = a / (1.0 + (-0.7) ** 2 ** 2)
    return np.tanh(a)


def test_a_negative_constant_raised_to_a_power_keeps_its_parentheses():
    c = 1.0 + 0.7 ** 4
    assert "(-0.7) **" in source(grad(_negative_base))
    assert grad(_negative_base)(0.3) == pytest.approx((1 - np.tanh(0.3 / c) ** 2) / c, rel=1e-12)


# Found by the random-program hunt of the performance session (3000 programs).


def _augments_what_it_iterates(x):
    s = 0.0
    for e in x:
        x += 0.5 * e  # an array: the loop sees its own updates
        s = s + e * e
    return s + np.sum(x)


def test_augmenting_the_array_a_loop_runs_over_sees_the_update():
    # was a silently wrong value and gradient (srcgrad looped over the values before the
    # update), then refused; now the loop reads the updated array, as in Python
    check_all(_augments_what_it_iterates, (np.array([0.3, -0.2, 0.5]),))


def _writes_a_row_then_rebinds(x, a, M):
    M[1] = (x[0] * M).T @ ((x[0] * M) @ np.log(x ** 2 + 1.0))
    v = -np.cumsum(x)
    M = np.array(M)
    return np.sum(np.cumsum(np.cos(v))) - 0.3 * np.tanh(np.sum(M)) + 0.5 * np.tanh(a)


def test_a_dead_update_of_a_sum_adjoint_is_dropped_with_what_it_reads():
    # dead-code elimination dropped `dM = zero_item(dM, 1)` but kept the later `dM += ...`, which
    # then updated the read-only view `np.sum`'s adjoint is
    x, M = np.array([0.31, 0.23, 0.1, 0.38, -0.27]), np.arange(10.0).reshape(2, 5) / 10
    g = grad(_writes_a_row_then_rebinds, wrt=(0, 1))(x, 0.46, M)
    fresh = lambda x, a, M: _writes_a_row_then_rebinds(x.copy(), a, M.copy())  # noqa: E731
    for k in (0, 1):
        want = numeric_grad(fresh, (x, 0.46, M), k)
        np.testing.assert_allclose(g[k], want, rtol=1e-6, atol=1e-8)


def _helper_binds_its_parameter(u, w):
    w = np.stack([w, w]).T @ (np.stack([w, w]) @ w[::-1])
    return 2.0, np.stack([w, w]).sum(axis=0) / (1.0 + u ** 2)


def _calls_then_writes(x, a, M):
    for i in reversed(range(2)):
        v, s = _helper_binds_its_parameter(np.mean(x), x)
        x[i] *= np.tanh(-0.7)
        M = M.copy()
    return np.sum(x) + 0.5 * np.tanh(a) + np.sum(M * s)


def test_an_inlined_helper_parameter_read_before_a_write_is_not_an_alias_error():
    # the alias check compared line numbers across files: the helper's lines came after the
    # write's, so its reads of `w` (bound to x) looked like reads after the write
    x, M = np.array([1.15, -0.1, 0.81, -0.31, 1.19]), np.eye(2, 5)
    g = grad(_calls_then_writes, wrt=(1, 2))(x, 1.29, M)
    fresh = lambda x, a, M: _calls_then_writes(x.copy(), a, M.copy())  # noqa: E731
    for k in (1, 2):
        want = numeric_grad(fresh, (x, 1.29, M), k)
        np.testing.assert_allclose(g[k - 1], want, rtol=1e-6, atol=1e-8)


def _largest_square(x):
    return max(v * v for v in x) + min(x) ** 3


def test_max_and_min_of_an_iterable_at_every_order():
    x = np.array([0.5, -1.5, 1.2])  # max of squares at index 1, min at index 1
    g = grad(_largest_square)(x)
    np.testing.assert_allclose(g, [0.0, 2 * -1.5 + 3 * 1.5**2, 0.0], rtol=1e-12)
    np.testing.assert_allclose(
        hessian(_largest_square)(x), np.diag([0.0, 2.0 + 6 * -1.5, 0.0]), rtol=1e-12
    )
    _, t = jvp(_largest_square)(x, np.array([1.0, 2.0, 3.0]))
    assert t == pytest.approx(g @ [1.0, 2.0, 3.0], rel=1e-12)
    # a tie goes to the first of the extreme elements, the one Python's max returns
    np.testing.assert_allclose(grad(lambda z: max(z))(np.array([1.0, 3.0, 3.0])), [0, 1, 0])


# --- second order of code the random-program hunt (issue 20) found refused ------------------


def shift_write(x):
    x[1:3] = x[0:2]
    return np.sum(np.tanh(x))


def write_then_rebind(k):
    y = np.zeros(2)
    y[0] = k[0]
    y = y + k
    return np.sum(y**2)


def write_in_loop_then_rebind(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[(i + 1) % 3]
        y = y * 1.5
    return np.sum(np.sin(y))


@pytest.mark.parametrize(
    "f, x",
    [
        # the first-order code reads the view x[0:2] after the write, for its shape only
        (shift_write, np.array([0.3, -0.5, 0.8, 1.1])),
        # the first-order code restores an element of an array popped from its save stack
        (write_then_rebind, np.array([0.3, -0.7])),
        (write_in_loop_then_rebind, np.array([0.4, -0.6, 0.9])),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_second_order_of_writes_that_first_order_saves(f, x):
    h = hessian(f)(x.copy())
    want = np.stack([numeric_grad(lambda z, i=i: grad(f)(z.copy())[i], (x,), 0)
                     for i in range(x.size)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-6)


def sort_then_write_out(x, M):
    y = (-x).copy()
    y.sort()
    np.sin(y, out=x)
    x *= np.tanh(M.T @ (M @ y))
    return np.sum(x)


def test_second_order_after_an_adjoint_is_renamed():
    # the first-order code ends with `dneg_x = dy` after its last `dy += ...`: the alias check of
    # augmented assignments is flow-ordered, so those updates are not refused at second order
    x, M = np.array([1.5, 1.34, 1.48, 0.9, 0.07]), np.arange(10.0).reshape(2, 5) / 10
    h = hessian(sort_then_write_out)(x.copy(), M)
    want = np.stack([numeric_grad(lambda z, i=i: grad(sort_then_write_out)(z.copy(), M)[i],
                                  (x,), 0) for i in range(x.size)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-6)


def self_write(x):
    y = x * 1.0
    y[...] = y
    return np.sum(y * y)


def self_copyto(x):
    y = x.copy()
    np.copyto(y, y)
    return np.sum(y * y * x)


def self_reverse(x):
    y = x * 1.0
    y[::-1] = y
    return np.sum(y * np.arange(3.0) * y)


@pytest.mark.parametrize("f", [self_write, self_copyto, self_reverse], ids=lambda f: f.__name__)
def test_an_array_written_with_itself(f):
    # found by the random programs: `np.copyto(y, y)` gave the gradient of y as zero (its
    # value's part was added before the written elements were zeroed)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(grad(f)(x.copy()), numeric_grad(f, (x,), 0), rtol=1e-6)
    t = np.array([0.3, 1.0, -2.0])
    _, jt = jvp(f)(x.copy(), t)
    np.testing.assert_allclose(jt, numeric_grad(f, (x,), 0) @ t, rtol=1e-6)
    want = np.stack([numeric_grad(lambda z, i=i: grad(f)(z.copy())[i], (x,), 0)
                     for i in range(3)])
    np.testing.assert_allclose(hessian(f)(x.copy()), want, rtol=1e-5, atol=1e-6)


def state_tuple_loss(x):
    # an RNN's shape: a state tuple rebuilt every step and read again for the step's loss
    s = 0.0
    state = (x, x * 0.5)
    for _ in range(2):
        state = (np.sin(state[1]) * state[0], np.tanh(state[0] + state[1]))
        s = s + np.sum(state[0] * state[1])
    return s


def counted_state(x):
    # the same with an integer element, which has no gradient
    t = (x, 2)
    s = 0.0
    for _ in range(2):
        t = (t[0] * 1.5, t[1] + 1)
        s = s + np.sum(t[0] ** 3) * t[1]
    return s


@pytest.mark.parametrize("f", [state_tuple_loss, counted_state])
def test_second_order_of_a_state_tuple_read_after_each_step(f):
    # grad worked; hessian refused "writing into `dstate`, which may share memory": the first
    # order's `dstate = add_at(dstate, 1, g)`, made functional for a second transform, was not
    # known to give a container of its own, and the next step's `dstate[1] += ...` wrote into it
    x = np.array([0.3, -0.7])
    h = hessian(f)(x)
    want = np.array([numeric_grad(lambda x, i=i: grad(f)(x)[i], (x,), 0) for i in range(2)])
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-8)
