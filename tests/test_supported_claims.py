"""Every "error" claim of docs/supported.md, checked (issue 13 item 10: the docs tell the truth).

Each row of the page's two tables that says a construct is an error is named here by a phrase of
its text, with one function per construct the row lists; the test asserts the kind of error the
row promises: at transform time (``grad(f)`` itself raises a located ``SrcgradError``), or when
the derivative runs (``grad(f)`` succeeds, the call raises). ``test_every_error_row_is_checked``
fails when a row says "error" (or "at transform time") and no check here names it. The refusals
of the page's own ``refused_`` / ``fixed_`` pairs are checked by tests/test_docs.py; rows covered
only by those pairs name them here by ``DOC_PAIRS``.
"""

import copy
import dataclasses
import re
import statistics
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.linalg.blas
import scipy.ndimage
import scipy.stats
import shadowing_module
from test_second_order_generated import grown_then_added

from srcgrad import SrcgradError, grad, hessian, hvp, jacobian, jvp, register_pytree, vjp

PAGE = Path(__file__).resolve().parent.parent / "docs" / "supported.md"
X = np.array([0.5, -1.0, 2.0])


# --- the constructs -------------------------------------------------------------------------

def read_after_del(x):
    y = x * 2.0
    del y
    return np.sum(y)  # noqa: F821


def apply(f, x):
    return np.sum(f(x))


def draw_given_gradient(mu):
    rng = np.random.default_rng(0)
    return np.sum(rng.normal(mu, 1.0))


def permutation_of_gradient(x):
    rng = np.random.default_rng(0)
    return np.sum(rng.permutation(x) * np.arange(3.0))


def shuffle_of_gradient(x):
    rng = np.random.default_rng(0)
    y = x * 1.0
    rng.shuffle(y)
    return np.sum(y * np.arange(3.0))


GLOBAL_HISTORY = [1.0, 2.0]


def reverses_a_global_read_before(x):
    a = x[0] * GLOBAL_HISTORY[0]
    GLOBAL_HISTORY.reverse()
    return a + x[0] * GLOBAL_HISTORY[0]


def _apply_all(fs, v):
    s = 0.0
    for f in fs:
        s = s + f(v)
    return s


def function_as_a_value(x):
    c = x[0]
    sq = lambda v: c * v * v  # noqa: E731  (reads `c`: no module-level function)
    fs = [np.sin, sq]
    fs.append(np.cos)  # (passed to the helper so, it works: tests/test_function_lists.py)
    gs = fs + [np.tanh]
    return np.sum(_apply_all(gs, x))


class Box:
    def __init__(self, w):
        self.w = w

    def scaled(self, v):
        return self.w * v

    @property
    def doubled(self):
        return self.w * 2.0


@dataclasses.dataclass(frozen=True)
class FrozenScaled:
    w: object
    s: float = 2.0

    def __post_init__(self):
        object.__setattr__(self, "w", self.w * self.s)


def frozen_post_init(x):
    return np.sum(FrozenScaled(x).w)


def _other(x):
    return Other(x)


def item_read_before_written(x):
    layers = [None, None]
    layers[0] = Box(x)
    return np.sum(layers[1].scaled(layers[0].scaled(x)))


def property_of_an_unknown_class(x, box):
    box.w = x
    return np.sum(box.doubled)


def view_of_an_updated_field(x):
    s = SimpleNamespace(h=x * 1.0)
    v = s.h[1:]
    s.h += 1.0
    return np.sum(v * x[1:])


def field_write_read_through_another_name(x):
    s = SimpleNamespace(h=x * 1.0)
    t = s
    s.h = x * 3.0
    return np.sum(t.h * x)


def rebound_and_held(x):
    g = np.sin
    if x[0] > 0:
        g = np.cos
    fs = [g]
    return np.sum(fs[0](x))


def row_of_a_matrix_written(x):
    A = np.outer(x, x)
    A[1][2] = 0.0
    return np.sum(A)


def nested_field_update(x):
    s = SimpleNamespace(inner=SimpleNamespace(h=[x[0] * 2.0]))
    s.inner.h += [x[1]]
    return s.inner.h[0] * s.inner.h[1]


GLOBAL_BOX = Box(np.ones(3))


class Writer:
    def __init__(self, w):
        self.w = w

    def store(self, v):
        self.w = v
        return 0.0


GLOBAL_WRITER = Writer(np.ones(3))


def method_writing_a_global_object(x):
    GLOBAL_WRITER.store(x * 2.0)
    return np.sum(GLOBAL_WRITER.w * x)


class Other:
    def __init__(self, w):
        self.w = w

    def scaled(self, v):
        return self.w * v * 2.0


