"""Compare srcgrad gradients with central differences in float64.

`check_grad(f, args, wrt=0, **kwargs)` calls `grad(f, wrt=wrt)(*args, **kwargs)` and checks, for
each selected argument, the type and shape of its gradient, its value against central differences,
and that the call left every argument unchanged. `numeric_grad(f, args, i)` is the reference.
"""

import copy
import inspect

import numpy as np

from srcgrad import grad, hvp, jvp, value_and_grad

STEP = 1e-6  # relative step of the central differences
RTOL = 1e-6
ATOL = 1e-8


def _as_scalar(out):
    """The single element of a scalar output (float, 0-d, shape (1,), (1, 1)...) as a float."""
    out = np.asarray(out, dtype=np.float64)
    assert out.size == 1, f"f must return exactly one element, got shape {out.shape}"
    return float(out.reshape(()))


def _slot(f, args, sel):
    """Where the argument selected by `sel` lives: an int index into args, or a keyword name."""
    if isinstance(sel, str):
        names = list(inspect.signature(f).parameters)
        position = names.index(sel)
        return position if position < len(args) else sel
    return sel


def _get(args, kwargs, slot):
    return args[slot] if isinstance(slot, int) else kwargs[slot]


def _call_with(f, args, kwargs, slot, value):
    """f(*args, **kwargs) with the argument at `slot` replaced by `value`, as a float."""
    args, kwargs = list(args), dict(kwargs)
    if isinstance(slot, int):
        args[slot] = value
    else:
        kwargs[slot] = value
    return _as_scalar(f(*args, **kwargs))


def numeric_grad(f, args, i, kwargs=None, step=STEP):
    """Central-difference gradient of scalar-valued f with respect to argument i (index or name);
    of a complex argument ``z = x + 1j*y``, ``df/dx + 1j*df/dy`` (srcgrad's convention)."""
    kwargs = kwargs or {}
    slot = _slot(f, args, i)
    x = _get(args, kwargs, slot)
    if np.iscomplexobj(x):
        return _complex_numeric_grad(f, args, kwargs, slot, x, step)
    if isinstance(x, np.ndarray):
        x = x.astype(np.float64)
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            h = step * max(1.0, abs(x[idx]))
            xp, xm = x.copy(), x.copy()
            xp[idx] += h
            xm[idx] -= h
            width = xp[idx] - xm[idx]  # before the calls: f may write into its argument
            fp = _call_with(f, args, kwargs, slot, xp)
            fm = _call_with(f, args, kwargs, slot, xm)
            g[idx] = (fp - fm) / width
        return g
    x = float(x)
    h = step * max(1.0, abs(x))
    xp, xm = x + h, x - h
    return (_call_with(f, args, kwargs, slot, xp) - _call_with(f, args, kwargs, slot, xm)) / (
        xp - xm
    )


def _complex_numeric_grad(f, args, kwargs, slot, z, step):
    """``df/dx + 1j*df/dy`` by central differences along the real and the imaginary axis."""
    z = np.asarray(z, dtype=np.complex128)
    g = np.zeros(z.shape, dtype=np.complex128)
    for idx in np.ndindex(z.shape):
        for direction in (1.0, 1j):
            h = step * max(1.0, abs(z[idx]))
            zp, zm = z.copy(), z.copy()
            zp[idx] += h * direction
            zm[idx] -= h * direction
            value = (_call_with(f, args, kwargs, slot, _shaped(zp))
                     - _call_with(f, args, kwargs, slot, _shaped(zm))) / (2 * h)
            g[idx] += value * direction
    return g if g.shape else complex(g)


def _shaped(z):
    return z if z.shape else complex(z)


def same_bits(got, want):
    """``got`` is ``want`` (a value or a tuple of them) bit for bit, in shape and dtype too."""
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.result_type(g) == np.result_type(w)
        assert np.array_equal(g, w), (g, w)


def assert_same(before, after, what="argument"):
    """Deep equality of values that may contain arrays (used to detect mutation)."""
    if isinstance(before, np.ndarray):
        assert isinstance(after, np.ndarray), f"{what} changed type"
        assert before.dtype == after.dtype and before.shape == after.shape, f"{what} changed"
        assert np.array_equal(before, after, equal_nan=True), f"{what} was modified in place"
    elif isinstance(before, (tuple, list)):
        assert type(before) is type(after) and len(before) == len(after), f"{what} changed"
        for k, (b, a) in enumerate(zip(before, after, strict=True)):
            assert_same(b, a, f"{what}[{k}]")
    elif isinstance(before, dict):
        assert before.keys() == after.keys(), f"{what} changed keys"
        for k in before:
            assert_same(before[k], after[k], f"{what}[{k!r}]")
    else:
        assert before == after, f"{what} changed: {before!r} -> {after!r}"


