"""An argument that shares an array with a value the function reads from outside, reached
other than by a plain global or a module's attribute (tests/test_argument_sharing.py has those),
the argument written: in Python the write changes that value too, so srcgrad refuses it when it
runs. Each case gave Python's value for distinct arrays before (20.0 where Python gives 29.0:
`x += 1.0; return np.sum(W * x)` called with W itself); with distinct arrays each works.
"""

import functools
import types

import numpy as np
import outside_module
import pytest

import srcgrad
from srcgrad.errors import SrcgradError

X = np.array([0.5, -1.0, 2.0])


def _values():
    return np.array([1.0, 2.0, 3.0])


class Model:
    W = _values()  # a class attribute


class Loss:  # an object called as the function
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        x += 1.0
        return np.sum(self.W * x)


class Shows:
    @property
    def W(self):
        return Model.W


def reads_a_class_attribute(x):
    x += 1.0
    return np.sum(Model.W * x)


def reads_an_attribute(x, obj):  # obj.W: a class attribute, or a property
    x += 1.0
    return np.sum(obj.W * x)


def scaled(W, x, k=1.0):
    x += k
    return np.sum(W * x)


def _decorated(fn):
    @functools.wraps(fn)
    def inner(*args):
        return fn(*args)
    return inner


def _closure():
    C = _values()

    def f(x):
        s = 0.0
        for _ in range(2):
            x += 0.5
            s = s + np.sum(C * x)
        return s
    return f, C


CFG = types.SimpleNamespace(W=_values())


def loop_reads_an_object(x):
    s = 0.0
    for _ in range(2):
        x += 0.5
        s = s + np.sum(CFG.W * x)
    return s


def _helper_reads_a_global(v):
    return np.sum(CFG.W * v)


def loop_calls_a_helper(x):  # the helper reads CFG, which the loop does not name
    s = 0.0
    for _ in range(2):
        x += 0.5
        s = s + _helper_reads_a_global(x)
    return s


def loop_calls_another_modules_helper(x):  # it reads outside_module.H
    s = 0.0
    for _ in range(2):
        x += 0.5
        s = s + outside_module.reads_h(x)
    return s


def _nested():
    C = _values()

    def f(x):
        def g(v):
            return np.sum(C * v)
        s = 0.0
        for _ in range(2):
            x += 0.5
            s = s + g(x)
        return s
    return f, C


def _cases():
    """(name, function, the shared array, the other arguments, options, message word)."""
    W = _values()
    f, C = _closure()
    return [
        ("class attribute", reads_a_class_attribute, Model.W, (), {}, "Model.W"),
        ("class attribute of an argument", reads_an_attribute, Model.W, (Model(),), {}, "obj"),
        ("property", reads_an_attribute, Model.W, (Shows(),), {}, "obj"),
        ("partial", functools.partial(scaled, W), W, (), {}, "partial_arg"),
        ("partial keyword", functools.partial(lambda x, W: scaled(W, x), W=W), W, (), {},
         "W"),
        ("callable object", Loss(W), W, (), {}, "called"),
        ("wrapped", _decorated(reads_a_class_attribute), Model.W, (), {}, "Model.W"),
        ("closure, checkpoint=2", f, C, (), {"checkpoint": 2}, "C"),
        ("object's field, checkpoint=2", loop_reads_an_object, CFG.W, (), {"checkpoint": 2},
         "CFG"),
        ("helper, checkpoint=2", loop_calls_a_helper, CFG.W, (), {"checkpoint": 2}, "CFG"),
        ("another module's helper, checkpoint=2", loop_calls_another_modules_helper,
         outside_module.H, (), {"checkpoint": 2}, r"outside_module_\d+\.H"),
        ("nested def, checkpoint=2", *_nested(), (), {"checkpoint": 2}, "C"),
    ]


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_an_argument_sharing_what_the_function_reads_is_refused_when_it_runs(case):
    _, f, shared, rest, options, word = case
    kept = shared.copy()
    with pytest.raises(SrcgradError, match=f"the arguments `x` and `{word}` share one ndarray"):
        srcgrad.grad(f, **options)(shared, *rest)
    np.testing.assert_array_equal(shared, kept)
    # distinct arrays: Python's value, and central differences
    value, g = srcgrad.value_and_grad(f, **options)(X, *rest)
    assert value == pytest.approx(f(X.copy(), *rest), rel=1e-12)
    step = 1e-6
    numeric = [(f(X + step * e, *rest) - f(X - step * e, *rest)) / (2 * step)
               for e in np.eye(3)]
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", [CASES[3], CASES[7]], ids=[CASES[3][0], CASES[7][0]])
def test_the_check_holds_at_second_order(case):
    _, f, shared, rest, options, word = case
    with pytest.raises(SrcgradError, match=f"the arguments `x` and `{word}` share one ndarray"):
        srcgrad.hvp(f, **options)(shared, *rest, X)


def test_a_checkpointed_function_whose_default_names_a_closure_variable():
    # `def f(x, W=W0)` made where W0 is a local: checkpoint= compiled the default's text
    # again, where W0 is unknown (NameError); it binds the default's value now
    def make():
        W0 = _values()

        def f(x, W=W0):
            s = 0.0
            for _ in range(2):
                s = s + np.sum(W * np.sin(x))
            return s
        return f
    f = make()
    value, g = srcgrad.value_and_grad(f, checkpoint=2)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, 2.0 * _values() * np.cos(X), rtol=1e-12)


def test_a_helper_of_another_module_reads_its_global_when_it_runs():
    # the inlined helper held the array `H` named when the derivative was made: after
    # `outside_module.H = ...` it gave 1.4 where Python gives 14.0
    kept = outside_module.H
    try:
        df = srcgrad.value_and_grad(lambda x: outside_module.reads_h(x))
        x = np.array([0.3, -0.2, 0.5])
        assert df(x)[0] == pytest.approx(1.4, rel=1e-12)
        outside_module.H = 10.0 * kept
        value, g = df(x)
        assert value == pytest.approx(14.0, rel=1e-12)
        np.testing.assert_allclose(g, 10.0 * kept, rtol=1e-12)
    finally:
        outside_module.H = kept
