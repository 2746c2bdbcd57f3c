"""The last refusals of issue 14 made to work: a held method of a copy of an object,
``functools.reduce``, ``d.setdefault(k, []).append(v)``, loops over functions that the function
changes first, and lambdas used as values (a list of them built in a loop). Each is checked
against central differences in float64 and at second order; each test fails on the code before
(a refusal there)."""

import copy
import functools
import operator
from types import SimpleNamespace

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad
from second_order_check import check_second_order

from srcgrad import SrcgradError, grad, jvp


class Model:
    def __init__(self, w):
        self.w = w

    def step(self, x):
        return np.sin(self.w * x)


def held_through_a_copy(model, x):
    m = copy.copy(model)
    m.w = m.w * 2.0  # the copy's own field: the caller's model keeps its w
    g = m.step
    return np.sum(g(x) * model.step(x))


def held_through_a_deep_copy(model, x):
    m = copy.deepcopy(model)
    m.w = m.w + 1.0
    g = m.step
    return np.sum(g(x) ** 2)


def called_on_a_copy(x, model):
    return np.sum(copy.copy(model).step(x) * x)


X = np.array([0.3, 0.5, 0.7])
W = np.array([1.3, 0.4, -0.2])


def _model_gradient(f, x, w):
    """The gradient in the model's field, against central differences in it."""
    model = Model(w.copy())
    position = 0 if f.__code__.co_varnames[0] == "model" else 1
    args = [model, x] if position == 0 else [x, model]
    g = grad(f, wrt=position)(*args)
    assert isinstance(g, Model) and np.array_equal(model.w, w)

    def of_w(v):
        return f(*([Model(v), x] if position == 0 else [x, Model(v)]))

    np.testing.assert_allclose(g.w, numeric_grad(of_w, (w,), 0), rtol=1e-6, atol=1e-8)


