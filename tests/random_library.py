"""Statements of the random programs (tests/test_random_programs.py) around library code and the
blocks Python runs code in: opaque compiled calls, ``with`` managers, ``try`` blocks, arrays
from outside the function. A mixin of ``Gen``: each method returns the lines of one statement
(or of a few), and either works (its gradient is checked like the rest of the program) or is a
located refusal the checker lists in ``KNOWN_REFUSALS`` -- never a number srcgrad cannot stand by.

- ``opaque``: a NumPy, ``np.linalg`` or SciPy call srcgrad has a rule for (``np.hypot``,
  ``np.linalg.slogdet``, ``np.linalg.solve``, ``scipy.special.erf``), one it has none for given a
  value with gradient (``np.frexp``, ``np.modf``, ``np.nextafter``: refused) or without one
  (works), a compiled BLAS routine given an array read elsewhere (refused) or a copy (works);
- ``managed``: a ``with`` block under ``np.errstate``, ``contextlib.nullcontext``,
  ``warnings.catch_warnings`` or a manager of the program's own given nothing (works), one given
  a variable (refused), a jump out of the block in a loop (refused);
- ``guarded``: ``try`` ... ``finally`` and ``try`` ... ``except`` around a block (works, or the
  located refusals of a jump out of it or a change read after it);
- ``outside``: the module's global array ``GV``, number ``GS`` and list of arrays ``GL`` read,
  copied and updated (``a = GV; a += v``, ``np.copyto(GV, v)``: refused; ``s = GS; s += v``,
  ``a = GV.copy(); a += v``, ``GV.sort()``: work; ``GV.sort()`` after a read of GV or in a loop
  reading it: refused).
"""

N = 5  # the length of the vectors (tests/test_random_programs.N)

# module-level definitions a program may use, by name
DEFINITIONS = {
    "GV": ["GV = np.array([0.4, -0.2, 0.9, 1.3, -0.6])"],
    "GS": ["GS = 0.7"],
    "GL": ["GL = [np.array([0.5, 1.0, -0.5, 0.2, 0.1]), np.array([0.3, 0.3, 0.3, -0.1, 0.6])]"],
    # GV reached through a class attribute and a helper (tests/test_random_programs: f called
    # with GV itself as x); named after GV, whose definition they follow
    "GW": ["class GW:", "    W = GV", "", "", "def gw_read(v):", "    return np.sum(GV * v)"],
    "Keeper": ["class Keeper:", "    def __enter__(self):", "        return self", "",
               "    def __exit__(self, *exc):", "        return False"],
    "Scaler": ["class Scaler:", "    def __init__(self, y):", "        self.y = y", "",
               "    def __enter__(self):", "        self.y *= 2.0", "        return self.y", "",
               "    def __exit__(self, *exc):", "        self.y *= 0.5", "        return False"],
}
IMPORTS = {"copy": "import copy", "contextlib": "import contextlib", "warnings": "import warnings",
           "blas": "import scipy.linalg.blas", "special": "import scipy.special"}

# the refusals these statements meet by design (message patterns, for KNOWN_REFUSALS)
REFUSALS = {
    "update of an object from outside the function": (
        r"updates in place the object `\w+` holds, which is \(or is held by\)"),
    "in-place NumPy call into an array not the function's own": (
        r"into `\w+`, which is not an array of the function's own"),
    "function with neither source nor rule": (
        r"has no Python source and no gradient rule|it has neither a rule nor Python source"),
    "opaque call given an array read elsewhere": (
        r"has neither a gradient rule nor Python source, so srcgrad cannot tell"),
    "jump out of a with or try block": (
        r"does not support `(break|continue|return)` inside (a `(with|try)` block|"
        r"`try` \.\.\. `except`)"),
    "manager given a variable": r"does not support a `with` manager given `\w+`",
    "manager of one's own beside an outside array": r"a `with` manager of your own in a function",
    "try block changing a value read after it": r"does not support a `try` block that",
    # `GV.sort()` after a read of GV, or in a loop that reads it: the derivative reads GV once
    "change of a global read before it": r"is read before the change \(or in the same loop\)",
}


