"""Python language coverage: calls, containers, comprehensions, subscripts, methods, builtins.

Every function below is checked against central differences in float64 (tests/gradcheck.py),
including the type of each gradient: a list argument gets a list back, a tuple a tuple, a dict a
dict. The generated source of three of them (a helper call, a list argument, an indexed write in a
loop) is compared with golden files (tests/golden/lang_*.py; SRCGRAD_REGEN_GOLDEN=1 rewrites
them). The last section checks that each unsupported construct stops the transform with an
UnsupportedSyntaxError at its file and line; constructs already covered by tests/test_errors.py
are not repeated.
"""

# ruff: noqa: B007  (the functions under test keep the loop variables users write)

import copy
import os
import types

import lang_helpers
import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import assert_same, check_grad, numeric_grad
from lang_helpers import affine, moments, shifted_square, softplus
from test_errors import where_is

import srcgrad
from srcgrad import SrcgradError, UnsupportedSyntaxError, grad, source

rng = np.random.default_rng(4)

V3 = rng.normal(size=3)
V4 = rng.normal(size=4)
V5 = rng.normal(size=5)
V6 = rng.normal(size=6)
W4 = rng.normal(size=4)
POS4 = rng.uniform(0.5, 2.0, size=4)
A23 = rng.normal(size=(2, 3))
A33 = rng.normal(size=(3, 3))
A34 = rng.normal(size=(3, 4))
B34 = rng.normal(size=(3, 4))
A234 = rng.normal(size=(2, 3, 4))
M14 = rng.normal(size=(1, 4))
SCALE = np.array([0.5, -1.0, 2.0, 0.25])
# distinct magnitudes so max/min/clip are away from ties and kinks
SPREAD6 = np.array([0.3, -1.7, 2.2, -0.4, 1.1, -2.9])


# --- calls to user functions -------------------------------------------------------------------


def scaled(x, a=2.0, b=0.5):
    return a * x + b * x * x


def call_keywords_defaults(x):
    return scaled(x) + scaled(x, b=1.5) + scaled(a=-1.0, x=x) + scaled(x, 0.1, b=3.0)


def call_other_module(W, x):
    h = affine(W, x, b=0.5)
    m, v = moments(h)
    return np.sum(softplus(h)) + m * v + np.sum(shifted_square(x))


def call_module_attribute(x):
    return np.sum(lang_helpers.softplus(x) * lang_helpers.shifted_square(x, shift=-1.0))


def make_closure(c):
    scale = c * 2.0

    def closed(x):
        return np.sum(np.sin(x * scale) * c)

    return closed


closure_over_array = make_closure(SCALE)


square = lambda t: t * t  # a module-level lambda


def call_lambdas(x):
    cube = lambda t, k=3.0: t * t * t / k
    return np.sum(cube(x) + cube(x, k=1.0))


def call_nested_def(x, w):
    def layer(v, bias=0.1):
        return np.tanh(v * w + bias)

    h = layer(x)
    return np.sum(layer(h, bias=-0.2) * h)


def helper_reassigns(x, y):
    x = x * y  # the callee rebinds its parameters: the caller's x and y must not change
    y = x + 1.0
    return x * y


def helper_branches(x):
    if x > 0.0:
        return x * x
    return -x


def helper_loops(x, n):
    s = 0.0
    for i in range(n):
        s = s + x**i
    return s


def call_helpers_with_statements(x, y):
    a = helper_reassigns(x, y)
    return a + x * y + helper_branches(x) + helper_branches(-2.0 * x) * helper_loops(y, 3)


def scale_kw_only(x, *, k=2.0):
    return x * k


def outer_helper(x):
    return inner_helper(x, 3.0) + inner_helper(x, k=1.0) + scale_kw_only(x, k=-0.5)


def inner_helper(x, k=2.0):
    return np.sin(x) * k + scale_kw_only(x)


def call_chain(x):
    return np.sum(outer_helper(x) ** 2)


def recursive_layers(h, W, n):
    if n == 0:
        return h
    return np.tanh(W @ recursive_layers(h, W, n - 1))


def call_recursion_arrays(x, W):
    return np.sum(recursive_layers(x, W, 3) ** 2)


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def call_recursion(x):
    return power(x, 5) + 2.0 * power(x, 2)


def ping(x, n):
    if n == 0:
        return x
    return pong(x * 1.1, n - 1)


def pong(x, n):
    if n == 0:
        return x
    return np.sin(ping(x, n - 1)) + x


def call_mutual_recursion(x):
    return ping(x, 5)


# --- containers ------------------------------------------------------------------------------


def list_argument(params, x):
    W, b = params[0], params[1]
    return np.sum(np.tanh(W @ x + b) ** 2)


def tuple_argument(pair, x):
    a, b = pair
    return np.sum(a * x) * b + np.sum(np.sin(a))


