"""Computing gradients never modifies the caller's arrays (arguments, keywords, seeds)."""

import copy

import numpy as np
import pytest
from gradcheck import assert_same

from srcgrad import grad, value_and_grad, vjp

rng = np.random.default_rng(0)


def reassigns(x, y):
    x = x * 2.0
    x = x + y
    y = np.sin(y)
    return np.sum(x * y)


def aliases(x):
    a = x
    b, c = a, x
    return np.sum(a * b + c)


def accumulates(x, y):
    t = x * y
    u = t + x + y
    return np.sum(t * u + x * x)


def broadcasts(x, b):
    return np.sum(np.tanh(x + b) ** 2)


def matrix_model(X, W, b, y):
    z = np.tanh(X @ W + b)
    return np.mean((z - y) ** 2)


def identity_like(x):
    return x * 1.0


CASES = [
    pytest.param(reassigns, (rng.normal(size=4), rng.normal(size=4)), (0, 1), id="reassigns"),
    pytest.param(aliases, (rng.normal(size=(2, 3)),), 0, id="aliases"),
    pytest.param(accumulates, (rng.normal(size=3), rng.normal(size=3)), (0, 1), id="accumulates"),
    pytest.param(
        broadcasts, (rng.normal(size=(3, 4)), rng.normal(size=4)), (0, 1), id="broadcasts"
    ),
    pytest.param(
        matrix_model,
        (
            rng.normal(size=(5, 3)),
            rng.normal(size=(3, 2)),
            rng.normal(size=2),
            rng.normal(size=(5, 2)),
        ),
        ("W", "b"),
        id="matrix_model",
    ),
]


@pytest.mark.parametrize("f, args, wrt", CASES)
def test_grad_and_value_and_grad_leave_arguments_alone(f, args, wrt):
    before = copy.deepcopy(args)
    grad(f, wrt=wrt)(*args)
    assert_same(before, args)
    value_and_grad(f, wrt=wrt)(*args)
    assert_same(before, args)


def test_keyword_arguments_are_left_alone():
    x, y = rng.normal(size=4), rng.normal(size=4)
    before = (x.copy(), y.copy())
    grad(reassigns, wrt="y")(x, y=y)
    assert_same(before, (x, y))


def test_vjp_leaves_arguments_and_seed_alone():
    x = rng.normal(size=(3, 4))
    seed = rng.normal(size=(3, 4))
    before = (x.copy(), seed.copy())
    g = vjp(identity_like)(x, seed)
    assert_same(before, (x, seed))
    np.testing.assert_allclose(g, seed)


def test_repeated_calls_do_not_accumulate_into_arguments():
    x, y = rng.normal(size=3), rng.normal(size=3)
    before = (x.copy(), y.copy())
    df = grad(accumulates, wrt=(0, 1))
    first = df(x, y)
    second = df(x, y)
    assert_same(before, (x, y))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