class LibraryStatements:
    """The statements above, for ``Gen`` (which provides ``pick``, ``coin``, ``fresh``,
    ``scalar``, ``vector``, ``block``, ``owned``, ``features``)."""

    def uses(self, *names):
        """Record module-level definitions or imports the program needs."""
        self.module_needs.update(names)

    def module_lines(self):
        """The imports and definitions the statements drawn need, for the module's top."""
        lines = [IMPORTS[n] for n in sorted(self.module_needs) if n in IMPORTS]
        for name in sorted(self.module_needs):
            if name in DEFINITIONS:
                lines += ["", *DEFINITIONS[name], ""]
        return lines

    def opaque(self, scope, ind, depth):
        self.features.add("library call, with a rule or refused")
        s = self.fresh("s")
        v, w = self.vector(scope, 1), self.vector(scope, 1)
        form = self.pick(["rule", "rule", "rule", "no rule", "no rule, no gradient", "blas"])
        scope.names[s] = "s"
        if form == "rule":
            self.uses("special")
            value = self.pick([
                f"np.sum(np.hypot({v}, 1.5))", f"np.sum(np.logaddexp({v}, {w}))",
                f"np.linalg.norm({v})", f"np.sum(scipy.special.erf({v}))",
                f"np.linalg.slogdet(np.outer({v}, {w})[:2, :2] * 0.1 + 3.0 * np.eye(2))[1]",
                f"np.sum(np.linalg.solve(np.outer({v}, {w})[:3, :3] * 0.1 + 4.0 * np.eye(3), "
                f"({v})[:3]))",
                f"np.sum(np.cbrt(({v}) ** 2 + 1.0))", f"np.sum(np.sinc({v}))",
                f"np.sum(np.ldexp({v}, 2))",
            ])
        elif form == "no rule":
            value = self.pick([f"np.sum(np.frexp({v})[0])", f"np.sum(np.modf({v})[0])",
                               f"np.sum(np.nextafter({v}, 10.0))"])
        elif form == "no rule, no gradient":
            value = f"np.sum(np.frexp(np.arange({N}.0) + 1.5)[0] * ({v}))"
        else:
            self.uses("blas")
            y = self.fresh("y")
            given = self.pick([y, f"{y}.copy()"])  # read again below: refused / a copy: works
            return [f"{ind}{y} = np.linspace(0.1, 0.5, {N})",
                    f"{ind}{s} = np.sum(scipy.linalg.blas.daxpy(np.ones({N}), {given}) * ({v}))"
                    f" + np.sum({y})"]
        return [f"{ind}{s} = {value}"]

    def managed(self, scope, ind, depth):
        self.features.add("with manager")
        jumps, ret_kind = self.jumps, self.ret_kind
        s = self.fresh("s")
        manager = self.pick(['np.errstate(all="ignore")', "contextlib.nullcontext()",
                             "warnings.catch_warnings()", "Keeper()", "Keeper()", "given"])
        if manager == "given":
            names = [n for n in scope.of("v", writable=True) if n in self.owned]
            manager = f"Scaler({self.pick(names)})" if names else "Keeper()"
        self.uses(manager.split("(")[0].split(".")[0])
        body = scope.child()
        lines = [f"{ind}{s} = 0.0", f"{ind}with {manager}:"]
        lines += self.block(body, ind + "    ", max(depth - 1, 0), jumps, 2, ret_kind)
        lines.append(f"{ind}    {s} = {s} + {self.scalar(body, 1)}")
        scope.names[s] = "s"
        return lines

    def guarded(self, scope, ind, depth):
        self.features.add("try block")
        jumps, ret_kind = self.jumps, self.ret_kind
        s = self.fresh("s")
        body = scope.child()
        lines = [f"{ind}{s} = 0.0", f"{ind}try:"]
        if self.coin():
            lines += self.block(body, ind + "    ", max(depth - 1, 0), jumps, 2, ret_kind)
            lines.append(f"{ind}    {s} = {s} + {self.scalar(body, 1)}")
            lines += [f"{ind}finally:", f"{ind}    {s} = {s} * 1.5"]
        else:  # the block's last statement the only change read after it
            if self.coin(1, 3):
                lines += self.block(body, ind + "    ", 0, jumps, 1, ret_kind)
            if self.coin(2, 3):  # the handler runs for some inputs, after what the block pushed
                self.features.add("try block whose handler may run")
                lines += [f"{ind}    if {self.scalar(body, 1)} > 0.0:",
                          f"{ind}        raise ValueError('drawn')"]
            lines.append(f"{ind}    {s} = {self.scalar(body, 1)}")
            lines += [f"{ind}except (ValueError, FloatingPointError):", f"{ind}    {s} = 0.5"]
            if self.coin():
                lines += [f"{ind}else:", f"{ind}    {s} = {s} * 2.0"]
        scope.names[s] = "s"
        return lines

    def outside(self, scope, ind, depth):
        self.features.add("array from outside the function")
        s, a = self.fresh("s"), self.fresh("v")
        v = self.vector(scope, 1)
        form = self.pick(["read", "number", "copy", "sort", "alias", "view", "list", "copyto"])
        self.uses("GS" if form == "number" else "GL" if form == "list" else "GV")
        scope.names[s] = "s"
        if form == "read":
            return [f"{ind}{s} = np.sum(np.sin(GV * ({v})))"]
        if form == "number":
            return [f"{ind}{s} = GS", f"{ind}{s} += np.sum({v}) * GS"]
        if form == "copy":
            return [f"{ind}{a} = GV.copy()", f"{ind}{a} += {v}", f"{ind}{s} = np.sum({a} * GV)"]
        if form == "sort":  # a change of the global that is the same at every call
            return [f"{ind}GV.sort()", f"{ind}{s} = np.sum(GV * ({v}))"]
        if form == "copyto":
            return [f"{ind}np.copyto(GV, {v})", f"{ind}{s} = np.sum(GV * ({v}))"]
        if form == "list":
            t = self.fresh("e")
            return [f"{ind}{s} = 0.0", f"{ind}for {t} in GL:", f"{ind}    {t} += {v}",
                    f"{ind}    {s} = {s} + np.sum({t})"]
        view = "GV" if form == "alias" else self.pick(["GV[1:4]", "GV[::2]", "np.asarray(GV)"])
        size = 3 if view in ("GV[1:4]", "GV[::2]") else N
        return [f"{ind}{a} = {view}", f"{ind}{a} += ({v})[:{size}]",
                f"{ind}{s} = np.sum(GV * ({v}))"]
