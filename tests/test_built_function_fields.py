"""Functions held in fields of objects built in the function, reached by another name (issue
14): a ``SimpleNamespace(act=np.tanh, w=c)`` built here, an object passed to a helper that
calls its field (``use(b, x)`` with ``b.f(x)`` in it), a lambda reading the function's
variables put into such a field and the object passed to helpers or returned by a factory, and
``bx.f = np.sin`` before ``bx(x)`` calls ``self.f(v)`` in the object's own method. The name the
object is given (a helper's parameter, ``self``) holds the functions its fields held then;
every write of such a field must be the owner's, in its own block, and none between that and
a read through the other name, neither in a loop (else refused).
Checked against central differences in float64 (value_and_grad, jvp; hvp against differences
of the gradient); each test fails on the code before (refused: "does not support the method
`.act()`", "the local function `lambda_2` used as a value")."""

import types
from types import SimpleNamespace

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x, numeric_grad

from srcgrad import SrcgradError, UnsupportedSyntaxError, grad, jvp, value_and_grad

C = 1.3
X = np.array([0.3, -0.5, 0.7])
T = np.array([0.2, 0.4, -0.6])


class Box:
    def __init__(self, f):
        self.f = f


class Layer:
    def __init__(self, f):
        self.f = f

    def __call__(self, v):
        return self.f(v)


def use(b, x):
    return np.sum(b.f(x) ** 2)


def use_act(ns, x):
    return np.sum(ns.act(x) * x)


def namespace_of_two_fields(c, x):
    ns = types.SimpleNamespace(act=np.tanh, w=c)
    return np.sum(ns.act(x) ** 2) * ns.w


def namespace_passed_to_a_helper(c, x):
    ns = types.SimpleNamespace(act=np.tanh, w=c)
    return use_act(ns, x) * ns.w


def capturing_lambda_in_a_namespace_passed(c, x):
    ns = types.SimpleNamespace(act=lambda t: c * np.sin(t))
    return use_act(ns, x)


def capturing_lambda_in_a_field_passed_twice(c, x):
    b = Box(np.sin)
    b.f = lambda t: c * t * t
    return use(b, x) + use(b, 2.0 * x)


def make_box(c):
    b = Box(np.sin)
    b.f = lambda t: c * t
    return b


def returned_by_a_factory(c, x):
    b = make_box(c)
    return np.sum(b.f(x) * x)


def make_namespace(c):
    return SimpleNamespace(act=lambda t: c * np.tanh(t))


def namespace_returned_by_a_factory(c, x):
    # (the helper's temporary for the display is named `SimpleNamespace`, as the module's
    # global is: it was taken for the class)
    ns = make_namespace(c)
    return np.sum(ns.act(x) * x)


def rebound_then_called_in_its_own_method(c, x):
    bx = Layer(np.tanh)
    bx.f = np.sin
    return np.sum(bx(x)) * c


def capturing_lambda_called_in_its_own_method(c, x):
    bx = Layer(np.tanh)
    bx.f = lambda t: c * np.sin(t)
    return np.sum(bx(x) ** 2)


def written_after_it_is_passed(c, x):
    b = Box(np.sin)
    s = use(b, x)
    b.f = np.tanh
    return (s + np.sum(b.f(x))) * c


def rebound_between_two_calls_of_its_method(c, x):
    bx = Layer(np.tanh)
    y = bx(x)
    bx.f = np.sin
    return np.sum(bx(x) * y) * c


CASES = [namespace_of_two_fields, namespace_passed_to_a_helper,
         capturing_lambda_in_a_namespace_passed, capturing_lambda_in_a_field_passed_twice,
         returned_by_a_factory, namespace_returned_by_a_factory,
         rebound_then_called_in_its_own_method,
         capturing_lambda_called_in_its_own_method, written_after_it_is_passed,
         rebound_between_two_calls_of_its_method]


@pytest.mark.parametrize("f", CASES)
def test_a_function_field_of_an_object_built_here(f):
    check_both_and_jvp(f, C, X, T)


@pytest.mark.parametrize("f", [capturing_lambda_in_a_namespace_passed,
                               rebound_then_called_in_its_own_method])
def test_the_hvp_against_differences_of_the_gradient(f):
    check_hvp_in_x(f, C, X, T)


def written_in_a_branch_then_passed(c, x):
    b = Box(np.sin)
    if x[0] < 0:
        b.f = np.cos
    return use(b, x) * c


def written_through_another_name_in_a_branch(c, x):
    b = Box(np.sin)
    b3 = b
    if x[0] < 0:
        b3.f = np.cos
    return use(b, x) * c


def written_in_a_loop_after_the_call(c, x):
    b = Box(np.sin)
    s = 0.0
    for _ in range(2):
        s = s + use(b, x)  # (the second trip calls np.cos)
        b.f = np.cos
    return s * c


