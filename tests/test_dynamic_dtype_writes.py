"""A value written into an array whose integer or boolean dtype is known only at run time (an
argument, a copy of one, ``zeros_like`` of one) is truncated by NumPy: its derivative through the
write is zero, as at a cast. The array's dtype is read when the function runs
(``normalize/integer_writes.py``, ``written``). Checked against central differences for integer,
boolean, uint8 and float arrays, reverse, forward and second order; the caller's array is left
alone.
"""

import numpy as np
import pytest
from gradcheck import assert_same, numeric_grad

import srcgrad
import srcgrad.errors
from srcgrad import grad, hessian, jvp, value_and_grad, vjp

X = np.array([1.3, 2.6, 0.7])
DTYPES = [np.int64, np.int32, np.uint8, np.bool_, np.float64]


def written_directly(x, k):
    k[0] = x[0] ** 2
    return np.sum(k * x)


def written_into_a_copy(x, k):
    k = k.copy()
    k[0] = x[0] ** 2
    return np.sum(k * x)


def written_into_a_slice(x, k):
    k = np.copy(k)
    k[1:] = x[1:] * 2.5
    return np.sum(k * x**2)


def written_in_a_loop(x, k):
    for i in range(3):
        k[i] = x[i] * x[i] + k[i]
    return np.sum(k * x)


def written_with_copyto(x, k):
    np.copyto(k, x * 2.0, casting="unsafe")
    return np.sum(k * x)


def written_with_put(x, k):
    np.put(k, [0, 2], x[:2] * 3.0)
    return np.sum(k * x)


def written_into_zeros_like(x, k):
    z = np.zeros_like(k)
    z[2] = x[2] * 4.0
    z[0] = x[1] ** 2
    return np.sum(z * x) + np.sum(k * x)


CASES = [
    written_directly, written_into_a_copy, written_into_a_slice, written_in_a_loop,
    written_with_copyto, written_with_put, written_into_zeros_like,
]
PAIRS = [(f, d) for f in CASES for d in DTYPES]
IDS = [f"{f.__name__}-{np.dtype(d).name}" for f, d in PAIRS]


def k_of(dtype):
    return np.array([1, 2, 3]).astype(dtype)


def expected(f, k):
    return numeric_grad(lambda x: f(x, k.copy()), (X.copy(),), 0)


