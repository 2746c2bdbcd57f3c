"""Differential testing on random programs built from objects and callables (issue 14).

A seeded generator writes small modules whose function `f(x, P)` (or a dataclass method
`Model.loss(self, x)`) threads a vector `h` through a random chain of constructs: methods of user
classes (``self`` bound, inheritance with overriding and ``super()``, properties, staticmethods,
classmethods, a method of the argument itself), callable objects, attribute writes on local
objects (rebinding and in place), writes into an attribute or key of the argument, functions
passed as arguments (through two levels, in tuples and dicts of callbacks),
``functools.partial`` / ``wraps`` / ``lru_cache``, a staticmethod or classmethod hidden by a
field of its name, local functions, lambdas and closures (with
Python's late binding), list/dict/generator comprehensions, recursion, ``with``,
``try``/``finally`` and ``**kwargs``. ``P`` is a dataclass (with int and str fields), a
namedtuple, a ``SimpleNamespace``, a dict, a tuple or a nesting of them. For every program:

- `grad` w.r.t. ``x``, ``P`` (or ``self``) matches central differences in float64, with ``P``'s
  structure;
- `value_and_grad` and `jvp` give plain Python's value (on copies of the arguments) and the same
  gradient / directional derivative;
- no call modifies its arguments, and a second call gives the same result;
- one program in four checks `hvp` against central differences of the gradient.

A located ``SrcgradError`` is counted as a refusal (printed with ``-s``), never a number.
`SRCGRAD_OBJECT_EXAMPLES=500 SRCGRAD_OBJECT_SEED=7 python -m pytest -n 0 -s
tests/test_random_objects.py` runs more programs from another seed.
"""

import collections
import copy
import dataclasses
import importlib.util
import itertools
import os
import random
import sys
import types

import numpy as np
import pytest

import srcgrad
from srcgrad import SrcgradError

EXAMPLES = int(os.environ.get("SRCGRAD_OBJECT_EXAMPLES", "5"))
SEED = int(os.environ.get("SRCGRAD_OBJECT_SEED", "0"))
REFUSALS = collections.Counter()
_counter = itertools.count()

PRELUDE = """\
import copy
import dataclasses
import functools
import types
from collections import namedtuple

import numpy as np


@dataclasses.dataclass
class DP:
    W: np.ndarray
    b: np.ndarray
    c: float
    n: int = 2
    label: str = "p"

    def affine(self, v):
        return self.W @ v + self.b


NP = namedtuple("NP", ["W", "b", "c"])
"""

# How P is built, and how its fields are read, per structure kind.
KINDS = {
    "dataclass": ("DP(W, b, c)", "P.W", "P.b", "P.c"),
    "namedtuple": ("NP(W, b, c)", "P.W", "P.b", "P.c"),
    "namespace": ("types.SimpleNamespace(W=W, b=b, c=c)", "P.W", "P.b", "P.c"),
    "dict": ('{"W": W, "b": b, "c": c}', 'P["W"]', 'P["b"]', 'P["c"]'),
    "tuple": ("(W, b, c)", "P[0]", "P[1]", "P[2]"),
    "nested": ('{"layer": NP(W, b, 1.0), "c": [c]}', 'P["layer"].W', 'P["layer"].b',
               'P["c"][0]'),
    "dc_list": ("types.SimpleNamespace(ps=[DP(W, b, c)])", "P.ps[0].W", "P.ps[0].b",
                "P.ps[0].c"),
}