def annotated(x, box: Box):
    return np.sum(box.scaled(x))


def field_named_shape(x, p):
    return np.sum(x * p.shape)


def structure_jacobian(x, pair):
    return x * pair[0]


def set_of_gradient(x):
    s = {x[0], x[1]}
    return sum(s)


def sort_with_key(x):
    xs = [x[0], x[1], x[2]]
    xs.sort(key=abs)
    return xs[0] * 2.0


def pop_with_default(x):
    d = {"a": x[0]}
    return d.pop("b", x[1]) * 2.0


def pop_inside_an_expression(x):
    xs = [x[0], x[1], x[2]]
    return xs.pop(1) * xs[1]


def written_then_read_through_a_list(x):
    a = x * 1.0
    L = [a]
    a[0] = 5.0
    return np.sum(L[0] * x)


def appended_through_another_name(x):
    L = [x[0]]
    M = L
    M.append(x[1])
    return L[0] * L[1]


def update_with_holder_on_some_paths(x):
    a = x * 1.0
    if x[0] > 0:
        b = a
    a += 1.0
    if x[0] > 0:
        return np.sum(a * b)
    return np.sum(a)


def return_inside_with(x):
    with np.errstate(all="ignore"):
        return np.sum(np.log(x * x))


def holds_vars(x):
    s = SimpleNamespace(w=x)
    d = vars(s)
    return np.sum(d["w"])


class _Holder:
    def __init__(self, w):
        self.w = w

    def scale(self, x):
        return self.w * x

    def stored(self, fs):
        fs.append(self.scale)

    def listed(self, x):
        fs = []
        self.stored(fs)
        return fs


class _Hooks:
    def __init__(self, w):
        self.a = _Holder(w)
        self.hooks = {"a": self.a.scale, "own": self.tail}

    def tail(self, x):
        return x * self.a.w


class _Hiding:
    def __init__(self, w):
        self.w = w
        self.s = np.sin  # hides the method: Python calls np.sin

    def s(self, x):
        return self.w * x


def method_hidden_by_a_field(x):
    return np.sum(_Hiding(x[0]).s(x))


def dict_of_bound_methods_changed(x):
    blk = _Holder(x[0])
    d = {"a": blk.scale}
    blk.w = x[1]
    return np.sum(d["a"](x))


_B = np.array([1.0, 2.0, 3.0])


def argument_list_holding_one_array_twice(x, L):
    L[0] += x
    return np.sum(L[1] * x)


def updated_beside_another_argument(x, y):
    y += x
    return np.sum(x * y)


def deep_copied_twice_held(x):
    a = x * 2.0
    return np.sum(copy.deepcopy([a, a])[1])


def own_method_of_a_copy(x):
    return np.sum(copy.copy(_Hooks(2.0)).hooks["own"](x))


def hooks_of_an_object_built_here_changed(x):
    hk = _Hooks(x[0])
    hk.a.w = x[1]
    return np.sum(hk.hooks["a"](x))


@dataclasses.dataclass
class _Checked:
    w: np.ndarray

    def __post_init__(self):
        assert self.w.ndim == 1


def replace_with_post_init(x, p):
    return np.sum(dataclasses.replace(p, w=x * 2.0).w)


def return_inside_try_except(x):
    try:
        return np.sum(np.log(x))
    except FloatingPointError:
        return 0.0


def changes_then_may_raise(x):
    s = x * 1.0
    try:
        s = s * 2.0
        y = np.linalg.inv(np.outer(x, x))
    except np.linalg.LinAlgError:
        y = x
    return np.sum(y) + np.sum(s)


def _first_then_check(out, v):
    out[0] = v
    if v > 10.0:
        raise ValueError("big")
    return v


def writes_then_may_raise(x):
    y = x * 1.0
    try:
        r = _first_then_check(y, x[1])
    except ValueError:
        r = 0.0
    return np.sum(y) + r


def break_inside_try_finally(x):
    s = 0.0
    for k in range(3):
        try:
            s = s + x[k]
            if s > 10.0:
                break
        finally:
            pass
    return s


def class_in_body(x):
    class Local:
        pass
    return np.sum(x)


def generator_function(x):
    yield np.sum(x)


async def coroutine(x):
    return np.sum(x)


TOTAL = 0.0


def global_write(x):
    global TOTAL
    TOTAL = np.sum(x)
    return TOTAL


def nonlocal_write(x):
    s = 0.0

    def add(v):
        nonlocal s
        s = s + v
        return s
    return add(np.sum(x))


def del_element_of_element(x):
    xs = [[x[0], x[1]], [x[2]]]
    del xs[0][0]
    return xs[0][0] * 2.0


def del_attribute(x):
    s = SimpleNamespace(a=x[0], b=x[1])
    del s.a
    return s.b * 2.0


