"""The higher-order failures issue 15 names, each a test (the others are tested where they were
fixed: the decompositions' Hessians in test_helper_rules.py, the defaulted ``linspace`` and the
tuple tangent of different shapes in test_second_order_generated.py, the finite-element
assembly and ``y = np.zeros(2); y[0] = k[0]`` in test_second_order_generated.py and
test_higher_order_loops.py, the ``odeint`` right-hand side returning a list in
test_scipy_rules.py); and structured seeds and tangents (item 4).

Derivatives are checked with the walk of ``tests/third_order.py`` (each order against central
differences of the order below, float64) or against ``numeric_grad``.
"""

from __future__ import annotations

import linecache

import numpy as np
import pytest
import scipy.signal
import scipy.special
from gradcheck import numeric_grad
from second_order_check import check_second_order
from third_order import Walk, walk

from srcgrad import grad, hessian, jvp, vjp

RNG = np.random.default_rng(15)


def _define(name, text, **namespace):
    filename = f"<higher-named-{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"np": np, "scipy": scipy, **namespace}
    exec(compile(text, filename, "exec"), scope)
    return scope[name]


def logsumexp_sq(x):
    return scipy.special.logsumexp(x * 1.5, axis=0) @ np.arange(1.0, 4.0)


def signal_convolve(x):
    return np.sum(scipy.signal.convolve(x, x ** 2) ** 2)


@pytest.mark.parametrize("f, x", [
    (logsumexp_sq, RNG.normal(size=(2, 3))),  # logsumexp_vjp / logsumexp_jvp had no rule
    (signal_convolve, RNG.normal(size=4)),  # convolve_grad had no rule
], ids=["logsumexp", "scipy.signal.convolve"])
def test_scipy_helpers_to_third_order(f, x):
    assert walk(f, {"x": x}, ("x",), 3) == 3


def test_logsumexp_with_weights_of_more_rows_than_its_values():
    """grad(grad) of logsumexp(a, b=b) for b broadcast against a (found by the full third-order
    sweep): logsumexp_vjp sums its rows-of-a contribution up to b's shape with unbroadcast, whose
    adjoint, broadcast_like, then had to sum down (a ValueError of np.broadcast_to)."""
    f = _define("lse_b", "def lse_b(a, b):\n    return scipy.special.logsumexp(a, b=b)\n")
    args = {"a": RNG.normal(size=3), "b": RNG.uniform(0.5, 2.0, size=(2, 3))}
    assert walk(f, args, ("a", "b"), 2, "all") == 2


@pytest.mark.parametrize("sa, sb", [((2, 3, 4), (4,)), ((4, 3), (2, 3, 5))])
def test_dot_of_arrays_of_more_than_two_dimensions(sa, sb):
    """np.dot of N-d arrays (NotImplementedError before): the last axis of a against the
    second-to-last of b, both modes, to third order."""
    a, b = RNG.normal(size=sa), RNG.normal(size=sb)
    f = _define("dot_nd", "def dot_nd(a, b):\n    return np.sum(np.dot(a, b) ** 2 * W)\n",
                W=RNG.normal(size=np.dot(a, b).shape))
    for wrt in (("a",), ("b",)):
        assert walk(f, {"a": a, "b": b}, wrt) == 3


def joined(s):
    parts = (np.array([s, s * s]), np.array([s ** 3]))
    return np.sum(np.concatenate(parts) ** 3) + np.sum(np.stack((parts[0], parts[0] ** 2)) ** 2)


def test_concatenate_and_stack_at_third_order():
    # grad(grad(grad(f))) raised ValueError (inhomogeneous shape) through the sequence helpers
    s = 0.7
    d3 = grad(grad(grad(joined)))(s)
    want = numeric_grad(grad(grad(joined)), (s,), 0)
    assert d3 == pytest.approx(want, rel=1e-6)


def std_one(a):
    return np.std(a) + np.sum(np.std(a, axis=0))


def var_one(a):
    return np.var(a) ** 2 + np.sum(np.var(a, axis=0) ** 2)


@pytest.mark.parametrize("f", [std_one, var_one], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(1, 3), (2, 3)])
def test_std_and_var_have_no_nan_at_second_order(f, shape):
    """The std over one element is 0 whatever the element: its derivatives are 0 (NaN before:
    dy / (2 * std))."""
    a = RNG.normal(size=shape)
    assert np.all(np.isfinite(hessian(f)(a)))
    assert walk(f, {"a": a}, ("a",), 3) == 3


def einsum_interleaved(a):
    return np.sum(np.einsum(a, [0, 1], a * 2.0, [1, 2]) ** 2)


