"""Random programs of a complex argument (issue 13 item 9: the generator family of complex
arguments, which tests/test_random_programs.py does not draw: its programs compare and mask).

A hypothesis strategy writes small functions `f(z, a)` of a complex vector `z` and a real number
`a`: loops that carry a complex state (`for` and `while`, the state rebuilt or written element
by element, appended to a list), element writes into a copy, `np.conj` / `np.real` / `np.imag` /
`np.abs`, holomorphic functions; the result is real. For every program:

- `grad(f)` matches central differences in the public convention, `df/dx + 1j * df/dy` for each
  element `x + 1j * y` of `z`, and `grad(f, wrt=1)` the real difference in `a`;
- `grad(f, checkpoint=2)` (the loops checkpointed) equals `grad(f)`;
- `hvp(f)(z, v)` and `hvp(f, checkpoint=2)(z, v)` match central differences of `grad(f)` along
  `v`.

The checkpointed loop's adjoint of a complex state (a conjugate gradient; at second order every
tangent and seed conjugated once too often) is the bug this family was written after
(tests/test_hunt_reproducers.py). `SRCGRAD_RANDOM_COMPLEX_EXAMPLES=300` runs more examples, with a
random seed (the default run is derandomized).
"""

import importlib.util
import itertools
import os
import random
import sys

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import srcgrad

EXAMPLES = int(os.environ.get("SRCGRAD_RANDOM_COMPLEX_EXAMPLES", "8"))
N = 3
STEP = 1e-6
_count = itertools.count()


class ComplexGen:
    """Lines of `f(z, a)`; `y` and `w` are complex vectors the function owns, `s` a real sum."""

    def __init__(self, rng):
        self.rng = rng
        self.features = set()

    def pick(self, options):
        return self.rng.choice(options)

    def vector(self):
        return self.pick(["y", "w", "z", "np.conj(y)", "y * w", "np.sin(y) * 0.5",
                          "np.exp(1j * a * 0.5) * y", "np.real(y) + 0.5j * np.imag(w)",
                          "y * a", "np.cos(w * 0.5)"])

    def scalar(self):
        i, j = self.rng.randrange(N), self.rng.randrange(N)
        return self.pick([f"w[{i}] * 0.5", f"y[{i}] * z[{j}]", "np.exp(1j * a)",
                          f"np.conj(y[{i}]) * 0.7", f"0.3 + 0.2j * y[{j}]"])

    def statement(self, depth):
        kinds = ["rebuild", "accumulate", "write", "conj"]
        if depth < 2:
            kinds += ["loop", "loop", "while", "loopwrite", "history"]
        kind = self.pick(kinds)
        self.features.add(kind)
        n = self.rng.randint(1, 3)
        i = self.rng.randrange(N)
        if kind == "rebuild":
            return [self.pick([f"y = np.sin({self.vector()}) * 0.8 + z * a * 0.1",
                               f"y = y * np.exp(1j * a * 0.5) * 0.9 + {self.vector()} * 0.1",
                               f"y = 0.4 * y * {self.vector()} + w * 0.2",
                               "y = np.conj(y) * 0.9 + z * 0.1j"])]
        if kind == "accumulate":
            return [self.pick(["s = s + np.sum(np.abs(y) ** 2) * 0.1",
                               "s = s + np.real(np.sum(y * np.conj(w)))",
                               "s = s + np.sum(np.imag(y * z)) * a"])]
        if kind == "write":
            return [f"y[{i}] = {self.scalar()}"]
        if kind == "conj":
            return [self.pick(["w = np.real(y) + 1j * np.imag(w) * 0.5",
                               "w = np.conj(w) * 0.9 + y * 0.1"])]
        body = [line for _ in range(self.rng.randint(1, 2)) for line in self.statement(depth + 1)]
        if kind == "loop":
            return [f"for k{depth} in range({n}):", *("    " + b for b in body)]
        if kind == "while":
            c = f"c{depth}"
            return [f"{c} = 0", f"while {c} < {n}:", *("    " + b for b in body),
                    f"    {c} = {c} + 1"]
        if kind == "loopwrite":
            return [f"for k{depth} in range({N}):",
                    f"    y[k{depth}] = y[k{depth}] * w[k{depth}] * 0.9 + 0.1j"]
        return ["hs = []", f"for k{depth} in range({n}):", *("    " + b for b in body),
                "    hs.append(y * 1.0)", "s = s + np.sum(np.abs(np.array(hs)) ** 2) * 0.1"]

    def program(self):
        lines = ["y = z * 0.8", "w = np.conj(z) * 0.5 + 0.1j", "s = 0.0"]
        for _ in range(self.rng.randint(1, 4)):
            lines += self.statement(0)
        final = self.pick(["s + np.sum(np.abs(y) ** 2)", "s + np.real(np.sum(w * y)) * a",
                           "s + np.sum(np.abs(y * w)) + np.sum(np.real(y)) * a"])
        body = "\n".join("    " + line for line in lines + [f"return {final}"])
        return f"import numpy as np\n\n\ndef f(z, a):\n{body}\n"


def load(tmp_path, text):
    name = f"complex_prog_{os.getpid()}_{next(_count)}"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def complex_differences(f, z, a):
    """`df/dx + 1j * df/dy` for each element of z, and df/da."""
    out = np.zeros(z.shape, complex)
    for k in range(z.size):
        e = np.zeros(z.shape, complex)
        e[k] = 1.0
        dx = (f(z + STEP * e, a) - f(z - STEP * e, a)) / (2 * STEP)
        dy = (f(z + 1j * STEP * e, a) - f(z - 1j * STEP * e, a)) / (2 * STEP)
        out[k] = dx + 1j * dy
    return out, (f(z, a + STEP) - f(z, a - STEP)) / (2 * STEP)


def close(got, want, scale):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)


@settings(max_examples=EXAMPLES, deadline=None, derandomize="SRCGRAD_RANDOM_COMPLEX_EXAMPLES"
          not in os.environ, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_random_complex_program(tmp_path, seed):
    rng = random.Random(seed)
    text = ComplexGen(rng).program()
    f = load(tmp_path, text)
    z = np.array([complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(N)])
    a = rng.uniform(0.2, 1.0)
    value = f(z.copy(), a)
    assume(np.isfinite(value) and abs(value) < 1e4)
    want, want_a = complex_differences(f, z, a)
    scale = 1.0 + abs(value) + np.max(np.abs(want))
    assume(scale < 1e4)
    try:
        grad_plain = srcgrad.grad(f)(z, a)
        close(grad_plain, want, scale)
        close(srcgrad.grad(f, wrt=1)(z, a), want_a, scale)
        close(srcgrad.grad(f, checkpoint=2)(z, a), grad_plain, scale)
        v = np.array([complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(N)])
        hv = (srcgrad.grad(f)(z + STEP * v, a) - srcgrad.grad(f)(z - STEP * v, a)) / (2 * STEP)
        hscale = 1.0 + np.max(np.abs(hv)) + scale
        np.testing.assert_allclose(srcgrad.hvp(f)(z, a, v), hv, rtol=1e-4, atol=1e-5 * hscale)
        np.testing.assert_allclose(srcgrad.hvp(f, checkpoint=2)(z, a, v), hv, rtol=1e-4,
                                   atol=1e-5 * hscale)
    except AssertionError as error:
        raise AssertionError(f"{error}\nprogram:\n{text}z = {z!r}, a = {a!r}") from error
    except srcgrad.SrcgradError as error:
        raise AssertionError(f"refused: {error}\nprogram:\n{text}") from error
