"""``x op= v`` where the shapes and dtypes of a derivative specialized to its arguments' kinds
prove that NumPy's write keeps x's shape and dtype (analysis/kept_writes.py): the run-time check
(``inplace_target`` / ``kept_dtype``, runtime/writes.py) is left out, and only there."""

import numpy as np
import pytest
from gradcheck import numeric_grad

from srcgrad import jvp, source, specialize, value_and_grad

X = np.array([0.3, -0.2, 0.5])


def accumulated(x):
    s = x * 1.0
    for i in range(4):
        s += x * x[i % 3]
        s *= 0.5
    s -= np.sin(x)
    return np.sum(s * s)


def by_another_argument(x, w):
    s = x * 1.0
    s += w  # w's shape may be smaller (broadcast) or larger (an error): checked
    return np.sum(s * s)


def widened(x):
    y = x * 1.0
    y += np.outer(x, x)
    return np.sum(y)


def into_integers(n, x):
    m = n * 2
    m += np.sum(x) * 0.0  # an int array given floats: NumPy's casting error
    return np.sum(m * x)


def into_float32(x, w):
    y = x * 1.0  # float32
    y += w  # float64 added: y stays float32
    return np.sum(y * w)


def _checked(df):
    return "inplace_target(" in source(df)


def test_a_write_proven_to_keep_shape_and_dtype_has_no_check():
    vg, tangent = specialize(value_and_grad(accumulated)), specialize(jvp(accumulated))
    value, g = vg(X)
    assert not _checked(vg)
    assert value == accumulated(X)
    np.testing.assert_allclose(g, numeric_grad(accumulated, (X,), 0), rtol=1e-6)
    t = np.array([0.1, 0.7, -0.4])
    assert tangent(X, t)[0] == accumulated(X)
    assert not _checked(tangent)
    np.testing.assert_allclose(tangent(X, t)[1], g @ t, rtol=1e-10)
    assert _checked(value_and_grad(accumulated))  # unspecialized: no kinds, checked


def test_writes_not_proven_keep_their_check_and_numpys_behaviour():
    vg = specialize(value_and_grad(by_another_argument))
    w = np.array([0.25])
    value, g = vg(X, w)
    assert _checked(vg) and value == by_another_argument(X, w)
    np.testing.assert_allclose(g, numeric_grad(by_another_argument, (X, w), 0), rtol=1e-6)
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        vg(X, np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        specialize(value_and_grad(widened))(X)
    n = np.array([1, 2, 3])
    with pytest.raises(TypeError, match="same_kind"):
        specialize(value_and_grad(into_integers, wrt=1))(n, X)
    x32 = X.astype(np.float32)
    vg32 = specialize(value_and_grad(into_float32))
    assert vg32(x32, X)[0] == into_float32(x32, X) and _checked(vg32)
