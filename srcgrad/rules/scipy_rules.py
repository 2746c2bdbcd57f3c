"""Rules for SciPy: ``special``, ``stats``, ``linalg``, ``signal`` and ``integrate.odeint``.

Imported at the first rule lookup after the user has imported SciPy (``registry.OPTIONAL_RULES``),
so SciPy stays optional and ``import srcgrad`` never imports it.
Templates are written in the names of ``TEMPLATES`` below (SciPy's functions under their own names,
``special``, the distribution objects such as ``norm``) plus the helpers of
``runtime/scipy_helpers.py``.
Wherever a derivative is itself a function with a rule (``gammaln`` -> ``digamma`` ->
``polygamma``, Bessel functions of neighbouring orders, a distribution's ``pdf`` in the rule of its
``cdf``), the template says so, so that second derivatives come for free.

What is differentiable, and what is not:

* ``gammainc``, ``gammaincc`` and ``betainc`` are differentiated in ``x`` only; Bessel functions in
  their argument only (orders are not differentiable); ``polygamma`` and ``multigammaln`` in ``x``
  and ``a``. An active argument a rule has no derivative for raises ``NoRuleError`` when the
  generated code runs (``no_gradient``): never a silent zero.
* ``scipy.stats``: ``pdf logpdf`` (``pmf logpmf`` for ``poisson``) in every argument, including
  shape parameters; ``cdf logcdf sf logsf`` in ``x``, ``loc`` and ``scale`` (and ``mu`` for
  ``poisson``), not in shape parameters. Calls look like ``stats.norm.logpdf(x, loc, scale)``; a
  frozen distribution (``stats.norm(loc, scale).logpdf(x)``) is not supported.
  ``multivariate_normal`` takes ``cov`` as a matrix, a vector (the diagonal) or a scalar; its
  gradient in a matrix ``cov`` is the symmetric one, like ``cholesky``'s.
* ``scipy.linalg``: solvers that assume structure (``assume_a='pos'``, ``solve_triangular``'s
  ``lower``, ``cholesky``) read only part of their matrix. Triangular, diagonal and tridiagonal
  solvers give gradient only to the part they read; symmetric ones give the symmetric gradient;
  ``assume_a='banded'`` finds the band from the values, so every entry has gradient.
  ``cho_solve`` is differentiable in the factor and in ``b``; ``lu_solve`` in ``b`` only.
  ``eigh`` needs distinct eigenvalues, and all of them for eigenvectors (no ``subset_by_*``);
  its generalized form (``b``) has no derivative. ``sqrtm`` needs a real square root.
* ``odeint``: differentiable in ``y0``, ``t`` and ``args`` (a tuple), to any order. The adjoint
  ODE is solved backwards with the caller's ``rtol``/``atol``, so gradients are as accurate as the
  solution; one adjoint solve per active input. The right-hand side must be code srcgrad can
  differentiate (its vjp is generated from its source when the gradient first runs). Forward
  mode solves one sensitivity ODE for all active inputs. The helpers (``runtime/odeint.py``) are
  differentiated by their source, so derivatives of derivatives are again ``odeint`` solves.
"""

import scipy.integrate
import scipy.linalg
import scipy.signal
import scipy.special as special
import scipy.stats as stats

from ..runtime import odeint as ode_helpers
from ..runtime import scipy_helpers
from ..runtime.complex_values import real_only
from .registry import defrule, elementwise, nondiff

