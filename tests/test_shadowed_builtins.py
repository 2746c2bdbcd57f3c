"""A module that binds the name of a builtin to a function of its own.

srcgrad writes calls of some builtins into the code it generates: ``slice(1, 3, None)`` for the
index ``x[1:3]`` (in ``getitem_grad``, ``setitem``), ``bool(c)`` for the truth of a branch's
test, ``list(stack)`` for the copies of a pullback's stacks. Those calls were written by their
bare names, which the user's module resolved: a module with its own ``slice`` (say, counted from
1) got the gradient of ``y[1:3]`` at ``y[0:2]``, with no error (found by mutants20c from the
mutant forward:530). They now take the name ``ctx.global_name`` gives the builtin: its own
where the module leaves it alone, a fresh one bound to the builtin where not.
"""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

import srcgrad

SHADOWS = {
    "slice": """
        def slice(start, stop, step=None):  # positions counted from 1
            return builtins.slice(start - 1, stop - 1, step)
    """,
    "bool": """
        def bool(value):
            return not builtins.bool(value)
    """,
    "list": """
        def list(seq):
            return builtins.list(reversed(seq))
    """,
}

PROGRAMS = """
    def sliced(x):
        y = x * 2.0
        return np.sum(np.sin(y[1:3]) * y[2:])


    def branch_on_a_flag(x):
        c = x[0] > 0
        y = x * 1.0
        if c:
            c = False
            y = y * 3.0
        return np.sum(y * y)


    def looped(x):
        s = 0.0
        for i in range(3):
            s = s + np.sum(np.sin(x[i:]) * s + x[1:2])
        return s


    def written_by_slice(x):
        y = x * 1.0
        y[1:3] = np.sin(x[2:])
        return np.sum(y * y)
"""

NAMES = ["sliced", "branch_on_a_flag", "looped", "written_by_slice"]


def _module(tmp_path, word):
    text = "import builtins\n\nimport numpy as np\n\n" + textwrap.dedent(SHADOWS[word]) + (
        textwrap.dedent(PROGRAMS))
    path = tmp_path / f"shadows_{word}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"shadows_{word}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("word", sorted(SHADOWS))
@pytest.mark.parametrize("program", NAMES)
def test_generated_code_calls_the_builtin_the_module_shadows(tmp_path, word, program):
    f = getattr(_module(tmp_path, word), program)
    x = np.array([0.3, 0.5, 0.7, 0.9])
    want = _central(f, x)
    np.testing.assert_allclose(srcgrad.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    jvp = srcgrad.jvp(f)
    got = [jvp(x, e)[1] for e in np.eye(x.size)]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    value, back = srcgrad.pullback(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    for _ in range(2):  # each call pops copies of the stacks
        np.testing.assert_allclose(back(1.0), want, rtol=1e-6, atol=1e-8)
