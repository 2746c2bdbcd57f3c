"""Count the rules by the highest order the third-order walk verifies (issue 15's closing note).

    PYTHONPATH=$PWD python tests/third_order_count.py [--all-rows] [--list]

For every rule with a row in ``tests/test_rules.py`` (``ROWS`` and ``NUMERIC_ROWS``) and
``tests/test_scipy_rules.py``, its
shortest row (every row with ``--all-rows``; a rule then counts at the lowest order any of its
rows reaches) is walked order by order, one input at a time (``tests/third_order.py``); the
highest order verified is counted, and for each rule below 3 the error that stopped it is printed
(``--list`` prints every rule). The counts are measured, not read from ``LIMITS``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_rules  # noqa: E402
import test_scipy_rules  # noqa: E402
from third_order import walk  # noqa: E402

from srcgrad.rules.registry import _qualname  # noqa: E402


def highest(r, build):
    """``(order, why)``: the highest order verified for row ``r`` and what stopped the next."""
    f, args = build(r, 7)
    wrt = tuple(r.wrt) or tuple(args)
    reached = 3
    why = None
    for w in wrt:
        for order in range(1, reached + 1):
            try:
                walk(f, args, (w,), order)
            except Exception as exc:  # noqa: BLE001  (the report is the point)
                reached = order - 1
                why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
                break
    return reached, why


def main(argv):
    all_rows = "--all-rows" in argv
    results = {}
    for table in (test_rules, test_scipy_rules):
        rows = table.ROWS + list(getattr(table, "NUMERIC_ROWS", []))
        rows = [r for r in rows if not getattr(r, "marks", ())]
        rows += list(getattr(table, "ONE_ACTIVE", []))
        chosen = {}
        for r in rows:
            if all_rows:
                chosen.setdefault(id(r.fn), []).append(r)
            else:
                best = chosen.setdefault(id(r.fn), [r])
                if len(r.call) < len(best[0].call):
                    chosen[id(r.fn)] = [r]
        for rs in chosen.values():
            name = _qualname(rs[0].fn)
            outcome = min((highest(r, table.build) + (r.call,) for r in rs),
                          key=lambda o: o[0])
            results[name] = outcome
    counts = Counter(order for order, _, _ in results.values())
    for name, (order, why, call) in sorted(results.items(), key=lambda kv: (kv[1][0], kv[0])):
        if order < 3 or "--list" in argv:
            print(f"{order}  {name:40} {call[:50]:50} {why or ''}")
    print()
    print(f"rules walked: {len(results)}")
    for order in (0, 1, 2, 3):
        print(f"  highest order verified {order}: {counts.get(order, 0)}")


if __name__ == "__main__":
    main(sys.argv[1:])