def dict_argument(p, x):
    return np.sum((p["w"] * x + p["b"]) ** 2) + p["s"] * np.sum(p["w"])


def nested_containers(p, x):
    return np.sum(p["layers"][0] * x) * p["layers"][1] + p["b"] * np.sum(x)


def loops_over_list_argument(ws, xs):
    s = 0.0
    for i, w in enumerate(ws):
        s = s + (i + 1) * np.sum(w * xs[i])
    for w, x in zip(ws, xs):
        s = s + np.sum(np.sin(w) * x)
    for i in range(len(ws)):
        s = s + np.sum(ws[i] ** 2)
    return s


def list_element_writes(x):
    ys = [x, x * 2.0, x]
    ys[2] = np.sin(x)
    for i in range(2):
        ys[i] = ys[i] * (i + 2.0) + ys[i + 1]
    return np.sum(ys[0] * ys[1] * ys[-1])


def stack_list_argument(xs):
    return np.sum(np.stack(xs) ** 2) + np.sum(np.concatenate([xs[0], xs[1] * 2.0]))


def stats_tuple(x):
    return np.mean(x), np.std(x), x - np.mean(x)


def stats_list(x, w):
    return [x * w, np.sum(x), np.sum(w * w)]


def returned_containers(x, w):
    m, s, centered = stats_tuple(x)
    parts = stats_list(x, w)
    return m * s + np.sum(centered**2 * parts[0]) + parts[1] * parts[-1]


def append_then_stack(x, W):
    rows = []
    h = x
    for i in range(3):
        h = np.tanh(W @ h)
        rows.append(h * (i + 1))
    H = np.stack(rows)
    return np.sum(H * H)


def append_then_sum(x):
    terms = []
    for k in range(4):
        terms.append(np.sin(x * (k + 1)) / (k + 1))
    return np.sum(sum(terms))


def list_comprehension(x):
    powers = [x**k for k in range(1, 4)]
    return np.sum(np.stack(powers) * 0.5) + np.sum(powers[1])


def nested_comprehension(A):
    pairs = [A[i, j] * A[j, i] for i in range(3) for j in range(3) if i <= j]
    return sum(pairs)


def sum_of_generator(x, w):
    return sum(np.sum(np.cos(x * w[k]) * w) for k in range(4) if k != 2)


def comprehension_filters_active(x, t):
    return sum(v * v for v in x if v > t) + sum(a * b for a, b in zip(x, x[::-1]))


def comprehension_enumerate_to_array(x):
    return np.sum(np.array([v * i for i, v in enumerate(x)]) ** 2)


def builtin_sums(x):
    return sum(x * x) + sum([x[0], x[1]], 10.0 * x[2])


def comprehension_over_list(xs, w):
    return sum(np.sum(v * w) ** 2 for v in xs)


# --- subscript reads ---------------------------------------------------------------------------


def index_ints(x, A):
    return x[0] * x[-1] + A[1, 2] * A[-1, -1] + np.sum(A[0]) * x[2]


def index_slices(x, A):
    return np.sum(x[1:4] * x[:3]) + np.sum(x[::2]) + np.sum(A[1:, ::-1] ** 2)


def index_tuple_of_slices(A):
    return np.sum(A[:2, 1:3] * A[1:, :2]) + np.sum(A[:, 0])


def index_none_ellipsis(x, T):
    outer = x[:, None] * x[None, :]
    return np.sum(outer) + np.sum(T[..., 1] ** 2) + np.sum(T[0, ...] * T[1, ...])


def index_boolean_mask(x):
    return np.sum(x[x > 0] ** 2) + np.sum(np.sin(x[np.array([True, False] * 3)]))


def index_integer_array_repeats(x, w):
    # x[0] is used three times and x[3] twice: their gradients must accumulate
    picked = x[[0, 0, 1, 3, 0, 3]]
    return np.sum(picked * w) + np.sum(x[np.array([2, 2])] ** 2)


# --- subscript writes --------------------------------------------------------------------------


def fill_in_loop(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] * x[(i + 1) % 4]
    return np.sum(y * y)


def fill_and_overwrite(x):
    y = np.zeros(3)
    y[0] = x[0]
    y[1] = x[1] * 2.0
    y[0] = y[1] * x[2]  # overwrites y[0]: its old value must not leak into the gradient
    y[2] = y[0] + y[1]
    return np.sum(y**2)


def slice_write(x, w):
    y = np.zeros(6)
    y[1:4] = np.tanh(x * w[:3])
    y[4:] = w[2:] * y[2]
    return np.sum(y * np.arange(6.0))


def index_add_assign(x):
    y = np.zeros(3)
    for i in range(6):
        y[i % 3] += x[i] * x[(i + 2) % 6]
    y[0] += np.sum(y)
    return np.sum(np.sin(y))


