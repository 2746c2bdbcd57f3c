"""Every name srcgrad generates comes from here.

Temporaries are named after the expression they hold (``X @ W`` -> ``X_matmul_W``,
``np.tanh(a)`` -> ``tanh_a``), adjoints after their primal (``z`` -> ``dz``), and every name is
unique within the generated function: a clash gets a numeric suffix (``dz_2``). The passes ask
for a fresh name from one of the stems below (``namer.fresh(LOOP_SAVED)``,
``namer.fresh(SAVED.format(var))``), so a reader finds every name generated code can hold here.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable

import gast

MAX_LEN = 24
# transform mode -> name of the derived function
DERIVED = {
    "grad": "d{}",
    "value_and_grad": "{}_value_and_grad",
    "vjp": "{}_vjp",
    "jvp": "{}_jvp",
    "tangent": "{}_tangent",
    "split": "{}_split",
    "pullback": "{}_pullback",
    "linearize": "{}_linearize",
    "jacobian": "jacobian_{}",
    "hessian": "hessian_{}",
    "holomorphic_grad": "holomorphic_grad_{}",
}

# --- stems of the names passes introduce --------------------------------------------------------
# parameters of derived functions
SEED = "seed"  # the cotangent a vjp takes
TANGENT = "tangent"  # the tangent a jvp takes
REST = "rest"  # `*rest`: optional parameters passed before the seed or tangent
# locals of the Jacobian and Hessian wrappers
WRAPPER_LOCALS = ("value", "parts", "i", "back", "linear", "back_many")
# normalization (control flow, ANF)
COND = "cond"  # a condition evaluated once
PACKED = "packed"  # a tuple built once to be unpacked
DICT_KEY = "key"  # the key of `dict(zip(ks, vs))` written as a comprehension (normalize/sugar.py)
DICT_VALUE = "value"  # its value
SELECT = "select"  # the value of `a if c else b`
BOTH, EITHER = "both", "either"  # the value of `a and b`, `a or b`
TOTAL, ITEMS = "total", "items"  # a comprehension summed, or built as a list
MAPPING = "mapping"  # a dict comprehension, built key by key
MANAGER = "manager"  # the context manager of a `with` block
ELEMENT = "element"  # an item `map(f, xs)` or `sorted(xs, key=f)` applies `f` to
SEQ = "seq"  # the sequence a `for` loop runs over
INDEX = "i"  # the index of a `for` loop over a sequence
COUNT = "count"  # the count of `enumerate` over a generator expression, kept by hand
RESULT, RETURNED = "result", "returned"  # the value and flag of an early return
DISCARD = "_"  # a value computed for its effect only
BROKE = "broke"  # whether a loop with an `else` left by `break` (normalize/sugar.py)
# whether a copy of an unrolled loop over functions was left (`break`, `continue`), and whether
# by `break` (normalize/early_exits.py)
LOOP_LEFT, LOOP_STOPPED = "left", "stopped"
JOINED = "_".join  # the value a nested target `(a, b)` unpacks, named after its parts: `a_b`
# the reverse sweep
TRIPS = "trips"  # a loop's iteration count
LOOP_SAVED = "loop_saved"  # the stack a loop pushes its values on
STEP_LISTS = ("{}_dys", "{}_xs", "{}_parts")  # what a loop's steps add to gradient x (steps.py)
JOINS = "joins"  # the arrays the sums after a loop joined, shared between them (steps.py)
STEP = "{}_step"  # a checkpointed loop's body as a function of one step (checkpoint.py)
PROBE = "{}_probe"  # a checkpointed loop that can leave early, run once to count its trips
KEPT = "kept"  # the snapshots a checkpointed loop kept when it ran
SKIP = "skip"  # a checkpointed loop's trip went past a `continue` (checkpoint.py)
SEEDED = "seed_{}"  # the seed of state element k in a checkpointed step's seeded sum
SEEDED_SUM = "np_sum"  # np.sum there (checkpoint_fast.py)
CHECKPOINT_HELPERS = ("checkpointed_loop", "snapshots_for")
BACK = "back"  # the reusable adjoint sweep a pullback returns
UNDO = "undo"  # the undo log of a ``back`` whose sweep writes into the primal in place
BACK_MANY = "back_many"  # its batched twin, one sweep for many seeds (batched.py)
MANY = "many_{}"  # the helpers of a batched sweep (runtime/batched.py)
SEEDS = "seeds"  # the number of seeds of a batched sweep
MANY_AGAIN = "many_again"  # its pullback regenerated when a function it inlined is redefined
LINEARIZED = "value"  # linearize's value, from its jvp along zeros (a recursive helper's pair)
JVP_FN = "jvp_fn"  # the reusable tangent map linearize returns
KEPT = "{}_kept"  # a copy of argument ``x`` linearize's ``jvp_fn`` reruns the jvp on
ARGUMENT = "{}_arg"  # argument ``x`` as passed, where the body rebinds ``x`` (its gradient's form)
# names derived from a variable's name ``x``
SAVED = "{}_saved"  # the stack of the values ``x`` held
LISTED = "{}_list"  # float64 vector argument ``x`` as a list of floats, its elements read in loops
PROJECTED = "{}_matmul_{}"  # `X @ W` made once before a loop reading its rows (projections.py)
NUMBER = "f64_{}"  # a number operand of float64 array arithmetic as an array (scalars.py)
SPREAD_ROWS = "{}_rows"  # argument ``x`` spread to the shapes of a loop's arithmetic (spread.py)
SAVES_TOP = "{}_top"  # the number of entries in the typed arrays of saves ``x`` (typed_saves.py)
SAVES_CAP = "{}_cap"  # their length: the trip count of the loop that fills them
SAVES_COLUMN = "{}_{}"  # the typed array of position ``i`` of the tuples saved in ``x``
REPLACED = "{}_replaced"  # ``dataclasses.replace(p, a=v, b=w)`` after its first field
DELTA = "{}_delta"  # zeros (ones) but at ``i``: ``p.x[i] += v`` as ``p.x += delta``
OLD = "{}_old"  # the value ``x`` held before it is rebound (a swap, a loop's save)
BEFORE_POP = "{}_before"  # the list ``L`` held before ``L = popped(L)`` (normalize/functional.py)
NEW = "{}_new"  # the value of ``x`` after a write, kept before the sweep undoes it
VALUE = "{}_value"  # the output ``x``, kept before the sweep restores ``x``
AUX = "{}_aux"  # the auxiliary output ``x`` (``has_aux``), kept before the sweep restores ``x``
PAIR = "{}_pair"  # the returned ``(output, aux)`` pair, checked (``has_aux``)
OUT = "{}_out"  # the output of that pair
INLINED = "inlined_{}"  # the function a staleness guard expects the name ``x`` to denote
DERIVATIVE = "derivative"  # where a staleness guard finds its own function
GLOBALS_OF = "globals_of_{}"  # the globals of module ``x``, read by a staleness guard
CELL_OF = "cell_of_{}"  # the closure cell of ``x`` in an inlined helper, read by a guard
LAST = "{}_last"  # the last element of list ``x`` (``x.pop()``)
LOOP_INDEX = "{}_index"  # the index of a loop over ``x`` whose body rebinds ``x``
SHAPE = "{}_shape"  # a view holding only the shape of ``x`` (or its shape saved: tested.py)
LAMBDA = "lambda"  # a lambda given to a helper or put into a display: `lambda_2`
MADE = "{}_made"  # which factory made function ``x`` in a loop, and its arguments (lambda_lists)
FUNCTIONS = "functions"  # a tuple of local functions passed to a helper (normalize/inline.py)
DEFAULT = "{}_default"  # the default value of parameter ``x``, as ``def`` computed it
# callables resolved at transform time (normalize/callables.py)
BOUND = "{}_bound"  # argument ``x`` of a ``functools.partial`` made in the body, as it was made
PARTIAL_ARG = "partial_arg"  # a positional argument a ``functools.partial`` object binds
# a registered argument rebuilt as its unflatten builds it (rebuilding.py): the children and
# aux data its flatten gives, and the two functions
PARTS, FLATTEN, UNFLATTEN, CHILD = "{}_parts", "flatten", "unflatten", "child"
REPLACE = "replace"  # dataclasses.replace, rebuilding a frozen dataclass's fields
COPY = "copy_of"  # copy.copy of an object whose field holds one
CALLED = "called"  # the callable a transform input that is not a plain function stands for
SELF = "{}_self"  # the object a bound method or a callable object of class ``x`` is called on
RECEIVER_FIELD = "{}_{}"  # field ``y`` of ``x`` on the way to the object a held method is bound to
IS_HELD = "is_held"  # whether a held bound method is the one a branch calls
# NumPy's in-place functions written as element writes (normalize/inplace_calls.py) and writes
# into integer arrays (normalize/integer_writes.py)
UNUSED = "unused"  # the result of a call made for its effect only
SPLIT = "{}_call"  # a recursive call started in reverse-mode code (normalize/recursion.py)
STEP_TOKEN = "step"  # the token of a step taken in a split derivative of order 3 and more
STEP_PAIR = "pair"  # what a step of a chain with a forward layer gives or is sent: a pair
SPLIT_YIELD = "split_yield"  # marks `seed = yield value` while forward mode differentiates it
SENT = "{}_sent"  # what a split derivative's jvp is sent: the cotangent and its tangent
# `try` ... `except` (normalize/handlers.py, emit/handlers.py)
TRY_OK = "try_ok"  # whether the try block ran to its end (the branch the handler is the else of)
TRY_WHICH = "try_which"  # which handler ran
TRY_CAUGHT = "caught"  # the handler that caught the error (-1: none), set by the emitted `try`
TRY_ERROR = "error"  # the error an `except E as e` handler caught
TRY_SAVED = "try_saved"  # the values of the names a try block assigns, before it
TRY_SIZES = "try_sizes"  # the lists a try block appends to, with their lengths before it
# the markers of a `try` until it is emitted: names every namespace resolves to srcgrad's own
# helpers (frontend/resolve.py), so that ``sugar`` can write them before names are bound
TRY_MARKERS = {"srcgrad_try_begin": "try_begin", "srcgrad_try_which": "try_which",
               "srcgrad_try_error": "try_error"}
METHOD = "{}"  # the function a method, property or `__call__` is (its qualified name)
SOURCES = "sources"  # which element of the values each written position receives
SCATTERED = "scattered"  # the values of ``np.add.at`` added into zeros at their indices
PUT_INDEX, PLACE_INDEX, PUTMASK_INDEX = "put_index", "place_index", "putmask_index"
DIAGONAL_INDEX, ALONG_INDEX = "diagonal_index", "along_index"  # fill_diagonal, put_along_axis
TAKEN = "{}_taken"  # the elements of ``x`` the written positions receive
ITEM = "{}_item"  # the elements of ``x`` a ``ufunc.at`` reads
SPREAD = "{}_spread"  # ``x`` broadcast to the elements it updates
AT = "{}_at"  # ``x`` after a ``ufunc.at``
DRAW_BUFFER = "{}_buffer"  # a new array a draw given ``out=x`` fills, then copied into ``x``
DRAWN = "{}_drawn"  # the numbers a draw given ``out=x`` writes into ``x``
CAST = "{}_cast"  # ``x`` cast to the dtype of the integer or boolean array it is written into
ARRAY_ONLY = "{}_array"  # argument ``x``, checked to be an array before ``x.sort()`` sorts it
WRITE_DTYPE = "{}_dtype"  # the dtype of array ``x``, known only at run time, a value is written in
AUGMENTED = "{}_op"  # ``x op v`` of ``x op= v``, before it is cast to the dtype of the array x
WRITTEN = "{}_written"  # ``x`` about to be written into an array of a run-time dtype
# list and dict methods written as values (normalize/containers.py), arrays shared by two names
# (normalize/sharing.py)
POSITION = "{}_position"  # where ``x.remove(v)`` finds ``v``
ORDER = "{}_order"  # the permutation ``x.sort()`` applies
POP_INDEX = "{}_index"  # the index ``x.pop(i)`` removes at, evaluated once
POPPED = "{}_popped"  # the element ``x.pop(i)`` removed
SHARED_IN = "{}_in_{}"  # the positions of array ``x`` inside the array ``r`` that shares it
WHICH = "{}_which"  # the number of the binding a name rebound to callables holds
HELD_ITEM = "{}_{}"  # item k of a literal of callables ``fs``, read where ``fs`` is made
IS_CLASS = "is_{}"  # whether an item of a list of objects of several classes has that one
WHICH_IS = "which_is_{}"  # whether that number is ``k`` (a branch of the call on it)
IS_NONE = "{}_is_none"  # whether a parameter tested for None holds None (``chosen_tests``)
# Names a temporary never takes: generated code may call any builtin (`min`, `sum`, `len`).
RESERVED = frozenset(dir(builtins))

OP_NAMES = {
    gast.Add: "plus",
    gast.Sub: "minus",
    gast.Mult: "times",
    gast.Div: "div",
    gast.FloorDiv: "floordiv",
    gast.Mod: "mod",
    gast.Pow: "pow",
    gast.MatMult: "matmul",
    gast.USub: "neg",
    gast.UAdd: "pos",
    gast.Not: "not",
    gast.Invert: "invert",
    gast.Eq: "eq",
    gast.NotEq: "ne",
    gast.Lt: "lt",
    gast.LtE: "le",
    gast.Gt: "gt",
    gast.GtE: "ge",
    gast.Is: "is",
    gast.IsNot: "isnot",
    gast.In: "in",
    gast.NotIn: "notin",
    gast.And: "and",
    gast.Or: "or",
}


_PLAIN = re.compile(r"[A-Za-z0-9_]*\Z")


class Namer:
    """Hands out unique names; knows every name already taken in the function."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def reserve(self, name):
        self.taken.add(name)

    def fresh(self, base: str) -> str:
        base = base if base == "_" else _clean(base)
        if base not in self.taken and not keyword.iskeyword(base) and base not in RESERVED:
            self.taken.add(base)
            return base
        i = 2 if not base[-1].isdigit() else 1
        while True:
            name = f"{base}_{i}"
            if name not in self.taken and name not in RESERVED:
                self.taken.add(name)
                return name
            i += 1

    def temp(self, expr):
        """A fresh name describing ``expr``."""
        return self.fresh(describe(expr))

    def adjoint(self, name):
        return self.fresh("d" + name)

    def derived(self, name, mode):
        """A fresh name for the ``mode`` derivative of function ``name`` (``f`` -> ``df``)."""
        return self.fresh(DERIVED[mode].format(name))

    def version(self, name):
        """A fresh name for a new value of variable ``name`` (its next SSA version)."""
        return self.fresh(name)


