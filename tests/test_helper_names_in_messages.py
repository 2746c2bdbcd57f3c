"""A refusal raised after a helper is inlined names the helper's locals as the helper writes
them (``v``, not the ``v_2`` inlining renamed it to apart from the caller's ``v``), and says
where the helper binds it (normalize/user_names.py, ``LocatedError.named_as_written``)."""

import inspect

import numpy as np
import pytest

from srcgrad import UnsupportedSyntaxError, grad

G = np.ones(2)


def _shares(x):
    y = x * 1.0
    v = y[0:1]
    v[0] = 1.0
    return np.sum(y * v)


def writes_a_view_in_a_helper(x):
    v = x * 2.0
    return _shares(x) + np.sum(v)


def _global_update(x):
    a = G
    a += x
    return np.sum(a)


def updates_a_global_in_a_helper(x):
    a = x
    return _global_update(x) + np.sum(a)


@pytest.mark.parametrize("f, helper, name, binding", [
    (writes_a_view_in_a_helper, _shares, "v", "v = y[0:1]"),
    (updates_a_global_in_a_helper, _global_update, "a", "a = G"),
])
def test_the_helpers_own_name(f, helper, name, binding):
    with pytest.raises(UnsupportedSyntaxError) as info:
        grad(f)(np.array([1.0, 2.0]))
    message = info.value.message
    assert f"`{name}_2" not in message and f"`{name}" in message
    lines, first = inspect.getsourcelines(helper)
    line = first + next(i for i, text in enumerate(lines) if binding in text)
    assert f"(`{name}`: a variable of `{helper.__name__}`, line {line} of " in message
