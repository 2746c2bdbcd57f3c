"""The third-order walk over the rule tables (issue 15): derivatives of derivatives of every rule.

For a row of ``tests/test_rules.py`` or ``tests/test_scipy_rules.py`` (``f = sum(call * W)``) and
random directions ``u1, u2, u3`` in its differentiated inputs, each order is a scalar function of
the inputs built from srcgrad's derivative of the order below, compared in float64 with central
differences of that order below along the new direction:

* order 1: ``h1 = <grad f, u1>`` (reverse) and ``jvp(f)(x, u1)`` (forward);
* order 2: ``h2 = jvp(h1)(x, u2)`` (forward over reverse: ``hvp``, ``jvp(vjp(f))``);
* order 3: ``h3 = <grad h2, u3>`` (reverse over forward over reverse).

``composition="all"`` also checks, per order, the other orders of composition: reverse over
reverse at 2 and 3 (``grad(grad(grad(f)))``), reverse over forward at 2 (``vjp(jvp(f))``) and
``hessian`` of ``h1`` at 3 (``hessian(grad(f))``).

``walk(row, build, order)`` returns the highest order verified; a failure raises
``AssertionError`` (a wrong number) or the error the transform raised.
"""

from __future__ import annotations

import itertools
import linecache

import numpy as np

import srcgrad

STEP = 1e-5
RTOL = 2e-5
_counter = itertools.count()


def _define(params, body, namespace):
    n = next(_counter)
    filename = f"<third-order-{n}>"
    lines = [f"def h{n}({', '.join(params)}):"] + [f"    {s}" for s in body]
    text = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"np": np, **namespace}
    exec(compile(text, filename, "exec"), scope)
    return scope[f"h{n}"]


