"""Rules for NumPy, one entry per function, grouped by family (``numpy.linalg``: linalg_rules.py).

Each entry names the kind of rule (``elementwise``, ``linear``, ``defrule`` for the rest,
``nondiff``) and gives its templates: ``vjp`` (reverse mode) and ``jvp`` (forward mode). Elementwise
rules reuse the primal result ``y`` wherever the derivative is expressed through it (exp, tanh,
sqrt, ...), so generated code never recomputes the primal. Larger adjoints live in
``srcgrad/runtime/`` under names that say what they compute (``prod_grad``, ``einsum_vjp``).

Conventions where the derivative is not unique:

* Kinks take the one-sided value NumPy's own choice suggests: ``abs``/``fabs`` at 0 have gradient
  0 (``np.sign(0)``); ``maximum``/``minimum``/``fmax``/``fmin`` give a tie to the first operand;
  ``clip`` passes the gradient to ``a`` on the closed interval ``[a_min, a_max]``.
* Reductions that choose (``max min amax amin nanmax nanmin ptp``, the inf-norms) split the gradient
  equally among tied elements, as JAX and autograd do: ``max([1, 3, 3])`` has gradient
  ``[0, 0.5, 0.5]``. The tangent in forward mode is the mean of the tied tangents, consistently.
* ``sort``/``partition`` route each output's gradient to the input element it came from; tied
  values are interchangeable. ``median``/``quantile``/``percentile`` give each rank's gradient to
  the element a stable sort puts there: tied elements take their ranks in array order.
* ``floor ceil round rint trunc sign`` and comparisons are piecewise constant: no gradient
  (their table is ``nograd_rules.py``).
* Complex values (docs/complex.md): inside generated code a cotangent ``g`` of ``w`` stands for
  ``dw -> Re(g * dw)``, so the holomorphic functions' templates (``dy * f'(x)``) hold for complex
  ``x`` as written; the others are written for both (``abs real imag conj angle vdot``), and the
  rules that order their arguments or are defined for real values only refuse complex ones with
  ``real_only`` (``maximum minimum fmax fmin clip max min ptp sort partition median quantile
  percentile var std sinc correlate``).

Guarding ``np.where``: ``np.where(c, f(x), g(x))`` evaluates both branches everywhere, and the
gradient of the untaken branch is multiplied by 0, but ``0 * inf`` or ``0 * nan`` is still NaN.
Guard the argument of the branch that can blow up so it only sees safe values::

    safe = np.where(x > 0, x, 1.0)
    y = np.where(x > 0, np.log(safe), 0.0)      # no NaN gradient at x <= 0

This is the same advice JAX gives; srcgrad does not rewrite it for you.

``out=`` and in-place calls (``np.add(a, b, out=a)``) are element writes ``a[...] = np.add(a, b)``
(``normalize/inplace_calls.py``): every rule below declares ``out`` so the call is recognized.
"""

import numpy as np

from ..runtime.shapes import is_duck
from .registry import bilinear, defrule, elementwise, linear, nondiff

UNARY = "x, out=None, *, dtype=None"
BINARY = "x1, x2, out=None, *, dtype=None"
REDUCE = "a, axis=None, dtype=None, out=None, keepdims=False"
CHOOSE = "a, axis=None, out=None, keepdims=False"

# --- elementwise, one operand ---------------------------------------------------------------
elementwise(np.negative, UNARY, vjp="-dy")
elementwise(np.positive, UNARY, vjp="dy")
elementwise(np.exp, UNARY, vjp="dy * y")
elementwise(np.exp2, UNARY, vjp="dy * y * math.log(2.0)")
elementwise(np.expm1, UNARY, vjp="dy * (y + 1)")
elementwise(np.log, UNARY, vjp="dy / x")
elementwise(np.log2, UNARY, vjp="dy / (x * math.log(2.0))")
elementwise(np.log10, UNARY, vjp="dy / (x * math.log(10.0))")
elementwise(np.log1p, UNARY, vjp="dy / (1 + x)")
# (the tangent of an int held in a container with values that carry tangents, `d = {"n": 0,
# "w": x}`, `for k, c in [(0, a), (1, b)]`, is the number 0: along it the derivative is 0, not
# 0 * inf = nan where the derivative is infinite, sqrt and cbrt at 0, arcsin and arccos at 1)
elementwise(np.sqrt, UNARY, vjp="dy * 0.5 / y", jvp="dx * 0.5 / np.where(dx == 0, 1, y)")
elementwise(np.cbrt, UNARY, vjp="dy / (3 * y * y)", jvp="dx / (3 * np.where(dx == 0, 1, y * y))")
elementwise(np.square, UNARY, vjp="dy * 2 * x")
elementwise(np.reciprocal, UNARY, vjp="-dy * y * y")
elementwise(np.sin, UNARY, vjp="dy * np.cos(x)")
elementwise(np.cos, UNARY, vjp="-dy * np.sin(x)")
elementwise(np.tan, UNARY, vjp="dy * (1 + y * y)")
# np.asin is np.arcsin, and likewise for the other array-API spellings below.
elementwise(np.arcsin, UNARY, vjp="dy / np.sqrt(1 - x * x)",
            jvp="dx / np.sqrt(np.where(dx == 0, 1, 1 - x * x))")
elementwise(np.arccos, UNARY, vjp="-dy / np.sqrt(1 - x * x)",
            jvp="-dx / np.sqrt(np.where(dx == 0, 1, 1 - x * x))")
