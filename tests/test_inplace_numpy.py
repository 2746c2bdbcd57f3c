"""NumPy's in-place APIs are differentiated as the element writes they are (issue 13, item 1).

``out=``, ``ndarray.sort/partition/fill/put``, ``np.copyto/put/place/putmask/fill_diagonal/
put_along_axis`` and ``ufunc.at``: each case is checked against central differences in reverse
mode (with and without optimization) and forward mode, the caller's arguments are checked to be
left alone, and a selection against the numerical derivative of the gradient (hessian). What
cannot be modelled is refused at transform time, at the user's line.
"""

import copy
import linecache
import operator
import types

import numpy as np
import pytest
from gradcheck import assert_same, check_grad, numeric_grad

import srcgrad
from srcgrad import grad, hessian, jvp, value_and_grad

X3 = np.array([0.5, -1.0, 2.0])
X4 = np.array([0.3, -0.7, 1.1, 1.9])
M33 = np.array([[0.5, -1.0, 2.0], [0.3, 0.8, -0.4], [1.5, -0.2, 0.9]])
GLOBAL_BUFFER = np.zeros(3)


def copyto_square(x):
    y = np.zeros(3)
    np.copyto(y, x**2)
    return np.sum(y * x)


def copyto_where(x):
    y = x * 3.0
    np.copyto(y, x**2, where=x > 0)
    return np.sum(y * y)


def add_out_into_copy(x):
    a = x * 1.0  # not `x`: constant folding must not make the write reach the argument
    np.add(a, x, out=a)
    return np.sum(a * a)


def multiply_out_positional(x):
    a = x + 1.0
    np.multiply(a, x, a)
    return np.sum(a * x)


def exp_out(x):
    y = np.zeros(3)
    np.exp(x, out=y)
    return np.sum(y * y)


def exp_out_result_used(x):
    y = np.zeros(3)
    z = np.exp(x, out=y)
    return np.sum(z * y) + np.sum(np.sin(x, out=y) * x)


def exp_out_tuple(x):
    y = np.zeros(3)
    np.exp(x, out=(y,))
    return np.sum(y * x)


def cumsum_out_itself(x):
    y = x * 2.0
    np.cumsum(y, out=y)
    return np.sum(y * y)


def clip_out(x):
    y = x * 2.0
    np.clip(y, -1.0, 1.5, out=y)
    return np.sum(y * x)


def sum_out_method(m):
    s = np.zeros(3)
    m.sum(0, None, s)
    t = np.zeros(3)
    (m * m).sum(axis=1, out=t)
    return np.sum(s * t)


def sin_out_into_argument(x):
    np.sin(x, out=x)
    return np.sum(x * x)


def out_in_a_loop(x):
    y = x * 1.0
    for _ in range(3):
        np.multiply(y, x, out=y)
        np.add(y, 0.5, out=y)
    return np.sum(y)


def helper_with_out(v):
    w = np.zeros(np.shape(v))
    np.tanh(v, out=w)
    return w


def calls_helper_with_out(x):
    return np.sum(helper_with_out(x) * x)


def sort_method(x):
    y = x * 2.0
    y.sort()
    return np.sum(y * np.arange(3.0))


def sort_in_a_loop(x):
    y = x * 1.0
    total = 0.0
    for k in range(2):
        y = y * x + k
        y.sort()
        total = total + y[0] * y[2]
    return total


def partition_method(x):
    y = x**3
    y.partition(1)
    return y[0] * 2.0 + y[1] * y[2]


def fill_method(x):
    y = x * 2.0
    y.fill(x[0])
    return np.sum(y * x)


def put_method(x):
    y = x * 2.0
    y.put([0, 2], x[:2] ** 2)
    return np.sum(y * x)


def np_put_repeats_and_cycles(x):
    y = np.outer(x, x)
    np.put(y, [0, -1, 4, 0], x[1:] ** 2)  # index 0 twice: the last write lands; values cycle
    return np.sum(y * y)