def test_held_method_of_a_copy():
    # an unannotated parameter's copy has the parameter's class: a derivative specialized per
    # class of the object passed (was "cannot resolve `g`" / "does not support the method")
    for f, position in ((held_through_a_copy, 1), (held_through_a_deep_copy, 1),
                        (called_on_a_copy, 0)):
        args = (Model(W.copy()), X) if position == 1 else (X, Model(W.copy()))
        got = grad(f, wrt=position)(*args)
        np.testing.assert_allclose(got, numeric_grad(f, args, position), rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(args[1 - position].w, W)
        value, tangent = jvp(f, wrt=position)(*args, np.ones(3))
        assert np.isclose(value, f(*args))
        np.testing.assert_allclose(tangent, np.sum(got), rtol=1e-9)
        _model_gradient(f, X, W)
    check_second_order(held_through_a_copy, (Model(W.copy()), X), k=1)


def product(a, b):
    return a * b


def reduce_lambda(x):
    return functools.reduce(lambda a, b: a * np.sin(b), x, 1.0 + x[0])


def reduce_closure_and_operator(x):
    k = 2.0
    total = functools.reduce(lambda a, b: a + k * a * b, [x[0], x[1], x[2]])
    return total + functools.reduce(operator.mul, x) + functools.reduce(product, [x[1], x[3]])


def test_reduce_is_a_loop_calling_its_function():
    # functools.reduce has no source: it was "no Python source and no gradient rule" (and a
    # lambda given to it "the local function used as a value")
    x = np.array([0.3, 0.5, 0.7, 0.2])
    for f in (reduce_lambda, reduce_closure_and_operator):
        check_grad(f, (x,))
    check_second_order(reduce_lambda, (x,))
    empty = grad(lambda v: functools.reduce(operator.add, []) + v)
    try:
        empty(1.0)
    except TypeError as error:
        assert "reduce() of empty iterable" in str(error)
    else:
        raise AssertionError("reduce of an empty list ran")


def grouped(x):
    d = {}
    for i in range(4):
        d.setdefault("even" if i % 2 == 0 else "odd", []).append(x[i] * x[0])
    return sum(d["even"]) * sum(d["odd"]) + len(d)


def grouped_by_sign(x):
    groups = {}
    for v in x:
        groups.setdefault(v > 0.4, []).insert(0, v * v)
    return groups[True][0] * groups[False][-1]


def nested_by_key(x):
    d = {}
    for i in range(3):
        d.setdefault(i % 2, {})["v"] = x[i] * 2.0  # (the value first, as Python evaluates it)
        d.setdefault("sums", [0.0])[0] += x[i] ** 2
    return d[0]["v"] * d[1]["v"] + d["sums"][0]


def extends_a_given_dict(x, d):
    d.setdefault("h", []).extend([x[0], x[1] ** 2])
    d.setdefault("h", [9.0]).append(np.sin(x[2]))  # (present: the default is not put)
    return sum(d["h"]) * x[0]


def test_setdefault_then_a_method_of_the_list():
    # was "does not support the method `.append()` of `setdefault_..._lst`"
    x = np.array([0.3, 0.5, 0.7, 0.2])
    for f in (grouped, grouped_by_sign, nested_by_key):
        check_grad(f, (x,))
    check_second_order(grouped_by_sign, (x,))
    given = {"h": [1.5]}
    got = grad(extends_a_given_dict)(x, given)
    assert given == {"h": [1.5]}  # the caller's dict and list are not changed

    def fresh(v):
        return extends_a_given_dict(v, {"h": [1.5]})

    np.testing.assert_allclose(got, numeric_grad(fresh, (x,), 0), rtol=1e-6, atol=1e-8)


class Block:
    def __init__(self, w):
        self.w = w

    def scale(self, h):
        return self.w * h


class Net:
    def __init__(self):
        self.a = Block(2.0)
        self.b = Block(0.5)

    def rebinds_between(self, x):
        fs = [self.a.scale]
        self.a = Block(3.0)
        fs.append(self.a.scale)  # bound to the new block; fs[0] keeps the old one
        h = x
        for f in fs:
            h = np.sin(f(h))
        return np.sum(h)

    def inserts_and_extends(self, x):
        fs = [self.a.scale]
        y = x * 2.0
        fs.insert(0, self.b.scale)
        fs += [np.tanh]
        h = y
        for f in fs:
            h = f(h)
        return np.sum(h)


def net_rebinds(x):
    return Net().rebinds_between(x)


def net_inserts(x):
    return Net().inserts_and_extends(x)


def appended_later(x):
    fs = [np.sin]
    y = x * 2.0
    fs.append(np.cos)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(y))
    return s


def tuple_rebound(x):
    fs = (np.sin,)
    fs = fs + (np.cos,)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) * x)
    return s


def dict_item_replaced(x):
    hooks = {"a": np.sin, "c": np.tanh}
    hooks["c"] = np.cos
    s = 0.0
    for g in hooks.values():
        s = s + np.sum(g(x))
    for k in hooks:
        s = s + np.sum(hooks[k](x) ** 2)
    return s


def dict_item_deleted_and_added(x):
    hooks = {"a": np.sin, "b": np.cos}
    del hooks["a"]
    hooks["z"] = np.tanh
    s = 0.0
    for k, g in hooks.items():
        s = s + np.sum(g(x)) * len(k)
    return s


def test_loop_over_functions_changed_first():
    # each was "cannot resolve `f`" (a loop over a dict literal of functions too)
    x = np.array([0.3, 0.5, 0.7])
    for f in (appended_later, tuple_rebound, dict_item_replaced, dict_item_deleted_and_added,
              net_rebinds, net_inserts):
        check_grad(f, (x,))
    check_second_order(dict_item_replaced, (x,))
    for method, wrapped in ((Net().rebinds_between, net_rebinds),
                            (Net().inserts_and_extends, net_inserts)):  # a bound method as input
        np.testing.assert_allclose(grad(method)(x), numeric_grad(wrapped, (x,), 0), rtol=1e-6)