TEMPLATES = {
    "special": special,
    **{name: getattr(special, name) for name in (
        "digamma", "polygamma", "gammaln", "betaln", "xlogy", "xlog1py", "jv", "yv", "yn", "iv",
        "ive", "kv", "kve", "j0", "j1", "y0", "y1", "i0", "i1", "i0e", "i1e", "k0", "k1", "k0e",
        "k1e", "expit",
    )},
    **{name: getattr(stats, name) for name in (
        "norm", "t", "gamma", "beta", "chi2", "expon", "laplace", "cauchy", "logistic", "poisson",
    )},
    "solve_triangular": scipy.linalg.solve_triangular,
    "cho_solve": scipy.linalg.cho_solve,
    "lu_solve": scipy.linalg.lu_solve,
    "solve_sylvester": scipy.linalg.solve_sylvester,
    "real_only": real_only,
    "convolve": scipy.signal.convolve,
    "correlate": scipy.signal.correlate,
    **{k: v for k, v in vars(scipy_helpers).items() if callable(v) and not k.startswith("_")},
    "odeint_vjp": ode_helpers.odeint_vjp,
    "odeint_jvp": ode_helpers.odeint_jvp,
}

UNARY = "x, out=None, *, dtype=None"
ORDER = "v, x, out=None, *, dtype=None"


def _unary(fn, derivative):
    """A one-argument ufunc whose derivative is ``derivative`` (an expression in x and y)."""
    elementwise(fn, UNARY, vjp=f"dy * {derivative}", namespace=TEMPLATES)


def _in_x(fn, signature, derivative, others):
    """A ufunc differentiated in ``x`` only; the parameters ``others`` have no derivative here."""
    name = f"scipy.special.{fn.__name__}"
    missing = {p: f"no_gradient({name!r}, {p!r})" for p in others}
    elementwise(fn, signature, vjp={"x": f"dy * {derivative}", **missing}, namespace=TEMPLATES)


def _binary(fn, signature, first, second):
    """A two-operand ufunc: the partial derivatives ``first`` and ``second``."""
    elementwise(fn, signature, vjp=(f"dy * {first}", f"dy * {second}"), namespace=TEMPLATES)


# --- scipy.special: gamma and friends -------------------------------------------------------------
_unary(special.gamma, "y * digamma(x)")
_unary(special.gammaln, "digamma(x)")
_unary(special.rgamma, "(-y * digamma(x))")
# special.psi is special.digamma; polygamma has no complex loop: a complex x is refused
_unary(special.digamma, "polygamma(1, real_only(x, 'scipy.special.digamma'))")
elementwise(special.polygamma, "n, x", vjp={"x": "dy * polygamma(n + 1, x)"}, namespace=TEMPLATES)
# log Gamma_d(a) = const + sum_j gammaln(a - j / 2), j = 0 .. d - 1
defrule(
    special.multigammaln,
    "a, d",
    vjp={"a": "dy * np.sum(digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1)"},
    jvp={"a": "da * np.sum(digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1)"},
    namespace=TEMPLATES,
)
_binary(
    special.beta,
    "a, b, out=None, *, dtype=None",
    "y * (digamma(a) - digamma(a + b))",
    "y * (digamma(b) - digamma(a + b))",
)
_binary(
    special.betaln,
    "a, b, out=None, *, dtype=None",
    "(digamma(a) - digamma(a + b))",
    "(digamma(b) - digamma(a + b))",
)
# Regularized incomplete gamma and beta functions: the integrands, in x only.
_in_x(
    special.gammainc,
    "a, x, out=None, *, dtype=None",
    "np.exp(xlogy(a - 1, x) - x - gammaln(a))",
    ("a",),
)
_in_x(
    special.gammaincc,
    "a, x, out=None, *, dtype=None",
    "(-np.exp(xlogy(a - 1, x) - x - gammaln(a)))",
    ("a",),
)
_in_x(
    special.betainc,
    "a, b, x, out=None, *, dtype=None",
    "np.exp(xlogy(a - 1, x) + xlog1py(b - 1, -x) - betaln(a, b))",
    ("a", "b"),
)
nondiff(special.gammasgn)
# integers the helpers differentiated by their source (logsumexp_vjp, ...) compute
nondiff(scipy_helpers._positive_axes)