def np_put_wrap(x):
    y = x * 1.5
    np.put(y, [4, -5], x[0] * x[1], mode="wrap")
    return np.sum(y * x)


def np_put_clip(x):
    y = x * 1.5
    np.put(y, [7, -2], x[2] ** 2, mode="clip")  # 7 -> the last element, -2 -> the first
    return np.sum(y * x)


def place_cycles(x):
    y = x * 2.0
    np.place(y, y > 0.5, x[:1] * 3.0)
    return np.sum(y * x)


def putmask_cycles(x):
    y = x * 2.0
    np.putmask(y, y > 0.5, x[:2] ** 2)
    return np.sum(y * x)


def fill_diagonal_vector(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, x)
    return np.sum(a * a)


def fill_diagonal_wrap(x):
    a = np.zeros((7, 3)) + x
    np.fill_diagonal(a, x[1:] * 2.0, wrap=True)
    return np.sum(a * a * x)


def put_along_axis_rows(x):
    y = np.outer(x, x)
    np.put_along_axis(y, np.array([[0], [2], [1]]), x[:, None] ** 3, axis=1)
    return np.sum(y * y)


def add_at_repeats(x):
    y = x * 2.0
    np.add.at(y, [0, 0, 2], x)
    return np.sum(y * y)


def subtract_at_scalar(x):
    y = x**2
    np.subtract.at(y, [1, 1], x[0])
    return np.sum(y * x)


def add_at_rows(m):
    y = m * 1.0
    np.add.at(y, ([0, 2, 0], slice(None)), m[1])
    return np.sum(y * y)


def multiply_at_repeats(x):
    y = x + 1.0
    np.multiply.at(y, [0, 2, 0], x)
    return np.sum(y * x)


def divide_at_repeats(x):
    y = x + 3.0
    np.divide.at(y, [1, 1, 2], x + 2.5)
    return np.sum(y * x)


def maximum_at_repeats(x):
    y = x * 0.5
    np.maximum.at(y, [0, 2, 0], x * np.array([1.3, 2.0, -0.5]))
    return np.sum(y * y)


def minimum_at(x):
    y = x * 1.0
    np.minimum.at(y, [2, 2], x[1:] - 0.3)
    return np.sum(y * x)


def reduce_out(m):
    y = np.zeros(3)
    np.add.reduce(m * m, axis=0, out=y)  # the result not used: y holds it
    return np.sum(y * m[0])


def reduce_out_positional(m):
    y = np.zeros(3)
    np.multiply.reduce(m, 0, None, y)
    return np.sum(y * m[1])


def accumulate_out_itself(x):
    y = x * 1.5
    np.add.accumulate(y, out=y)
    return np.sum(y * y * x)


CASES = [
    (reduce_out, M33),
    (reduce_out_positional, M33),
    (accumulate_out_itself, X3),
    (copyto_square, X3),
    (copyto_where, X3),
    (add_out_into_copy, X3),
    (multiply_out_positional, X3),
    (exp_out, X3),
    (exp_out_result_used, X3),
    (exp_out_tuple, X3),
    (cumsum_out_itself, X3),
    (clip_out, X3),
    (sum_out_method, M33),
    (sin_out_into_argument, X3),
    (out_in_a_loop, X3),
    (calls_helper_with_out, X3),
    (sort_method, X3),
    (sort_in_a_loop, X3),
    (partition_method, X3),
    (fill_method, X3),
    (put_method, X3),
    (np_put_repeats_and_cycles, X3),
    (np_put_wrap, X4),
    (np_put_clip, X4),
    (place_cycles, X4),
    (putmask_cycles, X4),
    (fill_diagonal_vector, X3),
    (fill_diagonal_wrap, X3),
    (put_along_axis_rows, X3),
    (add_at_repeats, X3),
    (subtract_at_scalar, X3),
    (add_at_rows, M33),
    (multiply_at_repeats, X3),
    (divide_at_repeats, X3),
    (maximum_at_repeats, X3),
    (minimum_at, X3),
]
IDS = [f.__name__ for f, _ in CASES]


