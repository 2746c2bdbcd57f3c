"""Python's sharing semantics (issue 13, items 2 and 3): an update in place of an object that
another variable, a container or a called helper's parameter also holds is seen through all of
them, exactly as Python computes it on copies of the arguments; what srcgrad cannot follow (a
view of the updated array) is an error, never the unshared answer."""

import collections
import dataclasses
import re
import types

import numpy as np
import pytest
from gradcheck import check_grad
from sharing_check import check_all

from srcgrad import SrcgradError, grad, hessian, jvp, value_and_grad
from srcgrad.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.0, 2.0])


# --- helpers that change what they are given -------------------------------------------------

def scale(v, s):
    v *= s


def scales_a_copy(x):
    y = x.copy()
    scale(y, 3.0)
    return np.sum(y ** 2)


def put_square(out, x):
    out[0] = x[0] ** 2


def helper_writes_an_element(x):
    y = np.zeros(3)
    put_square(y, x)
    return np.sum(y * x)


def push(items, v):
    items.append(v)


def helper_appends(x):
    hs = [x]
    push(hs, x ** 2)
    return np.sum(hs[0] * hs[1])


def bump(v):
    v += 1.0
    return v


def helper_updates_a_number(x):
    a = x[0] * 2.0  # a NumPy scalar: += rebinds the helper's name, the caller's stays
    b = bump(a)
    return a * b


def helper_updates_an_array_and_returns_it(x):
    a = x * 2.0
    b = bump(a)  # the same array, updated: a sees it
    return np.sum(a * b)


def helper_rebinds_after_updating(x):
    def twice_plus_one(v):
        v += 1.0
        v = v * 2.0
        return v

    a = x * 1.0
    b = twice_plus_one(a)
    return np.sum(a * b)


def helper_mutates_its_argument_list(x):
    def grow(items):
        items.insert(0, items[-1] * 2.0)
        items.reverse()
        return len(items)

    hs = [x, x ** 2]
    n = grow(hs)
    return np.sum(hs[0] + hs[2]) * n


# --- arrays shared through variables, containers and tuple targets --------------------------

def list_holds_the_array(x):
    a = x * 2.0
    L = [a]
    a += 1.0
    return np.sum(L[0] * x)


def dict_holds_the_array(x):
    h = x * 2.0
    d = {"h": h}
    h += 1.0
    return np.sum(d["h"] * x)


def tuple_targets_share(x):
    a, b = x, x
    a += 1.0
    return np.sum(a * b)


def history_of_an_accumulator(x):
    acc = np.zeros(3)
    hist = []
    for _ in range(3):
        acc += x
        hist.append(acc)
    return np.sum(hist[0] * x)


def history_of_a_number(x):
    acc = 0.0
    hist = []
    for i in range(3):
        acc += x[i]
        hist.append(acc)
    return hist[0] * hist[1] + hist[2]


def history_starting_from_a_number(x):
    acc = 0.0
    hist = []
    for i in range(3):
        acc += x * (i + 1.0)  # a new array the first time, then updated in place
        hist.append(acc)
    return np.sum(hist[0] * x)


def nested_container(x):
    a = x * 1.0
    L = [[a, 1.0], {"k": a}]
    a *= x
    return np.sum(L[0][0] + L[1]["k"] * L[0][1])


def tuple_holder(x):
    a = np.sin(x)
    t = (a, 2.0)
    a -= x
    return np.sum(t[0] * t[1])


def alias_bound_in_a_branch(x):
    a = x * 1.0
    if x[0] > 0:
        b = a
    else:
        b = a * 1.0
    a += x
    return np.sum(a * b)


def element_taken_out_of_a_list(x):
    L = [x * 2.0, x * 3.0]
    e = L[1]
    e += 1.0
    return np.sum(L[1] * x)


def alias_of_an_argument(x):
    y = x
    y /= 2.0
    return np.sum(x * y)


def loop_over_an_updated_array(x):
    s = 0.0
    for e in x:
        x += 0.5 * e
        s = s + e * e
    return s + np.sum(x)


# --- holders that are structures, read before and after the update (tests/mutate_code.py on
# runtime/sharing.py: each kills mutants of the path search and the rebuilding of holders) ----

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass(eq=False)
class Layer:
    w: np.ndarray
    c: float