def overwrite_in_loop(x):
    y = np.zeros(2)
    y[0] = 1.0
    for i in range(4):
        y[0] = y[0] * x[0] + x[1]  # reads and overwrites the same element every iteration
        y[1] = y[1] + y[0] * x[1]
    return y[0] + y[1]


def negative_index_and_mask_writes(x):
    y = np.ones(3)
    y[-1] = x[0] * x[1]
    y[-2] += x[2]
    y[0:-1] *= x[:2]
    z = x * 1.0
    z[x < 0] = 0.0
    return np.sum(y * y) + np.sum(z * z)


def integer_array_write(x):
    y = np.zeros(4)
    y[[0, 2]] = x[:2]
    y[np.array([3])] += x[2]
    return np.sum(y * np.arange(1.0, 5.0))


def write_into_argument(x, v):
    x[0] = v * 3.0
    x[2] += v
    return np.sum(x**2) * v


# --- augmented assignment ----------------------------------------------------------------------


def augmented(x, s):
    t = s
    t += 1.0
    t *= s
    t -= 0.5 * s
    t /= 2.0
    y = x * 1.0
    y += x * t
    y *= np.sin(x)
    y -= t
    y **= 2
    y[1] *= t
    y[2] -= x[0]
    y[0] /= 3.0
    return np.sum(y) + t


# --- array methods and attributes --------------------------------------------------------------


def methods_reductions(A):
    return A.sum() + A.mean() * A.max() - A.min() + A.sum(0).prod() + A.std() * A.var()


def methods_reductions_axis(A):
    return np.sum(A.sum(axis=1) * A.max(axis=0)[:3]) + np.sum(A.mean(1) ** 2) + A.min(axis=0)[1]


def methods_shape(A, x):
    r = A.reshape((4, 3)).dot(x[:3])
    f = A.ravel() * A.flatten()[::-1]
    t = A.transpose() @ A.T[0]
    return np.sum(r**2) + np.sum(f) + np.sum(t) + np.sum(A.copy())


def methods_squeeze_trace_clip(M, S):
    return np.sum(M.squeeze() ** 2) + S.trace() * S.dot(S).trace() + np.sum(S.clip(-0.5, 0.5))


def methods_keywords(A):
    return (
        A.std(ddof=1)
        + A.var(axis=0, ddof=1).sum()
        + np.sum(A / A.max(axis=1, keepdims=True))
        + A.prod(axis=0).sum()
        + A[:, :3].trace(1)
        + A[:, :3].trace(offset=-1)
    )


def attributes(A):
    n = A.size
    z = np.zeros(A.shape, dtype=A.dtype)
    z = z + A * A.ndim
    return np.sum(z) / n + A.shape[0] * A[0, 0]


def attributes_in_control_flow(A):
    r, c = A.shape
    s = 0.0
    for i in range(r):
        s = s + A[i, c - 1] * A[i, 0]
    if A.dtype == np.float64:
        s = s * 2.0
    return s / A.ndim


# --- builtins ----------------------------------------------------------------------------------


def builtin_numeric(x, y):
    return sum([x, y, x * y]) + abs(x - y) + min(x, y * 2.0) * max(x * x, y) + float(x) * y


def builtin_iteration(x, w):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * len(w)
    for i, v in enumerate(w):
        s += v * x[i] * i
    for a, b in zip(x, w):
        s += np.sin(a) * b
    return s


def builtin_range_steps(x):
    s = 0.0
    for i in range(3, -1, -2):
        s = s + x[i] * (i + 1)
    for i in range(1, 4):
        s = s * 0.5 + abs(x[i]) * float(i)
    return s


def builtin_isinstance(x, k):
    if isinstance(k, int):
        y = x * k
    else:
        y = x / k
    return np.sum(y**2)


def builtin_print(x):
    y = np.sum(x**2)
    print("loss:", y)
    return y * 2.0


# --- the cases -------------------------------------------------------------------------------


def xfail(reason):
    return {"marks": pytest.mark.xfail(strict=True, reason=reason)}


def case(f, args, wrt=0, **marks):
    return pytest.param(f, args, wrt, id=f.__name__, **marks)


def _inner_scaled(a, b, scale=1.0):
    return np.sum(a * b) * scale


def _forwarding(*args, **kwargs):
    return _inner_scaled(*args, **kwargs)


def forwards_args_and_kwargs(x, y):
    return _forwarding(x, y, scale=3.0)


def _dict_of(x):
    return {"a": x * 2.0, "b": np.sin(x)}


def dict_literal_from_callee(x):
    d = _dict_of(x)
    return np.sum(d["a"] * d["b"])


def _total(*parts):
    s = 0.0
    for p in parts:
        s = s + np.sum(p ** 2)
    return s


def varargs_parameter(x, y):
    return _total(x, y * 2.0, x * y)


