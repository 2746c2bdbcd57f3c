"""Errors: non-scalar outputs, unsupported syntax, calls without a rule, missing source."""

import inspect
import os

import numpy as np
import pytest

from srcgrad import (
    NonScalarOutputError,
    NoRuleError,
    SrcgradError,
    UnsupportedSyntaxError,
    grad,
)

COUNTER = 0.0

# A ufunc built from a lambda: no Python source for the compiler and no derivative rule.
fake = np.frompyfunc(lambda v: v, 1, 1)


# ---- non-scalar output ---------------------------------------------------------------------


def returns_vector(x):
    return np.sin(x)


def returns_matrix(x):
    return x * 2.0


def test_non_scalar_output_names_the_shape_and_points_to_vjp():
    with pytest.raises(NonScalarOutputError) as info:
        grad(returns_vector)(np.ones(3))
    message = str(info.value)
    assert "(3,)" in message
    assert "vjp" in message
    assert isinstance(info.value, SrcgradError)


def test_non_scalar_matrix_output():
    with pytest.raises(NonScalarOutputError, match=r"\(2, 3\)"):
        grad(returns_matrix)(np.ones((2, 3)))


# ---- unsupported syntax: one function per construct ----------------------------------------


def uses_try(x):
    s = x * 1.0
    try:
        s = s * 2.0
        y = np.log(x)
    except ValueError:
        y = x
    return y + s


def uses_class(x):
    class Box:
        pass

    return x * 2.0


def uses_global(x):
    global COUNTER
    COUNTER = 1.0
    return x * 2.0


def make_uses_nonlocal():
    count = 1.0

    def uses_nonlocal(x):
        nonlocal count
        count = 2.0
        return x * count

    return uses_nonlocal


def uses_del_item(x):
    y = [x * 2.0]
    del y[0][1:]
    return x


def uses_del_attribute(x):
    y = x * 2.0
    del y.shape
    return x


def reads_after_del(x):
    y = x * 2.0
    del y
    return np.sum(y)  # noqa: F821


def reads_after_del_on_one_branch(x):
    y = x * 2.0
    if x[0] > 0:
        del y
    return np.sum(y)


def reads_after_del_in_the_next_iteration(x, n):
    y = x * 2.0
    for _ in range(n):
        z = np.sin(y)
        del y
        x = z
    return np.sum(x)


def calls_a_lambda_after_del(x):
    y = x * 2.0
    scaled = lambda v: v * y  # noqa: E731, F821
    del y
    return np.sum(scaled(x))


def uses_yield(x):
    yield x * 2.0


async def uses_async(x):
    return x * 2.0


# (function, text that starts the offending construct in its source)
UNSUPPORTED = [
    (uses_try, "s = s * 2.0"),
    (uses_class, "class Box"),
    (uses_global, "global COUNTER"),
    (make_uses_nonlocal(), "nonlocal count"),
    (uses_del_item, "del y"),
    (uses_del_attribute, "del y"),
    (uses_yield, "yield x"),
    (uses_async, "async def"),
]


def where_is(f, marker):
    """(line number in this file, 1-based column, source line) of marker in f's source."""
    lines, first = inspect.getsourcelines(f)
    for k, line in enumerate(lines):
        if marker in line:
            return first + k, line.index(marker) + 1, line.rstrip("\n")
    raise AssertionError(f"{marker!r} not in the source of {f.__name__}")


# (function, the read after `del` the error points at, the line of that `del`)
READS_AFTER_DEL = [
    (reads_after_del, "y)", "del y"),
    (reads_after_del_on_one_branch, "y)", "del y"),
    (reads_after_del_in_the_next_iteration, "y)", "del y"),
    (calls_a_lambda_after_del, "scaled(x)", "del y"),
]


@pytest.mark.parametrize(
    "f, marker, deleted", [pytest.param(*case, id=case[0].__name__) for case in READS_AFTER_DEL]
)
def test_a_read_after_del_is_an_error_never_the_old_value(f, marker, deleted):
    lineno, offset, line = where_is(f, marker)
    del_line = where_is(f, deleted)[0]
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)
    err = info.value
    assert (err.lineno, err.offset) == (lineno, offset)
    message = str(err)
    assert f"`del y` on line {del_line} may have deleted it" in message
    assert "NameError" in message
    assert line.strip() in message and "^" in message


def test_del_twice_is_an_error():
    def deletes_twice(x):
        y = x * 2.0
        del y
        del y  # noqa: F821
        return np.sum(x)

    with pytest.raises(UnsupportedSyntaxError, match="may have deleted it already"):
        grad(deletes_twice)


@pytest.mark.parametrize("f, marker", [pytest.param(f, m, id=f.__name__) for f, m in UNSUPPORTED])
def test_unsupported_syntax_is_reported_at_transform_time(f, marker):
    lineno, offset, line = where_is(f, marker)
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)  # not called: the error must come from the transform itself
    err = info.value
    assert isinstance(err, SrcgradError)
    assert os.path.realpath(err.filename) == os.path.realpath(__file__)
    assert err.lineno == lineno
    assert err.offset == offset
    message = str(err)
    assert os.path.basename(__file__) in message
    assert str(lineno) in message
    assert line.strip() in message
    assert "^" in message


# ---- calls without source or rule ----------------------------------------------------------


def calls_fake(x):
    return np.sum(fake(2.0 * x) * x)


