"""The SciPy rule table, one row per rule, each checked against central differences in float64.

A row is a SciPy call over named inputs, as in ``tests/test_rules.py``: the test defines
``def f(<inputs>): return np.sum((<call>) * W)`` with fixed random weights ``W`` shaped like the
call's result and compares ``grad(f)`` for every input with central differences, then ``jvp(f)``
with ``grad(f)``. Inputs are drawn from the domain each function needs. ``NONDIFF`` lists the
SciPy functions without gradient; the meta-test checks that every SciPy rule has a row.
"""

from __future__ import annotations

import copy
import itertools
import linecache
import runpy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

pytest.importorskip("scipy")

import scipy.integrate  # noqa: E402
import scipy.linalg as linalg  # noqa: E402
import scipy.signal as signal  # noqa: E402
import scipy.special as special  # noqa: E402
import scipy.stats as stats  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.rules import RULES  # noqa: E402
from srcgrad.rules.registry import _key, load_optional_rules  # noqa: E402
from srcgrad.runtime import scipy_helpers as sr  # noqa: E402

REAL = (-2.0, 2.0)
POS = (0.5, 2.0)
UNIT = (-0.9, 0.9)
PROB = (0.1, 0.9)
odeint = scipy.integrate.odeint
load_optional_rules()  # the tests below read RULES, perhaps before a lookup registered SciPy's

_counter = itertools.count()


@dataclass
class Row:
    fn: object
    call: str
    inputs: dict  # name -> (shape, domain) for an argument, or a constant array (a global)
    wrt: tuple = ()
    rtol: float = 1e-5
    second: bool = False  # also check the Hessian of the scalar function
    id: str = field(default="")


def row(fn, call, wrt=(), rtol=1e-5, second=False, **inputs):
    return Row(fn, call, inputs, wrt, rtol, second)


def x(shape=(3,), domain=REAL):
    return (shape, domain)


def _spd(name, n=3):
    return f"({name} @ np.transpose({name}) + {n} * np.eye({n}))"


def special_rows():
    rows = []
    unary = [
        (special.gamma, POS), (special.gammaln, POS), (special.rgamma, POS),
        (special.digamma, POS), (special.erf, REAL), (special.erfc, REAL),
        (special.erfinv, UNIT), (special.erfcinv, (0.1, 1.9)), (special.erfcx, REAL),
        (special.ndtr, REAL), (special.log_ndtr, REAL), (special.ndtri, PROB),
        (special.expit, REAL), (special.log_expit, REAL), (special.logit, PROB),
        (special.entr, POS), (special.j0, REAL), (special.j1, REAL), (special.y0, POS),
        (special.y1, POS), (special.i0, REAL), (special.i1, REAL), (special.i0e, POS),
        (special.i1e, (-2.0, -0.5)), (special.k0, POS), (special.k1, POS), (special.k0e, POS),
        (special.k1e, POS),
    ]
    for fn, domain in unary:
        rows.append(row(fn, f"special.{fn.__name__}(x)", second=True, x=x((2, 3), domain)))
        rows.append(row(fn, f"special.{fn.__name__}(x)", x=x((), domain)))
    binary = [
        (special.beta, POS, POS), (special.betaln, POS, POS), (special.xlogy, REAL, POS),
        (special.xlog1py, REAL, POS), (special.rel_entr, POS, POS), (special.kl_div, POS, POS),
    ]
    for fn, d1, d2 in binary:
        name = f"special.{fn.__name__}"
        rows.append(row(fn, f"{name}(a, b)", second=True, a=x((2, 3), d1), b=x((2, 3), d2)))
        rows.append(row(fn, f"{name}(a, b)", a=x((2, 1), d1), b=x((3,), d2)))
    rows += [
        # i0e's derivative has np.sign(x): negative x too (the unary rows above are positive)
        row(special.i0e, "special.i0e(x)", x=x((3,), (-2.0, -0.5))),
        # and ive's (its V rows below are positive): integer orders, where iv of a negative x is
        # real, its sign (-1)**V, so sign(y) is not sign(x) for an even V
        row(special.ive, "special.ive(V, x)", x=x((2, 1), (-2.0, -0.5)),
            V=np.array([0.0, 1.0, 2.0])),
        row(special.polygamma, "special.polygamma(2, x)", second=True, x=x((3,), POS)),
        row(special.polygamma, "special.polygamma(N, x)", x=x((2, 1), POS), N=np.array([0, 1])),
        row(special.multigammaln, "special.multigammaln(a, 3)", a=x((), (2.0, 4.0))),
        row(special.multigammaln, "special.multigammaln(a, 2)", a=x((3,), (2.0, 4.0))),
        row(special.gammainc, "special.gammainc(2.5, x)", second=True, x=x((3,), POS)),
        row(special.gammaincc, "special.gammaincc(A, x)", x=x((2, 3), POS),
            A=np.array([0.5, 1.0, 3.0])),
        row(special.betainc, "special.betainc(2.5, 3.5, x)", x=x((3,), PROB)),  # (a - 1 != 1)
        row(special.logsumexp, "special.logsumexp(a)", a=x((3, 4))),
        row(special.logsumexp, "special.logsumexp(a, axis=1)", a=x((3, 4))),
        row(special.logsumexp, "special.logsumexp(a, axis=0, keepdims=True)", a=x((3, 4))),
        row(special.logsumexp, "special.logsumexp(a, axis=1, keepdims=True)", a=x((3, 4))),
        row(special.logsumexp, "special.logsumexp(a, axis=-1, b=b)", a=x((3, 4)),
            b=x((4,), POS)),
        row(special.logsumexp, "special.logsumexp(a, b=b)", a=x((3,)), b=x((2, 3), POS)),
        # the tangent in b keeps the reduced axis (mutants20: a survivor dropped keepdims there)
        row(special.logsumexp, "special.logsumexp(a, axis=1, b=b, keepdims=True)", a=x((3, 4)),
            b=x((3, 4), POS)),
        # b of more dimensions than a, along a negative axis: the tangent in b reads b's
        row(special.logsumexp, "special.logsumexp(a, axis=-1, b=b)", a=x((3,)),
            b=x((2, 3), POS)),
        row(special.softmax, "special.softmax(a)", second=True, a=x((3, 4))),
        row(special.softmax, "special.softmax(a, axis=1)", a=x((3, 4))),
        row(special.log_softmax, "special.log_softmax(a)", second=True, a=x((3, 4))),
        row(special.log_softmax, "special.log_softmax(a, axis=0)", a=x((3, 4))),
        # the last axis of a square matrix: a sum over it without keepdims broadcasts along
        # the other axis
        row(special.log_softmax, "special.log_softmax(a, axis=1)", a=x((3, 3))),
    ]
    for fn, domain in ((special.jv, REAL), (special.yv, POS), (special.iv, REAL),
                       (special.ive, (0.5, 2.0)), (special.kv, POS), (special.kve, POS)):
        name = f"special.{fn.__name__}"
        rows.append(row(fn, f"{name}(1.5, x)", second=True, x=x((3,), domain)))
        rows.append(row(fn, f"{name}(V, x)", x=x((2, 1), domain), V=np.array([0.0, 2.0, 3.5])))
    rows += [
        row(special.jv, "special.jn(2, x)", x=x((3,), REAL)),
        row(special.digamma, "special.psi(x)", x=x((3,), POS)),
        row(special.yn, "special.yn(3, x)", second=True, x=x((3,), (1.0, 3.0))),
    ]
    return rows


