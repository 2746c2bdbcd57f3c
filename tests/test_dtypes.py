"""float32 in, float32 out; integer and bool arguments get float64 gradients.

Every gradient case of the straight-line, control-flow and language suites runs again with its
float64 arrays turned into float32: each gradient must have its argument's dtype (float32 arrays
and NumPy float32 scalars give float32, Python floats give floats) and agree with the float64
gradient to float32 precision. The other transforms (vjp, jvp, jacobian, hessian, higher order)
are checked the same way on a few functions.
"""

import numpy as np
import pytest
from test_control_flow import CASES as CONTROL_CASES
from test_language import CASES as LANGUAGE_CASES
from test_straightline import CASES as STRAIGHT_CASES

import srcgrad
from srcgrad import grad, hessian, jacobian, jvp, value_and_grad, vjp

F32 = np.float32


def to32(value):
    """``value`` with every float64 array (in containers too) as float32."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(F32)
    if isinstance(value, dict):
        return {k: to32(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return type(value)(to32(v) for v in value)
    return value


def leaves(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in leaves(v)]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in leaves(v)]
    return [value]


def assert_dtype_like(g, x):
    """``g`` is a gradient of ``x`` in x's dtype: float32 for float32 (array or NumPy scalar),
    float64 for float64 and integer arrays, a Python float for a Python float."""
    for gl, xl in zip(leaves(g), leaves(x), strict=True):
        if isinstance(xl, (np.ndarray, np.generic)):
            want = xl.dtype if xl.dtype.kind in "fc" else np.dtype(np.float64)
            assert np.asarray(gl).dtype == want, f"gradient {gl!r} of a {xl.dtype} argument"
            if isinstance(xl, np.generic):
                assert isinstance(gl, np.generic), f"gradient {gl!r} of a NumPy scalar"
        elif isinstance(xl, float):
            assert isinstance(gl, float), f"gradient {gl!r} of a Python float"


def close(a, b, rtol=2e-3):
    for x, y in zip(leaves(a), leaves(b), strict=True):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        scale = max(1.0, float(np.max(np.abs(y), initial=0.0)))
        np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale)


def selected(f, args, wrt):
    import inspect

    names = list(inspect.signature(f).parameters)
    sels = wrt if isinstance(wrt, tuple) else (wrt,)
    return [args[s if isinstance(s, int) else names.index(s)] for s in sels]


def _has_float64(args):
    return any(isinstance(v, np.ndarray) and v.dtype == np.float64 for v in leaves(list(args)))


def _args_fn(case):
    return case.values[0] if hasattr(case, "values") else case[0]


def _args(case):
    return case.values[1] if hasattr(case, "values") else case[1]


DTYPE_DEPENDENT = {"attributes_in_control_flow"}  # computes differently for float32 inputs
CASES = [
    c for c in STRAIGHT_CASES + CONTROL_CASES + LANGUAGE_CASES
    if _has_float64(_args(c)) and getattr(_args_fn(c), "__name__", "") not in DTYPE_DEPENDENT
]


@pytest.mark.parametrize("f, args, wrt", CASES)
def test_float32_arguments_get_float32_gradients(f, args, wrt):
    args32 = tuple(to32(a) for a in args)
    g64 = grad(f, wrt=wrt)(*args)
    g32 = grad(f, wrt=wrt)(*args32)
    gs = g32 if isinstance(wrt, tuple) else (g32,)
    for g, x in zip(gs, selected(f, args32, wrt), strict=True):
        assert_dtype_like(g, x)
    close(g32, g64)


def loss(w, x):
    h = np.tanh(x * w)
    return np.sum(h * h) / 2.0


def looped(x, n):
    s = 0.0
    acc = np.zeros(3)  # float64 inside: the gradient still has x's dtype
    for i in range(n):
        s = s + np.sum(np.sin(x) * i)
        acc[i % 3] = acc[i % 3] + x[i % 3] ** 2
    if s > 0:
        s = s * 2.0
    return s + np.sum(acc)


def containers(d):
    return np.sum(d["a"] ** 2) + d["b"][0] * d["b"][1]


def vector(x):
    return np.sin(x) * x[0]


def total(x):
    return np.sum(x)


def mean_square(x):
    return np.mean(x ** 2)


def product(x):
    return x[1] * x[2]


X = np.array([0.5, -1.0, 2.0], F32)


def test_the_issue_example():
    assert grad(lambda v: np.sum(v * v))(np.ones(3, np.float32)).dtype == np.float32


@pytest.mark.parametrize("fn, args", [
    (loss, (X, 1.5)), (looped, (X, 5)), (total, (X,)), (mean_square, (X,)), (product, (X,)),
])
def test_grad_and_value_and_grad(fn, args):
    g = grad(fn)(*args)
    assert g.dtype == F32
    value, g2 = value_and_grad(fn)(*args)
    assert g2.dtype == F32
    close(g, grad(fn)(*(to64(a) for a in args)))


def to64(v):
    return v.astype(np.float64) if isinstance(v, np.ndarray) else v


def test_numpy_float32_scalar_gives_a_float32_scalar():
    g = grad(lambda z: z * z * 3.0)(F32(2.0))
    assert type(g) is F32 and g == 12.0
    g = grad(lambda z: np.sin(z))(F32(0.0))
    assert type(g) is F32
    d2 = grad(grad(lambda z: z * z * z))(F32(3.0))
    assert type(d2) is F32 and d2 == 18.0


def test_container_leaves_keep_their_dtypes():
    d = {"a": X, "b": [F32(2.0), 3.0]}
    g = grad(containers)(d)
    assert g["a"].dtype == F32
    assert type(g["b"][0]) is F32
    assert isinstance(g["b"][1], float) and g["b"][1] == 2.0


def test_integer_and_bool_arguments_get_float64_gradients():
    g = grad(lambda v: np.sum(v * v))(np.array([1, 2, 3]))
    assert g.dtype == np.float64 and list(g) == [2.0, 4.0, 6.0]
    g = grad(lambda z: z * z)(3)
    assert type(g) is float and g == 6.0
    g = grad(lambda v, w: np.sum(v * w), wrt=1)(X, np.array([1, 0, 1]))
    assert g.dtype == np.float64
    g = grad(lambda v: np.sum(v * 2.0))(np.array([True, False]))
    assert g.dtype == np.float64 and list(g) == [2.0, 2.0]


def test_float64_arguments_keep_float64_when_float32_values_are_used():
    w32 = np.array([1.0, 2.0, 3.0], F32)
    g = grad(lambda v: np.sum(v * w32))(np.array([1.0, 1.0, 1.0]))
    assert g.dtype == np.float64


def test_element_writes_and_loops():
    def f(x):
        y = x.copy()
        for i in range(1, 3):
            y[i] = y[i - 1] * x[i]
        return np.sum(y)

    g = grad(f)(X)
    assert g.dtype == F32
    close(g, grad(f)(X.astype(np.float64)))


def test_vjp_and_jvp():
    seed = np.ones(3, F32)
    g = vjp(vector)(X, seed)
    assert g.dtype == F32
    value, t = jvp(vector)(X, seed)
    assert value.dtype == F32 and t.dtype == F32


def test_jvp_of_an_output_that_does_not_depend_on_the_argument():
    value, t = jvp(lambda x, y: y * 2.0, wrt=0)(X, X, np.ones(3, F32))
    assert t.dtype == F32 and not t.any()


@pytest.mark.parametrize("method", ["auto", "forward", "reverse"])
def test_jacobian(method):
    J = jacobian(vector, method=method)(X)
    assert J.dtype == F32 and J.shape == (3, 3)
    close(J, jacobian(vector, method=method)(X.astype(np.float64)))


def test_hessian_and_hvp():
    H = hessian(loss)(X, 1.5)
    assert H.dtype == F32
    close(H, hessian(loss)(X.astype(np.float64), 1.5))
    Hv = srcgrad.hvp(loss)(X, 1.5, np.ones(3, F32))
    assert Hv.dtype == F32


def test_second_order():
    g2 = grad(lambda x: np.sum(grad(loss)(x, 1.5) ** 2))(X)
    assert g2.dtype == F32


def _rule_rows():
    from test_rules import PARAMS

    return [p for p in PARAMS if not p.marks]


@pytest.mark.parametrize("r", _rule_rows())
def test_every_rule_keeps_float32(r):
    from test_rules import build

    f, args = build(r, 7)
    wrt = tuple(r.wrt) or tuple(args)
    args32 = {k: to32(v) for k, v in args.items()}
    g32 = grad(f, wrt=wrt)(*args32.values())
    g64 = grad(f, wrt=wrt)(*args.values())
    for g, name in zip(g32, wrt, strict=True):
        assert_dtype_like(g, args32[name])
    close(g32, g64, rtol=5e-2)


def test_complex64_and_float16_keep_their_dtypes():
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    g = grad(abs_square)(z)
    assert g.dtype == np.complex64
    np.testing.assert_allclose(g, 2 * z, rtol=1e-6)
    h = grad(abs_square)(np.ones(2, np.float16))
    assert h.dtype == np.float16


def abs_square(z):
    return np.sum(np.abs(z) ** 2)


def mean_of_array(x):
    return np.mean(np.array(x)) + np.sum(np.array(x) * np.ones(3))


def mean_of_asarray(x):
    return np.mean(np.asarray(x)) + np.sum(np.asarray(x) * np.ones(3))


@pytest.mark.parametrize("f", [mean_of_array, mean_of_asarray], ids=lambda f: f.__name__)
def test_a_float_made_a_0d_array_gets_a_float_gradient(f):
    # the gradient of np.array(x) / np.asarray(x) takes the argument's type from the argument,
    # not from the 0-d array made of it nor from its cotangent (mutants of the templates)
    g = grad(f)(1.5)
    assert type(g) is float and g == 4.0
    g = grad(f)([1.5, 2.0, 0.5])
    assert np.allclose(g, 4 / 3) and np.shape(g) == (3,)