def lambdas_appended_in_a_loop(x, w):
    fs = []
    for i in range(3):
        fs.append(lambda t, a=w[i]: np.sin(a * t))  # the default: w[i] when it is made
        fs.append(lambda t, k=2.0: k * t * w[0])  # w read when it is called (not rebound)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x))
    return s * len(fs)


def lambdas_of_a_comprehension(x):
    fs = [lambda t, p=p: t ** p for p in (1.0, 2.0, 3.0)]
    s = 0.0
    for i in range(len(fs)):
        s = s + np.sum(fs[i](x))
    return s + np.sum(fs[0](x, 4.0))  # a default passed


def lambdas_read_late(x):
    fs = []
    for c in (1.0, 2.0):
        fs.append(lambda t: c * t * x[0])  # noqa: B023 (as Python: both read the last c)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x))
    return s


def lambdas_called_on_their_results(x):
    fs = []
    for c in (1.0, 2.0):
        fs.append(lambda t, c=c: np.sin(c * t))
    s = 0.0
    for f in fs:
        s = s + np.sum(f(f(x)))  # (the inner call rewritten first)
    return s


def two_lists_of_one_name(x):
    s = 0.0
    fs = []
    for i in range(3):
        fs.append(lambda t, a=x[i]: a * t * t)
    for f in fs:
        s = s + np.sum(f(x))
    fs = []  # a new list under the same name (normalize/renumbered.py names each its own)
    for i in range(2):
        fs.append(lambda t, a=x[i] * 2.0: np.sin(a * t))
    for j in range(len(fs)):
        s = s + np.sum(fs[j](x) * x)
    return s


def test_list_of_lambdas_built_in_a_loop():
    # each was "the local function `lambda_2` used as a value"
    x, w = np.array([0.3, 0.5, 0.7]), np.array([0.4, 1.1, -0.6])
    check_grad(lambdas_appended_in_a_loop, (x, w), wrt=(0, 1))
    check_grad(lambdas_of_a_comprehension, (x,))
    check_grad(lambdas_read_late, (x,))
    check_grad(lambdas_called_on_their_results, (x,))
    check_grad(two_lists_of_one_name, (x,))
    check_second_order(lambdas_appended_in_a_loop, (x, w), k=1)


def held_by_a_name(x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i % 2, [])
        lst.append(x[i])
        if len(lst) > 1:
            lst[0] = lst[0] * lst[1]
    return sum(d[0]) * d[1][0]


def held_then_read(x):
    d = {0: [x[2]]}
    lst = d.setdefault((2 * 3) % 2, [x[0]])  # present: lst is d[0]
    lst.append(np.sin(x[1]) * lst[0])
    return lst[1] * sum(d[0])


class Groups:
    def __init__(self):
        self.groups = {}

    def add(self, k, v):
        self.groups.setdefault(k, []).append(v)


def setdefault_of_fields(x):
    s = SimpleNamespace(d={})
    g = Groups()
    for i in range(3):
        s.d.setdefault(i % 2, []).append(x[i])
        g.add(i % 2, x[i] ** 2)
    return sum(s.d[0]) * s.d[1][0] + sum(g.groups[0]) * g.groups[1][0]


def held_while_the_dict_changes(x):
    d = {}
    lst = d.setdefault(0, [])
    d[0] = []  # (Python: lst is no longer d[0])
    lst.append(x[0])
    return sum(d[0]) + x[1] * len(lst)