# Distributions: (name, shape-parameter domains, x domain, loc domain, scale domain).
CONTINUOUS = [
    ("norm", (), REAL, REAL, POS),
    ("t", ((2.0, 6.0),), REAL, REAL, POS),
    ("gamma", ((1.5, 3.0),), (1.0, 3.0), (-0.3, 0.3), POS),
    ("beta", ((1.5, 3.0), (1.5, 3.0)), (0.2, 0.6), (-0.1, 0.1), (1.0, 1.5)),
    ("chi2", ((2.5, 5.0),), (1.0, 3.0), (-0.3, 0.3), POS),
    ("expon", (), (1.0, 3.0), (-0.3, 0.3), POS),
    ("laplace", (), REAL, REAL, POS),
    ("cauchy", (), REAL, REAL, POS),
    ("logistic", (), REAL, REAL, POS),
]
SHAPE_NAMES = {"t": ("df",), "gamma": ("a",), "beta": ("a", "b"), "chi2": ("df",)}
SHAPE_VALUES = {"t": "3.5", "gamma": "2.5", "beta": "2.0, 3.0", "chi2": "4.0"}


def stats_rows():
    rows = []
    for name, shapes, xd, locd, scaled in CONTINUOUS:
        dist = getattr(stats, name)
        params = SHAPE_NAMES.get(name, ())
        inputs = {"x": x((4,), xd), **{p: x((), d) for p, d in zip(params, shapes)},
                  "loc": x((), locd), "scale": x((), scaled)}
        args = ", ".join(("x", *params, "loc", "scale"))
        for method in ("logpdf", "pdf"):
            call = f"stats.{name}.{method}({args})"
            rows.append(row(getattr(dist, method), call, second=method == "logpdf", **inputs))
        fixed = {k: v for k, v in inputs.items() if k not in params}
        shape_args = SHAPE_VALUES.get(name)
        cargs = ", ".join(a for a in ("x", shape_args, "loc", "scale") if a)
        for method in ("cdf", "logcdf", "sf", "logsf"):
            call = f"stats.{name}.{method}({cargs})"
            rows.append(row(getattr(dist, method), call, **fixed))
        if name == "laplace":  # at x == loc, where the score -sign(z) is 0
            for method in ("logpdf", "pdf"):
                rows.append(row(getattr(dist, method), f"stats.laplace.{method}(0.5, 0.5, scale)",
                                scale=x((), scaled)))
            # x - loc and x of opposite signs (sign(x / scale) passed where x and loc were drawn,
            # in the gradients of x and, with loc active, of loc: mutants20d)
            for method in ("logpdf", "pdf"):
                call = f"stats.laplace.{method}(u + OFF, loc, scale)"
                rows.append(row(getattr(dist, method), call, u=x((4,), (-0.1, 0.1)),
                                OFF=np.array([0.3, 0.5, 0.6, 1.6]), loc=x((), (0.9, 1.1)),
                                scale=x((), scaled)))
        # x broadcast up by an array loc
        rows.append(row(dist.logpdf, f"stats.{name}.logpdf({cargs.replace('x', 'x0', 1)})",
                        x0=x((), xd), loc=x((2,), locd), scale=x((), scaled)))
    counts = np.array([0.0, 1.0, 3.0, 6.0])
    for method in ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf"):
        fn = getattr(stats.poisson, method)
        # (counts between integers for the cdf family, which takes the floor)
        k = counts if method.endswith("pmf") else counts + 0.5
        rows.append(row(fn, f"stats.poisson.{method}(K, mu)", mu=x((), (1.0, 4.0)), K=k))
        rows.append(row(fn, f"stats.poisson.{method}(K, mu, 1)", mu=x((4,), (1.0, 4.0)),
                        K=counts + 1))
    for method in ("logpdf", "pdf"):
        d = getattr(stats.dirichlet, method)
        m = getattr(stats.multivariate_normal, method)
        rows += [
            row(d, f"stats.dirichlet.{method}(p / np.sum(p), alpha)", p=x((3,), POS),
                alpha=x((3,), (0.5, 3.0))),
            row(d, f"stats.dirichlet.{method}(p / np.sum(p, axis=0), alpha)", p=x((3, 2), POS),
                alpha=x((3,), (0.5, 3.0))),
            row(d, f"stats.dirichlet.{method}(p, alpha)", p=x((2,), (0.1, 0.4)),
                alpha=x((3,), (0.5, 3.0))),
            row(m, f"stats.multivariate_normal.{method}(v, mean, {_spd('c')})",
                v=x((4, 3)), mean=x((3,)), c=x((3, 3))),
            row(m, f"stats.multivariate_normal.{method}(v, mean, c)", v=x((3,)), mean=x((3,)),
                c=x((3,), (1.0, 2.0))),
            row(m, f"stats.multivariate_normal.{method}(v, mean, c)", v=x((2, 2)),
                mean=x((2,)), c=x((), (1.0, 2.0))),
            row(m, f"stats.multivariate_normal.{method}(v, cov=c * np.eye(2))", v=x((3, 2)),
                c=x((), (1.0, 2.0))),
            row(m, f"stats.multivariate_normal.{method}(v, mean, {_spd('c', 1)})",
                v=x((3,)), mean=x((1,)), c=x((1, 1))),
        ]
    return rows