# --- scipy.special: error function, logistic, normal distribution ---------------------------------
_unary(special.erf, "(2 / math.sqrt(math.pi)) * np.exp(-x * x)")
_unary(special.erfc, "(-2 / math.sqrt(math.pi)) * np.exp(-x * x)")
_unary(special.erfinv, "(math.sqrt(math.pi) / 2) * np.exp(y * y)")
_unary(special.erfcinv, "(-math.sqrt(math.pi) / 2) * np.exp(y * y)")
_unary(special.erfcx, "(2 * x * y - 2 / math.sqrt(math.pi))")
_unary(special.ndtr, "np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)")
_unary(special.log_ndtr, "np.exp(-0.5 * x * x - y) / math.sqrt(2 * math.pi)")
_unary(special.ndtri, "math.sqrt(2 * math.pi) * np.exp(0.5 * y * y)")
_unary(special.expit, "y * (1 - y)")
_unary(special.log_expit, "expit(-x)")
_unary(special.logit, "1 / (x * (1 - x))")

# --- scipy.special: logarithms that are 0 where their factor is ---------------------------------
_binary(special.xlogy, "x1, x2, out=None, *, dtype=None", "np.log(x2)", "x1 / x2")
_binary(special.xlog1py, "x1, x2, out=None, *, dtype=None", "np.log1p(x2)", "x1 / (1 + x2)")
_unary(special.entr, "(-np.log(x) - 1)")
_binary(special.rel_entr, "x1, x2, out=None, *, dtype=None", "(np.log(x1 / x2) + 1)", "(-x1 / x2)")
_binary(special.kl_div, "x1, x2, out=None, *, dtype=None", "np.log(x1 / x2)", "(1 - x1 / x2)")

# --- scipy.special: reductions ------------------------------------------------------------------
_LSE = "axis=axis, b=b, keepdims=keepdims, return_sign=return_sign"
defrule(
    special.logsumexp,
    "a, axis=None, b=None, keepdims=False, return_sign=False",
    vjp={
        "a": f"logsumexp_vjp(dy, a, y, {_LSE})",
        "b": f"logsumexp_vjp(dy, a, y, {_LSE}, wrt='b')",
    },
    jvp={
        "a": f"logsumexp_jvp(da, a, y, {_LSE})",
        "b": f"logsumexp_jvp(db, a, y, {_LSE}, wrt='b')",
    },
    namespace=TEMPLATES,
)
defrule(
    special.softmax,
    "x, axis=None",
    vjp="y * (dy - np.sum(dy * y, axis=axis, keepdims=True))",
    jvp="y * (dx - np.sum(dx * y, axis=axis, keepdims=True))",
    namespace=TEMPLATES,
)
defrule(
    special.log_softmax,
    "x, axis=None",
    vjp="dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True)",
    jvp="dx - np.sum(np.exp(y) * dx, axis=axis, keepdims=True)",
    namespace=TEMPLATES,
)

# --- scipy.special: Bessel functions, in the argument ---------------------------------------------
_unary(special.j0, "(-j1(x))")
_unary(special.j1, "(j0(x) - jv(2, x)) / 2")
_unary(special.y0, "(-y1(x))")
_unary(special.y1, "(y0(x) - yn(2, x)) / 2")
_unary(special.i0, "i1(x)")
_unary(special.i1, "(i0(x) + iv(2, x)) / 2")
_unary(special.i0e, "(i1e(x) - np.sign(x) * y)")
_unary(special.i1e, "((i0e(x) + ive(2, x)) / 2 - np.sign(x) * y)")
_unary(special.k0, "(-k1(x))")
_unary(special.k1, "(-(k0(x) + kv(2, x)) / 2)")
_unary(special.k0e, "(y - k1e(x))")
_unary(special.k1e, "(y - (k0e(x) + kve(2, x)) / 2)")
_in_x(special.jv, ORDER, "(jv(v - 1, x) - jv(v + 1, x)) / 2", ("v",))  # special.jn is jv
_in_x(special.yv, ORDER, "(yv(v - 1, x) - yv(v + 1, x)) / 2", ("v",))
_in_x(special.iv, ORDER, "(iv(v - 1, x) + iv(v + 1, x)) / 2", ("v",))
# ive(v, x) = iv(v, x) * exp(-|Re x|) is not holomorphic: refused for complex x
_in_x(special.ive, ORDER,
      "((ive(v - 1, x) + ive(v + 1, x)) / 2 - np.sign(real_only(x, 'scipy.special.ive')) * y)",
      ("v",))
