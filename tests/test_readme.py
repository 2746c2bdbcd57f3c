"""The README and the documentation pages it links to (docs/) are tested: their examples run,
the source they print is the source srcgrad generates, their figures are measured, and each row
of the "What is supported" table (docs/supported.md) is tried.

The code blocks are read from README.md and docs/*.md themselves, so an edit to an example or to
what it prints fails here until the two agree again. (Blocks that docs/hooks.py generates at
build time are checked by tests/test_docs.py.)
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from gradcheck import check_grad, numeric_grad

import srcgrad
from srcgrad import grad, jvp, source
from srcgrad.rules import RULES

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
PAGES = {p.stem: p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
TEXT = "\n".join([README, *PAGES.values()])  # where the moved claims are looked for
_counter = itertools.count()


def blocks(lang="python"):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def block_after(marker, page=None, lang="python"):
    """The first code block after the text ``marker`` in the README or in ``docs/PAGE.md``."""
    text = README if page is None else PAGES[page]
    start = text.index(marker)
    return re.search(rf"```{lang}\n(.*?)```", text[start:], flags=re.S).group(1)


def module(tmp_path, text):
    """``text`` as an imported module (srcgrad reads source with inspect)."""
    name = f"readme_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_first_example_prints_what_the_readme_shows(tmp_path):
    code = blocks()[0]
    printed = blocks()[1]
    head, _, _ = code.partition("dW, db = loss(")
    rng = np.random.default_rng(0)
    mod = module(tmp_path, head)
    W, b = rng.normal(size=(3, 2)), rng.normal(size=2)
    X, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    dW, db = mod.loss(W, b, X, y)
    assert dW.shape == W.shape and db.shape == b.shape
    assert source(mod.loss) == printed.rstrip("\n") + "\n" or source(mod.loss).strip() == (
        printed.strip()
    )
    # and the gradients are right
    plain = module(tmp_path, head.replace('@grad(wrt=("W", "b"))\n', ""))
    check_grad(plain.loss, (W, b, X, y), wrt=("W", "b"))


def test_pytorch_example_gives_the_stated_numbers(tmp_path):
    code = block_after("## PyTorch's backward example")
    call = re.search(r"^(grad\(f.*\))\s+# \((.*)\):.*$", code, flags=re.M)
    mod = module(tmp_path, code.replace(call.group(0), ""))
    got = eval(call.group(1), vars(mod))
    assert got == tuple(float(v) for v in call.group(2).split(","))


def test_jvp_example_generates_what_the_readme_shows(tmp_path):
    code = "import numpy as np\n\n" + block_after("# Derivative modes and higher order", "modes")
    shown = block_after("`jvp(f)` generates", "modes")
    mod = module(tmp_path, code)
    assert source(jvp(mod.f)).strip() == shown.strip()


def test_loop_example_of_the_tour(tmp_path):
    """The tour shows the generated loop as the build generates it (docs/hooks.py); the prose
    after it describes what is saved, which holds for this function."""
    code = block_after("## A loop", "tour")
    assert "`grad(decay, wrt=(0, 1))` generates\n\n<!-- source: grad(decay, wrt=(0, 1)) -->" in (
        PAGES["tour"]
    )
    mod = module(tmp_path, code)
    text = source(grad(mod.decay, wrt=(0, 1)))
    assert "x_saved.append(x)" in text and "c_times_k = 0.01 * k" in text
    assert text.index("c_times_k = 0.01 * k") < text.index("for i in range(100)")
    check_grad(mod.decay, (0.7, 1.3), wrt=(0, 1))


def long_decay(k, x0, n):
    x = x0
    for _ in range(n):
        x = x - 0.01 * k * x
    return x


def test_stated_stack_bytes_per_iteration():
    stated = int(re.search(r"its stack holds the saved values, (\d+) bytes per iteration",
                           TEXT).group(1))
    n = 20_000
    dlong = grad(long_decay, wrt=(0, 1))
    dlong(1e-3, 1.5, 10)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        dlong(1e-3, 1.5, n)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert 0.75 * stated <= peak / n <= 1.25 * stated


def test_stated_rule_counts():
    m = re.search(r"(\d+) NumPy functions \((\d+) names counting aliases such as `np.abs` /\n"
                  r"`np.absolute`\): (\d+) differentiable, (\d+) without gradient", TEXT)
    functions, names, diff, nondiff = (int(v) for v in m.groups())
    numpy_names = {}
    for mod in (np, np.linalg):
        for name in dir(mod):
            obj = getattr(mod, name)
            if callable(obj) and not isinstance(obj, type):
                numpy_names.setdefault(id(obj), []).append(name)
    rules = [r for r in RULES.values() if id(r.fn) in numpy_names]
    assert len(rules) == functions
    assert sum(len(set(numpy_names[id(r.fn)])) for r in rules) == names
    assert sum(not r.nondiff for r in rules) == diff
    assert sum(r.nondiff for r in rules) == nondiff


def test_stated_scipy_count():
    pytest.importorskip("scipy")
    import srcgrad.rules.scipy_rules  # noqa: F401

    stated = int(re.search(r"derivatives of about (\d+) SciPy functions", TEXT).group(1))
    from test_scipy_rules import _is_scipy

    count = sum(1 for r in RULES.values() if _is_scipy(r.fn))
    assert abs(count - stated) <= 0.1 * stated


def test_stated_both_ways_modules():
    import test_unoptimized

    m = re.search(r"every gradient\s+case of (.*?) runs both ways", TEXT, flags=re.S)
    named = set(re.findall(r"`tests/(test_\w+)\.py`", m.group(1)))
    assert named == {
        mod.__name__ for mod in (test_unoptimized.test_straightline,
                                 test_unoptimized.test_control_flow,
                                 test_unoptimized.test_language)
    }


def test_custom_rule_example(tmp_path):
    pytest.importorskip("scipy")
    code = block_after("## Reverse and forward rules", "custom-rules")
    mod = module(tmp_path, code)
    text = source(srcgrad.grad(mod.loss))
    assert "dX_matmul_w = dp * p * (1 - p)" in text  # the rule's body, inlined
    rng = np.random.default_rng(1)
    w, X = rng.normal(size=3), rng.normal(size=(6, 3))
    t = (rng.random(6) > 0.5).astype(float)
    check_grad(mod.loss, (w, X, t))


def test_where_guard_example(tmp_path):
    code = block_after("Guard its argument:", "numpy")
    mod = module(tmp_path, "import numpy as np\n\ndef f(x):\n" + textwrap.indent(code, "    ")
                 + "    return np.sum(y)\n")
    with np.errstate(all="raise"):
        g = grad(mod.f)(np.array([-1.0, 0.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5])


# --- the "What is supported" table, row by row ------------------------------------------------

SUPPORTED = '''
import functools

import numpy as np

def assignments(x):
    a, b = x * 2.0, np.sin(x)
    a += b
    return np.sum(a * b)

def deleted(x):
    y = x * 2.0
    z = np.sum(y)
    del y
    return z

def operators(x):
    return np.sum((x + 1.0) * x / 2.0 - x ** 2 + (x @ x) % 7.0 - -x)

def branches(x):
    s = np.sum(x)
    if s > 0 and not s > 10.0:
        y = x * 2.0
    elif 0.0 < s < 100.0:
        y = x
    else:
        y = -x
    return np.sum(y if s > 1.0 else y * y)

def loops(x):
    s = 0.0
    for i in range(len(x) - 1, -1, -1):
        s = s + x[i] * i
    for v in x:
        s = s + v * v
    for i, u in enumerate(x):
        s = s + u * i
    for u, v in zip(x, x[::-1]):
        s = s + u * v
    for v in reversed(x):
        s = s * 0.5 + v
    return s

def while_jumps(x):
    s = 0.0
    i = 0
    while i < len(x):
        i = i + 1
        if x[i - 1] < -5.0:
            continue
        if s > 100.0:
            break
        s = s + x[i - 1] ** 2
        if s > 50.0:
            return s
    return s

def _helper(v, scale=2.0, **kw):
    return np.sum(v * scale) + (kw["extra"] if kw else 0.0)

def calls(x):
    return _helper(x) + _helper(x, scale=3.0, extra=1.0)

def _power(x, n):
    if n == 0:
        return 1.0
    return x * _power(x, n - 1)

def recursion(x):
    return _power(x, 3)

def _step(f, y, h, *args):
    return y + h * f(y, *args)

def _rhs(y, k):
    return -k * y ** 3

def passes_functions(x):
    scale = functools.partial(np.multiply, 0.5)
    return np.sum(scale(_step(_rhs, x, 0.1, 2.0)) ** 2)

def draws(x):
    rng = np.random.default_rng(0)
    return np.sum((x + 0.5 * rng.normal(size=4)) ** 2 + x[rng.permutation(4)] * x)

def lambdas(x):
    sq = lambda t: t * t
    def cube(t):
        return t * t * t
    return np.sum(sq(x) + cube(x))

def containers(p):
    return np.sum(p[0] * p[1])

def dict_arg(d):
    return np.sum(d["w"] * d["b"])

def lists(x):
    hs = []
    for v in x:
        hs.append(v * v)
    return sum(hs) + sum(np.sin(v) for v in x) + np.sum(np.array([v * 2.0 for v in x]))

def reads(M):
    return (M[0, 0] + M[-1, -1] + np.sum(M[0:2]) + np.sum(M[:, 0]) + np.sum(M[None])
            + np.sum(M[...]) + np.sum(M[M > 0]) + np.sum(M[[0, 0, 1]]))

def writes(x):
    y = np.zeros(4)
    y[0] = x[0]
    y[1:3] = x[1:3] * 2.0
    y[3] += x[3]
    return np.sum(y * y)

def writes_argument(x):
    x[0] = x[1] * 3.0
    return np.sum(x * x)

def methods(M):
    return (M.sum() + M.mean() + M.max() + M.min() + M.prod() + M.reshape((4,)).dot(M.ravel())
            + M.flatten().sum() + M.transpose().T.squeeze().copy().astype(float).std()
            + M.var() + M.trace() + M.clip(0.0, 1.0).sum() + M.shape[0] + M.ndim + M.size)

def reshape_spread(x):
    return np.sum(x.reshape(2, 2) * x.reshape((2, 2)))

def builtins(x):
    return (sum(x) + abs(x[0]) + min(x[0], x[1]) + max(x) + float(len(x))
            + (1.0 if isinstance(x, np.ndarray) else 0.0))

def view_write(x):
    v = x[1:]
    v[0] = 1.0
    return np.sum(v)

def alias_read(x):
    y = x * 1.0
    z = y
    y[0] = 1.0
    return np.sum(z)

def alias_augment(x):
    y = x * 1.0
    z = y
    y += np.sin(x)
    return np.sum(z * y)

def view_augment(x):
    y = x * 1.0
    v = y[1:]
    y += 1.0
    return np.sum(v)

def concatenation(x):
    a = list(x) * 2
    return a[0] * a[5]

def uses_with(x):
    with np.errstate(all="ignore"):
        y = x * 2.0
    return np.sum(y)

def uses_try(x):
    s = x * 1.0
    try:
        s = s * 2.0
        y = np.log(x)
    except ValueError:
        y = x
    return np.sum(y + s)

def uses_class(x):
    class C:
        pass
    return np.sum(x)

def uses_yield(x):
    yield x

def uses_max_key(x):
    return max(x[0], x[1], key=abs)

from dataclasses import dataclass

@dataclass
class _Pair:
    a: object
    b: float = 2.0

class _Scaled:
    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        return v * self.k

    @property
    def double(self):
        return 2.0 * self.k

_scaled = _Scaled(1.5)

def objects(x):
    p = _Pair(x * 2.0)
    p.b = p.b * _scaled.double
    return np.sum(_scaled(p.a) * p.b)

def method_of_unknown(m):
    return m.forward(m)
'''

V4 = np.array([0.7, -0.4, 1.3, 0.2])
M22 = np.array([[0.3, -0.6], [0.9, 0.4]])

WORKS = [
    ("assignments", (V4,)), ("deleted", (V4,)), ("operators", (V4,)), ("branches", (V4,)),
    ("loops", (V4,)), ("while_jumps", (V4,)), ("calls", (V4,)), ("recursion", (0.7,)),
    ("passes_functions", (V4,)), ("draws", (V4,)), ("lambdas", (V4,)), ("uses_with", (V4,)),
    ("containers", ((V4, V4 * 2.0),)),
    ("dict_arg", ({"w": V4, "b": V4 + 1.0},)), ("lists", (V4,)), ("reads", (M22,)),
    ("writes", (V4,)), ("writes_argument", (V4,)), ("methods", (M22,)),
    ("reshape_spread", (V4,)), ("builtins", (V4,)), ("alias_augment", (V4,)),
    ("objects", (V4,)),
]

REFUSED = [
    ("view_write", srcgrad.SrcgradError, "transform"),
    ("alias_read", srcgrad.SrcgradError, "transform"),
    ("view_augment", Exception, "run"),
    ("concatenation", srcgrad.SrcgradError, "run"),
    ("uses_try", srcgrad.UnsupportedSyntaxError, "transform"),
    ("uses_class", srcgrad.UnsupportedSyntaxError, "transform"),
    ("uses_yield", srcgrad.UnsupportedSyntaxError, "transform"),
    ("uses_max_key", srcgrad.SrcgradError, "transform"),
    ("method_of_unknown", srcgrad.UnsupportedSyntaxError, "call"),  # of what the call passes
]


@pytest.fixture(scope="module")
def supported(tmp_path_factory):
    return module(tmp_path_factory.mktemp("readme"), SUPPORTED)


@pytest.mark.parametrize("name, args", WORKS, ids=[w[0] for w in WORKS])
def test_supported_table_works(supported, name, args):
    f = getattr(supported, name)
    if not isinstance(args[0], (tuple, dict)):
        check_grad(f, args)
        return
    # a container argument: its gradient has its structure, each part against differences
    g = grad(f)(*args)
    keys = list(args[0]) if isinstance(args[0], dict) else range(len(args[0]))
    for k in keys:
        def part(v, k=k):
            c = dict(args[0]) if isinstance(args[0], dict) else list(args[0])
            c[k] = v
            return f(c if isinstance(args[0], dict) else tuple(c))
        np.testing.assert_allclose(g[k], numeric_grad(part, (args[0][k],), 0), rtol=1e-6)


@pytest.mark.parametrize("name, error, when", REFUSED, ids=[r[0] for r in REFUSED])
def test_supported_table_refuses(supported, name, error, when):
    f = getattr(supported, name)
    if when == "transform":
        with pytest.raises(error):
            grad(f)
    else:
        df = grad(f)
        with pytest.raises(error):
            df(V4.copy())


def test_print_statement_of_the_readme_holds(capsys, supported):
    # "print runs in the primal": once per call of a non-recursive function
    mod = module(Path(supported.__file__).parent, "def p(x):\n    print('hi')\n    return x * x\n")
    grad(mod.p)(1.5)
    assert capsys.readouterr().out.count("hi") == 1
    assert "`print` runs in the primal" in TEXT


def test_higher_order_examples(tmp_path):
    # docs/modes.md: second order works on these, both ways, against central differences
    from second_order_check import check_second_order

    code = "import numpy as np\n\n" + block_after("and parameters with", page="modes")
    mod = module(tmp_path, code)
    M = np.array([[1.0, -0.5], [-0.5, 1.0]])
    for k in (0, 1):
        check_second_order(mod.assemble, (np.array([0.3, -0.2, 0.5, 0.4]), M), k)
    for args, k in (((0.4, 1.3), 0), ((0.4, 1.3, 7), 1)):
        check_second_order(mod.spaced, args, k)
    seed = 1.0
    want = numeric_grad(lambda x: srcgrad.vjp(mod.spaced)(x, 1.3, seed), (0.4,), 0)
    assert srcgrad.vjp(srcgrad.vjp(mod.spaced))(0.4, 1.3, seed, 1.0) == pytest.approx(want,
                                                                                    rel=1e-6)