def test_einsum_interleaved_at_higher_order():
    a = RNG.normal(size=(3, 3))
    check_second_order(einsum_interleaved, (a,), 0)


# --- derived functions returning tuples, differentiated again --------------------------------

W0, W1 = RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))
U0, U1 = RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))


def product(a, b):
    return np.sum(a * b * a * W0)


D_PRODUCT = grad(product, wrt=(0, 1))


def contracted(a, b):
    g = D_PRODUCT(a, b)
    return np.sum(g[0] * U0) + np.sum(g[1] * U1)


def test_jvp_of_a_derived_function_returning_a_tuple():
    """The tangents of g = grad(f, wrt=(0, 1))(a, b) from a and from b were joined with `+`,
    which concatenates tuples: jvp(h, wrt=(0, 1)) silently read only a's part."""
    a, b = RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))
    t = (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2)))
    _, got = jvp(contracted, wrt=(0, 1))(a, b, t)
    ga = numeric_grad(contracted, (a, b), 0)
    gb = numeric_grad(contracted, (a, b), 1)
    assert got == pytest.approx(np.sum(ga * t[0]) + np.sum(gb * t[1]), rel=1e-6)
    # and at third order: jvp(h) of h(a, b) = jvp(g)(a, b, t)[1] read only a's tangent too (the
    # tangent of add(p, q), p and q tuples, was p + q)
    w = Walk(product, {"a": a, "b": b}, ("a", "b"))
    h2 = w.forward(w.reverse(product, 0), 1)
    w.check(w.forward(h2, 2), h2, 2, "jvp(jvp(g)), g calling grad(f, wrt=(0, 1))")


# --- item 4: structured seeds and tangents -------------------------------------------------------


def structured(x):
    return {"a": x ** 2, "b": (np.sin(x), [x[0] * 3.0, np.cos(x[1:])])}


def test_vjp_with_a_structured_seed_of_mixed_shapes():
    x = RNG.normal(size=3)
    seed = {"a": np.ones(3), "b": (np.arange(3.0), [2.0, np.array([1.0, -1.0])])}

    def weighted(x):
        out = structured(x)
        return (np.sum(out["a"]) + out["b"][0] @ np.arange(3.0) + 2.0 * out["b"][1][0]
                + out["b"][1][1] @ np.array([1.0, -1.0]))

    np.testing.assert_allclose(vjp(structured)(x, seed), numeric_grad(weighted, (x,), 0),
                               rtol=1e-6)
    value, tangent = jvp(structured)(x, np.ones(3))
    assert isinstance(tangent, dict) and isinstance(tangent["b"], tuple)
    assert isinstance(tangent["b"][1], list) and np.shape(tangent["b"][1][1]) == (2,)
    np.testing.assert_allclose(tangent["a"], 2 * x)
    assert tangent["b"][1][0] == pytest.approx(3.0)


def mixed(p):
    return (np.sum(p["w"] ** 2) + np.sum(p["t"][0] * p["t"][1][0]) + p["t"][1][1] ** 3
            + np.sum(p["t"][0] ** 3))


P0 = {"w": RNG.normal(size=2), "t": (RNG.normal(size=(2, 2)), [RNG.normal(size=2), 0.5])}
TP = {"w": RNG.normal(size=2), "t": (RNG.normal(size=(2, 2)), [RNG.normal(size=2), -1.5])}


def _flat(p):
    return np.concatenate([np.ravel(p["w"]), np.ravel(p["t"][0]), np.ravel(p["t"][1][0]),
                           [p["t"][1][1]]])


def _shifted(p, t, h):
    return {"w": p["w"] + h * t["w"], "t": (p["t"][0] + h * t["t"][0],
                                            [p["t"][1][0] + h * t["t"][1][0],
                                             p["t"][1][1] + h * t["t"][1][1]])}


def test_tangents_and_seeds_of_mixed_structures_through_derived_functions():
    """A tangent that is a dict of a tuple of an array and a list; the structure of grad's
    output (a derived function) as the tangent of jvp(grad(f)) and the seed of vjp(grad(f))."""
    h = 1e-6
    _, t = jvp(mixed)(P0, TP)
    want = (mixed(_shifted(P0, TP, h)) - mixed(_shifted(P0, TP, -h))) / (2 * h)
    assert t == pytest.approx(want, rel=1e-6)
    df = grad(mixed)
    _, hv = jvp(df)(P0, TP)  # the Hessian along TP, with the structure of P0
    fd = (_flat(df(_shifted(P0, TP, h))) - _flat(df(_shifted(P0, TP, -h)))) / (2 * h)
    np.testing.assert_allclose(_flat(hv), fd, rtol=1e-5, atol=1e-7)
    back = vjp(df)(P0, TP)  # the Hessian is symmetric: the same numbers, by reverse mode
    assert isinstance(back["t"], tuple) and isinstance(back["t"][1], list)
    np.testing.assert_allclose(_flat(back), fd, rtol=1e-5, atol=1e-7)


