"""A list, tuple or dict argument that holds one array twice, written into by the function.

In Python ``L[0] += x`` changes the array in place, so ``L[1]`` (the same array) sees the write.
srcgrad writes into a copy of the argument item by item, so it refuses such an argument when
it runs rather than compute the value of distinct arrays (which it did: 4.5 where Python gives
9.75). Distinct arrays work and match Python and central differences.
"""

import copy

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SrcgradError

X = np.array([0.5, -1.0, 2.0])
B = np.array([1.0, 2.0, 3.0])


def list_item_updated(x, L):
    L[0] += x
    return np.sum(L[1] * x)


def dict_item_updated(x, d):
    d["a"] *= x
    return np.sum(d["b"] * x)


def nested_item_updated(x, T):
    T[0][0] += x
    return np.sum(T[1] * x)


SHARED = [
    (list_item_updated, lambda: [B, B]),
    (dict_item_updated, lambda: {"a": B, "b": B}),
]
TRANSFORMS = {
    "grad": lambda f, a: srcgrad.grad(f)(X, a),
    "grad wrt the container": lambda f, a: srcgrad.grad(f, wrt=1)(X, a),
    "jvp": lambda f, a: srcgrad.jvp(f)(X, a, X),
    "hvp": lambda f, a: srcgrad.hvp(f)(X, a, X),  # (the check survives a second transform)
}


@pytest.mark.parametrize("how", TRANSFORMS)
@pytest.mark.parametrize("f, arg", SHARED, ids=[f.__name__ for f, _ in SHARED])
def test_an_argument_holding_one_array_twice_is_refused_when_it_runs(f, arg, how):
    a = arg()
    with np.errstate(all="ignore"):
        python = f(X.copy(), copy.deepcopy(a))
        distinct = f(X.copy(), {k: v.copy() for k, v in a.items()} if isinstance(a, dict)
                     else [v.copy() for v in a])
    assert python != pytest.approx(distinct)  # (a copy of each item would give another value)
    with pytest.raises(SrcgradError, match="holds one ndarray in two places"):
        TRANSFORMS[how](f, a)
    assert np.array_equal(B, [1.0, 2.0, 3.0])


WORKS = [
    (list_item_updated, lambda: [B.copy(), B * 2.0]),  # distinct arrays
    # a nested write follows every place that holds the array (shared_positions)
    (nested_item_updated, lambda: ([B, 1.0], B)),
]


@pytest.mark.parametrize("f, arg", WORKS, ids=[f.__name__ for f, _ in WORKS])
def test_what_python_computes(f, arg):
    a = arg()
    value, g = srcgrad.value_and_grad(f)(X, a)
    assert value == f(X.copy(), copy.deepcopy(a))
    step = 1e-6
    numeric = [(f(X + step * e, copy.deepcopy(a)) - f(X - step * e, copy.deepcopy(a)))
               / (2 * step) for e in np.eye(3)]
    np.testing.assert_allclose(g, numeric, rtol=1e-7, atol=1e-9)
    assert srcgrad.jvp(f)(X, a, X)[1] == pytest.approx(np.dot(g, X), rel=1e-12)
    np.testing.assert_array_equal(B, [1.0, 2.0, 3.0])  # the caller's arrays are unchanged
