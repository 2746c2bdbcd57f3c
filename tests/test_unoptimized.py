"""``optimize=False`` keeps the unoptimized path: it must give the same gradients.

Every gradient case of the straight-line, control-flow and language suites runs through both
paths; the optimized one is checked against central differences in those suites, so agreement
here checks the unoptimized path just as tightly. Without optimization there is no constant
folding, dead-code elimination, loop-invariant hoisting, common-subexpression elimination,
shape-based ``unbroadcast`` elision, in-place accumulation or early ``del``.
"""

import numpy as np
import pytest
import test_control_flow
import test_language
import test_straightline

from srcgrad import grad


def _cases():
    out = []
    for module in (test_straightline, test_control_flow, test_language):
        for case in module.CASES:
            values = case.values if hasattr(case, "values") else case
            if getattr(case, "marks", None):
                continue
            f, args, wrt = values
            out.append(pytest.param(f, args, wrt, id=f"{module.__name__[5:]}-{f.__name__}"))
    return out


def _flat(g):
    if isinstance(g, dict):
        return [v for k in sorted(g) for v in _flat(g[k])]
    if isinstance(g, (tuple, list)):
        return [v for part in g for v in _flat(part)]
    return [np.asarray(g, dtype=float)]


@pytest.mark.parametrize("f, args, wrt", _cases())
def test_unoptimized_path_gives_the_same_gradient(f, args, wrt):
    optimized = grad(f, wrt=wrt)(*args)
    plain = grad(f, wrt=wrt, optimize=False)(*args)
    assert type(plain) is type(optimized)
    for a, b in zip(_flat(plain), _flat(optimized), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
