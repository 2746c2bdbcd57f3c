"""Random draws (``rng.normal``, ``rng.uniform``, ... of ``np.random.Generator`` and
``RandomState``) are sources without gradient: the reparameterization ``mu + sigma * eps``
differentiates with respect to ``mu`` and ``sigma``, the generated code draws exactly what the
primal draws (same numbers, same order, once), and a draw given a value that carries gradient is
refused with the spelling that differentiates.

Central differences need the same draws on every evaluation: each function under test takes a
seed or a generator, and the reference re-creates the generator for every call.
"""

import numpy as np
import pytest
from golden_source import assert_golden
from test_errors import where_is

import srcgrad
from srcgrad import UnsupportedSyntaxError, grad, hvp, jvp

STEP = 1e-6
GLOBAL_RNG = np.random.default_rng(11)


def reparameterized(mu, sigma, rng):
    eps = rng.normal(size=4)
    return np.sum(np.sin(mu + sigma * eps) ** 2)


def several_draws(mu, sigma, rng):
    rng.standard_normal()  # advances the generator: the draws after it change
    u = rng.uniform(-1.0, 1.0, size=3)
    k = rng.integers(0, 3, size=3)
    z = rng.standard_normal(3)
    picked = rng.choice(3, size=3)
    perm = rng.permutation(3)
    x = mu * u + sigma * z
    return np.sum(x[perm] * x[picked] + np.exp(0.1 * x[k]))


def generator_made_inside(mu, sigma, seed):
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, 1.0, size=(2, 3))
    return np.sum(np.tanh(mu + sigma * noise) * mu)


def legacy_random_state(mu, sigma, seed):
    rs = np.random.RandomState(seed)
    e = rs.randn(3) + rs.rand(3) + rs.standard_normal(3)
    return np.sum((mu + sigma * e) ** 3)


def draws_in_a_loop(mu, sigma, rng):
    x = mu
    for _ in range(4):
        x = x + sigma * rng.normal() * x
    return x * x


def _numeric(f, args, slot):
    x = float(args[slot])
    plus, minus = list(args), list(args)
    plus[slot], minus[slot] = x + STEP, x - STEP
    return (f(*plus) - f(*minus)) / (2 * STEP)


def _seeded(f, seed):
    """(how to call f with a fresh generator of `seed`) for each kind of last argument."""
    if f in (generator_made_inside, legacy_random_state):
        return lambda *a: f(*a, seed)
    return lambda *a: f(*a, np.random.default_rng(seed))


CASES = [reparameterized, several_draws, generator_made_inside, legacy_random_state,
         draws_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_reverse_and_forward_mode_see_the_draws_of_the_primal(f):
    call = _seeded(f, 3)
    args = (0.3, 0.7)
    last = (lambda: 3) if f in (generator_made_inside, legacy_random_state) else (
        lambda: np.random.default_rng(3))
    g = grad(f, wrt=(0, 1))(*args, last())
    for slot in (0, 1):
        np.testing.assert_allclose(g[slot], _numeric(call, args, slot), rtol=1e-6, atol=1e-8)
        value, t = jvp(f, wrt=slot)(*args, last(), 1.0)
        np.testing.assert_allclose(value, call(*args), rtol=1e-12)
        np.testing.assert_allclose(t, g[slot], rtol=1e-9)
    # second order: the Hessian-vector product against differences of the gradient
    h = hvp(f, wrt=0)(*args, last(), 1.0)
    gx = grad(f, wrt=0)
    expected = (gx(args[0] + STEP, args[1], last()) - gx(args[0] - STEP, args[1], last()))
    np.testing.assert_allclose(h, expected / (2 * STEP), rtol=1e-5, atol=1e-7)


def test_the_generated_code_draws_once_in_the_primal_order():
    df = grad(reparameterized, wrt=(0, 1))
    text = srcgrad.source(df)
    assert text.count("rng.normal(size=4)") == 1
    assert_golden("random_reparameterized.py", text)
    rng = np.random.default_rng(5)
    df(0.3, 0.7, rng)
    after = rng.normal()
    rng = np.random.default_rng(5)
    reparameterized(0.3, 0.7, rng)
    assert rng.normal() == after  # the generator advanced exactly as the primal advances it


def test_a_generator_held_in_a_global():
    def f(mu):
        return np.sum((mu + GLOBAL_RNG.normal(size=3)) ** 2)

    state = GLOBAL_RNG.bit_generator.state
    g = grad(f)(0.5)
    GLOBAL_RNG.bit_generator.state = state
    value = f(0.5)
    GLOBAL_RNG.bit_generator.state = state
    eps = GLOBAL_RNG.normal(size=3)
    assert value == pytest.approx(np.sum((0.5 + eps) ** 2))
    assert g == pytest.approx(np.sum(2 * (0.5 + eps)))


# --- refused, with the spelling that differentiates --------------------------------------------
def draw_with_active_loc(mu, rng):
    return np.sum(rng.normal(mu, 1.0, size=3))


def permutation_of_active(x, rng):
    return np.sum(rng.permutation(x) * np.arange(3.0))


def choice_of_active(x, rng):
    return np.sum(rng.choice(x, size=2))


def global_generator_with_active_scale(sigma):
    return np.sum(GLOBAL_RNG.normal(0.0, sigma, size=3))


def shuffles_in_place(x, rng):
    order = np.arange(3)
    rng.shuffle(order)
    return np.sum(x[order] * np.arange(3.0))


REFUSED = [
    (draw_with_active_loc, "rng.normal(mu", "`loc + scale * rng.normal(size=...)`"),
    (permutation_of_active, "rng.permutation(x)", "`x[rng.permutation(len(x))]`"),
    (choice_of_active, "rng.choice(x", "`a[rng.choice(len(a), ...)]`"),
    (global_generator_with_active_scale, "GLOBAL_RNG.normal",
     "`loc + scale * GLOBAL_RNG.normal(size=...)`"),
    (shuffles_in_place, "rng.shuffle", "write `order = rng.permutation(order)`"),
]


@pytest.mark.parametrize("f, marker, advice", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_a_draw_given_a_value_that_carries_gradient_is_refused_where_it_is(f, marker, advice):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(np.array([0.1, 0.2, 0.3]), np.random.default_rng(0))
    line, column, text = where_is(f, marker)
    assert (info.value.lineno, info.value.offset) == (line, column)
    assert advice in str(info.value)


def test_the_advice_draws_the_same_numbers():
    x = np.array([0.1, 0.2, 0.3, 0.4])
    for make in (np.random.default_rng, np.random.RandomState):
        a, b = make(1), make(1)
        np.testing.assert_array_equal(a.permutation(x), x[b.permutation(len(x))])
        np.testing.assert_array_equal(a.choice(x, size=3), x[b.choice(len(x), size=3)])
        order, shuffled = np.arange(5), np.arange(5)
        a.shuffle(shuffled)
        np.testing.assert_array_equal(shuffled, b.permutation(order))
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    np.testing.assert_allclose(a.normal(0.3, 2.0, size=4), 0.3 + 2.0 * b.normal(size=4))
    np.testing.assert_allclose(a.uniform(-1.0, 3.0, size=4), -1.0 + 4.0 * b.uniform(size=4))
    np.testing.assert_allclose(a.exponential(2.0, size=4), 2.0 * b.exponential(size=4))
