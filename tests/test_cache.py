"""Derived functions are cached, regenerated when f changes, and are ordinary Python functions."""

import importlib.util
import inspect
import traceback

import numpy as np
import pytest

from srcgrad import grad, source, value_and_grad, vjp
from srcgrad.kinds import Specialized


def poly(x, y):
    return x * x * y + y


def matmul_sum(A, B):
    return np.sum(A @ B)


def test_same_f_and_wrt_returns_the_same_object():
    assert grad(poly) is grad(poly)
    assert grad(poly, wrt=1) is grad(poly, wrt=1)
    assert grad(poly, wrt=("x", "y")) is grad(poly, wrt=("x", "y"))


def test_different_wrt_returns_a_different_function():
    d0, d1 = grad(poly, wrt=0), grad(poly, wrt=1)
    assert d0 is not d1
    assert d0(2.0, 3.0) == pytest.approx(12.0)
    assert d1(2.0, 3.0) == pytest.approx(5.0)


def test_redefining_f_gives_a_fresh_derivative():
    def f(x):
        return x * x

    first = grad(f)
    assert first(2.0) == pytest.approx(4.0)

    def f(x):  # noqa: F811 - redefined on purpose
        return x * x * x

    second = grad(f)
    assert second is not first
    assert second(2.0) == pytest.approx(12.0)
    assert first(2.0) == pytest.approx(4.0)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rewritten_module_file_gives_a_fresh_derivative(tmp_path):
    # Same file, same function name, new body (as when editing and re-running a notebook cell).
    path = tmp_path / "edited_model.py"
    path.write_text("def f(x):\n    return x * x\n")
    first = grad(_load(path, "edited_model_v1").f)
    assert first(2.0) == pytest.approx(4.0)

    path.write_text("def f(x):\n    return 10.0 * x * x * x\n")
    second = grad(_load(path, "edited_model_v2").f)
    assert second(2.0) == pytest.approx(120.0)


def test_source_of_derived_function_is_python_source():
    text = source(grad(poly))
    assert isinstance(text, str)
    assert "def " in text
    compile(text, "<generated>", "exec")  # it is complete, valid Python
    for derived in (value_and_grad(poly), vjp(matmul_sum)):
        assert "def " in source(derived)


def test_derived_function_calls_plain_generated_code_with_stable_results():
    df = grad(matmul_sum, wrt=(0, 1))
    # a functools.partial of the generated function specialized to the kinds of the arguments
    # at the call (srcgrad/kinds.py): its repr and pickling are its own
    generic = df.__wrapped__
    assert inspect.isfunction(generic) and df.__code__ is generic.__code__
    assert isinstance(df.func, Specialized) and df.func.__wrapped__ is generic
    assert str(inspect.signature(df)) == "(A, B)"
    assert repr(df) == "<grad of matmul_sum wrt ('A', 'B')>"
    A = np.random.default_rng(0).normal(size=(2, 3))
    B = np.random.default_rng(1).normal(size=(3, 4))
    first = df(A, B)
    for _ in range(3):
        again = df(A, B)
        for a, b in zip(first, again, strict=True):
            np.testing.assert_array_equal(a, b)


def test_inspect_getsource_works_on_derived_function():
    df = grad(poly)
    text = inspect.getsource(df)
    assert "def " in text


def test_generated_code_appears_in_tracebacks():
    df = grad(matmul_sum)
    with pytest.raises(ValueError) as info:
        df(np.ones((2, 3)), np.ones((4, 5)))  # shapes do not match: fails inside generated code
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [fr for fr in frames if fr.filename == df.__code__.co_filename]
    assert generated, "the derived function's frame should be in the traceback"
    assert all(fr.line for fr in generated), "generated frames should show their source line"


def test_equal_code_in_two_modules_gets_two_derivatives(tmp_path, monkeypatch):
    # Two modules with the same body compile to equal code objects; their gradients differ.
    for name, w in (("mod_a_equal_code", 2.0), ("mod_b_equal_code", 5.0)):
        (tmp_path / f"{name}.py").write_text(f"W = {w}\n\n\ndef f(x):\n    return x * W\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import mod_a_equal_code
    import mod_b_equal_code

    assert mod_a_equal_code.f.__code__ == mod_b_equal_code.f.__code__
    assert grad(mod_a_equal_code.f)(1.0) == 2.0
    assert grad(mod_b_equal_code.f)(1.0) == 5.0
