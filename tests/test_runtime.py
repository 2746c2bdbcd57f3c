"""The runtime helpers that generated code calls, checked directly against their definitions.

Most helpers are checked through the transform (every rule row, at generated shapes); these
tests pin the cases the mutation runs (``mutmut``, docs/development.md) found unchecked: each
assertion here failed for at least one surviving mutant of the helper.
"""

import itertools
import types

import numpy as np
import pytest

import srcgrad
from srcgrad import runtime
from srcgrad.runtime import higher_order, writes

rng = np.random.default_rng(0)


def _reference_unbroadcast(g, shape):
    """Sum g over the axes broadcasting added or stretched: the adjoint of np.broadcast_to."""
    g = np.asarray(g, dtype=float)
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


SHAPES = [(), (1,), (3,), (1, 1), (2, 1), (1, 3), (2, 3), (1, 1, 1), (2, 1, 3), (1, 2, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("lead", [(), (4,), (4, 1), (2, 4)], ids=str)
def test_unbroadcast_is_the_adjoint_of_broadcasting(shape, lead):
    full = lead + tuple(n if n != 1 else 2 for n in shape)
    for target in {shape, tuple(1 for _ in shape)}:
        g = rng.normal(size=np.broadcast_shapes(full, target))
        x = rng.normal(size=target)
        got = runtime.unbroadcast(g, x)
        want = _reference_unbroadcast(g, target)
        assert np.shape(got) == target
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_unbroadcast_to_a_number_and_of_a_number():
    g = rng.normal(size=(2, 3))
    assert runtime.unbroadcast(g, 1.5) == pytest.approx(g.sum())
    assert runtime.unbroadcast(2.5, 1.5) == 2.5
    np.testing.assert_allclose(runtime.unbroadcast(g, np.float64(1.0)), g.sum())


def test_unbroadcast_of_a_smaller_cotangent_broadcasts_it():
    # a cotangent that was itself broadcast (a scalar seed against an array operand)
    x = rng.normal(size=(2, 3))
    np.testing.assert_array_equal(runtime.unbroadcast(np.float64(2.0), x), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(
        runtime.unbroadcast(np.ones((1, 3)), x), np.ones((2, 3))
    )


@pytest.mark.parametrize(
    "sa, sb",
    [
        ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((3,), (2, 3, 4)),
        ((2, 3, 4), (4,)), ((2, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((3, 4), (2, 4, 5)),
        ((2, 3, 4), (4, 5)), ((1, 3, 4), (2, 4, 5)),
    ],
    ids=str,
)
def test_matmul_adjoints_are_the_transposed_products(sa, sb):
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    dy = rng.normal(size=np.shape(a @ b))
    ga, gb = runtime.matmul_vjp_left(dy, a, b), runtime.matmul_vjp_right(dy, a, b)
    assert ga.shape == a.shape and gb.shape == b.shape
    # <dy, da @ b + a @ db> == <ga, da> + <gb, db> for every da, db
    for _ in range(2):
        da, db = rng.normal(size=sa), rng.normal(size=sb)
        lhs = np.sum(dy * (da @ b + a @ db))
        np.testing.assert_allclose(np.sum(ga * da) + np.sum(gb * db), lhs, rtol=1e-12)


@pytest.mark.parametrize(
    "shape, axis, keepdims",
    [(s, a, k) for s, a, k in itertools.product(
        [(3,), (2, 3), (2, 1, 3)], [None, 0, -1, (0, -1)], [False, True]
    ) if not (isinstance(a, tuple) and len(s) < 2)],
    ids=str,
)
def test_unreduce_and_mean_grad_are_the_adjoints_of_sum_and_mean(shape, axis, keepdims):
    x = rng.normal(size=shape)
    dy = rng.normal(size=np.shape(np.sum(x, axis=axis, keepdims=keepdims)))
    dx = rng.normal(size=shape)
    got = runtime.unreduce(dy, x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == shape
    np.testing.assert_allclose(
        np.sum(got * dx), np.sum(dy * np.sum(dx, axis=axis, keepdims=keepdims)), rtol=1e-12
    )
    got = runtime.mean_grad(dy, x, axis=axis, keepdims=keepdims)
    assert np.shape(got) == shape
    np.testing.assert_allclose(
        np.sum(got * dx), np.sum(dy * np.mean(dx, axis=axis, keepdims=keepdims)), rtol=1e-12
    )


def test_unbroadcast_to_a_list_operand():
    # `x * [a, b]`: the list operand's gradient is summed to its length like an array's
    np.testing.assert_array_equal(runtime.unbroadcast(np.ones((3, 2)), [1.0, 2.0]), [3.0, 3.0])


def test_unreduce_of_numbers_and_integers():
    # a Python number's gradient stays a Python number; integer cotangents become float ones
    out = runtime.unreduce(1.5, 2.0)
    assert type(out) is float and out == 1.5
    for dy, x, axis in [(np.int64(2), np.ones(3), None), (np.array([2, 3]), np.ones((2, 3)), 1),
                        (np.array(2), np.ones(1), None)]:
        got = runtime.unreduce(dy, x, axis=axis)
        assert got.dtype == np.float64 and got.shape == x.shape
        np.testing.assert_array_equal(got, np.broadcast_to(np.expand_dims(dy, -1) if axis else dy,
                                                           x.shape))


def test_unbroadcast_of_a_cotangent_smaller_in_some_axes():
    # g broadcast itself (a seed): (3, 1) against an operand (1, 4) is summed over the 3 rows
    got = runtime.unbroadcast(np.ones((3, 1)), np.ones((1, 4)))
    np.testing.assert_array_equal(got, np.full((1, 4), 3.0))


@pytest.mark.parametrize("fn", [runtime.unreduce, runtime.mean_grad])
def test_spread_of_a_non_contiguous_cotangent_is_a_read_only_view(fn):
    dy = rng.normal(size=(3, 2)).T  # not C-contiguous: the general branch of the view
    x = np.ones((2, 3, 4))
    got = fn(dy, x, axis=2)
    scale = 1.0 if fn is runtime.unreduce else 1 / 4
    np.testing.assert_allclose(got, np.broadcast_to(dy[..., None] * scale, x.shape))
    assert not got.flags.writeable
    for shape, axis in [((2, 3), 0), ((4,), None), ((2, 1, 3), (0, 2))]:
        x = np.ones(shape)
        dy = np.asarray(np.sum(rng.normal(size=shape), axis=axis))
        got = fn(dy, x, axis=axis)
        assert got.shape == shape and not got.flags.writeable


def test_getitem_grad_adds_repeated_indices_and_fills_a_stepped_list_slice():
    g = runtime.getitem_grad(np.array([1.0, 2.0, 3.0]), np.zeros(4), np.array([0, 0, 2]))
    assert g.tolist() == [3.0, 0.0, 3.0, 0.0]
    g = runtime.getitem_grad(np.array([1.0, 2.0]), np.zeros((3, 1)), ([1, 1], [0, 0]))
    assert g.tolist() == [[0.0], [3.0], [0.0]]
    g = runtime.getitem_grad([7.0, 8.0], [1.0] * 5, slice(1, 4, 2))
    assert list(g) == [None, 7.0, None, 8.0, None]


def test_chooser_grad_of_a_vector_splits_ties():
    g = runtime.chooser_grad(1.0, np.array([1.0, 3.0, 2.0, 3.0]), 3.0)
    assert g.tolist() == [0.0, 0.5, 0.0, 0.5]


def test_prod_grad_of_an_integer_array_is_computed_in_floats():
    # the product of the other factors overflows int64 (2**70)
    g = runtime.prod_grad(1.0, np.array([2**40, 2**30, 3]))
    assert g.tolist() == [3.0 * 2**30, 3.0 * 2**40, 2.0**70]
    # and its second derivative (a Hessian column: products of three of five factors, 2**66)
    t = higher_order.prod_grad_tangent(1.0, np.array([2**22] * 5), np.eye(5)[0])
    assert t.tolist() == [0.0] + [2.0**66] * 4


def test_eigh_vjp_of_a_4d_batch_is_the_vjp_of_each_matrix():
    b = rng.normal(size=(2, 3, 4, 4))
    a = b + np.swapaxes(b, -1, -2)
    dw = rng.normal(size=(2, 3, 4))
    g = runtime.eigh_vjp((dw, None), np.linalg.eigh(a))
    for i, j in np.ndindex(2, 3):
        one = runtime.eigh_vjp((dw[i, j], None), np.linalg.eigh(a[i, j]))
        np.testing.assert_allclose(g[i, j], one, rtol=1e-10, atol=1e-12)


def test_helpers_only_second_order_or_rare_calls_reach():
    # (mutation survivors: each check fails on a mutant no other fast test ran)
    # the second derivative of the product of one number (itself) is zero
    assert higher_order.prod_grad_tangent(1.0, 2.5, 0.5) == 0.0
    # the 0-norm (a count) is piecewise constant: no second derivative
    x = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, 4.0]])
    nrm = np.linalg.norm(x, 0, axis=1)
    assert not np.any(higher_order.norm_grad_dx(1.0, x, nrm, ord=0, axis=1))
    assert not np.any(higher_order.norm_grad_dnorm(1.0, x, nrm, ord=0, axis=1))
    # the matrix norm of a stack of matrices: each matrix on its own
    xs = rng.normal(size=(2, 3, 4))
    g = np.array([0.7, -1.3])
    got = higher_order.norm_grad_dx(g, xs, np.linalg.matrix_norm(xs), kind="matrix")
    for k in range(2):
        one = higher_order.norm_grad_dx(g[k], xs[k], np.linalg.matrix_norm(xs[k]), kind="matrix")
        np.testing.assert_allclose(got[k], one, rtol=1e-12)
    # list.count and list.reverse
    assert runtime.list_count([1.0, 2.0, 1.0], 1.0) == 2
    assert list(runtime.reverse_grad([1.0, None, 3.0])) == [3.0, None, 1.0]
    # the positions np.fill_diagonal writes in a cube, and np.put_along_axis with axis=None
    cube = writes.diagonal_index(np.zeros((3, 3, 3)))
    assert [list(i) for i in cube] == [[0, 1, 2]] * 3
    flat = writes.along_axis_index(np.zeros((2, 3)), [0, 4, -1], None)
    assert [list(i) for i in flat] == [[0, 1, 1], [0, 1, 2]]
    # a tangent list appended to as a new list (the functional form of append_tangent)
    items = [np.ones(2)]
    out = runtime.appended_tangent(items, None, np.ones(3))
    assert len(items) == 1 and len(out) == 2 and out[0] is items[0]
    assert isinstance(out[1], np.ndarray) and out[1].shape == (3,) and not np.any(out[1])
    assert runtime.appended_tangent(None, 2.0, 1.0) == [2.0]
    # the adjoint of stacking rows: one cotangent per row
    rows = runtime.unstack_rows(np.arange(6.0).reshape(2, 3), np.zeros(2), np.zeros(3))
    assert [list(r) for r in rows] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    # a dict cotangent plus an object's cotangent given as the object (a zero, a seed)
    total = runtime.DictCotangents({"w": 1.0}) + types.SimpleNamespace(w=2.0, b=3.0)
    assert total == {"w": 3.0, "b": 3.0}


def cast_to_complex64(x):
    return np.sum(np.real(x.astype(np.complex64) * (1 + 2j)))


def test_the_gradient_of_a_real_array_cast_to_complex_is_its_real_part_without_a_warning():
    """cast_grad of a complex cotangent for a real x is its real part in x's dtype, and NumPy's
    ComplexWarning (casting complex to real) is not raised on the way."""
    import warnings

    from srcgrad import grad

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = runtime.cast_grad(np.array([1.0 + 2.0j, -3.0j]), np.array([0.5, 1.5]), np.complex64)
        assert g.dtype == np.float64
        np.testing.assert_array_equal(g, [1.0, 0.0])
        np.testing.assert_array_equal(grad(cast_to_complex64)(np.array([0.5, 1.5])), [1.0, 1.0])


def test_a_numpy_scalar_output_seeds_a_numpy_scalar_of_its_dtype():
    """At a pole the sweep divides by zero as the primal did: inf or nan with a warning, never
    ZeroDivisionError from Python float arithmetic (the seed 1.0 of a np.float64 output)."""
    for out in (np.float64(2.0), np.float32(2.0), np.int64(2)):
        seed = runtime.unit_seed(out)
        assert type(seed) is (np.float32 if out.dtype == np.float32 else np.float64)
        assert seed == 1.0
    assert type(runtime.unit_seed(2.0)) is float and type(runtime.unit_seed(2)) is float


def _pole(x):
    return np.sin(x) / (x - 1.0)


def test_a_pole_gives_a_non_finite_gradient_not_an_exception():
    """``np.sin(x) / (x - 1.0)`` at the Python float 1.0 returns inf; its gradient is not finite."""
    with np.errstate(all="ignore"):
        assert not np.isfinite(srcgrad.grad(_pole)(1.0))
        assert srcgrad.grad(_pole)(3.0) == pytest.approx(
            (np.cos(3.0) * 2.0 - np.sin(3.0)) / 4.0, rel=1e-12
        )


def _second_differences(f, x, h=1e-4):
    """The Hessian of ``f`` at ``x`` by central differences of its values."""
    n = len(x)
    e = np.eye(n) * h
    return np.array([[(f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j])
                       + f(x - e[i] - e[j])) / (4 * h * h) for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("ord_", [-1, 0.5, -np.inf])
def test_the_hessian_of_a_vector_norm_is_its_second_differences(ord_):
    # the -1-norm 1 / sum(1 / |x|) is smooth: its Hessian was 0, as for the piecewise linear
    # 1-, inf- and -inf-norms (and the matrix -1-norm, which is)
    x = np.array([0.3, -1.2, 2.0, 0.7])

    def f(x):
        return np.linalg.norm(x, ord_)

    expected = _second_differences(f, x)
    np.testing.assert_allclose(srcgrad.hessian(f)(x), expected, rtol=1e-5, atol=1e-6)


def test_the_hessian_of_row_norms_is_its_second_differences():
    # higher_order._norm_case: the axis given (1) is the one reduced, also for an ord other
    # than 2 (a mutant reduced axis 0, as for axis=None)
    def f(x):
        return np.sum(np.linalg.norm(np.reshape(x, (2, 3)), 3, axis=1))

    x = np.array([0.3, -1.2, 2.0, 0.7, 1.1, -0.4])
    np.testing.assert_allclose(srcgrad.hessian(f)(x), _second_differences(f, x), rtol=1e-5,
                               atol=1e-6)


def test_check_not_holding_through_a_container_whose_item_updates_are_followed():
    """``check_not_holding(r, L, ..., followed=True)``: the sharing pass passes an update of an
    item of ``L`` in place on to every holder of it (a checkpointed loop's ``L`` holding its
    ``z``), so only a value holding ``L`` itself, or a list or dict ``L`` holds, changes with a
    write into ``L``'s slots; without it, any array both hold is refused."""
    check = runtime.check_not_holding
    z = np.ones(3)
    L = [z, z]
    check(z, L, "z", "L", True)
    check((z, [z]), L, "t", "L", True)
    with pytest.raises(srcgrad.SrcgradError, match="`z` refers to the array in `L`"):
        check(z, L, "z", "L")
    for holder in (L, [L], (1.0, L), {"a": L}):
        with pytest.raises(srcgrad.SrcgradError, match="`M` refers to the array in `L`"):
            check(holder, L, "M", "L", True)
    inner = [z]
    with pytest.raises(srcgrad.SrcgradError):
        check({"a": inner}, [inner], "d", "L", True)  # a list both hold
    y = np.ones(4)
    with pytest.raises(srcgrad.SrcgradError):
        check([y[1:]], y, "v", "y", True)  # an array written into: its memory
    check([y.copy()], y, "v", "y", True)