def calls_fake_on_a_read_array(x):
    return np.sum(fake(x) * x)


def test_call_without_source_or_rule_raises_no_rule_error():
    with pytest.raises(NoRuleError) as info:
        grad(calls_fake)(np.ones(3))
    message = str(info.value)
    assert "fake" in message
    assert "srcgrad.adjoint" in message
    assert isinstance(info.value, SrcgradError)


def test_call_without_source_or_rule_given_an_array_read_again_is_refused_first():
    # given `x`, which the function reads again, the call is refused before its missing rule is
    # looked for: it may write into `x` (normalize/inplace_calls.py); a rule is still the way out
    with pytest.raises(SrcgradError, match="read elsewhere") as info:
        grad(calls_fake_on_a_read_array)(np.ones(3))
    assert "srcgrad.adjoint" in str(info.value)


def test_function_without_source_is_a_clear_error():
    namespace = {}
    exec("def typed_in(x):\n    return x * x\n", namespace)
    with pytest.raises(SrcgradError) as info:
        grad(namespace["typed_in"])(2.0)
    assert "source" in str(info.value).lower()


# ---- every error srcgrad raises is a SrcgradError ---------------------------------------------


def _raised_builtin_exceptions():
    """``(module, line, name)`` of each ``raise X(...)`` in srcgrad where X is a builtin
    exception (re-raising a caught exception, ``raise exc``, is not a call and is left out), and
    of each exception class deriving from a builtin one but not from ``SrcgradError``."""
    import ast
    import builtins
    import pathlib

    import srcgrad

    root = pathlib.Path(srcgrad.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.relative_to(root).as_posix() == "normalize/stdlib_forms.py":
            continue  # Python's own functions (functools.reduce, ...), inlined into the user's
            # code: they raise what Python raises (reduce() of an empty list: TypeError)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                cls = getattr(builtins, func.id, None) if isinstance(func, ast.Name) else None
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found.append((str(path.relative_to(root)), node.lineno, func.id))
            if isinstance(node, ast.ClassDef) and node.name != "SrcgradError":
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if "SrcgradError" not in bases and bases & {"Exception", "BaseException"}:
                    found.append((str(path.relative_to(root)), node.lineno, node.name))
    return found


def test_srcgrad_raises_only_its_own_errors():
    assert _raised_builtin_exceptions() == []


def test_a_case_without_a_derivative_is_a_srcgrad_error_and_not_implemented():
    from srcgrad.errors import UnsupportedCaseError

    def f(a):
        return np.sum(np.pad(a, 2, mode="linear_ramp") ** 2)

    with pytest.raises(UnsupportedCaseError, match="mode='linear_ramp'") as info:
        grad(f)(np.ones(3))
    assert isinstance(info.value, SrcgradError) and isinstance(info.value, NotImplementedError)


def test_a_derived_function_called_wrongly_is_a_srcgrad_error_and_a_type_error():
    from srcgrad import vjp
    from srcgrad.errors import DerivedCallError

    def f(x, scale=2.0):
        return scale * x

    x = np.ones(3)
    with pytest.raises(DerivedCallError, match="multiple values") as info:
        vjp(f)(x, 5.0, x, scale=4.0)
    assert isinstance(info.value, SrcgradError) and isinstance(info.value, TypeError)


def _loops_over_a_function(x, act):
    hs = []
    for _ in range(3):
        x = act(x) * x
        hs.append(x)
    return np.sum(hs[1])


def _writes_after_a_function(x, act):
    y = act(x) * x
    y[1] = y[0] * 0.5
    return np.sum(y)


@pytest.mark.parametrize("f, marker, why", [
    (_loops_over_a_function, "for _ in", "a loop or branch interleaves the primal and its tangent"),
    (_writes_after_a_function, "y[1] =", "the primal writes into a value in place"),
])
def test_linearize_that_would_rerun_the_jvp_given_a_function_is_located(f, marker, why):
    # the split of linearize fails, and jvp_fn would rerun the jvp, which a function passed
    # does not allow: refused at the user's line, naming the user's function (not the
    # generated f_linearize)
    from srcgrad import linearize

    lineno, offset, line = where_is(f, marker)
    with pytest.raises(UnsupportedSyntaxError) as info:
        linearize(f)(np.array([0.3, 0.5]), np.tanh)
    err = info.value
    assert os.path.realpath(err.filename) == os.path.realpath(__file__)
    assert (err.lineno, err.offset) == (lineno, offset)
    assert err.message == (
        f"linearize of {f.__name__}, which is called with functions, is not supported here: "
        f"{why}, so each call of its jvp_fn would rerun the jvp; call jvp(...) once per tangent "
        f"instead")
    assert line.strip() in str(err) and "^" in str(err)


class _Calls:
    def loss(self, v):
        h = v * 2.0
        return np.sum(h.scaled_by(0.4))  # no method of an array: refused after inlining


_CALLS = _Calls()


def _calls_a_method(v):
    return _CALLS.loss(v)  # the error is located here, the call of the inlined method


def test_an_error_in_an_inlined_method_is_at_the_line_of_its_call():
    # (was a line of the file computed from the method's own numbering: the line below)
    with pytest.raises(SrcgradError) as e:
        grad(_calls_a_method)(np.ones(3))
    assert e.value.lineno == inspect.getsourcelines(_calls_a_method)[1] + 1
    assert "_CALLS.loss(v)" in e.value.line