def linalg_rows():
    a, b1, b2 = x((3, 3)), x((3,)), x((3, 2))
    shifted = "(a + 3 * np.eye(3))"
    return [
        row(linalg.solve_triangular, f"linalg.solve_triangular({shifted}, b)", a=a, b=b1),
        row(linalg.solve_triangular, f"linalg.solve_triangular({shifted}, b, lower=True)",
            a=a, b=b2),
        row(linalg.solve_triangular, f"linalg.solve_triangular({shifted}, b, trans=1)",
            a=a, b=b2),
        row(linalg.solve_triangular,
            f"linalg.solve_triangular({shifted}, b, trans='T', lower=True, unit_diagonal=True)",
            a=a, b=b1),
        row(linalg.cholesky, f"linalg.cholesky({_spd('a')})", a=a),
        row(linalg.cholesky, f"linalg.cholesky({_spd('a')}, lower=True)", a=a),
        row(linalg.cho_factor, f"linalg.cho_factor({_spd('a')})[0]", a=a),
        row(linalg.cho_factor, f"linalg.cho_factor({_spd('a')}, lower=True)[0]", a=a),
        # the flag alone (True) times a: the factor gets no cotangent, and a's gradient from
        # cho_factor is zeros of a's shape
        row(linalg.cho_factor, f"linalg.cho_factor({_spd('a')}, lower=True)[1] * a", a=a),
        row(linalg.cho_solve, f"linalg.cho_solve(linalg.cho_factor({_spd('a')}), b)", a=a,
            b=b1),
        row(linalg.cho_solve, f"c = linalg.cholesky({_spd('a')}, lower=True); "
            "linalg.cho_solve((c, True), b)", a=a, b=b2),
        row(linalg.lu_solve, "linalg.lu_solve(LU, b)", b=b2, LU=linalg.lu_factor(
            np.arange(9.0).reshape(3, 3) + 4 * np.eye(3))),
        row(linalg.lu_solve, "linalg.lu_solve(LU, b, trans=1)", b=b1, LU=linalg.lu_factor(
            np.arange(9.0).reshape(3, 3) + 4 * np.eye(3))),
        row(linalg.expm, "linalg.expm(a)", a=a),
        row(linalg.expm, "linalg.expm(a)", a=x((2, 2, 2))),
        row(linalg.sqrtm, f"linalg.sqrtm({_spd('a')})", a=a),
        # not symmetric (its symmetric part positive definite): the adjoint's transposes show
        row(linalg.sqrtm, f"linalg.sqrtm({_spd('a')} + K)", a=a,
            K=np.array([[0.0, 0.5, -0.3], [-0.5, 0.0, 0.2], [0.3, -0.2, 0.0]])),
        row(linalg.solve_sylvester, f"linalg.solve_sylvester({shifted}, b + 3 * np.eye(2), c)", a=a,
            b=x((2, 2)), c=x((3, 2))),
        row(linalg.solve, f"linalg.solve({shifted}, b)", a=a, b=b1),
        row(linalg.solve, f"linalg.solve({shifted}, b, transposed=True)", a=a, b=b2),
        row(linalg.solve, f"linalg.solve({_spd('a')}, b, assume_a='pos')", a=a, b=b2),
        # the solver reads the lower triangle alone (J, above the diagonal, is not read): the
        # adjoint's solve must read the same one
        row(linalg.solve, f"linalg.solve({_spd('a')} + J, b, assume_a='sym', lower=True)", a=a,
            b=b1, J=np.triu(np.full((3, 3), 5.0), 1)),
        row(linalg.solve, f"linalg.solve({shifted}, b, assume_a='lower triangular')", a=a,
            b=b1),
        row(linalg.inv, f"linalg.inv({shifted})", a=a),
        row(linalg.inv, f"linalg.inv({_spd('a')}, assume_a='pos')", a=a),
        row(linalg.det, "linalg.det(a)", a=a),
        # a stack of matrices: the tangent's trace is over the last two axes of each
        row(linalg.det, "linalg.det(a)", a=x((2, 3, 3))),
        row(linalg.eigh, "linalg.eigh(a + np.transpose(a), eigvals_only=True)", a=a),
        # two of the three eigenvalues: their eigenvectors, not all three (a vjp without
        # subset_by_index took all of them)
        row(linalg.eigh, "linalg.eigh(a + np.transpose(a), eigvals_only=True, "
            "subset_by_index=[1, 2])", a=a),
        row(linalg.eigh, "e = linalg.eigh(a + np.transpose(a)); e[0] + e[1][0] ** 2", a=a),
        # by value: the two above 1.5 (a vjp without subset_by_value took all three; mutants20d)
        row(linalg.eigh, "linalg.eigh(np.diag(D) + 0.1 * (a + np.transpose(a)), eigvals_only=True, "
            "subset_by_value=(1.5, 10.0))", a=a, D=np.array([1.0, 2.0, 3.0])),
    ]


