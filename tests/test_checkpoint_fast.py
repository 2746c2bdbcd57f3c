"""checkpoint=: the specialized reverse of a checkpointed loop's segments and the specialized
primal sweep of its steps (checkpoint_fast.py),
a list grown by ``+=`` in a checkpointed loop, and the refusals of concatenations and of field
writes (checkpoint_concat.py). Gradients against the un-checkpointed ones (1e-12 relative) and
central differences."""

from dataclasses import dataclass

import numpy as np
import pytest

import srcgrad
from srcgrad import checkpoint_fast, grad, pullback


def swing(c, L, theta, omega, n):
    """Numbers only: the state (omega, theta), the invariants (L, c)."""
    for _ in range(n):
        alpha = -(9.81 / L) * np.sin(theta) - c * omega
        theta = theta + 0.01 * omega
        omega = omega + 0.01 * alpha
    return theta * theta + omega


def counted_swing(c, L, theta, omega, n):
    """A ``while`` loop: an int (``t``) in its state, an int (``n``) among its invariants."""
    t = 0
    while t < n:
        alpha = -(9.81 / L) * np.sin(theta) - c * omega
        theta = theta + 0.01 * omega
        omega = omega + 0.01 * alpha
        t = t + 1
    return theta * omega


def field(x, w, n):
    """Arrays and a number in the state, an array and a number among the invariants."""
    z = x * 1.0
    s = 0.0
    for _ in range(n):
        z = np.tanh(z * w) + 0.1 * s
        s = s + np.sum(np.cos(z)) * 0.01
    return np.sum(z * z) * s


def _central(f, args, k, eps=1e-6):
    """The central difference of ``f`` in its argument ``k`` (a number or an array)."""
    x = args[k]
    if np.ndim(x) == 0:
        hi, lo = list(args), list(args)
        hi[k], lo[k] = x + eps, x - eps
        return (f(*hi) - f(*lo)) / (2 * eps)
    out = []
    for e in np.eye(len(x)) * eps:
        hi, lo = list(args), list(args)
        hi[k], lo[k] = x + e, x - e
        out.append((f(*hi) - f(*lo)) / (2 * eps))
    return np.array(out)


@pytest.mark.parametrize("f, args, wrt", [
    (swing, (0.09, 1.2, 1.0, 0.0, 40), (0, 1, 2)),
    (counted_swing, (0.09, 1.2, 1.0, 0.0, 40), (0, 1, 3)),
    (field, (np.array([0.3, -0.2, 0.5]), np.array([0.9, 1.1, -0.7]), 30), (0, 1)),
], ids=["numbers", "while", "arrays"])
def test_the_specialized_reverse_equals_the_generic_one(f, args, wrt, monkeypatch):
    """From its first trip (AFTER_TRIPS = 0) the segments are reversed by the specialized
    gradient of the seeded sum: the same gradients as without checkpointing (1e-12), as the
    generic reverse of the segments, and as central differences; a pullback's back twice."""
    want = grad(f, wrt=wrt)(*args)
    for k, g in zip(wrt, want):
        np.testing.assert_allclose(g, _central(f, args, k), rtol=1e-6, atol=1e-9)
    monkeypatch.setattr(checkpoint_fast, "AFTER_TRIPS", 10**9)
    generic = grad(f, wrt=wrt, checkpoint=3)(*args)
    monkeypatch.setattr(checkpoint_fast, "AFTER_TRIPS", 0)
    fast = []
    reverse = checkpoint_fast.reverse

    def counting(*a):
        out = reverse(*a)
        fast.append(out is not None)
        return out

    monkeypatch.setattr(checkpoint_fast, "reverse", counting)
    forwarded = []
    forward = checkpoint_fast._Fast.forward

    def counting_forward(self, *a):
        out = forward(self, *a)
        forwarded.append(out is not None)
        return out

    monkeypatch.setattr(checkpoint_fast._Fast, "forward", counting_forward)
    got = grad(f, wrt=wrt, checkpoint=3)(*args)
    for g, w, h in zip(got, want, generic):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)
    value, back = pullback(f, wrt=wrt, checkpoint=3)(*args)
    assert value == f(*args)  # the primal sweep by the specialized forward: the same numbers
    for g, h, w in zip(back(1.0), back(1.0), want):
        np.testing.assert_allclose([g, h], [w, w], rtol=1e-12, atol=1e-14)
    assert fast and all(fast)  # every segment reversed by the specialized code
    # and the primal sweep of a `for` loop by the specialized forward (a `while` loop's probe
    # runs the loop as written)
    assert f is counted_swing and not forwarded or forwarded and all(forwarded)


def grown(x, n):
    L = []
    z = x * 1.0
    for _ in range(n):
        z = np.sin(z) * x
        L += [z * 2.0]
    return np.sum(np.array(L) ** 2)


def grown_held(x, n):
    z = np.zeros(3)
    L = []
    for i in range(n):
        z += np.exp(np.tanh(x * i))
        L += [z]
    return np.sum(np.array(L) ** 2)


def added(x, n):
    z = x * 1.0
    for _ in range(n):
        z += [0.1, 0.2, 0.3]  # an array: NumPy's addition, not a concatenation
        z = np.sin(z)
    return np.sum(z ** 2)


@pytest.mark.parametrize("f", [grown, grown_held, added], ids=lambda f: f.__name__)
def test_a_list_grown_by_plus_equals_in_a_checkpointed_loop(f):
    """``L += [v]`` of a list the loop carries: ``L.extend([v])`` in the step (was an error
    from the step's vjp: a concatenation of a value it could not see is a list)."""
    x = np.array([0.3, -0.2, 0.5])
    want = grad(f)(x, 5)
    np.testing.assert_allclose(want, _central(f, (x, 5), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad(f, checkpoint=2)(x, 5), want, rtol=1e-12, atol=1e-13)
    value, back = pullback(f, checkpoint=2)(x, 5)
    np.testing.assert_allclose([back(1.0), back(1.0)], [want, want], rtol=1e-12, atol=1e-13)


def concatenated(x, n):
    L = []
    for i in range(n):
        L = L + [x * i]
    return np.sum(np.array(L))


def tupled(x, n):
    T = ()
    for i in range(n):
        T += (x * i,)
    return np.sum(np.array(T))


@dataclass
class Body:
    a: np.ndarray


def fields(x, n):
    p = Body(x * 1.0)
    for _ in range(n):
        p.a = np.sin(p.a) * x
    return np.sum(p.a)


@pytest.mark.parametrize("f, match", [
    (concatenated, "concatenates `L`"), (tupled, "concatenates `T`"),
    (fields, "writes a field of `p`"),
], ids=["list", "tuple", "field"])
def test_concatenations_and_field_writes_are_refused_at_the_loop(f, match):
    """Refused at transform time at the loop's line (were errors when the gradient ran:
    the step's vjp on a concatenation, ``'Body' object has no attribute 'copy'``); without
    checkpoint= they are differentiated."""
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=match) as info:
        grad(f, checkpoint=2)
    assert "checkpoint=" in str(info.value)
    assert info.value.lineno == f.__code__.co_firstlineno + 2  # the loop's line
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(grad(f)(x, 3), _central(f, (x, 3), 0), rtol=1e-6, atol=1e-9)