_in_x(special.kv, ORDER, "(-(kv(v - 1, x) + kv(v + 1, x)) / 2)", ("v",))
_in_x(special.kve, ORDER, "(y - (kve(v - 1, x) + kve(v + 1, x)) / 2)", ("v",))
# yn takes an integer order, which carries no gradient.
elementwise(
    special.yn,
    "n, x, out=None, *, dtype=None",
    vjp={"x": "dy * (yv(n - 1, x) - yv(n + 1, x)) / 2"},
    namespace=TEMPLATES,
)

# --- scipy.stats: continuous distributions with loc and scale -------------------------------------
# With z = (x - loc) / scale, logpdf = L(z) - log(scale). A distribution is given by its score
# L'(z) and the partial derivatives of L in its shape parameters; pdf is exp(logpdf), and the
# cdf family differentiates through the distribution's own pdf, in x, loc and scale only.
Z = "((x - loc) / scale)"
CONTINUOUS = {
    # name: (shape parameters, score L'(z), {shape parameter: dL/dparameter})
    "norm": ((), f"(-{Z})", {}),
    "t": (
        ("df",),
        f"(-(df + 1) * {Z} / (df + {Z} ** 2))",
        {"df": f"(0.5 * (digamma((df + 1) / 2) - digamma(df / 2)) - 0.5 / df - 0.5 * "
               f"np.log1p({Z} ** 2 / df) + (df + 1) * {Z} ** 2 / (2 * df * (df + {Z} ** 2)))"},
    ),
    "gamma": (("a",), f"((a - 1) / {Z} - 1)", {"a": f"(np.log({Z}) - digamma(a))"}),
    "beta": (
        ("a", "b"),
        f"((a - 1) / {Z} - (b - 1) / (1 - {Z}))",
        {
            "a": f"(np.log({Z}) - digamma(a) + digamma(a + b))",
            "b": f"(np.log1p(-{Z}) - digamma(b) + digamma(a + b))",
        },
    ),
    "chi2": (
        ("df",),
        f"((df / 2 - 1) / {Z} - 0.5)",
        {"df": f"(0.5 * np.log({Z} / 2) - 0.5 * digamma(df / 2))"},
    ),
    "expon": ((), f"(-np.ones_like({Z}))", {}),
    "laplace": ((), f"(-np.sign({Z}))", {}),
    "cauchy": ((), f"(-2 * {Z} / (1 + {Z} ** 2))", {}),
    "logistic": ((), f"(-np.tanh({Z} / 2))", {}),
}


def _broadcasting(fn, signature, vjp):
    """An elementwise rule whose templates sum every contribution back to its operand's shape.

    ``loc`` and ``scale`` have defaults, and the transform only expects broadcasting from
    required operands; so these rules do it themselves, for every operand. The derived tangent
    templates (``unbroadcast(dy * e, p)`` -> ``dp * e``) read every operand that shapes the result
    (the standardized ``z`` does), so tangents have the result's shape.
    """
    defrule(fn, signature, vjp=vjp, kind="elementwise", namespace=TEMPLATES)


def _logpdf_partials(score, shape_partials):
    """d logpdf / d param as expressions, for x, loc, scale and the shape parameters."""
    return {
        "x": f"{score} / scale",
        "loc": f"(-{score} / scale)",
        "scale": f"(-({Z} * {score} + 1) / scale)",
        **shape_partials,
    }