elementwise(np.arctan, UNARY, vjp="dy / (1 + x * x)")
elementwise(np.sinh, UNARY, vjp="dy * np.cosh(x)")
elementwise(np.cosh, UNARY, vjp="dy * np.sinh(x)")
elementwise(np.tanh, UNARY, vjp="dy * (1 - y * y)")
elementwise(np.arcsinh, UNARY, vjp="dy / np.sqrt(x * x + 1)")
# sqrt(x - 1) * sqrt(x + 1), not sqrt(x * x - 1): the same for real x, and the derivative of the
# principal branch for complex x
elementwise(np.arccosh, UNARY, vjp="dy / (np.sqrt(x - 1) * np.sqrt(x + 1))")
elementwise(np.arctanh, UNARY, vjp="dy / (1 - x * x)")
# np.abs is np.absolute. At 0 the gradient is 0. Of a complex x, Re(dy) * conj(x) / |x|, written
# with functions that have rules (second order differentiates it).
elementwise(
    np.abs,
    UNARY,
    vjp="dy * real_sign(x) if not np.iscomplexobj(x) else "
    "np.real(dy) * np.conj(x) / np.where(x == 0, 1.0, np.abs(x))",
    jvp="dx * real_sign(x) if not np.iscomplexobj(x) else "
    "np.real(np.conj(x) * dx) / np.where(x == 0, 1.0, np.abs(x))",
)
elementwise(np.fabs, UNARY, vjp="dy * real_sign(x)")
# Piecewise constant for real x; of a complex x it is x / |x|, refused (sign_grad).
elementwise(np.sign, UNARY, vjp="dy * sign_grad(x)")
elementwise(np.sinc, "x", vjp="dy * sinc_nth(real_only(x, 'np.sinc'), 1)")
for _to_rad in (np.deg2rad, np.radians):
    elementwise(_to_rad, UNARY, vjp="dy * (np.pi / 180)")
for _to_deg in (np.rad2deg, np.degrees):
    elementwise(_to_deg, UNARY, vjp="dy * (180 / np.pi)")
# The parts that are piecewise constant (modf's integral part, frexp's exponent) carry no
# gradient; modf's fractional part moves with x, frexp's mantissa x * 2**-e with x / 2**e.
defrule(np.modf, UNARY, vjp="elem(dy, 0, x)", jvp="(dx, np.zeros(np.shape(x)))")
defrule(
    np.frexp,
    UNARY,
    vjp="elem(dy, 0, x) * np.exp2(-y[1])",
    jvp="(dx * np.exp2(-y[1]), np.zeros(np.shape(x)))",
)
# Complex parts (runtime/complex_values.py: a cotangent g stands for dw -> Re(g * dw)). The real
# part's cotangent is Re(dy), complex when val is (so that later contributions add to it).
# np.conj is np.conjugate.
linear(np.conj, UNARY, vjp="np.conj(dy)")
linear(np.real, "val", vjp="dy if not np.iscomplexobj(val) else np.real(dy) + 0j")
linear(np.imag, "val", vjp="-1j * np.real(dy)")
# angle(z) = Im(log z); at 0 (and for a real z, where it is piecewise constant) no gradient.
defrule(
    np.angle,
    "z, deg=False",
    vjp="np.real(dy) * (-1j / np.where(z == 0, 1.0, z)) * (z != 0) * (180 / np.pi if deg else 1.0)",
    jvp="np.imag(dz / np.where(z == 0, 1.0, z)) * (z != 0) * (180 / np.pi if deg else 1.0)",
)
elementwise(
    np.nan_to_num,
    "x, copy=True, nan=0.0, posinf=None, neginf=None",
    vjp="dy * np.isfinite(x)",
)

# --- elementwise, two operands (broadcasting) ---------------------------------------------
elementwise(np.add, BINARY, vjp=("dy", "dy"))
elementwise(np.subtract, BINARY, vjp=("dy", "-dy"))
bilinear(np.multiply, BINARY, vjp=("dy * x2", "dy * x1"), broadcast=True)
# np.true_divide is np.divide.
elementwise(np.divide, BINARY, vjp=("dy / x2", "-dy * y / x2"))
# An int exponent held in a tuple or list with values that carry gradients (`t = (2, x);
# t[1] ** t[0]`, a loop's saved tuple at second order) is differentiated too: its tangent is the
# number 0, and its cotangent is read by a second derivative. Both are zero (no log of the base,
# nan where it is negative: it was nan in a first-order jvp, in every hvp through it and in
# grad(grad(f))); the tangent of a float exponent is zero where its tangent is.
# The base's: x2 * x1 ** (x2 - 1) is 0 * 0 ** -1, nan, for x2 == 0 at x1 == 0 (`x ** k` for k in
# range(3) of a polynomial at 0: its gradient was nan there, for Python floats a ZeroDivisionError);
# x1 ** (x2 - (x2 != 0)) is 1 there, and folds to x1 ** (x2 - 1) for a literal x2 (optimize/fold.py)
POWER_EXPONENT_GRAD = "dy * y * np.log(np.where(np.result_type(x2).kind in 'biu', 1, x1))"
POWER_EXPONENT_TANGENT = "dx2 * y * np.log(np.where(dx2 == 0, 1, x1))"
for _power in (np.power, np.float_power):  # np.pow is np.power
    elementwise(_power, BINARY, vjp=("dy * x2 * x1 ** (x2 - (x2 != 0))", POWER_EXPONENT_GRAD),
                jvp=("dx1 * x2 * x1 ** (x2 - (x2 != 0))", POWER_EXPONENT_TANGENT))
