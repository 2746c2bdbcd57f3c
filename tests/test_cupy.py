"""The rule table on CuPy arrays: the gradient stays on the device and equals NumPy's.

Runs only where CuPy and a GPU are available (skipped elsewhere, with the reason). CuPy does not
mix its arrays with NumPy's, so a row's constants (its weights ``W`` and fixed inputs) are moved
to the device too. Rows of functions CuPy does not implement are skipped by CuPy's own error.
"""

from __future__ import annotations

import numpy as np
import pytest

cupy = pytest.importorskip("cupy", reason="CuPy is not installed (it needs an NVIDIA GPU)")
try:
    cupy.cuda.runtime.getDeviceCount()
except Exception as error:  # pragma: no cover - depends on the machine
    pytest.skip(f"CuPy has no GPU here: {error}", allow_module_level=True)

from test_rules import PARAMS, build  # noqa: E402

import srcgrad  # noqa: E402


@pytest.mark.parametrize("r", [p for p in PARAMS if not p.marks])
def test_rule_on_cupy(r):
    f, args = build(r, 7)
    values = list(args.values())
    wrt = tuple(r.wrt) or tuple(args)
    expected = srcgrad.grad(f, wrt=wrt)(*values)
    scope = f.__globals__
    for name, value in list(scope.items()):
        if isinstance(value, np.ndarray):
            scope[name] = cupy.asarray(value)
    device = [cupy.asarray(v) if isinstance(v, np.ndarray) else v for v in values]
    try:
        f(*device)
    except (TypeError, NotImplementedError, ValueError) as error:
        pytest.skip(f"CuPy does not run the primal: {error}")
    grads = srcgrad.grad(f, wrt=wrt)(*device)
    for got, want in zip(grads, expected):
        if isinstance(got, cupy.ndarray):
            got = cupy.asnumpy(got)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
