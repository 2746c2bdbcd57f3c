"""Rules for the runtime helpers that generated code calls, so generated code can be derived again.

Every helper here is linear (or bilinear) in the cotangent it receives, so its rules are other
helpers of the same family: the adjoint of "spread a cotangent over x" is "gather it back", and
the tangent of a helper is the helper applied to the tangent. The set is closed: second-order code
only calls helpers that have rules themselves, which is what makes any order work.

The helpers' first parameter is named ``g`` in these signatures, not ``dy`` as in ``runtime/``:
``dy`` is the template name of the cotangent of the helper's own result. Generated code passes it
positionally, so the rename is invisible.
"""

from .. import runtime
from .registry import defrule, linear, lookup, nondiff, transposes

# `unbroadcast(g, x)` sums a contribution g of a broadcast result back down to x's shape, and
# `broadcast_like(t, y)` (forward mode) broadcasts the tangent of an operand up to y's shape: each
# is the adjoint of the other.
linear(runtime.unbroadcast, "g, x", vjp="broadcast_like(dy, g)")
# (`y` and `dy` name the helper's result and its cotangent in templates, hence `like` here.)
linear(runtime.broadcast_like, "t, like", vjp="unbroadcast(dy, t)")

# The adjoints of `sum` and `mean`; their own adjoints are `sum` and `mean` again.
linear(
    runtime.unreduce,
    "g, x, axis=None, keepdims=False, where=True",
    vjp="np.sum(dy, axis=axis, keepdims=keepdims, where=where)",
)
linear(
    runtime.mean_grad,
    "g, x, axis=None, keepdims=False, where=True",
    vjp="np.mean(dy, axis=axis, keepdims=keepdims, where=where)",
)

# Their forms in specialized code (optimize/uniform.py): a Python float where the arrays `values`
# share a shape. Code specialized to its arguments' kinds is never differentiated again (a
# transform of a derivative reads the unspecialized code), so these have no derivative.
_SPECIALIZED_ONLY = (
    "it appears only in code specialized to its arguments' kinds, which srcgrad does not "
    "differentiate again: differentiate the unspecialized derivative (`df.__wrapped__`)")
for _seed in (runtime.uniform_mean_grad, runtime.uniform_unreduce):
    defrule(_seed, "g, x, values, others=()", vjp={}, unsupported={"g": _SPECIALIZED_ONLY})
# So do the sums after a loop that share their joined arrays (optimize/steps.py).
defrule(runtime.matmul_vjp_right_steps_joined, "dys, xs, b, joins", vjp={},
        unsupported={"dys": _SPECIALIZED_ONLY, "xs": _SPECIALIZED_ONLY})
defrule(runtime.matmul_vjp_right_steps_known, "dys, xs, joins", vjp={},
        unsupported={"dys": _SPECIALIZED_ONLY, "xs": _SPECIALIZED_ONLY})
defrule(runtime.unbroadcast_steps_joined, "gs, x, joins", vjp={},
        unsupported={"gs": _SPECIALIZED_ONLY})
defrule(runtime.matmul_vjp_right_rows, "dys, xs, joins", vjp={},
        unsupported={"dys": _SPECIALIZED_ONLY, "xs": _SPECIALIZED_ONLY})
defrule(runtime.unbroadcast_steps_known, "gs, x, joins, stack", vjp={},
        unsupported={"gs": _SPECIALIZED_ONLY})
defrule(runtime.joined, "arrays, stack, joins", vjp={}, unsupported={"arrays": _SPECIALIZED_ONLY})
# And a fixed operand spread to a loop step's shape (optimize/spread.py), an operation written
# into its operand (optimize/reuse.py).
defrule(runtime.spread_rows, "b, a, held", vjp={}, unsupported={"b": _SPECIALIZED_ONLY})
defrule(runtime.written_into, "ufunc, x, b", vjp={},
        unsupported={"x": _SPECIALIZED_ONLY, "b": _SPECIALIZED_ONLY})

# The adjoint of `x[index]` scatters into zeros shaped like x; its adjoint gathers again (a dict
# or list cotangent may have nothing at index: zeros shaped like g, `elem`).
linear(runtime.getitem_grad, "g, x, index", vjp="elem(dy, index, g)")