class Gen:
    """One program: module-level definitions and the body of f, threading the vector `h`."""

    def __init__(self, rng, kind, model, extra=None):
        self.rng, self.kind, self.model, self.extra = rng, kind, model, extra
        _, self.W, self.b, self.c = KINDS[kind]
        if model:
            self.W, self.b, self.c = "self.W", "self.b", "self.c"
        self.defs, self.body, self.k = [], [], 0
        self.features = []

    def name(self, stem):
        self.k += 1
        return f"{stem}{self.k}"

    def emit(self, *lines):
        self.body.extend(lines)

    def define(self, text):
        self.defs.append(text)

    # --- constructs -------------------------------------------------------------------------
    def method(self):
        cls = self.name("Lin")
        self.define(f"class {cls}:\n    def __init__(self, W, b):\n        self.W = W\n"
                    f"        self.b = b\n\n    def apply(self, v):\n"
                    f"        return np.tanh(self.W @ v + self.b)\n")
        if self.rng.random() < 0.5:
            self.emit(f"lay = {cls}({self.W}, {self.b})", "h = lay.apply(h)")
        else:
            self.emit(f"layers = [{cls}({self.W}, {self.b}), {cls}({self.W}.T, 0.5 * {self.b})]",
                      "for lay in layers:", "    h = lay.apply(h)")

    def callable_object(self):
        cls = self.name("Act")
        self.define(f"class {cls}:\n    def __init__(self, s):\n        self.s = s\n\n"
                    f"    def __call__(self, v):\n        return self.s * np.sin(v)\n")
        self.emit(f"act = {cls}({self.c})", "h = act(h) + 0.5 * h")

    def decorated_methods(self):
        cls = self.name("Sc")
        self.define(f"class {cls}:\n    def __init__(self, c):\n        self.c = c\n\n"
                    f"    @property\n    def c2(self):\n        return self.c * self.c\n\n"
                    f"    @staticmethod\n    def f(v):\n        return np.cos(v)\n\n"
                    f"    @classmethod\n    def make(cls, c):\n        return cls(c + 0.25)\n")
        self.emit(f"sc = {cls}.make({self.c})", "h = sc.f(h) * sc.c2")

    def inheritance(self):
        base, sub = self.name("Base"), self.name("Sub")
        self.define(f"class {base}:\n    def __init__(self, s):\n        self.s = s\n\n"
                    f"    def f(self, v):\n        return v * self.s\n\n"
                    f"    def g(self, v):\n        return self.f(v) + 0.25\n")
        if self.rng.random() < 0.5:
            body = "return np.sin(v) * self.s"
        else:
            body = "return super().f(v) * 2.0 + np.sin(v)"
        self.define(f"class {sub}({base}):\n    def f(self, v):\n        {body}\n")
        self.emit(f"h = {sub}({self.c}).g(h)")

    def class_attribute(self):
        cls = self.name("K")
        self.define(f"class {cls}:\n    s = 0.5\n\n    def f(self, v):\n"
                    f"        return v * self.s\n")
        if self.rng.random() < 0.5:
            self.emit(f"kk = {cls}()", f"kk.s = {self.c}", "h = kk.f(h) + h")
        else:
            self.emit(f"kk = {cls}()", "h = kk.f(h) + h")

    def mutating_method(self):
        cls = self.name("Acc")
        inplace = self.rng.random() < 0.5
        add = "self.total += v" if inplace else "self.total = self.total + v"
        self.define(f"class {cls}:\n    def __init__(self, n):\n"
                    f"        self.total = np.zeros(n)\n\n    def add(self, v):\n        {add}\n")
        self.emit(f"acc = {cls}(3)", "acc.add(h)", "acc.add(h * h)", "h = np.tanh(acc.total)")

    def own_method(self):
        if self.kind == "dataclass" and not self.model:
            self.emit("h = np.tanh(P.affine(h))")
        elif self.model:
            self.emit("h = np.tanh(self.affine(h))")
        else:
            self.method()

    def local_state(self):
        choice = self.rng.randrange(3)
        if choice == 0:
            self.emit("st = types.SimpleNamespace(h=h, n=0)", f"st.h = st.h * {self.c} + 1.0",
                      "st.n += 1", "h = np.sin(st.h) * st.n")
        elif choice == 1:
            self.emit("st = types.SimpleNamespace(h=h)", f"st.h += {self.b}",
                      "h = st.h * h")
        else:
            self.emit("st = DP(np.eye(3), h, 1.0)", f"st.b = st.b * {self.c}",
                      "h = np.tanh(st.affine(h))")

    def argument_write(self):
        """A write into an attribute or key of the argument (rebinding; in place on an array)."""
        if self.model:
            target = "self.b"
        elif self.kind in ("dataclass", "namespace", "dict", "dc_list"):
            target = self.b
        else:
            self.local_state()
            return
        if self.rng.random() < 0.5:
            self.emit(f"{target} = {target} * 0.5 + h")
        else:
            self.emit(f"{target} += 0.5 * h")
        self.emit(f"h = h * {self.b}")

    def function_argument(self):
        app, hel = self.name("apply"), self.name("hel")
        self.define(f"def {hel}(v):\n    return np.tanh(v) * 1.5\n")
        self.define(f"def {app}(fn, v, s):\n    return fn(v) * s\n")
        if self.rng.random() < 0.5:
            self.emit(f"h = {app}({hel}, h, {self.c})")
        else:
            two = self.name("level")
            self.define(f"def {two}(fn, v, s):\n    return {app}(fn, v, s) + v\n")
            self.emit(f"h = {two}({hel}, h, {self.c})")

    def callbacks(self):
        hel = self.name("hel")
        self.define(f"def {hel}(v):\n    return np.sin(v) + 0.5 * v\n")
        choice = self.rng.randrange(3)
        if choice == 0:
            self.emit(f"fns = (np.tanh, {hel})", "for fn in fns:", "    h = fn(h)")
        elif choice == 1:
            self.emit(f'cbs = {{"a": {hel}, "b": np.tanh}}', 'h = cbs["a"](h) + cbs["b"](h)')
        else:
            table = self.name("CBS")
            self.define(f"{table} = ({hel}, np.cos)\n")
            self.emit(f"for fn in {table}:", f"    h = fn(h) * {self.c}")

    def partial(self):
        sc, part = self.name("scale"), self.name("part")
        self.define(f"def {sc}(v, s, t):\n    return v * s + t\n")
        if self.rng.random() < 0.5:
            self.define(f"{part} = functools.partial({sc}, s=0.75)\n")
            self.emit(f"h = {part}(h, t={self.c})")
        else:
            self.emit(f"pp = functools.partial({sc}, s={self.c})", "h = pp(h, t=0.125)")

    def wrapped(self):
        deco, fn = self.name("deco"), self.name("wrapped")
        self.define(f"def {deco}(fn):\n    @functools.wraps(fn)\n"
                    f"    def wrapper(*args, **kwargs):\n        return fn(*args, **kwargs)\n\n"
                    f"    return wrapper\n\n\n@{deco}\ndef {fn}(v, s):\n"
                    f"    return np.sin(v) * s\n")
        self.emit(f"h = {fn}(h, {self.c})")

    def cached(self):
        fn = self.name("coef")
        self.define(f"@functools.lru_cache(maxsize=None)\ndef {fn}(n):\n"
                    f"    return 1.0 / (n + 1) + n * n\n")
        if self.rng.random() < 0.5:
            self.emit(f"h = h * {fn}(2)")
        else:
            self.emit(f"h = h * {fn}({self.c})")

    def closure(self):
        choice = self.rng.randrange(3)
        if choice == 0:
            self.emit("h0 = h", "def loc(v):", f"    return np.sin(v) * {self.c} + h0",
                      "h = loc(h)")
        elif choice == 1:
            self.emit(f"sq = lambda v: v * v * {self.c}", "h = np.tanh(sq(h))")
        else:  # late binding: loc sees s as it is when called
            self.emit(f"s = {self.c}", "def loc(v):", "    return v * s", "s = 0.5 * s + 1.0",
                      "h = loc(h)")

    def comprehension(self):
        choice = self.rng.randrange(4)
        if choice == 0:
            self.emit(f"h = np.array([np.sum({self.W}[i] * h) for i in range(3)])")
        elif choice == 1:
            self.emit(f"h = sum([h * w for w in (0.5, {self.c})])")
        elif choice == 2:
            self.emit("d = {k: h * k for k in (1, 2)}", "h = d[1] + d[2] * 0.25")
        else:
            self.emit(f"h = h * sum(w for w in ({self.c}, 0.5))")

    def recursion(self):
        fn = self.name("rec")
        self.define(f"def {fn}(v, n):\n    if n == 0:\n        return v\n"
                    f"    return np.sin({fn}(v, n - 1)) * 0.9\n")
        self.emit(f"h = {fn}(h, {self.rng.randrange(1, 4)})")

    def with_block(self):
        self.emit('with np.errstate(all="ignore"):', f"    h = np.tanh(h) * {self.c}")

    def try_finally(self):
        self.emit("try:", f"    h = h * {self.c}", "finally:", "    done = 1",
                  "h = h + done")

    def kwargs(self):
        fn = self.name("kw")
        self.define(f"def {fn}(v, **opts):\n"
                    f'    return v * opts["s"] + opts.get("t", 0.0)\n')
        if self.rng.random() < 0.5:
            self.emit(f"h = {fn}(h, s={self.c}, t=0.25)")
        else:
            self.emit(f'opts = {{"s": {self.c}}}', f"h = {fn}(h, **opts)")

    def field_alias(self):
        """An array field updated in place (``obj.h += v``, ``self.total += v``) while another
        variable, list or object holds the same array: every holder sees the update."""
        choice = self.rng.randrange(7)
        if choice >= 5:  # renamed, stored in a holder, then written through another name
            self.renamed_in_a_holder()
        elif choice == 4:  # an element of the field, and a field of an object in a list
            self.emit("st = types.SimpleNamespace(h=h * 1.0)", "keep = st.h",
                      f"st.h[1] += {self.c} * h[0]", "boxes = [st]", f"boxes[0].h *= {self.b}",
                      "h = keep * h + st.h")
        elif choice == 0:
            self.emit("st = types.SimpleNamespace(h=h * 1.0)", "al = st.h",
                      f"st.h += {self.b}", "h = al * h + st.h")
        elif choice == 1:
            self.emit("st = types.SimpleNamespace(g=h)", "acc = h * 1.0", "st.g = acc",
                      f"acc *= {self.c}", "h = st.g * h")
        elif choice == 2:
            cls = self.name("Tot")
            self.define(f"class {cls}:\n    def __init__(self, w):\n        self.total = w\n\n"
                        f"    def bump(self, v):\n        self.total += v\n")
            self.emit("w0 = h * 1.0", f"t1 = {cls}(w0)", f"t2 = {cls}(w0)", "t1.bump(h * h)",
                      "h = np.tanh(t2.total) + t1.total")
        else:
            self.emit("held = [h]", "st = types.SimpleNamespace(h=h)", f"st.h -= 0.5 * {self.b}",
                      "h = held[0] * st.h")

    def renamed_in_a_holder(self):
        """An object renamed (``b2 = cell``) and given to a constructor that stores it, or a
        list renamed and put in a list (``L2 = L; M = [L2]``), then written through its other
        name (``cell.w += v``, ``b2.w = v``, ``L.append(v)``) and read through the holder:
        Python's holder sees the write (srcgrad gave the old value, found by hand; now refused
        at transform time)."""
        if self.rng.random() < 0.5:
            cls = self.name("Holds")
            self.define(f"class {cls}:\n    def __init__(self, a):\n        self.a = a\n")
            write = self.rng.choice([f"cell.w += {self.b}", f"b2.w = h * {self.c}",
                                     "cell.w *= np.tanh(h)", f"b2.w[0] = {self.c} * h[1]"])
            self.emit("cell = types.SimpleNamespace(w=h * 1.0)", "b2 = cell",
                      f"hk = {cls}(b2)", write, "h = hk.a.w * h + cell.w")
        else:
            write = self.rng.choice([f"L.append(h * {self.c})", f"L[0] += {self.b}",
                                     "L2.append(np.sin(h))"])
            self.emit("L = [h * 1.0]", "L2 = L", "M = [L2]", write, "h = M[0][-1] * h + L[0]")

    def try_except(self):
        choice = self.rng.randrange(3)
        if choice == 0:
            chk = self.name("chk")
            self.define(f"def {chk}(v):\n    if np.sum(v) > 0.0:\n"
                        f"        raise ValueError('positive')\n    return v * 2.0\n")
            self.emit("try:", f"    h = {chk}(h)", "except ValueError:", f"    h = h * {self.c}")
        elif choice == 1:
            self.emit("try:", '    dd = {"a": h}', '    h = dd["b"] * 2.0', "except KeyError as e:",
                      "    h = np.sin(h) + len(str(e))")
        else:
            self.emit("try:", f"    h = np.tanh(h) * {self.c}", "except (TypeError, ValueError):",
                      "    raise", "else:", "    h = h + 0.25", "finally:", "    fin = 1.0",
                      "h = h * fin")

    def replace(self):
        choice = self.rng.randrange(3)
        if choice == 0 and self.kind == "dataclass" and not self.model:
            self.emit(f"q = dataclasses.replace(P, c={self.c} * 0.5)",
                      "h = np.tanh(q.W @ h) * q.c + P.c * h")
        elif choice == 0 and self.model:
            self.emit("q = dataclasses.replace(self, b=h * self.c)", "h = np.tanh(q.W @ h + q.b)")
        elif choice in (0, 1):
            self.emit(f"st = DP({self.W}, h * 1.0, {self.c})",
                      f"q = dataclasses.replace(st, b=h * {self.c}, n=3)", "h = q.b + st.b * q.n")
        else:
            self.emit(f"t = NP({self.W}, h, 0.5)", "t = t._replace(b=t.b * t.c)",
                      "h = t.W @ t.b + h")

    def asdict(self):
        if self.model or (self.kind == "dataclass" and self.rng.random() < 0.5):
            owner = "self" if self.model else "P"
            self.emit(f"dd = dataclasses.asdict({owner})", 'h = h * dd["c"] + dd["b"]')
        else:
            self.emit(f"dd = dataclasses.asdict(DP({self.W}, h, {self.c}))",
                      'h = dd["b"] * dd["c"] + dd["W"] @ h')

    # constructs drawn from a stream of their own (``Gen.extra``), so that a seed still gives
    # the program it gave before they were added, with one of them at its end
    EXTRA = ("field_alias", "try_except", "replace", "asdict", "nested_write", "rebound_callable",
             "mixed_layers", "own_class", "held_methods", "python_forms", "function_values",
             "hidden_methods")

    CONSTRUCTS = ("method", "callable_object", "decorated_methods", "inheritance",
                  "class_attribute", "mutating_method", "own_method", "local_state",
                  "argument_write", "function_argument", "callbacks", "partial", "wrapped",
                  "cached", "closure", "comprehension", "recursion", "with_block",
                  "try_finally", "kwargs")

    def nested_write(self):
        """``x[i][j] = v``, ``x[i][j] += v`` and ``a.b[i] = v``, with another holder read after."""
        rows, alias = self.name("rows"), self.name("r")
        choice = self.rng.randrange(3)
        if choice == 0:  # a list of arrays, one of them also held by another name
            self.emit(f"{rows} = [h * 1.0, np.cos(h)]", f"{alias} = {rows}[0]",
                      f"{rows}[0][1] = {self.c} * h[2]", f"{rows}[1][0] += {alias}[1] * h[0]",
                      f"h = {alias} + {rows}[1] * {rows}[0]")
        elif choice == 1:  # a list of lists of numbers
            self.emit(f"{rows} = [[h[0], h[1]], [h[2], h[0] * h[1]]]",
                      f"{rows}[1][0] = {rows}[0][1] * {self.c}",
                      f"{rows}[0][0] -= {rows}[1][1]",
                      f"h = h + np.array([{rows}[0][0], {rows}[1][0], {rows}[1][1]])")
        else:  # an array field of a local object, the array also held by a list
            self.emit(f"{rows} = types.SimpleNamespace(v=h * 2.0)", f"{alias} = [{rows}.v]",
                      f"{rows}.v[1] = np.sin(h[0]) * {self.c}", f"h = {alias}[0] + h")

    def rebound_callable(self):
        """A name bound to callables twice, then called (in a branch, straight, in a loop)."""
        g = self.name("g")
        choice = self.rng.randrange(3)
        if choice == 0:
            self.emit(f"{g} = np.sin", "if h[0] > 0:", f"    {g} = np.tanh",
                      f"h = {g}(h) + 0.5 * h")
        elif choice == 1:
            sc = self.name("scale")
            self.define(f"def {sc}(v, s):\n    return v * s + 0.125\n")
            self.emit(f"{g} = functools.partial({sc}, s={self.c})", f"h = {g}(h)",
                      f"{g} = functools.partial({sc}, s=0.5)", f"h = {g}(h)")
        else:
            self.emit(f"{g} = np.tanh", "for _ in range(2):", f"    h = {g}(h) * {self.c}",
                      f"    {g} = np.sin")

    def mixed_layers(self):
        """Objects of two classes, called or a method or property of theirs read: items of a
        list (a literal, a global tuple, one built by ``append`` on a branch) looped over, or
        a variable given one of them on each path of a branch."""
        lin, act, layers = self.name("Lin"), self.name("Act"), self.name("layers")
        self.define(f"class {lin}:\n    def __init__(self, W, b):\n        self.W = W\n"
                    f"        self.b = b\n\n    def __call__(self, v):\n"
                    f"        return np.tanh(self.W @ v + self.b)\n\n    def scale(self, v):\n"
                    f"        return self.W @ v\n\n    @property\n    def gain(self):\n"
                    f"        return np.sum(self.b) * 0.25\n")
        self.define(f"class {act}:\n    def __init__(self, s):\n        self.s = s\n\n"
                    f"    def __call__(self, v):\n        return self.s * np.sin(v)\n\n"
                    f"    def scale(self, v):\n        return v * self.s\n\n"
                    f"    @property\n    def gain(self):\n        return self.s * self.s\n")
        call = self.rng.choice(["h = lay(h)", "h = lay.scale(h) + 0.5 * lay(h)",
                                "h = lay(h) * lay.gain"])
        kind = self.rng.randrange(6)
        if kind == 4:  # a helper's result of either class, given on a later trip of the loop
            make = self.name("make")
            self.define(f"def {make}(k, v, W, b, c):\n    if k % 2 == 0:\n"
                        f"        return {lin}(W, b * v[k])\n    return {act}(c)\n")
            self.emit(f"lay = {act}({self.c})", "for k in range(3):", f"    {call}",
                      f"    lay = {make}(k + 1, h, {self.W}, {self.b}, {self.c})")
            return
        if kind == 5:  # a variable of either class in a dict literal or a field, called there
            self.emit(f"lay = {lin}({self.W}, {self.b}) if h[1] > 0 else {act}(h[0] * {self.c})")
            if self.rng.random() < 0.5:
                self.emit(f'held = {{"a": lay, "b": {act}(0.5)}}',
                          call.replace("lay", 'held["a"]'))
            else:
                self.emit("box = types.SimpleNamespace(k=1)", "box.lay = lay",
                          call.replace("lay", "box.lay"))
            return
        if kind == 0:
            self.emit(f"{layers} = [{lin}({self.W}, {self.b}), {act}({self.c}), "
                      f"{lin}(0.5 * {self.W}.T, {self.b})]")
        elif kind == 1:
            layers = layers.upper()
            self.define(f"{layers} = ({act}(0.75), {lin}(0.5 * np.eye(3), np.ones(3)))\n")
        elif kind == 2:
            self.emit(f"{layers} = []", "for k in range(3):", "    if h[k] > 0:",
                      f"        {layers}.append({lin}({self.W}, {self.b} * h[k]))", "    else:",
                      f"        {layers}.append({act}({self.c}))")
        else:
            self.emit(f"lay = {lin}({self.W}, {self.b}) if h[1] > 0 else {act}(h[0] * {self.c})",
                      call)
            return
        self.emit(f"for lay in {layers}:", f"    {call}")

    def held_methods(self):
        """Bound methods and objects held as values: appended to a list by a helper method and
        by the function, then looped over and an item called; a name bound to methods of two
        classes on the paths of a branch, put into a list; objects of two classes in a dict
        built here, read by the keys of a loop over it; objects written into a list by an
        index and read back; a dict of bound methods a global object holds (called by
        constant keys and by the keys of a loop over it; maybe after one of its fields is
        replaced); bound methods appended in a loop over objects of two classes; an item of a
        one-class list literal replaced by an object of another class, read by a run-time
        index; a dict of bound methods held by an object built in the function (constant
        keys, a loop over a literal of keys, a loop over the dict; maybe its deep copy, and
        loops over its values and items); one the function makes and reads itself (maybe its
        object changed through a list holding it before a call); an object's own method in
        its dict (``self.hooks = {"t": self.tail}``), a field of it written before the calls;
        a shallow copy (``copy.copy``) of an object, of a list and of the argument, written
        in place through one holder and read through the other."""
        lin, act = self.name("Lin"), self.name("Act")
        self.define(f"class {lin}:\n    def __init__(self, W, b):\n        self.W = W\n"
                    f"        self.b = b\n\n    def s(self, v):\n"
                    f"        return np.tanh(self.W @ v + self.b)\n\n"
                    f"    def store(self, fs, other):\n        fs.append(self.s)\n"
                    f"        fs.append(other.s)\n")
        self.define(f"class {act}:\n    def __init__(self, c):\n        self.c = c\n\n"
                    f"    def s(self, v):\n        return self.c * np.sin(v)\n")
        a, b, fs = self.name("a"), self.name("b"), self.name("fs")
        self.emit(f"{a} = {lin}({self.W}, {self.b})", f"{b} = {act}(h[0] * {self.c})")
        choice = self.rng.randrange(13)
        if choice == 10:
            self._shallow_copies(lin, a)
            return
        if choice == 11:  # an object's own method in its dict, a field written before a call
            own, hk = self.name("Own"), self.name("hk")
            self.define(f"class {own}:\n    def __init__(self, W, c):\n"
                        f"        self.a = {act}(c)\n        self.W = W\n"
                        f'        self.hooks = {{"t": self.tail, "a": self.a.s}}\n\n'
                        f"    def tail(self, v):\n        return np.tanh(self.W @ v) * self.a.c\n\n"
                        f"    def __call__(self, v):\n        return v\n")
            self.emit(f"{hk} = {own}({self.W}, h[1] * {self.c})", f'h = {hk}.hooks["t"](h) + h',
                      f"{hk}.W = {hk}.W * 0.5", f"for k in {hk}.hooks:",
                      f"    h = {hk}.hooks[k](h) * {self.c}", f"for f in {hk}.hooks.values():",
                      "    h = f(h) + 0.5 * h")
            return
        if choice == 12:  # one the function makes, its object changed through a list holding it
            d = self.name("d")
            self.emit(f'{d} = {{"a": {a}.s, "b": {b}.s}}', f"held = [{a}]",
                      f'h = {d}["a"](h) + h', f"held[0].b = held[0].b * {self.c} + h",
                      f"for k in {d}:", f"    h = {d}[k](h) * {self.c}")
            return
        if choice == 8:  # a dict of bound methods the function makes and reads itself
            d = self.name("d")
            self.emit(f'{d} = {{"a": {a}.s, "b": {b}.s}}', f'h = {d}["a"](h) + h',
                      f"for k in {d}:", f"    h = {d}[k](h) * {self.c}",
                      f"for f in {d}.values():", "    h = f(h) + 0.5 * h",
                      f"for k, f in {d}.items():", "    h = f(h) * len(k)")
            return
        if choice in (7, 9):  # a dict of bound methods held by an object built here
            holder, hk = self.name("Hooks"), self.name("hk")
            self.define(f"class {holder}:\n    def __init__(self, W, b, c):\n"
                        f"        self.a = {lin}(W, b)\n        self.b = {act}(c)\n"
                        f'        self.hooks = {{"a": self.a.s, "b": self.b.s}}\n')
            self.emit(f"{hk} = {holder}({self.W}, {self.b}, h[0] * {self.c})")
            if choice == 9:  # its deep copy, and the values and items of its dict
                self.emit(f"{hk} = copy.deepcopy({hk})", f"for f in {hk}.hooks.values():",
                          "    h = f(h) + 0.5 * h", f"for k, f in {hk}.hooks.items():",
                          f"    h = f(h) * {self.c}")
            self.emit(f'h = {hk}.hooks["a"](h) + h', 'for k in ("b", "a"):',
                      f"    h = {hk}.hooks[k](h) * {self.c}", f"for k in {hk}.hooks:",
                      f"    h = {hk}.hooks[k](h) + 0.5 * h")
            return
        if choice == 5:  # appended in a loop over objects of two classes
            self.emit(f"{fs} = []", f"for blk in ({a}, {b}, {a}):", f"    {fs}.append(blk.s)",
                      f"for f in {fs}:", "    h = f(h) + 0.5 * h",
                      f"h = {fs}[1 if h[0] > 0 else 0](h)")
            return
        if choice == 6:  # an item of a one-class literal replaced, read by a run-time index
            objs = self.name("objs")
            self.emit(f"{objs} = [{lin}({self.W}, {self.b}), {lin}({self.W}, {self.b} * 0.5)]",
                      f"{objs}[0] = {act}(h[1])", "for k in range(2):",
                      f"    h = {objs}[k if h[0] > 0 else 1 - k].s(h)")
            return
        if choice == 4:  # a dict of bound methods a global object holds, called by keys
            hooks = self.name("HOOKS").upper()
            self.define(f"class {hooks.title()}:\n    def __init__(self):\n"
                        f"        self.a = {act}(0.75)\n        self.b = {act}(-0.5)\n"
                        f'        self.hooks = {{"a": self.a.s, "b": self.b.s}}\n\n\n'
                        f"{hooks} = {hooks.title()}()\n"
                        # (a field replaced: hooks["a"] keeps the old object's method)
                        + (f"{hooks}.a = {act}(1.25)\n" if self.rng.random() < 0.5 else ""))
            self.emit(f'h = {hooks}.hooks["a"](h) + h', 'for k in ("b", "a"):',
                      f"    h = {hooks}.hooks[k](h) * {self.c}", f"for k in {hooks}.hooks:",
                      f"    h = {hooks}.hooks[k](h) + 0.5 * h")
            if self.rng.random() < 0.5:  # its values and items
                self.emit(f"for f in {hooks}.hooks.values():", "    h = f(h) * 0.75",
                          f"for k, f in {hooks}.hooks.items():", "    h = f(h) + h * len(k)")
            return
        if choice == 0:  # stored by a helper, and by the function
            self.emit(f"{fs} = []", f"{a}.store({fs}, {b})", f"{fs}.append({b}.s)",
                      f"for f in {fs}:", "    h = f(h) + 0.25 * h",
                      f"h = {fs}[1](h) * len({fs})")
        elif choice == 1:  # bound on the two paths of a branch
            g = self.name("g")
            self.emit("if h[1] > 0:", f"    {g} = {a}.s", "else:", f"    {g} = {b}.s",
                      f"{fs} = [{g}, {b}.s]", f"for f in {fs}:", "    h = f(h)",
                      f"h = {g}(h) + {fs}[0](h)")
        elif choice == 2:  # a dict of objects of two classes, read by run-time keys
            lay = self.name("lay")
            self.emit(f"{lay} = {a} if h[2] > 0 else {b}",
                      f'held = {{"p": {lay}, "q": {act}(0.5)}}',
                      "for k in held:", "    h = held[k].s(h) * 1.5")
        else:  # written into a list by an index, read back
            objs = self.name("objs")
            self.emit(f"{objs} = [None, None, None]", "for k in range(3):",
                      "    if h[k] > 0:", f"        {objs}[k] = {lin}({self.W}, {self.b} * h[k])",
                      "    else:", f"        {objs}[k] = {act}(h[k])",
                      "for k in range(3):", f"    h = {objs}[k].s(h)")

    def _shallow_copies(self, lin, a):
        """``copy.copy`` of an object built here, of a list holding arrays and objects, or of
        the argument: an array both hold written in place through one, read through the other;
        a field or item bound again in one only."""
        choice = self.rng.randrange(3)
        cp = self.name("cp")
        if choice == 0:
            self.emit(f"{cp} = copy.copy({a})", f"{cp}.b += 0.5 * h", f"{cp}.W = {cp}.W * 0.5",
                      f"h = {a}.s(h) + {cp}.s(h)")
        elif choice == 1:
            rows = self.name("rows")
            self.emit(f"{rows} = [h * 1.0, {a}]", f"{cp} = copy.copy({rows})",
                      f"{cp}[0] *= {self.c}", f"{cp}[1].b = {cp}[1].b + h", f"{cp}.append(h)",
                      f"h = {rows}[0] + {a}.s(h) * len({rows}) + {cp}[2]")
        elif self.kind in ("dataclass", "namespace") and not self.model:
            self.emit(f"{cp} = copy.copy(P)", f"{cp}.b += 0.5 * h", f"{cp}.c = {cp}.c * 2.0",
                      f"h = h * P.b + {cp}.c * P.c")
        else:
            self.emit(f"{cp} = copy.copy({a})", f"{a}.b[0] = h[1] * {self.c}",
                      f"h = {cp}.s(h) * {cp}.b")

    def own_class(self):
        """A class whose operators and a method build objects of its own class
        (``type(self)(...)``, ``self.__class__(...)``, ``made = type(self)``), and ``u += w``
        running ``__iadd__``."""
        vec = self.name("Vec")
        self.define(f"class {vec}:\n    def __init__(self, a, s):\n        self.a = a\n"
                    f"        self.s = s\n\n    def __neg__(self):\n"
                    f"        return type(self)(-self.a, self.s)\n\n"
                    f"    def __add__(self, o):\n"
                    f"        return self.__class__(self.a + o.a * self.s, o.s)\n\n"
                    f"    def __iadd__(self, o):\n"
                    f"        return {vec}(self.a * o.s + o.a, self.s)\n\n"
                    f"    def scaled(self, k):\n        made = type(self)\n"
                    f"        return made(self.a * k, self.s * k)\n")
        choice = self.rng.randrange(3)
        if choice == 0:
            self.emit(f"u = {vec}(h, {self.c})", "w = -u + u.scaled(0.5)", "h = w.a * w.s")
        elif choice == 1:
            self.emit(f"u = {vec}(h * 1.0, {self.c})", f"u += {vec}(np.sin(h), 0.5)",
                      "h = (-u).a + u.s * h")
        else:
            self.emit(f"u = {vec}(h, {self.c})", "for _ in range(2):",
                      "    u = u.scaled(0.75) + -u", "h = u.a * u.s")

    def function_values(self):
        """Functions as values (session 16): a factory's lambda or nested def, a function held
        in a field (of an object built here, written again), a parameter defaulting to None and
        assigned a function, a function remade per trip and kept past it (the last two were
        silently wrong, and are refused)."""
        c, make, box = self.c, self.name("make"), self.name("Box")
        choice = self.rng.randrange(6)
        if choice == 0:
            self.define(f"def {make}(s):\n    return lambda v: np.sin(v) * s\n")
            self.emit(f"fa = {make}(h[0])", f"fb = {make}({c})", "h = fa(h) + fb(h)")
        elif choice == 1:
            self.define(f"def {make}(s):\n    def inner(v):\n        return v * s + np.tanh(v)\n"
                        f"\n    return inner\n")
            self.emit(f"fs = [{make}(h[1]), {make}({c})]", "for fn in fs:", "    h = fn(h)")
        elif choice == 2:
            self.define(f"class {box}:\n    def __init__(self, f, s):\n        self.f = f\n"
                        f"        self.s = s\n\n    def __call__(self, v):\n"
                        f"        return self.f(v) * self.s\n")
            self.emit(f"bx = {box}(np.tanh, {c})", "h = bx(h) + h", "bx.f = np.sin", "h = bx(h)")
        elif choice == 3:
            self.emit("ns = types.SimpleNamespace(act=np.tanh, k=h[2])", "h = ns.act(h) * ns.k")
        elif choice == 4:
            app = self.name("apply")
            self.define(f"def {app}(v, g=None):\n    if g is None:\n        g = np.sin\n"
                        f"    return g(v)\n")
            self.emit(f"h = {app}(h) + {app}(h, np.cos)")
        else:
            self.emit("keep = None", "for k in range(2):", f"    g = lambda v, k=k: v * (k + {c})",
                      "    if k == 0:", "        keep = g", "h = keep(h) + g(h)")

    def hidden_methods(self):
        """A staticmethod or classmethod of a class hidden by a field of its name that
        ``__init__`` sets: Python calls the field (srcgrad called the class's function, with no
        error, before 7ea69bf; a derivative now refuses to run, ``check_method_of``)."""
        cls = self.name("Hid")
        self.define(f"class {cls}:\n    def __init__(self, s, hide):\n        self.s = s\n"
                    f"        if hide:\n            self.f = np.sin\n            self.g = np.tanh\n"
                    f"\n    @staticmethod\n    def f(v):\n        return np.cos(v)\n\n"
                    f"    @classmethod\n    def g(cls, v):\n        return v * 0.5\n")
        hide = self.rng.random() < 0.5
        self.emit(f"hd = {cls}({self.c}, {hide})",
                  f"h = hd.{self.rng.choice(['f', 'g'])}(h) * hd.s + h")

    def python_forms(self):
        """Everyday forms made to work in session 13: a starred target, a comprehension over a
        set or a dict, ``*`` and ``**`` in displays, lambda and nested-def defaults read where
        they are defined, ``setdefault``, ``getattr`` / ``setattr``, a call of a call's result,
        a method of a field's list, a lambda in a display passed on, a lambda defined on two
        paths."""
        c, a, d = self.c, self.name("a"), self.name("d")
        choice = self.rng.randrange(10)
        if choice == 0:
            self.emit(f"{a}, *{d} = h", f"h = h * {a} + sum({d}) * {c}")
        elif choice == 1:
            self.emit(f"{d} = {{0, 2}}", f"{a} = {{0: 1.0, 2: {c}}}",
                      f"h = h + sum(h[k] * {c} for k in {d}) * sum({a}[k] * h[k] for k in {a})")
        elif choice == 2:
            self.emit(f"{a} = [h, h * {c}]", f"{a} = [*{a}, np.sin(h)]", f'{d} = {{"p": h}}',
                      f'{d} = {{**{d}, "q": {a}[2]}}', f'h = {d}["p"] * {d}["q"] + {a}[1]')
        elif choice == 3:
            self.emit("for i in range(2):", f"    {a} = lambda v, i=i: v * (i + {c})",
                      f"    h = {a}(h)", f"def {d}(v, s=h[0]):", "    return v * s",
                      "h = h * 0.5", f"h = {d}(h)")
        elif choice == 4:
            self.emit(f"{d} = {{}}", f'{d}.setdefault("w", h * {c})', f'{d}.setdefault("w", h)',
                      f"{a} = types.SimpleNamespace()", f'setattr({a}, "w", {d}["w"])',
                      f'h = getattr({a}, "w") + h')
        elif choice == 5:
            cls = self.name("Scale")
            self.define(f"class {cls}:\n    def __init__(self, s):\n        self.s = s\n\n"
                        f"    def __call__(self, v):\n        return self.s * np.sin(v)\n")
            self.emit(f"h = {cls}({c})(h) + h")
        elif choice == 6:
            self.emit(f"{a} = types.SimpleNamespace(hist=[h])",
                      f"{a}.hist.append(np.sin(h) * {c})", f"h = {a}.hist[0] * {a}.hist[-1]")
        elif choice == 7:
            app = self.name("apply")
            self.define(f'def {app}(hooks, v):\n    return hooks["f"](v)\n')
            self.emit(f'h = {app}({{"f": lambda v: v * {c}}}, h)')
        else:
            self.emit("if np.sum(h) > 0.0:", f"    {a} = lambda v: v * {c}", "else:",
                      f"    {a} = lambda v: np.sin(v)", f"h = {a}(h) + h")

    def program(self):
        start = self.rng.choice(["h = x", "h = x * 1.0", "h = np.tanh(x)", "h = x.copy()"])
        self.emit(start)
        for _ in range(self.rng.randrange(1, 4)):
            construct = self.rng.choice(self.CONSTRUCTS)
            self.features.append(construct)
            getattr(self, construct)()
        if self.extra is not None and self.extra.random() < 0.6:
            construct = self.extra.choice(self.EXTRA)
            self.features.append(construct)
            getattr(self, construct)()
        end = self.rng.choice(["np.sum(h * h) * 0.5", "np.sum(np.sin(h))",
                               f"np.sum(h * {self.b}) + {self.c} * np.sum(h)"])
        self.emit(f"return {end}")
        defs = "\n\n".join(self.defs)
        if self.model:
            body = "\n".join("        " + line for line in self.body)
            main = ("@dataclasses.dataclass\nclass Model:\n    W: np.ndarray\n    b: np.ndarray\n"
                    "    c: float\n    n: int = 2\n\n    def affine(self, v):\n"
                    "        return self.W @ v + self.b\n\n    def loss(self, x):\n" + body + "\n")
        else:
            body = "\n".join("    " + line for line in self.body)
            main = "def f(x, P):\n" + body + "\n"
        ctor = "Model(W, b, c)" if self.model else KINDS[self.kind][0]
        build = f"def build(W, b, c):\n    return {ctor}\n"
        return "\n\n".join([PRELUDE, defs, main, build]) + "\n"


