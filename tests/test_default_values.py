"""Parameter defaults are the values ``def`` computed, in every transform (not their text).

Lambdas made in a loop share one code object and one default text (``c=c``); their derivatives
must each use their own default, as the functions do.
"""

import numpy as np
import pytest

import srcgrad

SCALES = (1.0, 2.0, 3.0)
LAMBDAS = [lambda x, c=c: c * x * x for c in SCALES]


FACTOR = 2.0


def helper(x, k=FACTOR):
    return k * x


FACTOR = 7.0  # rebound after helper's def: helper's default stays 2.0


def uses_helper(x):
    return np.sum(helper(x) ** 2)


@pytest.mark.parametrize("i", range(len(SCALES)))
def test_each_lambda_made_in_a_loop_keeps_its_default(i):
    f = LAMBDAS[i]
    c = SCALES[i]
    assert srcgrad.grad(f)(1.5) == pytest.approx(2 * c * 1.5)
    assert srcgrad.value_and_grad(f)(1.5) == pytest.approx((c * 2.25, 2 * c * 1.5))
    assert srcgrad.vjp(f)(1.5, 2.0) == pytest.approx(2 * 2 * c * 1.5)
    assert srcgrad.jvp(f)(1.5, 1.0) == pytest.approx((c * 2.25, 2 * c * 1.5))
    assert srcgrad.grad(srcgrad.grad(f))(1.5) == pytest.approx(2 * c)
    # a default passed explicitly still wins
    assert srcgrad.grad(f)(1.5, 10.0) == pytest.approx(2 * 10.0 * 1.5)


def test_a_changed_default_gives_a_new_derivative():
    def h(x, k=1.0):
        return k * x**3

    assert srcgrad.grad(h)(1.0) == pytest.approx(3.0)
    h.__defaults__ = (5.0,)
    assert srcgrad.grad(h)(1.0) == pytest.approx(15.0)
    assert srcgrad.vjp(h)(1.0, 1.0) == pytest.approx(15.0)


def test_keyword_only_defaults_are_values_too():
    fs = []
    for c in SCALES:
        def f(x, *, c=c):
            return c * np.sum(x**2)
        fs.append(f)
    x = np.array([1.0, 2.0])
    for c, f in zip(SCALES, fs):
        np.testing.assert_allclose(srcgrad.grad(f)(x), 2 * c * x)


def test_a_literal_default_stays_readable():
    def g(x, a=2.0, b=-1):
        return a * x + b * x

    text = srcgrad.source(srcgrad.vjp(g))
    assert "(2.0, -1)" in text
    assert "_default" not in text


def test_an_inlined_helper_uses_its_default_value():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(srcgrad.grad(uses_helper)(x), 2 * 2.0**2 * x)
