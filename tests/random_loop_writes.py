"""Statements for the random programs (tests/test_random_programs.py): a loop that writes in
place into what the function's lists, dicts and arrays hold, through a name it binds (issue 13).

Each form below gave a wrong gradient with ``checkpoint=2`` (and some without it) until it was
fixed in sessions 2026-12-03b and c; the loop is drawn at the top of ``f``, where
``checkpoint=`` rewrites it:

- ``item``: a name bound in the loop to an item of a list or dict of the function's own, then
  written in place (``O = L[0]; O *= c``), spelled with ``=``, ``:=``, a tuple target, a
  comprehension's item, a loop over the container, and a shallow copy (``L.copy()[0]``,
  ``list(L)[0]``, ``L[:][0]``, ``copy.copy(L)[0]``, ``d.copy()["a"]``, ``M = L.copy();
  M[0] *= c``): the write is into the container's own array, which the next trip reads;
- ``def``: a local def that the loop calls, writing into the function's array or list
  (``acc[:] = acc + t``, ``np.add(acc, t, out=acc)``, ``hs.append(t)``): with ``checkpoint=``
  a located refusal at the def's line, by design (``KNOWN_REFUSALS``' "write into an array
  that may share memory");
- ``next trip``: ``g[j] = ...; L.append(g)``: the next trip writes into the array ``L``
  already holds; refused by design at the line, with or without ``checkpoint=``
  (``KNOWN_REFUSALS``' "array read after a write into one it refers to"): its programs are
  counted among those drawn (``DRAWN_MINIMUM``).
"""

N = 5
MAX_TRIPS = 4

ITEM = "loop writes through a name bound to an item"
SHALLOW = "loop writes into an item of a shallow copy"
DEF = "def the loop calls writes into the function's array"
NEXT_TRIP = "loop writes in the next trip into an array a list holds"
FEATURES = (ITEM, SHALLOW, DEF, NEXT_TRIP)

# (binding, item read by the loop): how the loop's name gets the container's first item
LIST_BINDINGS = [
    ("{o} = {c}[0]", "0"), ("{o} = {c}[-1]", "-1"), ("({o} := {c}[0])", "0"),
    ("{o}, {q} = {c}[0], {c}[1]", "0"), ("{o} = [v for v in {c}][0]", "0"),
    ("{o} = {c}.copy()[0]", "0"), ("{o} = list({c})[0]", "0"), ("{o} = {c}[:][0]", "0"),
    ("{o} = copy.copy({c})[1]", "1"), ("{o} = {c}.copy()[-1]", "-1"),
]
DICT_BINDINGS = [
    ('{o} = {c}["a"]', '"a"'), ('({o} := {c}["b"])', '"b"'), ('{o} = {c}.copy()["a"]', '"a"'),
    ('{o} = copy.copy({c})["a"]', '"a"'),
]