CASES = [
    case(call_keywords_defaults, (0.7,)),
    case(call_other_module, (A34, V4), (0, 1)),
    case(call_module_attribute, (V4,)),
    case(closure_over_array, (V4,)),
    case(call_lambdas, (V4,)),
    case(call_nested_def, (V4, W4), (0, 1)),
    case(call_helpers_with_statements, (0.7, 1.3), (0, 1)),
    case(call_helpers_with_statements, (-0.4, 0.8), (0, 1)),
    case(call_chain, (V3,)),
    case(call_recursion, (1.3,)),
    case(call_recursion_arrays, (V3, A33 * 0.5), (0, 1)),
    case(call_mutual_recursion, (0.4,)),
    case(returned_containers, (V4, W4), (0, 1)),
    case(append_then_stack, (V3, A33), (0, 1)),
    case(append_then_sum, (V4,)),
    case(list_element_writes, (V3,)),
    case(list_comprehension, (V4,)),
    case(nested_comprehension, (A33,)),
    case(sum_of_generator, (V4, W4), (0, 1)),
    case(comprehension_filters_active, (SPREAD6, 0.0)),
    case(comprehension_enumerate_to_array, (V4,)),
    case(builtin_sums, (V3,)),
    case(index_ints, (V4, A34), (0, 1)),
    case(index_slices, (V5, A34), (0, 1)),
    case(index_tuple_of_slices, (A33,)),
    case(index_none_ellipsis, (V3, A234), (0, 1)),
    case(index_boolean_mask, (SPREAD6,)),
    case(index_integer_array_repeats, (V4, V6), (0, 1)),
    case(fill_in_loop, (V4,)),
    case(fill_and_overwrite, (V3,)),
    case(slice_write, (V3, V4), (0, 1)),
    case(index_add_assign, (V6,)),
    case(overwrite_in_loop, (np.array([0.7, -0.4]),)),
    case(negative_index_and_mask_writes, (np.array([0.7, -0.4, 1.2]),)),
    case(integer_array_write, (V3,)),
    case(augmented, (V4, 0.6), (0, 1)),
    case(methods_reductions, (A34,)),
    case(methods_reductions_axis, (B34,)),
    case(methods_shape, (A34, V4), (0, 1)),
    case(methods_squeeze_trace_clip, (M14, A33 * 0.4), (0, 1)),
    case(methods_keywords, (A34,)),
    case(attributes, (A34,)),
    case(attributes_in_control_flow, (A34,)),
    case(builtin_numeric, (0.7, -1.2), (0, 1)),
    case(builtin_numeric, (1.4, 0.3), (0, 1)),
    case(builtin_iteration, (V4, W4), (0, 1)),
    case(builtin_range_steps, (SPREAD6,)),
    case(builtin_isinstance, (V4, 3), 0),
    case(builtin_isinstance, (V4, 2.5), 0),
    case(forwards_args_and_kwargs, (V4, W4), (0, 1)),
    case(dict_literal_from_callee, (V4,)),
    case(varargs_parameter, (V4, W4), (0, 1)),
]


@pytest.mark.parametrize("f, args, wrt", CASES)
def test_against_central_differences(f, args, wrt):
    check_grad(f, args, wrt)


# --- container arguments: the gradient has the argument's structure -----------------------------


def numeric_leaves(f, args, i):
    """Central differences of f w.r.t. every leaf of the container args[i], same structure."""
    container = args[i]
    keys = range(len(container)) if not isinstance(container, dict) else list(container)

    def with_leaf(k, value):
        c = dict(container) if isinstance(container, dict) else list(container)
        c[k] = value
        if isinstance(container, tuple):
            c = tuple(c)
        return args[:i] + (c,) + args[i + 1 :]

    grads = {
        k: numeric_grad(lambda leaf, k=k: f(*with_leaf(k, leaf)), (container[k],), 0) for k in keys
    }
    if isinstance(container, dict):
        return grads
    return type(container)(grads[k] for k in keys)


CONTAINER_CASES = [
    pytest.param(list_argument, ([A33, V3], V3), list, id="list"),
    pytest.param(tuple_argument, ((V4, 1.7), W4), tuple, id="tuple"),
    pytest.param(dict_argument, ({"w": V4, "b": 0.3, "s": -1.1}, W4), dict, id="dict"),
    pytest.param(comprehension_over_list, ([V3, 2.0 * V3, -V3], V3), list, id="list-in-genexpr"),
    pytest.param(loops_over_list_argument, ([V3, W4[:3]], [A33[0], A33[1]]), list, id="list-loops"),
    pytest.param(stack_list_argument, ([V3, -V3],), list, id="list-stacked"),
]


