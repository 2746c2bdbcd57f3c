"""srcgrad.specialize: derivatives generated for the kinds of their arguments (srcgrad/kinds.py,
optimize/scalars.py): the same numbers, dtypes and shapes as the unspecialized derivative, less
code, a dispatch on the kinds of each call."""

import pickle
import warnings

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import numeric_grad

import srcgrad


def swing(c, L, theta0, omega0):
    theta = theta0
    omega = omega0
    for _ in range(20):
        alpha = -(9.81 / L) * np.sin(theta) - c * omega
        theta = theta + 0.05 * omega
        omega = omega + 0.05 * alpha
    return theta * theta


def chain(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def mixed(x, w):
    return np.sum(np.cos(x) * w)


def same(got, want):
    """Equal numbers of the same dtype and shape (a gradient or a tuple of them)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert np.shape(got) == np.shape(want)
    assert np.result_type(got) == np.result_type(want)
    assert np.array_equal(got, want, equal_nan=True), (got, want)


SCALARS = (0.3, 1.2, 0.4, -0.2)


# `generic.__wrapped__`: the unspecialized code (what a transform returns runs the code
# specialized to the kinds of its arguments from its call number kinds.AFTER on, kinds.py)


def test_scalar_loop_runs_on_python_floats_with_the_same_numbers():
    generic = srcgrad.grad(swing, wrt=("c", "L"))
    df = srcgrad.specialize(generic)
    got = df(*SCALARS)
    same(got, generic.__wrapped__(*SCALARS))
    assert all(type(g) is float for g in got)  # the API's promise: float for a float
    for i, g in enumerate(got):
        assert np.isclose(g, numeric_grad(swing, SCALARS, i), rtol=1e-6, atol=1e-8)
    text = srcgrad.source(df)
    assert "math.sin(theta)" in text and "math.cos(theta)" in text
    for gone in ("unbroadcast", "zeros_like", "unit_seed", "theta_times_theta"):
        assert gone not in text
    assert_golden("specialized_swing.py", text)


def test_a_transform_specializes_a_signature_at_its_call_number_after():
    df = srcgrad.grad(swing, wrt=("c", "L"))
    want = df.__wrapped__(*SCALARS)
    for _ in range(srcgrad.kinds.AFTER - 1):  # the unspecialized code runs
        same(df(*SCALARS), want)
    assert "math.sin" not in srcgrad.source(df) and not srcgrad.source(df).startswith("#")
    got = df(*SCALARS)  # generated for four Python floats, and run
    same(got, want)
    assert all(type(g) is float for g in got)
    text = srcgrad.source(df)
    header = "# specialized to the kinds of its arguments: c: float, L: float, theta0: float, "
    assert text.startswith(header + "omega0: float\n") and "math.sin(theta)" in text
    # another signature counts its own calls; source() shows the code specialized last
    mixed_args = (0.3, np.float64(1.2), 0.4, -0.2)
    for _ in range(srcgrad.kinds.AFTER - 1):
        same(df(*mixed_args), df.__wrapped__(*mixed_args))
    assert srcgrad.source(df) == text
    same(df(*mixed_args), df.__wrapped__(*mixed_args))
    assert srcgrad.source(df).startswith(header.replace("L: float", "L: float64 scalar"))
    same(pickle.loads(pickle.dumps(df))(*SCALARS), want)


def test_array_loop_needs_no_unbroadcast_and_saves_no_restored_sum():
    x = np.random.default_rng(0).uniform(-1.5, 1.5, 8)
    generic = srcgrad.value_and_grad(chain)
    df = srcgrad.specialize(generic)
    same(df(x), generic.__wrapped__(x))
    np.testing.assert_allclose(df(x)[1], numeric_grad(chain, (x,), 0), rtol=1e-6, atol=1e-8)
    text = srcgrad.source(df)
    assert "unbroadcast" not in text and "s_old" not in text
    assert "unbroadcast" in srcgrad.source(generic.__wrapped__)  # the unspecialized code
    # the elements read in the loop come from a list of Python floats, read once
    assert "x_list = x.tolist()" in text and "x_list[i]" in text
    x32 = x.astype(np.float32)  # a float32 vector stays an array: its elements are float32
    same(df(x32), generic.__wrapped__(x32))
    assert "tolist" not in srcgrad.source(df)


def carried(x, a):
    s = 0.0
    for i in range(len(x)):
        s = s * (a * x[i]) + x[i]
    return s


def for_numba(f, mode, *args):
    """What backend="numba" compiles for ``args``' kinds: Python code too."""
    from srcgrad import transforms
    from srcgrad.analysis.argkinds import kind_of
    from srcgrad.context import Options
    from srcgrad.derived import unwrap

    kinds = tuple(sorted((p, kind_of(v)) for p, v in zip(f.__code__.co_varnames, args)))
    return unwrap(transforms.derived(f, mode, "x", Options(kinds=kinds, for_numba=True)))


def test_code_for_numba_saves_numbers_in_typed_arrays_with_the_same_numbers():
    x = np.random.default_rng(1).uniform(-1.5, 1.5, 6)
    df = for_numba(carried, "grad", x, 0.7)
    same(df(x, 0.7), srcgrad.grad(carried)(x, 0.7))
    text = srcgrad.source(df)
    for made in ("loop_saved_0 = np.empty(loop_saved_cap, np.float64)",
                 "loop_saved_0[loop_saved_top] = s_old", "dx = np.zeros(x.shape)",
                 "s_old = loop_saved_0[loop_saved_top]", "return dx"):
        assert made in text
    assert "append" not in text and "as_like" not in text


def test_code_for_numba_recomputes_saved_numbers_and_drops_a_loop_computing_nothing_read():
    # Rosenbrock's saves are arithmetic of x[i], x[i + 1]: recomputed in the reversed loop,
    # nothing is saved, and the forward loop, whose sum grad does not return, goes
    x = np.random.default_rng(1).uniform(-1.5, 1.5, 6)
    df = for_numba(chain, "grad", x)
    same(df(x), srcgrad.grad(chain)(x))
    text = srcgrad.source(df)
    assert "minus = x[i + 1] - x[i] ** 2" in text and "x_item_2 = x[i]" in text
    assert "loop_saved" not in text and text.count("    for i in") == 1 and "s = 0.0" not in text
    both = for_numba(chain, "value_and_grad", x)  # the sum is returned: its loop stays
    same(both(x), srcgrad.value_and_grad(chain)(x))
    assert srcgrad.source(both).count("    for i in") == 2 and "loop_saved" not in text


def scaled_twice(a, x):
    return np.sum(x) + 0.3 * (0.7 * np.tanh(a))


def test_a_float32_number_output_keeps_its_seed():
    # a float32 output known to be a number (from a float32 scalar's kind) got the seed 1.0, a
    # Python float, where the unspecialized code seeds np.float32(1.0): 1.0 * 0.3 * 0.7 was
    # then rounded to float32 once, not twice (0.054060966 for 0.05406097; random programs)
    x = np.linspace(0.1, 0.5, 5).astype(np.float32)
    generic = srcgrad.grad(scaled_twice)
    for a in (np.float32(0.1308082), np.float32(-1.3)):
        same(srcgrad.specialize(generic)(a, x), generic.__wrapped__(a, x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtypes_and_kinds_dispatch_to_their_own_code(dtype):
    generic = srcgrad.grad(mixed, wrt=("x", "w"))
    df = srcgrad.specialize(generic, signatures=2)
    cases = [
        (np.linspace(0.1, 1.0, 4).astype(dtype), np.ones(4, dtype)),
        (dtype(0.5), np.float64(2.0)),
        (0.5, 2.0),
        (np.array(0.5, dtype), 3),
    ]
    for args in cases:
        same(df(*args), generic.__wrapped__(*args))
        assert len(df.made) <= 2  # the least recently used signature goes
    assert "math.cos" not in srcgrad.source(df)  # an int w: its product stays NumPy's
    df(0.5, 2.0)
    assert ("math.cos" in srcgrad.source(df)) == (len(df.made) == 2)
    # later calls of these kinds skip the dispatch: their kinds are tested in generated code
    from srcgrad.analysis.argkinds import signature_kind

    assert df._fast is df._fasts[(signature_kind(0.5), signature_kind(2.0))]
    assert len(df._fasts) <= 2  # (no test kept for a signature dropped)
    same(df(0.5, 2.0), generic.__wrapped__(0.5, 2.0))
    same(df(dtype(0.5), np.float64(2.0)), generic.__wrapped__(dtype(0.5), np.float64(2.0)))


def stepped_pair(x, y):
    for _ in range(3):
        x, y = x + 0.1 * np.sin(y), y - 0.1 * x
    return (x, y)


def stepped_pair_read(x, y):
    t = (np.sin(x), y)
    return t[0] ** 0.5  # (a negative sin: NumPy's nan, a Python float's complex number)


def test_a_tuple_of_numbers_only_returned_stays_on_python_floats_read_otherwise_not():
    # the jvp of a function returning a tuple binds it (`tup = (x, y)`) and returns it: its
    # numbers may be Python floats; a tuple whose elements are read again keeps NumPy
    generic = srcgrad.jvp(stepped_pair, wrt=0)
    df = srcgrad.specialize(generic)
    same(df(0.3, 1.2, 1.0), generic.__wrapped__(0.3, 1.2, 1.0))
    assert "math.sin(y)" in srcgrad.source(df) and "tup = (x, y)" in srcgrad.source(df)
    generic = srcgrad.grad(stepped_pair_read)
    df = srcgrad.specialize(generic)
    same(df(0.3, 1.2), generic.__wrapped__(0.3, 1.2))
    assert "math.sin" not in srcgrad.source(df)


def test_a_float32_operand_keeps_numpy_on_numbers():
    # math.cos would make a Python float, which leaves float32 in float32 (NumPy's float64
    # scalar does not): the specialized code keeps np.cos
    def f(x, y):
        return np.cos(x) * y

    generic = srcgrad.grad(f)
    df = srcgrad.specialize(generic)
    y = np.float32(1.5)
    same(df(0.25, y), generic.__wrapped__(0.25, y))
    assert "np.cos" in srcgrad.source(df)


def test_where_python_raises_on_a_float_numpy_result_comes_back():
    def f(x):
        return np.sqrt(x) + np.cos(x) / np.sin(x - 1.0)

    generic = srcgrad.grad(f)
    df = srcgrad.specialize(generic)
    df(2.0)
    assert "math.sqrt(x)" in srcgrad.source(df) and "math.sin(" in srcgrad.source(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # math.sqrt(-1.0) and a Python float / 0.0 raise; NumPy's nan and inf come back
        for x in (-1.0, 1.0):
            same(df(x), generic.__wrapped__(x))
        assert np.isnan(df(-1.0)) and np.isinf(df(1.0))


def test_keywords_transforms_and_pickling():
    generic = srcgrad.grad(swing, wrt=("c", "L"))
    df = srcgrad.specialize(generic)
    same(df(0.3, 1.2, theta0=0.4, omega0=-0.2), generic.__wrapped__(*SCALARS))
    second = srcgrad.grad(lambda c: df(c, 1.2, 0.4, -0.2)[0])
    assert np.isclose(second(0.3), (df(0.3 + 1e-6, *SCALARS[1:])[0]
                                    - df(0.3 - 1e-6, *SCALARS[1:])[0]) / 2e-6, rtol=1e-5)
    back = pickle.loads(pickle.dumps(df))
    same(back(*SCALARS), df(*SCALARS))
    assert srcgrad.specialize(df) is df


def test_only_numbers_have_kinds():
    from srcgrad.analysis.argkinds import kind_of

    assert kind_of(0.5) == ("float",) and kind_of(2) == ("int",)
    assert kind_of(np.ones((2, 3), np.float32)) == ("array", 2, "<f4")
    assert kind_of(np.float64(1.0)) == ("scalar", "<f8")
    for value in (np.array([np.zeros(2), 1.0], dtype=object), np.bool_(True), "a", [1.0],
                  np.datetime64("2026-12-02"), np.ma.masked_array([1.0])):
        assert kind_of(value) is None


def test_forward_mode_and_refusals():
    generic = srcgrad.jvp(swing, wrt="L")
    df = srcgrad.specialize(generic)
    same(df(*SCALARS, 1.0), generic.__wrapped__(*SCALARS, 1.0))
    assert "math.sin" in srcgrad.source(df)
    with pytest.raises(srcgrad.SrcgradError, match="specialize"):
        srcgrad.specialize(swing)
    with pytest.raises(srcgrad.SrcgradError, match="signatures"):
        srcgrad.specialize(generic, signatures=0)


def _weighted_square(x):
    return np.sum(x * x * np.array([[1.0, 2.0], [3.0, 4.0]]))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("make", [
    np.matrix,  # `x * x` is a matrix product: the gradient was the elementwise one
    lambda a: np.ma.masked_array(a, mask=[[0, 1], [0, 0]]),
], ids=["matrix", "masked"])
def test_an_argument_whose_operators_mean_something_else_is_refused(make):
    x = make(np.array([[1.0, 2.0], [3.0, 0.5]]))
    for derivative in (srcgrad.grad(_weighted_square),
                       srcgrad.grad(_weighted_square, optimize=False)):
        with pytest.raises(srcgrad.SrcgradError, match="srcgrad differentiates NumPy arrays"):
            derivative(x)
    # the same values as a plain array: differentiated
    np.testing.assert_allclose(srcgrad.grad(_weighted_square)(np.asarray(x)),
                               2 * np.asarray(x) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def recurrent(Wx, Wh, xs, h0):
    h = h0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h * h)


def matrix_vector(X, w):
    return np.sum(np.tanh(X @ w))


def vector_matrix(v, M):
    return np.sum(np.tanh(v @ M))


def _checked_products(f, args, present, absent):
    """The specialized derivative of f wrt every argument: the unspecialized one's numbers bit
    for bit, central differences, and the product helpers it calls or inlines."""
    wrt = f.__code__.co_varnames[:f.__code__.co_argcount]
    generic = srcgrad.grad(f, wrt=wrt)
    df = srcgrad.specialize(generic)
    got = df(*args)
    same(got, generic.__wrapped__(*args))
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
    text = srcgrad.source(df)
    for piece in present:
        assert piece in text, (piece, text)
    for piece in absent:
        assert piece not in text, (piece, text)


def test_products_of_float64_matrices_are_inlined_in_specialized_code():
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3)),
            rng.standard_normal((4, 5, 2)), rng.standard_normal((5, 3)))
    # h @ Wh of matrices in the loop (xs[t]: a float64 matrix): dh @ Wh.T; h0's, after the loop
    _checked_products(recurrent, args, ["@ Wh.T"], [])
    # X @ w: w's gradient X.T @ dy; X's stays the helper's outer product (w is a vector)
    X, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    _checked_products(matrix_vector, (X, w), ["X.T @ ", "matmul_vjp_left("],
                      ["matmul_vjp_right("])
    # v @ M of a vector v: both helpers stay (an outer product and a matrix-vector product)
    v, M = rng.standard_normal(4), rng.standard_normal((4, 3))
    _checked_products(vector_matrix, (v, M), ["matmul_vjp_left(", "matmul_vjp_right("], [".T @"])
    # float32 matrices: the helpers stay
    _checked_products(matrix_vector, (X.astype(np.float32), w.astype(np.float32)),
                      ["matmul_vjp_left(", "matmul_vjp_right("], [".T @"])


def read_whole(Wx, xs):
    s = 0.0
    for t in range(len(xs)):
        p = xs[t] @ Wx
        s = s + np.sin(np.sum(p))
    return s


def shifted_steps(Wx, xs):
    s = 0.0
    for t in range(len(xs) - 1):
        W = Wx * (t + 1.0)
        q = xs[t + 1] @ Wx  # not the step's own row
        r = xs[t] @ W  # not a fixed matrix
        s = s + np.sum(q * q) + np.sum(r * r)
    return s


def test_a_loops_products_of_its_input_and_a_matrix_are_made_once_before_it():
    rng = np.random.default_rng(4)
    Wx, Wh = rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3))
    xs, h0 = rng.standard_normal((4, 5, 2)), rng.standard_normal((5, 3))
    _checked_products(recurrent, (Wx, Wh, xs, h0),
                      ["xs_matmul_Wx = xs @ Wx if len_xs > 0 else None", "= xs_matmul_Wx[t]"], [])
    # no step: no product made (xs's 7 columns do not fit Wx's 2 rows), as without specializing
    generic = srcgrad.grad(recurrent, wrt=("Wx", "Wh", "h0"))
    df = srcgrad.specialize(generic)
    empty = np.zeros((0, 5, 7))
    same(df(Wx, Wh, empty, h0), generic.__wrapped__(Wx, Wh, empty, h0))
    assert "xs @ Wx" in srcgrad.source(df)
    # rows of a matrix: a vector times a matrix each step (NumPy's product of the whole matrix
    # may round otherwise); a product read whole (np.sum(p)): left in the loop
    _checked_products(recurrent, (Wx, Wh, xs[:, 0], h0[0]), [], ["xs @ Wx"])
    _checked_products(read_whole, (Wx, xs), ["xs_item @ Wx"], ["xs @ Wx"])
    _checked_products(shifted_steps, (Wx, xs), [], [" @ Wx if", " @ W if"])


