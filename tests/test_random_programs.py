"""Differential testing on random programs: srcgrad against central differences.

A hypothesis strategy writes small random Python functions as source text over the supported
subset (scalars, 1-D and 2-D arrays, elementwise math, reductions, element reads and writes,
augmented assignment, `if`, `for`, `while`, `break`, `continue`, early `return`, helper calls,
lists, tuple unpacking). Each program is written to a module file and imported, since srcgrad
reads source with `inspect`. For every program:

- `grad(f, wrt=...)` matches central differences in float64,
- `jvp(f, wrt=...)` gives f's value and the directional derivative of the same differences,
- `value_and_grad(f, wrt=...)` gives f's value and the same gradient as `grad`,
- none of them modifies its arguments.

Inputs near a kink or a branch switch are skipped: an example whose forward and backward
differences disagree, or whose central differences with two steps disagree, is discarded.

`SRCGRAD_RANDOM_EXAMPLES=2000 python -m pytest tests/test_random_programs.py` runs more examples
with a random seed (the default run is derandomized).

Aliasing the generator avoids: `y = x; y += 1.0` on an array, `x += ...` inside a loop over
`x`, or a write into an array after a view of it was taken, is refused by srcgrad (an error, not
a gradient); array-valued
assignments are made fresh (`Gen.own`). Lambdas and nested defs appear only at the top level of
the differentiated body. The bugs this test found are fixed; their reproducers are pinned in
`tests/test_higher_order_loops.py`.
"""

import ast
import collections
import importlib.util
import itertools
import os
import re
import sys

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import srcgrad

EXAMPLES = int(os.environ.get("SRCGRAD_RANDOM_EXAMPLES", "120"))
SECOND_ORDER_EVERY = 3  # one example in three also checks hvp

# Features counted over the programs checked (printed by test_feature_frequencies, which also
# asserts the minimum frequencies, so a narrowing generator fails instead of passing quietly).
FEATURES = collections.Counter()
FEATURE_PATTERNS = {
    "for": re.compile(r"^\s*for ", re.M),
    "while": re.compile(r"^\s*while ", re.M),
    "if": re.compile(r"^\s*if ", re.M),
    "break": re.compile(r"\bbreak\b"),
    "continue": re.compile(r"\bcontinue\b"),
    "return in a loop": re.compile(r"^\s{8,}return ", re.M),
    "append": re.compile(r"\.append\("),
    "element write": re.compile(r"^\s*\w+\[[^\]]+\] [-+*]?= ", re.M),
    "augmented assignment": re.compile(r"^\s*\w+ [-+*]= ", re.M),
    "helper call": re.compile(r"\bh\d+\("),
    "lambda or nested def": re.compile(r"= lambda |^\s+def g", re.M),
    "comprehension": re.compile(r" for \w+ in .*[\])]"),
    "boolean mask": re.compile(r"\[\w+ > "),
    "integer-array index": re.compile(r"\[\[|\[np\.array\("),
    "slice with step": re.compile(r"\[-?\d*:-?\d*:-?\d+\]|\[::"),
    "size-1 axes": re.compile(r"None|keepdims|:1\]|\(1, "),
    "batched matmul": re.compile(r"np\.stack\(\[.*@|@ np\.stack"),
    "matrix-vector product": re.compile(r"\)\.T @ \(\("),
    "in-place NumPy call": re.compile(r"np\.copyto|\.at\(|out=|\.sort\(\)|\.fill\("),
}
MINIMUM_SHARE = {"break": 0.1, "continue": 0.1, "append": 0.25, "for": 0.4, "while": 0.01,
                 "boolean mask": 0.03, "integer-array index": 0.03, "slice with step": 0.05,
                 "size-1 axes": 0.05, "batched matmul": 0.03, "in-place NumPy call": 0.1}
N = 5  # length of the vectors; loop counts stay below it, so loop indices are valid indices
ROWS = 2  # matrices are ROWS x N
MAX_TRIPS = 4
PARAMS = (("x", "v"), ("a", "s"), ("M", "m"))

_counter = itertools.count()


# ---------------------------------------------------------------------------------------------
# The generator. Types: "s" scalar, "v" vector of shape (N,), "m" matrix of shape (ROWS, N),
# "l" list of scalars, "i" loop index (an int in range(N)).
# ---------------------------------------------------------------------------------------------


class Scope:
    """The variables visible in a block: name -> type. Blocks get a copy; names they create
    are not visible after the block (they may not have been assigned)."""

    def __init__(self, names=None, readonly=()):
        self.names = dict(names or {})
        self.readonly = set(readonly)

    def child(self):
        return Scope(self.names, self.readonly)

    def of(self, kind, writable=False):
        return sorted(
            n for n, k in self.names.items() if k == kind and not (writable and n in self.readonly)
        )


