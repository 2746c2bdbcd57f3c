"""Every "works" claim of docs/supported.md's language table, checked (issue 13 item 10).

Each row of the table whose status is "yes" is named here by a phrase of its text: with one small
function using the constructs it lists, whose gradient (reverse mode; and the directional
derivative of forward mode for the rows in ``FORWARD``) must match central differences in
float64; or by the test file that checks the
row in depth (``ELSEWHERE``, rows whose constructs need classes, structures or second order).
``test_every_works_row_is_checked`` fails when a "yes" row is named by neither.
(tests/test_supported_claims.py does the same for the rows that say "error".)
"""

import functools
import itertools
import math
import operator
import statistics
import warnings
from pathlib import Path

import numpy as np
import pytest
from gradcheck import numeric_grad

from srcgrad import grad, jvp

PAGE = Path(__file__).resolve().parent.parent / "docs" / "supported.md"
X = np.array([0.5, -1.0, 2.0])
T = np.array([0.3, 0.7, -0.2])
_W = np.array([0.5, 1.0, -1.0])


def _helper(v, c=2.0, *rest, scale=1.0, **options):
    return v * c * scale + sum(rest) + options.get("shift", 0.0)


def _scale(v, s):
    v *= s


def _call_with(f, args):
    return f(*args)


def _step(v):
    return np.sin(v)


@functools.lru_cache(maxsize=None)
def _cached_power():
    return 2.0


def _wrapped(fn):
    @functools.wraps(fn)
    def inner(v):
        return fn(v) * 2.0

    return inner


@_wrapped
def _doubled(v):
    return v * v


class _Affine:
    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        return v * self.k + 1.0


def assignments(x):
    a, (b, c) = x[0], (x[1], x[2])
    y = x * 1.0
    y[0], y[1] = y[1], y[0]
    p = q = a * b
    if (t := c * 2.0) > -10.0:
        p += t
    if a > 10.0 or (u := a * c) > -10.0:  # bound only where the operand runs
        p = p + u * sum([(s := v * b) for v in (a, c)]) + s
    first, *rest = x
    for head, *tail in [(a, b, c)]:
        p = p + head * tail[-1]
    return np.sum(y * _W) + p + q + first * rest[0]


def deleted_name(x):
    y = x * 2.0
    z = y + 1.0
    del y
    return np.sum(z**2)


def operators(x):
    return np.sum((x + 1.0) * x / 2.0 - x**2 + (x @ x) % 3.0) + np.sum(-x) + float(x[0]) ** 2


def branches(x):
    s = 0.0
    if x[0] > 0 and not x[1] > 0:
        s = np.sum(x**2)
    elif x[1] > 0 or x[2] < 0:
        s = np.sum(x)
    else:
        s = 1.0
    t = x[2] * 3.0 if -1.0 < x[0] < 1.0 else x[2]
    return s + t


def for_loops(x):
    s = 0.0
    for i in range(2, -1, -1):
        s = s + x[i] * (i + 1)
    for v in x:
        s = s + np.sin(v)
    for v in [x[0], x[1]]:
        s = s + v * v
    for v in (x[2],):
        s = s + v
    d = {"a": x[0], "b": x[1]}
    for k in d:
        s = s + d[k]
    for k, v in d.items():
        s = s + v * len(k)
    for v in d.values():
        s = s + v
    for idx in np.ndindex(2, 3):
        s = s + x[idx[1]] * idx[0]
    for idx, v in np.ndenumerate(x):
        s = s + v * idx[0]
    for i, (v, w) in enumerate(zip(x, reversed(x))):
        s = s + v * w * i
    for i, j in itertools.product(range(2), range(2)):
        s = s + x[i] * x[j]
    return s


def while_loops(x):
    s, i = 0.0, 0
    while True:
        i += 1
        if i == 2:
            continue
        s = s + x[i % 3] * s + x[0]
        if i > 3:
            break
    while s < 100.0:
        s = s * 2.0 + 1.0 + x[1] * 0.1
        if s > 50.0:
            return s * x[2]
    return s


def calls(x):
    y = x.copy()
    _scale(y, 3.0)
    return np.sum(_helper(y, 3.0, 1.0, scale=0.5, shift=2.0)) + np.sum(_helper(x))


def _integrate(f, y, h, *args):
    k1 = f(y, *args)
    k2 = f(y + h * k1, *args)
    return y + h * 0.5 * (k1 + k2)


def _rhs(y, g):
    return -g * np.sin(y)


