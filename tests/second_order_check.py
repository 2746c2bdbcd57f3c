"""Check second derivatives against central differences of the first derivative, in float64.

`check_second_order(f, args, k)` compares, for argument `k` of a scalar-valued `f`:
- reverse over reverse: each row of the Hessian as `vjp(grad(f))` of a unit seed
  (`grad(grad(f))` for a scalar argument);
- forward over reverse: each column as `jvp(grad(f))` of a unit tangent, and `hessian(f)`
  (the tangent of the gradient, `hvp`);
with central differences of `grad(f)` (the order below; `grad(f)` itself against central
differences of `f` first), and checks that no call changed an argument.
"""

import numpy as np
from gradcheck import assert_same, numeric_grad

from srcgrad import grad, hessian, jvp, vjp

RTOL = 1e-5
ATOL = 1e-6


def _copies(args):
    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


def _call(fn, args, *extra):
    call_args = _copies(args)
    out = fn(*call_args, *extra)
    for before, after in zip(args, call_args):
        assert_same(before, after)
    return out


def _units(x):
    for i in range(int(np.size(x))):
        e = np.zeros(np.size(x))
        e[i] = 1.0
        yield e.reshape(np.shape(x)) if isinstance(x, np.ndarray) else float(e[0])


def hessian_by_differences(f, args, k=0):
    """The Hessian of f in argument k: central differences of srcgrad's gradient (shape
    x.shape + x.shape)."""
    df = grad(f, wrt=k)
    x = args[k]
    rows = []
    for i in range(int(np.size(x))):
        def component(*a, i=i):
            return np.ravel(np.asarray(df(*_copies(a)), dtype=np.float64))[i]

        rows.append(np.ravel(numeric_grad(component, args, k)))
    return np.array(rows).reshape(np.shape(x) + np.shape(x))


def check_second_order(f, args, k=0, rtol=RTOL, atol=ATOL):
    """Reverse-over-reverse and forward-over-reverse second derivatives of f in argument k
    against central differences of its gradient; returns the Hessian."""
    args = list(args)
    fresh = lambda *a: f(*_copies(a))  # noqa: E731
    np.testing.assert_allclose(_call(grad(f, wrt=k), args), numeric_grad(fresh, args, k),
                               rtol=1e-6, atol=1e-8, err_msg="first order (grad)")
    want = hessian_by_differences(f, args, k)
    x = args[k]
    n = int(np.size(x))
    flat = want.reshape(n, n)
    df = grad(f, wrt=k)
    if isinstance(x, np.ndarray):
        back = vjp(df, wrt=k)
        rows = [np.ravel(_call(back, args, seed)) for seed in _units(x)]
        np.testing.assert_allclose(np.array(rows), flat, rtol=rtol, atol=atol,
                                   err_msg="reverse over reverse (vjp of grad)")
    else:
        got = _call(grad(df, wrt=k), args)
        np.testing.assert_allclose(got, flat[0, 0], rtol=rtol, atol=atol,
                                   err_msg="reverse over reverse (grad of grad)")
    forward = jvp(df, wrt=k)
    cols = []
    for tangent in _units(x):
        value, t = _call(forward, args, tangent)
        np.testing.assert_allclose(value, _call(df, args), rtol=1e-12, atol=1e-12)
        cols.append(np.ravel(t))
    np.testing.assert_allclose(np.array(cols).T, flat, rtol=rtol, atol=atol,
                               err_msg="forward over reverse (jvp of grad)")
    h = _call(hessian(f, wrt=k), args)
    np.testing.assert_allclose(np.reshape(h, (n, n)), flat, rtol=rtol, atol=atol,
                               err_msg="hessian (hvp)")
    return want