def log_softmax_loss(x, w):
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(z), axis=1, keepdims=True)) * w)


def kept_square(a, w):  # (a * a has a's shape: the spread is over a, met by a)
    return np.sum(np.sqrt(np.sum(a * a, axis=1, keepdims=True)) * w)


def kept_sum(a, w):
    return np.sum(np.sum(a, axis=1, keepdims=True) * w)


def dropped_axis(a, w):
    return np.sum(np.log(np.sum(np.exp(a), axis=1)) * w)


def kept_reductions(a, w):
    m = np.mean(a, axis=1, keepdims=True) + np.amin(a, axis=0, keepdims=True)
    p = np.prod(a - m, axis=1, keepdims=True) + np.max(a, axis=1, keepdims=True)
    return np.sum(p * w)


def test_a_reduction_keeping_its_axes_of_a_float64_array_is_the_arrays_own_method():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((4, 1))
    methods = [".mean(axis=1, keepdims=True)", ".min(axis=0, keepdims=True)",
               ".prod(axis=1, keepdims=True)", ".max(axis=1, keepdims=True)"]
    functions = ["mean_a = np.mean(", "amin_a = np.amin(", "prod_a_minus_m = np.prod(",
                 "max_a = np.max("]  # (not the comments quoting the source)
    _checked_products(kept_reductions, (x, w), methods, functions)
    # float32 arrays: NumPy's functions stay
    df = srcgrad.specialize(srcgrad.grad(kept_reductions, wrt=("a", "w")))
    df(x.astype(np.float32), w.astype(np.float32))
    text = srcgrad.source(df)
    assert all(f in text for f in functions) and not any(m in text for m in methods), text


def test_a_spread_met_only_by_what_was_summed_is_the_cotangent_itself():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((4, 1))
    # d(exp_z) = unreduce(g, exp_z, axis=1, keepdims=True), read only in `* exp_z`: g itself
    _checked_products(log_softmax_loss, (x, w), ["dexp_z = dsum_exp_z\n"], ["= unreduce("])
    _checked_products(kept_square, (x, w), ["da_times_a = dsum_a_times_a\n"], ["= unreduce("])
    # the spread returned (not met by a): kept; without keepdims: kept
    _checked_products(kept_sum, (x, w), ["unreduce(dsum_a, a, axis=1, keepdims=True)"], [])
    _checked_products(dropped_axis, (x, w[:, 0]), ["unreduce(dsum_exp_a, exp_a, axis=1)"], [])
