"""The complex conventions of the rules, checked without autograd (issue 15; docs/complex.md).

Session 2 compared srcgrad's vjp of complex functions with autograd's, rule by rule, by a script
(``vjp(f)(z, s) == conj(autograd_vjp(conj(s)))``). That relation says srcgrad's vjp is the
gradient (``d/dx + 1j d/dy``) of the pairing ``Re(sum(conj(s) * f(z)))``, which central
differences along the real and imaginary axes check directly. Here the same calls run as one
function returning all of them, so one ``vjp`` and one ``jvp`` transform cover every rule:

* ``vjp`` with a complex seed per output against central differences of the summed pairing
  along a random direction per input (complex for ``z``, ``w``, ``zz``, real for ``h``: a real
  input gets a real gradient), ``Re(sum(conj(g) * u))``;
* ``jvp`` with complex tangents (real for ``h``) against central differences of each output
  along them, output by output (a failure names the call);
* on a vjp failure, each call alone names the rule that differs.
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest

import srcgrad

CALLS = [
    "np.exp(z)", "np.log(z)", "np.sqrt(z)", "np.square(z)", "np.reciprocal(z)", "np.sin(z)",
    "np.cos(z)", "np.tan(z)", "np.arcsin(z)", "np.arccos(z)", "np.arctan(z)", "np.sinh(z)",
    "np.cosh(z)", "np.tanh(z)", "np.arcsinh(z)", "np.arccosh(z)", "np.arctanh(z)", "np.abs(z)",
    "np.conj(z)", "np.real(z)", "np.imag(z)", "np.angle(z)", "np.log10(z)", "np.log2(z)",
    "np.expm1(z)", "np.log1p(z)", "np.exp2(z)", "np.negative(z)", "z * w", "z / w", "z + w",
    "z - w", "z ** w", "z ** 3", "np.sum(z)", "np.mean(z)", "np.prod(z)", "np.cumsum(z)",
    "np.cumprod(z)", "np.diff(z)", "np.transpose(z)", "np.reshape(z, (3, 2))", "np.flip(z)",
    "np.roll(z, 1)", "np.tile(z, 2)", "z[1, ::2]", "np.concatenate([z, w])", "np.stack([z, w])",
    "np.pad(z, 1)", "np.triu(z)", "np.dot(z, w.T)", "np.matmul(z, w.T)", "np.vdot(z, w)",
    "np.inner(z, w)", "np.outer(z, w)", "np.tensordot(z, w.T, 1)",
    "np.einsum('ij,kj->ik', z, w)", "np.kron(z, w)", "np.linalg.inv(zz)", "np.linalg.det(zz)",
    "np.linalg.solve(zz, w[0])", "np.linalg.norm(z)", "np.fft.fft(z)", "np.fft.ifft(z)",
    "np.fft.fft2(z)", "np.fft.ifftn(z)", "np.fft.fftshift(z)", "np.fft.ifftshift(z)",
    "np.fft.irfft(z)", "np.fft.hfft(z)", "np.fft.rfft(h)", "np.fft.ihfft(h)", "np.fft.rfft2(h)",
    "np.fft.irfft2(z)", "np.fft.fft(z, 5, norm='ortho')", "np.fft.irfft(z, 5)",
    "np.real(h * z)", "np.abs(h * (1 + 2j))", "np.exp(1j * h)", "h * z + np.conj(w) * zz[:2]",
    "abs(z)", "abs(h * (1 + 2j))", "abs(z) * w", "np.abs(z) * w",
    "np.linalg.norm(z, axis=1, keepdims=True)", "np.linalg.norm(zz, ord=1)",
    "np.linalg.vector_norm(z)", "np.linalg.vector_norm(z, axis=1, keepdims=True, ord=3)",
    "np.linalg.matrix_norm(zz, keepdims=True)", "np.linalg.matrix_norm(z, ord=np.inf)",
    "np.linalg.norm(z) * w", "np.linalg.vector_norm(z, axis=1) * w[:, 0]",
    "np.linalg.matrix_norm(zz) * w", "np.linalg.matrix_norm(np.stack([zz, 2 * zz]))",
    "np.linalg.matrix_norm(np.stack([zz, 2 * zz]), keepdims=True)",
    "np.ediff1d(z, to_begin=w[0])", "np.ediff1d(z, to_end=w[0])",
    # a real part (imaginary part, angle) met by complex arithmetic: a complex cotangent, whose
    # real part alone counts
    "(np.real(z) + 2 * np.imag(z) + 3 * np.angle(z)) * w",
]
NAMES = ("z", "w", "h", "zz")
STEP = 1e-6


def _inputs():
    rng = np.random.default_rng(0)
    z = rng.uniform(0.3, 1.2, (2, 3)) + 1j * rng.uniform(0.3, 1.2, (2, 3))
    w = rng.uniform(0.3, 1.2, (2, 3)) + 1j * rng.uniform(0.3, 1.2, (2, 3))
    h = rng.uniform(-1, 1, (2, 3))
    zz = rng.uniform(-1, 1, (3, 3)) + 1j * rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    return [z, w, h, zz]


def _define(calls, name):
    text = f"def {name}(z, w, h, zz):\n    return [{', '.join(calls)}]\n"
    filename = f"<complex-table {name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"np": np}
    exec(compile(text, filename, "exec"), scope)
    return scope[name]


TABLE = _define(CALLS, "table")


def _directions(values, rng):
    """A direction per input: complex for a complex input, real for a real one."""
    return [rng.normal(size=v.shape) + (1j * rng.normal(size=v.shape) if np.iscomplexobj(v)
                                        else 0.0) for v in values]


def _pairing(fn, values, seeds):
    return sum(float(np.real(np.sum(np.conj(s) * np.asarray(o))))
               for s, o in zip(seeds, fn(*values)))


def _slopes(fn, values, seeds, directions):
    """Per input, the derivative of the pairing along its direction (central differences)."""
    slopes = []
    for i, u in enumerate(directions):
        up = [v + STEP * u if k == i else v for k, v in enumerate(values)]
        down = [v - STEP * u if k == i else v for k, v in enumerate(values)]
        slopes.append((_pairing(fn, up, seeds) - _pairing(fn, down, seeds)) / (2 * STEP))
    return slopes


def _projected(grads, directions):
    """The derivative along each direction that gradients ``d/dx + 1j d/dy`` give:
    ``Re(sum(conj(g) * u))``."""
    return [float(np.real(np.sum(np.conj(g) * u))) for g, u in zip(grads, directions)]


def _seeds(fn, values, rng):
    return [rng.normal(size=np.shape(o)) + 1j * rng.normal(size=np.shape(o))
            if np.iscomplexobj(o) else rng.normal(size=np.shape(o)) for o in fn(*values)]


def _close(got, want):
    return np.allclose(got, want, rtol=1e-6, atol=1e-7)


def test_vjp_is_the_gradient_of_the_pairing_with_the_seed():
    values = _inputs()
    rng = np.random.default_rng(1)
    seeds = _seeds(TABLE, values, rng)
    directions = _directions(values, rng)  # a random direction per input: generic
    got = srcgrad.vjp(TABLE, wrt=(0, 1, 2, 3))(*values, seeds)
    assert not np.iscomplexobj(got[2])  # h is real: so is its gradient
    assert [np.shape(g) for g in got] == [np.shape(v) for v in values]
    if _close(_projected(got, directions), _slopes(TABLE, values, seeds, directions)):
        return
    wrong = []  # which call: each alone (only when the whole table differs)
    for k, call in enumerate(CALLS):
        one = _define([call], f"call_{k}")
        g = srcgrad.vjp(one, wrt=(0, 1, 2, 3))(*values, [seeds[k]])
        want = _slopes(one, values, [seeds[k]], directions)
        wrong += [f"{call} w.r.t. {NAMES[i]}" for i, (a, b) in
                  enumerate(zip(_projected(g, directions), want)) if not _close(a, b)]
    pytest.fail(f"vjp differs from central differences of its pairing: {wrong}")


def test_jvp_of_every_call_against_central_differences():
    values = _inputs()
    tangents = _directions(values, np.random.default_rng(2))
    _, got = srcgrad.jvp(TABLE, wrt=(0, 1, 2, 3))(*values, tuple(tangents))
    up = TABLE(*[v + STEP * t for v, t in zip(values, tangents)])
    down = TABLE(*[v - STEP * t for v, t in zip(values, tangents)])
    wrong = [call for call, g, a, b in zip(CALLS, got, up, down)  # (of the value's shape)
             if np.shape(g) != np.shape(a)
             or not _close(g, (np.asarray(a) - np.asarray(b)) / (2 * STEP))]
    assert not wrong, f"jvp differs from central differences: {wrong}"


def _weighted(call):
    text = f"def at_zero(z):\n    return np.sum({call}) * 2.0\n"
    filename = f"<at-zero {call}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"np": np}
    exec(compile(text, filename, "exec"), scope)
    scope["at_zero"].__doc__ = call
    return scope["at_zero"]


# |z| and its norms at a z with a zero element, where |z|'s gradient is 0 (np.sign(0)'s convention)
AT_ZERO = [_weighted(call) for call in [
    "abs(z)", "np.abs(z)", "np.linalg.norm(z, axis=0)", "np.linalg.vector_norm(z, axis=0)",
    "np.linalg.matrix_norm(z[None, :])",
]]


@pytest.mark.parametrize("f", AT_ZERO, ids=lambda f: f.__doc__)
def test_a_complex_zero_has_gradient_zero(f):
    # the rules' guard `np.where(x == 0, 1.0, np.abs(x))` (its mutants divided 0 by |0|: NaN):
    # of z = [0, 3 + 4j], each call is |3 + 4j| = 5, times 2
    z, dz = np.array([[0j], [3 + 4j]]), np.array([[1 + 1j], [1 - 2j]])
    np.testing.assert_allclose(srcgrad.grad(f)(z), [[0], [1.2 + 1.6j]], rtol=1e-15)
    assert srcgrad.jvp(f)(z, dz)[1] == pytest.approx(2 * np.real((0.6 - 0.8j) * (1 - 2j)))
    # a real tangent of the complex z (the real direction): Re(conj(z) dz) / |z| is real
    assert srcgrad.jvp(f)(z, np.ones((2, 1)))[1] == pytest.approx(1.2)


def _angles(z):
    return np.sum(np.angle(z) * np.array([1.0, 2.0]))


def test_the_angle_on_the_positive_real_axis():
    # angle is 0 there but not constant: its derivative i z / |z|^2 (a mutant of the guard
    # `(z != 0)` written `(y != 0)` dropped the tangent where the angle is 0)
    z = np.array([2 + 0j, -1 + 1j])
    np.testing.assert_allclose(srcgrad.grad(_angles)(z), [0.5j, -1 - 1j], rtol=1e-15)
    assert srcgrad.jvp(_angles)(z, np.array([1j, 1.0]))[1] == pytest.approx(0.5 - 1.0)
