"""Every example of issue 13's text, as written there: each returned a silently wrong gradient
(or crashed inside generated code). Each must give the value plain Python computes on copies of
the arguments and the gradient of central differences, leave the caller's arguments unchanged,
or be refused with a located SrcgradError. (The classes behind them are tested more widely in
test_inplace_numpy, test_sharing, test_containers_mutation, test_numpy_forms, test_staleness and
the random programs; this file pins the examples themselves.)
"""

import copy
import sys

import numpy as np
import pytest
from gradcheck import numeric_grad

import srcgrad
from srcgrad import grad, value_and_grad

X = np.array([0.5, -1.0, 2.0])


def copyto_zeros(x):
    y = np.zeros(3)
    np.copyto(y, x**2)
    return np.sum(y)


def add_out_discarded(x):
    a = x * 1.0
    np.add(a, x, out=a)
    return np.sum(a * a)


def exp_out(x):
    y = np.zeros(3)
    np.exp(x, out=y)
    return np.sum(y * x)


def cumsum_out(x):
    y = x * 2.0
    np.cumsum(y, out=y)
    return np.sum(y * y)


def clip_out(x):
    y = np.zeros(3)
    np.clip(x * 3.0, -1.0, 1.0, out=y)
    return np.sum(y * x)


def sort_method(x):
    y = x * np.array([1.0, 3.0, -2.0])
    y.sort()
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


def fill_method(x):
    y = x * 1.0
    y.fill(x[0] * 2.0)
    return np.sum(y * y) + x[1]


def put_method(x):
    y = x * 1.0
    y.put([0, 2], x[1:] ** 2)
    return np.sum(y * x)


def np_put(x):
    y = x * 1.0
    np.put(y, [1], x[0] ** 3)
    return np.sum(y * y)


def np_put_along_axis(x):
    y = np.zeros(3)
    np.put_along_axis(y, np.array([2, 0]), x[:2] ** 2, axis=0)
    return np.sum(y * x)


def np_place(x):
    y = x * 1.0
    np.place(y, np.array([True, False, True]), x[1:] * 5.0)
    return np.sum(y * y)


def np_fill_diagonal(x):
    m = np.outer(x, x)
    np.fill_diagonal(m, x**3)
    return np.sum(m * m)


def add_at(x):
    y = np.zeros(3)
    np.add.at(y, [0, 0, 2], x * x)
    return np.sum(y * x)


def scale(v, s):
    v *= s


def helper_scales(x):
    y = x.copy()
    scale(y, 3.0)
    return np.sum(y**2)


def square_first(out, x):
    out[0] = x[0] ** 2


def helper_writes(x):
    out = np.zeros(3)
    square_first(out, x)
    return np.sum(out * x)


def push(hs, v):
    hs.append(v)


def helper_appends(x):
    hs = [x * 1.0]
    push(hs, x**2)
    return np.sum(np.array(hs) ** 2)


def insert_method(x):
    hs = [x[0], x[1]]
    hs.insert(0, x[2] ** 2)
    return np.sum(np.array(hs) * np.array([1.0, 2.0, 3.0]))


def extend_method(x):
    hs = [x[0]]
    hs.extend([x[1] ** 2, x[2]])
    return np.sum(np.array(hs) * np.array([1.0, 2.0, 3.0]))


def pop_method(x):
    hs = [x[0], x[1] ** 2, x[2]]
    v = hs.pop(1)
    return np.sum(np.array(hs) * np.array([1.0, 2.0])) + 5.0 * v


def reverse_method(x):
    hs = [x[0], x[1] ** 2, x[2]]
    hs.reverse()
    return np.sum(np.array(hs) * np.array([1.0, 2.0, 3.0]))


def boxed_in_a_list(x):
    a = x * 2.0
    L = [a]
    a += 1.0
    return np.sum(L[0] * x)


def boxed_in_a_dict(x):
    h = x * 2.0
    d = {"h": h}
    h += 1.0
    return np.sum(d["h"] * x)


def tuple_target_alias(x):
    a, b = x, x
    a += 1.0
    return np.sum(a * b)