def max_with_default(x):
    return max([x[0], x[1]], default=0.0)


def cube_with_default(x, a=2.0):
    return a * x**3


def inner_vjp_with_defaults(x):
    return vjp(cube_with_default)(x, x * x) * x


def out_with_where(x):
    y = np.zeros(3)
    np.exp(x, out=y, where=x > 0)
    return np.sum(y)


def stepped(x):
    for _ in range(4):
        x = x + 0.1 * np.sin(x)
    return np.sum(x)


def no_source_no_rule(x):
    return np.sum(np.i0(x))


def frozen_distribution(x):
    return np.sum(scipy.stats.norm(0, 1).logpdf(x))


class Doubler:
    def __init__(self, arr):
        self.arr = arr

    def __enter__(self):
        self.arr *= 2.0
        return self.arr

    def __exit__(self, *exc):
        return False


def manager_given_a_variable(x):
    y = x * 1.0
    with Doubler(y):
        s = np.sum(y * x)
    return s


def blas_given_a_read_array(x):
    y = np.array([1.0, 2.0, 3.0])
    w = x * y
    z = scipy.linalg.blas.daxpy(np.array([4.0, 5.0, 7.0]), y, a=1.0)
    return np.sum(w * z)


def ndimage_output(x):
    y = np.zeros(3)
    z = scipy.ndimage.uniform_filter1d(np.array([4.0, 5.0, 7.0]), 3, output=y)  # noqa: F841
    return np.sum(x * y)


def taken_again_in_a_loop(x):
    L = [x * k for k in range(1, 4)]
    s = 0.0
    for _ in range(2):
        a = L[1]
        a[0] = a[0] * 2.0
        s = s + np.sum(a * x)
    return s


def items_written_then_list_read(x):
    L = [np.sin(x * k) for k in range(1, 3)]
    for y in L:
        y[1] = y[0] * 2.0
    return np.sum(L[0] * x)


def appended_read_after_the_write(x):
    a = x * 2.0
    L = []
    L.append(a)
    v = L[0]
    v[0] = 1.0
    return np.sum(a * x)


def checkpointed_write_under_a_view(x):
    y = x * 1.0
    z = y[0:2]
    for i in range(3):
        y[i] = y[i] * x[i]
    return np.sum(z * x[0:2])


def checkpointed_concatenation(x):
    L = []
    for _ in range(3):
        L = L + [x * 2.0]
    return np.sum(np.array(L))


def checkpointed_list_sort(x):
    L = [x[0] * 1.0, x[1] * 2.0]
    for _ in range(3):
        x = np.sin(x)
        L.sort()
    return np.sum(np.array(L)) + np.sum(x)


def checkpointed_call_of_a_def_in_a_branch(x):
    if x[0] > -5.0:
        def g(t):
            return np.sin(t)
    y = x * 1.0
    for _ in range(3):
        y = g(y) * x
    return np.sum(y)


@dataclasses.dataclass
class _Carried:
    a: np.ndarray


def checkpointed_field_write(x):
    p = _Carried(x * 1.0)
    for _ in range(3):
        p.a = np.sin(p.a) * x
    return np.sum(p.a)


def items_written_through_enumerate(x):
    L = [np.sin(x * k) for k in range(1, 3)]
    s = 0.0
    for i, y in enumerate(L):
        y[1] = y[0] * 2.0
        s = s + np.sum(y * x) * i
    return s


def generator_used_twice(x):
    g = (v * v for v in x)
    return sum(g) + sum(g)


_OUTSIDE = np.array([1.0, 2.0, 3.0])


def outside_array_updated(x):
    a = _OUTSIDE
    a += x
    return np.sum(_OUTSIDE * x)


class _Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def own_manager_beside_a_global(x):
    with _Quiet():
        s = np.sum(_OUTSIDE * x)
    return s


def stdlib_with_try(x):
    return statistics.mean([x[0], x[1], x[2]])


def merges_an_argument(p, q):
    d = p | q
    return d["a"] * d["b"]


# --- the claims -----------------------------------------------------------------------------

# (phrase of the page's row, function, wrt, arguments, when, message pattern)
def bump_first(y, v):
    y[0] = y[0] + v
    return v


def changing_comprehension(x):
    y = x * 1.0
    return np.sum(y * y) + sum(bump_first(y, v) for v in x)


TRANSFORM, RUN = "transform", "run"
class Fields:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        yield self.a
        yield self.b


def loop_over_an_object(x):
    s = 0.0
    for v in Fields(x, x * 2.0):
        s = s + np.sum(v**2)
    return s


def loop_over_an_argument_object(x, p):
    s = 0.0
    for v in p:
        s = s + np.sum(v * x)
    return s


