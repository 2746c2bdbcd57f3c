"""checkpoint=: binomial checkpointing of loops. The schedule against the binomial optimum (and
brute force), gradients against the un-checkpointed ones (1e-12 relative) and central
differences, the generated schedule as text (golden), and the refusals."""

import functools

import numpy as np
import pytest
from golden_source import assert_golden

import srcgrad
from srcgrad import grad, pullback, source, value_and_grad, vjp
from srcgrad.checkpoint import (
    ADVANCE,
    FORGET,
    RESTORE,
    REVERSE,
    SNAPSHOT,
    binomial_advances,
    revolve,
    snapshots_for,
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


def early(x, n):
    for _step in range(n):
        if x > 3.0:
            break
        x = x * 1.5
    return x


def waiting(x):
    while x < 3.0:
        x = x * 1.5
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


@pytest.mark.parametrize("k", [1, 4])
def test_long_loops_are_scheduled_in_segments(k):
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


def test_auto_takes_the_snapshots_the_budget_holds():
    state = (np.zeros(1000), 0.5)
    assert snapshots_for(10**9, state, range(50)) == 51
    assert 2 <= snapshots_for(10**5, state, range(10**6)) < 20
    assert snapshots_for(10, state, range(10**6)) == 2


def test_refusals_are_located():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="leave early") as info:
        grad(early, checkpoint=2)
    assert info.value.lineno == early.__code__.co_firstlineno + 1  # the loop's line
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="while"):
        grad(waiting, checkpoint=2)
    for bad in (0, -1, True, "some", 1.5):
        with pytest.raises(srcgrad.SrcgradError, match="checkpoint must be"):
            grad(pendulum, checkpoint=bad)
    with pytest.raises(srcgrad.SrcgradError, match="max_memory"):
        grad(pendulum, checkpoint="auto", max_memory="lots")
    with pytest.raises(TypeError):
        srcgrad.hessian(pendulum, checkpoint=2)  # not yet: see docs/api.md
