"""A name bound to a callable more than once, then called (issue 14): ``pp = partial(f, 1.0);
pp = partial(f, 2.0); pp(x)``, a function variable rebound in a branch or a loop. Each call
calls what Python's would; values equal Python's, gradients are checked against central
differences in float64 in reverse and forward mode, and at second order.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import hessian_by_differences

import srcgrad
from srcgrad import SrcgradError

X = np.array([0.3, -0.7, 1.1, 0.5])


def _scaled(a, x):
    return a * np.sin(x)


class Layer:
    def __init__(self, w):
        self.w = w

    def scale(self, x):
        return np.tanh(self.w * x)


A, B = Layer(0.5), Layer(-1.5)


def partial_bound_twice(x):
    pp = functools.partial(_scaled, 1.0)
    y = pp(x)
    pp = functools.partial(_scaled, x[1])
    return np.sum(pp(x) * y)


def rebound_in_a_branch(x):
    g = np.sin
    if x[0] > 0:
        g = np.cos
    return np.sum(g(x) * x)


def rebound_in_a_loop(x):  # the call on the next trip sees the later binding
    g = np.sin
    y = x
    for _ in range(3):
        y = g(y) * x
        g = np.cos
    return np.sum(y)


def bound_methods_rebound(x):
    h = A.scale
    if x[2] > 0:
        h = B.scale
    y = h(x)
    h = A.scale
    return np.sum(h(y))


def _apply_twice(x, c):
    f = np.exp
    if c:
        f = np.tanh
    return f(x)


def rebound_in_a_helper(x):
    return np.sum(_apply_twice(x, x[0] > 0) + _apply_twice(x, x[1] > 0))


CASES = [partial_bound_twice, rebound_in_a_branch, rebound_in_a_loop, bound_methods_rebound,
         rebound_in_a_helper]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "-x"])
def test_a_name_bound_twice_calls_what_it_holds(f, x):
    value, _ = srcgrad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    check_grad(f, (x,))
    _, t = srcgrad.jvp(f)(x, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (x,), 0)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [partial_bound_twice, rebound_in_a_branch, rebound_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_name_bound_twice_at_second_order(f):
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


def held_in_a_list_too(x):
    g = np.sin
    if x[0] > 0:
        g = np.cos
    fs = [g]
    return np.sum(fs[0](x))


def test_a_rebound_name_also_used_as_a_value_is_still_refused():
    with pytest.raises(SrcgradError, match="cannot resolve"):
        srcgrad.grad(held_in_a_list_too)(X)


# A name assigned again in the same block (normalize/renumbered.py): each read sees the
# assignment before it, so each assignment gets a name of its own.


def _hel1(h):
    return np.sin(h)


def _hel2(h):
    return np.cos(h) * h


def _kw(h, a=1.0, b=2.0):
    return a * np.sin(h) + b * h


def local_def_twice(x):
    def loc(h):
        return np.sin(h) * x[0]

    y = loc(x)

    def loc(h):
        return np.cos(h) * h

    return np.sum(loc(y))


def lambda_twice(x):
    sq = lambda h: h * h  # noqa: E731
    y = sq(x)
    sq = lambda h: np.sin(h) * x[1]  # noqa: E731
    return np.sum(sq(y))


def tuple_twice(x):
    fns = (np.sin, _hel2)
    h = x
    for fn in fns:
        h = fn(h)
    fns = (np.tanh, _hel1)
    for fn in fns:
        h = fn(h)
    return np.sum(h)


def dict_of_callbacks_twice(x):
    cbs = {"a": _hel1}
    h = cbs["a"](x)
    cbs = {"a": _hel2}
    h = cbs["a"](h)
    return np.sum(h)


def keywords_dict_twice(x):
    opts = {"a": 2.0}
    h = _kw(x, **opts)
    opts = {"a": 0.5, "b": x[0]}
    return np.sum(_kw(h, **opts))


def _twice_in_a_helper(x, c):
    f = lambda h: h * c  # noqa: E731
    y = f(x)
    f = lambda h: np.sin(h) + c  # noqa: E731
    return f(y)


def in_a_helper_in_a_loop(x):
    y = x
    for i in range(2):
        g = {"k": np.sin}
        y = g["k"](y) * x[i]
        g = {"k": _hel2}
        y = g["k"](y)
    return np.sum(_twice_in_a_helper(y, x[2]))


SAME_BLOCK = [local_def_twice, lambda_twice, tuple_twice, dict_of_callbacks_twice,
              keywords_dict_twice, in_a_helper_in_a_loop]


@pytest.mark.parametrize("f", SAME_BLOCK, ids=lambda f: f.__name__)
def test_a_name_assigned_again_in_its_block_calls_what_it_holds(f):
    value, _ = srcgrad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-13)
    check_grad(f, (X,))
    _, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (X,), 0)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [local_def_twice, dict_of_callbacks_twice, in_a_helper_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_name_assigned_again_in_its_block_at_second_order(f):
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


C = 1.5


def partial_made_later_in_a_loop(x):  # the next trip's call sees the partial made after it
    g = np.sin
    y = x
    for _ in range(3):
        y = g(y) * x
        g = functools.partial(_scaled, C)
    return np.sum(y)


def partial_by_keyword_later_in_a_loop(x):
    g = functools.partial(_scaled, 0.5)
    y = x
    for _ in range(2):
        y = g(x=y)
        g = functools.partial(_scaled, a=2.0)
    return np.sum(y)


@pytest.mark.parametrize("f", [partial_made_later_in_a_loop, partial_by_keyword_later_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_partial_made_later_in_a_loop_than_a_call_it_reaches(f):
    value, _ = srcgrad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-13)
    check_grad(f, (X,))
    _, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (X,), 0)), rtol=1e-6, atol=1e-8)
    if f is partial_made_later_in_a_loop:
        np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                                   rtol=1e-5, atol=1e-6)


def _apply(f, v, k=1.0):
    return f(v) * k


def passed_to_a_helper(x):  # each binding that may reach the call is passed, on its path
    g = np.sin
    if x[0] > 0:
        g = np.cos
    y = _apply(g, x)
    g = functools.partial(_scaled, x[1])
    return np.sum(_apply(g, y, k=2.0) + g(x))


def passed_by_keyword_in_a_loop(x):
    g = np.tanh
    for _ in range(2):
        x = _apply(v=x, f=g)
        g = np.sin
    return np.sum(x)


@pytest.mark.parametrize("f", [passed_to_a_helper, passed_by_keyword_in_a_loop],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", [X, -X], ids=["x", "-x"])
def test_a_rebound_name_passed_to_a_helper(f, x):
    value, _ = srcgrad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    check_grad(f, (x,))
    _, t = srcgrad.jvp(f)(x, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (x,), 0)), rtol=1e-6, atol=1e-8)


def test_a_rebound_name_passed_to_a_helper_at_second_order():
    f = passed_to_a_helper
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


class Other:
    def __init__(self, w):
        self.w = w

    def scale(self, x):
        return np.sin(self.w * x)


class Later:
    def __init__(self):
        self.a, self.b = Layer(0.5), Layer(-1.5)

    def bound_later_in_a_loop(self, x):
        g = self.a.scale
        y = x
        for _ in range(3):
            y = g(y) * x
            g = self.b.scale
        return np.sum(y)

    def object_changed_after_binding(self, x):
        g = self.a.scale
        y = x
        for i in range(3):
            y = g(y) + x
            g = self.b.scale  # read here: the next trip calls this object's method
            self.b = Layer(0.3 * i + 0.2)
        return np.sum(y)

    def through_a_local_in_a_while(self, x):
        g = self.a.scale
        y = x
        i = 0
        while i < 3:
            y = g(y) * x
            blk = self.b
            g = blk.scale
            i += 1
        return np.sum(y)

    def class_changed_after_binding(self, x):
        g = self.a.scale
        y = x
        for _ in range(3):
            y = g(y)
            g = self.b.scale
            self.b = Other(0.7)
        return np.sum(y)


@pytest.mark.parametrize("name", ["bound_later_in_a_loop", "object_changed_after_binding",
                                  "through_a_local_in_a_while"])
def test_a_bound_method_bound_later_in_a_loop(name):
    # `y = g(y); g = self.b.scale` in a loop: was refused (`does not support the method
    # .scale()`); the method is read where it is bound, as in Python
    def fresh(v):  # (a method may change its object: a new one per call)
        return getattr(Later(), name)(v)

    value, g = srcgrad.value_and_grad(getattr(Later(), name))(X)
    np.testing.assert_allclose(value, fresh(X), rtol=1e-13)
    np.testing.assert_allclose(g, numeric_grad(fresh, (X,), 0), rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(getattr(Later(), name))(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(fresh, (X,), 0)), rtol=1e-6, atol=1e-8)


def test_a_bound_method_bound_later_in_a_loop_at_second_order():
    f = Later().bound_later_in_a_loop
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


def test_a_bound_method_bound_later_whose_field_changes_class_is_an_error_when_it_runs():
    # Python calls Other.scale on the third trip; the derivative inlined Layer.scale: its class
    # check raises, never a wrong value
    with pytest.raises(SrcgradError, match="inlined the methods of Layer"):
        srcgrad.grad(Later().class_changed_after_binding)(X)


class _Doubling:
    def __call__(self, v):
        return v * 2.0


class _Sine:
    def __call__(self, v):
        return np.sin(v)


class _TwoLayers:
    def __init__(self):
        self.first, self.second = _Doubling(), _Sine()

    def loss(self, x):
        layer = self.first
        h = x
        for _ in range(2):
            h = layer(h) * x
            layer = self.second  # another class, read from an attribute on a later trip
        return np.sum(h)


def test_an_object_of_another_class_read_from_an_attribute_later_in_a_loop_and_called():
    # was refused (`cannot resolve`, a row of docs/supported.md's refused table)
    f = _TwoLayers().loss
    value, g = srcgrad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-13)
    np.testing.assert_allclose(g, numeric_grad(f, (X,), 0), rtol=1e-6, atol=1e-8)
    _, t = srcgrad.jvp(f)(X, np.ones(4))
    np.testing.assert_allclose(t, np.sum(numeric_grad(f, (X,), 0)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcgrad.hessian(f)(X), hessian_by_differences(f, (X,)),
                               rtol=1e-5, atol=1e-6)


# A lambda with default values remade on each trip of a loop, kept by another name in a branch
# (`keep = None` first): the copy holds the defaults of its trip. On a8c8684 the copy was
# dispatched like a copy of a function passed, and its call inlined read the last trip's
# defaults: grad [-0.61, -5.28, -3.99] for central differences [1.70, -0.82, -2.93] (the value
# wrong too); found by tests/test_random_objects.py, seed 1470. Now refused, located, as on
# 690f070. The same lambda without defaults reads `k` when it is called (Python's late binding):
# it works (it raised a ValueError in the derivative on a8c8684).
def kept_lambda_called_after_the_loop(x, c):
    h = x * 2.0
    keep = None
    for k in range(2):
        g = lambda v, k=k: v * (k + c)
        if k == 0:
            keep = g
    h = keep(h) + g(h)
    return np.sum(np.sin(h))


def kept_lambda_called_by_a_later_trip(x, c):
    s = 0.0
    keep = None
    for k in range(3):
        g = lambda v, k=k: v * (k + c)
        if k == 0:
            keep = g
        if k == 2:
            s = s + np.sum(np.sin(keep(x)))
    return s


def kept_closure_reading_the_loop_variable(x, c):
    h = x * 2.0
    keep = None
    for k in range(2):
        g = lambda v: v * (k + c)  # noqa: B023 (late binding, as meant)
        if k == 0:
            keep = g
    h = keep(h) + g(h)
    return np.sum(np.sin(h))


@pytest.mark.parametrize("f", [kept_lambda_called_after_the_loop,
                               kept_lambda_called_by_a_later_trip], ids=lambda f: f.__name__)
def test_a_kept_copy_of_a_lambda_with_defaults_remade_per_trip_is_refused(f):
    with pytest.raises(SrcgradError, match="the local function `g` used as a value") as info:
        srcgrad.grad(f)(X[:3], 0.4)
    assert "test_rebound_calls.py" in str(info.value)


def test_a_kept_closure_reads_the_loop_variable_when_called():
    check_grad(kept_closure_reading_the_loop_variable, (X[:3], 0.4), wrt=(0, 1))