def widened_in_place(x):
    y = x * 1.0
    y += np.outer(x, x)
    return np.sum(y)


class _SetBoxed:
    def __init__(self, a):
        self.a, self.a2 = a, np.array(sorted(set(a)))  # (a set of values with gradient)


register_pytree(_SetBoxed, lambda o: ((o.a,), None), lambda aux, children: _SetBoxed(*children))


def derived_read(b, x):
    return np.sum(b.a2 * x)  # (of a class whose __init__ srcgrad differentiates: works)


def setdefault_held_by_another_name(x):
    d = {}
    for i in range(3):
        lst = d.setdefault(i % 2, [])
        d[i % 2] = [x[0]]
        lst.append(x[i])
    return sum(d[0]) * d[1][0]


def _make_scaled(c):
    return lambda t: c * t


def _applied(f, v):
    return f(v)


def keeps_a_closure_of_an_earlier_trip(x):
    for k in range(3):
        g = _make_scaled(x * (k + 1.0))
        if k == 0:
            d = {"f": g}
    return np.sum(_applied(d["f"], x)) * len(d)


def checks_a_parameter_after_a_run_time_branch(x, g=None):
    if x[0] > 0:
        g = np.cos
    if g is None:
        g = np.sin
    fs = [g]
    if x[1] > 0:
        g = np.tanh
    return np.sum(g(x)) * len(fs)


def _calls_act(c, v):
    return np.sum(c.act(v))


def calls_a_function_field_it_writes(x, cfg, flag=True):
    if flag:
        cfg.act = np.sin
    return _calls_act(cfg, x)


def unpacked_into_too_few(x):
    a, b = x
    return a * b


def writes_into_a_shallow_copy(x, L):
    M = L.copy()
    M[0] *= 0.9
    return np.sum(L[0] * x)


def writes_into_a_copy_at_a_computed_key(x, P):
    C = P[len(P) - 1].copy()
    C[0] *= 0.9
    return np.sum(P[1][0] * x)


def grows_the_list_it_loops_over(x):
    todo = [x]
    s = 0.0
    for v in todo:
        s = s + np.sum(v * v)
        if len(todo) < 3:
            todo.append(np.sin(v))
    return s


def zips_a_generator_it_changes(x):
    c = 1.0
    out = 0.0
    for w, e in zip(map(lambda v: np.sin(v * c), [x, 2 * x]), [1.0, 2.0]):
        out = out + np.sum(w) * e
        c = c + 1.0
    return out


def _two_or_three(a, b, c=2.0):
    return np.sum(a * b) * np.mean(c)


def spreads_too_many(x):
    xs = [x]
    for k in range(len(x)):
        xs.append(x * k)
    return _two_or_three(*xs)


def _set_first(fs):
    fs[0] = np.tanh


def calls_what_a_helper_changed(x):
    fs = [np.sin, np.cos]
    _set_first(fs)
    return np.sum(fs[0](x))


def _same(vs):
    return vs


def reads_what_a_helper_returned_after_an_append(x):
    vs = [x, x * 2.0]
    ws = _same(vs)
    vs.append(x * 3.0)
    return np.sum(ws[-1] * x)