@pytest.mark.parametrize("f, args, kind", CONTAINER_CASES)
def test_container_argument_gradient_has_its_structure(f, args, kind):
    before = copy.deepcopy(args)
    g = grad(f)(*args)
    assert_same(before, args)
    assert type(g) is kind
    expected = numeric_leaves(f, args, 0)
    keys = list(expected) if kind is dict else range(len(expected))
    assert len(g) == len(expected)
    if kind is dict:
        assert g.keys() == expected.keys()
    for k in keys:
        leaf = args[0][k]
        if isinstance(leaf, np.ndarray):
            assert isinstance(g[k], np.ndarray) and g[k].shape == leaf.shape
        else:
            assert isinstance(g[k], (float, np.floating))
        np.testing.assert_allclose(g[k], expected[k], rtol=1e-6, atol=1e-8, err_msg=f"[{k!r}]")


def test_container_argument_with_other_wrt():
    dp, dx = grad(dict_argument, wrt=("p", "x"))({"w": V4, "b": 0.3, "s": -1.1}, W4)
    assert type(dp) is dict
    expected = numeric_grad(dict_argument, ({"w": V4, "b": 0.3, "s": -1.1}, W4), 1)
    np.testing.assert_allclose(dx, expected, rtol=1e-6, atol=1e-8)


def test_nested_container_argument():
    p = {"layers": [A33[0], 1.5], "b": 0.5}
    g = grad(nested_containers)(p, V3)
    assert type(g) is dict and type(g["layers"]) is list
    np.testing.assert_allclose(g["layers"][0], 1.5 * V3)
    np.testing.assert_allclose(g["layers"][1], np.sum(A33[0] * V3))
    np.testing.assert_allclose(g["b"], np.sum(V3))


# --- specific behaviour ------------------------------------------------------------------------


def test_repeated_integer_indices_accumulate():
    w = np.arange(1.0, 7.0)
    g = grad(index_integer_array_repeats)(V4, w)
    # x[[0, 0, 1, 3, 0, 3]] * w: x[0] collects w[0] + w[1] + w[4], x[3] collects w[3] + w[5]
    expected = np.array([1.0 + 2.0 + 5.0, 3.0, 4.0 * V4[2], 4.0 + 6.0])
    np.testing.assert_allclose(g, expected)


def test_write_into_argument_leaves_caller_array_unchanged():
    x = V4.copy()
    gx, gv = grad(write_into_argument, wrt=(0, 1))(x, 0.8)
    np.testing.assert_array_equal(x, V4)
    assert gx[0] == 0.0  # x[0] is overwritten before it is read
    # the reference copies: numeric_grad's own perturbed arrays would be written into otherwise
    copying = lambda x, v: write_into_argument(x.copy(), v)
    np.testing.assert_allclose(gx, numeric_grad(copying, (x, 0.8), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gv, numeric_grad(copying, (x, 0.8), 1), rtol=1e-6, atol=1e-8)
    # and the primal itself (plain Python) does write into its argument, so this is not vacuous
    y = V4.copy()
    write_into_argument(y, 0.8)
    assert not np.array_equal(y, V4)


def test_print_is_kept_in_the_primal_once_per_call(capsys):
    df = grad(builtin_print)
    capsys.readouterr()
    g = df(V3)
    out = capsys.readouterr().out
    assert out.count("loss:") == 1
    assert out == f"loss: {np.sum(V3**2)}\n"
    np.testing.assert_allclose(g, 4.0 * V3)
    df(V3)
    assert capsys.readouterr().out.count("loss:") == 1


def test_caller_sees_no_change_and_calls_are_repeatable():
    args = (V3, A33)
    df = grad(append_then_stack, wrt=(0, 1))
    first = df(*args)
    second = df(*args)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


# --- golden files of the generated source -------------------------------------------------------


def golden_helper(x, w):
    return np.sum(scaled(x * w, b=0.25))


def golden_list_argument(params, x):
    W, b = params
    return np.sum(np.tanh(W @ x + b))


def golden_indexed_write(x):
    y = np.zeros(3)
    for i in range(3):
        y[i] = x[i] * x[i]
    return np.sum(y)


GOLDENS = [
    ("lang_call", golden_helper, 0, (V4, W4)),
    ("lang_list_argument", golden_list_argument, 0, ([A33, V3], V3)),
    ("lang_indexed_write", golden_indexed_write, 0, (V3,)),
]


@pytest.mark.parametrize("name, f, wrt, args", GOLDENS, ids=[g[0] for g in GOLDENS])
def test_golden_source(name, f, wrt, args):
    df = grad(f, wrt=wrt)
    df(*args)  # recursion and similar generate on the first call
    assert_golden(f"{name}.py", source(df))


def test_golden_functions_are_correct():
    check_grad(golden_helper, (V4, W4), (0, 1))
    check_grad(golden_indexed_write, (V3,))
    g = grad(golden_list_argument)([A33, V3], V3)
    assert type(g) is list
    expected = numeric_leaves(golden_list_argument, ([A33, V3], V3), 0)
    for a, b in zip(g, expected):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


# --- unsupported constructs ------------------------------------------------------------------


def uses_starred_call(x):
    xs = [x]
    while len(xs) < 2:
        xs.append(x * 2.0)  # its length is known only when it runs, where it is unpacked
    return np.add(*xs)


def writes_into_view(x):
    y = x * 2.0
    v = y[1:]
    v[0] = 1.0
    return np.sum(y)


def writes_into_alias(x):
    y = x * 2.0
    z = y
    z[0] = 1.0
    return np.sum(y)


def reads_alias_after_write(x):
    y = x * 2.0
    z = y
    y[0] = 1.0
    return np.sum(z * x)  # z is y: it sees the write


def keeps_array_in_list(x):
    y = x * 2.0
    pair = [x, y]
    y[0] = 1.0
    return np.sum(pair[1] * x)


def helper_with_try(x):
    try:
        return x * 2.0
    except ValueError:
        return x


def calls_helper_with_try(x):
    return helper_with_try(x) + 1.0


# (function, text that starts the offending construct in its source, function it is in)
UNSUPPORTED = [
    pytest.param(uses_starred_call, "*xs", None, id="starred_call"),
    pytest.param(calls_helper_with_try, "return x * 2.0", helper_with_try, id="in_a_helper"),
    pytest.param(writes_into_view, "v[0]", None, id="view"),
    pytest.param(writes_into_alias, "z[0]", None, id="alias"),
    pytest.param(reads_alias_after_write, "y\n", None, id="alias_read_after_write"),
    pytest.param(keeps_array_in_list, "[x, y]", None, id="list_read_after_write"),
]


@pytest.mark.parametrize("f, marker, holder", UNSUPPORTED)
def test_unsupported_syntax_is_reported_at_transform_time(f, marker, holder):
    lineno, offset, line = where_is(holder or f, marker)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)  # not called: the error must come from the transform itself
    err = info.value
    assert isinstance(err, SrcgradError)
    assert os.path.realpath(err.filename) == os.path.realpath(__file__)
    assert err.lineno == lineno
    assert err.offset == offset
    message = str(err)
    assert str(lineno) in message
    assert line.strip() in message
    assert "^" in message