def test_setdefault_held_by_a_name_or_of_a_field():
    # each was refused: "writing into `lst`, which may share memory with another array or
    # list", "does not support the method `.append()` of `setdefault_..._lst`"
    x, t = np.array([0.3, 0.5, 0.7]), np.array([1.0, -0.5, 0.25])
    for f in (held_by_a_name, held_then_read, setdefault_of_fields):
        check_grad(f, (x,))
        value, tangent = jvp(f)(x, t)
        assert np.isclose(value, f(x)) and np.isclose(tangent, numeric_grad(f, (x,), 0) @ t)
    with pytest.raises(SrcgradError, match="writing into `lst`"):  # d[0] rebound in between
        grad(held_while_the_dict_changes)


def leaves_early(x):
    for f in (np.sin, np.cos, np.tanh):
        x = f(x) * 1.5
        if x[0] > 0.4:
            break
    return np.sum(x)


def skips_and_leaves(x):
    s = 0.0
    for f in (np.sin, np.cos, np.tanh, np.exp):
        y = f(x)
        if y[1] < 0.6:
            continue
        s = s + np.sum(y * x)
        if s > 2.0:
            break
        s = s * 1.1
    return s


def measured_between_changes(x):
    fs = [np.sin]
    n1 = len(fs)
    fs.append(np.cos)
    scale = 1.0 / len(fs)
    fs += [np.tanh]
    s = 0.0
    for f in fs:
        s = s + scale * n1 * np.sum(f(x) * x)
    return s * len(fs)


def dict_measured_between_changes(x):
    hooks = {"a": np.sin}
    k = len(hooks)
    hooks["b"] = np.exp
    s = 0.0
    for g in hooks.values():
        s = s + np.sum(g(x)) * k
    return s


def _apply_all(fs, v):
    s = 0.0
    for f in fs:
        s = s + np.sum(f(v) * v)
    return s


def lambdas_passed_to_a_helper(x):
    fs = [lambda t: t * 2.0, lambda t: np.sin(t) ** 2]
    return _apply_all(fs, x)


def measured_tuple_with_a_def(x):
    def cube(t):
        return t * t * t

    fs = (np.sin, cube)
    table = {"f": lambda t: np.exp(-t)}
    return np.sum(fs[1](x)) * len(fs) + np.sum(table["f"](x))


def lambdas_put_into_a_dict_item(x):
    d = {}
    d["f"] = lambda t: t * 2.0  # (reads no variable: a function as at module level)
    d["g"] = lambda t: np.sin(t * x[0])  # (reads `x`: a local function of the dict's item)
    return np.sum(d["f"](x) * d["g"](x))


def test_local_functions_that_read_no_variable_are_values():
    # each was "the local function `lambda_3` used as a value": it reads no variable of the
    # function, so it is made the function Python would make at module level
    x, t = np.array([0.3, 0.5, 0.7]), np.array([1.0, -0.5, 0.25])
    for f in (lambdas_passed_to_a_helper, measured_tuple_with_a_def, lambdas_put_into_a_dict_item):
        check_grad(f, (x,))
        value, tangent = jvp(f)(x, t)
        assert np.isclose(value, f(x)) and np.isclose(tangent, numeric_grad(f, (x,), 0) @ t)


def test_len_between_the_changes_of_a_loops_functions():
    # was "cannot resolve `f`": `len(fs)` between the changes is the number of items then
    x, t = np.array([0.3, 0.5, 0.7]), np.array([1.0, -0.5, 0.25])
    for f in (measured_between_changes, dict_measured_between_changes):
        check_grad(f, (x,))
        value, tangent = jvp(f)(x, t)
        assert np.isclose(value, f(x)) and np.isclose(tangent, numeric_grad(f, (x,), 0) @ t)


def test_loop_over_functions_with_break_and_continue():
    # was "cannot resolve `f`": the unrolled copies now run under flags, as the trips would;
    # the points below take the break after the first, the second copy, and none
    for x in (np.array([0.3, 0.5, 0.7]), np.array([0.05, 2.0, 0.3]), np.array([-0.9, 0.2, 0.1])):
        for f in (leaves_early, skips_and_leaves):
            check_grad(f, (x,))