CLAIMS = [
    ("a list grown so in a `while` loop or a loop whose trip count is known only when it runs",
     spreads_too_many, 0, (X,), RUN, "takes from 2 to 3 positional arguments"),
    ("a list or dict of functions that a helper it is passed to changes in place",
     calls_what_a_helper_changed, 0, (X,), TRANSFORM, "cannot resolve `fs_item`"),
    ("a list, dict or array a helper returns as given (`ws = ident(vs)`)",
     reads_what_a_helper_returned_after_an_append, 0, (X,), TRANSFORM,
     "`ws` refers to the array in `vs`"),
    ("a loop over `zip(...)`, `enumerate(...)` or `iter(...)` of a generator expression",
     zips_a_generator_it_changes, 0, (X,), TRANSFORM, "make a list of it first"),
    ("a `for` loop (or comprehension) over a list that its body makes longer or shorter",
     grows_the_list_it_loops_over, 0, (X,), RUN, "makes longer or shorter"),
    ("as a part of a larger expression (`np.sum(y * y) + sum(bump", changing_comprehension,
     0, (X,), TRANSFORM, "calling `bump_first`, which changes a value in place"),
    ("binds the name of a builtin srcgrad writes into the code of a helper",
     shadowing_module.unpacks_in_a_helper, 0, (X,), TRANSFORM, "builtin's name `list`"),
    ("then a write in place into its items", writes_into_a_shallow_copy, 0, (X, [X * 1.5]), RUN,
     "the copy of `L` made here is shallow"),
    ("taken at a key a call computes", writes_into_a_copy_at_a_computed_key, 0,
     (X, [X, [X * 1.5]]), TRANSFORM, "Bind the key to a name first"),
    ("a parameter called as a function that the function tests after assigning it",
     checks_a_parameter_after_a_run_time_branch, 0, (X,), RUN,
     "instead of holding it in a list, tuple, dict or field"),
    ("a function made again on each trip of a loop that holds values of its own",
     keeps_a_closure_of_an_earlier_trip, 0, (X,), TRANSFORM, "a later trip makes it anew"),
    ("a function held in a field that the function (or a helper it calls) writes in a branch",
     calls_a_function_field_it_writes, 0, (X, SimpleNamespace(act=np.tanh)), TRANSFORM,
     "writes fields `act` in a branch or a loop"),
    ("the list or dict `d.setdefault(k, [])` returns held by another name",
     setdefault_held_by_another_name, 0, (X,), TRANSFORM, "writing into `lst`"),
    ("where its `unflatten` (or the `__init__` it calls) srcgrad cannot differentiate",
     derived_read, 0, (_SetBoxed(np.array([0.4, 0.2, 0.1])), X), RUN,
     "could not differentiate that here"),
    ("a `v` that would widen it (`y += np.outer(x, x)` of a vector) raises NumPy's error when it "
     "runs", widened_in_place, 0, (X,), RUN, "non-broadcastable output operand"),
    ("`a, b = v` of a sequence of another length raises Python's error when it runs",
     unpacked_into_too_few, 0, (X,), RUN, r"too many values to unpack \(expected 2\)"),
    ("`\\|` / `&` / `^` given a value that carries gradient", merges_an_argument, 0,
     ({"a": 1.5}, {"b": 2.0}), TRANSFORM, r"`\|` given `p`"),
    ("`vars(obj)` held (`d = vars(obj)`)", holds_vars, 0, (X,), TRANSFORM, "vars"),
    ("a bound method used as a value other than by calling it", _Holder(2.0).listed, 0, (X,),
     TRANSFORM, "the list `fs` of bound methods"),
    ("an item read before it is written fails its class check when it runs",
     item_read_before_written, 0, (X,), RUN, "now a NoneType"),
    ("calling a method of your class on an object that holds an instance field of the same "
     "name", method_hidden_by_a_field, 0, (X,), RUN, "holds a field `s`, which hides it"),
    ("where the method is one of that object itself", own_method_of_a_copy, 0, (X,), TRANSFORM,
     "reached through a copy of it"),
    ("a change of that object after the dict is made", hooks_of_an_object_built_here_changed, 0,
     (X,), TRANSFORM, "is written into or replaced"),
    ("a list, tuple or dict argument that holds one array, list or dict in two places",
     argument_list_holding_one_array_twice, 0, (X[:3], [_B, _B]), RUN,
     "the argument `L` holds one ndarray in two places"),
    ("arguments that share an array, list or dict with each other",
     updated_beside_another_argument, 0, (X, X), RUN, "the arguments `y` and `x` share one "
     "ndarray"),
    ("`copy.deepcopy` of a value whose copy holds one array, list or dict in two places",
     deep_copied_twice_held, 0, (X,), RUN, "holds one ndarray in two places"),
    ("a write into that object or a new binding of that name between the dict and the call",
     dict_of_bound_methods_changed, 0, (X,), TRANSFORM, "is written into or bound again"),
    ("where the object's class is not known at transform time (a plain parameter) that is an "
     "error when it runs", replace_with_post_init, 0, (X, _Checked(X)), RUN, "__post_init__"),
    ("a read after it (a `NameError`) is a transform-time error", read_after_del, 0, (X,),
     TRANSFORM, "y"),
    ("`wrt` on such a parameter is an error", apply, 0, (np.sin, X), TRANSFORM,
     "calls as a function"),
    ("A draw given a value that carries gradient", draw_given_gradient, 0, (X,), TRANSFORM,
     r"rng\.normal"),
    ("A draw given a value that carries gradient", permutation_of_gradient, 0, (X,), TRANSFORM,
     "permutation"),
    ("`rng.shuffle(x)` are errors at transform time", shuffle_of_gradient, 0, (X,), TRANSFORM,
     "shuffle"),
    ("a call that may change an array, list or dict from outside the function",
     reverses_a_global_read_before, 0, (X,), TRANSFORM, "is read before the change"),
    ("a lambda or nested def that reads a variable of the function", function_as_a_value, 0,
     (X,), TRANSFORM, "used as a value"),
    ("building one that is frozen or has `InitVar` fields is an error at transform time",
     frozen_post_init, 0, (X,), TRANSFORM, "__post_init__"),
    # the object rows of the "Refused" table
    ("building a dataclass with a `__post_init__` that is frozen", frozen_post_init, 0, (X,),
     TRANSFORM, "__post_init__"),
    ("`dataclasses.replace` of a dataclass with a `__post_init__`, on an object whose class",
     replace_with_post_init, 0, (X, _Checked(X)), RUN, "__post_init__"),
    ("reading a property of an object whose class srcgrad does not know",
     property_of_an_unknown_class, 0, (X, Box(np.ones(3))), RUN, "doubled"),
    ("`obj.attr = v` while another name holding the same object is read afterwards",
     field_write_read_through_another_name, 0, (X,), TRANSFORM, "refers to the array"),
    ("`a.b.c += v` where `a.b.c` holds a list or an integer array", nested_field_update, 0, (X,),
     RUN, r"`s\.inner\.h` holds a list"),
    ("a method that writes `self.x`, called on a global object", method_writing_a_global_object,
     0, (X,), TRANSFORM, "writes `.w`"),
    ("a float or array field named `shape`, `size`", field_named_shape, 1,
     (X, SimpleNamespace(shape=np.ones(3))), RUN, "field `shape`"),
    ("`jacobian(f, wrt=...)` or `hessian` with respect to an argument that is a tuple",
     structure_jacobian, 1, (X, (X, X)), RUN, "tuple"),
    ("a run-time check that the object still has the class the derivative inlined", annotated,
     0, (X, Other(np.ones(3))), RUN, "inlined the methods of Box"),
    ("a property of an object whose class is not known at transform time",
     property_of_an_unknown_class, 0, (X, Box(np.ones(3))), RUN, "doubled"),
    ("on an array field, every other holder of the array", view_of_an_updated_field, 0, (X,),
     RUN, "`v` shares memory with it"),
    ("`obj.attr = v` where another name, list or dict holding the object is read afterwards",
     field_write_read_through_another_name, 0, (X,), TRANSFORM, "refers to the array"),
    ("whose helper updates an argument in place", grown_then_added, 0, (X,), "second order",
     "by identity"),
    ("`a.b.c += v` where `a.b.c` holds neither a float array nor a number", nested_field_update,
     0, (X,), RUN, r"`s\.inner\.h` holds a list"),
    ("a method writing `self.x` of a global object;",
     method_writing_a_global_object, 0, (X,), TRANSFORM, "writes `.w`"),
    ("a float or array field named like an array attribute", field_named_shape, 1,
     (X, SimpleNamespace(shape=np.ones(3))), RUN, "field `shape`"),
    ("`jacobian` / `hessian` with respect to a structure", structure_jacobian, 1,
     (X, (X, X)), RUN, "tuple"),
    ("a set of values with gradient is an error", set_of_gradient, 0, (X,), TRANSFORM, "set"),
    ("a set of values that carry gradient", set_of_gradient, 0, (X,), TRANSFORM, "set"),
    ("`sort(key=...)`, `d.pop(k, default)`", sort_with_key, 0, (X,), TRANSFORM, "sort"),
    ("`sort(key=...)`, `d.pop(k, default)`", pop_with_default, 0, (X,), TRANSFORM, "pop"),
    ("`xs.pop(i)` inside an expression that also reads `xs`", pop_inside_an_expression, 0, (X,),
     TRANSFORM, "pop"),
    ("or a list or dict that holds it (`L = [a]`", written_then_read_through_a_list, 0, (X,),
     TRANSFORM, "L"),
    ("appending to a list through another name for it", appended_through_another_name, 0, (X,),
     TRANSFORM, "writing into `M`"),
    ("`x += v` where a variable that may hold `x`'s array is assigned only on some paths",
     update_with_holder_on_some_paths, 0, (X,), TRANSFORM, "may not be assigned yet"),
    ("a `return`, `break` or `continue` inside is an error", return_inside_with, 0, (X,),
     TRANSFORM, "return"),
    ("`return` / `break` / `continue` inside `with`, `try` ... `finally` or `try` ... `except`",
     break_inside_try_finally, 0, (X,), TRANSFORM, "break"),
    ("`return` / `break` / `continue` inside `with`, `try` ... `finally` or `try` ... `except`",
     return_inside_try_except, 0, (X,), TRANSFORM, "return"),
    ("a `try` block that changes a variable read after it", changes_then_may_raise, 0, (X,),
     TRANSFORM, "changes `s` before a statement that may raise"),
    ("a `try` block that writes into an array, list or object it did not make",
     writes_then_may_raise, 0, (X,), TRANSFORM, "writes into `y`"),
    ("`class`, `yield`, `async`, `global` / `nonlocal` writes", class_in_body, 0, (X,),
     TRANSFORM, "class"),
    ("`class`, `yield`, `async`, `global` / `nonlocal` writes", generator_function, 0, (X,),
     TRANSFORM, "yield"),
    ("`class`, `yield`, `async`, `global` / `nonlocal` writes", coroutine, 0, (X,), TRANSFORM,
     "async"),
    ("`class`, `yield`, `async`, `global` / `nonlocal` writes", global_write, 0, (X,), TRANSFORM,
     "global"),
    ("`class`, `yield`, `async`, `global` / `nonlocal` writes", nonlocal_write, 0, (X,),
     TRANSFORM, "nonlocal"),
    ("`del x[i][j]`, `del x.a`", del_element_of_element, 0, (X,), TRANSFORM,
     "element of an element"),
    ("`del x[i][j]`, `del x.a`", del_attribute, 0, (X,), TRANSFORM, "of an attribute"),
    ("One also used otherwise as a value (`fs = [g]`, returned) is resolved as before",
     rebound_and_held, 0, (X,), TRANSFORM, "cannot resolve"),
    ("A row of a 2-D array (`A[i][j] = v`, `A[i]` a view of `A`) is an error when it runs",
     row_of_a_matrix_written, 0, (X,), RUN, r"views another one.*A\[i, j\] = v"),
    ("`a += v` where `a` holds an array or list from outside the function",
     outside_array_updated, 0, (X,), TRANSFORM, "from outside the function"),
    ("`max` / `min` with `key=` or `default=`", max_with_default, 0, (X,), TRANSFORM,
     "default"),
    ("calling `vjp(g)` of a `g` with default values on a seed that carries gradient",
     inner_vjp_with_defaults, 0, (0.7,), TRANSFORM, r"\*rest"),
    ("so is a manager given a variable of the function", manager_given_a_variable, 0, (X,),
     TRANSFORM, "manager given `y`"),
    ("a manager of your own in a function that reads an array, list or dict from outside it",
     own_manager_beside_a_global, 0, (X,), TRANSFORM, "manager of your own"),
    ("taking the same element again (`a = L[1]` in a loop of its own)",
     taken_again_in_a_loop, 0, (X,), TRANSFORM, "writing into `a`"),
    ("reading the list again after such writes (`L[0]` after `for y in L: y[0] = v`)",
     items_written_then_list_read, 0, (X,), TRANSFORM, "writing into `y`"),
    ("`checkpoint=` of a loop that writes into an array, list or dict in place",
     checkpointed_write_under_a_view, 0, (X,), "checkpoint", "cannot checkpoint this loop"),
    ("`checkpoint=` of a loop that concatenates a list or tuple it carries with `+`",
     checkpointed_concatenation, 0, (X,), "checkpoint", "concatenates `L`"),
    ("`checkpoint=` of a loop that sorts in place a list bound before it",
     checkpointed_list_sort, 0, (X,), "checkpoint", "sorts the list `L`"),
    ("`checkpoint=` of a loop that calls a function or lambda the function defines in a branch",
     checkpointed_call_of_a_def_in_a_branch, 0, (X,), "checkpoint", "it calls `g`"),
    ("`checkpoint=` of a loop that writes a field of an object it carries",
     checkpointed_field_write, 0, (X,), "checkpoint", "writes a field of `p`"),
    ("reading the array appended after the write into its element",
     appended_read_after_the_write, 0, (X,), TRANSFORM, "writing into `v`"),
    ("and writing the items in a loop over `enumerate(L)` are errors at transform time",
     items_written_through_enumerate, 0, (X,), TRANSFORM, "writing into `y`"),
    ("given an array or list that is read elsewhere in the function", blas_given_a_read_array,
     0, (X,), TRANSFORM, "read elsewhere"),
    ("SciPy's `output=` into an array", ndimage_output, 0, (X,), TRANSFORM, "`output=` into"),
    ("an iterator bound to a name", generator_used_twice, 0, (X,), TRANSFORM,
     "first use consumes"),
    ("over an object of your class (its `__iter__`", loop_over_an_object, 0, (X,), TRANSFORM,
     "does not iterate an object of your class `Fields`"),
    ("over an object of your class (its `__iter__`", loop_over_an_argument_object, 1,
     (X, Fields(X, X)), RUN, "does not differentiate through iterating a `Fields`"),
    ("`out=` together with `where=`", out_with_where, 0, (X,), TRANSFORM, "where"),
    ("a function with neither source nor rule", no_source_no_rule, 0, (X,), TRANSFORM,
     "i0"),
    ("a frozen SciPy distribution", frozen_distribution, 0, (X,), TRANSFORM, "logpdf"),
    ("a derivative with `backend=\"numba\"` of a gradient taken with `checkpoint=`", stepped, 0,
     (X,), "numba", "cannot compile a loop checkpointed by `checkpoint=` in a derivative of a"),
    ("one that uses `try` / `except` (`statistics.mean`, ...) is an error",
     stdlib_with_try, 0, (X,), TRANSFORM, "except"),
]