def list_held_at_two_paths(x):
    # `inner` is found at L[0] and at L[1]: both see the update (the search once skipped a
    # container met a second time, and L[1][0] kept the old value)
    a = x * 2.0
    inner = [a]
    L = [inner, inner]
    a += x
    return np.sum(L[1][0] * x + L[0][0])


def namedtuple_holder(x):
    a = np.sin(x)
    t = Pair(a, 2.0)
    a -= x
    return np.sum(t.a * t.b)


def dict_holds_it_twice(x):
    a = x * 2.0
    d = {"h": a, "k": [a, 3.0]}
    a += x
    return np.sum(d["h"] * d["k"][0] * d["k"][1])


def dataclass_holder(x):
    a = x * 2.0
    p = Layer(a, 3.0)
    a += x
    return np.sum(p.w * p.c * x)


def namespace_holder(x):
    a = x * 2.0
    p = types.SimpleNamespace(w=a, c=3.0)
    a *= x
    return np.sum(p.w * p.c)


def object_in_a_list(x):
    a = x * 2.0
    L = [1.0, Layer(a, 3.0)]
    a += x
    return np.sum(L[1].w * L[1].c * x)


def object_read_before_and_after(x):
    a = x * 2.0
    p = Layer(a, 3.0)
    s = np.sum(p.w * x)
    a += x
    return s + np.sum(p.w * p.c * x)


def constant_holder_of_two(x):
    a = np.ones(3)
    L = [a, np.full(3, 2.0)]  # no tangent: put_shared's makes one of zeros
    a += x
    return np.sum(L[0] * L[1] * x)


def constant_alias_in_a_branch(x):
    a = x * 1.0
    b = np.ones(3)
    if x[0] > 1.0:  # not taken at X: b holds nothing of a
        b = a
    a += x
    return np.sum(a * b)


def dict_read_before_and_after(x):
    a = x * 2.0
    d = {"h": a, "k": x * 3.0}
    s = np.sum(d["h"] * d["k"])
    a += x
    return s + np.sum(d["h"] * d["k"])


def list_read_before_and_after(x):
    a = x * 2.0
    L = [a, x * 3.0]
    s = np.sum(L[0] * L[1])
    a += x
    return s + np.sum(L[0] * L[1])


def tuple_read_before_and_after(x):
    a = x * 2.0
    t = (a, x * 3.0)
    s = np.sum(t[0] * t[1])
    a += x
    return s + np.sum(t[0] * t[1])


def object_holding_it_twice(x):
    # two paths under one field (.w[0], .w[1]): their first steps are equal Fields
    a = x * 2.0
    p = types.SimpleNamespace(w=[a, a], c=3.0)
    a += x
    return np.sum(p.w[0] * p.w[1] * p.c)


STRUCTURE_CASES = [
    list_held_at_two_paths, object_holding_it_twice, namedtuple_holder, dict_holds_it_twice,
    dataclass_holder, namespace_holder, object_in_a_list, object_read_before_and_after,
    constant_holder_of_two, constant_alias_in_a_branch, dict_read_before_and_after,
    list_read_before_and_after, tuple_read_before_and_after,
]


@pytest.mark.parametrize("f", STRUCTURE_CASES, ids=lambda f: f.__name__)
def test_sharing_through_structures_matches_python_on_copies(f):
    check_all(f, (X,))


@pytest.mark.parametrize("f", [constant_alias_in_a_branch, dict_read_before_and_after,
                               list_read_before_and_after, tuple_read_before_and_after],
                         ids=lambda f: f.__name__)
def test_reverse_over_reverse_through_a_shared_update(f):
    # the adjoints of put_shared's adjoints (put_at_paths); with no path (the branch not
    # taken) put_at_paths returned None, which the generated sweep added to an array
    w = np.array([1.0, -2.0, 0.5])

    def g(x):
        return np.sum(grad(f)(x) * w * x)

    check_grad(g, (X,))


def view_in_a_list(x):
    a = x * 1.0
    L = [1.0, a[1:]]
    a += 1.0
    return np.sum(L[1] * x[1:])


