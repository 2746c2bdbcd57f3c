"""One check for programs that mutate and share containers and arrays: the derivative agrees
with plain Python run on copies of the arguments, in every mode.

``check_all(f, args)``: the value of ``value_and_grad`` equals ``f`` called on deep copies; the
gradient matches central differences (``check_grad``: the arguments are left unmodified); the
``vjp`` with a random seed is the seed times that gradient; ``jvp`` along a random tangent
matches a central difference; a second call gives the same result.
"""

import copy

import numpy as np
from gradcheck import assert_grad_like, assert_same, numeric_grad

from srcgrad import jvp, value_and_grad, vjp

rng = np.random.default_rng(7)
STEP = 1e-6


def _random_like(x):
    return rng.normal(size=x.shape) if isinstance(x, np.ndarray) else float(rng.normal())


def on_copies(f):
    """``f`` called on deep copies of its arguments (plain Python may mutate them)."""

    def call(*args):
        return f(*copy.deepcopy(args))

    return call


def check_all(f, args, wrt=0):
    args = tuple(args)
    plain = on_copies(f)
    expected = plain(*args)
    before = copy.deepcopy(args)
    value, g = value_and_grad(f, wrt=wrt)(*args)
    assert_same(before, args, "arguments")
    np.testing.assert_allclose(value, expected, rtol=1e-12, err_msg="value differs from Python")
    assert_grad_like(g, args[wrt])
    np.testing.assert_allclose(g, numeric_grad(plain, args, wrt), rtol=1e-5, atol=1e-7,
                               err_msg="gradient differs from central differences")
    again = value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(again[0], value, rtol=0, atol=0)
    np.testing.assert_allclose(again[1], g, rtol=0, atol=0)

    seed = float(rng.normal())
    np.testing.assert_allclose(vjp(f, wrt=wrt)(*args, seed), seed * np.asarray(g), rtol=1e-12)
    assert_same(before, args, "arguments")

    x = args[wrt]
    t = _random_like(x)
    value_j, tangent = jvp(f, wrt=wrt)(*args, t)
    assert_same(before, args, "arguments")
    np.testing.assert_allclose(value_j, expected, rtol=1e-12)
    plus, minus = list(copy.deepcopy(args)), list(copy.deepcopy(args))
    plus[wrt], minus[wrt] = x + STEP * t, x - STEP * t
    numeric = (plain(*plus) - plain(*minus)) / (2 * STEP)
    np.testing.assert_allclose(tangent, numeric, rtol=1e-5, atol=1e-7)
    return g