@pytest.mark.parametrize("f, dtype", PAIRS, ids=IDS)
def test_reverse_mode(f, dtype):
    k = k_of(dtype)
    truth = expected(f, k)
    for optimize in (True, False):
        value, g = value_and_grad(f, optimize=optimize)(X.copy(), k)
        np.testing.assert_allclose(value, f(X.copy(), k.copy()))
        np.testing.assert_allclose(g, truth, rtol=1e-6, atol=1e-8)
    assert_same(k_of(dtype), k)
    np.testing.assert_allclose(vjp(f)(X.copy(), k, 1.0), truth, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, dtype", PAIRS, ids=IDS)
def test_forward_mode(f, dtype):
    k = k_of(dtype)
    t = np.array([0.4, -1.1, 0.7])
    value, tangent = jvp(f)(X.copy(), k, t)
    np.testing.assert_allclose(value, f(X.copy(), k.copy()))
    np.testing.assert_allclose(tangent, expected(f, k) @ t, rtol=1e-6, atol=1e-8)
    assert_same(k_of(dtype), k)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_second_order(f, dtype):
    k = k_of(dtype)
    df = grad(f)
    step = 1e-5
    truth = np.stack(
        [(df(X + step * e, k) - df(X - step * e, k)) / (2 * step) for e in np.eye(3)], axis=-1
    )
    np.testing.assert_allclose(hessian(f)(X.copy(), k), truth, rtol=1e-5, atol=1e-6)


def cast_then_written(x):
    k = x.astype(int)
    k[0] = x[0] ** 2
    return np.sum(k * x)


def test_a_cast_copy_is_written_into():
    truth = numeric_grad(cast_then_written, (X.copy(),), 0)
    np.testing.assert_allclose(grad(cast_then_written)(X.copy()), truth, rtol=1e-6, atol=1e-8)
    _, tangent = jvp(cast_then_written)(X.copy(), np.ones(3))
    np.testing.assert_allclose(tangent, truth.sum(), rtol=1e-6, atol=1e-8)


def floating_targets(x, k):
    y = np.zeros(3)
    y[0] = x[0] ** 2
    w = k.astype(np.float64)
    w[2] = x[2] / 2
    return np.sum(y * x) + np.sum(w * x)


@pytest.mark.parametrize("transform", [grad, jvp])
def test_the_dtype_is_read_only_where_it_may_be_discrete(transform):
    cases = [
        (floating_targets, False), (written_into_a_copy, True),
        (written_into_zeros_like, True), (wrt_written_into_its_copy, True),
    ]
    for f, read in cases:
        df = transform(f)
        df(X.copy(), k_of(np.int64), *([np.ones(3)] if transform is jvp else []))
        assert ("write_dtype(" in srcgrad.source(df)) == read, srcgrad.source(df)


def sorted_in_place(xs):
    xs.sort()
    return xs[0] * xs[1]


def test_a_list_argument_sorted_in_place_is_refused_at_its_line():
    # srcgrad cannot tell a list argument from an array when it transforms `xs.sort()`
    with pytest.raises(srcgrad.errors.UnsupportedCaseError, match=r"xs = np.sort\(xs\)") as info:
        grad(sorted_in_place)([3.0, 1.0, 2.0])
    assert "test_dynamic_dtype_writes.py" in info.value.__notes__[0]
    assert "xs.sort()" in info.value.__notes__[0]
    xs = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(grad(sorted_in_place)(xs), [0.0, 2.0, 1.0])
    assert_same(np.array([3.0, 1.0, 2.0]), xs)


# The differentiated argument itself may be given as integers or booleans (API.md: it gets a
# float64 gradient); a write into a copy of it, or into ``zeros_like`` of it, is then truncated
# and passes no gradient. The reference is the float function with each written value held at
# what NumPy stored (its derivative through the write is zero), by central differences.


def wrt_written_into_its_copy(x, k):
    y = x.copy()
    y[0] = x[0] * 0.5
    return np.sum(y * x) + np.sum(k)


def wrt_written_into_its_copy_held(x, stored):
    y = x.copy()
    y[0] = stored[0]
    return np.sum(y * x)


def wrt_written_into_zeros_like(x, k):
    z = np.zeros_like(x)
    z[1:] = x[:-1] * 1.5
    return np.sum(z * x) + np.sum(x * x)


def wrt_written_into_zeros_like_held(x, stored):
    z = np.zeros_like(x)
    z[1:] = stored[1:]
    return np.sum(z * x) + np.sum(x * x)


def wrt_updated_in_a_copy(x, k):
    y = np.copy(x)
    y[1] += x[2] * 0.25
    return np.sum(y * x * 2.0)


def wrt_updated_in_a_copy_held(x, stored):
    y = np.copy(x)
    y[1] = stored[1]
    return np.sum(y * x * 2.0)


def stored_by(f, x):
    """The written array as NumPy holds it after ``f``'s write (``f``'s statements replayed)."""
    if f is wrt_written_into_its_copy:
        y = x.copy()
        y[0] = x[0] * 0.5
    elif f is wrt_written_into_zeros_like:
        y = np.zeros_like(x)
        y[1:] = x[:-1] * 1.5
    else:
        y = np.copy(x)
        y[1] += x[2] * 0.25
    return y.astype(np.float64)


WRT_CASES = [
    (wrt_written_into_its_copy, wrt_written_into_its_copy_held),
    (wrt_written_into_zeros_like, wrt_written_into_zeros_like_held),
    (wrt_updated_in_a_copy, wrt_updated_in_a_copy_held),
]
WRT_DTYPES = [np.int64, np.int32, np.bool_, np.float64]
WRT_PAIRS = [(f, held, d) for f, held in WRT_CASES for d in WRT_DTYPES]
WRT_IDS = [f"{f.__name__}-{np.dtype(d).name}" for f, _, d in WRT_PAIRS]


def wrt_truth(f, held, x):
    if x.dtype == np.float64:  # a float argument: the function itself, unchanged
        return numeric_grad(lambda v: f(v, 0.0), (x.copy(),), 0)
    stored = stored_by(f, x)
    return numeric_grad(lambda v: held(v, stored), (x.astype(np.float64),), 0)


def x_of(dtype):
    if dtype == np.float64:
        return X.copy()
    return np.array([True, True, False]) if dtype == np.bool_ else np.array([3, 2, 5], dtype)


@pytest.mark.parametrize("f, held, dtype", WRT_PAIRS, ids=WRT_IDS)
def test_a_discrete_differentiated_argument_written_into(f, held, dtype):
    x = x_of(dtype)
    truth = wrt_truth(f, held, x)
    assert truth.dtype == np.float64
    for optimize in (True, False):
        value, g = value_and_grad(f, optimize=optimize)(x, 0.0)
        np.testing.assert_allclose(value, f(x.copy(), 0.0))
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, truth, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(vjp(f)(x, 0.0, 1.0), truth, rtol=1e-6, atol=1e-8)
    t = np.array([0.4, -1.1, 0.7])
    value, tangent = jvp(f)(x, 0.0, t)
    np.testing.assert_allclose(value, f(x.copy(), 0.0))
    np.testing.assert_allclose(tangent, truth @ t, rtol=1e-6, atol=1e-8)
    assert_same(x_of(dtype), x)


def from_a_list_literal(x):
    # an element read out of a list literal may be an integer array: a write into an array
    # computed from it is truncated (no dtype check here gave [4.1, 2] for [2, 2])
    held = [np.array([1, 2])]
    y = held[0] * 1
    y[0] = x[0] * 3.0
    return np.sum(y * x)


def from_a_dict_literal(x):
    held = {"a": np.array([1, 2])}
    y = -held["a"]
    y[0] = x[0] * 3.0
    return np.sum(y * x)


@pytest.mark.parametrize("f", [from_a_list_literal, from_a_dict_literal])
def test_an_element_of_a_literal_container_may_be_integer(f):
    x = np.array([0.7, 1.3])
    np.testing.assert_allclose(grad(f)(x), numeric_grad(f, (x,), 0), rtol=1e-7)
    t = np.array([1.0, -2.0])
    assert jvp(f)(x, t)[1] == pytest.approx(numeric_grad(f, (x,), 0) @ t, rel=1e-7)
