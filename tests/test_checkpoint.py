"""checkpoint=: binomial checkpointing of loops. The schedule against the binomial optimum (and
brute force), gradients against the un-checkpointed ones (1e-12 relative) and central
differences, the generated schedule as text (golden), and the refusals."""

import functools

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import numeric_grad

import srcgrad
import srcgrad.schedule
from srcgrad import grad, pullback, source, value_and_grad, vjp
from srcgrad.checkpoint import snapshots_for
from srcgrad.schedule import (
    ADVANCE,
    FORGET,
    RESTORE,
    REVERSE,
    SHORT,
    SNAPSHOT,
    binomial_advances,
    first_sweep,
    interval_plan,
    online_intervals,
    recomputed,
    replayed_advances,
    revolve,
)


def pendulum(theta, n):
    x = theta[0]
    v = theta[1]
    for _step in range(n):
        a = -np.sin(x) * theta[2]
        x = x + 0.01 * v
        v = v + 0.01 * a
    return x * x + v


def recurrent(w, n):
    h = np.zeros(3)
    y = w * 1.0
    for _step in range(n):
        for j in range(3):
            h[j] = np.tanh(h[j] + w[j] * y[(j + 1) % 3])
        y += 0.1 * h
    return np.sum(y ** 2) + np.sum(h)


TRIPS = []


@srcgrad.nondifferentiable
def trip(x):
    """Counts the evaluations of a loop body (the schedule's advances, made visible)."""
    TRIPS.append(1)
    return 0.0


def per_trip(x, n):
    for _step in range(n):
        parts = []
        parts.append(np.sin(x))
        x = x + 0.1 * parts[0]
    return x


def with_dict(x, n):
    d = {"h": x * 2.0}
    z = x * 1.0
    for _step in range(n):
        z = z + 0.1 * np.sin(d["h"] * z)
    return np.sum(z)


def early(x, n):
    for _step in range(n):
        if x > 3.0:
            break
        x = x * 1.5 + 0.1 * np.sin(x) + trip(x)
    return x


def counted(x, n):
    for _step in range(n):
        x = x * 1.01 + 0.1 * np.sin(x) + trip(x)
    return x


def waiting(x, c):
    y = x * 1.0
    while y < 30.0:
        y = y * 1.1 + c * np.sin(y) + trip(y)
    return y * c


def popping(x):
    xs = [1.0, 2.0, 3.0]
    y = x
    while xs.pop() > 1.5:
        y = y * xs[-1]
    return y


def returns(x):
    for _step in range(3):
        for _inner in range(2):  # a return from an inner loop is not rewritten
            if x > 1.0:
                return x
        x = x * 2.0
    return x


@functools.lru_cache(None)
def fewest(steps, snapshots):
    """Brute force: the least advances to reverse ``steps`` steps with ``snapshots``."""
    if steps <= 1:
        return 0
    if snapshots == 1:
        return steps * (steps - 1) // 2
    return min(m + fewest(steps - m, snapshots - 1) + fewest(m, snapshots)
               for m in range(1, steps))


def replay(steps, snapshots):
    """Run a schedule on step numbers: the steps it reverses, its advances, its peak."""
    held, current, reversed_, advanced, peak = [0], 0, [], 0, 1
    for action, i, j in revolve(steps, snapshots):
        if action == ADVANCE:
            assert current == i
            current, advanced = j, advanced + j - i
        elif action == SNAPSHOT:
            held.append(current)
            peak = max(peak, len(held))
        elif action == RESTORE:
            current = held[-1]
            assert current == i
        elif action == FORGET:
            held.pop()
        else:
            assert action == REVERSE and current == i
            reversed_.append(i)
    return reversed_, advanced, peak


def test_the_schedule_is_the_binomial_optimum():
    for snapshots in range(1, 6):
        for steps in range(1, 40):
            reversed_, advanced, peak = replay(steps, snapshots)
            assert reversed_ == list(range(steps - 1, -1, -1))
            assert peak <= snapshots
            assert advanced == binomial_advances(steps, snapshots) == fewest(steps, snapshots)
    assert replay(1000, 10)[1] == binomial_advances(1000, 10)