# --- trees ----------------------------------------------------------------------------------


def is_float(v):
    return isinstance(v, (float, np.floating)) or (
        isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.floating))


def leaves(t):
    """The float leaves of a structure, in a fixed order."""
    if dataclasses.is_dataclass(t):
        return [leaf for f in dataclasses.fields(t) for leaf in leaves(getattr(t, f.name))]
    if isinstance(t, types.SimpleNamespace):
        return [leaf for v in vars(t).values() for leaf in leaves(v)]
    if isinstance(t, dict):
        return [leaf for v in t.values() for leaf in leaves(v)]
    if isinstance(t, (tuple, list)):
        return [leaf for v in t for leaf in leaves(v)]
    return [t] if is_float(t) else []


def rebuild(t, new):
    """`t` with its float leaves taken, in order, from the iterator `new`."""
    if dataclasses.is_dataclass(t):
        return dataclasses.replace(t, **{f.name: rebuild(getattr(t, f.name), new)
                                         for f in dataclasses.fields(t)})
    if isinstance(t, types.SimpleNamespace):
        return types.SimpleNamespace(**{k: rebuild(v, new) for k, v in vars(t).items()})
    if isinstance(t, dict):
        return {k: rebuild(v, new) for k, v in t.items()}
    if hasattr(t, "_fields"):
        return type(t)(*[rebuild(v, new) for v in t])
    if isinstance(t, (tuple, list)):
        return type(t)(rebuild(v, new) for v in t)
    return next(new) if is_float(t) else t


