"""Elements of a list of new arrays that the list gives away: writable like copies.

Requires: an A-normal-form body (``L = list_append(L, v)``, ``y = setitem(y, i, v)``).
Guarantees: the names returned are bound to array elements no other value that is read
shares; ``CopyBeforeWrite`` may treat them as owned.

``L = [x * k for k in range(3)]; a = L[1]; a[0] = 1.0``: ``a`` is L's element itself, so the
write changes ``L[1]`` too; it is safe to accept when nothing reads L's elements again except
by taking such private elements. ``private_elements`` finds the names bound so: the list is
built only from ``[]``, appends of new arrays (``_owning`` values) and copies of such lists; it
is read only by ``len``, appends, copies into another such list, and ``a = L[k]`` at distinct
constant positions into names that are written into (``setitem``) and bound nowhere else.
``CopyBeforeWrite`` treats them as owned.
"""

from __future__ import annotations

import gast

from ..astutil import ordered_walk


def private_elements(fn_node, owning, setitem, append, item_written):
    return _PrivateElements(owning, setitem, append, item_written).run(fn_node)


class _PrivateElements:
    def __init__(self, owning, setitem, append, item_written):
        self.owning = owning
        self.setitem = setitem
        self.append = append
        self.item_written = item_written

    def run(self, fn_node):
        self.assigned = {}
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                self.assigned.setdefault(n.targets[0].id, []).append(n.value)
        self.lists = self._fresh_lists()
        allowed, taken, loads = set(), {}, {}
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                self._allow(n.value, n.targets[0].id, allowed, taken)
            elif _is_len(n):
                allowed.update(id(a) for a in n.args)
            elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.lists:
                loads.setdefault(n.id, []).append(id(n))
        out = set()
        for name, elements in taken.items():
            positions = [k for _, k in elements]
            distinct = len(set(positions)) == len(positions)
            if distinct and all(i in allowed for i in loads.get(name, ())):
                out |= {e for e, _ in elements}
        return out

    def _fresh_lists(self):
        owning = {v for v, values in self.assigned.items() if all(map(self.owning, values))}
        lists = {v for v, values in self.assigned.items()
                 if all(self._builds(x, v, owning) for x in values)}
        return {v for v in lists
                if all(not isinstance(x, gast.Name) or x.id in lists for x in self.assigned[v])}

    def _builds(self, value, target, owning):
        if isinstance(value, gast.List):
            return not value.elts
        if isinstance(value, gast.Name):
            return True
        return self._is_append(value, target) and value.args[1].id in owning

    def _allow(self, value, target, allowed, taken):
        """Record the loads of a list in ``value`` that do not read its elements in place."""
        if isinstance(value, gast.Name) and value.id in self.lists and target in self.lists:
            allowed.add(id(value))
        elif self._is_append(value, target) and target in self.lists:
            allowed.add(id(value.args[0]))
        elif self._takes_private(value, target):
            allowed.add(id(value.value))
            taken.setdefault(value.value.id, []).append((target, value.slice.value))

    def _takes_private(self, value, target):
        return (
            isinstance(value, gast.Subscript)
            and isinstance(value.value, gast.Name)
            and value.value.id in self.lists
            and target in self.item_written
            and isinstance(value.slice, gast.Constant)
            and type(value.slice.value) is int
            and value.slice.value >= 0
            and sum(not _calls(x, self.setitem) for x in self.assigned[target]) == 1
        )

    def _is_append(self, value, target):
        return (
            _calls(value, self.append)
            and len(value.args) == 2
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == target
            and isinstance(value.args[1], gast.Name)
        )


def _is_len(node):
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
        node.func.id == "len"
    )


def _calls(value, name):
    return (
        isinstance(value, gast.Call)
        and isinstance(value.func, gast.Name)
        and value.func.id == name
    )