def assert_grad_like(g, x, what="gradient"):
    """A gradient has the type and shape of its argument: float for a float, same-shape array."""
    if isinstance(x, np.ndarray):
        assert isinstance(g, np.ndarray), f"{what} should be an ndarray, got {type(g).__name__}"
        assert g.shape == x.shape, f"{what} has shape {g.shape}, argument has {x.shape}"
        kind = np.complexfloating if np.iscomplexobj(x) else np.floating
        assert np.issubdtype(g.dtype, kind), f"{what} has dtype {g.dtype} for {x.dtype}"
    elif isinstance(x, complex):
        assert isinstance(g, (complex, np.complexfloating)), f"{what} of a complex: {g!r}"
    else:
        assert isinstance(g, (float, np.floating)), (
            f"{what} of a float argument should be a float, got {type(g).__name__} {g!r}"
        )


def check_grad(f, args, wrt=0, *, rtol=RTOL, atol=ATOL, **kwargs):
    """Check grad(f, wrt)(*args, **kwargs) against central differences; return the gradient."""
    args = tuple(args)
    before = copy.deepcopy((args, kwargs))
    g = grad(f, wrt=wrt)(*args, **kwargs)
    assert_same(before, (args, kwargs), "arguments")

    if isinstance(wrt, tuple):
        assert isinstance(g, tuple), f"tuple wrt should give a tuple, got {type(g).__name__}"
        assert len(g) == len(wrt)
        selectors, grads = wrt, g
    else:
        selectors, grads = (wrt,), (g,)

    for sel, gi in zip(selectors, grads, strict=True):
        x = _get(args, kwargs, _slot(f, args, sel))
        assert_grad_like(gi, x, f"gradient wrt {sel!r}")
        expected = numeric_grad(f, args, sel, kwargs)
        name = getattr(f, "__name__", f)
        # assert_allclose takes NaN for equal to NaN: a NaN gradient checked against NaN
        # differences (a function evaluated outside its domain) would pass whatever srcgrad gave
        assert not np.any(np.isnan(np.asarray(expected, dtype=complex))), (
            f"central differences of {name} wrt {sel!r} are NaN: the check would pass on NaN")
        np.testing.assert_allclose(
            gi, expected, rtol=rtol, atol=atol, err_msg=f"gradient wrt {sel!r} of {name}"
        )
    return g


def check_both_and_jvp(f, c, x, t):
    """``value_and_grad`` of ``f(c, x)`` in both arguments, and its jvp in ``x`` along ``t``,
    against central differences (the value against ``f`` itself)."""
    want = [numeric_grad(f, [c, x], k) for k in (0, 1)]
    value, got = value_and_grad(f, wrt=(0, 1))(c, x)
    assert np.isclose(value, f(c, x))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-9)
    _, tangent = jvp(f, wrt=1)(c, x, t)
    np.testing.assert_allclose(tangent, want[1] @ t, rtol=1e-6, atol=1e-9)


def check_hvp_in_x(f, c, x, t, eps=1e-5):
    """The gradient of ``f(c, x)`` in ``x`` against central differences, and its hvp along
    ``t`` against differences of that gradient."""
    df = grad(f, wrt=1)
    np.testing.assert_allclose(df(c, x), numeric_grad(f, [c, x], 1), rtol=1e-6, atol=1e-9)
    want = (df(c, x + eps * t) - df(c, x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(hvp(f, wrt=1)(c, x, t), want, rtol=1e-6, atol=1e-8)


def check_jvp_and_hvp(f, x, t, *, jvp_atol=0.0, eps=1e-5):
    """The jvp of ``f(x)`` along ``t`` against central differences of ``f``, and its hvp along
    ``t`` against central differences of ``grad(f)``."""
    want = numeric_grad(f, [x], 0)
    np.testing.assert_allclose(jvp(f)(x, t)[1], want @ t, rtol=1e-6, atol=jvp_atol)
    df = grad(f)
    np.testing.assert_allclose(hvp(f)(x, t), (df(x + eps * t) - df(x - eps * t)) / (2 * eps),
                               rtol=1e-5, atol=1e-8)