def signal_rows():
    rows = []
    for fn in (signal.convolve, signal.correlate):
        name = f"signal.{fn.__name__}"
        for mode in ("full", "same", "valid"):
            rows.append(row(fn, f"{name}(a, b, mode={mode!r})", a=x((5,)), b=x((3,))))
            rows.append(row(fn, f"{name}(a, b, mode={mode!r})", a=x((3, 4)), b=x((2, 3))))
        rows.append(row(fn, f"{name}(a, b, 'same')", a=x((3,)), b=x((5,))))
        rows.append(row(fn, f"{name}(a, b, 'valid', method='fft')", a=x((2, 3)), b=x((4, 5))))
    return rows


def decay(y, t, k):
    return -k * y + np.sin(t)


def odeint_rows():
    opts = "rtol=1e-10, atol=1e-10"
    return [
        row(odeint, f"odeint(decay, y0, T, args=(0.7,), {opts})", rtol=1e-4, y0=x((2,)),
            T=np.linspace(0.0, 2.0, 5)),
        row(odeint, f"odeint(decay, y0, T, args=(k,), {opts})", rtol=1e-4, y0=x((2,)),
            k=x((), POS), T=np.linspace(0.0, 1.0, 3)),
        row(odeint, f"odeint(decay, y0, T, args=(k,), {opts})", rtol=1e-4, y0=x((), POS),
            k=x((), POS), T=np.array([0.0, 0.5, 1.5])),
        # args alone active: its adjoint runs first, not answered from y0's cached adjoint
        row(odeint, f"odeint(decay, y0, T, args=(k,), {opts})", rtol=1e-4, wrt=("k",),
            y0=x((2,)), k=x((), POS), T=np.linspace(0.0, 1.0, 3)),
        row(odeint, f"odeint(decay, Y0, np.cumsum(t), args=(0.7,), {opts})", rtol=1e-4,
            t=x((3,), (0.2, 1.0)), Y0=np.array([1.0, -0.5])),
    ]


ROWS = special_rows() + stats_rows() + linalg_rows() + signal_rows() + odeint_rows()
NONDIFF = {special.gammasgn: "special.gammasgn(a)"}
NAMESPACE = {"np": np, "special": special, "stats": stats, "linalg": linalg, "signal": signal,
             "odeint": odeint, "decay": decay}


# --- building the test functions ----------------------------------------------------------------


def define(params, body, namespace):
    """A function with real source (registered with linecache, so srcgrad can read it)."""
    n = next(_counter)
    filename = f"<scipy-rule-spec-{n}>"
    lines = [f"def f{n}({', '.join(params)}):"] + [f"    {s.strip()}" for s in body]
    text = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {**NAMESPACE, **namespace}
    exec(compile(text, filename, "exec"), scope)
    return scope[f"f{n}"]


def _is_spec(v):
    """An input drawn at random (``(shape, domain)``) rather than a constant."""
    return isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], tuple)


def build(r, seed=7):
    rng = np.random.default_rng(seed)
    args, consts = {}, {}
    for k, v in r.inputs.items():
        if _is_spec(v):
            shape, (lo, hi) = v
            sample = rng.uniform(lo, hi, size=shape)
            args[k] = float(sample) if shape == () else sample
        else:
            consts[k] = v
    *stmts, result = r.call.split(";")
    out = define(list(args), stmts + [f"return {result}"], consts)(*args.values())
    weights = np.random.default_rng(seed + 1).normal(size=np.shape(out))
    f = define(list(args), stmts + [f"return np.sum(({result}) * W)"], {"W": weights, **consts})
    return f, args


def _id(r):
    return r.call.split(";")[-1].strip()[:50] + "-" + "-".join(
        f"{k}{v[0]}" for k, v in r.inputs.items() if _is_spec(v)
    )


PARAMS = [pytest.param(r, id=f"{i}-{_id(r)}") for i, r in enumerate(ROWS)]


@pytest.mark.parametrize("r", PARAMS)
def test_rule_gradient_and_tangent(r):
    """The gradient against central differences, then ``jvp`` against that gradient (one
    transform of ``grad`` serves both checks)."""
    f, args = build(r)
    wrt = tuple(r.wrt) or tuple(args)
    values = list(args.values())
    grads = check_grad(f, copy.deepcopy(values), wrt=wrt, rtol=r.rtol, atol=1e-6)
    rng = np.random.default_rng(3)
    tangents = tuple(
        rng.normal(size=np.shape(args[w])) if np.ndim(args[w]) else float(rng.normal())
        for w in wrt
    )
    seed = tangents if len(wrt) > 1 else tangents[0]
    _, out = srcgrad.jvp(f, wrt=wrt if len(wrt) > 1 else wrt[0])(*values, seed)
    expected = sum(np.sum(g * t) for g, t in zip(grads, tangents))
    np.testing.assert_allclose(out, expected, rtol=max(r.rtol, 1e-6), atol=1e-7)