# np.mod is np.remainder: x1 - floor(x1 / x2) * x2; fmod truncates instead.
elementwise(np.remainder, BINARY, vjp=("dy", "-dy * np.floor_divide(x1, x2)"))
elementwise(np.fmod, BINARY, vjp=("dy", "-dy * np.trunc(x1 / x2)"))
elementwise(np.hypot, BINARY, vjp=("dy * x1 / y", "dy * x2 / y"))
elementwise(
    np.arctan2,
    BINARY,
    vjp=("dy * x2 / (x1 * x1 + x2 * x2)", "-dy * x1 / (x1 * x1 + x2 * x2)"),
)
elementwise(
    np.logaddexp,
    BINARY,
    # the logistic sigmoid of x1 - x2 (of x2 - x1), written with tanh: stable, and it does not read
    # the result, so a gradient that never needs log(exp(x1) + exp(x2)) itself does not compute
    # it. `x2 + 0.0`: NumPy has no `-` of two boolean arrays; the other operand a literal, it folds
    # away (`0.5 * (z - 0.0)` is `0.5 * z`, optimize/fold.py)
    vjp=(
        "dy * (0.5 + 0.5 * np.tanh(0.5 * (x1 - (x2 + 0.0))))",
        "dy * (0.5 + 0.5 * np.tanh(0.5 * (x2 - (x1 + 0.0))))",
    ),
)
elementwise(np.logaddexp2, BINARY, vjp=("dy * np.exp2(x1 - y)", "dy * np.exp2(x2 - y)"))
elementwise(np.copysign, BINARY, vjp={"x1": "dy * real_sign(x1) * np.sign(y)"})
elementwise(np.ldexp, BINARY, vjp={"x1": "dy * np.exp2(x2)"})
# Ties go to the first operand, as in np.maximum's choice of which value to return.
# Complex numbers are not ordered: the rules that compare refuse them (real_only).
for _extremum, _first, _second in ((np.maximum, ">=", "<"), (np.minimum, "<=", ">")):
    _x1, _x2 = (f"real_only({x}, 'np.{_extremum.__name__}')" for x in ("x1", "x2"))
    elementwise(_extremum, BINARY,
                vjp=(f"dy * ({_x1} {_first} {_x2})", f"dy * ({_x1} {_second} {_x2})"))
# fmax/fmin return the operand that is not NaN.
elementwise(
    np.fmax,
    BINARY,
    vjp=("dy * ((real_only(x1, 'np.fmax') >= real_only(x2, 'np.fmax')) | np.isnan(x2))",
         "dy * ((real_only(x1, 'np.fmax') < real_only(x2, 'np.fmax')) | np.isnan(x1))"),
)
elementwise(
    np.fmin,
    BINARY,
    vjp=("dy * ((real_only(x1, 'np.fmin') <= real_only(x2, 'np.fmin')) | np.isnan(x2))",
         "dy * ((real_only(x1, 'np.fmin') > real_only(x2, 'np.fmin')) | np.isnan(x1))"),
)
elementwise(
    np.clip,
    "a, a_min=None, a_max=None, out=None",
    vjp=("dy * between(real_only(a, 'np.clip'), a_min, a_max)",
         "dy * clipped_low(a, a_min, a_max)", "dy * clipped_high(a, a_min, a_max)"),
)
# One argument, np.where(condition) is np.nonzero(condition): indices, no gradient.
elementwise(
    np.where,
    "condition, x1=None, x2=None",
    vjp={"x1": "np.where(condition, dy, 0.0)", "x2": "np.where(condition, 0.0, dy)"},
)

# --- reductions -------------------------------------------------------------------------------
# `where` masks the reduced elements; a sum's `initial` is added to it, a product's multiplies it.
linear(
    np.sum,
    REDUCE + ", initial=0, where=True",
    vjp={
        "a": "unreduce(dy, a, axis=axis, keepdims=keepdims, where=where)",
        "initial": "np.sum(dy)",
    },
    jvp={
        "a": "np.sum(da, axis=axis, keepdims=keepdims, where=where)",
        "initial": "dinitial + np.zeros(np.shape(y))",
    },
)
linear(
    np.mean,
    REDUCE + ", *, where=True",
    vjp="mean_grad(dy, a, axis=axis, keepdims=keepdims, where=where)",
)
# nansum and nanmean skip NaN: linear in `a` only where it is not NaN, so their tangents mask.
defrule(
    np.nansum,
    REDUCE,
    vjp="unreduce(dy, a, axis=axis, keepdims=keepdims) * ~np.isnan(a)",
    jvp="np.nansum(da * ~np.isnan(a), axis=axis, keepdims=keepdims)",
)
defrule(
    np.nanmean,
    REDUCE,
    vjp="unreduce(dy / np.sum(~np.isnan(a), axis=axis, keepdims=keepdims), a, axis=axis, "
    "keepdims=keepdims) * ~np.isnan(a)",
    jvp="np.nanmean(np.where(np.isnan(a), np.nan, da), axis=axis, keepdims=keepdims)",
)

# The other NaN-skipping functions: a NaN entry gets zero gradient and its tangent is ignored (as
# JAX does); the others as in the function of the numbers alone. nancumsum is cumsum with NaN as
# 0, nancumprod cumprod with NaN as 1; nanvar/nanstd are var/std of the numbers of each slice.
_NUMBERS = "~np.isnan(a)"
defrule(
    np.nancumsum,
    "a, axis=None, dtype=None, out=None",
    vjp=f"cumsum_grad(dy, a, axis=axis) * {_NUMBERS}",
    jvp="np.cumsum(np.where(np.isnan(a), 0.0, da), axis=axis)",
    kind="linear",
)
_ONES_FOR_NAN = "np.where(np.isnan(a), 1.0, a)"
defrule(
    np.nancumprod,
    "a, axis=None, dtype=None, out=None",
    vjp=f"cumprod_grad(dy, {_ONES_FOR_NAN}, axis=axis) * {_NUMBERS}",
    jvp=f"cumprod_jvp({_ONES_FOR_NAN}, np.where(np.isnan(a), 0.0, da), axis=axis)",
)
for _fn, _cot, _scale in (("nanvar", "dy", "1.0"), ("nanstd", "dy / (2 * y + (y == 0))",
                                                     "0.5 / (y + (y == 0))")):
    _partial = (
        f"np.where(np.isnan(a), 0.0, 2.0 * (real_only(a, 'np.{_fn}') - np.nanmean(a, axis=axis, "
        "keepdims=True)) / (np.sum(~np.isnan(a), axis=axis, keepdims=True) - ddof))"
    )
    defrule(
        getattr(np, _fn),
        "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False",
        vjp=f"unreduce({_cot}, a, axis=axis, keepdims=keepdims) * {_partial}",
        jvp=f"np.sum({_partial} * np.where(np.isnan(a), 0.0, da), axis=axis, "
        f"keepdims=keepdims) * {_scale}",
    )