def same_structure(g, t):
    """g has t's structure: same container types; None or zeros where t holds no float."""
    if dataclasses.is_dataclass(t) or isinstance(t, types.SimpleNamespace):
        if type(g) is not type(t):
            return False
        return all(same_structure(getattr(g, k), v) for k, v in vars(t).items())
    if isinstance(t, dict):
        return type(g) is dict and g.keys() == t.keys() and all(
            same_structure(g[k], v) for k, v in t.items())
    if isinstance(t, (tuple, list)):
        return type(g) is type(t) and len(g) == len(t) and all(
            same_structure(a, b) for a, b in zip(g, t))
    if is_float(t):
        return np.shape(g) == np.shape(t) and is_float(np.asarray(g).reshape(-1)[0:1].sum())
    return g is None or np.all(np.asarray(g) == 0)


def dot(a, b):
    return sum(float(np.sum(u * v)) for u, v in zip(leaves(a), leaves(b)))


def shifted(t, d, eps):
    return rebuild(t, iter([u + eps * v for u, v in zip(leaves(t), leaves(d))]))


def snapshot(args):
    return [copy.deepcopy(a) for a in args]


def equal(a, b):
    la, lb = leaves(a), leaves(b)
    return len(la) == len(lb) and all(np.array_equal(u, v) for u, v in zip(la, lb))


