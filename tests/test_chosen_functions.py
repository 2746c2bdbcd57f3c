"""Which function is called depends on a value: a parameter tested (`g is None`,
`callable(g)`, `g or np.sin`) and assigned a function, a parameter assigned another in a
branch on a run-time value (normalize/chosen.py); an argument's field the function writes,
then calls (normalize/callables.py). Each gradient, value and tangent against
central differences and plain Python, for no function passed (None), a ufunc, a lambda."""

import copy
import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest
from gradcheck import numeric_grad
from second_order_check import hessian_by_differences

from srcgrad import SrcgradError, grad, hvp, jvp, value_and_grad, vjp

X = np.array([0.3, -0.2, 0.5])
T = np.array([0.1, 0.7, -0.3])
PASSED = [(), (np.cos,), (lambda t: t * t,)]


def assigned_if_none(x, g=None):
    if g is None:
        g = np.sin
    return np.sum(g(x))


def chosen_by_an_if_expression(x, g=None):
    h = np.sin if g is None else g
    return np.sum(h(x) * x)


def chosen_by_or(x, g=None):
    g = g or np.sin
    return np.sum(g(x))


def chosen_by_callable(x, g=None):
    if not callable(g):
        g = np.tanh
    return np.sum(g(x))


def helper(g, v):
    return np.sum(g(v) * v)


def chosen_then_given_to_a_helper(x, g=None):
    if g is None:
        g = np.sin
    return helper(g, x)


def chooses_its_own(v, g=None):
    if g is None:
        g = np.sin
    return np.sum(g(v))


def helper_that_chooses(x, g=None):
    return chooses_its_own(x, g) + chooses_its_own(x * 2.0)


FORMS = [assigned_if_none, chosen_by_an_if_expression, chosen_by_or, chosen_by_callable,
         chosen_then_given_to_a_helper, helper_that_chooses]


@pytest.mark.parametrize("f", FORMS)
def test_a_parameter_tested_then_called(f):
    # refused before ("calling the parameter `g`, which the function also assigns", "cannot
    # resolve `h`", "cannot resolve `g_2`"): the derivative is specialized per function
    # passed, None included, and each test of it decided
    for passed in PASSED:
        value, g = value_and_grad(f)(X, *passed)
        assert np.isclose(value, f(X.copy(), *passed))
        np.testing.assert_allclose(g, numeric_grad(f, [X, *passed], 0), rtol=1e-6, atol=1e-8)
        _, tangent = jvp(f)(X, *passed, T)
        assert np.isclose(tangent, np.dot(g, T))


def test_second_order_of_a_parameter_tested_then_called():
    for passed in PASSED:
        H = hessian_by_differences(assigned_if_none, [X, *passed])
        np.testing.assert_allclose(hvp(assigned_if_none)(X, *passed, T), H @ T, rtol=1e-5,
                                   atol=1e-6)


def called_then_assigned(x, g):
    a = g(x)
    g = lambda v: v * 3.0  # noqa: E731
    return np.sum(a + g(x))


def assigned_on_a_run_time_branch(x, g=np.sin):
    if x[0] > 0:
        g = np.cos
    return np.sum(g(x))


def chosen_then_assigned_in_a_loop(x, g=None):
    if g is None:
        g = np.sin
    s = 0.0
    for k in range(3):
        if x[k] > 0:
            g = np.tanh
        s = s + np.sum(g(x))
    return s


@pytest.mark.parametrize("f", [called_then_assigned, assigned_on_a_run_time_branch,
                               chosen_then_assigned_in_a_loop])
def test_a_parameter_assigned_another_function(f):
    # refused before ("calling the parameter `g`, which the function also assigns"): each
    # call calls what the assignment that ran last bound
    for x in (X, -X):
        for passed in [(np.sin,), (np.exp,)]:
            value, g = value_and_grad(f)(x, *passed)
            assert np.isclose(value, f(x.copy(), *passed))
            np.testing.assert_allclose(g, numeric_grad(f, [x, *passed], 0), rtol=1e-6,
                                       atol=1e-8)


def checked_after_a_run_time_branch(x, g=None):
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    return np.sum(g(x))


def chosen_by_or_after_a_run_time_branch(x, g=None):
    if x[0] > 0:
        g = np.cos
    g = g or np.sin
    return np.sum(g(x) * x)


def chosen_by_callable_after_a_run_time_branch(x, g=None):
    if x[0] > 0:
        g = np.cos
    if not callable(g):
        g = np.tanh
    return np.sum(g(x) * x)


