"""Errors at the user's line.

An exception raised while a generated function runs carries a note naming the user's file, line
and source text of the statement the failing generated line computes or differentiates; an error
found at transform time is raised from the transform the user called, not from a dozen srcgrad
frames; a lambda is found by its code object's position, wherever it is written.
"""

import os
import traceback

import numpy as np
import pytest

import srcgrad
from srcgrad import SrcgradError, UnsupportedSyntaxError, grad, hessian, source, vjp

HERE = os.path.abspath(__file__)


def notes_of(info):
    return "\n".join(getattr(info.value, "__notes__", []))


def layer(W, X):
    z = np.tanh(X @ W)
    return np.sum(z ** 2)


def matmul(a, b):
    return a @ b


def through_helper(W, X):
    z = matmul(X, W)
    return np.sum(z)


def indexed(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * 2.0
    return s


def concatenates(x):
    xs = [x, x * 2.0]
    ys = xs * 2
    return ys[0] * ys[3]


def line_of(fn, text):
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_a_shape_mismatch_names_the_users_line():
    with pytest.raises(ValueError, match="matmul") as info:
        grad(layer)(np.ones((3, 2)), np.ones((4, 5)))
    note = notes_of(info)
    assert f'File "{HERE}", line {line_of(layer, "z = np.tanh")}, in layer' in note
    assert "z = np.tanh(X @ W)" in note and "while computing" in note


def two_lines(x, W):
    a = np.sin(x)
    b = a @ W
    return np.sum(np.tanh(b))


def test_forward_mode_names_the_line_a_primal_statement_computes():
    # (the statement after a tangent's block is the next line's, not the block's)
    with pytest.raises(ValueError, match="matmul") as info:
        srcgrad.jvp(two_lines)(np.ones(3), np.ones((4, 2)), np.ones(3))
    note = notes_of(info)
    assert f"line {line_of(two_lines, 'b = a @ W')}, in two_lines" in note
    assert "b = a @ W" in note and "while computing" in note


def test_an_inlined_helper_is_reported_at_its_call():
    with pytest.raises(ValueError) as info:
        grad(through_helper)(np.ones((3, 2)), np.ones((4, 5)))
    assert "z = matmul(X, W)" in notes_of(info)


def test_an_index_error_in_a_loop():
    with pytest.raises(IndexError) as info:
        grad(indexed)(np.ones(3), 5)
    assert "s = s + x[i] * 2.0" in notes_of(info)
    assert f"line {line_of(indexed, 's = s + x[i]')}" in notes_of(info)


def test_an_error_of_the_sweep_names_the_line_it_differentiates():
    with pytest.raises(SrcgradError, match="concatenation") as info:
        grad(concatenates)(1.5)
    note = notes_of(info)
    assert "while differentiating" in note and "ys = xs * 2" in note


def test_a_wrong_seed_names_the_return():
    with pytest.raises(SrcgradError, match="seed") as info:
        vjp(lambda x: np.sin(x) * 2.0)(np.ones(3), np.ones(4))
    assert "np.sin(x) * 2.0" in notes_of(info)


def test_one_note_through_nested_derivatives():
    def f(x):
        return np.sum(x[np.array([0, 5])] ** 3)

    with pytest.raises(IndexError) as info:
        hessian(f)(np.ones(3))
    notes = info.value.__notes__
    assert len(notes) == 1
    assert "x[np.array([0, 5])]" in notes[0]


def test_a_derivative_of_a_derivative_reports_the_users_line():
    d2 = grad(lambda x: np.sum(grad(layer)(x, XS) ** 2))
    with pytest.raises(ValueError) as info:
        d2(np.ones((3, 2)))
    note = notes_of(info)
    assert HERE in note and "<srcgrad" not in note.split("File")[1]


XS = np.ones((4, 5))


def shrinks(x, M):
    z = x * 1.0
    for _i in range(3):
        z = np.tanh(M @ z)  # (4, 5) @ (4,) on the second trip
    return np.sum(z)


def test_an_error_in_a_checkpointed_loop_names_the_line_in_its_body():
    # the step (the loop's body, checkpoint.py) had no note of its own: the derivative's named
    # the loop's `for` line
    with pytest.raises(ValueError, match="matmul") as info:
        grad(shrinks, checkpoint=2)(np.ones(5), XS)
    note = notes_of(info)
    assert f'line {line_of(shrinks, "z = np.tanh(M @ z)")}, in shrinks' in note
    assert "z = np.tanh(M @ z)" in note and "for _i in range(3)" not in note


def test_the_happy_path_is_unchanged():
    W, X = np.full((3, 2), 0.1), np.ones((4, 3))
    g = grad(layer)(W, X)
    assert g.shape == (3, 2)
    assert "try:" not in source(grad(layer))  # the handler is compiled, not shown


def unsupported(x):
    with open(os.devnull) as handle:
        return x + len(handle.name)


def test_transform_time_errors_come_from_the_transform_the_user_called():
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(unsupported)
    frames = traceback.extract_tb(info.value.__traceback__)
    ours = [f for f in frames if os.sep + "srcgrad" + os.sep in f.filename]
    assert len(ours) == 1, [f"{f.filename}:{f.lineno}" for f in ours]
    for transform in (srcgrad.value_and_grad, srcgrad.vjp, srcgrad.jvp, srcgrad.hvp,
                      srcgrad.jacobian, srcgrad.hessian):
        with pytest.raises(UnsupportedSyntaxError) as info:
            transform(unsupported)
        frames = traceback.extract_tb(info.value.__traceback__)
        assert len([f for f in frames if os.sep + "srcgrad" + os.sep in f.filename]) == 1


# --- lambdas, wherever they are written -------------------------------------------------------


def test_a_lambda_on_a_continuation_line():
    result = (
        1.0,
        grad(lambda z: z * z)(3.0))
    assert result[1] == 6.0


def test_lambdas_in_a_for_header():
    x = np.array([1.0, 2.0])
    got = []
    for f in [lambda a: np.sum(a ** 2), lambda a: np.sum(np.sin(a))]:
        got.append(grad(f)(x))
    np.testing.assert_allclose(got[0], 2 * x)
    np.testing.assert_allclose(got[1], np.cos(x))


def test_two_lambdas_on_one_line_are_told_apart():
    a, b = grad(lambda z: z * z * z), grad(lambda z: z * 5.0)
    assert a(2.0) == 12.0 and b(2.0) == 5.0


def test_a_lambda_made_by_a_lambda_and_one_with_a_default():
    scale = lambda p: (lambda q: q * q * p)  # noqa: E731
    assert grad(scale(3.0))(1.0) == 6.0
    assert grad(lambda z, w=2.0: z * w)(1.0) == 2.0


def test_a_lambda_error_points_into_the_lambda():
    with pytest.raises(UnsupportedSyntaxError, match="yield") as info:
        grad(lambda z: z * 2.0)(1.0), grad(lambda z: z * (yield z))(1.0)
    assert info.value.filename == HERE
    assert info.value.lineno == line_of(test_a_lambda_error_points_into_the_lambda, "yield z")
    assert info.value.line[info.value.offset - 1:].startswith("yield z")


def test_srcgrad_traceback_full_keeps_the_compiler_frames(monkeypatch):
    monkeypatch.setenv("SRCGRAD_TRACEBACK", "full")
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(unsupported, wrt="x", optimize=False)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert len([f for f in frames if os.sep + "srcgrad" + os.sep in f.filename]) > 3