SECOND = [p for p in PARAMS if p.values[0].second]


@pytest.mark.parametrize("r", SECOND)
def test_rule_second_order(r):
    """grad(grad(f)) through the rule: its templates call functions that have rules."""
    f, args = build(r)
    name = next(iter(args))
    values = list(args.values())
    g = srcgrad.grad(f, wrt=0)

    def directional(*vals):
        return np.sum(g(*vals))

    expected = numeric_grad(directional, values, 0, step=1e-5)
    h = srcgrad.hessian(f, wrt=0)(*values)
    h = np.reshape(h, (np.size(values[0]), np.size(values[0])))
    np.testing.assert_allclose(
        np.reshape(np.sum(h, axis=1), np.shape(values[0])), expected, rtol=1e-4, atol=1e-6,
        err_msg=f"Hessian in {name}",
    )


@pytest.mark.parametrize("fn", list(NONDIFF), ids=lambda fn: NONDIFF[fn])
def test_nondiff_output_carries_no_gradient(fn):
    a = np.random.default_rng(5).uniform(0.1, 2.0, size=(3, 3))
    f = define(["a"], [f"return np.sum(a) + np.sum({NONDIFF[fn]})"], {})
    np.testing.assert_array_equal(srcgrad.grad(f)(a), np.ones((3, 3)))


def _is_scipy(fn):
    owner = getattr(fn, "__self__", None)
    module = getattr(type(owner), "__module__", "") if owner is not None else ""
    if module.startswith("scipy."):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module.startswith("scipy") or (
        isinstance(fn, np.ufunc) and getattr(special, fn.__name__, None) is fn
    )


def test_every_scipy_rule_has_a_row():
    covered = {_key(r.fn) for r in ROWS} | {_key(fn) for fn in NONDIFF}
    registered = [rule for rule in RULES.values() if _is_scipy(rule.fn)]
    missing = sorted(str(rule.fn) for rule in registered if _key(rule.fn) not in covered)
    assert not missing, f"SciPy rules without a row in tests/test_scipy_rules.py: {missing}"
    assert len(registered) > 100
    for rule in registered:
        assert rule.nondiff == (_key(rule.fn) in {_key(fn) for fn in NONDIFF}), rule.name


def test_every_scipy_rule_is_for_an_object_a_lookup_loads_them_for():
    # registry.lookup loads SciPy's rules only on a miss for an object that may be SciPy's
    # (its module named after it, or none: a ufunc); a rule for anything else would be missed
    from srcgrad.rules import registry

    library = {"scipy": "srcgrad.rules.scipy_rules"}
    outside = [str(rule.fn) for rule in RULES.values() if _is_scipy(rule.fn)
               and not registry._maybe_optional(rule.fn, library)]
    assert not outside


# --- what has no derivative is an error, never a silent zero --------------------------------------


def gammainc_in_a(a, x):
    return np.sum(special.gammainc(a, x))


def t_cdf_in_df(df, x):
    return np.sum(stats.t.cdf(x, df))


def bessel_in_order(v, x):
    return np.sum(special.jv(v, x))


@pytest.mark.parametrize("f", [gammainc_in_a, t_cdf_in_df, bessel_in_order])
def test_missing_derivatives_raise(f):
    with pytest.raises(srcgrad.NoRuleError, match="no derivative"):
        srcgrad.grad(f, wrt=0)(1.5, np.array([0.5, 1.0]))
    with pytest.raises(srcgrad.NoRuleError, match="no derivative"):  # the same in forward mode
        srcgrad.jvp(f, wrt=0)(1.5, np.array([0.5, 1.0]), 1.0)
    assert np.shape(srcgrad.grad(f, wrt=1)(1.5, np.array([0.5, 1.0]))) == (2,)


def test_bound_methods_are_found_by_identity():
    assert stats.norm.logpdf is not stats.norm.logpdf  # a fresh bound method every time
    assert RULES.get(_key(stats.norm.logpdf)) is not None
    assert RULES.get(_key(stats.norm.logpdf)) is not RULES.get(_key(stats.t.logpdf))


# --- odeint: the adjoint against finite differences of the solver ------------------------------


def lotka(y, t, a, b):
    return y * (a - b @ y)


def test_odeint_vector_field_with_matrix_argument():
    b = np.array([[0.0, 0.4], [-0.3, 0.0]])
    times = np.linspace(0.0, 1.5, 4)

    def loss(y0, a, b):
        return np.sum(odeint(lotka, y0, times, args=(a, b), rtol=1e-10, atol=1e-10) ** 2)

    f = define(["y0", "a", "b"], ["return np.sum(odeint(lotka, y0, TIMES, args=(a, b), "
                                  "rtol=1e-10, atol=1e-10) ** 2)"],
               {"lotka": lotka, "TIMES": times})
    args = (np.array([1.0, 0.5]), np.array([0.8, -0.2]), b)
    got = srcgrad.grad(f, wrt=(0, 1, 2))(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, numeric_grad(loss, args, i), rtol=1e-5, atol=1e-7)


def oscillator(y, t, w):
    return np.array([y[1], -w * w * y[0]])


def oscillation(y0):
    return odeint(oscillator, y0, np.array([0.0, 1.0]), args=(40.0,), mxstep=2000, rtol=1e-8,
                  atol=1e-10)[-1]


