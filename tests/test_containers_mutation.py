"""List and dict mutation (issue 13, item 4): every method that changes a list or a dict, and
iteration over dicts and ``np.ndindex`` / ``np.ndenumerate``, give Python's value and the right
gradient in every mode, or a located error at transform time."""

import numpy as np
import pytest
from sharing_check import check_all

from srcgrad import grad, hessian
from srcgrad.errors import SrcgradError, UnsupportedSyntaxError

X = np.array([0.5, -1.0, 2.0])
M = np.arange(6.0).reshape(2, 3) / 5 - 0.3


def insert_front(x):
    hs = [x]
    hs.insert(0, x ** 2)
    return np.sum(hs[0] * 2.0 + hs[1])


def insert_past_end(x):
    hs = [x, x * 3.0]
    hs.insert(10, np.sin(x))
    hs.insert(-1, x ** 3)
    return np.sum(hs[1] * hs[2] + hs[3])


def extend_list(x):
    hs = [x]
    hs.extend([x ** 2, x ** 3])
    hs.extend((np.cos(x),))
    return np.sum(hs[2] + hs[0] * hs[3])


def extend_by_rows(x):
    hs = []
    hs.extend(np.outer(x, x))
    return np.sum(hs[1] * hs[2])


def pop_at(x):
    hs = [x, x ** 2, x ** 3]
    a = hs.pop(0)
    b = hs.pop(-1)
    return np.sum(a + 2 * hs[0] + b * len(hs))


def pop_in_expression(x):
    hs = [x, x ** 2]
    s = np.sum(x) + np.sum(hs.pop(0))
    return s * np.sum(hs[0])


def pop_bare(x):
    hs = [x, x ** 2, x ** 3]
    hs.pop()
    hs.pop(0)
    return np.sum(hs[0])


def remove_value(x):
    hs = [1.0, 2.0, 1.0]
    hs.remove(1.0)
    return np.sum((hs[0] + hs[1]) * x)


def reverse_list(x):
    hs = [x, x ** 2, np.exp(x)]
    hs.reverse()
    return np.sum(hs[0] * 2.0 + hs[2])


def sort_floats(x):
    hs = [x[0], x[1] ** 2, x[2], -x[0]]
    hs.sort()
    return hs[0] + 2 * hs[1] + 3 * hs[3]


def sort_descending(x):
    hs = [x[0], x[1] ** 2, x[2]]
    hs.sort(reverse=True)
    return hs[0] - 3 * hs[2]


def del_element(x):
    hs = [x, x ** 2, x ** 3]
    del hs[0]
    del hs[-1]
    return np.sum(hs[0])


def set_element(x):
    hs = [x, x ** 2]
    hs[0] = x ** 3
    hs[-1] = hs[0] * hs[1]
    return np.sum(hs[0] + hs[1])


def new_key(x, d):
    d["b"] = x ** 2
    return np.sum(d["a"] * d["b"])


def new_key_local(x):
    d = {}
    for i in range(3):
        d[i] = x[i] * x
    return np.sum(d[0] + d[2] * d[1])


def del_key(x):
    d = {"a": x, "b": x ** 2}
    del d["a"]
    d["c"] = np.sin(x)
    return np.sum(d["b"] * len(d) + d["c"])


def update_dict(x):
    d = {"a": x, "b": 1.0}
    d.update({"b": x ** 2})
    d.update(c=np.sin(x))
    return np.sum(d["a"] * d["b"] + d["c"])


def clear_list(x):
    hs = [x]
    hs.clear()
    hs.append(x ** 2)
    return np.sum(hs[0])


def iterate_dict(x):
    d = {"a": x, "b": x ** 2}
    s = 0.0
    for k in d:
        s = s + np.sum(d[k])
    return s


def iterate_dict_argument(x, params):
    s = 0.0
    for name in params:
        s = s + np.sum(params[name] * x)
    return s