class Walk:
    """The functions of one row, order by order, over its inputs ``names`` (``wrt`` varied)."""

    def __init__(self, f, args, wrt, seed=0):
        self.f, self.args, self.names = f, dict(args), list(args)
        self.wrt = tuple(wrt) or tuple(self.names)
        self.pos = tuple(self.names.index(w) for w in self.wrt)
        rng = np.random.default_rng(seed)
        imag = np.random.default_rng(seed + 1)  # complex inputs: complex directions
        self.dirs = [
            tuple(self._direction(self.args[w], rng, imag) for w in self.wrt) for _ in range(3)
        ]

    @staticmethod
    def _direction(x, rng, imag):
        d = rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal())
        if np.iscomplexobj(x):
            d = d + 1j * (imag.normal(size=np.shape(x)) if np.ndim(x) else float(imag.normal()))
        return d

    # --- building the functions of the next order -------------------------------------------

    def _sel(self):
        return self.pos if len(self.pos) > 1 else self.pos[0]

    def _seed(self, k):
        return self.dirs[k] if len(self.pos) > 1 else self.dirs[k][0]

    def reverse(self, fn, k):
        """``x -> <grad fn(x), u_k>``."""
        params = ", ".join(self.names)
        # the derivative along u of a real function whose gradient is g (df/dx + i df/dy for a
        # complex input): Re(sum(conj(g) * u))
        terms = " + ".join(f"np.real(np.sum(np.conj(g[{i}]) * U[{i}]))"
                           for i in range(len(self.pos)))
        if len(self.pos) == 1:
            terms = "np.real(np.sum(np.conj(g) * U[0]))"
        body = [f"g = DF({params})", f"return {terms}"]
        return _define(self.names, body, {"DF": srcgrad.grad(fn, wrt=self._sel()),
                                          "U": self.dirs[k]})

    def forward(self, fn, k):
        """``x -> jvp(fn)(x, u_k)[1]``."""
        params = ", ".join(self.names)
        body = [f"return JV({params}, T)[1]"]
        return _define(self.names, body, {"JV": srcgrad.jvp(fn, wrt=self._sel()),
                                          "T": self._seed(k)})

    def hessian_dir(self, fn, k, j):
        """``x -> u_j . hessian(fn)(x) . u_k`` for a single differentiated input."""
        params = ", ".join(self.names)
        body = [f"h = H({params})", "n = np.size(U)",
                "return np.reshape(V, (1, n)) @ np.reshape(h, (n, n)) @ np.reshape(U, (n,))"]
        return _define(self.names, body, {"H": srcgrad.hessian(fn, wrt=self._sel()),
                                          "U": self.dirs[k][0], "V": self.dirs[j][0]})

    # --- checking ------------------------------------------------------------------------------

    def value(self, fn, shift=0.0, k=0):
        values = []
        for i, name in enumerate(self.names):
            v = self.args[name]
            if i in self.pos:
                d = self.dirs[k][self.pos.index(i)]
                v = v + shift * d
            values.append(np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
        return float(np.asarray(fn(*values), dtype=np.float64).reshape(()))

    def differences(self, fn, k):
        h = STEP
        return (self.value(fn, h, k) - self.value(fn, -h, k)) / (2 * h)

    def check(self, got_fn, below, k, what):
        got = self.value(got_fn)
        want = self.differences(below, k)
        scale = 1.0 + abs(want) + abs(self.value(below))
        assert abs(got - want) <= RTOL * scale, (
            f"{what}: {got!r} against central differences {want!r}"
        )


def walk(f, args, wrt, order=3, composition="one"):
    """Check ``f``'s derivatives up to ``order``; return the highest order verified.

    ``composition="one"``: reverse, then forward over reverse, then forward over that (the
    cheapest to generate); ``"all"`` adds the first-order tangent and every other composition.
    """
    if composition == "one":
        return _direct(Walk(f, args, wrt), order)
    w = Walk(f, args, wrt)
    h1 = w.reverse(f, 0)
    w.check(h1, f, 0, "order 1, reverse")
    if composition == "all":
        w.check(w.forward(f, 0), f, 0, "order 1, forward")
    if order < 2:
        return 1
    h2 = w.forward(h1, 1)
    w.check(h2, h1, 1, "order 2, forward over reverse (jvp(vjp(f)))")
    if composition == "all":
        w.check(w.reverse(h1, 1), h1, 1, "order 2, reverse over reverse (grad(grad(f)))")
        w.check(w.reverse(w.forward(f, 0), 1), w.forward(f, 0), 1,
                "order 2, reverse over forward (vjp(jvp(f)))")
    if order < 3:
        return 2
    w.check(w.forward(h2, 2), h2, 2, "order 3, forward over forward over reverse")
    if composition == "all":
        w.check(w.reverse(h2, 2), h2, 2, "order 3, reverse over forward over reverse")
        rr = w.reverse(h1, 1)
        w.check(w.reverse(rr, 2), rr, 2, "order 3, grad(grad(grad(f)))")
        if len(w.pos) == 1 and not np.iscomplexobj(w.args[w.wrt[0]]):  # hessian: real only
            # u2 . hessian(h1) . u3 against central differences of <grad h1, u2> along u3
            w.check(w.hessian_dir(h1, 2, 1), rr, 2, "order 3, hessian(grad(f))")
    return 3


def _direct(w, order):
    """The cheap walk: ``grad``, ``jvp(grad(f))`` and ``jvp(jvp(grad(f)))`` composed directly
    (three transforms), each contracted with the directions in plain Python."""
    sel = w._sel()
    df = srcgrad.grad(w.f, wrt=sel)

    def dot(g, k):
        g = g if len(w.pos) > 1 else (g,)
        return sum(float(np.real(np.sum(np.conj(gi) * ui))) for gi, ui in zip(g, w.dirs[k]))

    def h1(*a):
        return dot(df(*a), 0)

    w.check(h1, w.f, 0, "order 1, reverse")
    if order < 2:
        return 1
    j2 = srcgrad.jvp(df, wrt=sel)

    def h2(*a):
        return dot(j2(*a, w._seed(1))[1], 0)

    w.check(h2, h1, 1, "order 2, forward over reverse (jvp(grad(f)))")
    if order < 3:
        return 2
    j3 = srcgrad.jvp(j2, wrt=sel)

    def h3(*a):
        return dot(j3(*a, w._seed(1), w._seed(2))[1][1], 0)

    w.check(h3, h2, 2, "order 3, forward over forward over reverse (jvp(jvp(grad(f))))")
    return 3
