"""Lambdas and nested defs that read the function's variables, as values (issue 14).

In a tuple or list passed to a helper that loops over it and calls each item: the helper is
inlined with its parameter the caller's list, whose items are known at transform time, so its
loop is unrolled and each lambda inlined where it is called, reading the caller's variables:
the gradient reaches both the captured ``c`` and ``x``. A list of lambdas with default values
(a comprehension, appends in a loop) holds ``(which, defaults)``, and the helper's calls of its
items call the lambda with them. A lambda with default values made again on each trip of a
loop and kept past it by a name or a display (``if k == 1: h = g``, ``d = {"f": g}``) holds
the default values of its trip the same way.

Checked against central differences in float64 (value_and_grad, jvp; grad and hvp against
differences of the gradient); each test fails on the code before (refused: "the local function
`lambda_2` used as a value", "a later trip makes it anew"). A list that is changed after it is
made, a function kept past its trip and called by a later trip or passed on in a list: see
tests/test_function_lists.py."""

import numpy as np
import pytest
from gradcheck import check_both_and_jvp, check_hvp_in_x, numeric_grad

from srcgrad import UnsupportedSyntaxError, grad

C = 1.3
X = np.array([0.3, -0.5, 0.7])
T = np.array([0.2, 0.4, -0.6])


def apply_all(fs, x):
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) ** 2)
    return s


def apply_indexed(fs, x):
    s = 0.0
    for i in range(len(fs)):
        s = s + np.sum(fs[i](x) * x)
    return s


def twice(fs, x):
    return apply_all(fs, x) * 2.0


def in_a_list(c, x):
    return apply_all([np.sin, lambda t: c * t], x)


def in_a_tuple_through_two_helpers(c, x):
    return twice((np.sin, lambda t: c * t * t), x)


def named_and_passed_twice(c, x):
    g = lambda t: c * np.tanh(t)  # noqa: E731
    fs = [g, np.cos]
    return apply_all(fs, x) + apply_all(fs, 2.0 * x)


def indexed_with_a_default(c, x):
    return apply_indexed([lambda t, k=c * 2.0: k * t, np.tanh], x)


def a_nested_def(c, x):
    def g(t):
        return c * np.sin(t)
    return apply_all([g, np.tanh], x)


def with_defaults_by_a_comprehension(c, x):
    fs = [lambda t, k=k: k * c * t for k in range(3)]
    return apply_all(fs, x)


def with_defaults_appended_in_a_loop(c, x):
    fs = []
    for k in range(len(x)):
        fs.append(lambda t, k=k: x[k] * c * t)
        fs.append(lambda t, a=c * k: np.sin(a * t))
    return apply_all(fs, x)


def with_defaults_indexed_passed_twice(c, x):
    fs = [lambda t, k=k: k * c * np.sin(t) for k in range(3)]
    s = apply_indexed(fs, x)
    c = 2.0 * c  # (read by the lambdas where they are called, as Python's closure does)
    return s + apply_indexed(fs, x)


CASES = [in_a_list, in_a_tuple_through_two_helpers, named_and_passed_twice,
         indexed_with_a_default, a_nested_def, with_defaults_by_a_comprehension,
         with_defaults_appended_in_a_loop, with_defaults_indexed_passed_twice]


@pytest.mark.parametrize("f", CASES)
def test_a_capturing_function_in_a_list_passed_to_a_helper(f):
    check_both_and_jvp(f, C, X, T)


@pytest.mark.parametrize("f", [in_a_tuple_through_two_helpers,
                               with_defaults_by_a_comprehension])
def test_the_hvp_against_differences_of_the_gradient(f):
    check_hvp_in_x(f, C, X, T)


def changed_after_it_is_made(c, x):
    fs = [np.sin, lambda t: c * t]
    fs.append(np.cos)
    return apply_all(fs, x)


def test_a_list_changed_after_it_is_made_passed_to_a_helper():
    # before: refused ("the lambda written on line ... used as a value"); now the list holds
    # which function each item is (lambda_list_sites), tests/test_function_lists.py
    check_both_and_jvp(changed_after_it_is_made, C, X, T)