def iterate_keys(x):
    d = {"a": x, "b": x ** 2}
    s = 0.0
    for k in d.keys():
        s = s + np.sum(d[k])
    return s


def iterate_values(x):
    d = {"a": x, "b": x ** 2}
    s = 0.0
    for v in d.values():
        s = s + np.sum(v * v)
    return s


def iterate_items(x):
    d = {"a": x, "b": x ** 2}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v) * len(k)
    return s


_WEIGHTS = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([0.5, -0.1, 0.2])}


def iterate_a_global_dicts_values_and_items(x):
    # `.values()` / `.items()` of a global dict: Python's views, indexed by srcgrad's loop
    # (a `TypeError` when it ran: 'dict_values' object is not subscriptable)
    y = x
    for v in _WEIGHTS.values():
        y = np.sin(y) * v
    for k, v in _WEIGHTS.items():
        y = y * v + len(k)
    return np.sum(y)


def _order():
    return {0: 1, 1: 0}


def iterate_a_dict_a_helper_returns(x):
    # was a silently wrong value (0.8068 for Python's 3.7872): the loop took the dict for a
    # list and ran over `d[0], d[1]`, its values, not its keys
    y = x
    for k in _order():
        y = np.sin(y) * x[k] + k
    d = _order()
    for k in d:
        y = np.sin(y) * x[k] + k
    return np.sum(y)


def values_and_items_as_lists(x):
    d = {"a": x, "b": np.cos(x)}
    vs = list(d.values())
    total = sum(np.sum(v) for v in vs)
    for pair in d.items():
        total = total * np.sum(pair[1])
    return total


def dict_get(x):
    d = {"a": x}
    return np.sum(d.get("a") + d.get("b", 1.0) * x + d.get("a", 0.0) ** 2)


def dict_get_default_active(x):
    d = {"a": 1.0}
    return np.sum(d.get("b", x ** 2))


def iterate_ndindex(M):
    s = 0.0
    for idx in np.ndindex(M.shape):
        s = s + M[idx] ** 2
    return s


def iterate_ndindex_varargs(M):
    s = 0.0
    for i, j in np.ndindex(M.shape[0], M.shape[1]):
        s = s + M[i, j] * (i + 1)
    return s


def iterate_ndenumerate(M):
    s = 0.0
    for idx, v in np.ndenumerate(M):
        s = s + v ** 2 * M[idx]
    return s


def unpack_pairs(x):
    pairs = [(x, 2.0), (x ** 2, 3.0)]
    s = 0.0
    for a, k in pairs:
        s = s + np.sum(a) * k
    return s


def index_and_count(x):
    hs = [1.0, 2.0, 2.0]
    return np.sum(x * hs.index(2.0) + x * hs.count(2.0))


def mutate_in_loop(x):
    hs = []
    for i in range(3):
        hs.insert(0, x * (i + 1.0))
        if i == 1:
            hs.reverse()
    a = hs.pop(1)
    return np.sum(a * hs[0] + hs[1])


def list_of_things(x):
    rows = list(np.outer(x, x))
    a = list(rows[1])
    b = list((x, x ** 2))
    d = list({"k": x})
    return np.sum(rows[2] * a[0]) + np.sum(b[1]) * len(d)


def slice_written(x):
    # `L[1:] = [...]` crashed in the reverse sweep (zero_item wrote None into a list's slice)
    y = x * 1.5
    L = [x * 0.5, x * 0.0, x[0]]
    L[1:] = (y, x[1] * x[2])
    L[1] += np.sin(x)
    return np.sum(y * x * L[0]) + L[2]