def _clean(base):
    if not _PLAIN.match(base):  # (a name of ASCII letters, digits and _ keeps each one)
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base)
    base = base.strip("_") or "t"
    if base[0].isdigit():
        base = "v" + base
    return base


def describe(expr):
    """A short readable identifier for an expression; falls back to the operation's name."""
    full = _full(expr)
    if len(full) <= MAX_LEN:
        return full
    return _operation(expr)


def _part(expr):
    if isinstance(expr, gast.Name):
        return expr.id
    if isinstance(expr, gast.Constant):
        v = expr.value
        if isinstance(v, bool) or v is None:
            return str(v)
        if isinstance(v, int) and 0 <= v < 1000:
            return str(v)
        return "c"
    return _operation(expr)


def _full(expr):
    """``expr`` described with its operands: ``X_matmul_W``, ``tanh_a``, ``x_item``."""
    op = _operation(expr)
    if isinstance(expr, gast.BinOp):
        return f"{_part(expr.left)}_{op}_{_part(expr.right)}"
    if isinstance(expr, gast.Compare):
        return f"{_part(expr.left)}_{op}_{_part(expr.comparators[0])}"
    if isinstance(expr, gast.UnaryOp):
        return f"{op}_{_part(expr.operand)}"
    if isinstance(expr, gast.Call) and expr.args:
        return "_".join([op] + [_part(a) for a in expr.args])
    if isinstance(expr, (gast.Attribute, gast.Subscript)):
        return f"{_part(expr.value)}_{op}"
    return op


# what an expression of these kinds is called, whatever its operands
_KIND_NAMES = {
    gast.Subscript: "item", gast.Tuple: "tup", gast.List: "lst", gast.Constant: "c",
    gast.JoinedStr: "text",
}


def _operation(expr):
    """The name of ``expr``'s operation alone: ``matmul``, ``tanh``, ``item``."""
    if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
        return OP_NAMES.get(type(expr.op), "op")
    if isinstance(expr, gast.Compare):
        return OP_NAMES.get(type(expr.ops[0]), "cmp")
    if isinstance(expr, gast.BoolOp):
        return OP_NAMES.get(type(expr.op), "cond")
    if isinstance(expr, gast.Call):
        return _func_name(expr.func)
    if isinstance(expr, gast.Attribute):
        return expr.attr
    if isinstance(expr, gast.Name):
        return expr.id
    if isinstance(expr, gast.IfExp):
        return SELECT
    return _KIND_NAMES.get(type(expr), "t")


def _func_name(func):
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return func.attr
    return "call"