def read_again_after_a_write(c, x):
    b = Box(np.sin)
    b2 = b
    y = np.sum(b2.f(x))
    b.f = np.cos
    return (y + np.sum(b2.f(x))) * c


@pytest.mark.parametrize("f", [written_in_a_branch_then_passed,
                               written_through_another_name_in_a_branch,
                               written_in_a_loop_after_the_call])
def test_a_field_written_in_a_branch_or_a_loop_then_passed(f):
    # refused on 1378829 (tests/test_passed_function_fields.py): each statement
    # naming the object gets the write of the binding that ran last
    for x in (X, -X):
        check_both_and_jvp(f, C, x, T)


def written_in_a_branch_then_returned_by_a_helper(c, x):
    b = Box(np.sin)
    if x[0] < 0:
        b.f = np.cos
    d = _same(b)
    return use(d, x) * c


def _same(b):
    return b


@pytest.mark.parametrize("f", [read_again_after_a_write,
                               written_in_a_branch_then_returned_by_a_helper])
def test_a_field_written_where_the_order_is_not_known_is_refused(f):
    # (the other name holds the functions the fields held when it was given the object)
    with pytest.raises(UnsupportedSyntaxError, match="writes fields `f` in a branch or a loop"):
        grad(f)(C, X)


class HiddenStatic:
    @staticmethod
    def f(t):
        return np.cos(t)

    def __init__(self, f):
        self.f = f  # (hides the staticmethod: Python calls np.sin)


class HiddenClassMethod:
    @classmethod
    def f(cls, t):
        return np.cos(t)

    def __init__(self, f):
        self.f = f


def static_hidden_by_a_field(c, x):
    h = HiddenStatic(np.sin)
    return np.sum(h.f(x)) * c


def classmethod_hidden_by_a_field(c, x):
    h = HiddenClassMethod(np.sin)
    return np.sum(h.f(x)) * c


@pytest.mark.parametrize("f", [static_hidden_by_a_field, classmethod_hidden_by_a_field])
def test_a_staticmethod_or_classmethod_hidden_by_a_field_is_refused_when_it_runs(f):
    # before: the derivative called the class's method, np.cos, where Python calls the field's
    # np.sin (gradient -sin(x) * c for Python's cos(x) * c, no error)
    with pytest.raises(SrcgradError, match="holds a field `f`, which hides it"):
        grad(f, wrt=1)(C, X)


class Empty:
    pass


def written_in_a_branch_then_read(c, x):
    b = Box(np.tanh)
    if x[0] > 0.0:
        b.f = np.sin
    g = b.f
    return np.sum(g(x)) * c


def written_in_a_loop_read_on_each_trip(c, x):
    b = Box(np.tanh)
    s = 0.0
    for k in range(3):
        g = b.f
        s = s + np.sum(g(x * c) * x[k])
        if x[k] > 0.0:
            b.f = np.sin
    return s


def set_only_in_a_branch(c, x):
    b = Empty()
    if x[0] > 0.0:
        b.f = lambda t: c * np.sin(t)
    return np.sum(b.f(x) * x)


@pytest.mark.parametrize("f", [written_in_a_branch_then_read,
                               written_in_a_loop_read_on_each_trip, set_only_in_a_branch])
def test_a_field_written_in_a_branch_read_as_a_value_or_set_only_there(f):
    # refused before ("writes fields `f` in a branch or a loop"): the field is followed by a
    # name of its own, `g = b.f` a copy of it that calls what the write that ran last stored
    check_both_and_jvp(f, C, X, T)
    if f is not set_only_in_a_branch:
        check_both_and_jvp(f, C, -X, T)


def test_a_field_set_only_in_a_branch_raises_pythons_error_where_it_was_not():
    # (37e8149 refused it for every x; before that, np.sin was called where Python raises)
    check_hvp_in_x(set_only_in_a_branch, C, X, T)
    with pytest.raises(AttributeError, match="'Empty' object has no attribute 'f'"):
        set_only_in_a_branch(C, -X)
    with pytest.raises(AttributeError, match="'Empty' object has no attribute 'f'"):
        grad(set_only_in_a_branch, wrt=1)(C, -X)


def an_arguments_field_read_after_a_branch(c, x, cfg):
    if x[0] > 0.0:
        cfg.act = np.sin
    g = cfg.act
    return np.sum(g(x) * cfg.w) * c


