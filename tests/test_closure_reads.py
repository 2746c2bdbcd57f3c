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
