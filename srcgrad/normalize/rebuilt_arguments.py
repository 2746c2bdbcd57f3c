"""A differentiated argument rebuilt as JAX's function sees it; a stage of ``pipeline``.

Requires: ``ctx.rebuild`` (parameter -> the plan ``pytrees.rebuild_plan`` gave its argument,
``rebuilding.Rebuilding``), the namer and namespace. Guarantees: the function starts by
rebinding each such parameter to its argument with every registered object the plan names
rebuilt by its registered ``flatten`` and ``unflatten`` (called, so the inliner inlines them,
and the ``__init__`` an ``unflatten`` calls), at the ``def`` line:

    def f(b, x):                              def f(b, x):
        return np.sum(b.a2 * x)      ->           b_parts = flatten(b)
                                                  b = unflatten(b_parts[1], (b_parts[0][0],))
                                                  return np.sum(b.a2 * x)
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

import gast

from ..emit import naming


def run(node, ctx):
    """``node`` with its parameters ``ctx.rebuild`` names rebuilt first (see above)."""
    text = "\n".join(rebuild_statements(ctx.rebuild, ctx.namer.fresh, ctx.global_name))
    added = gast.parse(text).body
    for stmt in added:
        for n in gast.walk(stmt):
            if isinstance(n, (gast.stmt, gast.expr)):
                n.lineno = n.end_lineno = node.lineno
                n.col_offset, n.end_col_offset = node.col_offset, node.col_offset + 3
    node.body[:0] = added
    return node


def rebuild_statements(plans: dict[str, Any], fresh: Callable[[str], str],
                       global_name: Callable[[Any, str], str]) -> list[str]:
    """The statements, as text, that rebind each parameter ``plans`` names to its argument
    rebuilt (see the module docstring); ``fresh(stem)`` names a new local, ``global_name(obj,
    stem)`` names a function the statements call."""
    lines: list[str] = []
    for param, plan in plans.items():
        lines.append(f"{param} = {_rebuilt_expr(param, plan, lines, fresh, global_name)}")
    return lines


def _rebuilt_expr(expr: str, plan: Any, lines: list[str], fresh: Callable[[str], str],
                  global_name: Callable[[Any, str], str]) -> str:
    """The expression of the value ``expr`` rebuilt by ``plan``, after ``lines``."""
    if plan is None:
        return expr
    if plan[0] == "registered":
        _, cls, children_type, parts = plan
        _, flatten, unflatten = cls.__srcgrad_pytree__
        held = fresh(naming.PARTS.format(expr if expr.isidentifier() else naming.CHILD))
        flat = global_name(flatten, naming.FLATTEN)
        unflat = global_name(unflatten, naming.UNFLATTEN)
        lines.append(f"{held} = {flat}({expr})")
        items = [_rebuilt_expr(f"{held}[0][{i}]", p, lines, fresh, global_name)
                 for i, p in enumerate(parts)]
        return f"{unflat}({held}[1], {_display(children_type, items)})"
    if plan[0] == "fields":
        held = fresh(naming.PARTS.format(expr if expr.isidentifier() else naming.CHILD))
        lines.append(f"{held} = {global_name(copy.copy, naming.COPY)}({expr})")
        for name, part in plan[2]:
            value = _rebuilt_expr(f"{expr}.{name}", part, lines, fresh, global_name)
            lines.append(f"{held}.{name} = {value}")
        return held
    if plan[0] == "replaced":  # (a frozen dataclass: its fields cannot be written)
        fields = [f"{name}={_rebuilt_expr(f'{expr}.{name}', part, lines, fresh, global_name)}"
                  for name, part in plan[2]]
        replace = global_name(dataclasses.replace, naming.REPLACE)
        return f"{replace}({expr}, {', '.join(fields)})"
    if plan[0] == "dict":
        items = [f"{k!r}: {_rebuilt_expr(f'{expr}[{k!r}]', p, lines, fresh, global_name)}"
                 for k, p in plan[1]]
        return "{" + ", ".join(items) + "}"
    items = [_rebuilt_expr(f"{expr}[{i}]", p, lines, fresh, global_name)
             for i, p in enumerate(plan[1])]
    return _display(list if plan[0] == "list" else tuple, items)


def _display(kind: type, items: list[str]) -> str:
    if kind is list:
        return "[" + ", ".join(items) + "]"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