def test_an_arguments_field_written_in_a_branch_read_as_a_value():
    f = an_arguments_field_read_after_a_branch
    for x in (X, -X):
        cfg = SimpleNamespace(act=np.tanh, w=np.array([1.0, 2.0, -0.5]))
        value, got = value_and_grad(f, wrt=(0, 1))(C, x, cfg)
        assert cfg.act is np.tanh  # (the caller's object is not changed)
        assert np.isclose(value, f(C, x, SimpleNamespace(**vars(cfg))))
        want = [numeric_grad(lambda c, v, k=cfg: f(c, v, SimpleNamespace(**vars(k))), [C, x], i)
                for i in (0, 1)]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-9)
        _, tangent = jvp(f, wrt=1)(C, x, cfg, T)
        np.testing.assert_allclose(tangent, want[1] @ T, rtol=1e-6, atol=1e-9)


def read_where_it_may_not_be_set(c, x):
    b = Empty()
    s = 0.0
    if x[1] < 0.25:
        b.f = np.cos
    else:
        g = b.f  # (Python: AttributeError here; the rest of the branch never runs)
        s = s + np.sum(g(x))
    return s + np.sum(b.f(x * c))


def copied_in_two_branches_of_a_loop(c, x):
    b = Box(np.tanh)
    s = 0.0
    for _ in range(2):
        if x[2] < 0.25:
            b.f = np.cos
        else:
            g = b.f
            s = s + np.sum(g(x * c))
        if x[0] < 0.25:
            b.f = np.sin
        else:
            g = b.f
            s = s + np.sum(g(x) * c)
    return s


def test_a_copy_of_a_field_where_it_may_not_be_set_or_in_several_branches_of_a_loop():
    # (the copy `g = b.f` where no write ran raised before the rest of its block, which
    # still named `g`: "cannot resolve `g`"; a call reaching a copy made later in the loop
    # named it before it was bound: "cannot resolve `g_4`")
    check_both_and_jvp(read_where_it_may_not_be_set, C, X, T)
    with pytest.raises(AttributeError, match="'Empty' object has no attribute 'f'"):
        grad(read_where_it_may_not_be_set, wrt=1)(C, np.array([0.3, 0.5, 0.7]))
    check_both_and_jvp(copied_in_two_branches_of_a_loop, C, X, T)


def _use_function(act, v):
    return np.sum(act(v) * v)


def field_read_into_a_name_and_passed(c, x):
    b = Box(np.tanh)
    if x[0] > 0.0:
        b.f = np.sin
    g = b.f
    return _use_function(g, x) * c


def test_the_workaround_for_an_object_passed_to_a_helper_works():
    # docs/supported.md: "read the field into a name and give the helper that"
    with pytest.raises(UnsupportedSyntaxError, match="writes fields `f` in a branch or a loop"):
        grad(written_in_a_branch_then_returned_by_a_helper)(C, X)
    for x in (X, -X):
        check_both_and_jvp(field_read_into_a_name_and_passed, C, x, T)


def written_through_another_name(c, x):
    b = Box(np.tanh)
    d = b
    if x[0] > 0.0:
        d.f = np.sin
    return np.sum(b.f(x) * d.f(x * c))


def an_arguments_field_written_through_another_name(c, x, cfg):
    d = cfg
    for k in range(2):
        if x[k] > 0.0:
            d.act = np.sin
        c = c * np.sum(cfg.act(x))
    return c


def test_a_field_written_in_a_branch_through_another_name_for_the_object():
    # (refused before: "writes fields `f` in a branch or a loop"): `d = b`, read only as
    # `d.f`, is `b` itself
    for x in (X, -X):
        check_both_and_jvp(written_through_another_name, C, x, T)
    f = an_arguments_field_written_through_another_name
    for x in (X, -X):
        cfg = SimpleNamespace(act=np.tanh)
        value, got = value_and_grad(f, wrt=1)(C, x, cfg)
        assert cfg.act is np.tanh  # (the caller's object is not changed)
        assert np.isclose(value, f(C, x, SimpleNamespace(act=np.tanh)))
        want = numeric_grad(lambda v: f(C, v, SimpleNamespace(act=np.tanh)), [x], 0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def built_in_a_loop(c, x):
    s = 0.0
    for _ in range(2):
        b = Box(np.sin)
        s = s + np.sum(b.f(x))
        b.f = np.cos
        s = s + np.sum(b.f(x * c))
    return s


def built_in_a_branch(c, x):
    s = 0.0
    if x[0] > 0:
        b = Box(np.sin)
        b.f = np.tanh
        s = np.sum(b.f(x * c))
    return s


@pytest.mark.parametrize("f", [built_in_a_loop, built_in_a_branch])
def test_an_object_built_in_a_loop_or_a_branch_its_field_written_there(f):
    # refused on 1378829 ("writes fields `f` ... or elsewhere, more than once"): the writes of
    # the block that builds the object, in order, are what its reads see
    for x in (X, -X):
        check_both_and_jvp(f, C, x, T)