# --- the check ------------------------------------------------------------------------------


def load(tmp_path, text):
    name = f"objprog_{os.getpid()}_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def value(fn, args):
    """fn's value in plain Python on copies of its arguments (and of a bound method's object)."""
    if isinstance(fn, types.MethodType):
        fn = copy.deepcopy(fn)
    return float(np.asarray(fn(*copy.deepcopy(args)), dtype=np.float64).reshape(()))


def numeric(fn, args, pos, step=1e-6):
    """Central differences of fn w.r.t. args[pos] (a tree of the argument's structure)."""
    tree = args[pos]
    flat = leaves(tree)
    out = []
    for li, leaf in enumerate(flat):
        arr = np.array(leaf, dtype=np.float64)
        d = np.zeros(arr.shape)
        for idx in np.ndindex(arr.shape):
            h = step * max(1.0, abs(float(arr[idx])))
            fs = []
            for sign in (1, -1):
                moved = arr.copy()
                moved[idx] += sign * h
                new = list(flat)
                new[li] = moved if arr.shape else float(moved)
                fs.append(value(fn, [*args[:pos], rebuild(tree, iter(new)), *args[pos + 1:]]))
            d[idx] = (fs[0] - fs[1]) / (2 * h)
        out.append(d if arr.shape else float(d))
    return rebuild(tree, iter(out))