def test_the_online_schedule_against_the_binomial_optimum():
    """The snapshots ``Thinning`` keeps while a loop of unknown length runs (at most ``k``) and
    the schedule from them: never more recomputation than the offline schedule from the loop's
    entry (what counting the trips first costs); a ``for`` loop's primal takes the offline
    schedule's first sweep, and the rest recomputes the binomial optimum less that sweep (up to
    its last snapshot)."""
    big = (np.zeros(10**5),)  # a state of 800 kB: one trip per segment
    for k in range(1, 7):
        for n in range(0, 140, 3):
            intervals = online_intervals(n, k, big)
            assert len(intervals) <= k and intervals[0][0] == 0 and intervals[-1][1] == n
            assert all(a[1] == b[0] for a, b in zip(intervals, intervals[1:]))
            assert replayed_advances(intervals, k) == recomputed(intervals, k)
            assert recomputed(intervals, k) <= binomial_advances(n, k)
            at = first_sweep(n, k)  # the primal saves the schedule's advances up to at[-1]
            assert recomputed(interval_plan(at, n, big), k) == binomial_advances(n, k) - at[-1]
    g = grad(counted, checkpoint=3)
    np.testing.assert_allclose(g(0.3, 40), grad(counted)(0.3, 40), rtol=1e-12)
    TRIPS.clear()  # the first call also made the step's vjp
    g(0.3, 40)
    # the primal's 40, the schedule's advances, the reverse sweep's 40
    assert len(TRIPS) == 40 + binomial_advances(40, 3) - first_sweep(40, 3)[-1] + 40
    # a pullback's back runs the schedule from the primal's snapshots, every call: no primal
    value, back = pullback(counted, checkpoint=3)(0.3, 40)
    TRIPS.clear()
    first, again = back(1.0), back(2.0)
    assert len(TRIPS) == 2 * (binomial_advances(40, 3) - first_sweep(40, 3)[-1] + 40)
    np.testing.assert_allclose([first, again / 2], 2 * [g(0.3, 40)], rtol=1e-12)
    assert value == counted(0.3, 40)