def _directional(f, x, t, step=1e-6):
    return (f(x + step * t) - f(x - step * t)) / (2 * step)


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_reverse_mode(f, x):
    check_grad(f, (x.copy(),))
    before = x.copy()
    value, g = value_and_grad(f)(x)
    assert_same(before, x)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(f, (x.copy(),), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_reverse_mode_unoptimized(f, x):
    g = grad(f, optimize=False)(x.copy())
    np.testing.assert_allclose(g, numeric_grad(f, (x.copy(),), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f, x", CASES, ids=IDS)
def test_forward_mode(f, x):
    t = np.linspace(-0.7, 1.3, x.size).reshape(x.shape)
    before = copy.deepcopy((x, t))
    value, tangent = jvp(f)(x, t)
    assert_same(before, (x, t))
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    expected = _directional(lambda z: f(z.copy()), x, t)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-7)


SECOND_ORDER = [
    copyto_square, copyto_where, add_out_into_copy, exp_out, cumsum_out_itself, clip_out,
    out_in_a_loop, sort_method, fill_method, put_method, np_put_repeats_and_cycles,
    place_cycles, putmask_cycles, fill_diagonal_vector, put_along_axis_rows, add_at_repeats,
    subtract_at_scalar,
]


@pytest.mark.parametrize("f", SECOND_ORDER, ids=lambda f: f.__name__)
def test_hessian(f):
    x = dict((c.__name__, a) for c, a in CASES)[f.__name__]
    h = hessian(f)(x.copy())
    df = grad(f)
    step = 1e-5
    expected = np.stack([
        (df(x + step * e) - df(x - step * e)) / (2 * step) for e in np.eye(x.size)
    ], axis=-1)
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)


def test_the_argument_is_never_written():
    """The issue's example: `a = x * 1.0` folded to `a = x` made the write reach the caller."""
    x = X3.copy()
    grad(add_out_into_copy)(x)
    jvp(add_out_into_copy)(x, np.ones(3))
    grad(add_out_into_copy, optimize=False)(x)
    np.testing.assert_array_equal(x, X3)
    assert "a = x * 1.0" in srcgrad.source(jvp(add_out_into_copy))


def test_copyto_example_from_the_issue():
    def f(x):
        y = np.zeros(3)
        np.copyto(y, x**2)
        return np.sum(y)

    np.testing.assert_allclose(grad(f)(X3), 2 * X3)


# --- refused at transform time -----------------------------------------------------------------
def shuffles(x):
    y = x * 1.0
    np.random.shuffle(y)
    return np.sum(y * x)


def unknown_call_result_unused(x):
    y = x * 1.0
    unused = np.random.shuffle(y)
    return np.sum(y * x) + (unused is None)


def scale_in_place(v, s):
    v *= s


def helper_result_unused(x):  # inlined now: y sees the update (test_sharing.py)
    y = x * 1.0
    scale_in_place(y, 3.0)
    return np.sum(y * y)


def unknown_method(x):
    y = x * 1.0
    y.resize((3,))
    return np.sum(y * x)


def unknown_method_result_used(x):
    y = x * 1.0
    r = y.resize((3,))
    return np.sum(y * x) + (r is None)


def power_at(x):
    y = x * 1.0
    np.power.at(y, [0], 2.0)
    return np.sum(y)


def out_with_where(x):
    y = np.zeros(3)
    np.exp(x, out=y, where=x > 0)
    return np.sum(y)


def out_into_a_global(x):
    np.exp(x, out=GLOBAL_BUFFER)
    return np.sum(GLOBAL_BUFFER * x)


def two_outputs(x):
    a = np.zeros(3)
    b = np.zeros(3)
    np.divmod(x, 1.0, out=(a, b))
    return np.sum(a * x)


def sort_a_view(x):
    y = x * 1.0
    v = y[1:]
    v.sort()
    return np.sum(y * x)


def out_into_an_item(x):
    y = np.zeros((2, 3))
    np.copyto(y[1], x ** 2)
    return np.sum(y * y)


def out_into_a_field(x):
    s = types.SimpleNamespace(w=x * 1.0)
    np.exp(s.w, out=s.w)
    return np.sum(s.w)


def sorts_a_list(x):  # works now (test_containers_mutation.py)
    hs = [x[0] * 1.0, x[1] * 2.0, x[2]]
    hs.sort()
    return hs[0] * 3.0 + hs[1] * hs[2]


def recursion_for_effect(x, n=2):
    if n == 0:
        return np.sum(x)
    recursion_for_effect(x, n - 1)
    return np.sum(x * x)


REFUSED = [
    (recursion_for_effect, "a call of `recursion_for_effect` whose result is not used"),
    (shuffles, r"`np.random.shuffle\(y\)` changes `y` in place; write `y = np.random.permutatio"),
    (unknown_call_result_unused, r"`np.random.shuffle\(y\)` changes `y` in place"),
    (unknown_method, r"the method `.resize\(\)` of `y`"),
    (unknown_method_result_used, r"the method `.resize\(\)`"),
    (power_at, r"`np.power.at` \(srcgrad differentiates the `.at` of add"),
    (out_with_where, "`where=` together with `out=`"),
    (out_into_a_global, "`out=` into `GLOBAL_BUFFER`, which is not an array of the function"),
    (two_outputs, "several outputs"),
    (sort_a_view, "writing into `v`"),
    # the names the normal form gives `y[1]` and `s.w` (`y_item`, `s_w_2`) are not the user's
    (out_into_an_item, r"writing into `y\[1\]`, .* write into `y\[1\]` by an assignment"),
    (out_into_a_field, r"writing into `s.w`, .*\(`s.w = ...`\)"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_at_transform_time(f, message):
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=message) as info:
        grad(f)
    text = str(info.value)
    assert "test_inplace_numpy.py" in text and "^" in text


# --- a call that changes a value the function does not own ---------------------------------------
# A global or a closure variable is read as one value wherever the function reads it (the
# derivative reads it again, optimizations merge and hoist its reads): a call that may change it in
# place between two reads was run, and the derivative used the unchanged value (np.random.shuffle
# of a global array: the value 13.5 instead of 7.5; a global list's `reverse()`: 1.5 for 2.5).
GLOBAL_ARRAY = np.array([3.0, 1.0, 2.0])
GLOBAL_LIST = [1.0, 2.0]
GLOBAL_DICT = {"a": 1.0}
GLOBAL_RNG = np.random.default_rng(0)
GLOBAL_LOG = []
SORTER = operator.methodcaller("sort")
GETS_SORT = operator.attrgetter("sort")


FOREIGN_CHANGES = {
    "array_fill": ("GLOBAL_ARRAY.fill(2.0)", r"`GLOBAL_ARRAY.fill\(...\)`, which may change"),
    "array_sort": ("GLOBAL_ARRAY.sort()", r"`GLOBAL_ARRAY.sort\(...\)`"),
    "array_byteswap": ("GLOBAL_ARRAY.byteswap(inplace=True)", "GLOBAL_ARRAY.byteswap"),
    "array_cumsum_out": ("GLOBAL_ARRAY.cumsum(out=GLOBAL_ARRAY)", "GLOBAL_ARRAY.cumsum"),
    "np_random_shuffle": ("np.random.shuffle(GLOBAL_ARRAY)", "changes `GLOBAL_ARRAY` in place"),
    "rng_shuffle": ("GLOBAL_RNG.shuffle(GLOBAL_ARRAY)", "changes `GLOBAL_ARRAY` in place"),
    "class_shuffle": ("np.random.Generator.shuffle(GLOBAL_RNG, GLOBAL_ARRAY)",
                      "changes `GLOBAL_ARRAY` in place"),
    "list_reverse": ("GLOBAL_LIST.reverse()", r"`GLOBAL_LIST.reverse\(...\)`, which may change"),
    "list_pop": ("GLOBAL_LIST.pop()", "GLOBAL_LIST.pop"),
    "list_insert": ("GLOBAL_LIST.insert(0, 5.0)", "GLOBAL_LIST.insert"),
    "list_sort": ("GLOBAL_LIST.sort(reverse=True)", "GLOBAL_LIST.sort"),
    "list_clear": ("GLOBAL_LIST.clear()", "GLOBAL_LIST.clear"),
    "dict_update": ("GLOBAL_DICT.update(a=5.0)", "GLOBAL_DICT.update"),
    "methodcaller": ("SORTER(GLOBAL_ARRAY)", "`SORTER` given `GLOBAL_ARRAY`"),
    # (the call of the call's result is inlined since 6554890..cb421a5: refused as a call whose
    # result is not used, by srcgrad's name for the method it gives)
    "attrgetter": ("GETS_SORT(GLOBAL_ARRAY)()", r"`GETS_SORT\(...\)` given `GLOBAL_ARRAY`|"
                   r"a call of `GETS_SORT_GLOBAL_ARRAY` whose result is not used"),
    "exec": ("exec('GLOBAL_ARRAY[0] = 7.0')", r"`exec` \(srcgrad cannot see what the code"),
    "eval": ("eval('GLOBAL_ARRAY.fill(7.0)')", "`eval`"),
}


@pytest.mark.parametrize("name", FOREIGN_CHANGES)
def test_a_call_changing_a_global_read_elsewhere_is_refused(name):
    statement, message = FOREIGN_CHANGES[name]
    source = (
        f"def written_here(x):\n"
        f"    a = np.sum(GLOBAL_ARRAY * x) + x[0] * GLOBAL_LIST[0] + x[1] * GLOBAL_DICT['a']\n"
        f"    {statement}\n"
        f"    b = np.sum(GLOBAL_ARRAY * x) + x[0] * GLOBAL_LIST[0] + x[1] * GLOBAL_DICT['a']\n"
        f"    return a + 2.0 * b\n"
        f"def change():\n"
        f"    {statement}\n"
        f"def in_a_helper(x):\n"
        f"    a = np.sum(GLOBAL_ARRAY * x) * GLOBAL_LIST[0] * GLOBAL_DICT['a']\n"
        f"    change()\n"
        f"    return a * np.sum(GLOBAL_ARRAY * x) * GLOBAL_LIST[0] * GLOBAL_DICT['a']\n"
    )
    filename = f"<changes a global: {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(globals())
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    for f in (namespace["written_here"], namespace["in_a_helper"]):
        with pytest.raises(srcgrad.UnsupportedSyntaxError, match=message) as info:
            value_and_grad(f)(X3.copy())
        assert "^" in str(info.value)


GLOBAL_SETTINGS = types.SimpleNamespace(scale=1.0)


def sets_an_attribute_of_a_global(x):
    a = x[0] * GLOBAL_SETTINGS.scale
    setattr(GLOBAL_SETTINGS, "scale", 3.0)  # noqa: B010 (the gradient was 9 for Python's 7)
    return a + 2.0 * x[0] * GLOBAL_SETTINGS.scale


def test_setattr_of_a_global_read_before_is_refused():
    # (a setattr with a constant name is the attribute write since 6554890: refused as one)
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match=r"`setattr\(...\)`, which may chan|"
                       r"writing into `GLOBAL_SETTINGS`, which may share memory"):
        grad(sets_an_attribute_of_a_global)


def logs_into_a_global(x):
    GLOBAL_ARRAY.sort()  # changed before any read: every read sees the sorted array, as in Python
    loss = np.sum(x * x * GLOBAL_ARRAY)
    GLOBAL_LOG.append(x.shape)  # changed, read nowhere else in the function
    return loss * 2.0


def test_a_global_changed_before_it_is_read_works():
    GLOBAL_LOG.clear()
    GLOBAL_ARRAY[:] = [3.0, 1.0, 2.0]
    value, g = value_and_grad(logs_into_a_global)(X3.copy())
    np.testing.assert_allclose(g, 4.0 * X3 * np.array([1.0, 2.0, 3.0]))
    assert GLOBAL_LOG[-1] == (3,)
    check_grad(logs_into_a_global, (X3.copy(),))


def sorts_a_global_in_a_loop(x):
    s = 0.0
    for _ in range(2):
        GLOBAL_LIST.reverse()  # the next iteration's reads come after it, and before the next
        s = s + x[0] * GLOBAL_LIST[0]
    return s


def test_a_global_changed_in_a_loop_that_reads_it_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="or in the same loop"):
        grad(sorts_a_global_in_a_loop)