def close(got, want, rtol=1e-5, atol=1e-6):
    lg, lw = leaves(got), leaves(want)
    return len(lg) == len(lw) and all(
        np.allclose(np.asarray(g, np.float64), np.asarray(w, np.float64), rtol=rtol, atol=atol)
        for g, w in zip(lg, lw))


def make_case(seed):
    rng = random.Random(seed)
    model = rng.random() < 0.25
    kind = "dataclass" if model else rng.choice(sorted(KINDS))
    gen = Gen(rng, kind, model, random.Random(f"extra {seed}"))
    text = gen.program()
    data = np.random.default_rng(seed)
    x = data.uniform(-1, 1, 3)
    W = data.uniform(-0.8, 0.8, (3, 3))
    b = data.uniform(-1, 1, 3)
    c = float(data.uniform(0.5, 1.5))
    return text, gen, (x, W, b, c), rng


def targets(module, gen, x, W, b, c, rng):
    """(function, args, wrt, positions of wrt in args) for the transforms."""
    P = module.build(W, b, c)
    if gen.model:
        if rng.random() < 0.5:
            return P.loss, [x], 0, [0]
        wrt = rng.choice(["self", ("self", "x")])
        return module.Model.loss, [P, x], wrt, positions_of(wrt, ["self", "x"])
    wrt = rng.choice([(0, 1), 1, "P", 0])
    return module.f, [x, P], wrt, positions_of(wrt, ["x", "P"])