@pytest.mark.parametrize(
    "f, alias", [(writes_into_view, "v = y[1:]"), (writes_into_alias, "z = y")]
)
def test_write_into_a_view_names_where_the_alias_was_made(f, alias):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)
    lineno, _, _ = where_is(f, alias)
    assert f"line {lineno}: {alias}" in str(info.value)


def copies_then_writes(x):
    x = x.copy()
    x[0] = 5.0 * x[1]
    return x


def calls_copy_then_write(x):
    y = x[0] * 2.0
    x = copies_then_writes(x)  # the helper's parameter is bound to x, then rebound to a copy
    return y + np.sum(x * x)


def test_a_write_after_a_copy_in_an_inlined_helper():
    x = np.array([0.3, -1.2, 2.0])
    check_grad(calls_copy_then_write, (x,), (0,))


def appends_through_an_alias(x):
    d = [x, 2.0 * x]
    e = d
    e.append(x * x)  # d grows too
    s = 0.0
    for v in d:
        s = s + np.sum(v)
    return s


def test_appending_through_an_alias_is_refused():
    # srcgrad would follow e's growth but not d's: a wrong gradient, so an error instead
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(appends_through_an_alias)
    lineno, _, _ = where_is(appends_through_an_alias, "e = d")
    assert f"line {lineno}: e = d" in str(info.value)


def appends_to_a_copy(x, xs):
    ys = xs[:]
    ys.append(x * 2.0)
    s = 0.0
    for v in ys:
        s = s + np.sum(v * v)
    return s


def appends_to_the_argument(x, xs):
    xs.append(x * x)
    return np.sum(xs[-1]) + np.sum(xs[0] * x)


def test_appending_to_a_slice_copy_and_to_an_argument():
    x = np.array([0.5, -1.5])
    xs = [np.array([2.0, 1.0])]
    check_grad(appends_to_a_copy, (x, xs), (0,))
    g = grad(appends_to_the_argument)(x, xs)
    assert len(xs) == 1  # the caller's list is not grown
    np.testing.assert_allclose(g, 2.0 * x + xs[0])


def concatenates(x):
    both = list(x) * 2
    s = 0.0
    for v in both:
        s = s + np.sum(v)
    return s


def test_list_concatenation_is_an_error_not_a_wrong_gradient():
    with pytest.raises(SrcgradError, match="concatenation"):
        grad(concatenates)(np.array([1.0, 2.0]))


# --- known failures: minimal reproducers (strict xfails: they start passing when fixed) ---------


