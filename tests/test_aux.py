"""Auxiliary outputs: ``grad(f, has_aux=True)`` -> ``(g, aux)``, ``value_and_grad(f,
has_aux=True)`` -> ``((value, aux), g)``, as in JAX; without ``has_aux`` a returned tuple is a
``NonScalarOutputError`` that names ``has_aux``."""

import numpy as np
import pytest
from gradcheck import numeric_grad

from srcgrad import NonScalarOutputError, SrcgradError, grad, source, value_and_grad

X = np.array([0.5, -1.0, 2.0])


def with_stats(x):
    y = np.tanh(x)
    loss = np.sum(y ** 2)
    return loss, {"y": y, "n": 3}


def loss_of(f):
    return lambda *args: f(*args)[0]


def written_aux(x):
    y = np.zeros(3)
    y[0] = x[0] * 2.0
    return np.sum(y * x), y


def looped_aux(x):
    s = 0.0
    hist = []
    for i in range(3):
        s = s + x[i] ** 2
        hist.append(s)
    return s, hist


def pair_variable(x):
    out = (np.sum(x ** 3), x * 2.0)
    return out


def helper(x):
    return np.sum(np.sin(x)), np.cos(x)


def returned_by_a_helper(x):
    return helper(x * 2.0)


def aux_first_element(x, w):
    p = np.exp(x * w)
    return np.sum(p) / 2.0, p


CASES = [
    (with_stats, (X,)), (written_aux, (X,)), (looped_aux, (X,)), (pair_variable, (X,)),
    (returned_by_a_helper, (X,)),
]


def assert_same_aux(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_same_aux(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            assert_same_aux(u, v)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_with_aux(f, args):
    g, aux = grad(f, has_aux=True)(*args)
    value, expected_aux = f(*args)
    assert_same_aux(aux, expected_aux)
    np.testing.assert_allclose(g, numeric_grad(loss_of(f), args, 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_and_grad_with_aux(f, args):
    (value, aux), g = value_and_grad(f, has_aux=True)(*args)
    expected_value, expected_aux = f(*args)
    assert value == pytest.approx(expected_value, rel=1e-12)
    assert_same_aux(aux, expected_aux)
    np.testing.assert_allclose(g, numeric_grad(loss_of(f), args, 0), rtol=1e-6, atol=1e-8)


def test_the_aux_is_not_differentiated_and_the_pair_is_not_kept():
    text = source(grad(with_stats, has_aux=True))
    assert "split_aux" not in text  # the pair is built in the function: its parts are used
    assert text.rstrip().endswith("return (cast_like(dx, x), t)")


def branchy(x, flag):
    if flag:
        out = (np.sum(x ** 2), "square")
    else:
        out = (np.sum(x), "sum")
    return out


def test_a_pair_the_call_reveals_is_checked_when_it_runs():
    fn = grad(branchy, has_aux=True)
    assert "split_aux(" in source(fn)
    g, aux = fn(X, True)
    assert aux == "square"
    np.testing.assert_allclose(g, 2 * X)
    g, aux = fn(X, False)
    assert aux == "sum"
    np.testing.assert_allclose(g, np.ones(3))
    with pytest.raises(NonScalarOutputError, match="has_aux=True"):
        grad(branchy)(X, True)


def test_tuple_wrt_and_decorator_form():
    @grad(wrt=(0, 1), has_aux=True)
    def f(x, w):
        return aux_first_element(x, w)

    (gx, gw), aux = f(X, 0.5)
    np.testing.assert_allclose(aux, np.exp(X * 0.5))
    np.testing.assert_allclose(gx, 0.5 * np.exp(X * 0.5) / 2.0)
    assert gw == pytest.approx(np.sum(X * np.exp(X * 0.5)) / 2.0)


def test_repeatable_and_arguments_untouched():
    x = X.copy()
    fn = value_and_grad(written_aux, has_aux=True)
    first = fn(x)
    second = fn(x)
    np.testing.assert_array_equal(x, X)
    assert_same_aux(first[0][1], second[0][1])
    np.testing.assert_array_equal(first[1], second[1])


def test_without_has_aux_a_returned_tuple_names_has_aux_at_transform_time():
    with pytest.raises(NonScalarOutputError, match="has_aux=True") as info:
        grad(with_stats)
    assert "test_aux.py" in str(info.value) and "return loss" in str(info.value)
    with pytest.raises(NonScalarOutputError, match="has_aux"):
        value_and_grad(pair_variable)


def test_without_has_aux_a_tuple_the_call_reveals_names_has_aux():
    with pytest.raises(NonScalarOutputError, match="has_aux=True"):
        grad(returned_by_a_helper)(X)


def test_has_aux_without_a_pair_is_a_clear_error():
    with pytest.raises(SrcgradError, match="has_aux=True needs .* pair"):
        grad(lambda_free_sum, has_aux=True)(X)


def lambda_free_sum(x):
    return np.sum(x)
