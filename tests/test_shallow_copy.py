"""``copy.copy`` (issue 14): a new list, dict or object holding the same arrays, lists, dicts
and objects as the original. A write into one of those parts through either holder is seen
through the other, as in Python; a field or item bound again in one is not. Values equal
Python's (computed on copies of the arguments), gradients are checked against central
differences in float64, in forward mode too, and at second order for one case.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from gradcheck import check_grad, numeric_grad

import srcgrad

X = np.array([0.3, -0.7, 1.1, 0.5])


class Block:
    def __init__(self, w):
        self.w = w
        self.arr = np.array([1.0, 2.0, 3.0, 4.0]) * w

    def s(self, x):
        return np.sin(self.w * x)

    def __call__(self, x):  # not what `s` computes: a wrong dispatch shows
        return np.cos(self.w * x)


@dataclasses.dataclass
class Pair:
    a: np.ndarray
    b: float


def object_copied(x):
    b = Block(x[0])
    c = copy.copy(b)
    c.arr += x  # the array both hold: Python's `b.arr` changes too
    c.w = x[1]  # a field of the copy bound again: `b.w` does not change
    b.arr[0] = x[2]  # and an element written through the original shows in the copy
    return np.sum(b.s(c.arr)) + np.sum(c(b.arr)) + np.sum(c.s(x))


def list_copied(x):
    blk = Block(x[3])
    L = [x * 2.0, blk]
    M = copy.copy(L)
    M[0] += x
    M[1].w = x[0]  # the object both lists hold
    M.append(x)  # only M grows
    return np.sum(L[0] * blk.s(x)) * len(L) + np.sum(M[2])


def dict_copied(x):
    d = {"a": x * 3.0}
    e = copy.copy(d)
    e["a"] *= x
    e["b"] = x  # only e gets the key
    return np.sum(d["a"]) * len(d) + np.sum(e["b"])


def dataclass_copied(x):
    p = Pair(x * 2.0, x[0])
    q = copy.copy(p)
    q.a += x
    q.b = x[1]
    return np.sum(p.a * x) * p.b + q.b


def copied_in_a_loop_and_written_by_a_helper(x):
    b = Block(x[0])
    s = 0.0
    for i in range(3):
        c = copy.copy(b)
        _bump(c, x * i)
        s = s + np.sum(c.s(b.arr))
    return s


def _bump(c, v):
    c.arr += v


def check(f, forward=True):
    value, _ = srcgrad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-13)
    check_grad(f, (X,))
    if not forward:
        return
    _, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (X,), 0)), rtol=1e-6, atol=1e-8)


def test_a_shallow_copy_of_an_object_shares_its_arrays():
    # (was refused at transform time: "does not support `copy.copy`")
    check(object_copied)


def test_a_shallow_copy_of_a_list_or_dict_shares_its_items():
    check(list_copied)
    check(dict_copied, forward=False)


def test_a_shallow_copy_of_a_dataclass_and_one_in_a_loop():
    check(dataclass_copied, forward=False)
    check(copied_in_a_loop_and_written_by_a_helper, forward=False)


def test_second_order_through_a_shallow_copy():
    v = np.array([0.2, -0.4, 0.1, 0.3])
    hv = srcgrad.hvp(object_copied)(X, v)
    g, h = srcgrad.grad(object_copied), 1e-5
    np.testing.assert_allclose(hv, (g(X + h * v) - g(X - h * v)) / (2 * h), rtol=1e-5,
                               atol=1e-7)


def _writes_into_a_copy_of_its_argument(x, b):
    c = copy.copy(b)
    c.arr += x
    return np.sum(b.arr * x)


def test_a_copy_of_an_argument_written_leaves_the_callers_object_intact():
    b = Block(0.7)
    before = b.arr.copy()
    value, g = srcgrad.value_and_grad(_writes_into_a_copy_of_its_argument)(X, b)
    np.testing.assert_array_equal(b.arr, before)
    assert value == _writes_into_a_copy_of_its_argument(X, copy.deepcopy(b))
    np.testing.assert_allclose(g, numeric_grad(
        lambda x: _writes_into_a_copy_of_its_argument(x, copy.deepcopy(b)), (X,), 0),
        rtol=1e-6, atol=1e-8)