def _masked_product(g):
    """The partials of np.prod, ``g`` times the product of the other factors; with `where`, of
    the selected ones (the others are 1), and 0 for the others. ``where=True`` folds away."""
    full = f"prod_grad({g} * initial, a, axis=axis, keepdims=keepdims)"
    masked = f"prod_grad({g} * initial, np.where(where, a, 1.0), axis=axis, keepdims=keepdims)"
    return f"{full} if where is True else np.where(where, {masked}, 0.0)"


defrule(
    np.prod,
    REDUCE + ", initial=1, where=True",
    vjp={
        "a": _masked_product("dy"),
        "initial": "np.sum(dy * np.prod(a, axis=axis, keepdims=keepdims, where=where))",
    },
    jvp={
        "a": f"reduce_jvp({_masked_product('np.ones_like(y)')}, da, axis=axis, keepdims=keepdims)",
        "initial": "dinitial * np.prod(a, axis=axis, keepdims=keepdims, where=where)",
    },
)
# `initial` takes part as one more element, a constant: where it is the extreme, no element of
# `a` equals the result and none gets gradient; at a tie with it, the tied elements get it all.
for _chooser in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin):
    defrule(
        _chooser,
        CHOOSE + ", initial=None",
        unsupported={"initial": "the derivative with respect to `initial` is not implemented"},
        vjp=f"chooser_grad(dy, real_only(a, 'np.{_chooser.__name__}'), y, axis=axis, "
        "keepdims=keepdims)",
        jvp=f"reduce_jvp(chooser_grad(np.ones_like(y), real_only(a, 'np.{_chooser.__name__}'), y, "
        "axis=axis, keepdims=keepdims), da, axis=axis, keepdims=keepdims)",
    )
defrule(
    np.ptp,
    CHOOSE,
    vjp="ptp_grad(dy, real_only(a, 'np.ptp'), axis=axis, keepdims=keepdims)",
    jvp="reduce_jvp(ptp_grad(np.ones_like(y), real_only(a, 'np.ptp'), axis=axis, "
    "keepdims=keepdims), da, axis=axis, keepdims=keepdims)",
)
# NumPy 2's keywords: `correction` is `ddof` under the array API's name (NumPy refuses both at
# once); `mean` is a mean computed beforehand (keepdims-shaped), about which the variance is
# taken, sum(|a - mean|^2) / (n - ddof): differentiable in `a` and in `mean` (a mean computed
# from `a` passes its own gradient on, 0 when it is a's exact mean).
_VAR = "a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, mean=None, correction=None"
_DDOF = "(ddof if correction is None else correction)"


def _about_mean(fn, seed, tangent):
    """The partials of var (scale 1) or std (seed/scale written by the caller) about a given
    mean: ``2 (a - mean) / (n - ddof)`` times the spread cotangent, or summed with a tangent."""
    partial = f"2.0 * (real_only(a, 'np.{fn}') - mean) / (np.size(a) / np.size(y) - {_DDOF})"
    if tangent is None:
        return f"unreduce({seed}, a, axis=axis, keepdims=keepdims) * {partial}"
    return f"np.sum({partial} * {tangent}, axis=axis, keepdims=keepdims) * {seed}"


for _fn, _cot, _scale in (("var", "dy", "1.0"), ("std", "dy / (2 * y + (y == 0))",
                                                  "0.5 / (y + (y == 0))")):
    # std: at a zero std (one element, or all equal) the gradient is 0, as a norm's at zero: the
    # centered values var_grad multiplies by are all 0 there, so dividing by 1 keeps it finite
    _own = f"real_only(a, 'np.{_fn}'), axis=axis, ddof={_DDOF}, keepdims=keepdims"
    defrule(
        getattr(np, _fn),
        _VAR,
        vjp={
            "a": f"var_grad({_cot}, {_own}) if mean is None else {_about_mean(_fn, _cot, None)}",
            "mean": f"unbroadcast(-({_about_mean(_fn, _cot, None)}), mean)",
        },
        jvp={
            "a": f"reduce_jvp(var_grad(np.ones_like(y) * {_scale}, {_own}), da, axis=axis, "
            f"keepdims=keepdims) if mean is None else {_about_mean(_fn, _scale, 'da')}",
            "mean": f"-{_about_mean(_fn, _scale, 'dmean')}",
        },
    )