def call_module_lambda(x):
    return np.sum(square(x))  # square = lambda t: t * t at module level


def methods_astype(x):
    return np.sum(x.astype(np.float64))


def reshape_varargs(x):
    return np.sum(x.reshape(2, 2) @ x.reshape(2, 2))


def transpose_axes(A):
    return np.sum(A.transpose(1, 0) @ A)


def clip_keywords(x):
    return np.sum(x.clip(min=-0.5, max=1.0))


def max_of_three(x):
    return max(x[0], x[1], x[2])


def min_of_list(x):
    return min([x[0], x[1]])


def max_of_iterables(x):
    # one iterable: a list of numbers, an array, a generator; ties go to the first, as Python's
    return max([x[0], 2.0 * x[1], x[2]]) + min(x) + max(v * v for v in x) + max(x * 0.0)


def enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, start=1):
        s = s + i * v
    return s


def zip_three(x, y, z):
    return sum(a * b * c for a, b, c in zip(x, y, z))


def make_pair(x):
    return {"a": x * 2.0, "b": np.sin(x)}


def dict_from_callee(x):
    d = make_pair(x)
    return d["a"] * d["b"]


def repeated_index_add_assign(x):
    y = np.zeros(2)
    y[[0, 0]] += x  # NumPy adds once (buffered): y[0] == x
    return y[0]


def repeated_index_write(v):
    y = np.zeros(2)
    y[[0, 0]] = v  # the last write wins: y[0] == v[1]
    return y[0]


def nested_comprehension_outer_target(x):
    rows = [[x * i for j in range(2)] for i in range(3)]
    return rows[2][1]


def nested_comprehension_shadowing(x):
    i = 3.0
    rows = [[x * i for j in range(2)] for i in range(3)]
    return rows[2][1] + i


# Cases that once failed; those still marked xfail are open (strict: they flip when fixed).
KNOWN_FAILURES = [
    case(call_module_lambda, (V4,)),
    case(methods_astype, (V4,)),
    case(reshape_varargs, (V4,)),
    case(transpose_axes, (A33,)),
    case(clip_keywords, (SPREAD6,)),
    case(max_of_three, (V3,)),
    case(min_of_list, (V3,)),
    case(max_of_iterables, (V4,)),
    case(enumerate_start, (V3,)),
    case(
        zip_three,
        (V3, W4[:3], -V3),
        (0, 1, 2),
    ),
    case(dict_from_callee, (0.7,)),
    case(
        repeated_index_add_assign,
        (0.7,),
    ),
    case(
        repeated_index_write,
        (np.array([0.3, -0.5]),),
    ),
    case(
        nested_comprehension_outer_target,
        (0.7,),
    ),
    case(
        nested_comprehension_shadowing,
        (0.7,),
    ),
]


@pytest.mark.parametrize("f, args, wrt", KNOWN_FAILURES)
def test_known_failures_against_central_differences(f, args, wrt):
    check_grad(f, args, wrt)


def swappable(x):
    return x * 2.0


def swapped_in(x):
    return x * 7.0


def calls_swappable(x):
    return swappable(x)


def test_redefined_helper_gives_a_fresh_derivative(monkeypatch):
    assert grad(calls_swappable)(1.0) == 2.0
    monkeypatch.setitem(globals(), "swappable", swapped_in)
    assert calls_swappable(1.0) == 7.0
    assert grad(calls_swappable)(1.0) == 7.0


def cubes_swappable(x):
    return swappable(x) ** 3


def test_redefined_helper_gives_fresh_higher_derivatives(monkeypatch):
    # hvp and hessian are built on grad(f); grad(grad(f)) on grad(f): none may keep the old
    # helper inlined once it is redefined
    x, v = np.array([0.5, -1.0]), np.array([1.0, 2.0])
    assert np.allclose(srcgrad.hvp(cubes_swappable_sum)(x, v), 6 * 8.0 * x * v)
    assert np.allclose(srcgrad.hessian(cubes_swappable_sum)(x), np.diag(6 * 8.0 * x))
    assert np.allclose(srcgrad.hessian(lambda z: cubes_swappable_sum(z))(x), np.diag(48.0 * x))
    monkeypatch.setitem(globals(), "swappable", swapped_in)
    assert np.allclose(srcgrad.hvp(cubes_swappable_sum)(x, v), 6 * 343.0 * x * v)
    assert np.allclose(
        srcgrad.hessian(cubes_swappable_sum)(x), np.diag(6 * 343.0 * x)
    )
    inner = grad(cubes_swappable_sum)
    assert np.allclose(inner(x), 3 * 343.0 * x * x)


def cubes_swappable_sum(x):
    return np.sum(cubes_swappable(x))


ACTIVATION = np.sin  # a function with a rule, held in a global (rebound by the test below)
SETTINGS = types.SimpleNamespace(act=np.sin)  # held in a field of a global object