def positions_of(wrt, names):
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w for w in items]


def check(tmp_path, seed):
    text, gen, (x, W, b, c), rng = make_case(seed)
    module = load(tmp_path, text)
    fn, args, wrt, pos = targets(module, gen, x, W, b, c, rng)
    single = not isinstance(wrt, tuple)
    want_value = value(fn, args)
    expected = [numeric(fn, args, p) for p in pos]
    owner = [fn.__self__] if isinstance(fn, types.MethodType) else []
    before = snapshot(args + owner)
    try:
        g = srcgrad.grad(fn, wrt=wrt)(*args)
        g2 = srcgrad.grad(fn, wrt=wrt)(*args)
        v, g3 = srcgrad.value_and_grad(fn, wrt=wrt)(*args)
        tangent = [rebuild(args[p], iter([np.asarray(rng.uniform(-1, 1) + 0 * u)
                                          if np.ndim(u) == 0 else
                                          np.random.default_rng(seed + p).uniform(-1, 1,
                                                                                 np.shape(u))
                                          for u in leaves(args[p])]))
                   for p in pos]
        tangent = [rebuild(t, iter([float(u) if np.ndim(u) == 0 else u for u in leaves(t)]))
                   for t in tangent]
        jv, jt = srcgrad.jvp(fn, wrt=wrt)(*args, tangent[0] if single else tuple(tangent))
        hv = None
        if seed % 4 == 0:
            hv = srcgrad.hvp(fn, wrt=wrt)(*args, tangent[0] if single else tuple(tangent))
    except SrcgradError as error:
        REFUSALS[str(error).splitlines()[0][:100]] += 1
        print(f"\nREFUSED seed {seed}: {str(error).splitlines()[0]}")
        return
    context = f"seed {seed}, wrt={wrt!r}\n{text}"
    gs = [g] if single else list(g)
    assert all(map(equal, before, args + owner)), f"arguments modified\n{context}"
    for got, want, p in zip(gs, expected, pos):
        assert same_structure(got, args[p]), f"structure {got!r}\n{context}"
        assert close(got, want), f"grad {got!r} != {want!r}\n{context}"
    assert equal(g if not single else [g], g2 if not single else [g2]), f"second call\n{context}"
    assert np.isclose(float(v), want_value, rtol=1e-9, atol=1e-12), \
        f"value {v} != {want_value}\n{context}"
    assert equal(g if not single else [g], g3 if not single else [g3]), f"v_and_g\n{context}"
    assert np.isclose(float(jv), want_value, rtol=1e-9, atol=1e-12), f"jvp value\n{context}"
    want_jt = sum(dot(w, t) for w, t in zip(expected, tangent))
    assert np.isclose(float(jt), want_jt, rtol=1e-5, atol=1e-6), \
        f"jvp {jt} != {want_jt}\n{context}"
    if hv is not None:
        eps = 1e-5
        plus = [*args]
        minus = [*args]
        for p, t in zip(pos, tangent):
            plus[p] = shifted(args[p], t, eps)
            minus[p] = shifted(args[p], t, -eps)
        gp = srcgrad.grad(fn, wrt=wrt)(*plus)
        gm = srcgrad.grad(fn, wrt=wrt)(*minus)
        gp, gm = ([gp], [gm]) if single else (list(gp), list(gm))
        hs = [hv] if single else list(hv)
        for h_, a_, b2 in zip(hs, gp, gm):
            want_h = rebuild(a_, iter([(u - w) / (2 * eps) for u, w in
                                       zip(leaves(a_), leaves(b2))]))
            assert close(h_, want_h, rtol=1e-4, atol=1e-5), f"hvp {h_!r} != {want_h!r}\n{context}"
    assert all(map(equal, before, args + owner)), f"arguments modified\n{context}"