defrule(
    np.average,
    "a, axis=None, weights=None, *, keepdims=False",
    vjp={
        "a": "average_grad(dy, a, axis=axis, weights=weights, keepdims=keepdims)",
        "weights": "average_weights_grad(dy, a, y, axis=axis, weights=weights, keepdims=keepdims)",
    },
    jvp={
        "a": "reduce_jvp(average_grad(np.ones_like(y), a, axis=axis, weights=weights, "
        "keepdims=keepdims), da, axis=axis, keepdims=keepdims)",
        "weights": "average_weights_jvp(a, y, dweights, axis=axis, weights=weights, "
        "keepdims=keepdims)",
    },
)
defrule(
    np.median,
    "a, axis=None, out=None, overwrite_input=False, keepdims=False",
    vjp="quantile_grad(dy, real_only(a, 'np.median'), 0.5, axis=axis, keepdims=keepdims)",
    jvp="quantile_jvp(real_only(a, 'np.median'), da, 0.5, axis=axis, keepdims=keepdims)",
)
defrule(
    np.quantile,
    "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
    vjp={"a": "quantile_grad(dy, real_only(a, 'np.quantile'), q, axis=axis, keepdims=keepdims, "
         "method=method)"},
    jvp={"a": "quantile_jvp(real_only(a, 'np.quantile'), da, q, axis=axis, keepdims=keepdims, "
         "method=method)"},
    unsupported={"q": "the derivative with respect to the quantile level is not implemented"},
)
defrule(
    np.percentile,
    "a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False",
    vjp={"a": "quantile_grad(dy, real_only(a, 'np.percentile'), np.divide(q, 100), axis=axis, "
         "keepdims=keepdims, method=method)"},
    jvp={"a": "quantile_jvp(real_only(a, 'np.percentile'), da, np.divide(q, 100), axis=axis, "
         "keepdims=keepdims, method=method)"},
    unsupported={"q": "the derivative with respect to the percentile is not implemented"},
)
linear(np.cumsum, "a, axis=None, dtype=None, out=None", vjp="cumsum_grad(dy, a, axis=axis)")
# include_initial puts a 0 (a constant) before the sums
linear(
    np.cumulative_sum,
    "x, /, *, axis=None, dtype=None, out=None, include_initial=False",
    vjp="cumsum_grad(np.delete(dy, 0, axis=0 if axis is None else axis) if include_initial else "
    "dy, x, axis=axis)",
)
for _cumprod in (np.cumprod, np.cumulative_prod):
    defrule(
        _cumprod,
        "a, axis=None, dtype=None, out=None",
        vjp="cumprod_grad(dy, a, axis=axis)",
        jvp="cumprod_jvp(a, da, axis=axis)",
    )
linear(
    np.trace,
    "a, offset=0, axis1=0, axis2=1, dtype=None, out=None",
    vjp="trace_grad(dy, a, offset=offset, axis1=axis1, axis2=axis2)",
)
# np.diff(a, prepend=p, append=q) differences the joined array (p, a, q) along the axis: linear
# in the three jointly; a number p or q is broadcast as NumPy does and gets the sum of its slice.
_EDGES = "a, n, axis, prepend, append"
linear(
    np.diff,
    "a, n=1, axis=-1, prepend=None, append=None",
    vjp={
        "a": f"diff_grad(dy, a, n=n, axis=axis) if prepend is None and append is None else "
        f"diff_part_grad(dy, {_EDGES}, 1)",
        "prepend": f"diff_part_grad(dy, {_EDGES}, 0)",
        "append": f"diff_part_grad(dy, {_EDGES}, 2)",
    },
    jvp={
        "a": f"np.diff(da, n=n, axis=axis) if prepend is None and append is None else "
        f"diff_part_tangent(da, {_EDGES}, 1)",
        "prepend": f"diff_part_tangent(dprepend, {_EDGES}, 0)",
        "append": f"diff_part_tangent(dappend, {_EDGES}, 2)",
    },
)

# --- shape ------------------------------------------------------------------------------------
# np.permute_dims is np.transpose.
linear(np.transpose, "a, axes=None", vjp="np.transpose(dy, inverse_permutation(axes))")
linear(np.matrix_transpose, "x", vjp="np.matrix_transpose(dy)")
linear(np.swapaxes, "a, axis1, axis2", vjp="np.swapaxes(dy, axis1, axis2)")
linear(np.moveaxis, "a, source, destination", vjp="np.moveaxis(dy, destination, source)")
linear(np.reshape, "a, shape=None, order='C'", vjp="reshape_like(dy, a, order=order)")
# The method `x.reshape((3, 4))`; its shape must be one argument (`x.reshape(3, 4)` is refused).
# Its tangent is written with np.reshape: np.ndarray.reshape(dx, ...) needs dx to be an array.
linear(np.ndarray.reshape, "a, shape, *, order='C'", vjp="reshape_like(dy, a, order=order)",
       jvp="np.reshape(da, np.shape(y), order=order)")