def reset_in_a_loop_after_a_test(x, g=None):
    s = 0.0
    for k in range(3):
        if g is None:
            g = np.sin
        s = s + np.sum(g(x) * x[k])
        if x[k] > 0:
            g = None
    return s


def called_only_where_not_none(x, g=None):
    if x[1] > 0:
        g = np.cos
    if g is not None and x[0] > 0:
        return np.sum(g(x))
    return np.sum(x * x)


def given_to_a_helper_after_a_run_time_branch(x, g=None):
    # (the path where `g` holds None is dispatched too: the helper, given None, raises
    # Python's TypeError where it calls it)
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    return helper(g, x)


def given_to_a_helper_then_chosen_again(x, g=None):
    # (`g`, decided, given to a helper; then None or np.tanh on a run-time branch)
    g = g or np.cos
    s = helper(g, x * x[2])
    if x[0] < 0.1:
        g = None
    else:
        g = np.tanh
    g = g or np.exp
    return s + np.sum(g(x))


TESTED_AFTER = [given_to_a_helper_then_chosen_again, checked_after_a_run_time_branch,
                chosen_by_or_after_a_run_time_branch,
                chosen_by_callable_after_a_run_time_branch, reset_in_a_loop_after_a_test,
                called_only_where_not_none, given_to_a_helper_after_a_run_time_branch]


@pytest.mark.parametrize("f", TESTED_AFTER)
def test_a_test_after_a_run_time_assignment(f):
    # refused before ("test `g is None` before assigning it in such a branch"): a flag says
    # whether the parameter holds None, set where it is assigned; each test reads it, and
    # each call calls what the assignment that ran last bound
    for x in (X, -X):
        for passed in PASSED:
            value, g = value_and_grad(f)(x, *passed)
            assert np.isclose(value, f(x.copy(), *passed))
            np.testing.assert_allclose(g, numeric_grad(f, [x, *passed], 0), rtol=1e-6,
                                       atol=1e-8)
            if passed == ():  # (forward mode: one specialization is enough)
                _, tangent = jvp(f)(x, *passed, T)
                assert np.isclose(tangent, np.dot(g, T))


def test_second_order_of_a_test_after_a_run_time_assignment():
    f = checked_after_a_run_time_branch
    for x, passed in [(X, ()), (-X, ()), (-X, (np.exp,))]:
        H = hessian_by_differences(f, [x, *passed])
        np.testing.assert_allclose(hvp(f)(x, *passed, T), H @ T, rtol=1e-5, atol=1e-6)


def calls_none_on_a_run_time_branch(x, g=np.tanh):
    if x[0] > 0:
        g = None
    return np.sum(g(x))


def given_none_on_a_run_time_branch(x, g=np.tanh):
    if x[0] > 0:
        g = None
    return helper(g, x)


@pytest.mark.parametrize("f", [calls_none_on_a_run_time_branch, given_none_on_a_run_time_branch])
def test_a_call_of_none_raises_pythons_error_where_it_runs(f):
    np.testing.assert_allclose(grad(f)(-X), numeric_grad(f, [-X], 0), rtol=1e-6, atol=1e-8)
    for passed in [(), (None,)]:
        with pytest.raises(TypeError, match="'NoneType' object is not callable"):
            f(X, *passed)
        with pytest.raises(TypeError, match="'NoneType' object is not callable"):
            grad(f)(X, *passed)


def chosen_into_another_name(x, g=None):
    if x[0] > 0:
        g = np.cos
    h = np.sin if g is None else g
    return np.sum(h(x) * x)


def test_a_choice_after_a_run_time_assignment_given_another_name():
    # (`h = g` on one path: `rebound` dispatches the copy, then the calls of `h`)
    test_a_test_after_a_run_time_assignment(chosen_into_another_name)
    H = hessian_by_differences(chosen_into_another_name, [-X])
    np.testing.assert_allclose(hvp(chosen_into_another_name)(-X, T), H @ T, rtol=1e-5,
                               atol=1e-6)


def kept_in_a_list(x, g=None):
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    fs = [g]
    return np.sum(g(x)) * len(fs)


def kept_in_a_list_then_assigned(x, g=None):
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    fs = [g]
    if x[1] > 0:
        g = np.tanh
    return np.sum(g(x)) * len(fs)


def test_a_parameter_read_otherwise_then_assigned_again_is_refused():
    # (`kept_in_a_list` alone works since objects14i's chosen_held: tests/test_chosen_held.py)
    with pytest.raises(SrcgradError, match="instead of holding it in a list") as info:
        grad(kept_in_a_list_then_assigned)(X)
    assert info.value.filename == __file__
    assert "fs = [g]" in str(info.value)
    for passed in PASSED:
        value, g = value_and_grad(kept_in_a_list)(X, *passed)
        assert np.isclose(value, kept_in_a_list(X.copy(), *passed))
        np.testing.assert_allclose(g, numeric_grad(kept_in_a_list, [X, *passed], 0), rtol=1e-6,
                                   atol=1e-9)


