"""Operators whose operands are dicts or objects of the user's classes become the calls they are.

The operator rules are arithmetic on numbers and arrays. ``d1 | d2`` of dicts is a merge that
passes the values on (its rule has no gradient: the values' gradients were dropped), and an
operator of an object of a class of the user's runs the class's method (``V.__add__`` returning
``V(a.a + 2 * b.a)`` got the gradient of ``a.a + b.a``).

Requires: a function accepted by ``CheckSupported``, before ``containers`` (which makes the
``update`` written here a value). Guarantees: ``a | b`` where an operand is known to be a dict
is ``dict_update(a, b)`` (a new dict: b's entries over a's), ``d |= b`` is ``d.update(b)`` (in
place, as Python does it); ``a + b`` (``- * / // % ** @``, unary ``-``, ``a[i]``, ``a += b``)
where an operand is known to be an object of a class of the user's that defines the method is
the method (``a.__add__(b)``, ``b.__radd__(a)``, ``a.__getitem__(i)``, ``a = a.__iadd__(b)``),
inlined like any method; where the class defines none, or the other operand's class is known
only when it runs, it is refused (where that operand is a local, the refusal is left to the
inliner, which may know its class: ``q = self.p``, see ``methods.Receivers``). Known: a display
or comprehension, a call of ``dict`` or of the class, a global object, an object a call passes
(``ctx.examples``), an operator of known objects or a method call whose method returns
``Class(...)`` or ``type(self)(...)`` (``-(v - w)``, ``v.scaled(2.0) + w``), or a name every
binding of which is one of these. Iterating a known object (a loop, unpacking, ``list(v)``,
``*v``) is refused: srcgrad would read it as a sequence.

    e = d | {"b": v}       ->   e = dict_update(d, {"b": v})
    d |= {"b": v}          ->   d.update({"b": v})
    w = v + V(x)           ->   w = v.__add__(V(x))            (v a V)
    s = v[1]               ->   s = v.__getitem__(1)

Where srcgrad cannot see the object or dict at all, the gradient refuses it: any other ``|``
(``&``, ``^``) given a value that carries gradient is refused by the activity analysis, and
``unbroadcast`` (``DictCotangents``) refuses an object's cotangent in arithmetic when the
gradient runs.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import gast
import numpy as np

from .. import runtime
from ..analysis.dataflow import greatest_kinds
from ..astutil import NodeTransformer, ordered_walk
from ..errors import UnsupportedSyntaxError

DICT = "dict"
# The method Python calls for each operator of an object.
DUNDERS = {gast.Add: "add", gast.Sub: "sub", gast.Mult: "mul", gast.Div: "truediv",
           gast.FloorDiv: "floordiv", gast.Mod: "mod", gast.Pow: "pow", gast.MatMult: "matmul",
           gast.BitOr: "or"}

NO_METHOD = (
    "srcgrad does not support this operator of an object of your class here: the class "
    "defines no method for it, or the other operand is an object whose class srcgrad cannot "
    "tell at transform time (an argument); call the method Python would call "
    "(`v.__add__(w)`), which srcgrad inlines")


def run(fn_node, ctx):
    """The pass: operators of dicts and objects become calls."""
    return Operators(ctx).run(fn_node)


class Operators(NodeTransformer):
    def __init__(self, ctx):
        self.ctx = ctx
        self.namespace = ctx.namespace
        self.locals = ctx.local_names
        self.kinds = {}
        self.given = {}  # parameter -> the class of the object a call passes (ctx.examples)

    def run(self, fn_node):
        bindings = _bindings(fn_node)
        self.given = {p: type(v) for p, v in self.ctx.examples.items()
                      if bindings.get(p) == [None] and _user_class(type(v))}
        self.kinds = _admitted(bindings, self._kind, greatest_kinds(bindings, self._kind, DICT))
        fn_node.body = [self.visit(s) for s in fn_node.body]
        return fn_node

    # --- what an operand is -------------------------------------------------------------------
    def _kind(self, node, names):
        """DICT, or a class of the user's, when ``node`` surely evaluates to a dict or an object
        of that class (``names``: the kinds of the names known so far), else None."""
        if isinstance(node, (gast.Dict, gast.DictComp)):
            return DICT
        if isinstance(node, gast.Name):
            if node.id in self.locals:
                return names.get(node.id, self.given.get(node.id))
            value = self._resolved(node)  # a global or closure object of a class of the user's
            return type(value) if _user_class(type(value)) else None
        if isinstance(node, gast.BinOp):
            left, right = self._kind(node.left, names), self._kind(node.right, names)
            if isinstance(node.op, gast.BitOr) and DICT in (left, right):
                return DICT
            return _returned_class(*binary_method(node.op, left, right))
        if isinstance(node, gast.UnaryOp):
            return _returned_class(*unary_method(node.op, self._kind(node.operand, names)))
        if isinstance(node, gast.Call):
            fn = self._resolved(node.func)
            if fn is dict:
                return DICT
            if _user_class(fn):
                return fn
            if isinstance(node.func, gast.Attribute):  # `v.scaled(2.0)` returning `V(...)`
                return _returned_class(*_method_of(self._kind(node.func.value, names),
                                                   node.func.attr))
        return None

    def _resolved(self, func):
        if isinstance(func, gast.Name) and func.id in self.locals:
            return None
        try:
            return self.namespace.resolve(func, self.locals)
        except Exception:  # noqa: BLE001 - a name that resolves to nothing is not a class
            return None

    # --- rewriting ----------------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        return node  # a nested def is its own scope (inlined and normalized where called)

    visit_Lambda = visit_FunctionDef

    def visit_BinOp(self, node):
        left, right = self._kind(node.left, self.kinds), self._kind(node.right, self.kinds)
        self.generic_visit(node)
        if isinstance(node.op, gast.BitOr) and DICT in (left, right):  # b's entries over a's
            return _located(self._call("dict_update", node.left, node.right), node)
        if not (_user_class(left) or _user_class(right)):
            return node
        owner, method = binary_method(node.op, left, right)
        if method is None and any(self._later(n, k) for n, k in ((node.left, left),
                                                                   (node.right, right))):
            node.refused_operator = True  # (the inliner knows more classes, or refuses it)
            return node
        if method is None:
            raise self._no_method(node)
        this, that = (node.left, node.right) if owner is left else (node.right, node.left)
        return _located(method_call(this, method, that), node)

    def visit_UnaryOp(self, node):
        cls = self._kind(node.operand, self.kinds)
        self.generic_visit(node)
        if not _user_class(cls):
            return node
        _, method = unary_method(node.op, cls)
        if method is None:
            return node  # `not v`: a truth value, no gradient
        return _located(method_call(node.operand, method), node)

    def visit_Subscript(self, node):
        cls = self._kind(node.value, self.kinds)
        self.generic_visit(node)
        sliced = any(isinstance(n, gast.Slice) for n in ordered_walk(node.slice))
        if (isinstance(node.ctx, gast.Load) and _user_class(cls) and not sliced
                and defines(cls, "__getitem__")):
            return _located(method_call(node.value, "__getitem__", node.slice), node)
        return node

    def visit_For(self, node):
        self._not_iterated(node.iter)
        return self.generic_visit(node)

    def visit_comprehension(self, node):
        self._not_iterated(node.iter)
        return self.generic_visit(node)

    def visit_Assign(self, node):
        if any(isinstance(t, (gast.Tuple, gast.List)) for t in node.targets):
            self._not_iterated(node.value)
        return self.generic_visit(node)

    def visit_Call(self, node):
        fn = self._resolved(node.func)
        if fn is np.array:
            node = self._array_copy(node)
        # (identity: a name resolved to a module's array, `g` of a local lambda `g` shadowing
        # it, would compare elementwise)
        iterated = node.args[1:] if _one_of(fn, (map, filter)) else node.args if fn is zip else (
            node.args[:1] if _one_of(fn, (list, tuple, enumerate, sorted, reversed, sum)) or
            _one_of(fn, (max, min)) and len(node.args) == 1 else [])
        for arg in iterated:
            self._not_iterated(arg)
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                self._not_iterated(arg.value)
        return self.generic_visit(node)

    def _array_copy(self, node):
        """``np.array(a, copy=True)`` is ``np.array(a)``; ``copy=False`` or ``copy=None`` is
        ``np.asarray(a)``: ``a`` itself when it is an array of the dtype asked for (NumPy 2's
        ``copy=False`` raises where a copy is needed; ``np.asarray`` copies there)."""
        copy = [k for k in node.keywords if k.arg == "copy"]
        others = [k for k in node.keywords if k.arg != "copy"]
        if len(copy) != 1 or not isinstance(copy[0].value, gast.Constant) or any(
                k.arg != "dtype" for k in others) or len(node.args) > 2:
            return node  # (checked against np.array's signature later)
        if copy[0].value.value is True:
            return gast.copy_location(gast.Call(node.func, node.args, others), node)
        if copy[0].value.value not in (False, None):
            return node
        asarray = gast.Name(self.ctx.global_name(np.asarray, "asarray"), gast.Load(), None, None)
        return gast.copy_location(gast.Call(asarray, node.args, others), node)

    def _not_iterated(self, node):
        """Refuses iterating (a loop, unpacking, ``list(v)``) an object of a class of the user's:
        srcgrad reads it as a sequence (``len(v)``, ``v[i]``), not through ``__iter__``."""
        cls = self._kind(node, self.kinds)
        if _user_class(cls) and not issubclass(cls, (tuple, list, dict)) and (
                defines(cls, "__iter__") or defines(cls, "__getitem__") or not (
                    hasattr(cls, "__iter__") or hasattr(cls, "__getitem__"))):
            raise self.ctx.location.error(UnsupportedSyntaxError, node, (
                f"srcgrad does not iterate an object of your class `{cls.__name__}` (a loop, "
                "unpacking, `list(v)`): it would not run its `__iter__` or `__getitem__`; "
                "iterate over its fields instead, e.g. `for v in (p.a, p.b)` or "
                "`a, b = p.a, p.b`"))

    def visit_AugAssign(self, node):
        node.value = self.visit(node.value)
        if not isinstance(node.target, gast.Name):
            return node
        target = node.target.id
        kind = self.kinds.get(target)
        if kind == DICT and isinstance(node.op, gast.BitOr):  # in place, as `d.update(b)`
            update = gast.Attribute(_load(target), "update", gast.Load())
            return _located(gast.Expr(gast.Call(update, [node.value], [])), node)
        if not _user_class(kind):
            return node
        # `v += w`: Python's `v = v.__iadd__(w)`, else `v = v.__add__(w)`
        name = DUNDERS.get(type(node.op))
        method = next((m for m in (f"__i{name}__", f"__{name}__")
                       if name and defines(kind, m)), None)
        if method is None:
            raise self._no_method(node)
        value = method_call(_load(target), method, node.value)
        return _located(gast.Assign([gast.Name(target, gast.Store(), None, None)], value, None),
                        node)

    def _later(self, node, kind):
        """Whether ``node`` is a local whose class is not known here but may be where the
        inliner inlines methods (``q = self.p``: ``Receivers`` knows the instance)."""
        return kind is None and isinstance(node, gast.Name) and node.id in self.locals

    def _no_method(self, node):
        return self.ctx.location.error(UnsupportedSyntaxError, node, NO_METHOD)

    def _call(self, helper, *args):
        ref = gast.Name(self.ctx.global_name(getattr(runtime, helper), helper), gast.Load(),
                        None, None)
        return gast.Call(ref, list(args), [])


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def method_call(obj, method, *args):
    return gast.Call(gast.Attribute(obj, method, gast.Load()), list(args), [])


def binary_method(op, left, right):
    """``(class, method)`` Python runs for ``left op right`` (the classes of the operands),
    ``(None, None)`` when neither is an object of a class of the user's defining it."""
    name = DUNDERS.get(type(op))
    for owner, method in ((left, f"__{name}__"), (right, f"__r{name}__")):
        if name and _user_class(owner) and defines(owner, method):
            return owner, method
    return None, None