linear(np.ravel, "a, order='C'", vjp="reshape_like(dy, a, order=order)")
# `x.view()`: another array object over x's memory (a dtype or type argument is refused); its
# tangent a view of x's, as reshape's
linear(np.ndarray.view, "a", vjp="reshape_like(dy, a)", jvp="np.reshape(da, np.shape(y))")
linear(np.expand_dims, "a, axis", vjp="reshape_like(dy, a)")
linear(np.squeeze, "a, axis=None", vjp="reshape_like(dy, a)")
for _atleast in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    linear(_atleast, "a", vjp="reshape_like(dy, a)")
linear(np.asarray, "a, dtype=None, order=None", vjp="reshape_like(dy, a)")
linear(np.array, "a, dtype=None", vjp="reshape_like(dy, a)")
# (`xs.copy()` of a list has this rule too: its tangent is a list, copied as one)
linear(np.copy, "a, order='K'", vjp="dy", jvp="copy_array(da)")
linear(np.ascontiguousarray, "a, dtype=None", vjp="reshape_like(dy, a)")
linear(np.broadcast_to, "array, shape", vjp="unbroadcast(dy, array)")
linear(np.flip, "m, axis=None", vjp="np.flip(dy, axis=axis)")
linear(np.fliplr, "m", vjp="np.fliplr(dy)")
linear(np.flipud, "m", vjp="np.flipud(dy)")
linear(
    np.roll,
    "a, shift, axis=None",
    vjp="reshape_like(np.roll(dy, np.negative(shift), axis=axis), a)",
)
linear(np.rot90, "m, k=1, axes=(0, 1)", vjp="np.rot90(dy, -k, axes=axes)")
# a 1-D m is broadcast to the rows of a square result: its gradient sums them
linear(np.triu, "m, k=0", vjp="unbroadcast(np.triu(dy, k=k), m)")
linear(np.tril, "m, k=0", vjp="unbroadcast(np.tril(dy, k=k), m)")
linear(np.diag, "v, k=0", vjp="diag_grad(dy, v, k=k)")
linear(np.diagflat, "v, k=0", vjp="reshape_like(np.diag(dy, k=k), v)")
linear(
    np.diagonal,
    "a, offset=0, axis1=0, axis2=1",
    vjp="diagonal_grad(dy, a, offset=offset, axis1=axis1, axis2=axis2)",
)
linear(np.tile, "A, reps", vjp="select_grad(dy, A, np.tile, reps)")
linear(np.repeat, "a, repeats, axis=None", vjp="select_grad(dy, a, np.repeat, repeats, axis=axis)")
linear(
    np.take,
    "a, indices, axis=None, out=None, mode='raise'",
    vjp="select_grad(dy, a, np.take, indices, axis=axis, mode=mode)",
)
linear(
    np.take_along_axis,
    "arr, indices, axis=-1",
    vjp="select_grad(dy, arr, np.take_along_axis, indices, axis=axis)",
)
linear(np.delete, "arr, obj, axis=None", vjp="select_grad(dy, arr, np.delete, obj, axis=axis)")
linear(np.resize, "a, new_shape", vjp="select_grad(dy, a, np.resize, new_shape)")
def pad_constant_values_grad(dy, array, pad_width, constant_values):
    """The adjoint of ``np.pad(array, pad_width, constant_values=c)`` with respect to ``c``: a
    scalar fills every padded element; an array of (before, after) values per axis fills each
    axis's padding (later axes over the corners of earlier ones, as np.pad does)."""
    c = np.asarray(constant_values, dtype=float)
    zeros = np.zeros(np.shape(array))
    parts = []
    for idx in np.ndindex(c.shape):
        unit = np.zeros(c.shape)
        unit[idx] = 1.0
        parts.append(np.sum(dy * np.pad(zeros, pad_width, mode="constant", constant_values=unit)))
    if np.ndim(constant_values) == 0:
        # a Dask cotangent gives a lazy number: float() would compute it
        return parts[0] if is_duck(parts[0]) else float(parts[0])
    return np.reshape(np.stack(parts), c.shape)


# pad, append and linspace are linear in two arguments jointly: each tangent is written with the
# other argument zero.
linear(
    np.pad,
    "array, pad_width, mode='constant', constant_values=0",
    vjp={
        "array": "pad_grad(dy, array, pad_width, mode=mode)",
        "constant_values": "pad_constant_values_grad(dy, array, pad_width, constant_values)",
    },
    jvp={
        "array": "np.pad(darray, pad_width, mode=mode)",
        "constant_values": "np.pad(np.zeros_like(array), pad_width, mode=mode, "
        "constant_values=dconstant_values)",
    },
    namespace={"pad_constant_values_grad": pad_constant_values_grad},
)
# Functions of a sequence of arrays: the cotangent of the sequence is a tuple of cotangents.
linear(  # np.concat is np.concatenate
    np.concatenate,
    "arrays, axis=0, out=None, *, dtype=None",
    vjp="concatenate_grad(dy, arrays, axis=axis)",
)
linear(np.stack, "arrays, axis=0, out=None, *, dtype=None", vjp="stack_grad(dy, arrays, axis=axis)")
linear(np.hstack, "tup, *, dtype=None", vjp="hstack_grad(dy, tup)")
linear(np.vstack, "tup, *, dtype=None", vjp="vstack_grad(dy, tup)")
linear(np.dstack, "tup", vjp="dstack_grad(dy, tup)")
linear(np.column_stack, "tup", vjp="column_stack_grad(dy, tup)")
linear(
    np.append,
    "arr, values, axis=None",
    vjp=(
        "concatenate_grad(dy, (arr, values), axis=axis)[0]",
        "concatenate_grad(dy, (arr, values), axis=axis)[1]",
    ),
    jvp=(
        "np.append(darr, np.zeros_like(values), axis=axis)",
        "np.append(np.zeros_like(arr), dvalues, axis=axis)",
    ),
)
# Functions returning a list of arrays: ``dy`` is one cotangent per piece, None for no gradient.
for _split in (np.split, np.array_split):
    linear(
        _split,
        "ary, indices_or_sections, axis=0",
        vjp="split_grad(dy, ary, indices_or_sections, axis=axis)",
    )