# rows whose error is checked by the page's own refused_/fixed_ pairs (tests/test_docs.py)
DOC_PAIRS = {
    "writes into a view or alias of another array": "refused_view_write, refused_alias_read",
    "`x += v` where an array that is a view of `x`": "refused_view_augment",
    "`+` / `*` on lists or tuples": "refused_list_concatenation",
    "a write into a view: `v = x[1:]; v[0] = 1.0`": "refused_view_write",
    "reading an alias after writing into it": "refused_alias_read",
    "`x += v` where a view of `x`": "refused_view_augment",
    "`try` ... `except` | at transform time": "refused_try",
    "a lambda or nested def that reads a variable of the function": "refused_function_value",
    "`f(*xs)` / `f(**kw)` where the length": "refused_star_call",
    "a loop over functions whose functions are known only when it runs":
        "refused_loop_over_functions",
    "`:=` whose name the statement reads before it (": "refused_walrus_sometimes",
    "`set(...)` of values that carry gradient; `dict(m)`": "refused_dict_of_pairs",
    "a standard-library helper that uses `try`": "refused_stdlib_try",
    "a recursive function that changes an argument in place": "refused_recursive_write",
    "`max(...)` / `min(...)` with `key=`": "refused_max_key",
    "`np.random.shuffle(y)` on a value that carries gradient": "refused_shuffle",
    "`class`, `try` ... `except`, `yield`, `async`": "refused_try, refused_star_call, "
                                                      "refused_walrus_sometimes, refused_max_key",
}
# rows that mention an error only as the outcome they avoid, checked as works elsewhere
WORKS_ROWS = {
    "`x += v` (and `L[i] += v`, `d[k] += v` of an array item) on an array that other names":
        "tests/test_sharing.py, tests/test_hunt_reproducers.py (holders found by identity when "
        "it runs)",
}


