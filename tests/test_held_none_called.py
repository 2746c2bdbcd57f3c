"""A parameter that may be None where it is held in a list, tuple or dict (``def f(c, x,
g=None): if x[1] > 0: g = np.cos``, then ``fs = [g, np.sin]``): the copy of the rest of the
block for None (normalize/chosen_held.py) calls the None item, which was refused at transform
time for the whole function, also for the inputs where Python takes the other path and runs.
A call of an item known to hold None now raises Python's TypeError where it runs
(``StaticValues.holds_none``, ``chosen_tests.raising_call``); a loop over a tuple of functions
and None (a global's too) is unrolled like one of functions.

And a list or dict of functions a helper changes in place (``fs[0] = np.tanh``,
``fs.append(np.tanh)``, in a helper it is passed to), whose item is called after: srcgrad
called the function the item held before the helper ran (a wrong value and gradient without an
error); now refused at the call.

Checked against central differences in float64 (value_and_grad in both arguments, jvp); each
test fails on the code before (refused, or a wrong value)."""

from dataclasses import dataclass

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, numeric_grad

from srcgrad import NoRuleError, grad

XP = np.array([0.5, 1.2, 0.3])  # x[1] > 0: g = np.cos
XN = np.array([0.5, -1.2, 0.3])  # g stays None
T = np.array([0.3, -0.7, 0.2])


@dataclass
class Box:
    act: object


def _apply_all(fs, x):
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x))
    return s


def in_a_list(c, x, g=None):
    if x[1] > 0:
        g = np.cos
    fs = [g, np.sin]
    return _apply_all(fs, x * c)


def in_a_tuple(c, x, g=None):
    if x[1] > 0:
        g = np.cos
    pair = (np.tanh, g)
    return np.sum(pair[1](x * c))


def in_a_dict(c, x, g=None):
    if x[1] > 0:
        g = np.cos
    d = {"act": g}
    return np.sum(d["act"](x * c))


HELD = [in_a_list, in_a_tuple, in_a_dict]


@pytest.mark.parametrize("f", HELD, ids=lambda f: f.__name__)
def test_the_path_python_runs(f):
    check_both_and_jvp(f, 1.3, XP, T)


@pytest.mark.parametrize("f", HELD, ids=lambda f: f.__name__)
def test_the_none_called_raises_pythons_type_error(f):
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        f(1.3, XN)
    with pytest.raises(TypeError, match="'NoneType' object is not callable"):
        grad(f, wrt=1)(1.3, XN)


HOOKS = (np.sin, None)


def skipping_none(c, x):
    s = 0.0
    for h in HOOKS:
        if h is not None:
            s = s + np.sum(h(x * c))
    return s


def _skip_none(fs, x):
    s = 0.0
    for f in fs:
        if f is None:
            continue
        s = s + np.sum(f(x))
    return s


def a_list_with_none_passed(c, x):
    return _skip_none([np.sin, None, np.cos], x * c)


def a_tuple_parameter(x, fs):
    s = 0.0
    for f in fs:
        if f is not None:
            s = s + np.sum(f(x))
    return s


@pytest.mark.parametrize("f", [skipping_none, a_list_with_none_passed],
                         ids=lambda f: f.__name__)
def test_a_loop_over_functions_and_none_skipping_none(f):
    check_both_and_jvp(f, 1.3, XN, T)


def test_a_tuple_of_functions_and_none_passed():
    # (specialized per tuple passed, as a tuple of functions is)
    for fs in ((np.sin, None), (None, np.cos)):
        np.testing.assert_allclose(grad(a_tuple_parameter)(XN, fs),
                                   numeric_grad(a_tuple_parameter, [XN, fs], 0), rtol=1e-6)


def _set_first(fs):
    fs[0] = np.tanh


def _add_one(fs):
    fs.append(np.tanh)


def _put(d):
    d["a"] = np.tanh


def item_written_by_a_helper(x):
    fs = [np.sin, np.cos]
    _set_first(fs)
    return np.sum(fs[0](x))


def appended_by_a_helper(x):
    fs = [np.sin, np.cos]
    _add_one(fs)
    return np.sum(fs[-1](x))


def key_written_by_a_helper(x):
    d = {"a": np.sin}
    _put(d)
    return np.sum(d["a"](x))


@pytest.mark.parametrize("f", [item_written_by_a_helper, appended_by_a_helper,
                               key_written_by_a_helper], ids=lambda f: f.__name__)
def test_functions_a_helper_changes_are_refused_at_the_call(f):
    # (before: the function the item held before the helper ran; a wrong gradient)
    assert not np.allclose(np.cos(XN), numeric_grad(f, [XN], 0))
    with pytest.raises(NoRuleError, match=r"(?s)cannot resolve.*test_held_none_called"):
        grad(f)(XN)


def item_written_here(x):
    fs = [np.sin, np.cos]
    fs[0] = np.tanh
    return np.sum(fs[0](x))


def test_functions_changed_by_the_function_itself_still_work():
    # (a guard: the function's own write of the item, as before)
    np.testing.assert_allclose(grad(item_written_here)(XN), numeric_grad(item_written_here,
                                                                         [XN], 0), rtol=1e-6)