linear(np.hsplit, "ary, indices_or_sections", vjp="hsplit_grad(dy, ary, indices_or_sections)")
linear(
    np.vsplit,
    "ary, indices_or_sections",
    vjp="split_grad(dy, ary, indices_or_sections, axis=0)",
)
linear(
    np.dsplit,
    "ary, indices_or_sections",
    vjp="split_grad(dy, ary, indices_or_sections, axis=2)",
)
linear(np.unstack, "x, *, axis=0", vjp="stack_cotangents(dy, x, axis=axis)")
linear(np.full, "shape, fill_value, dtype=None", vjp={"fill_value": "unbroadcast(dy, fill_value)"})
# np.full_like(a, dfill) would take a's dtype (an integer `a` would truncate the tangent).
linear(
    np.full_like,
    "a, fill_value, dtype=None",
    vjp={"fill_value": "unbroadcast(dy, fill_value)"},
    jvp={"fill_value": "np.full(np.shape(a), dfill_value)"},
)
linear(
    np.linspace,
    # (`retstep` and `dtype` are not in the signature: a call with them is refused)
    "start, stop, num=50, endpoint=True, *, axis=0",
    # array bounds broadcast against each other: the result is their broadcast shape with the
    # num samples inserted at `axis`
    vjp=(
        "unbroadcast(linspace_grad(dy, num=num, endpoint=endpoint, axis=axis), start)",
        "unbroadcast(linspace_grad(dy, num=num, endpoint=endpoint, axis=axis, start=False), stop)",
    ),
    jvp=(
        "np.linspace(dstart, np.zeros(np.shape(stop)), num, endpoint=endpoint, axis=axis)",
        "np.linspace(np.zeros(np.shape(start)), dstop, num, endpoint=endpoint, axis=axis)",
    ),
)
# geomspace: y = start^(1 - t) stop^t along `axis` (t the samples of linspace(0, 1)), so
# dy/dstart = (1 - t) y / start and dy/dstop = t y / stop, at the endpoints NumPy sets exactly too.
_SPACE = "num=num, endpoint=endpoint, axis=axis"
defrule(
    np.geomspace,
    "start, stop, num=50, endpoint=True, *, axis=0",
    vjp={
        "start": f"unbroadcast(linspace_grad(dy * y, {_SPACE}) / real_only(start, "
        "'np.geomspace'), start)",
        "stop": f"unbroadcast(linspace_grad(dy * y, {_SPACE}, start=False) / real_only(stop, "
        "'np.geomspace'), stop)",
    },
    jvp={
        "start": "y * np.linspace(dstart / start, np.zeros(np.shape(stop)), num, "
        "endpoint=endpoint, axis=axis)",
        "stop": "y * np.linspace(np.zeros(np.shape(start)), dstop / stop, num, "
        "endpoint=endpoint, axis=axis)",
    },
)
# logspace: y = B ** linspace(S, T) with S, T, B the arguments made `ndim(y) - 1`-dimensional
# (leading_ones) and B's samples' axis inserted, as NumPy does.
_N1 = "np.ndim(y) - 1"
_B = f"np.expand_dims(leading_ones(base, {_N1}), axis)"
_S, _T = (f"leading_ones({v}, {_N1})" for v in ("start", "stop"))
_LIN = f"np.linspace({_S}, {_T}, num, endpoint=endpoint, axis=axis)"
defrule(
    np.logspace,
    "start, stop, num=50, endpoint=True, base=10.0, *, axis=0",
    vjp={
        "start": f"reshape_like(unbroadcast(linspace_grad(dy * y * np.log({_B}), {_SPACE}), "
        f"{_S}), start)",
        "stop": f"reshape_like(unbroadcast(linspace_grad(dy * y * np.log({_B}), {_SPACE}, "
        f"start=False), {_T}), stop)",
        "base": f"reshape_like(unbroadcast(dy * y * {_LIN} / {_B}, {_B}), base)",
    },
    jvp={
        "start": f"y * np.log({_B}) * np.linspace(leading_ones(dstart, {_N1}), "
        f"np.zeros(np.shape({_T})), num, endpoint=endpoint, axis=axis)",
        "stop": f"y * np.log({_B}) * np.linspace(np.zeros(np.shape({_S})), "
        f"leading_ones(dstop, {_N1}), num, endpoint=endpoint, axis=axis)",
        "base": f"y * {_LIN} / {_B} * np.expand_dims(leading_ones(dbase, {_N1}), axis)",
    },
)
defrule(
    np.vander,
    "x, N=None, increasing=False",
    vjp="np.sum(dy * vander_slope(x, N, increasing), axis=-1)",
    jvp="np.expand_dims(dx, -1) * vander_slope(x, N, increasing)",
)
# ediff1d joins to_begin, the differences of the flattened ary and to_end: linear in the three
_NO_END = "None if to_end is None else np.zeros(np.shape(to_end))"
_NO_BEGIN = "None if to_begin is None else np.zeros(np.shape(to_begin))"
linear(
    np.ediff1d,
    "ary, to_end=None, to_begin=None",
    vjp={
        "ary": "ediff1d_grad(dy, ary, to_end, to_begin, 1)",
        "to_begin": "ediff1d_grad(dy, ary, to_end, to_begin, 0)",
        "to_end": "ediff1d_grad(dy, ary, to_end, to_begin, 2)",
    },
    jvp={
        "ary": f"np.ediff1d(dary, to_end={_NO_END}, to_begin={_NO_BEGIN})",
        # zeros of ary in the tangent's dtype: NumPy refuses a complex to_begin of a real ary
        "to_begin": f"np.ediff1d(np.zeros(np.shape(ary), np.result_type(dto_begin)), "
        f"to_end={_NO_END}, to_begin=dto_begin)",
        "to_end": f"np.ediff1d(np.zeros(np.shape(ary), np.result_type(dto_end)), to_end=dto_end, "
        f"to_begin={_NO_BEGIN})",
    },
)
linear(np.bincount, "x, weights=None, minlength=0", vjp={"weights": "dy[x]"})

# --- products ---------------------------------------------------------------------------------
# Bilinear: `vjp` gives the two transposes; the tangent is the product rule (`dx1 @ x2 + x1 @ dx2`).
for _matmul in (np.matmul, np.linalg.matmul):
    bilinear(
        _matmul, "x1, x2, out=None",
        vjp=("matmul_vjp_left(dy, x1, x2)", "matmul_vjp_right(dy, x1, x2)"),
    )
bilinear(np.dot, "a, b, out=None", vjp=("dot_vjp_left(dy, a, b)", "dot_vjp_right(dy, a, b)"))
bilinear(
    np.vdot, "a, b",
    # np.vdot conjugates its first operand: vdot(a, b) = sum(conj(a) * b)
    vjp=(
        "reshape_like(np.conj(dy * np.ravel(b)), a)",
        "reshape_like(dy * np.conj(np.ravel(a)), b)",
    ),
)
bilinear(np.inner, "a, b", vjp=("inner_vjp_left(dy, a, b)", "inner_vjp_right(dy, a, b)"))
for _outer in (np.outer, np.linalg.outer):
    bilinear(
        _outer, "a, b",
        vjp=(
            "reshape_like(dy @ np.ravel(b), a)",
            "reshape_like(np.ravel(a) @ dy, b)",
        ),
    )
