"""Code that is safe and was refused (issue 13's false refusals): `x.view()`, `np.array(a,
copy=...)`, `del L[a:b]`, and a random generator bound inside a `with` block of a checkpointed
loop. Each gives Python's value, and gradients that agree with central differences."""

import contextlib

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import SrcgradError, UnsupportedSyntaxError

X = np.array([0.3, -0.7, 1.1])


def _central(f, x, step=1e-6):
    return np.array([(f(x + step * e) - f(x - step * e)) / (2 * step) for e in np.eye(x.size)])


def _agrees(f, checkpoint=None, second=True):
    value, g = srcgrad.value_and_grad(f, checkpoint=checkpoint)(X.copy())
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(g, _central(f, X), rtol=1e-6, atol=1e-8)
    t = np.array([0.5, 1.0, -2.0])
    _, tangent = srcgrad.jvp(f)(X.copy(), t)
    assert tangent == pytest.approx(float(np.dot(g, t)), rel=1e-9)
    if second:
        h = srcgrad.hvp(f, checkpoint=checkpoint)(X.copy(), t)
        df = srcgrad.grad(f)
        numeric = (df(X + 1e-5 * t) - df(X - 1e-5 * t)) / 2e-5
        np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-7)


def view_read(x):
    y = np.sin(x) * 1.0
    z = y.view()
    s = np.sum(np.sin(z)) * 2.0
    y[1] = x[0] * x[2]  # (the sweep reads z as it was)
    return s + np.sum(y * x)


def view_of_a_matrix(x):
    M = np.outer(x, x)
    return np.sum(np.sin(M.view().T) * M)


def array_no_copy(x):
    y = np.sin(x)
    return np.sum(np.array(y, copy=False) * x) + np.sum(np.array(y, copy=None) ** 2)


def array_copied(x):
    y = x * 2.0
    z = np.array(y, copy=True)
    z[0] = x[1] * x[2]
    return np.sum(y * z)


def del_slices(x):
    L = [x * 1.0, np.sin(x), x ** 2, np.cos(x)]
    del L[::-2]  # (the items at 3 and 1)
    del L[:1]
    return np.sum(L[0] * x) + len(L)


def del_in_a_loop(x):
    L = [x * 1.0]
    s = 0.0
    for _ in range(3):
        L.append(np.sin(L[-1]) * x)
        del L[:-1]
        s = s + np.sum(L[0])
    return s


@pytest.mark.parametrize("f, second", [(view_read, True), (view_of_a_matrix, False),
                                       (array_no_copy, False), (array_copied, True),
                                       (del_slices, False), (del_in_a_loop, False)])
def test_safe_forms_work(f, second):
    _agrees(f, second=second)


def view_written(x):
    y = x * 1.0
    z = y.view()
    z += x
    return np.sum(y * x)


def view_as_another_type(x):
    return np.sum(x.view(np.int64) * x)


def test_what_a_view_cannot_do_is_still_refused():
    # a write through the view changes y too: refused, as through `y[...]` (when it runs)
    with pytest.raises(SrcgradError, match="shares memory with it"):
        srcgrad.grad(view_written)(X)
    with pytest.raises(UnsupportedSyntaxError, match="ndarray.view"):
        srcgrad.grad(view_as_another_type)(X)


def del_slice_of_a_dict(x, d):
    del d[:1]
    return np.sum(x)


def test_del_of_a_slice_of_a_dict_is_pythons_error():
    with pytest.raises(TypeError, match="slice"):
        srcgrad.grad(del_slice_of_a_dict)(X, {0: 1.0})


def draws_in_a_with_block(x):
    a = 0.5
    for _ in range(2):
        with contextlib.nullcontext():
            rng = np.random.default_rng(4)
            a = a + np.sum(x * rng.normal(size=3))
    return a


def test_a_generator_bound_in_a_with_block_of_a_checkpointed_loop():
    # `rng` was carried in the loop's state (a `with` block read as a whole), and its step's
    # derivative found no rule for np.random.default_rng (NoRuleError with checkpoint=2)
    _agrees(draws_in_a_with_block, checkpoint=2, second=False)
    np.testing.assert_array_equal(srcgrad.grad(draws_in_a_with_block, checkpoint=2)(X),
                                  srcgrad.grad(draws_in_a_with_block)(X))
