"""The undo log of a pullback's ``back`` whose sweep writes into the primal's values in place.

A reverse sweep restores what the primal overwrote (``y = restore_item(y, i, saved)``) and pops
what it appended to a list, in place, on the primal's own objects. ``back`` may be called again,
so before it returns it puts every object back as the primal left it: each write goes through an
``Undo`` that first keeps what it overwrites (one element, not the array), and ``rewind()`` (in a
``finally``) undoes the writes newest first. The objects keep their identity throughout, so an
alias (a view, a list holding the array) sees the same values during the sweep as in the vjp.

Only pullback code calls these (never differentiated: a pullback returns a function).
"""

from __future__ import annotations

from typing import Any

from .containers import list_append, list_pop
from .indexing import copy_item, restore_item, setitem


class Undo:
    """The writes one call of ``back`` made, undone by ``rewind``."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []

    def restore_item(self, a: Any, index: Any, saved: Any) -> Any:
        self.log.append((restore_item, a, index, copy_item(a, index)))
        return restore_item(a, index, saved)

    def setitem(self, a: Any, index: Any, value: Any) -> Any:
        self.log.append((restore_item, a, index, copy_item(a, index)))
        return setitem(a, index, value)

    def list_append(self, items: Any, value: Any) -> Any:
        self.log.append((list_pop, items))
        return list_append(items, value)

    def list_pop(self, items: Any) -> Any:
        self.log.append((list_append, items, items[-1]))
        return list_pop(items)

    def rewind(self) -> None:
        """Undo every logged write, newest first."""
        while self.log:
            undo, *args = self.log.pop()
            undo(*args)


#: the helpers ``Undo`` logs, by the method that does so
LOGGED = {restore_item: "restore_item", setitem: "setitem", list_append: "list_append",
          list_pop: "list_pop"}