def _cdf_partials(kind, call):
    """d/dparam of cdf, logcdf, sf, logsf through the standardized density ``call`` (a pdf or
    a logpdf expression)."""
    density = {
        "cdf": f"{call}",
        "logcdf": f"np.exp({call} - y)",
        "sf": f"(-{call})",
        "logsf": f"(-np.exp({call} - y))",
    }[kind]
    return {"x": density, "loc": f"(-{density})", "scale": f"(-{density} * {Z})"}


def _register_distribution(name, shapes, score, shape_partials):
    dist = getattr(stats, name)
    params = ", ".join(("x", *shapes, "loc=0", "scale=1"))
    args = ", ".join(("x", *shapes, "loc", "scale"))
    logpdf = _logpdf_partials(score, shape_partials)
    methods = {
        "logpdf": {p: ("dy", e) for p, e in logpdf.items()},
        "pdf": {p: ("dy * y", e) for p, e in logpdf.items()},
    }
    for kind in ("cdf", "logcdf", "sf", "logsf"):
        call = f"{name}.pdf({args})" if kind in ("cdf", "sf") else f"{name}.logpdf({args})"
        partials = _cdf_partials(kind, call)
        missing = {p: None for p in shapes}
        methods[kind] = {**{p: ("dy", e) for p, e in partials.items()}, **missing}
    for method, partials in methods.items():
        vjp = {}
        for p, spec in partials.items():
            if spec is None:
                vjp[p] = f"no_gradient('scipy.stats.{name}.{method}', {p!r})"
                continue
            seed, e = spec
            # densities of real variables: complex operands (which make e complex) are refused
            e = f"real_only({e}, 'scipy.stats.{name}.{method}')"
            vjp[p] = f"unbroadcast({seed} * {e}, {p})"
        _broadcasting(getattr(dist, method), params, vjp)


for _name, (_shapes, _score, _partials) in CONTINUOUS.items():
    _register_distribution(_name, _shapes, _score, _partials)

# Poisson: the rate is differentiable; counts and loc are integers.
_POISSON_PMF = "poisson.pmf(np.floor(k - loc), mu)"
_POISSON_LOGPMF = "poisson.logpmf(np.floor(k - loc), mu)"
for _method, _derivative in (
    ("logpmf", "((k - loc) / mu - 1)"),
    ("pmf", "y * ((k - loc) / mu - 1)"),
    ("cdf", f"(-{_POISSON_PMF})"),
    ("logcdf", f"(-np.exp({_POISSON_LOGPMF} - y))"),
    ("sf", _POISSON_PMF),
    ("logsf", f"np.exp({_POISSON_LOGPMF} - y)"),
):
    _broadcasting(
        getattr(stats.poisson, _method),
        "k, mu, loc=0",
        vjp={"mu": f"unbroadcast(dy * real_only({_derivative}, "
                   f"'scipy.stats.poisson.{_method}'), mu)"},
    )

# SciPy drops the imaginary parts of a multivariate normal's operands (ComplexWarning): refused
_MVN_X = ", ".join(f"real_only({p}, 'scipy.stats.multivariate_normal')"
                   for p in ("x", "mean", "cov"))
for _method, _seed, _scale in (("logpdf", "dy", ""), ("pdf", "dy * y", "y * ")):
    defrule(
        getattr(stats.dirichlet, _method),
        "x, alpha",
        vjp={
            "x": f"dirichlet_vjp({_seed}, x, alpha)",
            "alpha": f"dirichlet_vjp({_seed}, x, alpha, wrt='alpha')",
        },
        jvp={
            "x": f"{_scale}dirichlet_jvp(dx, x, alpha)",
            "alpha": f"{_scale}dirichlet_jvp(dalpha, x, alpha, wrt='alpha')",
        },
        namespace=TEMPLATES,
    )
    defrule(
        getattr(stats.multivariate_normal, _method),
        "x, mean=None, cov=1, allow_singular=False",
        vjp={p: f"mvn_vjp({_seed}, {_MVN_X}, wrt={p!r})" for p in ("x", "mean", "cov")},
        jvp={
            p: f"{_scale}mvn_jvp(d{p}, {_MVN_X}, wrt={p!r})"
            for p in ("x", "mean", "cov")
        },
        namespace=TEMPLATES,
    )

