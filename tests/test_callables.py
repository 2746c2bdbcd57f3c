"""Functions passed as arguments, and callables that are not plain functions.

A parameter that receives a function is static: the function is known when the transform reads
the call (an inlined helper given a function), or when the derivative is called (a parameter of
the transformed function: one derivative per function passed, cached). ``functools.partial``,
``functools.wraps`` wrappers, ``lru_cache``d functions and callable objects are transformed, and
called inside, through the plain function they end up in. Every case is checked against central
differences in reverse and forward mode, and at second order (hvp against differences of the
gradient).
"""

import functools

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from test_errors import where_is

from srcgrad import SrcgradError, grad, hessian, hvp, jvp, source
from srcgrad.specialize import CACHE_SIZE  # the module; `srcgrad.specialize` is the function

STEP = 1e-6
Y = np.array([0.4, -0.3])
X3 = np.array([0.3, -0.7, 1.1])


def pendulum_rhs(y, g):
    return np.array([y[1], -g * np.sin(y[0])])


def damped_rhs(y, g):
    return np.array([y[1], -g * np.sin(y[0]) - 0.3 * y[1]])


def rk4_step(f, y, h, *args):
    k1 = f(y, *args)
    k2 = f(y + h / 2 * k1, *args)
    k3 = f(y + h / 2 * k2, *args)
    k4 = f(y + h * k3, *args)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def integrate(f, y, h, n, *args):
    for _ in range(n):
        y = rk4_step(f, y, h, *args)
    return y


def pendulum_energy(y, g):
    end = integrate(pendulum_rhs, y, 0.1, 3, g)
    return 0.5 * end[1] ** 2 + g * (1.0 - np.cos(end[0]))


def energy_of(f, y, g):
    end = integrate(f, y, 0.1, 3, g)
    return 0.5 * end[1] ** 2 + g * (1.0 - np.cos(end[0]))


def _double(v):
    return 2.0 * v


def _cube(v):
    return v**3


def apply_pair(fs, x):
    return fs[0](x) * fs[1](x)


def summed_pair(fs, x):
    return np.sum(apply_pair(fs, x))


def tuple_of_callbacks(x):
    fs = (np.sin, _cube)
    return np.sum(apply_pair(fs, x))


def dict_of_callbacks(x):
    hooks = {"pre": _double, "post": np.tanh}
    h = hooks["pre"](x)
    return np.sum(hooks["post"](h) * x)


def _apply(f, x):
    return f(x)


def local_def_passed(x, w):
    def layer(v):
        return np.tanh(w * v)

    return np.sum(_apply(layer, x) ** 2)


def lambda_passed(x):
    square = lambda v: v * v  # noqa: E731
    return np.sum(_apply(square, x) * x)


def rule_function_passed(x):
    return np.sum(_apply(np.sin, x) + _apply(np.exp, x))


def _numeric_directional(f, args, slot, t):
    plus, minus = list(args), list(args)
    plus[slot] = args[slot] + STEP * t
    minus[slot] = args[slot] - STEP * t
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * STEP)


def check_all(f, args, slot=0):
    """Reverse against differences, forward against reverse, hvp against differences of grad."""
    g = check_grad(f, args, slot)
    t = np.ones_like(args[slot]) * 0.7 if isinstance(args[slot], np.ndarray) else 0.7
    value, tangent = jvp(f, wrt=slot)(*args, t)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(tangent, np.sum(g * t), rtol=1e-8, atol=1e-10)
    h = hvp(f, wrt=slot)(*args, t)
    expected = _numeric_directional(grad(f, wrt=slot), args, slot, t)
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-7)


CASES = [
    (pendulum_energy, (Y, 9.8), 0),
    (pendulum_energy, (Y, 9.8), 1),
    (tuple_of_callbacks, (X3,), 0),
    (dict_of_callbacks, (X3,), 0),
    (local_def_passed, (X3, 0.8), 0),
    (local_def_passed, (X3, 0.8), 1),
    (lambda_passed, (X3,), 0),
    (rule_function_passed, (X3,), 0),
]