def tuple_cubic(p):
    return np.sum(p[0] ** 2 * p[1][0]) * np.sum(p[1] ** 3)


D_TUPLE = grad(tuple_cubic)
J_TUPLE = jvp(lambda p: np.sum(D_TUPLE(p)[0] * U0[:, 0]) + np.sum(D_TUPLE(p)[1] * U1[:2, 1]))


def value_and_tangent(p):
    out = J_TUPLE(p, (U0[:, 1], U1[:2, 0]))
    return out[0] * out[1]


def test_gradient_of_a_tuple_argument_from_two_derived_calls():
    """The adjoints of a tuple argument from two calls of generated functions were joined with
    `+`: the gradient of a 2-tuple came back as a 4-tuple, the second contribution dropped."""
    p = (RNG.normal(size=3), RNG.normal(size=2))
    got = grad(value_and_tangent)(p)
    assert isinstance(got, tuple) and len(got) == 2
    h = 1e-6
    for i in range(2):
        want = np.zeros_like(p[i])
        for k in range(p[i].size):
            up, down = [x.copy() for x in p], [x.copy() for x in p]
            up[i][k] += h
            down[i][k] -= h
            want[k] = (value_and_tangent(tuple(up)) - value_and_tangent(tuple(down))) / (2 * h)
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-8)


# --- third order through the helpers of products, norms and sinc (issue 15, item 3) ------------
# The rule table's rows are multilinear in their inputs (their third derivative is 0); these
# compose the product with nonlinear functions, so that third derivatives are not zero.


def kron_of_squares(a, b):
    return np.sum(np.kron(np.sin(a), b**2) * np.cos(np.arange(12.0)).reshape(4, 3))


def einsum_of_cubes(a, b, c):
    return np.einsum("ij,jk,k->i", a**3, np.tanh(b), c**2) @ np.array([1.0, -0.5])


def cross_and_convolve(a, b):
    return np.sum(np.cross(a**2, np.sin(b)) ** 2) + np.sum(np.convolve(a**3, b, "same") * a)


def norm_cubed(a):
    return np.linalg.vector_norm(a, ord=3) ** 2


@pytest.mark.parametrize(
    ("f", "shapes", "wrt"),
    [
        (kron_of_squares, [(2, 1), (2, 3)], "ab"),
        (einsum_of_cubes, [(2, 3), (3, 2), (2,)], "ab"),  # a None operand's branch runs too
        (cross_and_convolve, [(3,), (3,)], "ab"),
        (norm_cubed, [(2, 3)], "a"),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_third_derivatives_through_products_and_norms(f, shapes, wrt):
    names = ["a", "b", "c"][: len(shapes)]
    args = {n: RNG.normal(size=s) + 0.5 for n, s in zip(names, shapes)}
    assert walk(f, args, tuple(wrt), 3) == 3


def sinc_scalar(x):
    return np.sinc(x)


def test_sinc_derivatives_exact_at_zero_to_fourth_order():
    d4 = grad(grad(grad(grad(sinc_scalar))))
    d3 = grad(grad(grad(sinc_scalar)))
    assert abs(d4(0.0) - np.pi**4 / 5) < 1e-9  # sinc''''(0) = pi^4 / 5
    assert d3(0.0) == 0.0  # odd derivatives of an even function
    # away from 0 (the series and the recurrence meet at |x| = 1): central differences of d3
    for x in (0.4, 0.999, 1.001, 2.3):
        h = 1e-5
        assert abs(d4(x) - (d3(x + h) - d3(x - h)) / (2 * h)) < 1e-6 * (1 + abs(d4(x)))


def lstsq_loss(a, b):
    r = np.linalg.lstsq(a, b)
    return np.sum(r[0] ** 2) + np.sum(r[1])


@pytest.mark.parametrize("wrt", [0, 1])
def test_second_order_of_lstsq_reverse_over_reverse(wrt):
    """lstsq_vjp is differentiated by its source: vjp(grad(f)) against central differences of
    <grad f, u> (forward over reverse is in the third-order walk)."""
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))
    u = RNG.normal(size=(a, b)[wrt].shape)
    g = grad(lstsq_loss, wrt=wrt)
    want = numeric_grad(lambda a, b: np.sum(g(a, b) * u), [a, b], wrt)
    np.testing.assert_allclose(vjp(g, wrt=wrt)(a, b, u), want, atol=1e-6)