# `add_at(acc, index, g)` is `acc` plus the adjoint of `acc[index]` applied to g, updated in place
# in a buffer the generated code owns. Its tangent must not update anything in place: a tangent may
# be shared, so it is built fresh.
defrule(
    runtime.add_at,
    "acc, index, g",
    vjp={"acc": "dy", "g": "dy[index]"},
    jvp={"acc": "dacc", "g": "getitem_grad(dg, acc, index)"},
    kind="linear",
)
# Tangents are never written in place, so the tangent of a copy needs no copy.
linear(runtime.copy_array, "a", vjp="dy", jvp="da")
# `copy_grad(g)` copies a gradient before it is returned; so is its tangent (hvp returns it).
linear(runtime.copy_grad, "g", vjp="dy")
# `as_like(g, x)` gives a gradient x's structure, filling zeros where none flowed; so does its
# tangent (the tangent of the cotangent of a dataclass is a dict by field until then).
# conj_like is its own adjoint: the conjugate for a complex x, the real part for a real one.
linear(runtime.as_like, "g, x", vjp="conj_like(dy, x)")
# `cast_like(g, x)`: g in the dtype of x's gradients; its tangent is the cast of the tangent
linear(runtime.cast_like, "g, x", vjp="conj_like(dy, x)")
linear(runtime.conj_like, "g, x", vjp="conj_like(dy, x)")
linear(runtime.real_only, "x, function", vjp={"x": "dy"})
linear(runtime.norm_input, "x, ord=None, axis=None, matrix=False", vjp={"x": "dy"})
linear(runtime.jacobian_argument, "x", vjp="dy")
nondiff(runtime.holomorphic_seed, runtime.real_sign, runtime.sign_grad)
# numpy.fft's helpers (runtime/fft.py): cropping and zero padding are each other's adjoints
linear(runtime.fit_axes, "g, sizes, axes", vjp={"g": "fit_axes(dy, axis_sizes(g, axes), axes)"})
nondiff(runtime.fft_axes, runtime.fft_sizes, runtime.axis_sizes, runtime.hermitian_weights)
linear(runtime.holomorphic_result, "g", vjp="np.conj(dy)", jvp="np.conj(dg)")
nondiff(runtime.float_dtype)
# np.interp's knots, np.select's masks, running extremes' sources, rollaxis's axis, the check
# that np.trapezoid's dx is a scalar: no gradient
nondiff(
    runtime.interp_index, runtime.interp_keep, runtime.interp_outside, runtime.poly_length,
    runtime.select_default_mask, runtime.rollaxis_destination, runtime.accumulate_source,
    runtime.scalar_spacing,
)

# The transposes of the products, `matmul_vjp_left(g, a, b)` (the adjoint of A -> A @ b applied
# to g) and the others: each is a product again (registry.transposes).
transposes(runtime.matmul_vjp_left, runtime.matmul_vjp_right, "{} @ {}")
transposes(runtime.dot_vjp_left, runtime.dot_vjp_right, "np.dot({}, {})")
transposes(runtime.inner_vjp_left, runtime.inner_vjp_right, "np.inner({}, {})")
transposes(
    runtime.tensordot_vjp_left, runtime.tensordot_vjp_right, "np.tensordot({}, {}, axes=axes)",
    extra=", axes=2",
)

# Seeds and checks pass their first argument through; the others only contribute a shape. (The
# output is not called `out`: for rules, `out=` means NumPy's output buffer.)
# (The check ran on the primal: the tangents pass through without a second one.)
# (A complex seed is conjugated: runtime/complex_values.py.)
linear(runtime.check_seed, "seed, output", vjp="conj_like(dy, seed)",
       jvp="conj_like(dseed, seed)")
linear(runtime.split_aux, "pair, name='the function'", vjp={"pair": "dy"}, jvp={"pair": "dpair"})
linear(runtime.check_tangent, 'tangent, x, name="x"', vjp="dy", jvp="dtangent")

# Constant results: a zero gradient and the unit seed of `grad` carry no gradient of their own.
nondiff(runtime.zeros_like, runtime.unit_seed, runtime.check_real)

