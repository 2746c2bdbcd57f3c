"""Realness: which values decide whether a function's output is complex.

``grad`` needs a real output. Where the reverse transform proves the output is one number (a full
reduction), it seeds it with 1.0 without computing it (the output is then often dead code); this
analysis says what the seed must check instead. It follows the output's value back through the
body, flow-insensitively (every assignment of a name counts, loops included), and stops at what
makes real values whatever it is given (``np.abs``, ``np.real``, ``np.imag``, ``np.angle``,
norms, comparisons, ``float``, shapes, a real ``dtype=``). NumPy, SciPy and srcgrad's own
functions and Python's operators make a complex value exactly when one of their operands is
complex, so the output is complex exactly when one of the *leaves* it reaches is: a parameter or
a name from outside the function (a global, a closure variable).

Requires: the normalized body, its parameters and its namespace. Guarantees: ``output_leaves``
returns the leaves to check at run time (``[]``: the output is always real), or OPAQUE when the
output may be complex for a reason no leaf shows — a complex constant, a name from
``reverse.COMPLEX_SOURCES`` (``np.fft``, ``np.emath``, ``eig``), a complex or dynamic dtype, a
function srcgrad does not know to follow that rule (a user's function with a custom rule), or a
parameter the body rebinds (its value at the seed is not the argument's).

    def f(x, y):  return np.sum(x * y)            ->  ["x", "y"]
    def f(z):     return np.sum(np.abs(z) ** 2)   ->  []
    def f(x):     return np.sum(np.fft.fft(x))    ->  OPAQUE

A power ``b ** e`` (``pow``, ``operator.pow``) whose exponent is not a whole number is complex for
a negative *Python* number ``b`` even where ``b`` and ``e`` are real (``(-2.0) ** 0.5``; NumPy
gives ``nan``): its own value is the leaf to check where it is assigned once at the top of the
body (``t = b ** e``), else the output is OPAQUE.
"""

from __future__ import annotations

import builtins
import math
import operator
import types

import gast
import numpy as np

from ..astutil import ordered_walk
from ..frontend.resolve import MISSING
from ..rules import random_draws
from ..rules.registry import lookup

OPAQUE = "opaque"

# names and attributes of what makes complex values from real ones (np.fft.*, np.emath.*,
# np.linalg.eig, complex dtypes, a matrix square root or logarithm of a real matrix, an analytic
# signal, a frequency response)
COMPLEX_SOURCES = frozenset({"fft", "emath", "scimath", "complex", "complex64", "complex128",
                             "csingle", "cdouble", "clongdouble", "complexfloating", "eig",
                             "eigvals", "roots", "sort_complex", "sqrtm", "logm", "funm",
                             "schur", "rsf2csf", "hilbert", "hilbert2", "freqz", "freqs",
                             "sosfreqz", "czt", "zoom_fft", "stft", "polyroots", "vectorize",
                             "frompyfunc"})
COMPLEX_CODES = ("F", "D", "G", "c8", "c16")

# functions whose result is real (or an integer, a bool, a shape) for any argument
REAL_RESULTS = frozenset({
    np.abs, np.absolute, np.real, np.imag, np.angle, np.linalg.norm, np.linalg.cond,
    np.linalg.matrix_rank, np.linalg.eigvalsh, np.isnan, np.isinf, np.isfinite, np.isreal,
    np.iscomplex, np.isrealobj, np.iscomplexobj, np.isclose, np.allclose, np.array_equal,
    np.argmax, np.argmin, np.argsort, np.argwhere, np.nonzero, np.flatnonzero,
    np.count_nonzero, np.shape, np.size, np.ndim, np.equal, np.not_equal, np.less,
    np.less_equal, np.greater, np.greater_equal, np.logical_and, np.logical_or, np.logical_not,
    np.logical_xor, np.signbit, np.fabs, np.hypot, np.arctan2, np.floor, np.ceil, np.trunc,
    np.rint, np.heaviside, np.logaddexp, np.logaddexp2, np.searchsorted, np.digitize,
    len, float, int, bool, abs, isinstance, range,
}) | frozenset(getattr(np.linalg, n) for n in ("vector_norm", "matrix_norm", "svdvals")
               if hasattr(np.linalg, n))
# attributes whose value is real for any array
REAL_ATTRIBUTES = frozenset({"real", "imag", "shape", "size", "ndim", "dtype", "itemsize",
                             "nbytes", "strides"})
# methods of a receiver srcgrad cannot see that make a complex value exactly when the receiver
# or an argument is complex (random draws, a dict's or list's reads)
FOLLOWING_METHODS = random_draws.METHODS | {"get", "items", "keys", "values", "copy", "index",
                                            "count"}
# modules whose functions make a complex value exactly when an operand is complex
FOLLOWING = ("numpy", "scipy", "srcgrad", "builtins", "operator", "_operator", "functools",
             "itertools")