def history_of_an_accumulator(x):
    acc = np.zeros(3)
    hist = []
    for _ in range(3):
        acc += x
        hist.append(acc)
    return np.sum(np.array(hist) ** 2)


B = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]])


def einsum_interleaved(x):
    A = np.outer(x, x[:2] * 2.0)
    return np.sum(np.einsum(A, [0, 1], B.T, [1, 2]) ** 2)


def astype_int(x):
    return np.sum(x.astype(int) * x)


EXAMPLES = [
    copyto_zeros, add_out_discarded, exp_out, cumsum_out, clip_out, sort_method, fill_method,
    put_method, np_put, np_put_along_axis, np_place, np_fill_diagonal, add_at, helper_scales,
    helper_writes, helper_appends, insert_method, extend_method, pop_method, reverse_method,
    boxed_in_a_list, boxed_in_a_dict, tuple_target_alias, history_of_an_accumulator,
    einsum_interleaved,
]


def check_example(f, x):
    want_value = f(copy.deepcopy(x))
    want = numeric_grad(lambda x: f(np.array(x)), [x], 0)
    before = x.copy()
    value, g = value_and_grad(f)(x)
    np.testing.assert_array_equal(x, before, err_msg="the caller's argument was modified")
    np.testing.assert_allclose(value, want_value, rtol=1e-12)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad(f)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, before, err_msg="the caller's argument was modified")


@pytest.mark.parametrize("f", EXAMPLES, ids=lambda f: f.__name__)
def test_the_example_gives_python_s_value_and_the_true_gradient(f):
    check_example(f, X.copy())


def test_astype_int_carries_no_gradient():
    # the issue's numbers: [2.5, 4.5] before, the truth [1, 2]
    np.testing.assert_allclose(grad(astype_int)(np.array([1.5, 2.5])), [1.0, 2.0])


def test_a_float32_gradient_is_float32():
    assert grad(lambda x: np.sum(x * x))(np.ones(3, np.float32)).dtype == np.float32
    assert grad(helper_scales)(np.ones(3, np.float32)).dtype == np.float32


def over_params(params):
    s = 0.0
    for name in params:
        s = s + np.sum(params[name] ** 2)
    return s


def new_key(params):
    params["b"] = params["a"] * 2.0
    return np.sum(params["b"] * params["a"])


def over_indices(x):
    s = 0.0
    for idx in np.ndindex(x.shape):
        s = s + x[idx] ** 3
    return s


def test_the_examples_that_crashed_inside_generated_code():
    params = {"a": X.copy(), "c": np.ones(2)}
    g = grad(over_params)(params)
    np.testing.assert_allclose(g["a"], 2 * X)
    np.testing.assert_allclose(g["c"], 2 * np.ones(2))
    g = grad(new_key)({"a": X.copy()})
    assert set(g) == {"a"}
    np.testing.assert_allclose(g["a"], 4 * X)
    M = np.array([[0.5, -1.0], [2.0, 0.3]])
    np.testing.assert_allclose(grad(over_indices)(M), 3 * M**2)


HELPER_SOURCE = '''
import numpy as np

def helper(x):
    return x * x

def f(x):
    return np.sum(helper(x))
'''


def test_a_rebound_module_level_helper_is_seen(tmp_path, monkeypatch):
    (tmp_path / "issue13_notebook.py").write_text(HELPER_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import issue13_notebook as mod

    try:
        df = value_and_grad(mod.f)
        np.testing.assert_allclose(df(X)[1], 2 * X)
        mod.helper = lambda x: x * x * x
        value, g = df(X)
        np.testing.assert_allclose(value, np.sum(X**3))
        np.testing.assert_allclose(g, 3 * X**2)
    finally:
        sys.modules.pop("issue13_notebook", None)


def test_a_refusal_is_located_at_the_user_s_line():
    def shuffled(x):
        idx = np.arange(3)
        np.random.default_rng(0).shuffle(idx)
        return np.sum(x[idx] * x)

    with pytest.raises(srcgrad.SrcgradError) as info:
        grad(shuffled)(X)
    assert "test_issue13_examples.py" in str(info.value)