def activated(x):
    return np.sum(ACTIVATION(x) * x)


def activated_by_a_local(x):
    act = ACTIVATION
    return np.sum(act(x) * x)


def activated_by_a_field(x):
    return np.sum(SETTINGS.act(x) * x)


@pytest.mark.parametrize("f", [activated, activated_by_a_local, activated_by_a_field])
def test_a_global_rebound_to_another_function_with_a_rule_gives_a_fresh_derivative(
        f, monkeypatch):
    # the derivative applied np.sin's rule after `ACTIVATION = np.cos`: the held derivative and
    # a new grad(f) (cached by the function's code) gave the gradient of sin(x) * x (the local
    # copy: its value too)
    x, t = np.array([0.3, -1.2]), np.array([1.0, 0.5])
    vg, tangent = srcgrad.value_and_grad(f), srcgrad.jvp(f)
    np.testing.assert_allclose(vg(x)[1], np.cos(x) * x + np.sin(x))
    monkeypatch.setitem(globals(), "ACTIVATION", np.cos)
    monkeypatch.setattr(SETTINGS, "act", np.cos)
    want = -np.sin(x) * x + np.cos(x)
    for g in (vg(x)[1], grad(f)(x)):
        np.testing.assert_allclose(g, want)
    assert vg(x)[0] == f(x)
    np.testing.assert_allclose(tangent(x, t)[1], want @ t)


def printing_power(x, n):
    print("level", n)
    if n == 0:
        return 1.0
    return x * printing_power(x, n - 1)


def calls_printing_power(x):
    return printing_power(x, 3)


def test_gradient_of_a_recursive_function_that_prints():
    assert grad(calls_printing_power)(1.5) == pytest.approx(3 * 1.5**2)


def test_print_in_a_recursive_function_runs_once_per_primal_call(capsys):
    df = grad(calls_printing_power)
    df(1.5)
    capsys.readouterr()
    df(1.5)
    assert capsys.readouterr().out.count("level") == 4


def raises_before_a_comprehension(x, M):
    s = 0.0
    try:
        if np.sum(M) > 0.0:
            raise ValueError("drawn")
        s = sum([np.sin(t) for t in x])
    except (ValueError, FloatingPointError):
        s = 0.5
    return np.sum(x) + np.tanh(s)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["raises", "runs"])
def test_a_try_block_raising_before_its_loop_binds_the_index(sign):
    # the handler restored the comprehension loop's index `i` from its tape, reading `i`,
    # unbound when the block raised before the loop (UnboundLocalError; hunt seed 56245)
    x, M = np.array([0.3, -0.5, 0.7]), sign * np.ones(2)
    check_grad(raises_before_a_comprehension, (x, M))
    v = np.array([0.2, 0.1, -0.4])
    h = srcgrad.hvp(raises_before_a_comprehension)(x, M, v)
    df = srcgrad.grad(raises_before_a_comprehension)
    want = (df(x + 1e-5 * v, M) - df(x - 1e-5 * v, M)) / 2e-5
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-7)


def tuple_first_bound_in_a_loop(a, x):
    s = 0.0
    for k in range(3):
        if k == 1:
            h = (a * k, np.sin(x))
        if k >= 1:
            s = s + np.sum(h[1] * h[0])
    return s


def list_first_bound_in_a_loop(a, x):
    s = 0.0
    for k in range(3):
        if k == 0:
            h = [a, x * a]
        s = s + np.sum(h[1] * h[0]) * k
    return s


def dict_first_bound_in_a_loop(a, x):
    s = 0.0
    for k in range(3):
        if k == 0:
            h = {"p": a, "q": x * a}
        s = s + np.sum(h["q"] * h["p"])
    return s


def object_first_bound_in_a_loop(a, x):
    s = 0.0
    for k in range(3):
        if k == 0:
            h = types.SimpleNamespace(p=a, q=x * a)
        s = s + np.sum(h.q * h.p)
    return s


@pytest.mark.parametrize("f", [tuple_first_bound_in_a_loop, list_first_bound_in_a_loop,
                               dict_first_bound_in_a_loop, object_first_bound_in_a_loop])
def test_a_container_first_bound_in_a_branch_of_a_loop(f):
    # its adjoint starts from the 0.0 of a variable that may not exist yet, and met the
    # container's cotangents: TypeError / AttributeError from generated code (objects14e)
    a, x, t = 1.3, np.array([0.3, -0.5, 0.7]), np.array([1.0, 2.0, 3.0])
    check_grad(f, (a, x), wrt=(0, 1))
    _, tangent = srcgrad.jvp(f, wrt=1)(a, x, t)
    np.testing.assert_allclose(tangent, numeric_grad(f, (a, x), 1) @ t, rtol=1e-6)