def chosen_into_itself(x, g=None):
    if x[0] > 0:
        g = np.cos
    g = np.sin if g is None else g
    return np.sum(g(x))


def decided_then_assigned_on_a_run_time_branch(x, g=None):
    if g is None:
        g = np.sin
    if x[0] > 0:
        g = np.cos
    return np.sum(g(x))


def kept_by_name(x, g=None):
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    h = g
    return np.sum(h(x)) * len([np.sin])


@pytest.mark.parametrize("f", [chosen_into_itself, decided_then_assigned_on_a_run_time_branch,
                               kept_by_name])
def test_the_workaround_of_that_refusal_works(f):
    # docs/supported.md: "call it, pass it or copy it where it is named"; the forms the
    # refusal before named: "assign it to `g` itself", "decide the default first"
    for x in (X, -X):
        for passed in PASSED:
            value, g = value_and_grad(f)(x, *passed)
            assert np.isclose(value, f(x.copy(), *passed))
            np.testing.assert_allclose(g, numeric_grad(f, [x, *passed], 0), rtol=1e-6,
                                       atol=1e-8)


def default_function(x, g=np.sin):
    return np.sum(g(x) * x)


def test_a_seed_or_tangent_is_no_argument_of_the_function():
    # `jvp(f)(x, t)` of `def f(x, g=np.sin)` took the tangent for `g` ("`g` is called as a
    # function here"), and `vjp(f)(x, 1.0)` alike: the default is what the call passes
    g = grad(default_function)(X)
    np.testing.assert_allclose(g, numeric_grad(default_function, [X], 0), rtol=1e-6, atol=1e-8)
    value, tangent = jvp(default_function)(X, T)
    assert np.isclose(value, default_function(X)) and np.isclose(tangent, np.dot(g, T))
    np.testing.assert_allclose(vjp(default_function)(X, 1.0), g)


def written_then_called(x, cfg):
    cfg.act = np.sin
    return np.sum(cfg.act(x) * x)


def called_written_called(x, cfg):
    a = cfg.act(x)
    cfg.act = np.sin
    return np.sum(a + cfg.act(x))


def _install(c):
    c.act = np.cos


def written_by_a_helper(x, cfg):
    _install(cfg)
    return np.sum(cfg.act(x))


@dataclasses.dataclass
class Config:
    w: np.ndarray
    act: object


def _fresh(cfg):
    return copy.copy(cfg)


@pytest.mark.parametrize("f", [written_then_called, called_written_called, written_by_a_helper])
@pytest.mark.parametrize("cfg", [SimpleNamespace(act=np.tanh), Config(X * 2.0, np.tanh)],
                         ids=["namespace", "dataclass"])
def test_an_arguments_field_written_then_called(f, cfg):
    # refused before ("`cfg` may hold an object not built here", "does not support the method
    # `.act()`"): each read calls what the write before it stored, else the caller's; the
    # caller's object is not changed, as for any field the function writes (its copy is)
    value, g = value_and_grad(f)(X, cfg)
    assert cfg.act is np.tanh
    assert np.isclose(value, f(X, _fresh(cfg)))
    np.testing.assert_allclose(g, numeric_grad(lambda v: f(v, _fresh(cfg)), [X], 0), rtol=1e-6,
                               atol=1e-8)
    assert np.isclose(jvp(f)(X, cfg, T)[1], np.dot(g, T))


def written_in_a_branch(x, cfg, flag):
    if flag:
        cfg.act = np.sin
    return np.sum(cfg.act(x))


def named_then_chosen_in_a_branch(x, cfg, flag):
    h = cfg.act
    if flag:
        h = np.sin
    return np.sum(h(x))


def test_an_arguments_field_written_in_a_branch_or_a_loop():
    # refused before ("writes fields `act` in a branch or a loop", "`cfg` may hold an object
    # not built here"): the field is followed by a name of its own, read where the function
    # starts; the caller's object is not changed
    f = written_in_a_branch
    df = value_and_grad(f)
    for flag in (True, False):
        cfg = SimpleNamespace(act=np.tanh)
        value, g = df(X, cfg, flag)
        assert cfg.act is np.tanh
        assert np.isclose(value, f(X, _fresh(cfg), flag))
        np.testing.assert_allclose(g, numeric_grad(lambda v, c=cfg, b=flag: f(v, _fresh(c), b),
                                                   [X], 0), rtol=1e-6, atol=1e-8)
    # docs/supported.md's workaround for what stays refused ("give the function a name of its
    # own") works
    f = named_then_chosen_in_a_branch
    for flag in (True, False):
        value, g = value_and_grad(f)(X, cfg, flag)
        assert np.isclose(value, f(X, cfg, flag))
        np.testing.assert_allclose(g, numeric_grad(f, [X, cfg, flag], 0), rtol=1e-6, atol=1e-8)


