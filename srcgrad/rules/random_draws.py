"""Random draws: the methods of ``np.random.Generator`` and ``np.random.RandomState`` (and the
legacy module functions ``np.random.normal``, ..., methods of NumPy's global ``RandomState``).

A draw is a source of values that carry no gradient: ``mu + sigma * rng.normal(size=n)``
differentiates with respect to ``mu`` and ``sigma`` (the reparameterization), and the draw runs
once, in the primal, in the order the user wrote it, so the gradient belongs to the same numbers
as the value. A draw never gets a rule, so no optimization moves, merges or repeats it (calls
without a rule are impure to ``cse``, ``licm`` and ``dce``).

What a draw cannot do is carry gradient *through* it: ``rng.normal(mu, sigma)`` given an ``mu``
that carries gradient, ``rng.permutation(x)`` of an ``x`` that does. Those are refused with the
spelling that draws the same numbers and does differentiate (``refusal``), and ``rng.shuffle``,
which changes its argument in place, is refused with ``rng.permutation`` as the way out.

    rng.normal(size=3)            -> a constant of the primal (runs once)
    rng.normal(mu, 1.0)           -> refused: write `mu + 1.0 * rng.normal(size=...)`
    rng.permutation(x)            -> refused when x carries gradient: `x[rng.permutation(len(x))]`
"""

from __future__ import annotations

import numpy as np

# Method names that mean a draw when the receiver is a local whose type srcgrad cannot see
# (`rng` a parameter). Names as common as `f` or `power` are left out: on a value whose type is
# unknown they more likely name a user's method; a generator held in a global is recognized by
# its type whatever the method.
METHODS = frozenset({
    "beta", "binomial", "chisquare", "choice", "dirichlet", "exponential", "gamma", "geometric",
    "gumbel", "hypergeometric", "integers", "laplace", "logistic", "lognormal", "logseries",
    "multinomial", "multivariate_hypergeometric", "multivariate_normal", "negative_binomial",
    "noncentral_chisquare", "noncentral_f", "normal", "pareto", "permutation", "permuted",
    "poisson", "random", "rayleigh", "shuffle", "standard_cauchy", "standard_exponential",
    "standard_gamma", "standard_normal", "standard_t", "triangular", "uniform", "vonmises", "wald",
    "weibull", "zipf", "rand", "randint", "randn", "random_integers", "random_sample", "tomaxint",
})

# Draws that take values and return some of them: the values could carry gradient through.
SELECTING = {
    "permutation": "x[{rng}.permutation(len(x))]",
    "choice": "a[{rng}.choice(len(a), ...)]",
}


def is_draw(fn):
    """Whether ``fn`` (a resolved callee) is a method of a NumPy random generator.

    ``numpy.random`` is looked at only for an object of that package (which is imported then):
    importing it for the test would add ~13 ms to ``import srcgrad``."""
    owner = getattr(fn, "__self__", None)
    if not type(owner).__module__.startswith("numpy.random"):
        return False
    return isinstance(owner, (np.random.Generator, np.random.RandomState)) and callable(fn)


def refusal(rng, method):
    """Why ``{rng}.{method}(...)`` given a value that carries gradient is refused, and what to
    write instead (a spelling that draws the same numbers)."""
    call = f"`{rng}.{method}`"
    if method in SELECTING:
        spelled = SELECTING[method].format(rng=rng)
        return (
            f"{call} of values that carry gradient: the draw carries none. Draw the indices and "
            f"index with them, `{spelled}`, which draws the same numbers and differentiates"
        )
    if method == "permuted":
        return (
            f"{call} of values that carry gradient: the draw carries none. Permute an index "
            f"array and index with it (`np.take_along_axis`)"
        )
    return (
        f"{call} given a value that carries gradient: a random draw carries none to its "
        f"parameters. Write the draw as a transformation of a standard one, which draws the "
        f"same numbers and differentiates: `loc + scale * {rng}.normal(size=...)`, "
        f"`low + (high - low) * {rng}.uniform(size=...)`, `scale * {rng}.exponential(size=...)`"
    )


def shuffle_refusal(rng, target):
    """``{rng}.shuffle({target})`` changes its argument in place: refused with the way out."""
    return (
        f"`{rng}.shuffle({target})` changes `{target}` in place; write "
        f"`{target} = {rng}.permutation({target})` (the same permutation), or "
        f"`{target} = {target}[{rng}.permutation(len({target}))]` when it carries gradient"
    )
