"""A helper's closure variables are read when the derivative runs (issue 13).

A function that calls a closure (``h``, made by a factory) whose variables its factory's other
functions rebind (``nonlocal``): the derivative inlined ``h`` with the values its variables
held when the derivative was made, so after ``set_scale(3.0)`` grad, value_and_grad, jvp and
hessian gave the old value and gradient (a third of the gradient, no error); a direct read of
a closure variable by the function itself was already live.
"""

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad


def make():
    scale = 1.0
    w = np.array([1.0, 2.0, 3.0])

    def h(x):
        return scale * x * w

    def g(x):
        return np.sum(h(x) ** 2)

    def set_scale(v):
        nonlocal scale
        scale = v

    def set_w(v):
        nonlocal w
        w = v

    return g, set_scale, set_w


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "jvp", "hessian"])
def test_a_helpers_closure_variable_rebound_after_the_derivative_was_made(transform):
    g, set_scale, set_w = make()
    x, t = np.array([0.3, -0.5, 0.8]), np.array([1.0, -2.0, 0.5])
    derived = getattr(srcgrad, transform)(g)

    def run():
        if transform == "jvp":
            return derived(x, t)
        out = derived(x)
        return out[1] if transform == "value_and_grad" else out

    first = run()
    for scale, w in ((3.0, np.array([1.0, 2.0, 3.0])), (3.0, np.array([2.0, 0.5, 1.0]))):
        set_scale(scale)
        set_w(w)
        want = numeric_grad(g, (x,), 0)
        if transform == "jvp":
            value, tangent = run()
            assert value == g(x)
            np.testing.assert_allclose(tangent, want @ t, rtol=1e-6)
        elif transform == "hessian":
            np.testing.assert_allclose(run(), np.diag(2.0 * scale**2 * w**2), rtol=1e-12)
        else:
            np.testing.assert_allclose(run(), want, rtol=1e-6)
    set_scale(1.0)
    set_w(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(run()[1] if transform == "jvp" else run(),
                               first[1] if transform == "jvp" else first, rtol=1e-14)


# A module's array named like a lambda of the function (`act` below): resolving the call of the
# lambda found the array, and a membership test of srcgrad (`fn in (map, filter)`) compared it
# elementwise: "The truth value of an array ... is ambiguous" at transform time on e5d6152, for
# the plainest lambda. The call is the lambda's.
act = np.array([1.0, 2.0, 3.0])


def lambda_named_like_a_module_array(x, c):
    act = lambda v: v * c  # noqa: E731
    return np.sum(np.sin(act(x)))


def test_a_lambda_named_like_a_module_array():
    x = np.array([0.3, -0.5, 0.7])
    g = srcgrad.grad(lambda_named_like_a_module_array, wrt=(0, 1))(x, 0.4)
    assert np.allclose(g[0], numeric_grad(lambda_named_like_a_module_array, [x, 0.4], 0))
    assert np.allclose(g[1], numeric_grad(lambda_named_like_a_module_array, [x, 0.4], 1))