class Gen:
    def __init__(self, draw):
        self.draw = draw
        self.fresh_count = 0
        self.helpers = []  # (name, params as [(name, kind)], return kind)
        self.stmt_budget = 0
        # arrays that may be written into: made here (np.zeros, .copy()) or parameters of f,
        # and every assignment to them makes a new array (srcgrad rejects writes into aliases)
        self.owned = set()
        self.shared = set()  # the caller's arrays, in a helper: never augmented in place
        self.in_helper = False
        self.params = set()  # parameters of the function being generated

    # -- drawing ----------------------------------------------------------------------------
    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def coin(self, p_true_num=1, out_of=2):
        return self.draw(st.integers(0, out_of - 1)) < p_true_num

    def fresh(self, prefix):
        self.fresh_count += 1
        return f"{prefix}{self.fresh_count}"

    # -- expressions ------------------------------------------------------------------------
    def const(self):
        return self.pick(["0.5", "1.5", "-0.7", "2.0", "0.3", "-1.2"])

    def index(self, scope):
        loop = scope.of("i")
        if loop and self.coin():
            return self.pick(loop)
        return str(self.integer(-N, N - 1))

    def expr(self, kind, scope, depth):
        return {"s": self.scalar, "v": self.vector, "m": self.matrix}[kind](scope, depth)

    def scalar(self, scope, depth):
        leaves = ["const", "svar", "vidx", "midx"]
        if scope.of("i"):
            leaves.append("loopidx")
        if depth <= 0:
            choice = self.pick(leaves)
        else:
            choice = self.pick(
                leaves
                + [
                    "binop",
                    "binop",
                    "div",
                    "pow",
                    "unary",
                    "unary",
                    "neg",
                    "reduce",
                    "reduce",
                    "dot",
                    "slice",
                    "ifexp",
                    "minmax",
                    "abs",
                    "call",
                    "listsum",
                    "msum",
                    "comprehension",
                    "lambda",
                    "mask",
                    "intindex",
                    "step",
                    "size1",
                    "batched",
                ]
            )
        d = depth - 1
        if choice == "const":
            return self.const()
        if choice == "svar":
            names = scope.of("s")
            return self.pick(names) if names else self.const()
        if choice == "vidx":
            return f"{self.vvar(scope)}[{self.index(scope)}]"
        if choice == "midx":
            names = scope.of("m")
            if not names:
                return self.const()
            return f"{self.pick(names)}[{self.integer(-ROWS, ROWS - 1)}, {self.index(scope)}]"
        if choice == "loopidx":
            return f"{self.pick(['0.1', '0.25', '-0.3'])} * {self.pick(scope.of('i'))}"
        if choice == "binop":
            op = self.pick(["+", "-", "*"])
            return f"({self.scalar(scope, d)} {op} {self.scalar(scope, d)})"
        if choice == "div":
            return f"({self.scalar(scope, d)} / (1.0 + {self.scalar(scope, d)} ** 2))"
        if choice == "pow":
            return f"({self.scalar(scope, d)}) ** {self.pick(['2', '3'])}"
        if choice == "unary":
            return self.unary(self.scalar(scope, d))
        if choice == "neg":
            return f"-({self.scalar(scope, d)})"
        if choice == "reduce":
            v = self.vector(scope, d)
            return self.pick([f"np.sum({v})", f"np.mean({v})", f"({v}).sum()", f"np.max({v})"])
        if choice == "dot":
            return self.pick(["np.dot({}, {})", "({} @ {})"]).format(
                self.vector(scope, d), self.vector(scope, d)
            )
        if choice == "slice":
            v = self.vector(scope, d)
            return self.pick(
                [f"np.sum(({v})[1:3])", f"np.sum(({v})[1:] * ({v})[:-1])", f"np.sum(({v})[::-2])"]
            )
        if choice == "ifexp":
            return (
                f"({self.scalar(scope, d)} if {self.cond(scope, d)} else {self.scalar(scope, d)})"
            )
        if choice == "minmax":
            return f"{self.pick(['min', 'max'])}({self.scalar(scope, d)}, {self.scalar(scope, d)})"
        if choice == "abs":
            return f"abs({self.scalar(scope, d)})"
        if choice == "call":
            return self.call("s", scope, d) or self.const()
        if choice == "comprehension":
            # KNOWN BUG 8: a comprehension over `M[0]` after a loop with a `return` crashes
            v, e = self.vvar(scope), self.fresh("t")
            body = self.unary(e)
            return self.pick([f"sum({body} for {e} in {v})", f"sum([{body} for {e} in {v}])"])
        if choice == "lambda":
            fns = scope.of("fn")
            if not fns:
                return self.const()
            return f"{self.pick(fns)}({self.scalar(scope, d)})"
        if choice == "mask":
            v, w = self.vector(scope, d), self.vvar(scope)
            return f"np.sum(({v})[{w} > {self.pick(['0.2', '-0.4', '0.9'])}])"
        if choice == "intindex":
            v = self.vector(scope, d)
            m = self.matrix(scope, d)
            return self.pick(
                [f"np.sum(({v})[[0, 2, 2, -1]])", f"np.sum(np.sin(({m})[[1, 0, 1]]))",
                 f"np.sum(({v})[np.array([3, 1])] * ({v})[:2])"]
            )
        if choice == "step":
            v = self.vector(scope, d)
            return self.pick(
                [f"np.sum(({v})[::2])", f"np.sum(({v})[1::2] * ({v})[4:0:-2])",
                 f"np.sum(np.cos(({v})[-1::-3]))"]
            )
        if choice == "size1":
            # operands with axes of length one, broadcast in both directions
            v, m = self.vector(scope, d), self.matrix(scope, d)
            return self.pick(
                [
                    f"np.sum(np.tanh(({v})[:, None] * ({v})[None, :]))",
                    f"np.sum(({m}) * np.mean({m}, axis=0, keepdims=True))",
                    f"np.sum(np.sin(({m})[:, :1] * ({m})))",
                    f"np.sum(({m})[:1, :] * ({m})[:, None, 2:3])",
                    f"np.sum(np.tanh(np.reshape({v}, (1, {N}, 1)) * np.reshape({v}, (1, 1, {N}))))",
                ]
            )
        if choice == "batched":
            # stacks of matrices: 3-D by 3-D and 1-D by 3-D products
            m, v = self.matrix(scope, d), self.vector(scope, d)
            return self.pick(
                [
                    f"np.sum(np.tanh(np.stack([{m}, ({m}) * 0.5]) @ np.stack([({m}).T, ({m}).T])))",
                    f"np.sum(np.sin({v} @ np.stack([({m}).T, np.cos({m}).T])))",
                    f"np.sum(np.stack([{m}, {m}]) @ {v})",
                ]
            )
        if choice == "listsum":
            lists = scope.of("l")
            if not lists:
                return self.const()
            return self.pick(["sum({})", "np.sum(np.array({}))"]).format(self.pick(lists))
        if choice == "msum":
            m = self.matrix(scope, d)
            return self.pick(
                [f"np.sum({m})", f"np.sum(np.tanh(np.sum({m}, axis=1)))", f"np.mean({m})"]
            )
        raise AssertionError(choice)

    def unary(self, e):
        return self.pick(
            [
                f"np.sin({e})",
                f"np.cos({e})",
                f"np.tanh({e})",
                f"np.exp(np.tanh({e}))",
                f"np.log(({e}) ** 2 + 1.0)",
                f"np.sqrt(({e}) * ({e}) + 1.0)",
            ]
        )

    def vector(self, scope, depth):
        if depth <= 0:
            choice = self.pick(["vvar", "vvar", "mrow"])
        else:
            choice = self.pick(
                [
                    "vvar",
                    "vvar",
                    "mrow",
                    "binop",
                    "binop",
                    "sv",
                    "div",
                    "pow",
                    "unary",
                    "unary",
                    "neg",
                    "mreduce",
                    "flip",
                    "cumsum",
                    "where",
                    "maximum",
                    "call",
                    "matvec",
                    "lambda",
                ]
            )
        d = depth - 1
        if choice == "vvar":
            return self.vvar(scope)
        if choice == "mrow":
            names = scope.of("m")
            if not names:
                return self.vvar(scope)
            return f"{self.pick(names)}[{self.integer(-ROWS, ROWS - 1)}]"
        if choice == "binop":
            op = self.pick(["+", "-", "*"])
            return f"({self.vector(scope, d)} {op} {self.vector(scope, d)})"
        if choice == "sv":
            op = self.pick(["+", "-", "*"])
            s, v = self.scalar(scope, d), self.vector(scope, d)
            return f"({s} {op} {v})" if self.coin() else f"({v} {op} {s})"
        if choice == "div":
            return (
                f"({self.vector(scope, d)} / (1.0 + {self.expr(self.pick('sv'), scope, d)} ** 2))"
            )
        if choice == "pow":
            return f"({self.vector(scope, d)}) ** {self.pick(['2', '3'])}"
        if choice == "unary":
            return self.unary(self.vector(scope, d))
        if choice == "neg":
            return f"-({self.vector(scope, d)})"
        if choice == "mreduce":
            m = self.matrix(scope, d)
            return self.pick(
                [f"np.sum({m}, axis=0)", f"np.mean({m}, axis=0)", f"({m}).sum(axis=0)"]
            )
        if choice == "flip":
            return f"({self.vector(scope, d)})[::-1]"
        if choice == "cumsum":
            return f"np.cumsum({self.vector(scope, d)})"
        if choice == "where":
            v = self.vector(scope, d)
            return f"np.where({v} > {self.scalar(scope, d)}, {v}, {self.vector(scope, d)})"
        if choice == "maximum":
            return f"np.maximum({self.vector(scope, d)}, {self.vector(scope, d)})"
        if choice == "call":
            return self.call("v", scope, d) or self.vvar(scope)
        if choice == "lambda":
            fns = scope.of("fn")
            if not fns:
                return self.vvar(scope)
            return f"{self.pick(fns)}({self.vector(scope, d)})"
        if choice == "matvec":
            m = self.matrix(scope, d)
            return f"(({m}).T @ (({m}) @ {self.vector(scope, d)}))"
        raise AssertionError(choice)

    def vvar(self, scope):
        names = scope.of("v")
        return self.pick(names) if names else f"np.linspace(-0.5, 1.0, {N})"

    def matrix(self, scope, depth):
        names = scope.of("m")
        if depth <= 0 or not names:
            if names:
                return self.pick(names)
            return f"np.stack([{self.vector(scope, 0)}, {self.vector(scope, 0)}])"
        choice = self.pick(["mvar", "mvar", "binop", "sm", "vm", "unary", "stack"])
        d = depth - 1
        if choice == "mvar":
            return self.pick(names)
        if choice == "binop":
            op = self.pick(["+", "-", "*"])
            return f"({self.matrix(scope, d)} {op} {self.matrix(scope, d)})"
        if choice == "sm":
            return f"({self.scalar(scope, d)} * {self.matrix(scope, d)})"
        if choice == "vm":
            op = self.pick(["+", "-", "*"])
            return f"({self.vector(scope, d)} {op} {self.matrix(scope, d)})"
        if choice == "unary":
            return self.unary(self.matrix(scope, d))
        if choice == "stack":
            return f"np.stack([{self.vector(scope, d)}, {self.vector(scope, d)}])"
        raise AssertionError(choice)

    def cond(self, scope, depth):
        a, b = self.scalar(scope, depth), self.scalar(scope, depth)
        offset = self.pick(["0.1", "0.35", "-0.2"])
        form = self.pick(["cmp", "cmp", "cmp", "and", "not", "chain"])
        op = self.pick([">", "<", ">=", "<="])
        if form == "cmp":
            return f"{a} {op} {b} + {offset}"
        if form == "and":
            return f"({a} {op} {offset}) {self.pick(['and', 'or'])} ({b} {op} -0.25)"
        if form == "not":
            return f"not ({a} {op} {b} + {offset})"
        return f"-0.5 < {a} < 0.8"

    def call(self, kind, scope, depth):
        """A call to a generated helper returning `kind`, or None if there is none."""
        options = [h for h in self.helpers if h[2] == kind]
        if not options:
            return None
        name, params, _ = self.pick(options)
        args = [self.expr(k, scope, depth) for _, k in params]
        if len(args) > 1 and self.coin():
            last = params[-1][0]
            return f"{name}({', '.join(args[:-1])}, {last}={args[-1]})"
        return f"{name}({', '.join(args)})"

    @staticmethod
    def own(value):
        """`value` as an array of its own: never a view or another name for an array.

        KNOWN BUGS 1-3: `y = x; y += 1.0` (and `w -= ...` on a helper's parameter) changes `x`
        in Python, but not in srcgrad; a write into an array after a view of it was taken
        (`r = M[0]; M[0, 0] = 1.0`, `for e in M[0]: M[0, 1] = ...`) does not reach the view's
        gradient."""
        node = ast.parse(value, mode="eval").body
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            return value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if isinstance(func.value, ast.Name) and func.value.id == "np":
                return value
            if func.attr in ("copy", "sum", "mean"):
                return value
        return f"np.array({value})"

    # -- statements -------------------------------------------------------------------------
    def block(self, scope, indent, depth, jumps, max_stmts, ret_kind="s"):
        """Lines of a block. `jumps` are the jumps allowed in it ("break", "continue", "return"),
        generated only inside loops, as `if cond: jump`."""
        lines = []
        count = self.integer(1, max_stmts)
        for _ in range(count):
            if self.stmt_budget <= 0:
                break
            self.stmt_budget -= 1
            lines += self.statement(scope, indent, depth, jumps, ret_kind)
        return lines or [indent + "pass"]

    def statement(self, scope, ind, depth, jumps, ret_kind):
        in_loop = "continue" in jumps
        kinds = ["assign", "assign", "reassign", "reassign", "aug", "zeros", "write", "unpack",
                 "inplace"]
        if ind == "    " and not self.in_helper:
            # KNOWN LIMITATION 9: a lambda or nested def only at the top level of the body
            kinds += ["lambda", "def"]
        if depth > 0:
            kinds += ["if", "if", "for", "for", "foreach", "while"]
        if in_loop and scope.of("l"):
            kinds += ["append", "append"]
        if not in_loop:
            kinds.append("newlist")
        if in_loop:
            kinds += ["jump", "jump"]
        kind = self.pick(kinds)
        e = 2  # expression depth
        if kind == "assign":
            t = self.pick(["s", "s", "v", "m"])
            name = self.fresh(t)
            value = self.expr(t, scope, e)
            scope.names[name] = t
            if t != "s" and self.coin(1, 3):
                value = f"({value}).copy()"
                self.owned.add(name)
            elif t != "s":
                value = self.own(value)
            return [f"{ind}{name} = {value}"]
        if kind == "reassign":
            t = self.pick(["s", "s", "v", "m"])
            names = scope.of(t, writable=True)
            if not names:
                return []
            name, value = self.pick(names), self.expr(t, scope, e)
            if name in self.owned:
                value = self.pick([f"np.array({value})", f"({value}).copy()"])
            elif t != "s":
                value = self.own(value)
            return [f"{ind}{name} = {value}"]
        if kind == "aug":
            t = self.pick(["s", "v"])
            names = [n for n in scope.of(t, writable=True) if n not in self.shared]
            if not names:
                return []
            op = self.pick(["+=", "-=", "*="])
            value = self.expr(t, scope, e)
            if op == "*=":
                value = f"np.tanh({value})"
            return [f"{ind}{self.pick(names)} {op} {value}"]
        if kind == "zeros":
            name = self.fresh("z")
            scope.names[name] = "v"
            self.owned.add(name)
            return [
                f"{ind}{name} = " + self.pick([f"np.zeros({N})", f"np.zeros_like({N} * [0.0])"])
            ]
        if kind == "write":
            t = self.pick(["v", "v", "m"])
            names = [n for n in scope.of(t, writable=True) if n in self.owned]
            if not names:
                return []
            target = self.pick(names)
            if t == "m":
                where = self.pick(
                    [f"{self.integer(0, ROWS - 1)}, {self.index(scope)}", f"{self.integer(0, 1)}"]
                )
                value = self.expr("v" if "," not in where else "s", scope, e)
                return [f"{ind}{target}[{where}] = {value}"]
            if self.coin(1, 4):
                return [f"{ind}{target}[1:3] = ({self.vector(scope, e)})[0:2]"]
            op = self.pick(["=", "=", "+=", "-=", "*="])
            value = self.scalar(scope, e)
            if op == "*=":
                value = f"np.tanh({value})"
            return [f"{ind}{target}[{self.index(scope)}] {op} {value}"]
        if kind == "inplace":
            names = [n for n in scope.of("v", writable=True) if n in self.owned
                     and n not in self.shared]
            return self.inplace(self.pick(names), scope, ind, e) if names else []
        if kind == "unpack":
            t1, t2 = self.pick("sv"), self.pick("sv")
            calls = [h for h in self.helpers if h[2] == "t"]
            n1, n2 = self.fresh(t1), self.fresh(t2)
            if calls and self.coin():
                name, params, _ = self.pick(calls)
                args = ", ".join(self.expr(k, scope, e) for _, k in params)
                t1, t2 = "s", "v"
                scope.names[n1], scope.names[n2] = t1, t2
                return [f"{ind}{n1}, {n2} = {name}({args})"]
            v1, v2 = self.expr(t1, scope, e), self.expr(t2, scope, e)
            v1, v2 = (self.own(v1) if t1 == "v" else v1), (self.own(v2) if t2 == "v" else v2)
            scope.names[n1], scope.names[n2] = t1, t2
            return [f"{ind}{n1}, {n2} = {v1}, {v2}"]
        if kind in ("lambda", "def"):
            # an elementwise function of one argument, closing over a scalar of the scope
            name, t = self.fresh("g"), self.fresh("t")
            svars = scope.of("s")
            c = self.pick(svars) if svars else self.const()
            body = self.pick([f"{t} * {c}", f"{c} - {t}", f"{t} / (1.0 + {c} ** 2)"])
            body = self.unary(body)
            scope.names[name] = "fn"
            if kind == "lambda":
                return [f"{ind}{name} = lambda {t}: {body}"]
            return [f"{ind}def {name}({t}):", f"{ind}    return {body}"]
        if kind == "newlist":
            name = self.fresh("acc")
            scope.names[name] = "l"
            return [f"{ind}{name} = []"]
        if kind == "append":
            return [f"{ind}{self.pick(scope.of('l'))}.append({self.scalar(scope, e)})"]
        if kind == "jump":
            jump = self.pick(sorted(jumps))
            if jump == "return":
                jump = "return " + self.returned(ret_kind, scope)
            return [f"{ind}if {self.cond(scope, 1)}:", f"{ind}    {jump}"]
        inner = ind + "    "
        if kind == "if":
            lines = [f"{ind}if {self.cond(scope, 1)}:"]
            lines += self.block(scope.child(), inner, depth - 1, jumps, 3, ret_kind)
            if self.coin():
                lines.append(f"{ind}elif {self.cond(scope, 1)}:")
                lines += self.block(scope.child(), inner, depth - 1, jumps, 2, ret_kind)
            if self.coin():
                lines.append(f"{ind}else:")
                lines += self.block(scope.child(), inner, depth - 1, jumps, 3, ret_kind)
            return lines
        if kind == "for":
            var = self.fresh("i")
            k = self.integer(0, MAX_TRIPS)
            header = self.pick(
                [
                    f"range({k})",
                    f"range(1, {k})",
                    f"range({k} - 1, -1, -1)",
                    f"reversed(range({k}))",
                ]
            )
            body = scope.child()
            body.names[var] = "i"
            body.readonly.add(var)
            return [f"{ind}for {var} in {header}:"] + self.block(
                body, inner, depth - 1, self.loop_jumps(jumps), 4, ret_kind
            )
        if kind == "foreach":
            body = scope.child()
            e1 = self.fresh("e")
            body.names[e1] = "s"
            body.readonly.add(e1)
            v = self.iterable(scope, body)
            form = self.pick(["plain", "enumerate", "zip"])
            if form == "plain":
                header = f"for {e1} in {v}:"
            elif form == "enumerate":
                var = self.fresh("i")
                body.names[var] = "i"
                body.readonly.add(var)
                header = f"for {var}, {e1} in enumerate({v}):"
            else:
                e2 = self.fresh("e")
                body.names[e2] = "s"
                body.readonly.add(e2)
                header = f"for {e1}, {e2} in zip({v}, {self.iterable(scope, body)}):"
            body_jumps = self.loop_jumps(jumps)
            return [f"{ind}{header}"] + self.block(body, inner, depth - 1, body_jumps, 3, ret_kind)
        if kind == "while":
            counter = self.fresh("j")
            k = self.integer(0, MAX_TRIPS)
            cond = f"{counter} < {k}"
            svars = scope.of("s", writable=True)
            body_jumps = self.loop_jumps(jumps)
            if svars and self.coin():
                cond += f" and {self.pick(svars)} < {self.pick(['1.5', '3.0', '-0.5'])}"
            body = scope.child()
            body.names[counter] = "i"  # valid index: it stays < MAX_TRIPS < N inside the body
            body.readonly.add(counter)
            lines = [f"{ind}{counter} = 0", f"{ind}while {cond}:"]
            lines += self.block(body, inner, depth - 1, body_jumps, 3, ret_kind)
            # the counter is incremented first, so `continue` cannot loop forever; in the body
            # it is 1..k, a valid index
            lines.insert(2, f"{inner}{counter} = {counter} + 1")
            return lines
        raise AssertionError(kind)

    def inplace(self, t, scope, ind, e):
        """A NumPy call that writes into ``t``, an array of the function's own (issue 13)."""
        i, j = self.integer(0, N - 1), self.integer(0, N - 1)
        form = self.pick(["copyto", "add.at", "subtract.at", "sort", "out", "out-self", "fill"])
        if form == "copyto":
            return [f"{ind}np.copyto({t}, {self.vector(scope, e)})"]
        if form in ("add.at", "subtract.at"):
            return [f"{ind}np.{form}({t}, [{i}, {j}, {j}], {self.scalar(scope, e)})"]
        if form == "sort":
            return [f"{ind}{t}.sort()"]
        if form == "out":
            fn = self.pick(["np.tanh", "np.sin"])
            return [f"{ind}{fn}({self.vector(scope, e)}, out={t})"]
        if form == "out-self":
            return [f"{ind}np.multiply({t}, np.tanh({self.scalar(scope, e)}), out={t})"]
        return [f"{ind}{t}.fill({self.scalar(scope, e)})"]

    def iterable(self, scope, body):
        v = self.vector(scope, 1)
        if v.isidentifier():
            # the loop holds this array: `v += ...` in the body would change what it iterates
            # over (srcgrad refuses that), so the body leaves v alone
            body.readonly.add(v)
            return v
        return self.own(v)

    def returned(self, kind, scope):
        if kind == "t":
            return f"{self.scalar(scope, 2)}, {self.own(self.vector(scope, 2))}"
        value = self.expr(kind, scope, 2)
        return self.own(value) if kind != "s" else value

    @staticmethod
    def loop_jumps(jumps):
        return frozenset({"break", "continue"} | (jumps & {"return"}))

    # -- functions --------------------------------------------------------------------------
    def helper(self):
        name = self.fresh("h")
        params = [("u", "s"), ("w", "v")][: self.integer(1, 2)]
        if self.coin(1, 3):
            params = [(p, k) for p, k in params if k == "v"] or params
        ret = self.pick(["s", "s", "v", "t"])
        if ret in ("v", "t") and not any(k == "v" for _, k in params):
            params.append(("w", "v"))
        scope = Scope(dict(params))
        self.owned = set()
        self.shared = {p for p, k in params if k == "v"}
        self.in_helper = True
        self.params = {p for p, _ in params}
        self.stmt_budget = self.integer(0, 4)
        lines = [f"def {name}({', '.join(p for p, _ in params)}):"]
        if self.stmt_budget:
            lines += self.block(scope, "    ", 1, frozenset({"return"}), 4, ret)
        lines.append(f"    return {self.returned(ret, scope)}")
        self.helpers.append((name, params, ret))
        return lines

    def jump_and_append_loop(self, scope):
        """A loop that appends to a list and leaves early (`break`) or skips (`continue`): in a
        third of the programs, so these stay frequent whatever the statement weights."""
        acc, i = self.fresh("acc"), self.fresh("i")
        body = scope.child()
        body.names[i] = "i"
        body.readonly.add(i)
        jump = self.pick(["break", "continue"])
        lines = [
            f"    {acc} = []",
            f"    for {i} in range({self.integer(1, MAX_TRIPS)}):",
            f"        if {self.cond(body, 1)}:",
            f"            {jump}",
            f"        {acc}.append({self.scalar(body, 2)})",
        ]
        scope.names[acc] = "l"
        return lines

    def program(self):
        lines = ["import numpy as np", ""]
        for _ in range(self.integer(0, 2)):
            lines += ["", *self.helper(), ""]
        scope = Scope({p: k for p, k in PARAMS})
        self.owned = {p for p, k in PARAMS if k != "s"}
        self.shared = set()
        self.in_helper = False
        self.params = {p for p, _ in PARAMS}
        self.stmt_budget = self.integer(1, 10)
        lines += ["", "def f(x, a, M):"]
        if self.coin(1, 3):
            lines += self.jump_and_append_loop(scope)
        if self.coin(1, 4):
            # an array of the function's own, changed by an in-place NumPy call
            name = self.fresh("y")
            lines.append(f"    {name} = ({self.vector(scope, 1)}).copy()")
            scope.names[name] = "v"
            self.owned.add(name)
            lines += self.inplace(name, scope, "    ", 2)
        lines += self.block(scope, "    ", 2, frozenset({"return"}), 6)
        final = self.pick(
            [
                f"np.sum({self.vector(scope, 2)})",
                self.scalar(scope, 2),
                f"np.sum({self.matrix(scope, 1)})",
            ]
        )
        # most variables reach the result, so that their gradients are checked too
        for name, kind in sorted(scope.names.items()):
            if kind in "svml" and self.coin(3, 4):
                term = name if kind == "s" else f"np.sum(np.array({name}))"
                final += f" + {self.pick(['0.5', '-0.3', '1.1'])} * np.tanh({term})"
        lines.append(f"    return {final}")
        return "\n".join(lines) + "\n"