@pytest.mark.parametrize("k", [1, 3, "auto"])
def test_gradients_equal_the_unckeckpointed_ones(k):
    theta = np.array([0.3, 0.2, 1.5])
    want = grad(pendulum)(theta, 30)
    got = grad(pendulum, checkpoint=k, max_memory="2kB")(theta, 30)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    eps = 1e-6
    central = [(pendulum(theta + e, 30) - pendulum(theta - e, 30)) / (2 * eps)
               for e in np.eye(3) * eps]
    np.testing.assert_allclose(got, central, rtol=1e-6)
    value, g = value_and_grad(pendulum, checkpoint=k)(theta, 30)
    assert value == pendulum(theta, 30)
    np.testing.assert_allclose(g, want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(vjp(pendulum, checkpoint=k)(theta, 30, 2.0), 2 * want, rtol=1e-12)
    value, back = pullback(pendulum, checkpoint=k)(theta, 30)
    np.testing.assert_allclose(back(1.0), want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(back(1.0), want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("k", [1, 3])
def test_nested_loops_and_writes_in_place(k):
    w = np.array([0.3, -0.2, 0.5])
    want = grad(recurrent)(w, 9)
    np.testing.assert_allclose(grad(recurrent, checkpoint=k)(w, 9), want, rtol=1e-12, atol=0)
    central = [(recurrent(w + e, 9) - recurrent(w - e, 9)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(want, central, rtol=1e-6)
    assert w.tolist() == [0.3, -0.2, 0.5]
    # a list each trip builds afresh is not carried (it was, as None at entry: an IndexError)
    np.testing.assert_allclose(grad(per_trip, checkpoint=k)(0.4, 7), grad(per_trip)(0.4, 7),
                               rtol=1e-12)
    # a dict read by every step: its cotangents from the steps add key by key
    np.testing.assert_allclose(grad(with_dict, checkpoint=k)(w, 7), grad(with_dict)(w, 7),
                               rtol=1e-12)


@pytest.mark.parametrize("k", [1, 4])
def test_long_loops_are_scheduled_in_segments(k, monkeypatch):
    monkeypatch.setattr(srcgrad.schedule, "SEGMENT", 16)  # several segments in 150 steps
    theta = np.array([0.3, 0.2, 1.5])
    want = grad(pendulum)(theta, 150)  # longer than SHORT: segments of SEGMENT steps
    np.testing.assert_allclose(grad(pendulum, checkpoint=k)(theta, 150), want, rtol=1e-12)
    w = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(grad(recurrent, checkpoint=k)(w, 70), grad(recurrent)(w, 70),
                               rtol=1e-12)


def test_source_shows_the_schedule():
    text = source(grad(pendulum, checkpoint=3))
    assert_golden("pendulum_checkpoint.py", text)
    for word in ("revolve(", "ADVANCE", "SNAPSHOT", "RESTORE", "FORGET", "pendulum_step("):
        assert word in text
    assert_golden("waiting_checkpoint.py", source(grad(waiting, checkpoint=3)))
    # pullback of a checkpointed loop: back is the adjoint's schedule from the snapshots the
    # primal kept (it pops a copy of their list), no primal
    assert_golden("pendulum_checkpoint_pullback.py",
                  source(pullback(pendulum, checkpoint=3).__wrapped__))


def test_auto_takes_the_snapshots_the_budget_holds():
    state = (np.zeros(1000), 0.5)
    assert snapshots_for(10**9, state, range(50)) == 51
    assert 2 <= snapshots_for(10**5, state, range(10**6)) < 20
    assert snapshots_for(10, state, range(10**6)) == 2


def test_loops_that_leave_early(monkeypatch):
    """``while`` and ``break``: the primal keeps snapshots online (``Thinning``), the adjoint
    runs the binomial schedule from each: ``2 n + recomputed(intervals, k)`` body evaluations
    in all (the primal's, the recomputation's and the reverse sweep's)."""
    for x, n in ((0.2, 40), (5.0, 40), (0.001, 100)):
        np.testing.assert_allclose(grad(early, checkpoint=1)(x, n), grad(early)(x, n),
                                   rtol=1e-12)
    for k, (x, c) in ((1, (0.02, 0.01)), ("auto", (0.02, 0.01)), (1, (40.0, 0.3))):
        got = grad(waiting, wrt=(0, 1), checkpoint=k)(x, c)
        np.testing.assert_allclose(got, grad(waiting, wrt=(0, 1))(x, c), rtol=1e-12)
    h = 1e-6
    central = (waiting(0.02 + h, 0.01) - waiting(0.02 - h, 0.01)) / (2 * h)
    np.testing.assert_allclose(grad(waiting, checkpoint=2)(0.02, 0.01), central, rtol=1e-6)
    value, back = pullback(waiting, checkpoint=3)(0.02, 0.01)
    np.testing.assert_allclose([back(1.0), back(1.0)], 2 * [grad(waiting)(0.02, 0.01)],
                               rtol=1e-12)
    monkeypatch.setattr(srcgrad.schedule, "SEGMENT", 16)
    TRIPS.clear()
    waiting(0.002, 0.01)
    n = len(TRIPS)
    assert n > SHORT  # scheduled in segments
    want = grad(waiting)(0.002, 0.01)
    for k in (2, 5):
        g = grad(waiting, checkpoint=k)
        np.testing.assert_allclose(g(0.002, 0.01), want, rtol=1e-12)
        TRIPS.clear()
        g(0.002, 0.01)
        intervals = online_intervals(n, k, (0.002,))
        assert len(intervals) <= k and intervals[0][0] == 0 and intervals[-1][1] == n
        assert len(TRIPS) == 2 * n + replayed_advances(intervals, k)
        assert replayed_advances(intervals, k) <= recomputed(intervals, k)
        assert recomputed(intervals, k) <= binomial_advances(-(-n // 16), k) * 16


def orbit(theta, n):
    x = theta * 1.0
    for _step in range(n):
        x = x + 0.01 * np.sin(x[::-1]) * theta
    return x


def test_hessian_hvp_and_jacobian_through_checkpointed_loops():
    theta = np.array([0.3, 0.2, 1.5])
    central = np.stack([(orbit(theta + e, 20) - orbit(theta - e, 20)) / 2e-6
                        for e in np.eye(3) * 1e-6], axis=1)
    np.testing.assert_allclose(srcgrad.jacobian(orbit, method="rev", checkpoint=2)(theta, 20),
                               central, rtol=1e-7)
    H = srcgrad.hessian(pendulum, checkpoint=2)(theta, 30)
    g = grad(pendulum)
    central = np.stack([(g(theta + e, 30) - g(theta - e, 30)) / 2e-6 for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(H, central, rtol=1e-6, atol=1e-8)
    gw = grad(waiting, wrt=(0, 1))  # hvp along x, through the while loop's schedule
    col = (np.array(gw(0.2 + 1e-6, 0.3)) - gw(0.2 - 1e-6, 0.3)) / 2e-6
    hv = srcgrad.hvp(waiting, wrt=(0, 1), checkpoint=2)(0.2, 0.3, (1.0, 0.0))
    np.testing.assert_allclose(hv, col, rtol=1e-6)


def spin(x, n):
    for _step in range(n):
        x = x + 0.1 * np.sin(x) * x
    return x


def test_reverse_over_reverse_through_the_kept_snapshots():
    """grad of a checkpointed gradient: the outer sweep's cotangents of the snapshots the loop
    kept flow back into the loop (without them the gradient here is 0.0)."""
    g = grad(spin)
    want = (g(0.7 + 1e-6, 20) ** 2 - g(0.7 - 1e-6, 20) ** 2) / 2e-6
    got = grad(lambda x: grad(spin, checkpoint=2)(x, 20) ** 2)(0.7)
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_refusals_are_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="return from") as info:
        grad(returns, checkpoint=2)
    assert info.value.lineno == returns.__code__.co_firstlineno + 1  # the loop's line
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="its test may change"):
        grad(popping, checkpoint=2)  # the replay does not evaluate the test
    for bad in (0, -1, True, "some", 1.5):
        with pytest.raises(srcgrad.SrcgradError, match="checkpoint must be"):
            grad(pendulum, checkpoint=bad)
    with pytest.raises(srcgrad.SrcgradError, match="max_memory"):
        grad(pendulum, checkpoint="auto", max_memory="lots")


def leaving_for(x, n):
    y = x * 1.0
    for i in range(n):
        for j in range(2):
            if j == 1:
                continue  # the inner loop's: the step keeps it
            y = y + np.sin(y) * 0.1
        if i % 3 == 0:
            continue
        y = np.sin(y) + 0.1 * x
        if np.sum(y) > 2.2:
            return np.sum(y * y)
    return np.sum(y)


def leaving_while(x, n):
    y = x
    t = 0
    while t < n:
        t += 1
        if t % 2 == 0:
            y = y * 1.01
            continue
        y = y * 0.9 + np.cos(y)
        if t == 7:
            return np.sum(y) * 2.0
    return np.sum(y)


@pytest.mark.parametrize("f", [leaving_for, leaving_while])
def test_loops_with_return_and_continue_are_checkpointed(f):
    """``return`` becomes a break with a flag, ``continue`` a flag guarding the rest of the
    trip: the loop is checkpointed (not refused) and gives grad's gradient, at every trip count
    (the return taken or not)."""
    x = np.array([0.3, 0.5, 0.8])
    assert "checkpointed_loop" in source(grad(f, checkpoint=2))
    for n in (0, 2, 9, 20):
        np.testing.assert_allclose(grad(f, checkpoint=2)(x, n), grad(f)(x, n), rtol=1e-12)


def dead_loop(x, n):
    for i in range(n):
        unused = np.sin(x) * i  # noqa: F841
    y = x * 1.0
    for _ in range(n):
        y = np.cos(y) + x
    return np.sum(y)


def test_a_loop_that_carries_no_state_is_left_as_it_is():
    x = np.array([0.2, 0.4])
    np.testing.assert_allclose(grad(dead_loop, checkpoint=2)(x, 5), grad(dead_loop)(x, 5),
                               rtol=1e-12)
    text = source(grad(dead_loop, checkpoint=2))
    assert "for i in range(n):" in text and "checkpointed_loop(" in text  # the first one plain


def shared_after(x, P):
    acc = []
    for i in range(4):
        if np.dot(P[0], x) <= P[0][i] + 0.35:
            acc.append(np.sum(x))
    x -= x
    return np.sum(x * np.sum(P[1])) + len(acc)


def test_a_tuple_argument_gets_a_tuple_of_zeros_through_a_checkpointed_loop():
    """The loop's call may make ``x`` an element of ``P`` for the sharing pass; the gradient of
    ``P`` was then ``[None, array]`` (a list with None) where grad gives a tuple of zeros."""
    x = np.array([0.43, -0.87, 1.5, -0.93, 0.95])
    P = (np.array([-0.56, -0.14, 1.39, -0.21, 1.31]), np.ones((2, 5)))
    got = grad(shared_after, wrt=1, checkpoint=2)(x.copy(), P)
    assert type(got) is tuple and all(isinstance(g, np.ndarray) for g in got)
    for g, w in zip(got, grad(shared_after, wrt=1)(x.copy(), P)):
        np.testing.assert_array_equal(g, w)


def held_before(x, w):
    z = w * 1.0
    L = [z]
    for _ in range(4):
        z += np.sin(L[0]) * x  # L[0] is z
        L.append(z * 0.5)
    return np.sum(L[0] * L[-1]) + np.sum(z)


def held_by_a_dict(x, w):
    z = w * 1.0
    d = {"a": z, "c": z}  # z held twice
    for _ in range(4):
        z *= np.cos(x) + 0.5
        d["b"] = z
        z += d["a"] * 0.1 + d["c"] * x
    return np.sum(d["a"] ** 2 + d["b"] * d["c"])


def held_until(x, w):
    z = w * 1.0
    L = [z]
    for _ in range(6):
        z += x * 0.3
        L.append(z)
        if np.sum(z) > 1.0:
            break
    return np.sum(L[0] * L[-1])


def the_callers_updated(x, z):
    for _ in range(4):
        z += np.sin(z) * x  # the caller's array: srcgrad's step updates a copy
    return np.sum(z ** 2)


def written_through_a_list(x, w):
    L = [w * 1.0, w * 2.0]
    for _ in range(5):
        O = [L]
        O[0][-1] += np.sin(x)  # writes into L's last array: L is the loop's state
        w = w * 0.9 + np.cos(L[-1]) * x
    return np.sum(np.tanh(np.array(L))) + np.sum(w)


def written_through_a_dict(x, w):
    L = [w * 1.0]
    for _ in range(5):
        d = {"h": L}
        d["h"][0] *= np.cos(x)
        w = w * 0.9 + np.sin(L[0])
    return np.sum(np.tanh(np.array(L))) + np.sum(w)


def written_through_a_tuple(x, w):
    y = w * 1.0
    for _ in range(5):
        t = (y, w)
        t[0][1:3] = t[0][1:3] * 0.5 + x[:2]
        w = w * 0.9 + np.sin(y)
    return np.sum(np.tanh(y)) + np.sum(w)


def written_through_a_list_another_name_holds(x, w):
    L = [w * 1.0]
    Z = L
    for _ in range(5):
        O = [L]
        O[0][-1] += x
    return np.sum(np.array(Z))


@pytest.mark.parametrize("f", [held_by_a_dict, held_until, the_callers_updated,
                               written_through_a_list, written_through_a_dict,
                               written_through_a_tuple], ids=lambda f: f.__name__)
def test_an_array_updated_in_place_while_a_container_of_the_state_holds_it(f):
    """``z += v`` while a list or dict of the loop's state holds ``z`` (was refused): the
    snapshots are copied with one memo (the copy of ``z`` is the one the copied list holds),
    and the step copies its whole state at once and updates it in place as Python does.
    Gradients equal the un-checkpointed ones (snapshots taken where the list holds ``z``) and
    central differences; back twice. A copy per item gave gradients off by 1.7 to 27 here.
    ``written_through_*``: the body writes into the state through a name it binds to a
    container holding it (``O = [L]; O[0][-1] += v``); ``L`` was taken for an invariant, and
    its gradient was lost (random programs, seed 56000)."""
    x, w = np.array([-1.4, 0.8, -0.85]), np.array([-0.58, -0.1, -0.88])
    want = grad(f)(x, w)
    eps = 1e-6
    central = [(f(x + e, w.copy()) - f(x - e, w.copy())) / (2 * eps) for e in np.eye(3) * eps]
    np.testing.assert_allclose(want, central, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(f, checkpoint=2)(x, w), want, rtol=1e-12, atol=1e-13)
    value, back = pullback(f, checkpoint=2)(x, w)
    assert value == f(x, w.copy())
    np.testing.assert_allclose([back(1.0), back(1.0)], [want, want], rtol=1e-12, atol=1e-13)
    assert w.tolist() == [-0.58, -0.1, -0.88]


def test_a_held_array_updated_in_place_at_second_order():
    x, w = np.array([-1.4, 0.8, -0.85]), np.array([-0.58, -0.1, -0.88])
    h = srcgrad.hessian(held_before)(x, w)
    g = grad(held_before)
    eps = 1e-6
    central = [(g(x + e, w) - g(x - e, w)) / (2 * eps) for e in np.eye(3) * eps]
    np.testing.assert_allclose(h, central, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcgrad.hessian(held_before, checkpoint=2)(x, w), h, rtol=1e-12,
                               atol=1e-13)


def test_a_write_through_a_list_another_name_bound_before_holds_is_refused():
    f = written_through_a_list_another_name_holds
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="`Z`, bound before") as info:
        grad(f, checkpoint=2)
    assert info.value.lineno == f.__code__.co_firstlineno + 3


# --- checkpoint=: names read after the loop (mutation20d) ----------------------------------

def _index_after_assign(x, n):
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    i = 2.0
    for _ in range(2):
        x = x * i
    return x


def _index_after_aug(x, n):
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    i = 2.0
    i += 1.0
    return x * i


def _index_after_del(x, n):
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    i = 2.0
    y = x * i
    del i
    return y


def _index_after_iter(x, n):
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    i = 2
    for _ in range(i):
        x = np.cos(x)
    return x


@pytest.mark.parametrize("f", [_index_after_assign, _index_after_aug, _index_after_del,
                               _index_after_iter],
                         ids=lambda f: f.__name__[len("_index_after_"):])
def test_checkpointed_loops_index_bound_again_after_it(f):
    # pullback.exposed_reads, as checkpoint= reads it: the loop's index bound again after the
    # loop (an assignment, `+=`, a `del`, a later loop's iterable or body) is not "read after
    # it"; exposed_reads' `- bound` dropped refused these
    got = srcgrad.grad(f, checkpoint=2)(0.3, 5)
    np.testing.assert_allclose(got, numeric_grad(f, (0.3, 5), 0), rtol=1e-6)


def _index_after_branch(x, n):
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    if x > 0.0:
        i = 2.0
    return x * i


def _index_read_by_a_del_after(x, n):
    ys = [x, x, x]
    for i in range(n):
        x = np.sin(x) * (1.0 + 0.1 * i)
    del ys[i - n]
    return x * len(ys)


@pytest.mark.parametrize("f", [_index_after_branch, _index_read_by_a_del_after],
                         ids=["branch", "del"])
def test_checkpointed_loops_index_read_after_it_is_refused(f):
    # exposed_reads: a branch binds only what both of its sides bind (`then` taken alone
    # accepted the first, and x * i read a name the checkpointed loop never gave back); a
    # `del ys[i - n]` reads i (exposed_reads with `deleted` alone accepted the second)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="is read after it"):
        srcgrad.grad(f, checkpoint=2)(0.3, 5)


def rebound_then_written(z, a, n=3):
    y = z * 0.8
    for _ in range(n):
        y = np.sin(y * a) * 0.8
    y[2] = a * 2.0
    return np.sum(y * z) * a


def rebound_while_then_written(z, a):
    y = z * 0.8
    k = 0
    while k < 3:
        y = np.sin(y * a) * 0.8
        k += 1
    y[0] += a
    return np.sum(y * z)


def held_rebound_then_written(z, a):
    y = z * 0.8
    for _ in range(3):
        w = y
        y = np.sin(w * a) * 0.8
    y[2] = a * 2.0
    return np.sum(y * z)


@pytest.mark.parametrize("f, args", [
    (rebound_then_written, ()), (rebound_then_written, (0,)), (rebound_while_then_written, ()),
], ids=["for", "no_trip", "while"])
def test_a_write_after_a_checkpointed_loop_into_what_it_made_afresh(f, args):
    """A write after the loop into an array its body binds only to new arithmetic (``y =
    np.sin(y * a) * 0.8``) was refused with checkpoint= ("writing into `y`, which may share
    memory ..."), though grad(f) works (random complex programs, seeds 57000 and 57001)."""
    z = np.array([0.3, -0.4, 0.5])
    g = lambda z, a: f(z, a, *args)  # noqa: E731
    dz, da = grad(f, wrt=(0, 1), checkpoint=2)(z, 0.7, *args)
    eps = 1e-6
    np.testing.assert_allclose(dz, [(g(z + e, 0.7) - g(z - e, 0.7)) / (2 * eps)
                                    for e in np.eye(3) * eps], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(da, (g(z, 0.7 + eps) - g(z, 0.7 - eps)) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(value_and_grad(f, checkpoint=2)(z, 0.7, *args)[0], g(z, 0.7),
                               rtol=1e-14)
    assert z.tolist() == [0.3, -0.4, 0.5]


def test_a_write_after_a_checkpointed_loop_into_what_another_name_held_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="writing into `y`"):
        grad(held_rebound_then_written, checkpoint=2)(np.ones(3), 0.7)


def bound_in_a_try(x):
    s = 0.0
    for i in range(3):
        try:
            v = x * (i + 1.0)
            v[2] = v[1] * x[0]
        finally:  # reads `v`: it is state, None when the loop starts
            s = s + np.sum(v * v)
    return s


def read_on_later_trips(x):
    s = 0.0
    for i in range(4):
        if i > 0:
            v[1] = v[0] * x[2]  # noqa: F821 (bound on the trip before)
            s = s + np.sum(v * v)  # noqa: F821
        v = x * (i + 1.0)  # noqa: F841
    return s


def test_state_the_loop_binds_first_is_copied_only_once_bound():
    # the step copied `v` (None before the first trip) with `v.copy()`: an AttributeError
    x = np.linspace(0.1, 0.5, 5)
    want = value_and_grad(bound_in_a_try)(x)
    got = value_and_grad(bound_in_a_try, checkpoint=2)(x)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    np.testing.assert_allclose(got[1], numeric_grad(bound_in_a_try, (x,), 0), rtol=1e-6)


def test_a_refusal_in_a_loop_step_names_the_users_line():
    # the step is transformed when the sweep reaches it: its refusal at the user's file and line
    x = np.linspace(0.1, 0.5, 5)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="writing into `v`") as info:
        value_and_grad(read_on_later_trips, checkpoint=2)(x)
    assert info.value.filename == __file__
    assert info.value.lineno == read_on_later_trips.__code__.co_firstlineno + 4


def calls_local_functions(x, a):
    def g(t):
        return np.exp(np.tanh(t / (1.0 + a ** 2)))

    def h(t):
        return g(t) * 2.0

    y = x * 1.0
    for _ in range(1, 3):
        y = h(y) * 0.5
        a = a * 1.1  # state that g reads
    return np.sum(y) + a


def calls_local_lambdas(x, a):
    g = lambda t: np.cos(t / (1.0 + a ** 2))  # noqa: E731
    h = lambda t: g(t) * 2.0 + c  # noqa: E731
    c = np.sum(x)  # (bound after the lambdas, before the loop)
    y = x * 1.0
    for _ in range(1, 3):
        y = y + h(y) * 0.5
        a = a * 1.1  # state that g reads
    return np.sum(y) + a


@pytest.mark.parametrize("f", [calls_local_functions, calls_local_lambdas],
                         ids=lambda f: f.__name__)
def test_functions_defined_before_the_loop_are_defined_again_in_its_step(f):
    # `def g(t): ...` before the loop, called in it: the step had no `g` (a NameError); `g =
    # lambda t: ...` was passed to the step as an invariant, refused as a local function used
    # as a value (random programs, seed 56064)
    x = np.array([0.3, -0.2, 0.5])
    for wrt in (0, 1):
        want = grad(f, wrt=wrt)(x, 0.7)
        np.testing.assert_allclose(grad(f, wrt=wrt, checkpoint=2)(x, 0.7), want, rtol=1e-12)
        np.testing.assert_allclose(want, numeric_grad(f, (x, 0.7), wrt), rtol=1e-6)


def calls_a_function_defined_in_a_branch(x, a):
    if a > 0.5:
        def g(t):
            return np.cos(t * a)
    y = x * 1.0
    for _ in range(3):
        y = y + g(y) * 0.5
    return np.sum(y)


def test_a_function_defined_in_a_branch_before_the_loop_is_refused_at_the_loop():
    # (the step had no `g`: a NameError when the derivative ran)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="it calls `g`") as info:
        grad(calls_a_function_defined_in_a_branch, wrt=1, checkpoint=2)
    assert info.value.filename == __file__
    assert info.value.lineno == calls_a_function_defined_in_a_branch.__code__.co_firstlineno + 5


def numpy_calls_in_and_before_the_loop(x, a):
    y = x.copy()
    np.add.at(y, [2, 1, 1], 0.5)
    for _ in range(3):
        idx = np.arange(3)[::-1].copy()
        np.put(idx, [1], [0])  # (`np` was taken for state the loop writes into: `np = None`)
        y = np.sin(y[idx]) * a + y
    return np.sum(y)


def test_a_numpy_function_writing_in_place_in_the_loop_leaves_numpy_alone():
    # random programs, seed 56077: np.put(idx, ...) in the loop made `np` the loop's state,
    # and the function's `np.add.at` before the loop was refused as a method of `np_add`
    x = np.array([0.3, -0.2, 0.5])
    for wrt in (0, 1):
        want = grad(numpy_calls_in_and_before_the_loop, wrt=wrt)(x, 0.7)
        got = grad(numpy_calls_in_and_before_the_loop, wrt=wrt, checkpoint=2)(x, 0.7)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(
            want, numeric_grad(numpy_calls_in_and_before_the_loop, (x, 0.7), wrt), rtol=1e-6)


def held_then_written_after_the_loop(x, a):
    z = (-x).copy()
    L = []
    for _ in range(2):
        z += x * a
        L.append(z)  # L holds z twice
    L[0] *= np.tanh(x)  # changes z too
    return np.sum(z * 1.5) + 0.5 * np.tanh(np.sum(np.array(L)))


def rebound_then_written_through_the_list(x, a):
    z = (-x).copy()
    L = []
    for _ in range(3):
        z = z + x * a  # a new array per trip: L holds three, the last is z
        L.append(z)
    L[2] *= np.tanh(x)
    return np.sum(z * 1.5) + np.sum(L[0] * L[2])


def held_by_a_dict_then_written(x, a):
    z = x.copy()
    d = {}
    for _ in range(3):
        z += np.cos(x) * a
        d["k"] = z
    d["k"] *= np.tanh(x)
    return np.sum(z ** 2) + np.sum(d["k"])


def held_by_a_while_loop_then_written(x, a):
    z = (-x).copy()
    L = []
    i = 0
    while i < 3:
        z += x * a
        L.append(z)
        i += 1
    L[1] -= np.sin(x)
    return np.sum(z * 1.5) + np.sum(np.array(L) ** 2)


def held_until_a_break_then_written(x, a):
    z = (-x).copy()
    L = []
    for i in range(5):
        z += x * a
        L.append(z)
        if i == 2:
            break
    L[0] *= np.tanh(x)
    return np.sum(z * 1.5) + np.sum(np.array(L) ** 2)


def held_then_an_element_updated(x, a):
    z = (-x).copy()
    L = []
    for _ in range(2):
        z += x * a
        L.append(z)
    L[0][1] *= 3.0  # z[1] too
    return np.sum(z * z) + np.sum(np.array(L) ** 2)


def held_by_two_lists_then_written(x, a):
    z = (-x).copy()
    L = []
    M = []  # (`L, M = [], []` is refused, checkpoint= or not)
    for _ in range(2):
        z += x * a
        L.append(z)
        M.append(z)
    M[1] *= x  # z, L[0] and L[1] too
    return np.sum(z * 1.5) + np.sum(L[0] * L[1])


def held_in_tuples_then_updated_by_a_name(x, a):
    z = (-x).copy()
    w = x * 2.0
    L = []
    for _ in range(2):
        z += x * a
        L.append((z, w))
    u = L[1][0]
    u *= x
    return np.sum(z * 1.5) + np.sum(L[0][0] ** 2) + np.sum(w)


def held_in_inner_lists_then_written(x, a):
    z = (-x).copy()
    L = []
    for _ in range(2):
        z += x * a
        L.append([z, x])
    L[0][0] += x
    return np.sum(z * 1.5) + np.sum(L[1][0] * 2.0)


def held_then_a_slot_replaced(x, a):
    z = (-x).copy()
    L = []
    for _ in range(2):
        z += x * a
        L.append(z)
    L[0] = x * 2.0  # z is not changed
    return np.sum(z * 1.5) + np.sum(np.array(L) ** 2)


def updated_after_the_loop_beside_an_invariant_bound_in_a_loop(x, a):
    for e in [1.0, 2.0]:  # (not checkpointed: over a list)
        w = x * e
    z = x.copy()
    for _ in range(2):
        z = z * a + w  # w: an invariant, which the loop's state may hold
    z += x  # (w was taken for a holder of z that may not be bound yet: refused)
    return np.sum(z * z) + np.sum(w)


def bound_to_an_invariant_then_updated(x, a):
    z = x.copy()
    g = x * 2.0
    for i in range(3):
        z = z * a
        if i == 2:
            z = g  # the loop returns g's array as z
    z *= x  # g changes too
    return np.sum(z ** 2) + np.sum(g * x)


def invariant_appended_then_written(x, a):
    y = x * 3.0
    L = []
    for _ in range(2):
        L.append(y)  # y: an invariant of the loop, held by its state
    L[0] *= x  # y changes too
    return np.sum(y ** 2) + np.sum(L[1])


def invariant_held_by_a_dict_then_written(x, a):
    g = x * 2.0
    z = x.copy()
    d = {}
    for _ in range(2):
        z = z * a + g
        d["a"] = g
    d["a"] *= x  # g changes too (2.3 off before 3917711)
    return np.sum(g ** 2) + np.sum(z)


WRITTEN_AFTER_THE_LOOP = [
    (held_then_written_after_the_loop, 2),
    (rebound_then_written_through_the_list, 2), (held_by_a_dict_then_written, "auto"),
    (held_by_a_while_loop_then_written, 2), (held_until_a_break_then_written, 2),
    (held_then_an_element_updated, 2), (held_by_two_lists_then_written, "auto"),
    (held_in_tuples_then_updated_by_a_name, 2), (held_in_inner_lists_then_written, 2),
    (held_then_a_slot_replaced, 2), (updated_after_the_loop_beside_an_invariant_bound_in_a_loop, 2),
    (bound_to_an_invariant_then_updated, 2), (invariant_appended_then_written, "auto"),
    (invariant_held_by_a_dict_then_written, 2),
]


@pytest.mark.parametrize("f, k", WRITTEN_AFTER_THE_LOOP,
                         ids=[f"{f.__name__}-{k}" for f, k in WRITTEN_AFTER_THE_LOOP])
def test_a_write_after_the_loop_through_a_container_that_holds_its_state(f, k):
    """After a checkpointed loop, the list (dict) it returns holds the array it returns, as in
    Python, and a write through the container reaches the array (and back): values equal
    Python's, gradients central differences, vjp and jvp agree. It was a wrong value and
    gradient (1.496 where Python computes 1.0816, random programs, seed 56049), then an error
    when it ran (`z` refers to the array in `L`). ``bound_to_an_invariant_then_updated``: the
    state array the loop returns is its invariant's (`z = g`); `z *= x` after the loop left `g`
    as it was, a wrong value (0.79 off) and gradient, until the loop's call was taken for one
    that may return what it is given (normalize/sharing.py, 3917711); so was
    ``invariant_appended_then_written`` (6.1 off)."""
    x = np.array([0.3, -0.2, 0.5, 0.7, -0.1])
    want = f(x.copy(), 0.8)
    value, g = value_and_grad(f, checkpoint=k)(x, 0.8)
    np.testing.assert_allclose(value, want, rtol=1e-14)
    np.testing.assert_allclose(g, numeric_grad(f, (x, 0.8), 0), rtol=1e-6, atol=1e-8)
    t = np.linspace(0.1, 0.9, 5)
    np.testing.assert_allclose(srcgrad.jvp(f)(x, 0.8, t)[1], g @ t, rtol=1e-12)
    np.testing.assert_allclose(vjp(f, checkpoint=k)(x, 0.8, 2.0), 2.0 * g, rtol=1e-14)
    assert x.tolist() == [0.3, -0.2, 0.5, 0.7, -0.1]


def held_then_scaled(x):
    z = x * 1.0
    L = []
    for _ in range(2):
        z += x
        L.append(z)
    L[0] *= x  # z too: z is 3 x**2
    return np.sum(z * z)


def test_a_write_after_the_loop_through_a_container_at_second_order():
    x, t = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.5, 0.9])
    assert held_then_scaled(x) == np.sum(9 * x ** 4)
    np.testing.assert_allclose(grad(held_then_scaled, checkpoint=2)(x), 36 * x ** 3, rtol=1e-14)
    np.testing.assert_allclose(srcgrad.hvp(held_then_scaled, checkpoint=2)(x, t),
                               108 * x * x * t, rtol=1e-14)