def test_odeint_tangent_takes_mxstep():
    # about 600 steps, more than odeint's default 500: the tangent's solve is given the
    # caller's mxstep too (without it, it stopped early: a wrong tangent, and only a warning).
    # y'' = -w^2 y from (1, 0): y = cos(w t), whose tangent in y0[0] is itself
    _, t = srcgrad.jvp(oscillation)(np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    np.testing.assert_allclose(t, [np.cos(40.0), -40.0 * np.sin(40.0)], rtol=1e-5)


def test_odeint_adjoint_takes_mxstep():
    # the same system backwards: the adjoint's solve needs the caller's mxstep as well. The
    # map y0 -> y(1) is a rotation scaled by w, so the gradient of y(1)[0] is (cos w, sin w / w)
    # (kills the scipy_rules survivor that dropped mxstep from odeint_vjp, mutants20)
    g = srcgrad.grad(lambda y0: oscillation(y0)[0])(np.array([1.0, 0.0]))
    np.testing.assert_allclose(g, [np.cos(40.0), np.sin(40.0) / 40.0], rtol=1e-5)


def oscillation_at(w):
    return odeint(oscillator, np.array([1.0, 0.0]), np.array([0.0, 1.0]), args=(w,),
                  mxstep=5000, rtol=1e-7, atol=1e-9)[-1, 0]


def oscillation_between(t):
    return odeint(oscillator, np.array([1.0, 0.0]), t, args=(64.0,), mxstep=5000, rtol=1e-7,
                  atol=1e-9)[-1, 0]


@pytest.mark.parametrize("fn, at, want", [
    (oscillation_at, 64.0, -np.sin(64.0)),
    (oscillation_between, np.array([0.0, 1.0]), 64.0 * np.sin(64.0) * np.array([1.0, -1.0])),
], ids=["args", "t"])
def test_odeint_adjoint_in_its_arguments_and_times_takes_mxstep(fn, at, want):
    # y(t1)[0] = cos(w (t1 - t0)): its derivative in w is -sin(w), in (t0, t1) w sin(w) (1, -1).
    # The adjoint's solve for `args` and for `t` (more than odeint's default 500 steps at
    # w = 64) needs the caller's mxstep too (kills the scipy_rules survivor odeint vjp[args]
    # (keyword dropped: mxstep), which gave -0.723 for -0.920 and only a warning, and its twin
    # for vjp[t], 33.2 for 58.9; mutants20d)
    np.testing.assert_allclose(srcgrad.grad(fn)(at), want, rtol=1e-4)


def test_odeint_tfirst():
    def rhs(t, y, k):
        return -k * y * t + np.sin(3 * t)

    # (in y0 too: its adjoint reads the right-hand side with t first; rhs(y, t, k) differs)
    f = define(["k", "y0"], ["return np.sum(odeint(rhs, y0, T, args=(k,), tfirst=True, "
                             "rtol=1e-10, atol=1e-10) ** 2)"],
               {"rhs": rhs, "T": np.array([0.0, 1.0, 2.0])})
    check_grad(f, (0.6, np.array([1.0, 2.0])), wrt=(0, 1), rtol=1e-5)
    # and its tangent (kills the scipy_rules survivor odeint jvp[*] keyword dropped: tfirst)
    dy0, h = np.array([0.5, -1.0]), 1e-6
    want = (f(0.6 + h, np.array([1.0, 2.0]) + h * dy0)
            - f(0.6 - h, np.array([1.0, 2.0]) - h * dy0)) / (2 * h)
    _, t = srcgrad.jvp(f, wrt=(0, 1))(0.6, np.array([1.0, 2.0]), (1.0, dy0))
    np.testing.assert_allclose(t, want, rtol=1e-5)


def rhs_time_first(t, y, k):
    return -k * y * t + np.sin(3 * t)


def test_odeint_tfirst_in_the_times():
    # the adjoint in the times reads the right-hand side with t first too
    f = define(["t"], ["return np.sum(odeint(rhs, Y0, t, args=(0.6,), tfirst=True, rtol=1e-10, "
                       "atol=1e-10) ** 2)"], {"rhs": rhs_time_first, "Y0": np.array([1.0, 2.0])})
    check_grad(f, (np.array([0.3, 0.7, 1.5]),), rtol=1e-5)


def logsumexp_with_its_sign(a, b):
    return special.logsumexp(a, b=b, return_sign=True)[0]


def test_logsumexp_with_return_sign_is_not_differentiated():
    a, b = np.array([0.5, 1.0]), np.array([1.0, -2.0])
    for wrt in (0, 1):
        with pytest.raises(srcgrad.NoRuleError, match="return_sign=True"):
            srcgrad.grad(logsumexp_with_its_sign, wrt=wrt)(a, b)
        with pytest.raises(srcgrad.NoRuleError, match="return_sign=True"):
            srcgrad.jvp(logsumexp_with_its_sign, wrt=wrt)(a, b, np.ones(2))


def exchange(z, t, a):
    return [-a * z[0], a * z[0]]  # a list, as SciPy's documentation writes right-hand sides


def test_odeint_right_hand_side_returning_a_list():
    # the vjp of the right-hand side was seeded with a flat array: SeedShapeError about a vjp
    # the user never called
    times = np.linspace(0.0, 1.0, 5)

    def loss(y0, a):
        return np.sum(odeint(exchange, y0, times, args=(a,), rtol=1e-10, atol=1e-10) ** 3)

    f = define(["y0", "a"], ["return np.sum(odeint(exchange, y0, TIMES, args=(a,), "
                             "rtol=1e-10, atol=1e-10) ** 3)"],
               {"exchange": exchange, "TIMES": times})
    args = (np.array([1.0, 0.3]), 0.7)
    got = srcgrad.grad(f, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, numeric_grad(loss, args, i), rtol=1e-5, atol=1e-7)
    tangent = (np.array([0.5, -1.0]), 2.0)
    _, jt = srcgrad.jvp(f, wrt=(0, 1))(*args, tangent)
    assert jt == pytest.approx(got[0] @ tangent[0] + got[1] * tangent[1], rel=1e-5)


def exchange_loss(a, y0):
    z = odeint(exchange, y0, np.array([0.0, 0.4, 1.0]), args=(a,), rtol=1e-9, atol=1e-9)
    return np.sum(z[1:] ** 3)


def test_second_order_of_odeint():
    # the adjoint and tangent systems are functions with source (runtime/odeint.py), so their
    # derivatives are odeint solves again: forward over reverse (the derivative of the gradient
    # in a along y0) and reverse over reverse (in a)
    a, y0, u, h = 0.7, np.array([1.0, 0.3]), np.array([0.6, -0.8]), 1e-5
    g = srcgrad.grad(exchange_loss)
    _, got = srcgrad.jvp(g, wrt=1)(a, y0, u)
    assert got == pytest.approx((g(a, y0 + h * u) - g(a, y0 - h * u)) / (2 * h), rel=1e-6)
    got = srcgrad.grad(g)(a, y0)
    assert got == pytest.approx((g(a + h, y0) - g(a - h, y0)) / (2 * h), rel=1e-6)


def decay0(y, t, k):
    return -k * y


def test_odeint_accuracy_follows_the_tolerances():
    exact = -2.0 * np.exp(-2.0)  # d/dk exp(-k t) at k = 1, t = 2

    errors = []
    for tol in (1e-4, 1e-10):
        f = define(["k"], [f"return odeint(decay0, 1.0, T, args=(k,), rtol={tol}, "
                           f"atol={tol})[-1, 0]"],
                   {"decay0": decay0, "T": np.array([0.0, 2.0])})
        errors.append(abs(srcgrad.grad(f)(1.0) - exact))
    assert errors[1] < 1e-8 < errors[0] * 10
    assert errors[0] < 1e-3
    # forward mode integrates the sensitivities with the same rtol and atol: tight with both
    # tight, loose with either loose (the default 1.5e-8 in place of either would not be)
    f = define(["k", "rtol", "atol"],
               ["return odeint(decay0, 1.0, T, args=(k,), rtol=rtol, atol=atol)[-1, 0]"],
               {"decay0": decay0, "T": np.array([0.0, 2.0])})
    tangent = srcgrad.jvp(f)
    errors = [abs(tangent(1.0, rtol, atol, 1.0)[1] - exact)
              for rtol, atol in ((1e-12, 1e-12), (1e-4, 1e-12), (1e-12, 1e-4))]
    assert errors[0] < 1e-10
    assert 1e-7 < errors[1] < 1e-3 and 1e-7 < errors[2] < 1e-3
    # the adjoint in y0 too: loose with rtol alone loose (measured 9.4e-6; the default rtol in
    # the adjoint's solve gave 4.9e-10)
    f = define(["y0"], ["return odeint(decay0, y0, T, args=(1.0,), rtol=1e-4, atol=1e-12)[-1, 0]"],
               {"decay0": decay0, "T": np.array([0.0, 2.0])})
    assert 1e-7 < abs(srcgrad.grad(f)(1.0) - np.exp(-2.0)) < 1e-3
    # and with atol alone loose (measured 1.4e-5; 1.8e-9 with the default atol in the adjoint's
    # solve, the scipy_rules survivor vjp[y0] keyword dropped: atol)
    f = define(["y0"], ["return odeint(decay0, y0, T, args=(1.0,), rtol=1e-12, atol=1e-3)[-1, 0]"],
               {"decay0": decay0, "T": np.array([0.0, 2.0])})
    assert 1e-7 < abs(srcgrad.grad(f)(1.0) - np.exp(-2.0)) < 1e-3
    # and in the times with atol alone loose: the gradient in t0 comes from the adjoint's solve
    # alone (measured error 7.8e-5; 1.4e-5 with the default atol in the adjoint's solve)
    f = define(["t"], ["return odeint(decay0, 1.0, t, args=(1.0,), rtol=1e-12, atol=1e-3)[-1, 0]"],
               {"decay0": decay0})
    assert 3e-5 < abs(srcgrad.grad(f)(np.array([0.0, 2.0]))[0] - np.exp(-2.0)) < 1e-3
    # and with rtol alone loose (an oscillator: measured error 2.9e-4; 5e-8 with the default
    # rtol in the adjoint's solve, the scipy_rules survivor vjp[t] keyword dropped: rtol)
    f = define(["t"], ["return odeint(oscillator, Y0, t, args=(5.0,), rtol=1e-4, "
                       "atol=1e-12)[-1, 0]"],
               {"oscillator": oscillator, "Y0": np.array([1.0, 0.0])})
    assert 1e-5 < abs(srcgrad.grad(f)(np.array([0.0, 2.0]))[0] - 5.0 * np.sin(10.0)) < 1e-2


def test_odeint_derivatives_take_hmax():
    # loose tolerances and a small hmax: many steps, so the gradient and the tangent are far
    # closer to the exact ones than the tolerances alone make them (measured errors: 1.3e-5 in
    # y0, 3.0e-5 in the times, 6.1e-5 in k, 5.5e-8 for the tangent; without hmax in the
    # adjoint's or the tangent's solve 2.7e-4, 1.1e-3, 2.2e-3 and 8.0e-5)
    e = np.exp(-2.0)  # y = y0 exp(-k (t1 - t0)) at y0 = k = 1, t = (0, 2)
    f = define(["y0", "t", "k"], ["return odeint(decay0, y0, t, args=(k,), rtol=1e-3, "
                                  "atol=1e-3, hmax=0.005)[-1, 0]"], {"decay0": decay0})
    args = (1.0, np.array([0.0, 2.0]), 1.0)
    gy0, gt, gk = srcgrad.grad(f, wrt=(0, 1, 2))(*args)
    errors = np.abs(np.array([gy0, *gt, gk]) - [e, e, -e, -2.0 * e])
    assert np.all(errors < [6e-5, 1.5e-4, 1.5e-4, 3e-4]), errors
    _, tangent = srcgrad.jvp(f, wrt=(0, 1, 2))(*args, (0.0, np.array([1.0, 0.0]), 0.0))
    assert abs(tangent - e) < 1e-6


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_reads_the_triangle_it_is_told(lower):
    # of a matrix that is not symmetric, scipy.linalg.eigh reads one triangle: the gradient of
    # sum(w * W) is the symmetric V diag(W) V^T of that triangle's eigenvectors (srcgrad's
    # convention for eigh: the symmetric gradient), and the tangent along da is
    # diag(V^T sym(da) V). (Kills scipy_rules eigh jvp[a] without lower=lower.)
    rng = np.random.default_rng(7)
    a, weights, da = rng.normal(size=(4, 4)), rng.normal(size=4), rng.normal(size=(4, 4))
    _, v = linalg.eigh(a, lower=lower)
    f = define(["a"], [f"return np.sum(linalg.eigh(a, lower={lower}, eigvals_only=True) * W)"],
               {"W": weights})
    np.testing.assert_allclose(srcgrad.grad(f)(a), v @ (weights[:, None] * v.T), rtol=1e-10,
                               atol=1e-12)
    want = np.sum(weights * np.diagonal(v.T @ (0.5 * (da + da.T)) @ v))
    np.testing.assert_allclose(srcgrad.jvp(f)(a, da)[1], want, rtol=1e-10)


def test_odeint_with_full_output_is_refused_in_every_input():
    # odeint(..., full_output=1) returns (y, infodict): each input's derivative refuses it
    f = define(["y0", "t", "k"],
               ["return odeint(decay0, y0, t, args=(k,), full_output=1)[0][-1, 0]"],
               {"decay0": decay0})
    args = (1.0, np.array([0.0, 1.0]), 0.7)
    for wrt in range(3):
        with pytest.raises(srcgrad.NoRuleError, match="full_output"):
            srcgrad.grad(f, wrt=wrt)(*args)
    with pytest.raises(srcgrad.NoRuleError, match="full_output"):
        srcgrad.jvp(f, wrt=2)(*args, 1.0)


# --- adjoints of the helpers, directly -----------------------------------------------------------


def test_cho_solve_factor_adjoint():
    rng = np.random.default_rng(2)
    m = rng.normal(size=(3, 3))
    a = m @ m.T + 3 * np.eye(3)
    b, w = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    for lower in (True, False):
        c = linalg.cholesky(a, lower=lower)

        def loss(c, lower=lower):
            return np.sum(w * linalg.cho_solve((c, lower), b))

        xs = linalg.cho_solve((c, lower), b)
        got, _ = sr.cho_solve_vjp_c(w, (c, lower), xs)
        np.testing.assert_allclose(got, numeric_grad(loss, (c,), 0), rtol=1e-5, atol=1e-8)


def test_examples_student_t_mle():
    path = Path(__file__).parent.parent / "examples" / "student_t_mle.py"
    example = runpy.run_path(str(path), run_name="example")
    result = example["main"](quiet=True)
    assert result["converged"]
    np.testing.assert_allclose(result["params"], result["truth"], rtol=0.25, atol=0.1)
    # the gradient BFGS used, against central differences away from the optimum (where it is
    # not small): at the start point and at two points around the fit
    data = stats.t.rvs(4.0, 1.5, 0.7, size=200, random_state=1)
    rng = np.random.default_rng(2)
    for theta in (np.array([np.log(10.0), 1.0, 0.0]), *rng.normal(size=(2, 3))):
        want = numeric_grad(example["nll"], (theta, data), 0)
        assert np.max(np.abs(want)) > 1e-2
        np.testing.assert_allclose(example["dnll"](theta, data), want, rtol=1e-5, atol=1e-8)


def test_examples_ode_fit():
    path = Path(__file__).parent.parent / "examples" / "ode_fit.py"
    example = runpy.run_path(str(path), run_name="example")
    result = example["main"](quiet=True)
    assert result["converged"]
    np.testing.assert_allclose((result["rate"], result["amount"]), result["truth"], rtol=0.05)
    observed = 3.0 * np.exp(-0.8 * example["TIMES"])
    for theta in (np.array([np.log(0.2), 1.0]), np.array([0.1, 2.5])):
        want = numeric_grad(example["loss"], (theta, observed), 0)
        assert np.max(np.abs(want)) > 1e-2
        np.testing.assert_allclose(example["dloss"](theta, observed), want, rtol=1e-5, atol=1e-8)


def test_scipy_is_imported_only_by_the_user_and_its_rules_then_register(tmp_path):
    """``import srcgrad`` does not import SciPy; the first lookup after the user imports it
    registers its rules, before a custom rule of the user's, which they never replace."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import sys
        import srcgrad
        from srcgrad.rules import lookup
        assert "scipy" not in sys.modules, "import srcgrad imported SciPy"
        import scipy.special
        @srcgrad.adjoint(scipy.special.erf)
        def erf_adjoint(dy, y, x):
            return dy
        assert lookup(scipy.special.erf).kind.value == "custom"
        assert lookup(scipy.special.expit) is not None
        """
    )
    script = tmp_path / "user.py"  # a custom rule needs its source in a file
    script.write_text(code)
    subprocess.run([sys.executable, str(script)], check=True)

