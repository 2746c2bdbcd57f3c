"""Every rule to third order (issue 15): the walk of ``tests/third_order.py`` over the rule tables.

By default one row per rule (its shortest in ``tests/test_rules.py``, ``tests/test_scipy_rules.py``)
is walked to third order, one input at a time, in one composition per order (``grad``,
``jvp(grad(f))``, ``jvp(jvp(grad(f)))``). ``SRCGRAD_THIRD_ORDER=all`` walks every row, all inputs
at once, in every composition the walk knows.

A rule that does not reach third order is listed in ``LIMITS`` with the order it reaches and why
not further; the test checks both (the orders up to the limit, and that the next one is refused
with that reason), so a limit that no longer holds fails until it is removed.
``python tests/third_order_count.py`` counts the rules by the highest order verified.
"""

from __future__ import annotations

import os
import re

import pytest
import test_rules as numpy_table
from third_order import walk

FULL = os.environ.get("SRCGRAD_THIRD_ORDER") == "all"

# fn -> (highest order it is differentiable to, what the refusal of the next order says)
LIMITS = {}
# rows whose limit is lower than their rule's (a case of the rule the others do not reach)
ROW_LIMITS = {}


def _rows(table):
    rows = [r for r in table.ROWS if not getattr(r, "marks", ())]
    if FULL:  # the numerical methods' rows (np.gradient, cov, cond, ...): in the full sweep
        rows += [r for r in getattr(table, "NUMERIC_ROWS", []) if not getattr(r, "marks", ())]
    rows += list(getattr(table, "ONE_ACTIVE", []))
    if FULL:
        return rows
    shortest = {}  # per rule, the row with the shortest call: the cheapest to differentiate
    for r in rows:
        best = shortest.setdefault(id(r.fn), r)
        if len(r.call) < len(best.call):
            shortest[id(r.fn)] = r
    return list(shortest.values())


def limit(r):
    """``(order, reason)``: how far the row's rule is differentiable, and why not further."""
    call = r.call.split(";")[-1].strip()
    return ROW_LIMITS.get(call) or LIMITS.get(r.fn) or (3, None)


def check_row(r, build):
    """The walk over every differentiated input of the row at once (full sweep) or over each
    input alone (by default: a tuple ``wrt`` makes the generated code several times longer)."""
    f, args = build(r, 7)
    order, why = limit(r)
    wrt = tuple(r.wrt) or tuple(args)
    selections = [wrt] if FULL else [(w,) for w in wrt]
    for selected in selections:
        assert walk(f, args, selected, order, "all" if FULL else "one") == order
    if why is not None:
        with pytest.raises(Exception, match=re.escape(why)):
            walk(f, args, wrt[:1], order + 1)


NUMPY_ROWS = _rows(numpy_table)


@pytest.mark.parametrize("r", NUMPY_ROWS, ids=lambda r: f"{r.call[:50]}-{r.wrt}")
def test_numpy_rule_to_third_order(r):
    check_row(r, numpy_table.build)


def _scipy_table():
    pytest.importorskip("scipy")
    import test_scipy_rules

    return test_scipy_rules


# The SciPy table is walked in the full sweep only (its ~60 rules would double the default's
# time); its rules' second order is checked by test_scipy_rules.py's SECOND rows.
SCIPY_ROWS = _rows(_scipy_table()) if FULL else []


@pytest.mark.parametrize("r", SCIPY_ROWS, ids=lambda r: f"{r.call[:50]}-{r.wrt}")
def test_scipy_rule_to_third_order(r):
    check_row(r, _scipy_table().build)


# Rows whose helpers were rewritten so that their derivatives close at every order, walked by
# default (one input each): the shortest row of their rule does not reach them (the matrix norms
# of singular values, np.average in its weights) or their table is walked in the full sweep only
# (np.linalg.cond, ~1.5 s, is left to the full sweep and tests/third_order_count.py).
RECOVERED = [
    ("numpy", "np.linalg.norm(a, 'nuc')", "a"),
    ("numpy", "np.average(a, axis=1, weights=w)", "w"),
    ("numeric", "np.corrcoef(a, b, rowvar=False)", "b"),
    ("numeric", "np.real(np.linalg.eigvals(a) ** 2)", "a"),
    ("scipy", "stats.multivariate_normal.logpdf(v, mean, (c @ np.transpose(c) + 3 * np.eye(3)))",
     "c"),
]


@pytest.mark.parametrize("table, call, wrt", RECOVERED, ids=lambda v: str(v)[:40])
def test_recovered_rows_to_third_order(table, call, wrt):
    module = _scipy_table() if table == "scipy" else numpy_table
    rows = numpy_table.NUMERIC_ROWS if table == "numeric" else module.ROWS
    [r] = [r for r in rows if r.call == call][:1]
    f, args = module.build(r, 7)
    assert walk(f, args, (wrt,), 3) == 3