for _tensordot in (np.tensordot, np.linalg.tensordot):
    bilinear(
        _tensordot, "a, b, axes=2",
        vjp=(
            "tensordot_vjp_left(dy, a, b, axes=axes)",
            "tensordot_vjp_right(dy, a, b, axes=axes)",
        ),
    )
for _vecdot in (np.vecdot, np.linalg.vecdot):
    bilinear(
        _vecdot, "x1, x2, out=None, *, axis=-1",
        vjp=(
            # `axis` counts in each operand's own axes, not in the broadcast shape; vecdot
            # conjugates x1: sum(conj(x1) * x2)
            "np.moveaxis(unbroadcast(np.conj(np.expand_dims(dy, -1) * np.moveaxis(x2, axis, -1)), "
            "np.moveaxis(x1, axis, -1)), -1, axis)",
            "np.moveaxis(unbroadcast(np.expand_dims(dy, -1) * np.conj(np.moveaxis(x1, axis, -1)), "
            "np.moveaxis(x2, axis, -1)), -1, axis)",
        ),
    )
bilinear(
    np.matvec, "x1, x2, out=None",
    vjp=(
        "unbroadcast(dy[..., :, None] * x2[..., None, :], x1)",
        "unbroadcast(np.matvec(mT(x1), dy), x2)",
    ),
)
bilinear(
    np.vecmat, "x1, x2, out=None",
    # np.vecmat conjugates x1: conj(x1) @ x2
    vjp=(
        "unbroadcast(np.conj(np.matvec(x2, dy)), x1)",
        "unbroadcast(np.conj(x1)[..., :, None] * dy[..., None, :], x2)",
    ),
)
# np.einsum(subscripts, x0, x1, ...): up to six operands, each differentiable. Multilinear, but
# its operands are positional, so the tangent is written: einsum_jvp puts the tangent in place k.
_EINSUM_OPERANDS = ("x0", "x1", "x2", "x3", "x4", "x5")
_einsum_args = "x0, " + ", ".join(f"{x}={x}" for x in _EINSUM_OPERANDS[1:])
defrule(
    np.einsum,
    "subscripts, x0, x1=None, x2=None, x3=None, x4=None, x5=None, *, out=None, optimize=False",
    vjp={
        x: f"einsum_vjp(dy, subscripts, {k}, {_einsum_args})"
        for k, x in enumerate(_EINSUM_OPERANDS)
    },
    jvp={
        x: f"einsum_jvp(subscripts, {k}, d{x}, {_einsum_args})"
        for k, x in enumerate(_EINSUM_OPERANDS)
    },
    kind="multilinear",
)
bilinear(np.kron, "a, b", vjp=("kron_vjp(dy, a, b)", "kron_vjp(dy, a, b, wrt=1)"))
_CROSS = "axisa=axisa, axisb=axisb, axisc=axisc, axis=axis"
bilinear(
    np.cross, "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None",
    vjp=(f"cross_vjp(dy, a, b, 0, {_CROSS})", f"cross_vjp(dy, a, b, 1, {_CROSS})"),
)
# np.linalg.cross takes only `axis`: its tangent is written as np.cross.
bilinear(
    np.linalg.cross, "a, b, axisa=-1, axisb=-1, axisc=-1, axis=None",
    vjp=(f"cross_vjp(dy, a, b, 0, {_CROSS})", f"cross_vjp(dy, a, b, 1, {_CROSS})"),
    jvp=(f"np.cross(da, b, {_CROSS})", f"np.cross(a, db, {_CROSS})"),
)
bilinear(
    np.convolve, "a, v, mode='full'",
    # a number is convolved as an array of one element
    vjp=(
        "reshape_like(convolve_vjp(dy, np.atleast_1d(a), np.atleast_1d(v), mode=mode), a)",
        "reshape_like(convolve_vjp(dy, np.atleast_1d(a), np.atleast_1d(v), mode=mode, wrt=1), v)",
    ),
)
bilinear(
    np.correlate, "a, v, mode='valid'",
    # np.correlate conjugates v: srcgrad's adjoint is written for real values
    vjp=("correlate_vjp(dy, a, real_only(v, 'np.correlate'), mode=mode)",
         "correlate_vjp(dy, a, real_only(v, 'np.correlate'), mode=mode, wrt=1)"),
)

# --- sorting ------------------------------------------------------------------------------------
# Piecewise linear: the permutation depends on `a`, so the tangent is permuted like the result.
defrule(
    np.sort,
    "a, axis=-1, kind=None, order=None",
    vjp="permutation_grad(dy, real_only(a, 'np.sort'), y, axis=axis)",
    jvp="permute_like(da, real_only(a, 'np.sort'), y, axis=axis)",
)
defrule(
    np.partition,
    "a, kth, axis=-1, kind='introselect', order=None",
    vjp="permutation_grad(dy, real_only(a, 'np.partition'), y, axis=axis)",
    jvp="permute_like(da, real_only(a, 'np.partition'), y, axis=axis)",
)


# Casting by calling a scalar type: to an integer or boolean type no gradient (piecewise
# constant), to a floating type the identity.
nondiff(
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_,
    np.longlong, np.ulonglong,
)
for _float in (np.float16, np.float32, np.float64, np.longdouble):
    linear(_float, "x", vjp="cast_grad(dy, x, np.float64)")

from . import linalg_rules, numeric_rules  # noqa: E402,F401  (numpy.linalg, numerical methods)