@st.composite
def programs(draw):
    return Gen(draw).program()


def values(size, first):
    """`size` inputs on a grid of 0.01 in [-1.5, 1.5], each shifted by its own irrational
    offset: no two inputs tie (np.maximum, max and == would be at a kink) and none is 0."""
    offsets = [1e-3 * ((first + k + 1) * 0.6180339887498949 % 1.0) + 1e-4 for k in range(size)]
    return st.lists(st.integers(-150, 150), min_size=size, max_size=size).map(
        lambda ks: [k / 100 + o for k, o in zip(ks, offsets)]
    )


inputs = st.tuples(
    values(N, 0).map(np.array),
    values(1, N).map(lambda v: v[0]),
    values(ROWS * N, N + 1).map(lambda v: np.array(v).reshape(ROWS, N)),
)
wrts = st.sampled_from([("x", "a", "M"), ("x",), ("a",), ("M",), ("x", "a"), ("a", "M"), "x", 1])


# ---------------------------------------------------------------------------------------------
# The check.
# ---------------------------------------------------------------------------------------------


def load(tmp_path, text):
    n = next(_counter)
    name = f"prog_{os.getpid()}_{n}"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def copies(args):
    return [np.copy(v) if isinstance(v, np.ndarray) else v for v in args]


def call(f, args):
    with np.errstate(all="ignore"):
        out = f(*copies(args))
    out = np.asarray(out, dtype=np.float64)
    assert out.size == 1
    return float(out.reshape(()))