def functions_as_arguments(x):
    hooks = {"post": np.tanh}
    y = _integrate(_rhs, x, 0.1, 9.8)
    return np.sum(hooks["post"](y))


def callables(x):
    half = functools.partial(_helper, c=0.5)
    lin = _Affine(3.0)
    return (np.sum(half(x)) + np.sum(_doubled(x)) + np.sum(x ** _cached_power()) + np.sum(lin(x))
            + np.sum(_Affine(2.0)(x)))


def star_calls(x):
    pair = (x, 2.0)
    grown = [x[0]]
    kw = {}
    for k in range(2):
        grown.append(x[k + 1] * x[0])
    if x[0] > 0:
        grown.append(x[2])
    for n in ("c", "scale"):
        kw[n] = x[2]
    return np.sum(_helper(*pair)) + np.sum(_helper(x, **{"c": 3.0})) + _helper(
        *grown) + _helper(x[1], **kw) + np.sum(_call_with(_helper, (x, x[0])))


def loop_over_functions(x):
    y = x
    for f in (np.tanh, _step):
        y = f(y)
    return np.sum(y)


def lambdas_and_nested_defs(x):
    sq = lambda v: v * v  # noqa: E731
    total = 0.0
    for i in range(2):
        def g(v, j=i):
            return v * x[i] * x[j]  # noqa: B023 (called in the same trip)

        total = total + np.sum(g(sq(x)))
    c = x[0]
    late = lambda t: c * t  # noqa: E731
    c = 2.0 * x[1]  # (Python's late binding: the call reads this `c`)
    return total + np.sum(late(x))


def dict_forms(x):
    a = dict(a=x, b=x * 2.0)
    b = dict([("a", x), ("b", x * 3.0)])
    c = dict(zip(["p", "q"], [x, x * x]))
    d = dict((k, v * 2.0) for k, v in c.items())
    return np.sum(a["b"]) + np.sum(b["b"]) + np.sum(c["q"]) + np.sum(d["p"])


def comprehensions(x):
    hs = []
    for v in x:
        hs.append(v * 2.0)
    squares = [v * v for v in x]
    named = {str(i): v for i, v in enumerate(x)}
    labels = {int(i) for i in range(3)}
    more = {**named, "3": x[0] * x[1]}
    longer = [*squares, x[2]] + list((*hs, x[0]))
    return (sum(hs) + sum(v for v in squares) + np.sum(list(x)) + named["1"] * len(labels)
            + sum(x[k] for k in labels) + more["3"] + longer[3] * longer[-1])


def reads(x):
    M = np.outer(x, x)
    return (x[0] + x[-1] + np.sum(x[0:2]) + np.sum(M[:, 0]) + np.sum(x[None]) + np.sum(x[...])
            + np.sum(x[x > 0]) + np.sum(x[[0, 0, 2]]))


def writes(x):
    y = np.zeros(4)
    y[0] = x[0] ** 2
    y[1:3] = x[1:] * 2.0
    y[2] += x[0] * x[1]
    return np.sum(y * y)


def writes_into_an_argument(x):
    x[0] = x[1] * 3.0
    x[2] += x[0]
    return np.sum(x * x)


def writes_into_copies(x):
    M = np.outer(x, x)
    f = M.flatten()
    f[0] = 1.0
    c = x[[0, 1, 2]]
    c[1] = c[0] * 2.0
    L = [x * k for k in range(1, 3)]
    a = L[1]
    a[0] = x[2]
    return np.sum(f) + np.sum(c * c) + np.sum(a * x)


def array_methods(x):
    M = np.outer(x, x) + np.eye(3)
    return (x.sum() + x.mean() + x.max() + x.min() + x.prod() + x.dot(x)
            + M.reshape(9).std() + x.var() + M.trace() + x.clip(-0.5, 1.5).sum()
            + M.ravel()[1] + M.flatten()[2] + M.transpose()[0, 1] + M.T[1, 0]
            + x[None].squeeze()[0] + x.copy()[1] + x.astype(float)[2] + x.shape[0] + x.ndim
            + x.size * 0.0 + (x.dtype == np.float64))


def text_and_checks(x):
    s = np.sum(x * x)
    label = f"{s:.3f}" + "{}".format(1) + "%.2f" % 0.5 + str(2) + repr(3) + format(4.0, ".1f")
    assert len(label) > 0, "never"
    if s < -1.0:
        raise ValueError("negative")
    return s


def builtins_used(x):
    vals = [x[0], x[1], x[2]]
    return (sum(vals) + abs(x[1]) + min(x[0], x[2]) + max(vals) + float(x[2]) + len(vals)
            + sum(v for v, _ in zip(vals, range(3))) + isinstance(x, np.ndarray))