# --- scipy.linalg -------------------------------------------------------------------------------
la = scipy.linalg
_TRI = "trans=trans, lower=lower, unit_diagonal=unit_diagonal"
defrule(
    la.solve_triangular,
    "a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True",
    vjp={
        "a": f"solve_triangular_vjp(dy, a, b, y, {_TRI})",
        "b": "solve_triangular(a, dy, trans=transpose_code(trans), lower=lower, "
        "unit_diagonal=unit_diagonal)",
    },
    jvp={
        "a": f"solve_triangular_jvp(a, y, da, {_TRI})",
        "b": f"solve_triangular(a, db, {_TRI})",
    },
    namespace=TEMPLATES,
)
_SOLVE = "lower=lower, assume_a=assume_a, transposed=transposed"
# complex a: SciPy has no transposed solve of a complex matrix (the adjoint is one); the
# Hermitian decompositions below are differentiated for real matrices only, as NumPy's are
_REAL_A = "real_only(a, 'scipy.linalg.{}')"
defrule(
    la.solve,
    "a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None, "
    "transposed=False",
    vjp={
        "a": f"linalg_solve_vjp(dy, {_REAL_A.format('solve')}, b, y, {_SOLVE})",
        "b": f"linalg_solve_vjp(dy, {_REAL_A.format('solve')}, b, y, {_SOLVE}, wrt=1)",
    },
    jvp={
        "a": f"linalg_solve_jvp({_REAL_A.format('solve')}, y, da, {_SOLVE})",
        "b": "scipy.linalg.solve(a, db, lower=lower, assume_a=assume_a, transposed=transposed)",
    },
    namespace={**TEMPLATES, "scipy": scipy},
)
defrule(
    la.inv,
    "a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False",
    vjp="structure(-mT(y) @ dy @ mT(y), a, assume_a)",
    jvp="-y @ structure(da, a, assume_a) @ y",
    namespace=TEMPLATES,
)
defrule(
    la.det,
    "a, overwrite_a=False, check_finite=True",
    vjp="det_vjp(dy, y, a)",
    jvp="y * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)",
    namespace=TEMPLATES,
)
defrule(
    la.cholesky,
    "a, lower=False, overwrite_a=False, check_finite=True",
    vjp="cholesky_grad(dy, real_only(y, 'scipy.linalg.cholesky'), lower=lower)",
    jvp="cholesky_tangent(real_only(y, 'scipy.linalg.cholesky'), da, lower=lower)",
    namespace=TEMPLATES,
)
defrule(
    la.cho_factor,
    "a, lower=False, overwrite_a=False, check_finite=True",
    vjp="cho_factor_vjp(dy, y, real_only(a, 'scipy.linalg.cho_factor'), lower=lower)",
    jvp="cho_factor_jvp(y, real_only(da, 'scipy.linalg.cho_factor'), lower=lower)",
    namespace=TEMPLATES,
)
defrule(
    la.cho_solve,
    "c_and_lower, b, overwrite_b=False, check_finite=True",
    vjp={"c_and_lower": "cho_solve_vjp_c(dy, real_only(c_and_lower, 'scipy.linalg.cho_solve'), "
         "y)", "b": "cho_solve(c_and_lower, dy)"},
    jvp={
        "c_and_lower": "cho_solve_jvp_c(dc_and_lower, real_only(c_and_lower, "
        "'scipy.linalg.cho_solve'), y)",
        "b": "cho_solve(c_and_lower, db)",
    },
    namespace=TEMPLATES,
)
defrule(
    la.lu_solve,
    "lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True",
    vjp={
        "lu_and_piv": "no_gradient('scipy.linalg.lu_solve', 'lu_and_piv')",
        "b": "lu_solve(lu_and_piv, dy, trans=transpose_code(trans))",
    },
    jvp={
        "lu_and_piv": "no_gradient('scipy.linalg.lu_solve', 'lu_and_piv')",
        "b": "lu_solve(lu_and_piv, db, trans=trans)",
    },
    namespace=TEMPLATES,
)
defrule(la.expm, "A", vjp="expm_vjp(dy, A)", jvp="expm_frechet_block(A, dA)", namespace=TEMPLATES)
# X = sqrtm(A): X dX + dX X = dA, a Sylvester equation; its adjoint is the one for X^T.
defrule(
    la.sqrtm,
    "A, disp=True, blocksize=64",
    vjp="solve_sylvester(mT(y), mT(y), dy)",
    jvp="solve_sylvester(y, y, dA)",
    namespace=TEMPLATES,
)
# X = solve_sylvester(A, B, Q) solves A X + X B = Q: dX solves A dX + dX B = dQ - dA X - X dB; the
# adjoint solves A^T G + G B^T = dy, and gives G, -G X^T, -X^T G. (This makes sqrtm's derivative,
# a Sylvester solve, differentiable again: every order.)
_ADJOINT = "solve_sylvester(mT(a), mT(b), dy)"
defrule(
    la.solve_sylvester,
    "a, b, q",
    vjp={"a": f"-{_ADJOINT} @ mT(y)", "b": f"-mT(y) @ {_ADJOINT}", "q": _ADJOINT},
    jvp={
        "a": "solve_sylvester(a, b, -(da @ y))",
        "b": "solve_sylvester(a, b, -(y @ db))",
        "q": "solve_sylvester(a, b, dq)",
    },
    namespace=TEMPLATES,
)
nondiff(scipy_helpers._dirichlet_filled, scipy_helpers.mvn_layout)
_EIGH = ("lower=lower, eigvals_only=eigvals_only, subset_by_index=subset_by_index, "
         "subset_by_value=subset_by_value")