def changed_and_looped_over_here(c, x):
    # the docs' workaround: the items called where the list is looped over
    fs = [np.sin, lambda t: c * t]
    fs.append(np.cos)
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) ** 2)
    return s


def test_the_workaround_of_the_refusal_works():
    f = changed_and_looped_over_here
    np.testing.assert_allclose(grad(f, wrt=1)(C, X), numeric_grad(f, [C, X], 1), rtol=1e-6,
                               atol=1e-9)


def shows(fs, x):
    print(fs)
    return apply_all(fs, x)


def returns(fs):
    return fs


def with_defaults_printed_by_a_helper(c, x):
    fs = [lambda t, k=k: k * c * t for k in range(3)]
    return shows(fs, x)


def with_defaults_returned_by_a_helper(c, x):
    fs = [lambda t, k=k: k * c * t for k in range(3)]
    return apply_all(returns(fs), x)


@pytest.mark.parametrize("f, message", [
    (with_defaults_printed_by_a_helper, "given to a function it does not inline"),
    (with_defaults_returned_by_a_helper, "given to `returns` as `fs`, which it assigns or "
                                         "reads otherwise")])
def test_a_list_of_lambdas_with_defaults_used_otherwise_by_a_helper_is_refused(f, message):
    with pytest.raises(UnsupportedSyntaxError, match=message):
        grad(f)(C, X)


def kept_from_an_earlier_trip(a, x):
    for k in range(3):
        g = lambda t, c=a * k: c * t  # noqa: E731
        if k == 1:
            h = g
    return np.sum(h(x) ** 2)


def kept_in_a_dict_and_a_tuple(a, x):
    for k in range(3):
        def g(t, c=a * (k + 1.0)):
            return c * np.tanh(t)
        if k == 0:
            d = {"f": g}
        if k == 2:
            fs = (np.sin, g)
    return np.sum(d["f"](x) * fs[1](x) + fs[0](x))


def kept_from_the_trip_before(a, x):
    s = 0.0
    for k in range(3):
        if k == 2:
            h = g  # noqa: F821  (the function the trip before made)
        g = lambda t, c=a * k: c * t  # noqa: E731
        s = s + np.sum(g(x))
    return s + np.sum(h(x) ** 2)


@pytest.mark.parametrize("f", [kept_from_an_earlier_trip, kept_in_a_dict_and_a_tuple,
                               kept_from_the_trip_before])
def test_a_function_remade_in_a_loop_kept_past_its_trip(f):
    # before: refused ("a later trip makes it anew"); before that, silently the last trip's
    check_both_and_jvp(f, C, X, T)


def test_a_function_kept_past_its_trip_at_second_order():
    check_hvp_in_x(kept_from_an_earlier_trip, C, X, T)


def kept_and_called_by_a_later_trip(a, x):
    s = 0.0
    for k in range(3):
        g = lambda t, c=a * (k + 1.0): c * t  # noqa: E731
        if k == 0:
            h = g
        s = s + np.sum(h(x) * g(x))
    return s


def kept_and_passed(a, x):
    for k in range(3):
        g = lambda t, c=a * k: c * t  # noqa: E731
        if k == 1:
            h = g
    return apply_all([h], x)


def test_a_function_kept_past_its_trip_called_by_a_later_trip():
    # before: refused ("a later trip makes it anew"); tests/test_function_lists.py
    check_both_and_jvp(kept_and_called_by_a_later_trip, C, X, T)


def test_a_function_kept_past_its_trip_passed_on_in_a_list():
    # before: refused ("a later trip makes it anew"); tests/test_function_lists.py
    check_both_and_jvp(kept_and_passed, C, X, T)


def _make(c):
    return lambda t: c * t


def values_kept_instead(a, x):
    # the docs' workaround of last session for a factory's closure kept past its trip
    cs = []
    for k in range(3):
        cs.append(a * (k + 1.0))
    return np.sum(_make(cs[0])(x) ** 2)


def test_the_workaround_for_a_factorys_closure_works():
    f = values_kept_instead
    np.testing.assert_allclose(grad(f, wrt=(0, 1))(C, X)[0], numeric_grad(f, [C, X], 0),
                               rtol=1e-6)