# `max(xs)` / `min(xs)` of one iterable: the gradient goes to the element chosen, the first
# extreme one, as Python returns it.
defrule(
    runtime.max_of,
    "items",
    vjp="getitem_grad(dy, items, extreme_index(items, True))",
    jvp="pick_extreme(ditems, items, True)",
)
defrule(
    runtime.min_of,
    "items",
    vjp="getitem_grad(dy, items, extreme_index(items, False))",
    jvp="pick_extreme(ditems, items, False)",
)
linear(
    runtime.pick_extreme,
    "d, items, largest=True",
    vjp="getitem_grad(dy, d, extreme_index(items, largest))",
)
nondiff(runtime.extreme_index)

# A recursive call's value in reverse-mode code (runtime/recursion.py): its adjoint runs the
# callee's own adjoint sweep, once, and gives the gradients of the call's arguments by name.
# In forward mode a split call is started by SplitJvp (transform/forward.py), whose Split holds
# the tangent of its value and is its own tangent
defrule(runtime.recursion_value, "s", vjp={"s": "recursion_send(s, dy)"},
        jvp={"s": "recursion_tangent(ds)"})
linear(runtime.recursion_grad, "grads, name, x",
       vjp={"grads": "recursion_grad_back(dy, grads, name)"},
       jvp={"grads": "recursion_grad(dgrads, name, x)"})
# the callee's adjoint sweep, resumed in a generator: reverse mode never differentiates code with
# split calls again (pipeline.derive takes its plain version); forward mode sends the seed and
# its tangent together (recursion_send_pair, transform/forward.py), so the rule itself refuses
_RESUMED = "a split recursive call's adjoint runs in a generator, which is not differentiated"
defrule(runtime.recursion_send, "s, seed", unsupported={"s": _RESUMED, "seed": _RESUMED})
lookup(runtime.recursion_send).paired_in_forward = True
nondiff(runtime.recursion_no_tangent, runtime.split_yield)
lookup(runtime.split_yield).marks_yield = True
# forward mode's halves of a split call (code differentiated again is its plain version)
defrule(runtime.recursion_tangent, "s", unsupported={"s": _RESUMED})
defrule(runtime.recursion_sent_tangent, "s", unsupported={"s": _RESUMED})
defrule(runtime.recursion_send_pair, "s, seed, dseed",
        unsupported={"s": _RESUMED, "seed": _RESUMED, "dseed": _RESUMED})
# reverse mode over split calls (normalize/recursion.double, runtime/recursion.py): the value's
# cotangent finishes the callee's split derivative of its split derivative, the gradients'
# cotangents give the seed's; the split call's own rule (rules/derived.split_rule) takes the
# cotangents of its arguments from what finished it; forward mode over them never runs (it
# differentiates the plain version), and recursion_no_tangent says so if it ever did
defrule(runtime.split2_value, "s", vjp={"s": "split2_finish(s, dy)"},
        jvp={"s": "recursion_no_tangent(ds)"})
defrule(runtime.split2_send, "s, seed",
        vjp={"s": "split2_back(s, dy)", "seed": "split2_seed_back(s, dy)"},
        jvp={"s": "recursion_no_tangent(ds)", "seed": "recursion_no_tangent(dseed)"})
_AGAIN = "reverse mode over a split recursive call is not differentiated a third time this way"
for _helper in (runtime.split2_back, runtime.split2_seed_back, runtime.split2_finish,
                runtime.split2_final):
    defrule(_helper, "s, d", unsupported={"s": _AGAIN, "d": _AGAIN})
# the steps of a split derivative of order three (runtime.step_take / step_got) are called by
# their Step objects, whose rule is the step of the next order (rules/derived.step_rule): the
# helpers themselves never appear in code that is differentiated
_STEPPED = "a split derivative's step is differentiated through its Step, not this helper"
defrule(runtime.step_take, "s, j, x", unsupported={"s": _STEPPED, "x": _STEPPED})
defrule(runtime.step_got, "s, j, after=None", unsupported={"s": _STEPPED, "after": _STEPPED})
# forward mode's form of the steps (transform/forward.py): code with them is not differentiated
# again this way (its plain version is)
defrule(runtime.step_take_pair, "s, j, x, dx",
        unsupported={"s": _RESUMED, "x": _RESUMED, "dx": _RESUMED})
defrule(runtime.step_tangent, "s, j", unsupported={"s": _RESUMED})
# the cotangents of a split call's gradients by name, read back (third order and more)
linear(runtime.recursion_grad_back, "d, grads, name",
       vjp={"d": "recursion_grad(dy, name, d)"}, jvp={"d": "recursion_grad_back(dd, grads, name)"})