defrule(
    la.eigh,
    "a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, "
    "type=1, check_finite=True, subset_by_index=None, subset_by_value=None, driver=None",
    vjp={"a": f"eigh_grad(dy, y, real_only(a, 'scipy.linalg.eigh'), {_EIGH})",
         "b": "no_gradient('scipy.linalg.eigh', 'b')"},
    jvp={"a": f"eigh_tangent(y, real_only(a, 'scipy.linalg.eigh'), da, {_EIGH})",
         "b": "no_gradient('scipy.linalg.eigh', 'b')"},
    namespace=TEMPLATES,
)

# --- scipy.signal -------------------------------------------------------------------------------
for _conv, _grad in ((scipy.signal.convolve, "convolve_grad"),
                     (scipy.signal.correlate, "correlate_grad")):
    _fn = _conv.__name__
    defrule(
        _conv,
        "in1, in2, mode='full', method='auto'",
        vjp=(
            f"{_grad}(dy, in1, in2, mode=mode, method=method)",
            f"{_grad}(dy, in1, in2, mode=mode, method=method, wrt=1)",
        ),
        kind="bilinear",
        namespace=TEMPLATES,
    )

# --- scipy.integrate.odeint ---------------------------------------------------------------------
_ODE = "rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax, tfirst=tfirst"
nondiff(ode_helpers.ode_system, ode_helpers.ode_layout)
defrule(
    scipy.integrate.odeint,
    "func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None, "
    "atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12, "
    "mxords=5, printmessg=0, tfirst=False",
    vjp={
        p: f"odeint_vjp(dy, y, func, y0, t, args, {_ODE}, full_output=full_output, wrt={k})"
        for k, p in enumerate(("y0", "t", "args"))
    },
    # one tangent for every input (None where inactive): one sensitivity solve
    jvp={"*": f"odeint_jvp(y, func, y0, t, args, dy0, dt, dargs, {_ODE}, full_output=full_output)"},
    namespace=TEMPLATES,
)