def may_be_complex(body):
    """Whether the function may compute complex values from real ones: a complex constant, a
    name or attribute in ``COMPLEX_SOURCES``, or a dtype string naming a complex type."""
    return any(_complex_source(node) for node in _walk(body))


def _walk(body):
    for stmt in body:
        yield from ordered_walk(stmt)


def _complex_source(node):
    if isinstance(node, gast.Constant):
        value = node.value
        return isinstance(value, complex) or (
            isinstance(value, str) and ("complex" in value or value in COMPLEX_CODES)
        )
    if isinstance(node, gast.Attribute):
        return node.attr in COMPLEX_SOURCES
    return isinstance(node, gast.Name) and node.id in COMPLEX_SOURCES


def output_leaves(body, out, params, namespace, local_names):
    """The names whose values decide whether ``out`` (a name) is complex, or OPAQUE."""
    return Realness(body, params, namespace, local_names).leaves(out)


class Realness:
    """The backward walk of ``output_leaves`` (see the module docstring)."""

    def __init__(self, body, params, namespace, local_names):
        self.params = set(params)
        self.namespace = namespace
        self.local_names = local_names
        self.defs = {}  # name -> the expressions assigned to it anywhere
        self.rebound = set()  # names stored into (an element, an attribute, a rebinding)
        # names assigned by a statement of the body itself (not inside a loop or a branch)
        self.top_level = {t.id for stmt in body if isinstance(stmt, gast.Assign)
                          for t in stmt.targets if isinstance(t, gast.Name)}
        for node in _walk(body):
            if isinstance(node, gast.Assign):
                for target in node.targets:
                    self._define(target, node.value)
            elif isinstance(node, (gast.AugAssign, gast.AnnAssign)) and node.value is not None:
                self._define(node.target, node.value)
                if isinstance(node, gast.AugAssign) and isinstance(node.op, gast.Pow):
                    self._define(node.target, gast.BinOp(node.target, gast.Pow(), node.value))
                self._define(node.target, node.target)
            elif isinstance(node, (gast.For, gast.AsyncFor)):
                self._define(node.target, node.iter)
            elif isinstance(node, gast.withitem) and node.optional_vars is not None:
                self._define(node.optional_vars, node.context_expr)

    def _define(self, target, value):
        for node in ordered_walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
                self.defs.setdefault(node.id, []).append(value)
                self.rebound.add(node.id)
        if isinstance(target, (gast.Subscript, gast.Attribute)):
            base = target
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name):
                self.defs.setdefault(base.id, []).append(value)
                self.rebound.add(base.id)

    def leaves(self, out):
        seen, leaves, work = set(), [], [out]
        while work:
            n = work.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in self.params:
                if n in self.rebound:
                    return OPAQUE
                leaves.append(n)
                continue
            if n not in self.defs:
                if self._outside_value(n):
                    leaves.append(n)
                continue
            for value in self.defs[n]:
                if self._root(value):  # `t = b ** 0.5`: t itself is checked
                    if n not in self.top_level or len(self.defs[n]) > 1:
                        return OPAQUE
                    leaves.append(n)
                    continue
                names = self.reaches(value)
                if names is OPAQUE:
                    return OPAQUE
                work.extend(names)
        return sorted(leaves)

    def _outside_value(self, n):
        """Whether a name not bound in the body holds a value to check (not a module, a
        function or a type)."""
        value = self.namespace.resolve(gast.Name(n, gast.Load(), None, None), self.local_names)
        if value is MISSING:
            return n not in self.local_names and not hasattr(builtins, n)
        return not isinstance(value, (types.ModuleType, type, types.FunctionType,
                                      types.BuiltinFunctionType, np.ufunc, np.dtype))

    def reaches(self, node):
        """The names whose complexity ``node``'s value follows, or OPAQUE."""
        if node is None or isinstance(node, (gast.Compare, gast.JoinedStr)):
            return []
        if _complex_source(node) or self._root(node):
            return OPAQUE
        if isinstance(node, gast.Constant):
            return []
        if isinstance(node, gast.Name):
            return [node.id]
        if isinstance(node, gast.Attribute):
            if node.attr in REAL_ATTRIBUTES:
                return []
            return self._resolved(node, lambda: self.reaches(node.value))
        if isinstance(node, gast.Subscript):
            return self.reaches(node.value)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return []
        if isinstance(node, gast.IfExp):
            return self._all([node.body, node.orelse])
        if isinstance(node, gast.Call):
            return self._call(node)
        if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Tuple, gast.List,
                             gast.Set, gast.Dict, gast.Starred, gast.Slice)):
            return self._all(gast.iter_child_nodes(node))
        return OPAQUE

    def _root(self, node):
        """Whether ``node`` is a power that may be complex for real operands (module
        docstring): ``b ** e``, ``pow(b, e)`` or ``operator.pow(b, e)`` with an exponent that is
        not a whole-number constant and a base that is not a nonnegative constant."""
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow):
            return _may_root(node.left, node.right)
        if isinstance(node, gast.Call) and len(node.args) >= 2 and not node.keywords:
            fn = self.namespace.resolve(node.func, self.local_names)
            return any(fn is p for p in _POWERS) and _may_root(node.args[0], node.args[1])
        return False

    def _resolved(self, node, otherwise):
        value = self.namespace.resolve(node, self.local_names)
        if value is MISSING:
            return otherwise()
        return OPAQUE if _is_complex_value(value) else []

    def _all(self, nodes):
        names = []
        for child in nodes:
            if isinstance(child, (gast.expr_context, gast.operator, gast.unaryop, gast.boolop)):
                continue
            found = self.reaches(child)
            if found is OPAQUE:
                return OPAQUE
            names.extend(found)
        return names

    def _call(self, node):
        if any(_complex_source(n) for n in ordered_walk(node.func)):
            return OPAQUE
        fn = self.namespace.resolve(node.func, self.local_names)
        if fn is MISSING:
            if isinstance(node.func, gast.Attribute) and node.func.attr in FOLLOWING_METHODS:
                # a draw from a generator srcgrad cannot see, a dict's get or items
                return self._all([node.func.value, *node.args, *(k.value for k in
                                                                 node.keywords)])
            return OPAQUE
        dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
        if dtype is not None:
            value = dtype.value if isinstance(dtype, gast.Constant) else (
                self.namespace.resolve(dtype, self.local_names))
            if value is None:
                dtype = None
            elif value is MISSING or _is_complex_value(value, True):
                return OPAQUE
        if _is_real_result(fn):
            return []
        if not _follows(fn):
            return OPAQUE
        found = self._all(list(node.args) + [k.value for k in node.keywords])
        return [] if dtype is not None and found is not OPAQUE else found