def _rows():
    """The page's table rows (lines starting with ``|``) past the header."""
    return [line for line in PAGE.read_text().splitlines()
            if line.startswith("| ") and not line.startswith("| construct")
            and not line.startswith("| refused")]


def _checked(row):
    return any(phrase in row for phrase, *_ in CLAIMS) or any(
        p in row for p in (*DOC_PAIRS, *WORKS_ROWS))


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c[1].__name__)
def test_the_claimed_error(claim):
    phrase, f, wrt, args, when, pattern = claim
    assert any(phrase in row for row in _rows()), f"the page no longer says: {phrase}"
    if when == TRANSFORM:
        with pytest.raises(SrcgradError, match=pattern):
            grad(f, wrt=wrt)
        return
    if when == "checkpoint":
        with pytest.raises(SrcgradError, match=pattern):
            grad(f, wrt=wrt, checkpoint=2)
        return
    if when == "numba":  # refused at the checkpointed loop's line; "auto" runs it in Python
        inner = grad(f, wrt=wrt, checkpoint=2)
        with pytest.raises(SrcgradError, match=pattern) as error:
            jvp(inner, wrt=wrt, backend="numba")
        assert error.value.filename == __file__  # the loop the checkpointed call replaced
        assert error.value.line.strip() == "for _ in range(4):"
        v = np.linspace(0.5, 1.5, np.size(args[wrt]))
        np.testing.assert_allclose(jvp(inner, wrt=wrt, backend="auto")(*args, v)[1],
                                   hvp(f, wrt=wrt)(*args, v), rtol=1e-14)
        return
    if when == "second order":
        grad(f, wrt=wrt)(*args)
        with pytest.raises(SrcgradError, match=pattern):
            hessian(f, wrt=wrt)(*args)
        return
    if f is structure_jacobian:
        for transform in (jacobian, hessian):
            with pytest.raises(SrcgradError, match=pattern):
                transform(f, wrt=wrt)(*args)
        return
    derivative = grad(f, wrt=wrt)
    with pytest.raises(Exception, match=pattern):
        derivative(*args)


def test_every_error_row_is_checked():
    unchecked = [row[:100] for row in _rows()
                 if re.search(r"\berror\b|at transform time|when it runs", row)
                 and not _checked(row)]
    assert not unchecked, unchecked


def test_the_doc_pairs_named_exist():
    text = PAGE.read_text()
    for names in DOC_PAIRS.values():
        for name in re.findall(r"refused_\w+", names):
            assert f"def {name}(" in text, name