@pytest.mark.parametrize("f, args, slot", CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_function_passed_to_an_inlined_helper(f, args, slot):
    check_all(f, args, slot)


def test_the_function_passed_is_inlined_not_called():
    text = source(grad(pendulum_energy))
    assert "pendulum_rhs(" not in text and "rk4_step(" not in text
    assert "np.sin" in text and "np.cos" in text


# --- a parameter of the transformed function that is called: specialized at the call ------------
def test_function_argument_of_the_transformed_function():
    df = grad(energy_of, wrt=1)
    for f in (pendulum_rhs, damped_rhs, pendulum_rhs):
        g = df(f, Y, 9.8)
        expected = numeric_grad(lambda y, f=f: energy_of(f, y, 9.8), (Y,), 0)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    assert len(df.made) == 2  # one specialization per function passed, reused
    assert "np.sin" in source(df) and "0.3" not in source(df)  # the last: pendulum_rhs's
    value, tangent = jvp(energy_of, wrt=2)(damped_rhs, Y, 9.8, 1.0)
    assert value == pytest.approx(energy_of(damped_rhs, Y, 9.8), rel=1e-12)
    g = grad(energy_of, wrt=2)(damped_rhs, Y, 9.8)
    assert tangent == pytest.approx(g, rel=1e-8)


def test_second_order_of_a_specialized_derivative():
    H = hessian(energy_of, wrt=1)(damped_rhs, Y, 9.8)
    expected = np.stack([
        _numeric_directional(lambda y: grad(energy_of, wrt=1)(damped_rhs, y, 9.8), (Y,), 0, e)
        for e in np.eye(2)
    ], axis=-1)
    np.testing.assert_allclose(H, expected, rtol=1e-5, atol=1e-7)
    d2 = grad(grad(energy_of, wrt=2), wrt=2)(pendulum_rhs, Y, 9.8)
    first = grad(energy_of, wrt=2)
    assert d2 == pytest.approx(
        (first(pendulum_rhs, Y, 9.8 + STEP) - first(pendulum_rhs, Y, 9.8 - STEP)) / (2 * STEP),
        rel=1e-5)


def test_specializations_are_bounded_and_per_function_object():
    df = grad(_apply, wrt=1)
    for k in range(CACHE_SIZE + 5):
        assert df(lambda v, k=k: k * v * v, 2.0) == pytest.approx(4.0 * k)
    assert len(df.made) == CACHE_SIZE


def test_tuple_of_functions_as_an_argument_of_the_transformed_function():
    g = grad(summed_pair, wrt=1)((np.sin, _cube), X3)
    np.testing.assert_allclose(g, np.cos(X3) * X3**3 + np.sin(X3) * 3 * X3**2, rtol=1e-12)


def test_wrt_a_function_parameter_is_an_error():
    with pytest.raises(SrcgradError, match="wrt selects `f`, which energy_of calls as a function"):
        grad(energy_of, wrt=0)


def test_a_parameter_called_but_given_no_function_is_located():
    df = grad(_apply, wrt=1)
    with pytest.raises(SrcgradError, match="`f` is called as a function here") as info:
        df(np.ones(3), 2.0)
    assert info.value.lineno == where_is(_apply, "f(x)")[0]


# --- callables that are not plain functions ----------------------------------------------------
def weighted(x, w, *, reg=0.1, power=2):
    return np.sum(w * x**power) + reg * np.sum(x**2)


def partial_made_inside(x, r):
    loss = functools.partial(weighted, w=np.array([1.0, 2.0, 3.0]), reg=r)
    r = r * 100.0  # the partial keeps the value it was made with, as in Python
    return loss(x) + r


WEIGHTED_CUBE = functools.partial(weighted, w=np.array([0.5, 1.0, 1.5]), power=3)


def global_partial(x):
    return WEIGHTED_CUBE(x) * 2.0


def partial_of_a_partial(x):
    p = functools.partial(WEIGHTED_CUBE, reg=0.5)
    return p(x)


def twice(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)

    return wrapper


@twice
def doubled_cube_sum(x, k=1.0):
    return np.sum(k * x**3)


def calls_decorated(x):
    return doubled_cube_sum(x, k=0.5) + 1.0


@functools.lru_cache(maxsize=None)
def cached_scale(n):
    return 1.0 / (n + 1)


@functools.cache
def cached_poly(x):
    return x**3 - 2.0 * x


def calls_cached(x):
    return cached_poly(x) * cached_scale(3)


class Quadratic:
    def __init__(self, A):
        self.A = A

    def __call__(self, x, shift=0.0):
        v = x - shift
        return 0.5 * v @ self.A @ v


QUADRATIC = Quadratic(np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 3.0]]))


def calls_object(x):
    return QUADRATIC(x, shift=0.1) + QUADRATIC(x * x)


def bound_method_passed(x):
    return _apply(QUADRATIC.__call__, x)


CALLABLE_CASES = [
    (partial_made_inside, (X3, 0.3), 0),
    (partial_made_inside, (X3, 0.3), 1),
    (global_partial, (X3,), 0),
    (partial_of_a_partial, (X3,), 0),
    (calls_decorated, (X3,), 0),
    (calls_cached, (0.7,), 0),
    (calls_object, (X3,), 0),
    (bound_method_passed, (X3,), 0),
]


@pytest.mark.parametrize("f, args, slot", CALLABLE_CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CALLABLE_CASES])
def test_callables_called_inside(f, args, slot):
    check_all(f, args, slot)


INPUTS = [
    (WEIGHTED_CUBE, (X3,), 0),
    (functools.partial(weighted, w=np.array([1.0, -1.0, 2.0])), (X3,), 0),
    (doubled_cube_sum, (X3,), 0),
    (cached_poly, (0.7,), 0),
    (QUADRATIC, (X3,), 0),
]


@pytest.mark.parametrize("f, args, slot", INPUTS,
                         ids=["partial", "partial_kw", "wraps", "cache", "object"])
def test_callables_as_transform_input(f, args, slot):
    check_all(f, args, slot)


def test_wraps_wrapper_is_differentiated_not_skipped():
    # the wrapper doubles the result: following __wrapped__ alone would be wrong by 2
    np.testing.assert_allclose(grad(doubled_cube_sum)(X3), 6.0 * X3**2, rtol=1e-12)
    np.testing.assert_allclose(grad(calls_decorated)(X3), 3.0 * X3**2, rtol=1e-12)


def test_partial_keyword_named_in_wrt():
    p = functools.partial(weighted, w=np.array([1.0, 2.0, 3.0]), reg=0.25)
    g = grad(p, wrt="reg")(X3)
    assert g == pytest.approx(np.sum(X3**2), rel=1e-12)
    assert grad(p, wrt="reg")(X3, reg=0.5) == pytest.approx(np.sum(X3**2), rel=1e-12)
    gw = grad(p, wrt="w")(X3)
    np.testing.assert_allclose(gw, X3**2, rtol=1e-12)