def unary_method(op, cls):
    method = {gast.USub: "__neg__", gast.UAdd: "__pos__", gast.Invert: "__invert__"}.get(
        type(op))
    if method is None or not _user_class(cls) or not defines(cls, method):
        return None, None
    return cls, method


def _method_of(cls, name):
    """``(cls, name)`` when ``name`` is a plain method of a class of the user's (not a static or
    class method, not a field), else ``(None, None)``."""
    if not _user_class(cls) or not inspect.isfunction(inspect.getattr_static(cls, name, None)):
        return None, None
    return cls, name


def _returned_class(cls, method):
    """The class of the user's every ``return`` of ``cls.method`` builds (``return V(...)``,
    ``return type(self)(...)``), else None."""
    if method is None:
        return None
    fn = getattr(cls, method)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    found = set()
    for n in ordered_walk(tree.body[0]):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and (
                n is not tree.body[0]):
            return None  # a nested function's returns are not the method's
        if not isinstance(n, ast.Return):
            continue
        made = n.value.func if isinstance(n.value, ast.Call) else None
        if isinstance(made, ast.Name):
            found.add(fn.__globals__.get(made.id))
        elif isinstance(made, ast.Call) and ast.unparse(made) in ("type(self)",) or (
                isinstance(made, ast.Attribute) and ast.unparse(made) == "self.__class__"):
            found.add(cls)
        else:
            return None
    kind = found.pop() if len(found) == 1 else None
    return kind if _user_class(kind) else None