def test_a_global_read_but_not_changed_works():
    def f(x):
        a = np.sum(GLOBAL_ARRAY * x) + x[0] * GLOBAL_LIST[0]
        GLOBAL_LIST.count(1.0)
        GLOBAL_ARRAY.sum()
        return a * np.sum(GLOBAL_ARRAY * x) + GLOBAL_LIST.index(2.0)

    check_grad(f, (X3.copy(),))


def test_a_global_given_to_a_scipy_special_function_works():
    """SciPy's special functions are ufuncs whose ``__module__`` is None: ``gammaln(A)`` of a
    global ``A`` read elsewhere was refused as a call that may change ``A`` (also in the code
    srcgrad generates for ``gammaincc(A, x)``, differentiated again)."""
    import scipy.special

    def f(x):
        return np.sum(GLOBAL_ARRAY * x) + np.sum(scipy.special.gammaln(GLOBAL_ARRAY) * x ** 2)

    GLOBAL_ARRAY[:] = [3.0, 1.0, 2.0]
    np.testing.assert_allclose(
        grad(f)(X3.copy()), GLOBAL_ARRAY + 2 * scipy.special.gammaln(GLOBAL_ARRAY) * X3)
    check_grad(f, (X3.copy(),))


def shuffles_an_index(x):
    order = np.arange(3)
    np.random.seed(0)
    np.random.shuffle(order)
    return np.sum(x[order] * x**2)