_POWERS = (pow, operator.pow, operator.ipow)


def _may_root(base, exponent):
    """Whether ``base ** exponent`` may be complex though both are real: unless the exponent is a
    whole-number constant or the base a nonnegative constant."""
    def number(node):
        value = node.value if isinstance(node, gast.Constant) else None
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    e, b = number(exponent), number(base)
    return not (e is not None and float(e).is_integer() or b is not None and b >= 0)


def _is_real_result(fn):
    try:
        return fn in REAL_RESULTS or (getattr(fn, "__module__", None) == "math"
                                      and fn is not math.prod)
    except TypeError:  # unhashable
        return False


def _follows(fn):
    """Whether ``fn`` makes a complex value exactly when an operand is complex."""
    if fn is np.real_if_close:  # real or complex depending on the values
        return False
    if isinstance(fn, np.ufunc):
        return not _makes_complex(fn)
    if fn in (math.prod, operator.getitem):
        return True
    if getattr(fn, "__name__", None) in COMPLEX_SOURCES:
        return False
    module = (getattr(fn, "__module__", None) or "").split(".")
    if any(part in COMPLEX_SOURCES for part in module):
        return False
    if module[0] == "scipy":  # SciPy's functions srcgrad has rules for (reviewed)
        return lookup(fn, load=False) is not None
    return module[0] in FOLLOWING


def _makes_complex(ufunc):
    """Whether a ufunc makes a complex result from real operands: it has a loop that does, or
    no loop from real operands to a real result (scipy.special's Hankel functions cast real
    operands to complex)."""
    real_loop = False
    for types_ in ufunc.types:
        given, made = types_.split("->")
        if all(c not in "FDG" for c in given):
            if any(c in "FDG" for c in made):
                return True
            real_loop = True
    return not real_loop