@pytest.mark.parametrize("seed", range(SEED * 100000, SEED * 100000 + EXAMPLES))
def test_random_object_program(tmp_path, seed):
    check(tmp_path, seed)


# --- reproducers of what the generator found --------------------------------------------------


@dataclasses.dataclass
class Config:
    W: np.ndarray
    c: float


def lambda_reads_attribute(x, P):
    sq = lambda v: v * v * P.c  # noqa: E731
    return np.sum(sq(x))


def def_reads_attribute(x, P):
    def sq(v):
        return v * v * P.c

    return np.sum(sq(x))


def lambda_reads_local_object(x, c):
    st = types.SimpleNamespace(h=x * c)
    g = lambda v: np.sum(v * st.h)  # noqa: E731
    return g(x)


class Scaled:
    def __init__(self, c):
        self.c = c

    def loss(self, x):
        sq = lambda v: v * v * self.c  # noqa: E731
        return np.sum(np.sin(sq(x)))


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("fn", [lambda_reads_attribute, def_reads_attribute])
def test_a_local_function_reading_an_attribute_of_the_argument_carries_its_gradient(fn):
    """Was zero: the inlined local function's `P.c` was taken for a constant (P is not the
    local function's own variable), so the gradient w.r.t. P.c was lost."""
    P = Config(np.eye(2), 0.7)
    g = srcgrad.grad(fn, wrt=1)(X, P)
    want = numeric(fn, [X, P], 1)
    assert isinstance(g, Config) and close(g, want) and abs(g.c - np.sum(X * X)) < 1e-12
    _, t = srcgrad.jvp(fn, wrt=1)(X, P, Config(np.zeros((2, 2)), 1.0))
    assert np.isclose(t, np.sum(X * X))


def test_a_lambda_reading_an_attribute_of_a_local_object_carries_its_gradient():
    g = srcgrad.grad(lambda_reads_local_object, wrt=(0, 1))(X, 0.7)
    want = [numeric(lambda_reads_local_object, [X, 0.7], p) for p in (0, 1)]
    assert close(list(g), want)


def test_a_lambda_in_a_method_reading_self_carries_the_gradient_wrt_self():
    obj = Scaled(0.7)
    g = srcgrad.grad(Scaled.loss, wrt="self")(obj, X)
    want = np.sum(np.cos(0.7 * X * X) * X * X)
    assert isinstance(g, Scaled) and np.isclose(g.c, want)


class Lin:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def apply(self, v):
        return np.tanh(self.W @ v + self.b)


class Made:
    def __init__(self, c):
        self.c = c

    @classmethod
    def make(cls, c):
        return cls(c + 0.25)


def method_of_a_new_object(x, W):
    return np.sum(Lin(W, x).apply(x))


def object_made_by_a_classmethod(x, c):
    return np.sum(x * Made.make(c).c)


W3 = np.array([[0.5, 0.2, -0.3], [0.1, 0.4, 0.2], [-0.2, 0.3, 0.6]])


@pytest.mark.parametrize("fn, args", [(method_of_a_new_object, [X, W3]),
                                      (object_made_by_a_classmethod, [X, 0.7])])
def test_an_object_constructed_in_an_expression_is_differentiated(fn, args):
    """Was refused ("writes `.W` of an object the caller passed as an expression"): the
    temporary holding a new object was not counted as the caller's own variable."""
    g = srcgrad.grad(fn, wrt=(0, 1))(*args)
    assert close(list(g), [numeric(fn, args, p) for p in (0, 1)])


class Twice:
    def __init__(self, W, b):
        self.W = W

    def apply(self, v):
        return v * 2.0


def loop_over_a_list_of_objects(x, W):
    layers = [Lin(W, x), Lin(W.T, 0.5 * x)]
    h = x
    for lay in layers:
        h = lay.apply(h)
    return np.sum(h)


def index_a_tuple_of_objects(x, W):
    layers = (Lin(W, x), Lin(W.T, 0.5 * x))
    return np.sum(layers[1].apply(layers[0].apply(x)))


def loop_over_objects_of_two_classes(x, W):
    layers = [Lin(W, x), Twice(W.T, x)]
    h = x
    for lay in layers:
        h = lay.apply(h)
    return np.sum(h)


@pytest.mark.parametrize("fn", [loop_over_a_list_of_objects, index_a_tuple_of_objects])
def test_methods_of_objects_in_a_list_literal_are_inlined(fn):
    """Was refused ("does not support the method `.apply()`"): the class of the elements of a
    list or tuple literal of new objects of one class is known (checked where an element is
    read); indexing one crashed with an AttributeError (the check had no line number)."""
    args = [X, W3]
    g = srcgrad.grad(fn, wrt=(0, 1))(*args)
    assert close(list(g), [numeric(fn, args, p) for p in (0, 1)])
    t = np.array([0.3, -0.2, 0.1])
    _, jt = srcgrad.jvp(fn, wrt=0)(X, W3, t)
    assert np.isclose(jt, np.sum(numeric(fn, args, 0) * t), rtol=1e-5)
    eps = 1e-5
    hv = srcgrad.hvp(fn, wrt=0)(X, W3, t)
    df = srcgrad.grad(fn, wrt=0)
    assert np.allclose(hv, (df(X + eps * t, W3) - df(X - eps * t, W3)) / (2 * eps), atol=1e-6)


def test_a_list_of_objects_of_two_classes_calls_each_its_own_method():
    """Was refused; its first version failed when it ran (``dlayers[i] += dlay`` of two zero
    ``Twice`` objects: an element that may be an object is added with ``add_at`` now)."""
    args = [X, W3]
    g = srcgrad.grad(loop_over_objects_of_two_classes, wrt=(0, 1))(*args)
    assert close(list(g), [numeric(loop_over_objects_of_two_classes, args, p) for p in (0, 1)])