def more_builtins(x):
    vals = [x[0], x[1], x[2]]
    ordered = sorted(vals, key=lambda v: -v, reverse=True)
    q, r = divmod(x[2], 1.5)
    return (sum(list(vals)) + sum(tuple(vals)) + ordered[0] + list(reversed(vals))[0]
            + pow(x[2], 2) + r + sum(map(lambda v: v * v, vals))
            + sum(filter(lambda v: v > 0, vals)) + math.lgamma(x[2]) + math.gamma(x[2])
            + math.fsum(vals) + math.hypot(x[0], x[1]) + operator.mul(x[0], x[2])
            + operator.neg(x[1]) + x[0].item() + operator.itemgetter(2)(vals)
            + getattr(x, "T")[0])  # noqa: B009 (the form differentiated)


class _Timer:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def managers_and_finally(x):
    s = 0.0
    with np.errstate(all="ignore"), warnings.catch_warnings(), _Timer():
        s = s + np.sum(np.log(x * x))
    try:
        s = s * 2.0
    finally:
        s = s + x[0]
    return s


def try_except(x):
    try:
        s = np.sum(x * x)
    except (ValueError, KeyError) as e:
        s = float(len(str(e)))
    else:
        s = s * 2.0
    try:
        t = x[0] * {"a": 2.0}["b"]
    except KeyError:
        t = x[1] * 3.0
    return s + t


def keyword_options(x, **options):
    return np.sum(x * options.get("k", 2.0))


def standard_library(x):
    return statistics.fmean([x[0], x[1], x[2]]) + statistics.fmean([x[0], x[1]], weights=[1, 3])


def functions_changed_first(x):
    fs = [np.sin]
    y = x * 2.0
    fs.append(np.cos)
    hooks = {"a": np.tanh, "b": np.sin}
    hooks["b"] = np.cos
    s = 0.0
    for f in fs:
        s = s + np.sum(f(y))
    for g in hooks.values():
        s = s + np.sum(g(x))
    return s


def functions_left_early(x):
    s = 0.0
    for f in (np.sin, np.cos, np.tanh):
        y = f(x)
        if y[1] < 0.0:
            continue
        s = s + np.sum(y * x)
        if s > 1.0:
            break
    return s


def lambdas_in_a_list(x):
    fs = []
    for i in range(2):
        fs.append(lambda t, a=x[i]: np.sin(a * t))
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x))
    return s * len(fs)


def reduced(x):
    return functools.reduce(lambda a, b: a * b, x) + functools.reduce(operator.add, x, 1.0)