def _is_complex_value(value, as_dtype=False):
    """Whether a value known at transform time is complex (or, ``as_dtype``, names a complex
    dtype; an unknown dtype counts as complex)."""
    if as_dtype:
        try:
            return np.dtype(value).kind == "c"
        except TypeError:
            return True
    return isinstance(value, (complex, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c"
    )



class Widening:
    """Where a complex contribution may reach the real adjoint buffer of a variable, so the
    sweep adds into it with ``dv = dv + g`` rather than in place (``dv += g`` cannot store a
    complex array into a real one). The reverse transform asks ``widens(var, stmt)`` for each
    contribution it accumulates when the function itself makes no complex value
    (``may_be_complex``): only complex arguments (unknown when the code is generated) bring
    complex values in then.

    A contribution of the statement ``t = op(a, b)`` is computed from ``t``, its operands and
    the cotangent of ``t``, which is complex when a value computed from ``t`` on the way to the
    output is (``np.abs(t) * z`` sends a complex cotangent to the real ``np.abs(t)``). Their
    *leaves* (parameters and outside names; an expression this analysis cannot follow counts as
    a leaf of its own) may be complex unless they are *real*: followed by a real output, which
    the seed checks (``output_leaves``), or known real from their kind (a specialized
    derivative). The buffer of ``var`` is complex when ``var`` is, so a complex contribution
    needs no widening where each leaf that may make it complex is one ``var`` follows too
    (NumPy promotes). A buffer this misses fails loudly (NumPy's casting error), never silently.

        r = np.abs(z); w = r * z     ->  dr = dr + g   (r is real whatever z is)
        w = x * y; y2 = np.sin(x)    ->  dx += g       (a real output: x and y are real)
    """

    def __init__(self, walk, body, out, real_output, known_real):
        self.walk = walk
        self.cache = {}
        self.real = set(known_real)
        if real_output and out is not None:
            self.real |= self.leaves(out)
        self.cotangent = self._cotangent_leaves(body)

    def leaves(self, n):
        """The leaves whose complexity the value of the name ``n`` follows (``n + "()"``
        stands for a value of ``n`` this analysis cannot follow)."""
        if n in self.cache:
            return self.cache[n]
        walk, seen, leaves, work = self.walk, set(), set(), [n]
        while work:
            m = work.pop()
            if m in seen:
                continue
            seen.add(m)
            if m in walk.params:
                leaves.add(m)
            if m not in walk.defs:
                if m not in walk.params and walk._outside_value(m):
                    leaves.add(m)
                continue
            for value in walk.defs[m]:
                names = walk.reaches(value)
                if names is OPAQUE:
                    leaves.add(m + "()")
                else:
                    work.extend(names)
        self.cache[n] = frozenset(leaves)
        return self.cache[n]

    def _statement_leaves(self, targets, reads):
        found = set()
        for n in targets | reads:
            found |= self.leaves(n)
        return found

    def _cotangent_leaves(self, body):
        """name -> the leaves of the values computed from it (its cotangent is complex when one
        of them is), to a fixed point over the body's assignments."""
        flows = []  # (names read, names stored, the leaves of the statement)
        for node in _walk(body):
            if isinstance(node, (gast.Assign, gast.AugAssign, gast.For)):
                targets, reads = _names(node)
                flows.append((reads, targets, self._statement_leaves(targets, reads)))
        cotangent = {}
        changed = True
        while changed:
            changed = False
            for reads, targets, leaves in flows:
                found = set(leaves)
                for t in targets:
                    found |= cotangent.get(t, frozenset())
                for n in reads:
                    if not found <= cotangent.get(n, frozenset()):
                        cotangent[n] = cotangent.get(n, frozenset()) | found
                        changed = True
        return cotangent

    def widens(self, var, targets, reads):
        """Whether a contribution to the adjoint of ``var`` of a statement storing ``targets``
        and reading ``reads`` (names) may be complex while that adjoint is real."""
        complex_leaves = self._statement_leaves(set(targets), set(reads))
        for t in targets:
            complex_leaves |= self.cotangent.get(t, frozenset())
        complex_leaves -= self.real
        return bool(complex_leaves) and not complex_leaves <= self.leaves(var)


def _names(node):
    """The base names a statement stores and the names it reads."""
    stored = node.target if not isinstance(node, gast.Assign) else gast.Tuple(node.targets, None)
    targets, reads = set(), set()
    for sub in ordered_walk(stored):
        if isinstance(sub, gast.Name):
            (targets if isinstance(sub.ctx, (gast.Store, gast.Del)) else reads).add(sub.id)
        elif isinstance(sub, (gast.Subscript, gast.Attribute)) and isinstance(sub.ctx, gast.Store):
            base = sub
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name):
                targets.add(base.id)
                reads.add(base.id)
    value = node.iter if isinstance(node, gast.For) else node.value
    reads |= value_names(value)
    if isinstance(node, gast.AugAssign):
        reads |= targets
    return targets, reads


def value_names(expr):
    """The names ``expr`` reads for its value: not those only in an index (``i`` of ``x[i]``),
    which place a value and cannot make it complex (NumPy refuses a complex index)."""
    found, work = set(), [expr]
    while work:
        n = work.pop()
        if isinstance(n, gast.Name):
            found.add(n.id)
        elif isinstance(n, gast.Subscript):
            work.append(n.value)
        else:
            work.extend(gast.iter_child_nodes(n))
    return found


def widening(body, params, namespace, local_names, out, real_output, known_real):
    """The ``Widening`` of a normalized function body whose output is the name ``out`` (or
    None), ``real_output`` when the seed checks that it is real."""
    walk = Realness(body, params, namespace, local_names)
    return Widening(walk, body, out, real_output, known_real)