def view_in_a_field(x):
    a = x * 1.0
    p = types.SimpleNamespace(v=a[1:])
    a += 1.0
    return np.sum(p.v * x[1:])


def list_holding_itself(x):
    a = x * 2.0
    L = [a]
    L.append(L)
    a += x
    return np.sum(L[1][0] * x)


def test_a_refused_update_names_the_path_of_the_view():
    with pytest.raises(SrcgradError, match=r"and `L\[1\]` shares memory"):
        grad(view_in_a_list)(X)
    with pytest.raises(SrcgradError, match=r"and `p\.v` shares memory"):
        grad(view_in_a_field)(X)


def test_an_update_seen_through_a_container_that_holds_itself_is_refused():
    # put_shared rebuilds L as a new list, whose L[1] would still be the old L: jvp gave the
    # old value of L[1][0] (10.5 for Python's 15.75); now refused in every mode
    for run in (lambda: jvp(list_holding_itself)(X, X), lambda: grad(list_holding_itself)(X)):
        with pytest.raises(SrcgradError, match=r"`L\[1\]` is `L` itself"):
            run()


def tuple_holder_returned(x):
    a = np.sin(x)
    t = (a, 2.0)
    a -= x
    return t


def test_a_tuple_that_sees_an_update_stays_a_tuple():
    # put_shared rebuilds the tuple holder: a tuple again, as Python's t is
    value, tangent = jvp(tuple_holder_returned)(X, np.ones(3))
    assert type(value) is tuple and type(tangent) is tuple
    np.testing.assert_allclose(value[0], np.sin(X) - X, rtol=1e-12)
    np.testing.assert_allclose(tangent[0], np.cos(X) - 1.0, rtol=1e-12)


def test_an_update_of_an_arguments_field_leaves_the_argument_alone():
    # put_shared gives an object a copy with the field replaced, never the caller's object
    def f(x, p):
        a = p.w
        a += x
        return np.sum(p.w * x)

    w = np.array([1.0, -2.0, 3.0])
    p = Layer(w.copy(), 2.0)
    value, g = value_and_grad(f)(X, p)  # f = sum((w + x) * x)
    np.testing.assert_allclose(value, np.sum((w + X) * X), rtol=1e-12)
    np.testing.assert_allclose(g, w + 2 * X, rtol=1e-12)
    np.testing.assert_array_equal(p.w, w)
    assert jvp(f)(X, p, np.ones(3))[1] == pytest.approx(np.sum(w + 2 * X), rel=1e-12)
    np.testing.assert_array_equal(p.w, w)


