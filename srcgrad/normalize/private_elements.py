"""Elements of a list of new arrays that the list gives away: writable like copies.

Requires: an A-normal-form body (``L = list_append(L, v)``, ``y = setitem(y, i, v)``).
Guarantees: the names returned are bound to array elements that no other read of the list
shares; ``CopyBeforeWrite`` may treat them as owned once it has checked that the values appended
(``v``, and whatever else holds them) are not read after the write.

``L = [x * k for k in range(3)]; a = L[1]; a[0] = 1.0``: ``a`` is L's element itself, so the
write changes ``L[1]`` too; it is safe to accept when nothing reads L's elements again except
by taking such private elements. ``private_elements`` finds the names bound so: the list is
built only from ``[]``, appends of new arrays (``_owning`` values) and copies of such lists; it
is read only by ``len``, appends, copies into another such list, and ``a = L[k]`` at distinct
constant positions into names that are written into (``setitem``) and bound nowhere else.
``CopyBeforeWrite`` treats them as owned. A loop over the list (``for y in L: y[0] = v``, which
reads ``for i in range(len(L)): y = L[i]``) gives each element away once, when the list is
taken from by no other statement. Each take runs at most once per list made: in the loops the
list is made in (a take in a loop of its own would give the same element away twice, and the
second time Python's element holds the first write).
"""

from __future__ import annotations

import gast

from ..astutil import ordered_walk


def private_elements(fn_node, owning, setitem, append, item_written):
    """``{a: (the statement a = L[k], the names appended to L)}`` for each private element
    ``a``."""
    return _PrivateElements(owning, setitem, append, item_written).run(fn_node)


class _PrivateElements:
    def __init__(self, owning, setitem, append, item_written):
        self.owning = owning
        self.setitem = setitem
        self.append = append
        self.item_written = item_written

    def run(self, fn_node):
        self.assigned = {}
        self.loops = {}  # id of an assignment -> the loops around it, outermost first
        self.ranges = {}  # id of `y = L[i]` in `for i in range(n)` -> (L, n)
        self.statements = []  # (assignment, its loops)
        self._visit(fn_node.body, ())
        self.lists = self._fresh_lists()
        allowed, taken, loads = set(), {}, {}
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                self._allow(n, allowed, taken)
            elif _is_len(n):
                allowed.update(id(a) for a in n.args)
            elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.lists:
                loads.setdefault(n.id, []).append(id(n))
        out = {}
        for name, elements in taken.items():
            positions = [k for _, k, _ in elements]
            distinct = len(set(positions)) == len(positions) and (
                None not in positions or len(positions) == 1)
            if distinct and all(i in allowed for i in loads.get(name, ())):
                appended = self._appended(name, set())
                out.update((e, (stmt, appended)) for e, _, stmt in elements)
        return out

    def _appended(self, name, seen):
        """The names appended to list ``name`` or to the lists it copies."""
        seen.add(name)
        out = set()
        for value in self.assigned.get(name, ()):
            if self._is_append(value, name):
                out.add(value.args[1].id)
            elif isinstance(value, gast.Name) and value.id not in seen:
                out |= self._appended(value.id, seen)
        return out

    def _visit(self, stmts, loops):
        """Record each assignment's value and loops, and each ``y = L[i]`` heading a loop
        ``for i in range(n)`` with ``n = len(L)``."""
        for s in stmts:
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                self.assigned.setdefault(s.targets[0].id, []).append(s.value)
                self.loops[id(s)] = loops
                self.statements.append((s, loops))
            inner = loops + (s,) if isinstance(s, (gast.For, gast.While)) else loops
            for field in ("body", "orelse"):
                block = getattr(s, field, None)
                if isinstance(block, list):
                    self._visit(block, inner if field == "body" else loops)
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name) and s.body:
                head = s.body[0]
                length = _range_length(s.iter)
                if (isinstance(head, gast.Assign) and isinstance(head.value, gast.Subscript)
                        and isinstance(head.value.value, gast.Name)
                        and isinstance(head.value.slice, gast.Name)
                        and head.value.slice.id == s.target.id and length is not None):
                    self.ranges[id(head)] = (head.value.value.id, length)

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

    def _allow(self, stmt, allowed, taken):
        """Record the loads of a list in ``stmt``'s value that do not read its elements in
        place."""
        value, target = stmt.value, stmt.targets[0].id
        if isinstance(value, gast.Name) and value.id in self.lists and target in self.lists:
            allowed.add(id(value))
        elif self._is_append(value, target) and target in self.lists:
            allowed.add(id(value.args[0]))
        elif self._takes_private(stmt, value, target):
            allowed.add(id(value.value))
            position = value.slice.value if isinstance(value.slice, gast.Constant) else None
            taken.setdefault(value.value.id, []).append((target, position, stmt))

    def _takes_private(self, stmt, value, target):
        if not (
            isinstance(value, gast.Subscript)
            and isinstance(value.value, gast.Name)
            and value.value.id in self.lists
            and target in self.item_written
            and sum(not _calls(x, self.setitem) for x in self.assigned[target]) == 1
        ):
            return False
        made = self._made_in(value.value.id)
        loops = self.loops.get(id(stmt))
        if isinstance(value.slice, gast.Constant):
            return (type(value.slice.value) is int and value.slice.value >= 0
                    and made == {loops})
        listed, length = self.ranges.get(id(stmt), (None, None))
        return (listed == value.value.id and made == {loops[:-1]}
                and self._length_of(length, listed))

    def _made_in(self, name, seen=None):
        """The loops around each ``[]`` a list (or a list it copies) starts from."""
        seen = set() if seen is None else seen
        seen.add(name)
        out = set()
        for node, loops in self._bindings(name):
            if isinstance(node.value, gast.List):
                out.add(loops)
            elif isinstance(node.value, gast.Name) and node.value.id not in seen:
                out |= self._made_in(node.value.id, seen)
        return out

    def _bindings(self, name):
        return [(n, loops) for n, loops in self.statements if n.targets[0].id == name]

    def _length_of(self, length, listed):
        """Whether ``length`` (a ``range``'s argument) is ``len(listed)``, or a name bound once
        to it."""
        if _is_len(length):
            return _is_name(length.args[0], listed)
        if not isinstance(length, gast.Name):
            return False
        values = self.assigned.get(length.id, [])
        return len(values) == 1 and _is_len(values[0]) and _is_name(values[0].args[0], listed)

    def _is_append(self, value, target):
        return (
            _calls(value, self.append)
            and len(value.args) == 2
            and isinstance(value.args[0], gast.Name)
            and value.args[0].id == target
            and isinstance(value.args[1], gast.Name)
        )


def _range_length(node):
    """``n`` of ``range(n)``, else None."""
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "range" and len(node.args) == 1 and not node.keywords):
        return node.args[0]
    return None


def _is_name(node, name):
    return isinstance(node, gast.Name) and node.id == name


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