class LoopWrites:
    """The statements above, for ``Gen`` (which provides ``pick``, ``coin``, ``integer``,
    ``fresh``, ``scalar``, ``vector``, ``features`` and ``uses``)."""

    def loopwrite(self, scope, ind, depth):
        form = self.pick(["item", "def", "next trip", "item", "item", "def", "item's copy"])
        if form == "def" and ind != "    ":
            form = "item"  # (a nested def at the top of f's body only)
        return {"item": self.item_loop, "def": self.def_loop, "next trip": self.next_trip_loop,
                "item's copy": self.item_copy_loop}[form](scope, ind)

    def _loop_start(self, scope, ind):
        """``z = <v> * 1.0`` and a ``for`` header: z, the loop's index, the body's scope."""
        z, i = self.fresh("z"), self.fresh("i")
        body = scope.child()
        body.names[i] = "i"
        body.readonly.add(i)
        lines = [f"{ind}{z} = ({self.vector(scope, 1)}) * 1.0",
                 f"{ind}for {i} in range({self.integer(1, MAX_TRIPS)}):"]
        return z, body, lines

    def _write(self, o, body, ind):
        """A write in place into the array ``o``."""
        j = self.integer(0, N - 1)
        # (an element write, `O[j] += v`, or an `out=` into an item is refused at first order,
        # a known refusal: one form in four, so that most of these programs are checked)
        return f"{ind}" + self.pick([
            f"{o} *= np.tanh({self.scalar(body, 1)})", f"{o} += {self.vector(body, 1)} * 0.5",
            f"{o} -= {self.vector(body, 1)} * 0.3", f"{o}[{j}] += {self.scalar(body, 1)}",
            f"{o} *= np.tanh({self.vector(body, 1)})", f"{o} += {self.scalar(body, 1)}",
            f"{o} *= 0.5 + np.tanh({self.scalar(body, 1)}) ** 2",
            f"np.multiply({o}, np.tanh({self.scalar(body, 1)}), out={o})"])

    def item_loop(self, scope, ind):
        """A name the loop binds to an item of a list or dict made here, written in place."""
        self.features.add(ITEM)
        c, o, q, s = self.fresh("L"), self.fresh("O"), self.fresh("Q"), self.fresh("s")
        is_dict = self.coin(1, 3)
        first, second = self.vector(scope, 1), self.vector(scope, 1)
        made = (f'{{"a": ({first}) * 1.0, "b": np.sin({second})}}' if is_dict
                else f"[({first}) * 1.0, np.sin({second})]")
        z, body, lines = self._loop_start(scope, ind)
        lines.insert(0, f"{ind}{c} = {made}")
        inner = ind + "    "
        form = self.pick(["bind"] * 4 + ["loop over it", "copy's item"])
        if form == "bind":
            binding, read = self.pick(DICT_BINDINGS if is_dict else LIST_BINDINGS)
            writes = [f"{inner}{binding.format(o=o, q=q, c=c)}", self._write(o, body, inner)]
        elif form == "loop over it":
            items = self.pick([f"{c}.values()"] if is_dict
                              else [c, f"{c}.copy()", f"list({c})", f"{c}[:]"])
            read = '"a"' if is_dict else "0"
            writes = [f"{inner}for {o} in {items}:", self._write(o, body, inner + "    ")]
        else:  # the copy's own slot holds the container's array: M[k] *= c writes into it
            read = '"a"' if is_dict else self.pick(["0", "1"])
            copied = self.pick([f"{c}.copy()", f"copy.copy({c})"]
                               + ([] if is_dict else [f"list({c})", f"{c}[:]"]))
            writes = [f"{inner}{o} = {copied}", f"{inner}{o}[{read}] *= np.tanh("
                      f"{self.scalar(body, 1)})"]
        text = "\n".join(writes)
        if "copy" in text or "list(" in text or "[:]" in text or "dict(" in text:
            self.features.add(SHALLOW)
        if "copy.copy" in text:
            self.uses("copy")
        # the next trip reads the item written (and, after the loop, the container)
        lines += [f"{inner}{z} = {z} * np.tanh({self.scalar(body, 1)}) + {c}[{read}] * 0.5",
                  *writes]
        after = '"b"' if is_dict else "1"
        lines.append(f"{ind}{s} = np.sum({z} * {c}[{read}]) + np.sum(np.sin({c}[{after}]))")
        scope.names[s] = "s"
        return lines

    def item_copy_loop(self, scope, ind):
        """A copy of an item of a list made here (``C = L[1].copy()``), written in place in a
        loop: of an item that is a list the copy shares its arrays (``C[0] *= c`` writes into
        ``L[1][0]``; refused when it runs, KNOWN_REFUSALS' "write into the items of a shallow
        copy of an item"); of an array item, a new array (session 2026-12-03c: dropped, no
        error, 1.96 for Python's 1.764)."""
        self.features.add(SHALLOW)
        c, o, s = self.fresh("L"), self.fresh("C"), self.fresh("s")
        first, second = self.vector(scope, 1), self.vector(scope, 1)
        nested = self.coin(1, 2)
        held = f"{c}[1][0]" if nested else f"{c}[1]"
        copied = self.pick([f"{c}[1].copy()", f"copy.copy({c}[1])"])
        if "copy.copy" in copied:
            self.uses("copy")
        z, body, lines = self._loop_start(scope, ind)
        item = f"[np.sin({second})]" if nested else f"np.sin({second})"
        lines[:0] = [f"{ind}{c} = [({first}) * 1.0, {item}]", f"{ind}{o} = {copied}"]
        inner = ind + "    "
        lines += [f"{inner}{z} = {z} * np.tanh({self.scalar(body, 1)}) + {held} * 0.5",
                  self._write(f"{o}[0]" if nested else o, body, inner)]
        copy_read = "" if nested else f" + np.sum(np.sin({o}))"
        lines.append(f"{ind}{s} = np.sum({z} * {held}) + np.sum({c}[0]){copy_read}")
        scope.names[s] = "s"
        return lines

    def def_loop(self, scope, ind):
        """A def that the loop calls, writing into the function's array or list."""
        self.features.add(DEF)
        g, t, s = self.fresh("g"), self.fresh("t"), self.fresh("s")
        acc = self.fresh("acc")
        if self.coin(1, 3):
            start, read = "[]", f"np.sum(np.array({acc} + [np.zeros({N})]))"
            write = f"{acc}.append({t} * 1.0)"
        else:
            start, read = f"np.zeros({N})", f"np.sum(np.sin({acc}))"
            write = self.pick([f"{acc}[:] = {acc} + {t}", f"np.add({acc}, {t}, out={acc})",
                               f"{acc}[1:3] = {t}[0:2]"])
        z, body, lines = self._loop_start(scope, ind)
        lines[:0] = [f"{ind}{acc} = {start}", f"{ind}def {g}({t}):", f"{ind}    {write}"]
        lines += [f"{ind}    {z} = {z} * np.tanh({self.scalar(body, 1)}) + {read}",
                  f"{ind}    {g}({z} * {self.scalar(body, 1)})"]
        lines.append(f"{ind}{s} = np.sum({z}) + {read}")
        scope.names[s] = "s"
        return lines

    def next_trip_loop(self, scope, ind):
        """``g[j] = ...; L.append(g)``: the next trip writes into what L holds (refused)."""
        self.features.add(NEXT_TRIP)
        g, c, s = self.fresh("w"), self.fresh("L"), self.fresh("s")
        j = self.integer(0, N - 1)
        z, body, lines = self._loop_start(scope, ind)
        lines.insert(0, f"{ind}{g} = ({self.vector(scope, 1)}) * 1.0")
        lines.insert(1, f"{ind}{c} = []")
        lines += [f"{ind}    {z} = {z} * np.tanh({self.scalar(body, 1)})",
                  f"{ind}    {g}[{j}] = np.sum({z}) * {self.scalar(body, 1)}",
                  f"{ind}    {c}.append({g})"]
        lines.append(f"{ind}{s} = np.sum({c}[0] * {z})")
        scope.names[s] = "s"
        return lines