# (phrase of the page's row, function)
WORKS = [
    ("assignments, tuple unpacking", assignments),
    ("`del name`", deleted_name),
    ("`+ - * / ** @ %`, unary `-`", operators),
    ("`if` / `elif` / `else`, `a if c else b`", branches),
    ("`for` over `range` (runtime bounds, negative steps)", for_loops),
    ("`while` with data-dependent conditions", while_loops),
    ("calls to your functions (module-level", calls),
    ("functions passed as arguments", functions_as_arguments),
    ("`functools.partial` (made in the body", callables),
    ("`f(*xs)` / `f(**kw)` of a tuple, list or dict literal", star_calls),
    ("a loop over a tuple or list of functions that calls them", loop_over_functions),
    ("Also one the function changes first", functions_changed_first),
    ("A `break` or `continue` in an `if` of the loop", functions_left_early),
    ("a list of lambdas the function builds", lambdas_in_a_list),
    ("`functools.reduce` (with an initial value too", reduced),
    ("`lambda` assigned to a name once, `def` nested anywhere", lambdas_and_nested_defs),
    ("`dict(a=x, b=y)`, `dict([(", dict_forms),
    ("`list.append`, list and dict comprehensions", comprehensions),
    ("reads `x[i]`, `x[-1]`", reads),
    ("writes `y[i] = v`, `y[a:b] = v`", writes),
    ("writes into an argument", writes_into_an_argument),
    ("writes into what is a copy", writes_into_copies),
    ("array methods `.sum .mean", array_methods),
    ("f-strings, `\"...\".format(...)`", text_and_checks),
    ("builtins `sum abs min max float len", builtins_used),
    ("builtins `list tuple sorted`", more_builtins),
    ("`with` (`np.errstate`, `warnings.catch_warnings()`", managers_and_finally),
    ("`try` ... `except` (several handlers", try_except),
    ("`**kwargs` parameters of the differentiated function", keyword_options),
    ("plain-Python helpers of the standard library", standard_library),
]
# forward mode too where it has code paths of its own (control flow, calls, blocks; the
# other rows' constructs are normalized before either mode sees them)
FORWARD = {branches, for_loops, while_loops, calls, callables, try_except, managers_and_finally}
# rows checked in depth elsewhere (classes, structures, randomness, recursion, second order)
ELSEWHERE = {
    "recursion and mutual recursion": "tests/test_recursion.py",
    "`d1 \\| d2` and `d \\|= other` of dicts; operators": "tests/test_object_operators.py",
    "random draws: methods of `np.random.Generator`": "tests/test_random_draws.py",
    "tuples, lists, dicts (constant keys) as arguments": "tests/test_language.py, "
                                                         "tests/test_random_programs.py",
    "attributes (`p.W`, `cfg.reg`": "tests/test_objects.py, "
                                   "tests/test_objects_of_gradients.py, "
                                   "tests/test_rebuilt_pytrees.py",
    "methods, `__call__` (`self.layer1(x)`)": "tests/test_objects.py",
    "a function held in a field of an object and called through it": (
        "tests/test_function_fields.py, tests/test_built_function_fields.py, "
        "tests/test_passed_function_fields.py"),
    "a lambda or nested def returned by a helper (a factory": "tests/test_factories.py",
    "in a tuple or list passed to a helper that loops over it": "tests/test_function_values.py",
    "with default values made again on each trip of a loop": "tests/test_function_values.py, "
                                                              "tests/test_function_lists.py, "
                                                              "tests/test_function_items_passed.py",
    "a list of functions the function changes at run time (bound once": (
        "tests/test_function_lists.py, tests/test_function_items_passed.py"),
    "a parameter that may be given a function or None": "tests/test_chosen_functions.py, "
                                                          "tests/test_chosen_held.py",
    "a loop over a list of functions the function changes at run time": (
        "tests/test_chosen_functions.py"),
    "building objects: dataclasses and namedtuples": "tests/test_objects.py",
    "a method building an object of its own class": "tests/test_type_self.py",
    "`dataclasses.replace(p, w=...)`": "tests/test_objects_syntax.py",
    "`copy.copy(obj)` of an object": "tests/test_shallow_copy.py, tests/test_callables_held.py, "
                                     "tests/test_python_values.py",
    "`obj.attr = v` on a variable": "tests/test_objects.py",
    "list and dict mutation: `insert`, `extend`": "tests/test_containers_mutation.py, "
                                                  "tests/test_python_values.py, "
                                                  "tests/test_setdefault_past_block.py",
    "`x += v` (and `L[i] += v`, `d[k] += v` of an array item) on an array that other names":
        "tests/test_sharing.py, tests/test_hunt_reproducers.py",
    "`[v] * n`, `n * (a, b)`: a list or tuple display repeated": "tests/test_hunt_reproducers.py",
    "`L + M`, `hs = hs + [h]`, `hs += [h]` of lists": "tests/test_hunt_reproducers.py",
    "a name bound to a callable at several places": "tests/test_rebound_calls.py",
    "`x[i][j] = v`, `a.b[i] = v`": "tests/test_nested_writes.py",
    "a loop over a list or tuple holding objects of two or more classes":
        "tests/test_mixed_layers.py",
    "`vars(obj)` read where it is called": "tests/test_vars.py",
}


def _works_rows():
    rows = []
    for line in PAGE.read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| construct"):
            status = line.rstrip(" |").rsplit(" | ", 1)[-1]
            if status.startswith(("yes", "inlined")):
                rows.append(line)
    return rows


@pytest.mark.parametrize("phrase, f", WORKS, ids=[f.__name__ for _, f in WORKS])
def test_the_claimed_construct_works(phrase, f):
    assert any(phrase in row for row in _works_rows()), f"the page no longer says: {phrase}"
    want = numeric_grad(f, (X.copy(),), 0)
    np.testing.assert_allclose(grad(f)(X.copy()), want, rtol=1e-6, atol=1e-8)
    if f not in FORWARD:
        return
    value, tangent = jvp(f)(X.copy(), T)
    assert value == pytest.approx(f(X.copy()), rel=1e-12)
    np.testing.assert_allclose(tangent, want @ T, rtol=1e-6, atol=1e-8)


def test_every_works_row_is_checked():
    unchecked = [row[:90] for row in _works_rows()
                 if not any(p in row for p, _ in WORKS) and not any(p in row for p in ELSEWHERE)]
    assert not unchecked, f"works rows no check names: {unchecked}"
