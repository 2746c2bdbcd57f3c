"""The undo log of a pullback's ``back`` whose sweep writes into the primal's values in place.

A reverse sweep restores what the primal overwrote (``y = restore_item(y, i, saved)``) and pops
what it appended to a list, in place, on the primal's own objects. ``back`` may be called again,
so before it returns it puts every object back as the primal left it: each write goes through an
``Undo``, which copies an array, list or dict once, the first time the call writes into it (a
write into another kind of object keeps the one element it overwrites), and ``rewind()`` (in a
``finally``) puts those back, the last kept first. The objects keep their identity throughout,
so an alias (a view, a list holding the array) sees the same values during the sweep as in the
vjp. Rewinding the last kept first puts back, at each position, the copy kept first of all the
objects that cover it: the value the position had before the call (a view's copy kept after a
write through its base is overwritten by the base's).

Only pullback code calls these (never differentiated: a pullback returns a function).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .containers import list_append, list_pop
from .indexing import copy_item, restore_item, setitem


class Undo:
    """The writes one call of ``back`` made, undone by ``rewind``."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.kept: set[int] = set()

    def _keep(self, a: Any, index: Any = None) -> None:
        if id(a) in self.kept:
            return
        if isinstance(a, (np.ndarray, list, dict)):
            self.kept.add(id(a))
            self.log.append((_put_back, a, a.copy()))
        else:  # the element only, at each write
            self.log.append((restore_item, a, index, copy_item(a, index)))

    def restore_item(self, a: Any, index: Any, saved: Any) -> Any:
        self._keep(a, index)
        return restore_item(a, index, saved)

    def setitem(self, a: Any, index: Any, value: Any) -> Any:
        self._keep(a, index)
        return setitem(a, index, value)

    def list_append(self, items: Any, value: Any) -> Any:
        if isinstance(items, list):
            self._keep(items)
        else:
            self.log.append((list_pop, items))
        return list_append(items, value)

    def list_pop(self, items: Any) -> Any:
        if isinstance(items, list):
            self._keep(items)
        else:
            self.log.append((list_append, items, items[-1]))
        return list_pop(items)

    def rewind(self) -> None:
        """Put back what was kept, the last kept first."""
        while self.log:
            undo, *args = self.log.pop()
            undo(*args)
        self.kept.clear()


def _put_back(a: Any, kept: Any) -> None:
    """``a``'s contents as they were when ``kept`` was copied, in place."""
    if isinstance(a, np.ndarray):
        a[...] = kept
    elif isinstance(a, list):
        a[:] = kept
    else:
        a.clear()
        a.update(kept)


#: the helpers ``Undo`` logs, by the method that does so
LOGGED = {restore_item: "restore_item", setitem: "setitem", list_append: "list_append",
          list_pop: "list_pop"}
