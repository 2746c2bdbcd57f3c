"""Derivatives stay current: a derivative kept in a variable notices, when it is called, that a
function it inlined was rebound (as in a notebook), and computes with the new definition.

Every transform is held across the rebinding of a helper (a helper of a helper, in another
module, too) and called again; the guard that does it is a global read and an ``is`` per inlined
name, and generated code differentiated again, or emitted as a standalone module, has none.
"""

import sys
import types

import numpy as np
import pytest

from srcgrad import grad, hessian, hvp, jacobian, jvp, source, value_and_grad, vjp

X = np.array([0.5, -1.0, 2.0])
ONES = np.ones(3)


def act(v):
    return v ** 3


def cube(v):
    return v ** 3


def sine(v):
    return np.sin(v)


def through(v):
    return act(v)  # a helper of a helper


def total(x):
    return np.sum(through(x))


def vector(x):
    return through(x) * 2.0


def gradient_sum(x):
    return np.sum(grad(total)(x))  # a derivative called inside a differentiated body


def uses_a_derivative(x):
    return np.sum(grad(total)(x) * x)


HELD = {
    "grad": (lambda: grad(total), lambda d: d(X), lambda: np.cos(X)),
    "value_and_grad": (lambda: value_and_grad(total), lambda d: d(X)[1], lambda: np.cos(X)),
    "vjp": (lambda: vjp(vector), lambda d: d(X, ONES), lambda: 2 * np.cos(X)),
    "jvp": (lambda: jvp(vector), lambda d: d(X, ONES)[1], lambda: 2 * np.cos(X)),
    "hvp": (lambda: hvp(total), lambda d: d(X, ONES), lambda: -np.sin(X)),
    "hessian": (lambda: hessian(total), lambda d: d(X), lambda: np.diag(-np.sin(X))),
    "jacobian": (lambda: jacobian(vector), lambda d: d(X), lambda: np.diag(2 * np.cos(X))),
    "jacobian-forward": (lambda: jacobian(vector, method="forward"), lambda d: d(X),
                         lambda: np.diag(2 * np.cos(X))),
    "grad-of-grad": (lambda: grad(gradient_sum), lambda d: d(X), lambda: -np.sin(X)),
    "calls-a-derivative": (lambda: grad(uses_a_derivative), lambda d: d(X),
                           lambda: np.cos(X) - X * np.sin(X)),
}


@pytest.mark.parametrize("kind", HELD)
def test_a_held_derivative_follows_a_rebound_helper(kind, monkeypatch):
    make, call, expected = HELD[kind]
    derivative = make()
    call(derivative)  # generated and run with act = cube
    monkeypatch.setitem(globals(), "act", sine)
    np.testing.assert_allclose(call(derivative), expected(), rtol=1e-7, atol=1e-9)
    # and rebinding back: the derivative computes with cube again
    monkeypatch.setitem(globals(), "act", cube)
    np.testing.assert_allclose(call(make()), call(derivative), rtol=1e-12)


def test_the_value_follows_too(monkeypatch):
    df = value_and_grad(total)
    assert df(X)[0] == pytest.approx(np.sum(X ** 3))
    monkeypatch.setitem(globals(), "act", sine)
    assert df(X)[0] == pytest.approx(np.sum(np.sin(X)))


def test_regenerated_once_per_rebinding(monkeypatch):
    df = grad(total)
    df(X)
    monkeypatch.setitem(globals(), "act", sine)
    first = df(X)
    fresh = grad(total)
    assert fresh is not df
    assert grad(total) is fresh  # the cache holds the new derivative; no regeneration per call
    np.testing.assert_array_equal(df(X), first)


@pytest.fixture
def other_module(tmp_path, monkeypatch):
    path = tmp_path / "stale_other_module.py"
    path.write_text(
        "import numpy as np\n\n\n"
        "def inner(v):\n    return v * v\n\n\n"
        "def outer(v):\n    return inner(v) + 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import stale_other_module

    yield stale_other_module
    sys.modules.pop("stale_other_module", None)


def test_a_helper_of_a_helper_in_another_module(other_module, monkeypatch):
    def f(x):
        return np.sum(other_module.outer(x))

    df = grad(f)
    np.testing.assert_allclose(df(X), 2 * X)
    assert "other_module.outer is not" in source(df)

    def inner(v):
        return v ** 3

    monkeypatch.setattr(other_module, "inner", inner)
    np.testing.assert_allclose(df(X), 3 * X ** 2)


def test_a_closure_helper_rebound_by_nonlocal():
    def make():
        def helper(v):
            return v * 2.0

        def f(x):
            return np.sum(helper(x))

        def rebind():
            nonlocal helper

            def helper(v):
                return v * 5.0

        return f, rebind

    f, rebind = make()
    df = grad(f)
    np.testing.assert_allclose(df(X), 2.0 * ONES)
    rebind()
    np.testing.assert_allclose(df(X), 5.0 * ONES)


def test_keywords_defaults_and_the_seed_reach_the_regenerated_derivative(monkeypatch):
    def f(x, scale=2.0, *, shift=0.0):
        return through(x) * scale + shift

    d = vjp(f)
    np.testing.assert_allclose(d(X, ONES, shift=1.0), 6 * X ** 2)
    monkeypatch.setitem(globals(), "act", sine)
    np.testing.assert_allclose(d(X, 3.0, ONES, shift=1.0), 3 * np.cos(X))


def test_the_guard_is_the_first_statement_and_only_where_something_was_inlined():
    text = source(grad(total))
    lines = text.splitlines()
    assert lines[1].strip().startswith("if through is not inlined_through or act is not")
    assert "return rederived(derivative)(x)" in lines[2]
    assert "rederived" not in source(grad(lambda_free))


def lambda_free(x):
    return np.sum(x ** 2)


def test_a_derivative_differentiated_again_has_one_guard():
    inner = grad(total)
    outer = jvp(inner)
    text = source(outer)
    assert text.count("rederived(") == 1
    assert "act is not" in text


def test_standalone_modules_have_no_guard(tmp_path):
    from srcgrad.emit.standalone import standalone_module

    text = standalone_module(grad(total))
    assert "rederived" not in text and "inlined_" not in text
    namespace = {}
    exec(compile(text, "standalone", "exec"), namespace)
    module = types.SimpleNamespace(**namespace)
    np.testing.assert_allclose(module.dtotal(X), 3 * X ** 2)


def cube_sum(v):
    return np.sum(v**3)


def sine_sum(v):
    return np.sum(np.sin(v))


HELD_DERIVATIVE = grad(cube_sum)


def calls_a_held_derivative(x):
    return np.sum(HELD_DERIVATIVE(x) * x)


def test_a_derivative_held_in_a_rebound_variable(monkeypatch):
    # H = grad(f); g calls H(x); H rebound to grad(other): the derivative of g kept calling the
    # vjp of the first H (grad(lambda x: H(x)) at 1.0 gave 6.0 for 12.0 after rebinding H from
    # grad(x**3) to grad(x**4)); the variable is guarded now, as an inlined helper is
    dg = grad(calls_a_held_derivative)
    np.testing.assert_allclose(dg(X), 9 * X**2, rtol=1e-12)  # d/dx of 3 x**3
    monkeypatch.setitem(globals(), "HELD_DERIVATIVE", grad(sine_sum))
    np.testing.assert_allclose(dg(X), np.cos(X) - X * np.sin(X), rtol=1e-12)
    np.testing.assert_allclose(jvp(calls_a_held_derivative)(X, ONES)[1],
                               np.sum(np.cos(X) - X * np.sin(X)), rtol=1e-12)