def shuffles_a_read_index(x):
    order = np.arange(3)
    y = x[order] * x
    np.random.seed(1)
    np.random.shuffle(order)
    return np.sum(y * x[order])


def permutes_an_index(x):
    order = np.arange(3)
    np.random.seed(0)
    order = np.random.permutation(order)  # draws the same numbers, differentiates
    return np.sum(x[order] * x**2)


@pytest.mark.parametrize("f", [shuffles_an_index, shuffles_a_read_index])
def test_a_shuffle_is_refused_even_of_values_without_gradient(f):
    # an index read before the shuffle and after it is two values, which the derivative read as
    # one: shuffles_a_read_index got [19, 12, 11] instead of [15, 12, 7]
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="permutation"):
        srcgrad.grad(f)(X3.copy())


def test_the_spelling_the_shuffle_refusal_names_differentiates():
    check_grad(permutes_an_index, (X3.copy(),))
    np.random.seed(0)
    a = np.arange(3)
    np.random.shuffle(a)
    np.random.seed(0)
    np.testing.assert_array_equal(np.random.permutation(np.arange(3)), a)


def _sorts_argument(x):
    x.sort()
    return np.sum(np.tanh(x) * np.array([1.0, 2.0, 3.0, 4.0]))


def test_hvp_of_sorting_an_argument_in_place_is_not_permuted():
    # found by the random programs: the tangent of the pre-sort values aliased the argument's
    # tangent, which the sort then wrote into, so the hvp came out permuted
    x = np.array([0.3, -0.2, 0.9, 0.1])
    gradient = srcgrad.grad(_sorts_argument)
    for v in np.eye(4):
        h = 1e-5
        expected = (gradient(x + h * v) - gradient(x - h * v)) / (2 * h)
        got = srcgrad.hvp(_sorts_argument)(x.copy(), v)
        np.testing.assert_allclose(got, expected, atol=1e-6)
