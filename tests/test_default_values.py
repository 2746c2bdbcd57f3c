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


# --- cases found by mutation testing (tests/mutate_code.py on transform/defaults.py and
# frontend/default_values.py) ---------------------------------------------------------------

SCALE = 2.0


def scaled(x, k=SCALE):
    return np.sum(k * x * x)


SCALE = 7.0  # rebound after the def: scaled's default stays 2.0 in every transform


def test_a_default_read_from_a_rebound_global_keeps_its_value():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(scaled)(x), 4.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(scaled)(x, 1.5), 6.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.jvp(scaled)(x, np.ones(3))[1], 4.0 * np.sum(x))


def named_rest(x, rest=2.0):  # the name the derivative gives its `*rest` parameter
    return np.sum(x * rest)


def optional_and_keyword_only(x, a=2.0, *, b=3.0):
    return np.sum(x * x * a * b)


def positional_only(x, a=2.0, /, b=3.0):
    return np.sum(x * x * a) * b


def test_defaults_beside_other_kinds_of_parameters():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.vjp(named_rest)(x, 1.5), np.full(3, 3.0), rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(named_rest)(x, 4.0, 1.5), np.full(3, 6.0), rtol=1e-12)
    assert srcgrad.jvp(named_rest)(x, np.ones(3))[1] == pytest.approx(6.0)
    f = optional_and_keyword_only
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 1.0), 12.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 5.0, 1.0, b=0.5), 5.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 1.0, a=5.0, b=0.5), 5.0 * x, rtol=1e-12)
    assert srcgrad.jvp(f)(x, np.ones(3), b=0.5)[1] == pytest.approx(2.0 * np.sum(x))
    # defaults of positional-only parameters: the derivative's seed came after them, and the
    # vjp took `a` for a required parameter (its default given to `b`)
    f = positional_only
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 1.0), 12.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 5.0, 1.0), 30.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.vjp(f)(x, 1.0, b=1.0), 4.0 * x, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.jvp(f)(x, 5.0, np.ones(3), b=1.0)[1], 10.0 * np.sum(x))
    again = srcgrad.vjp(srcgrad.vjp(f))  # its defaults come back as the derivative's own
    np.testing.assert_allclose(again(x, 5.0, 1.0, np.ones(3)), np.full(3, 30.0), rtol=1e-12)


KEPT = 3.0


def test_none_boolean_and_global_defaults_stay_readable():
    def g(x, a=None, flag=True, k=KEPT):  # KEPT still holds the default: its name is kept
        return k * x * x if flag and a is None else x

    text = srcgrad.source(srcgrad.vjp(g))
    assert "(None, True, KEPT)" in text and "_default" not in text
    assert srcgrad.vjp(g)(3.0, 1.0) == 18.0