def numeric(f, args, position, step, value):
    """Central, forward and backward differences of f with respect to args[position]."""
    x = args[position]
    shape = np.shape(x)
    central, forward, backward = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    for idx in np.ndindex(shape):
        h = step * max(1.0, abs(float(x[idx] if shape else x)))
        plus, minus = list(args), list(args)
        if shape:
            plus[position], minus[position] = x.copy(), x.copy()
            plus[position][idx] += h
            minus[position][idx] -= h
        else:
            plus[position], minus[position] = x + h, x - h
        fp, fm = call(f, plus), call(f, minus)
        central[idx] = (fp - fm) / (2 * h)
        forward[idx] = (fp - value) / h
        backward[idx] = (value - fm) / h
    if not shape:
        return float(central), float(forward), float(backward)
    return central, forward, backward


def positions(wrt):
    names = [p for p, _ in PARAMS]
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return [names.index(w) if isinstance(w, str) else w for w in items]


def close(got, want, scale):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    return got.shape == want.shape and bool(
        np.all(np.abs(got - want) <= 1e-5 * np.abs(want) + 1e-6 * scale)
    )




def check_program(tmp_path, text, args, wrt, tangent_seed):
    f = load(tmp_path, text)
    try:
        # an overflow inside, even one that tanh hides from the result, gives 0 * inf = nan
        # in a derivative
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            value = float(np.reshape(f(*copies(args)), ()))
    except (FloatingPointError, ZeroDivisionError, OverflowError):
        assume(False)
    assume(np.isfinite(value) and abs(value) < 1e6)
    pos = positions(wrt)
    coarse, fine = [], []
    for p in pos:
        central, forward, backward = numeric(f, args, p, 1e-5, value)
        coarse.append(central)
        fine.append(numeric(f, args, p, 1e-6, value)[0])
        assume(np.all(np.isfinite(central)) and np.all(np.isfinite(fine[-1])))
        # a kink or a branch switch within the step: the one-sided differences disagree
        spread = 1e-3 * (1.0 + np.abs(central))
        assume(np.all(np.abs(forward - backward) <= spread))
    scale = 1.0 + abs(value) + max(float(np.max(np.abs(c))) for c in coarse)
    assume(scale < 1e6)
    for c, d in zip(coarse, fine):
        assume(np.all(np.abs(c - d) <= 1e-4 * (np.abs(c) + 1e-2 * scale)))

    def unpack(g):
        return list(g) if isinstance(wrt, tuple) else [g]

    with np.errstate(all="ignore"):
        call_args = copies(args)
        try:
            df = srcgrad.grad(f, wrt=wrt)
        except srcgrad.SrcgradError:
            raise
        grads = unpack(df(*call_args))
        for before, after in zip(args, call_args):
            assert np.array_equal(before, after), "grad modified an argument"
        for p, g, want in zip(pos, grads, coarse):
            assert close(g, want, scale), (
                f"grad wrt {PARAMS[p][0]}: srcgrad {g!r}, central differences {want!r}"
            )
            assert np.shape(g) == np.shape(args[p])

        v, vg = srcgrad.value_and_grad(f, wrt=wrt)(*copies(args))
        assert np.isclose(float(np.reshape(v, ())), value, rtol=1e-12, atol=1e-12), (
            f"value_and_grad value {v!r}, f returned {value!r}"
        )
        for g1, g2 in zip(unpack(vg), grads):
            assert close(g1, g2, scale), f"value_and_grad gradient {g1!r}, grad {g2!r}"

        rng = np.random.default_rng(tangent_seed)
        tangents = [
            rng.standard_normal(np.shape(args[p]))
            if isinstance(args[p], np.ndarray)
            else float(rng.standard_normal())
            for p in pos
        ]
        tangent = tuple(tangents) if isinstance(wrt, tuple) else tangents[0]
        call_args = copies(args)
        jv, jt = srcgrad.jvp(f, wrt=wrt)(*call_args, tangent)
        for before, after in zip(args, call_args):
            assert np.array_equal(before, after), "jvp modified an argument"
        want = sum(float(np.sum(c * t)) for c, t in zip(coarse, tangents))
        tscale = scale * (1.0 + sum(float(np.sum(np.abs(t))) for t in tangents))
        assert np.isclose(float(np.reshape(jv, ())), value, rtol=1e-12, atol=1e-12), (
            f"jvp value {jv!r}, f returned {value!r}"
        )
        assert close(float(np.reshape(jt, ())), want, tscale), (
            f"jvp tangent {jt!r}, central differences {want!r}"
        )
        FEATURES["checked"] += 1
        for feature, pattern in FEATURE_PATTERNS.items():
            if pattern.search(text):
                FEATURES[feature] += 1
        if tangent_seed % SECOND_ORDER_EVERY == 0:
            check_second_order(f, args, pos[0], tangents[0], scale)