def defines(cls, method):
    """Whether ``cls`` has ``method`` as Python code (its own or a base's of the user's), not
    a builtin's slot (a namedtuple's ``__getitem__``, a dict subclass's, an ndarray's)."""
    return inspect.isfunction(getattr(cls, method, None))


def _user_class(kind):
    """Whether ``kind`` (what ``Operators._kind`` found) is a class of the user's: not a
    builtin, NumPy's or srcgrad's."""
    if not isinstance(kind, type):
        return False
    module = getattr(kind, "__module__", "") or ""
    return module.split(".")[0] not in ("builtins", "numpy", "srcgrad", "collections", "types")


def _located(new, where):
    gast.copy_location(new, where)
    for n in ordered_walk(new):
        if isinstance(n, (gast.expr, gast.stmt)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return new


def _admitted(bindings, kind_of, names):
    """``names`` (``greatest_kinds``) with the names every binding of which is of one kind
    given them, added until none is: ``u = v - w`` of objects, dropped while every name
    started a dict, is a V once v's class is known (``V.__sub__`` returns ``V(...)``)."""
    names = dict(names)
    while True:
        more = {}
        for v, values in bindings.items():
            if v in names or not values or None in values:
                continue
            found = {kind_of(x, names) for x in values}
            if len(found) == 1 and None not in found:
                more[v] = found.pop()
        if not more:
            return names
        names.update(more)


def _bindings(fn_node):
    """``{name: the values bound to it}``, None for a binding other than ``name = value``
    (a parameter, a loop variable, an unpacked target, ``name -= v``); ``a |= b`` and ``a +=
    b`` keep what ``a`` holds (a dict, an object whose ``__iadd__`` returns its class) and add
    nothing."""
    bindings = {}
    plain = set()  # the targets of `name = value` and `name op= value`
    for n in ordered_walk(fn_node):
        if isinstance(n, gast.Assign):
            for t in n.targets:
                if isinstance(t, gast.Name):
                    plain.add(id(t))
                    bindings.setdefault(t.id, []).append(
                        n.value if len(n.targets) == 1 else None)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            plain.add(id(n.target))
    for n in ordered_walk(fn_node):
        if (isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del, gast.Param))
                and id(n) not in plain):
            bindings.setdefault(n.id, []).append(None)
    return bindings


def _one_of(fn, options):
    """Whether ``fn`` is one of ``options`` (by identity)."""
    return any(fn is option for option in options)