CASES = [
    scales_a_copy, helper_writes_an_element, helper_appends, helper_updates_a_number,
    helper_updates_an_array_and_returns_it, helper_rebinds_after_updating,
    helper_mutates_its_argument_list, list_holds_the_array, dict_holds_the_array,
    tuple_targets_share, history_of_an_accumulator, history_of_a_number,
    history_starting_from_a_number, nested_container, tuple_holder, alias_bound_in_a_branch,
    element_taken_out_of_a_list, alias_of_an_argument, loop_over_an_updated_array,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_sharing_matches_python_on_copies(f):
    check_all(f, (X,))


def test_hessian_through_a_shared_update():
    h = hessian(list_holds_the_array)(X)
    np.testing.assert_allclose(h, 4.0 * np.eye(3), atol=1e-12)  # f = sum((2x + 1) x)


# --- what cannot be followed is refused -------------------------------------------------------

def view_of_the_updated_array(x):
    a = x * 1.0
    v = a[1:]
    a += 1.0
    return np.sum(v * x[1:])


def test_a_view_of_an_updated_array_is_an_error():
    with pytest.raises(SrcgradError, match="shares memory"):
        grad(view_of_the_updated_array)(X)


def element_then_write(x):
    a = x[0]  # a number for a vector, a view of the first row for a matrix
    x[1] = np.tanh(x[1])
    return np.sum(np.sin(a)) + np.sum(x)


def element_of_a_list_then_write(x, L):
    a = L[0]  # a number: the list itself is no array to share memory with
    L[1] = np.tanh(L[1]) * x
    return np.sum(np.sin(a) * x) + np.sum(L[1])


def list_holding_a_constant_that_changes(x):
    c = np.ones(3)
    L = [x * 1.0, c]
    c += 1.0  # L sees the new c (put_shared), whose tangent is zeros of its shape
    return L


def test_the_tangent_of_a_shared_constant_has_its_shape():
    out, tangent = jvp(list_holding_a_constant_that_changes)(X, np.ones(3))
    np.testing.assert_array_equal(out[1], np.full(3, 2.0))
    assert isinstance(tangent[1], np.ndarray) and tangent[1].shape == (3,)
    assert not np.any(tangent[1]) and np.array_equal(tangent[0], np.ones(3))


def test_an_element_read_before_a_write_is_checked_at_run_time():
    # which `x[0]` is a view is known only at run time (runtime.check_not_view)
    v = np.array([0.3, -0.2, 0.5])
    want = np.array([np.cos(0.3) + 1.0, 1 - np.tanh(-0.2) ** 2, 1.0])
    np.testing.assert_allclose(grad(element_then_write)(v), want, rtol=1e-12)
    message = ("`a` is a view of `x`, which is written into afterwards, so it changes with the "
               "write: srcgrad does not follow that. Take a copy (`a = x[...].copy()`).")
    with pytest.raises(SrcgradError, match=re.escape(message)):
        grad(element_then_write)(np.ones((2, 3)))
    got = grad(element_of_a_list_then_write)(v, [1.0, np.ones(3)])
    np.testing.assert_allclose(got, np.full(3, np.sin(1.0) + np.tanh(1.0)), rtol=1e-12)


def holder_maybe_unbound(x):
    a = x * 1.0
    for i in range(3):
        a += 1.0
        if i == 0:
            b = a
    return np.sum(b)


def holder_rebound_before_it_is_read(x):
    a = x * 1.0
    for _ in range(3):
        a += x
        b = a  # b's old value is never read again: nothing to update
    return np.sum(b * x)


def test_a_holder_rebound_before_it_is_read_needs_nothing():
    check_all(holder_rebound_before_it_is_read, (X,))


def test_a_holder_that_may_be_unbound_is_refused_at_transform_time():
    with pytest.raises(UnsupportedSyntaxError, match="may not be assigned yet") as info:
        grad(holder_maybe_unbound)
    assert "a += 1.0" in str(info.value)


def test_a_helper_called_for_its_effect_is_differentiated():
    from test_inplace_numpy import helper_result_unused  # was refused there

    check_all(helper_result_unused, (X,))


# --- element writes into an array that a container holds --------------------------------------

def write_into_listed_array(x):
    a = x * 2.0
    L = [a]
    a[0] = 5.0 * x[1]
    return np.sum(L[0] * x)


def write_into_appended_array(x):
    acc = np.zeros(3)
    hist = []
    for i in range(2):
        hist.append(acc)
        acc[i] = x[i] ** 2
    return np.sum(hist[0] * x)


def write_into_array_stored_under_a_key(x):
    h = x * 2.0
    d = {}
    d["h"] = h
    h[1] = x[0] ** 3
    return np.sum(d["h"] * x)


def write_into_inserted_array(x):
    a = x * 2.0
    L = []
    L.insert(0, a)
    a[2] = x[0] * 7.0
    return np.sum(L[0] * x)


def write_into_element_of_a_read_list(x):
    L = [x * k for k in range(3)]
    a = L[1]
    a[0] = 1.0
    return np.sum(L[1] * x)


@pytest.mark.parametrize("f, name", [
    (write_into_listed_array, "L"), (write_into_appended_array, "hist"),
    (write_into_array_stored_under_a_key, "d"), (write_into_inserted_array, "L"),
], ids=lambda v: getattr(v, "__name__", v))
def test_element_writes_into_a_held_array_are_refused(f, name):
    # were silently wrong gradients (the value was right: the write is in place)
    with pytest.raises(UnsupportedSyntaxError, match=f"`{name}` refers to the array"):
        grad(f)


def test_an_element_of_a_list_that_is_read_again_is_not_private():
    with pytest.raises(UnsupportedSyntaxError, match="writing into `a`"):
        grad(write_into_element_of_a_read_list)


# --- what is provably a copy may be written into ----------------------------------------------

def write_into_flattened(M):
    v = M.flatten()
    v[0] = 3.0
    return np.sum(v * M.ravel())


def write_into_fancy_indexed(x):
    v = x[[0, 1, 2]]
    v[0] = 3.0 * x[2]
    return np.sum(v * x)


def write_into_astype_copy(x):
    v = x.astype(float)
    v[1] = x[0] ** 2
    return np.sum(v * x)


def write_into_comprehension_item(x):
    L = [x * k for k in range(3)]
    a = L[1]
    b = L[2]
    a[0] = 1.0
    b[1] = x[2]
    return np.sum(a * x + b)


def nested_def_without_return(x):
    def fill(items, v):
        items[0] = v

    L = [x, x * 2.0]
    fill(L, x ** 2)
    return np.sum(L[0] * L[1])


@pytest.mark.parametrize("f", [write_into_fancy_indexed, write_into_astype_copy,
                               write_into_comprehension_item, nested_def_without_return],
                         ids=lambda f: f.__name__)
def test_writes_into_copies_work(f):
    check_all(f, (X,))


def test_writes_into_a_flattened_copy_work():
    check_all(write_into_flattened, (np.arange(6.0).reshape(2, 3) / 5,))


# --- more holders: the same array twice, two names updated, while loops, arguments ------------

def add_into(a, b):
    a += b
    return a


def same_array_passed_twice(x):
    y = x * 1.0
    z = add_into(y, y)
    return np.sum(z * y * x)


def two_names_both_updated(x):
    a = x * 1.0
    b = a
    a += 1.0
    b *= x
    return np.sum(a * b)


def updated_in_a_while_loop(x):
    a = x * 1.0
    L = [a]
    i = 0
    while True:
        a += x
        i += 1
        if i > 2:
            break
    return np.sum(L[0] * x)


def loop_variable_updates_list_elements(x):
    ws = [x * 1.0, x * 2.0]
    for w in ws:
        w += 1.0
    return np.sum(ws[0] * ws[1] * x)


@pytest.mark.parametrize("f", [same_array_passed_twice, two_names_both_updated,
                               updated_in_a_while_loop, loop_variable_updates_list_elements],
                         ids=lambda f: f.__name__)
def test_more_holders(f):
    check_all(f, (X,))


def updates_arrays_of_a_list_argument(x, ws):
    for w in ws:
        w *= x
    return np.sum(ws[0] + ws[1])


def updates_an_array_of_a_dict_argument(x, p):
    w = p["w"]
    w += x
    return np.sum(p["w"] * x)


def test_updates_of_arrays_inside_arguments_stay_inside_the_call():
    # Python would change the caller's arrays; srcgrad computes what f does on copies of them
    check_all(updates_arrays_of_a_list_argument, (X, [X * 1.0, X * 3.0]))
    check_all(updates_an_array_of_a_dict_argument, (X, {"w": X * 2.0}))


def write_after_asarray(x):
    a = x * 2.0
    r = np.asarray(a)  # a itself
    a[0] = x[1] ** 2
    return np.sum(r * x)


def write_after_reshape(x):
    a = x * 2.0
    r = np.reshape(a, (3, 1))  # a view of a
    a[0] = x[1] ** 2
    return np.sum(r[:, 0] * x)


@pytest.mark.parametrize("f", [write_after_asarray, write_after_reshape],
                         ids=lambda f: f.__name__)
def test_writes_seen_through_a_numpy_function_view_are_refused(f):
    # were silently wrong gradients: only the method forms (a.reshape) were recognised
    with pytest.raises(UnsupportedSyntaxError, match="`r` refers to the array in `a`"):
        grad(f)


def appended_in_a_tuple(x):
    w = x * 2.0
    hs = [(0, x)]
    hs.append((1, w))
    w[0] = x[1] ** 2
    return np.sum(hs[1][1] * x)


def displayed_in_a_tuple(x):
    w = x * 2.0
    hs = [(1, w), x]
    w[0] = x[1] ** 2
    return np.sum(hs[0][1] * x)


def in_a_dict_of_tuples(x):
    w = x * 2.0
    d = {"a": (w, 1.0)}
    w[0] = x[1] ** 2
    return np.sum(d["a"][0] * x)


def in_a_list_in_a_list(x):
    w = x * 2.0
    hs = [[w]]
    w[0] = x[1] ** 2
    return np.sum(hs[0][0] * x)


@pytest.mark.parametrize("f", [appended_in_a_tuple, displayed_in_a_tuple, in_a_dict_of_tuples,
                               in_a_list_in_a_list], ids=lambda f: f.__name__)
def test_writes_seen_through_a_container_inside_a_container_are_refused(f):
    # were silently wrong gradients (on 690f070 each of the four disagreed with central
    # differences): only a container holding the array itself was followed, not one holding a
    # tuple, list or dict that holds it
    with pytest.raises(UnsupportedSyntaxError, match="refers to the array in `w`"):
        grad(f)


def update_after_asarray(x):
    a = x * 2.0
    r = np.asarray(a)
    a += x
    return np.sum(r * x)


def test_an_update_seen_through_asarray_matches_python():
    check_all(update_after_asarray, (X,))


# Found by the random-program hunt: a holder that turns out not to hold the array (M here) still
# has a tangent in forward mode (was None, then a TypeError).
def update_that_no_holder_sees(x, M):
    s3 = np.sum(np.stack([x, M[-2]]))
    x += -(np.mean(M, axis=0))
    return np.sum(M) - 0.3 * np.tanh(np.sum(np.array(M))) + 0.5 * np.tanh(s3) + np.sum(x)


def test_an_update_that_no_holder_sees():
    M = np.arange(10.0).reshape(2, 5) / 10
    check_all(update_that_no_holder_sees, (np.arange(5.0) / 7, M))
    check_all(update_that_no_holder_sees, (np.arange(5.0) / 7, M), wrt=1)


def test_dict_argument_iterated_in_forward_and_reverse_mode():
    from test_containers_mutation import iterate_dict_argument

    p = {"w": X * 2.0, "v": X - 1.0}
    _, tangent = jvp(iterate_dict_argument, wrt=1)(X, p, {"w": np.ones(3), "v": np.ones(3)})
    assert tangent == pytest.approx(2 * np.sum(X))
    g = grad(iterate_dict_argument, wrt=1)(X, p)
    np.testing.assert_allclose(g["w"], X)
    np.testing.assert_allclose(g["v"], X)


# Found by the random-program hunt: a variable assigned only on the way out of a loop (a
# `return` inside it) cannot hold the array when a later iteration updates it (was refused).
def returns_from_a_loop_that_updates(x, a):
    for i in range(3):
        if a > 5.0:
            return a
        a *= np.tanh(x[i]) + 2.0
    return a * np.sum(x)


def test_a_value_returned_from_inside_the_loop_is_no_holder():
    check_all(returns_from_a_loop_that_updates, (X, 0.7), wrt=1)
    check_all(returns_from_a_loop_that_updates, (X, 0.7), wrt=0)


class _Cell:
    def __init__(self, w):
        self.w = w


class _Holds:
    def __init__(self, cell):
        self.a = cell  # (inlined: `cell_2 = cell; hk = set_field(hk, "a", cell_2)`)


def _held_by_a_built_object_then_written(x):
    cell = _Cell(x[0])
    hk = _Holds(cell)
    cell.w = x[1]  # hk.a is cell: Python's hk.a.w is x[1]
    return np.sum(hk.a.w * x)


def _held_through_a_rename_then_written(x):
    L = [x[0]]
    L2 = L
    M = [L2]
    L.append(x[1])  # M[0] is L: Python's sum is x[0] + x[1]
    return sum(M[0]) * np.sum(x)


@pytest.mark.parametrize("f, name", [
    (_held_by_a_built_object_then_written, "hk"), (_held_through_a_rename_then_written, "M"),
], ids=lambda v: getattr(v, "__name__", v))
def test_a_holder_of_a_renamed_object_written_afterwards_is_refused(f, name):
    # were silently wrong values and gradients (0.36 against Python's -0.252 for the first at
    # x = (0.3, -0.7, 0.5, 1.1)): the holder was made from another name for the object
    with pytest.raises(UnsupportedSyntaxError, match=f"`{name}` refers to the array") as e:
        grad(f)(X)
    assert e.value.lineno == f.__code__.co_firstlineno + {"hk": 2, "M": 3}[name]