CASES = [
    (insert_front, (X,)), (insert_past_end, (X,)), (extend_list, (X,)), (extend_by_rows, (X,)),
    (pop_at, (X,)), (pop_in_expression, (X,)), (pop_bare, (X,)), (remove_value, (X,)),
    (reverse_list, (X,)), (sort_floats, (X,)), (sort_descending, (X,)), (del_element, (X,)),
    (set_element, (X,)), (new_key, (X, {"a": X + 1.0})), (new_key_local, (X,)),
    (del_key, (X,)), (update_dict, (X,)), (clear_list, (X,)), (iterate_dict, (X,)),
    (iterate_dict_argument, (X, {"w": X * 2.0, "v": X - 1.0})), (iterate_keys, (X,)),
    (iterate_values, (X,)), (iterate_items, (X,)), (values_and_items_as_lists, (X,)),
    (iterate_a_global_dicts_values_and_items, (X,)), (iterate_a_dict_a_helper_returns, (X,)),
    (dict_get, (X,)),
    (dict_get_default_active, (X,)), (iterate_ndindex, (M,)),
    (iterate_ndindex_varargs, (M,)), (iterate_ndenumerate, (M,)), (unpack_pairs, (X,)),
    (index_and_count, (X,)), (mutate_in_loop, (X,)), (list_of_things, (X,)),
    (slice_written, (X,)),
]


@pytest.mark.parametrize("f, args", [pytest.param(f, a, id=f.__name__) for f, a in CASES])
def test_container_mutation_matches_python(f, args):
    check_all(f, args)


def test_gradient_with_respect_to_a_mutated_dict_argument():
    g = grad(new_key, wrt=1)(X, {"a": X + 1.0})
    assert set(g) == {"a"}
    np.testing.assert_allclose(g["a"], X ** 2)


def test_hessian_through_list_methods():
    def f(x):
        hs = [x, x ** 2]
        hs.insert(1, np.sin(x))
        hs.reverse()
        a = hs.pop(1)
        return np.sum(hs[0] * hs[1] + a)

    h = hessian(f)(X)
    expected = np.diag(6 * X - np.sin(X))
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)


def sort_with_key(x):
    hs = [x[0], x[1]]
    hs.sort(key=abs)
    return hs[0]


def pop_twice_in_expression(x):
    hs = [x, x ** 2]
    return np.sum(hs[0] + hs.pop(1))


def pop_with_default(x):
    d = {"a": x}
    t = d.pop("b", 1.0)
    return np.sum(x * t)


def bare_pop_with_default(x):
    d = {"a": x}
    d.pop("b", 1.0)
    return np.sum(d["a"])


@pytest.mark.parametrize("f, marker", [
    (sort_with_key, "hs.sort"), (pop_twice_in_expression, "hs.pop"),
    (pop_with_default, "d.pop"), (bare_pop_with_default, "d.pop"),
])
def test_refused_container_mutations_are_located(f, marker):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(X)
    assert marker in str(info.value)


def test_list_methods_on_an_array_raise_like_python():
    def f(x):
        y = x * 2.0
        del y[0]
        return np.sum(y)

    with pytest.raises(TypeError, match="doesn't support item deletion"):
        grad(f)(X)


@pytest.mark.parametrize("f", [sort_floats, iterate_items, update_dict, extend_list, del_key,
                               iterate_ndenumerate, dict_get_default_active, slice_written],
                         ids=lambda f: f.__name__)
def test_hessian_matches_differences_of_the_gradient(f):
    x = M if f is iterate_ndenumerate else X
    h = hessian(f)(x)
    g = grad(f)
    step = 1e-6
    columns = []
    for index in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[index] = step
        columns.append((g(x + e) - g(x - e)) / (2 * step))
    expected = np.stack(columns, axis=-1).reshape(x.shape + x.shape)
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-6)


def test_sorting_a_list_of_numbers():
    from test_inplace_numpy import sorts_a_list  # was refused there

    check_all(sorts_a_list, (X,))


def test_a_slice_write_that_changes_a_lists_length_is_an_error():
    def f(x):
        L = [x * 1.0, x * 3.0]
        L[1:] = [x * 2.0, np.sin(x)]
        return np.sum(L[1] * L[2] * L[0])

    with pytest.raises(SrcgradError, match=r"puts 2 items in the place of 1"):
        grad(f)(X)