def check_second_order(f, args, p, v, scale):
    """hvp along v against central differences of grad along v (two steps: a kink of the
    gradient within the step shows as disagreement, and the example is discarded)."""
    dg = srcgrad.grad(f, wrt=p)

    def grad_at(t):
        shifted = copies(args)
        shifted[p] = args[p] + t * v
        return np.asarray(dg(*shifted), dtype=np.float64)

    diffs = [(grad_at(h) - grad_at(-h)) / (2 * h) for h in (1e-4, 5e-5)]
    gscale = scale * (1.0 + float(np.sum(np.abs(v))))
    assume(np.all(np.isfinite(diffs[0])) and np.all(np.isfinite(diffs[1])))
    assume(np.all(np.abs(diffs[0] - diffs[1]) <= 1e-4 * (np.abs(diffs[1]) + 1e-2 * gscale)))
    call_args = copies(args)
    got = srcgrad.hvp(f, wrt=p)(*call_args, v)
    for before, after in zip(args, call_args):
        assert np.array_equal(before, after), "hvp modified an argument"
    FEATURES["second order"] += 1
    assert np.shape(got) == np.shape(args[p])
    assert np.all(np.abs(np.asarray(got) - diffs[1]) <= 1e-4 * np.abs(diffs[1]) + 1e-4 * gscale), (
        f"hvp {got!r}, central differences of grad {diffs[1]!r}"
    )


@settings(
    max_examples=EXAMPLES,
    derandomize="SRCGRAD_RANDOM_EXAMPLES" not in os.environ,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)
@given(text=programs(), args=inputs, wrt=wrts, tangent_seed=st.integers(0, 2**32 - 1))
def test_random_program(tmp_path, text, args, wrt, tangent_seed):
    check_program(tmp_path, text, list(args), wrt, tangent_seed)


def test_feature_frequencies(capsys):
    """The share of checked programs with each feature, printed; below its minimum it fails."""
    total = FEATURES["checked"]
    if total < 50:
        import pytest

        pytest.skip("too few programs were checked in this run to judge frequencies")
    lines = [f"random programs checked: {total}, second order (hvp): {FEATURES['second order']}"]
    for feature in FEATURE_PATTERNS:
        lines.append(f"  {feature:24s} {FEATURES[feature]:6d}  {FEATURES[feature] / total:6.1%}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    low = {f: FEATURES[f] / total for f, share in MINIMUM_SHARE.items()
           if FEATURES[f] / total < share}
    assert not low, f"features below their minimum share: {low}"
    assert FEATURES["second order"] >= total / (2 * SECOND_ORDER_EVERY)