class WithStatic:
    f = staticmethod(np.cos)


def static_method_hidden_in_a_branch(x, flag):
    b = WithStatic()
    if flag:
        b.f = np.sin
    return np.sum(b.f(x))


def test_a_static_method_hidden_by_a_field_is_checked():
    # was silently wrong: `b.f(x)` called the class's np.cos after `b.f = np.sin` (value 1.0017
    # for Python's 0.5473, the gradient of the sum of cos), as for a plain method
    df = value_and_grad(static_method_hidden_in_a_branch)
    with pytest.raises(SrcgradError, match="holds a field `f`, which hides it"):
        df(X, True)
    value, g = df(X, False)
    assert np.isclose(value, np.sum(np.cos(X)))
    np.testing.assert_allclose(g, -np.sin(X))


def chosen_list_appended_in_a_branch(x, flag):
    fs = [np.sin] if flag else [np.cos]
    if x[0] > 0:
        fs.append(np.cos)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) * x)
    return s


def list_changed_in_a_loop(x, flag):
    fs = [np.sin]
    for k in range(2):
        if x[k + 1] > 0:
            fs.insert(0, np.exp)
    if flag:
        fs += [np.tanh]
    s = 0.0
    for g in fs:
        s = s * 0.5 + np.sum(g(x))
    return s / len(fs)


@pytest.mark.parametrize("f", [chosen_list_appended_in_a_branch, list_changed_in_a_loop])
def test_a_loop_over_functions_changed_at_run_time(f):
    # refused before ("cannot resolve `f`", "writing into `fs`, which may share memory"):
    # each trip branches on which function the item is
    df, tangent = value_and_grad(f), jvp(f)
    for x in (X, -X):
        for flag in (True, False):
            value, g = df(x, flag)
            assert np.isclose(value, f(x.copy(), flag))
            np.testing.assert_allclose(g, numeric_grad(f, [x, flag], 0), rtol=1e-6, atol=1e-8)
            assert np.isclose(tangent(x, flag, T)[1], np.dot(g, T))


class Box:
    def __init__(self, f):
        self.f = f
        self.w = 2.0


def field_chosen_in_a_branch(x, flag):
    b = Box(np.tanh)
    if flag:
        b.f = np.sin
    return np.sum(b.f(x) * b.w)


def field_changed_in_a_loop(x, flag):
    b = Box(np.tanh)
    s = 0.0
    for k in range(3):
        s = s + np.sum(b.f(x))
        if x[k] > 0 and flag:
            b.f = np.cos
    return s


def field_read_by_a_lambda(x, flag):
    b = Box(np.tanh)
    if flag:
        b.f = np.cos
    h = lambda t: b.f(t)  # noqa: E731
    b.f = np.sin
    return np.sum(h(x))


@pytest.mark.parametrize("f", [field_chosen_in_a_branch, field_changed_in_a_loop])
def test_a_field_of_an_object_built_here_written_in_a_branch_or_a_loop(f):
    # refused before ("writes fields `f` in a branch or a loop"): the field is followed by a
    # name of its own, and each call calls what the write that ran last stored
    df = value_and_grad(f)
    for x in (X, -X):
        for flag in (True, False):
            value, g = df(x, flag)
            assert np.isclose(value, f(x.copy(), flag))
            np.testing.assert_allclose(g, numeric_grad(f, [x, flag], 0), rtol=1e-6, atol=1e-8)
    # a lambda reads the field when it is called (the last write): not followed, refused
    with pytest.raises(SrcgradError, match="writes fields `f` in a branch"):
        grad(field_read_by_a_lambda)(X, True)


def chooses_after_a_run_time_branch(v, g=None):
    if v[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    return np.sum(g(v) * v)


def helper_testing_after_a_run_time_branch(x, g=None):
    return chooses_after_a_run_time_branch(x, g) + chooses_after_a_run_time_branch(-x)


def test_a_helper_testing_its_parameter_after_a_run_time_assignment():
    # (the helper's parameter, given None or a function, is flagged and copied to a local
    # there too; refused before: "cannot resolve `g`")
    test_a_test_after_a_run_time_assignment(helper_testing_after_a_run_time_branch)
