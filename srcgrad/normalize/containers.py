"""List and dict methods become assignments of new values.

Requires: a function accepted by ``CheckSupported`` (before control flow is desugared, so loops
still name what they iterate). Guarantees: every mutation of a local list or dict by a method is
an assignment of the container's new value, computed by a helper of ``runtime_lists`` that has
a gradient rule; the methods that read (``keys``, ``values``, ``items``, ``get``, ``index``,
``count``) are helper calls too; a loop over something that may be a dict or an iterator
(a parameter, ``np.ndindex(...)``) runs over ``iteration_sequence`` of it, which is indexable.

    hs.insert(0, v)          ->   hs = list_insert(hs, 0, v)
    a = hs.pop(i)            ->   a = hs[i]; hs = pop_item(hs, i)
    hs.remove(v)             ->   k = list_index(hs, v); hs = pop_item(hs, k)
    hs.sort()                ->   order = sort_order(hs, False); hs = list_permute(hs, order)
    d.update(other)          ->   d = dict_update(d, other)
    for k, v in d.items():   ->   for k, v in dict_items(d):
    for k in params:         ->   seq = params; seq = iteration_sequence(seq); for k in seq:

Another name for the container would not see these changes; ``CopyBeforeWrite`` refuses a write
through a container that another name may hold (they count as list writes there).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import itertools
import sys

import gast
import numpy as np

from .. import runtime
from ..analysis.ops import OPAQUE_MODULES
from ..astutil import NodeTransformer, clone, ordered_walk, param_names, stored
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from . import dict_views, loop_lengths, own_fields
from .check import field_path

# The methods of a list or dict held by a field or an element (`self.hist.append(h)`) written
# as a write into that inner object, for every holder of it (`_update_element`).
INNER_METHODS = ("append", "extend", "insert", "remove", "reverse", "clear", "update")
# The helpers that change a container; CopyBeforeWrite treats them as writes into it.
MUTATORS = (
    "list_insert", "pop_item", "list_extend", "list_reverse", "list_permute", "clear_items",
    "dict_update", "set_field",
)
READERS = {"keys": "dict_keys", "values": "dict_values", "items": "dict_items",
           "get": "dict_get", "index": "list_index", "count": "list_count"}
ITERATORS = (
    np.ndindex, np.nditer, itertools.product, itertools.combinations, itertools.permutations,
    itertools.combinations_with_replacement,
)


def run(fn_node, ctx):
    """The pass: list and dict methods of the function's locals become assignments."""
    params = param_names(fn_node, packed=True)
    return ContainerMethods(ctx, ctx.local_names, params).run(fn_node)


def mutator_names(ctx):
    """The generated names of the helpers in ``MUTATORS``."""
    return tuple(ctx.global_name(getattr(runtime, n), n) for n in MUTATORS)


class ContainerMethods:
    def __init__(self, ctx, locals_, params, location=None):
        self.ctx = ctx
        self.locals = locals_
        self.params = set(params)
        self.location = location or ctx.location
        self.dict_names = set()

    def run(self, fn_node):
        self.dict_names = dict_views.dict_assigned(fn_node) | dict_views.returned_by_calls(
            fn_node, self._resolve)
        self.set_names = {  # (a set: a loop runs over `iteration_sequence` of it)
            n.targets[0].id for n in ordered_walk(fn_node) if isinstance(n, gast.Assign)
            and isinstance(n.targets[0], gast.Name) and _a_set(n.value, self.locals)}
        # `y.sort()` of an array is NumPy's in-place sort (normalize/inplace_calls.py): only a
        # name that surely holds a list is sorted here
        self.list_names = dict_views.list_assigned(fn_node)
        fn_node.body = self.block(fn_node.body)
        return fn_node

    # --- helpers -----------------------------------------------------------------------------
    def _ref(self, helper):
        return gast.Name(self.ctx.global_name(getattr(runtime, helper), helper), gast.Load(),
                         None, None)

    def _call(self, helper, *args):
        return gast.Call(self._ref(helper), list(args), [])

    def _assign(self, target, value, where):
        stmt = gast.Assign([gast.Name(target, gast.Store(), None, None)], value, None)
        return _located(stmt, where)

    def _fresh(self, base):
        name = self.ctx.namer.fresh(base)
        self.locals.add(name)
        return name

    def _error(self, node, message):
        return self.location.error(UnsupportedSyntaxError, node, message)

    def _local_root(self, node):
        while isinstance(node, (gast.Subscript, gast.Attribute)):
            node = node.value
        return isinstance(node, gast.Name) and node.id in self.locals

    # --- statements --------------------------------------------------------------------------
    def block(self, stmts):
        out = []
        for s in stmts:
            if isinstance(s, (gast.If, gast.While)):
                s.test = self.expr(s.test)
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                out.append(s)
            elif isinstance(s, gast.For):
                own_fields.mark_loop(s, self._resolve)
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
                out += self._loop(s)
            elif isinstance(s, gast.With):
                out += self._with(s)
            else:
                out += self.statement(s)
        return out

    def statement(self, s):
        mutated = self._method_statement(s)
        if mutated is not None:
            return mutated
        if (
            isinstance(s, gast.Assign)
            and isinstance(s.targets[0], gast.Name)
            and self._method(s.value, "pop")
            and s.value.args
        ):
            return self._pop(s.targets[0].id, s.value, s)
        if isinstance(s, gast.AugAssign) and field_path(s.target):
            return self._update_inner(s)
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Attribute) and (
                field_path(s.targets[0])):
            return self._update_field(s)
        if isinstance(s, (gast.Assign, gast.AugAssign)) and isinstance(
                _target(s), gast.Attribute):
            return self._set_field(s)
        if isinstance(s, (gast.Assign, gast.AugAssign)) and isinstance(
                _target(s), gast.Subscript) and not isinstance(_target(s).value, gast.Name):
            return self._update_element(s)
        pre = []
        _HoistPops(self, pre, s).visit(s)
        for field in ("value", "test"):
            if getattr(s, field, None) is not None:
                setattr(s, field, self.expr(getattr(s, field)))
        return pre + [s]

    def _method_statement(self, s):
        """``recv.method(...)`` as a statement (``_mutation``), or ``a.b.append(v)``
        (``INNER_METHODS``) of a local's inner object, as ``a.b[i] = v``; else None."""
        call = s.value if isinstance(s, gast.Expr) else None
        if self._method(call):
            return self._mutation(call, s)
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and (
                call.func.attr in INNER_METHODS) and isinstance(
                call.func.value, (gast.Attribute, gast.Subscript)) and self._local_root(
                call.func.value):
            return self._update_element(s)
        return None

    def _attribute_written(self, s):
        """``vars(obj)["a"] = v`` (``+=``) as ``obj.a = v``."""
        target = _target(s)
        key, obj = target.slice, target.value.args[0]
        if not (isinstance(key, gast.Constant) and isinstance(key.value, str)
                and key.value.isidentifier() and isinstance(obj, gast.Name)):
            raise self._error(target, (
                "srcgrad does not support this write into `vars(obj)`: only "
                "`vars(obj)[\"name\"] = v` of a variable, which is `obj.name = v`; write the "
                "attribute (`obj.name = v`)"))
        attribute = gast.copy_location(gast.Attribute(obj, key.value, gast.Store()), target)
        if isinstance(s, gast.AugAssign):
            return gast.copy_location(gast.AugAssign(attribute, s.op, s.value), s)
        return gast.copy_location(gast.Assign([attribute], s.value, None), s)

    def _set_field(self, s):
        """``obj.name = v`` (``+=``): ``obj`` becomes a copy of itself with the field replaced,
        so the caller's object is never modified (as for arrays written in place)."""
        target = _target(s)
        obj = target.value.id
        value = s.value
        pre = []
        if isinstance(s, gast.AugAssign):
            # `obj.h += v` is Python's `held = obj.h; held += v; obj.h = held`: an array field
            # is updated in place, and every other holder of the array (a variable, a list,
            # another object's field) sees it (normalize/sharing.py); a number is rebound
            held = self._fresh(naming.describe(target))
            pre.append(self._assign(held, gast.Attribute(_load(obj), target.attr,
                                                         gast.Load()), s))
            pre.append(gast.copy_location(gast.AugAssign(
                gast.Name(held, gast.Store(), None, None), s.op, self.expr(value)), s))
            value = _load(held)
        stmt = self._assign(obj, self._call("set_field", _load(obj),
                                            gast.Constant(target.attr, None), value), s)
        _HoistPops(self, pre, stmt).visit(stmt)
        stmt.value = self.expr(stmt.value)
        return pre + [stmt]

    def _update_field(self, s):
        """``a.b.c = v``: Python changes the object ``a.b`` in place, which every holder of it
        sees. The value first (as Python evaluates it), then the object, then a copy of it with
        the field replaced (``field_updated``), which normalize/sharing.py puts wherever the
        old object is held (``a`` itself, ``q = a.b``, a list holding ``a``...), found by
        identity when it runs; the caller's objects are never changed."""
        target = s.targets[0]
        pre = []
        value = self._fresh(target.attr)
        pre.append(self._assign(value, s.value, s))
        held = self._fresh(naming.describe(target.value))
        pre.append(self._assign(held, clone(target.value), s))
        stmt = self._assign(held, self._call("field_updated", _load(held), gast.Constant(
            target.attr, None), _load(value)), s)
        return self._normalized(pre) + [stmt]

    def _normalized(self, assignments):
        """``assignments`` with their values normalized, each after the pops hoisted out of it."""
        out = []
        for p in assignments:
            hoisted = []
            _HoistPops(self, hoisted, p).visit(p)
            p.value = self.expr(p.value)
            out += hoisted + [p]
        return out

    def _update_element(self, s):
        """``x[i][j] = v`` / ``a.b[i] = v`` (``+=``): Python changes the list, dict or array
        ``x[i]`` holds in place, which every holder of it sees. The value first (as Python
        evaluates it), then the inner object; the write goes into a copy of it, which
        ``element_written`` marks for normalize/sharing.py to put wherever the old object is
        held (``x`` itself, ``r = x[i]``, ...), found by identity when it runs; the caller's
        objects are never changed. An inner array that views another (``A[i]`` of a 2-D
        ``A``) is an error when it runs (``check_element_written``). ``vars(obj)["a"] = v``
        is ``obj.a = v``."""
        call = s.value if isinstance(s, gast.Expr) else None  # (a method: `a.b.append(v)`)
        if call is None and own_fields.is_vars(_target(s).value, self._resolve):
            return self.statement(self._attribute_written(s))
        target = _target(s) if call is None else call.func
        inner = target.value
        text = ast.unparse(gast.gast_to_ast(clone(inner)))
        pre, value = [], s.value
        if call is not None:
            args = [_load(self._fresh(naming.describe(a))) for a in call.args]
            pre += [self._assign(a.id, v, s) for a, v in zip(args, call.args)]
        elif isinstance(s, gast.Assign):
            value = _load(self._fresh(naming.describe(target)))
            pre.append(self._assign(value.id, s.value, s))
        held = self._fresh(naming.describe(inner))
        written = self._fresh(naming.describe(inner))
        pre += [
            self._assign(held, clone(inner), s),
            self._assign(self._fresh(naming.UNUSED), self._call(
                "check_element_written", _load(held), gast.Constant(text, None)), s),
            self._assign(written, self._call("fresh_copy", _load(held)), s),
        ]
        out = self._normalized(pre)
        if call is not None:
            method = gast.Attribute(_load(written), target.attr, gast.Load())
            write = gast.Expr(gast.Call(method, args, call.keywords))
        else:
            place = gast.Subscript(_load(written), target.slice, gast.Store())
            write = (gast.Assign([place], value, None) if isinstance(s, gast.Assign)
                     else gast.AugAssign(place, s.op, value))
        out += self.statement(_located(write, s))
        return out + [self._assign(held, self._call("element_written", _load(held),
                                                    _load(written)), s)]

    def _update_inner(self, s):
        """``P.ps[0].b += v`` / ``p.x[i] += v``: Python updates the float array the field holds
        in place, which every holder of it sees (normalize/sharing.py, as for ``x += v``); the
        element form as ``held += delta``, ``delta`` zeros (ones for ``*=``, ``/=``) but at
        ``i``, exact as ``x + 0.0`` and ``x * 1.0`` are; ``a.b.c += v`` then sets the field
        again, as Python does (a number held there is rebound: the inner object changes, for
        every holder of it). Anything but a float array (or a number, for a field) there is an
        error when it runs (``check_updated_in_place``)."""
        target = s.target
        element = isinstance(target, gast.Subscript)
        field = target.value if element else target
        if element and not isinstance(s.op, (gast.Add, gast.Sub, gast.Mult, gast.Div)):
            raise self._error(target, "an augmented assignment other than `+=`, `-=`, `*=`, "
                              "`/=` into an element of a field (`p.x[i] **= v`)")
        text = ast.unparse(gast.gast_to_ast(clone(field)))
        held = self._fresh(naming.describe(field))
        out, inner = [], None
        if not element:  # `a.b.c += v` is `t = a.b; h = t.c; h += v; t.c = h` in Python
            inner = self._fresh(naming.describe(field.value))
            out.append(self._assign(inner, self.expr(clone(field.value)), s))
            read = gast.Attribute(_load(inner), field.attr, gast.Load())
        else:
            read = self.expr(clone(field))
        check = self._call("check_updated_in_place", _load(held), gast.Constant(text, None),
                           gast.Constant(not element, None))
        out += [self._assign(held, read, s), self._assign(self._fresh(naming.UNUSED), check, s)]
        value = self.expr(s.value)
        if element:
            delta = self._fresh(naming.DELTA.format(held))
            base = np.ones_like if isinstance(s.op, (gast.Mult, gast.Div)) else np.zeros_like
            make = gast.Call(gast.Name(self.ctx.global_name(base, base.__name__), gast.Load(),
                                       None, None), [_load(held)], [])
            put = gast.Assign([gast.Subscript(_load(delta), self.expr(target.slice),
                                              gast.Store())], value, None)
            out += [self._assign(delta, make, s), _located(put, s)]
            value = _load(delta)
        update = gast.AugAssign(gast.Name(held, gast.Store(), None, None), s.op, value)
        out.append(_located(update, s))
        if inner is not None:  # the field set again: a number's new value, an array itself
            out.append(self._assign(inner, self._call("field_updated", _load(inner),
                                                      gast.Constant(field.attr, None),
                                                      _load(held)), s))
        return out

    def _with(self, s):
        """``with m as v: body``: the manager entered before the body and left after it, in
        the primal (``np.errstate``, ``warnings.catch_warnings``, timers: values go through
        untouched). When the body raises, the error goes on without ``__exit__``."""
        out, managers = [], []
        for item in s.items:
            self._refuse_a_manager_holding_values(item.context_expr)
            manager = self._fresh(naming.MANAGER)
            managers.append(manager)
            out.append(self._assign(manager, self.expr(item.context_expr), s))
            entered = self._call("enter_context", _load(manager))
            if item.optional_vars is None:
                out.append(_located(gast.Expr(entered), s))
            else:
                out.append(self._assign(item.optional_vars.id, entered, s))
        out += self.block(s.body)
        for manager in reversed(managers):
            out.append(_located(gast.Expr(self._call("exit_context", _load(manager))), s))
        return out

    def _refuse_a_manager_holding_values(self, expr):
        """A manager given a variable of the function (``with Doubler(y):``, ``with m:``):
        its ``__enter__`` and ``__exit__`` run as they are and may change what it holds, which
        the derivative would not see. NumPy's, SciPy's and the standard library's managers
        (``np.errstate``, ``warnings.catch_warnings``, ``contextlib.nullcontext``) do not."""
        given = [n.id for n in ordered_walk(expr) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load) and n.id in self.locals]
        if not given:
            return
        if isinstance(expr, gast.Call):
            fn = self.ctx.namespace.resolve(expr.func, self.locals)
            module = (getattr(fn, "__module__", None) or "").split(".")[0]
            if module in OPAQUE_MODULES or module in sys.stdlib_module_names:
                return
        raise self._error(expr, (
            f"srcgrad does not support a `with` manager given `{given[0]}`, a variable of the "
            f"function, here: its `__enter__` and `__exit__` run as they are and may change "
            f"what it holds, which the derivative would not see; give the manager no values "
            f"of the function (`np.errstate`, timers), and change them in the body"))

    def _method(self, call, name=None):
        return (
            isinstance(call, gast.Call)
            and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)
            and call.func.value.id in self.locals
            and (name is None or call.func.attr == name)
        )

    # One helper call per method, as (helper, number of positional arguments): the container
    # is the first argument, the method's arguments follow.
    SIMPLE = {
        "insert": ("list_insert", (2,)), "extend": ("list_extend", (1,)),
        "pop": ("pop_item", (0, 1)), "reverse": ("list_reverse", (0,)),
        "clear": ("clear_items", (0,)),
    }

    def _mutation(self, call, s):
        """Statements for ``recv.method(...)`` as a statement, or None if it is no mutation."""
        recv, method = call.func.value.id, call.func.attr
        args = [self.expr(a) for a in call.args]
        keywords = {k.arg: k.value for k in call.keywords}
        if method in self.SIMPLE and not keywords:
            helper, arities = self.SIMPLE[method]
            if len(args) in arities:
                if method == "pop" and not args:
                    args = [gast.Constant(-1, None)]
                return [self._assign(recv, self._call(helper, _load(recv), *args), s)]
        if method == "remove" and len(args) == 1 and not keywords:
            k = self._fresh(naming.POSITION.format(recv))
            return [
                self._assign(k, self._call("list_index", _load(recv), args[0]), s),
                self._assign(recv, self._call("pop_item", _load(recv), _load(k)), s),
            ]
        if method == "sort" and recv in self.list_names:
            return self._sort(recv, call, args, keywords, s)
        if method == "update" and len(args) <= 1:
            return self._update(recv, call, args, keywords, s)
        return None

    def _sort(self, recv, call, args, keywords, s):
        if args or set(keywords) - {"reverse"}:
            raise self._error(call, "`sort()` with a `key=` (only `sort()` and "
                              "`sort(reverse=...)` of a list of numbers)")
        order = self._fresh(naming.ORDER.format(recv))
        descending = keywords.get("reverse", gast.Constant(False, None))
        return [
            self._assign(order, self._call("sort_order", _load(recv), self.expr(descending)), s),
            self._assign(recv, self._call("list_permute", _load(recv), _load(order)), s),
        ]

    def _update(self, recv, call, args, keywords, s):
        if any(k is None for k in keywords):
            raise self._error(call, "`update(**mapping)`; pass the mapping itself")
        sources = list(args)
        if keywords:
            keys = [gast.Constant(k, None) for k in keywords]
            sources.append(gast.Dict(keys, [self.expr(v) for v in keywords.values()]))
        return [
            self._assign(recv, self._call("dict_update", _load(recv), other), s)
            for other in sources
        ]

    def _pop(self, target, call, s):
        """``t = recv.pop(i)``: read the element, then remove it."""
        recv = call.func.value.id
        if len(call.args) != 1 or call.keywords:
            raise self._error(call, "`pop()` with a default (`d.pop(k, default)`)")
        index = self.expr(call.args[0])
        pre = []
        if not isinstance(index, (gast.Constant, gast.Name)) or (
            isinstance(index, gast.Name) and index.id == target
        ):
            k = self._fresh(naming.POP_INDEX.format(recv))
            pre.append(self._assign(k, index, s))
            index = gast.Name(k, gast.Load(), None, None)
        item = gast.Subscript(gast.Name(recv, gast.Load(), None, None), index, gast.Load())
        rest = self._call("pop_item", gast.Name(recv, gast.Load(), None, None), clone(index))
        if target == recv:
            held = self._fresh(naming.POPPED.format(recv))
            return pre + [self._assign(held, item, s), self._assign(recv, rest, s),
                          self._assign(target, gast.Name(held, gast.Load(), None, None), s)]
        return pre + [self._assign(target, item, s), self._assign(recv, rest, s)]

    # --- expressions -------------------------------------------------------------------------
    def expr(self, node):
        own_fields.mark_read_at_once(node, self._resolve)
        node = _Readers(self).visit(node)
        for gen in ordered_walk(node):  # (over a set, dict or iterator: as a loop, control.py)
            if isinstance(gen, gast.comprehension) and self._may_not_index(gen.iter):
                gen.iter = gast.copy_location(self._call("iteration_sequence", gen.iter), gen.iter)
        return node

    def _resolve(self, node):
        return self.ctx.namespace.resolve(node, self.locals)

    def _loop(self, loop):
        pre = loop_lengths.reversed_named(loop, self)
        loop.iter = self.expr(loop.iter)
        it = loop.iter
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id in (
            "enumerate", "zip"
        ) and it.func.id not in self.locals:
            if it.func.id == "enumerate" and it.args and _zip_call(it.args[0], self.locals):
                zipped = it.args[0]
                zipped.args = [self._sequence(a, pre, loop) for a in zipped.args]
            else:
                it.args = [self._sequence(a, pre, loop) for a in it.args]
        elif not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                  and it.func.id in ("range", "reversed") and it.func.id not in self.locals):
            loop.iter = self._sequence(it, pre, loop)
        return pre + [loop]

    def _sequence(self, it, pre, loop):
        """``it``, or a fresh name holding ``iteration_sequence`` of it when it may be a dict or
        an iterator. ``seq = it`` comes first, so alias checks see that seq holds it."""
        if not self._may_not_index(it):
            return it
        seq = self._fresh(naming.SEQ)
        pre.append(self._assign(seq, it, loop))
        wrap = self._call("iteration_sequence", gast.Name(seq, gast.Load(), None, None))
        pre.append(self._assign(seq, wrap, loop))
        return gast.Name(seq, gast.Load(), None, None)

    def _may_not_index(self, it):
        if _a_set(it, self.locals):
            return True  # (not indexable)
        if isinstance(it, (gast.Name, gast.Attribute)) and isinstance(self._resolve(it), dict):
            return True  # a global dict, or one a global's field holds (`for k in HK.hooks`)
        if isinstance(it, gast.Name):
            return it.id in self.params or it.id in self.dict_names or it.id in self.set_names
        if isinstance(it, (gast.Subscript, gast.Attribute)):
            return self._local_root(it)
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Attribute) and (
                it.func.attr in ("keys", "values", "items")) and not it.args:
            return True  # (a global dict's views, `HK.hooks.values()`: not indexable)
        if isinstance(it, gast.Call) and dict_views.users_call(it.func, self._resolve):
            return True  # (`for k in make(x)`: maybe a dict)
        if isinstance(it, gast.Call):
            fn = self.ctx.namespace.resolve(it.func, self.locals)
            return any(fn is f for f in ITERATORS) or fn is runtime.own_fields
        return False


def _a_set(node, locals_):
    """A set display or comprehension, or a call of the builtin ``set`` or ``frozenset``."""
    return isinstance(node, (gast.Set, gast.SetComp)) or (
        isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
        and node.func.id in ("set", "frozenset") and node.func.id not in locals_)


def _zip_call(node, locals_):
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "zip" and "zip" not in locals_)


class _Readers(NodeTransformer):
    """``d.keys()``, ``d.get(k)``, ``np.ndenumerate(a)``... as helper calls."""

    def __init__(self, owner):
        self.owner = owner

    def _replace(self, node):
        """``dataclasses.replace(p, a=v, b=w)`` and ``p._replace(a=v)`` of a namedtuple: one
        ``replace_field`` per field, each a new object (``runtime/containers.py``);
        ``dataclasses.asdict(p)`` is ``as_dict(p)``; ``vars(p)`` is refused."""
        func = node.func
        found = self.owner.ctx.namespace.resolve(func, self.owner.locals)
        if found is vars and len(node.args) == 1:
            return self._vars(node)
        if found is dataclasses.asdict and len(node.args) == 1 and not node.keywords:
            return gast.copy_location(self.owner._call("as_dict", node.args[0]), node)
        if found is copy.deepcopy or found is copy.copy:
            return self._copied(node, found)
        if len(node.args) == 1 and found is dataclasses.replace and not any(
                k.arg is None for k in node.keywords):
            # one call, the class decides (normalize/methods.py): `__post_init__` runs once
            return gast.copy_location(gast.Call(self.owner._ref("replaced"), list(node.args),
                                                list(node.keywords)), node)
        if not node.keywords or any(k.arg is None for k in node.keywords):
            return None
        if isinstance(func, gast.Attribute) and func.attr == "_replace" and not node.args and (
                self.owner._local_root(func.value)):
            obj = func.value
        else:
            return None
        for k in node.keywords:
            obj = self.owner._call("replace_field", obj, gast.Constant(k.arg, None), k.value)
        return gast.copy_location(obj, node)

    def _copied(self, node, found):
        """``copy.deepcopy(x)`` as ``deep_copy(x)``, ``copy.copy(x)`` as ``shallow_copy(x)``
        (another holder of x's parts, normalize/sharing.py)."""
        if len(node.args) != 1 or node.keywords:
            return None
        helper = "deep_copy" if found is copy.deepcopy else "shallow_copy"
        return gast.copy_location(self.owner._call(helper, node.args[0]), node)

    def _vars(self, node):
        """``vars(obj)`` that ``own_fields.mark_read_at_once`` marked: ``own_fields(obj)``."""
        if not getattr(node, "read_at_once", False):
            raise self.owner._error(node, (
                "srcgrad does not support `vars(obj)` here: it is the object's own `__dict__` "
                "(writing into it changes the object, and it shows the object's later "
                "changes); read it where it is called (`vars(obj)[\"a\"]`, a loop over "
                "`vars(obj).items()` that writes no attribute and calls none of your "
                "functions), or take a copy (`dict(vars(obj))`)"))
        fields = gast.copy_location(self.owner._call("own_fields", node.args[0]), node)
        fields.own_fields = True
        return fields

    def _of_own_fields(self, node):
        """``own_fields(obj).copy()`` and ``dict(own_fields(obj))``: the new dict it is;
        ``own_fields(obj).items()`` (``keys``, ``values``, ``get``) as a reader's call."""
        func = node.func
        if isinstance(func, gast.Attribute) and getattr(func.value, "own_fields", False):
            if func.attr == "copy" and not node.args:
                return func.value
            arity = {"keys": 0, "values": 0, "items": 0, "get": (1, 2)}.get(func.attr)
            if arity is not None and len(node.args) in (
                    arity if isinstance(arity, tuple) else (arity,)) and not node.keywords:
                return gast.copy_location(
                    self.owner._call(READERS[func.attr], func.value, *node.args), node)
        if len(node.args) == 1 and getattr(node.args[0], "own_fields", False) and (
                self.owner.ctx.namespace.resolve(func, self.owner.locals) is dict):
            return node.args[0]
        return None

    def visit_Lambda(self, node):
        return node

    def _builtin(self, node):
        return _builtin_call(self, node)

    def visit_Call(self, node):
        self.generic_visit(node)
        owner = self.owner
        func = node.func
        read = self._of_own_fields(node)
        if read is not None:
            return read
        if (
            isinstance(func, gast.Attribute)
            and func.attr in READERS
            and owner._local_root(func.value)
            and not node.keywords
        ):
            helper = READERS[func.attr]
            arity = {"keys": 0, "values": 0, "items": 0, "get": (1, 2), "index": 1, "count": 1}
            wanted = arity[func.attr]
            wanted = wanted if isinstance(wanted, tuple) else (wanted,)
            if len(node.args) in wanted:
                return gast.copy_location(owner._call(helper, func.value, *node.args), node)
        rewritten = self._builtin(node) or self._replace(node)
        if rewritten is not None:
            return rewritten
        if isinstance(func, (gast.Attribute, gast.Name)) and len(node.args) == 1 and not (
            node.keywords or isinstance(node.args[0], gast.Starred)
        ):
            fn = owner.ctx.namespace.resolve(func, owner.locals)
            if fn is np.ndenumerate:
                return gast.copy_location(owner._call("ndenumerate_items", node.args[0]), node)
            if fn is list:
                return gast.copy_location(owner._call("as_list", node.args[0]), node)
        return node


class _Builtins:
    """Builtins written with what has rules: ``tuple(xs)`` is ``as_tuple(xs)``, ``reversed(xs)``
    is ``xs[::-1]``, ``sorted(xs, key=k, reverse=r)`` a permutation of ``xs`` computed from
    its keys, ``map(f, xs)`` and ``filter(f, xs)`` generator expressions (a lambda's body
    becomes the element), ``divmod(a, b)`` is ``(a // b, a % b)``."""

    def __init__(self, owner):
        self.owner = owner

    def call(self, fn, node):
        args, kw = node.args, {k.arg: k.value for k in node.keywords}
        for builtin, accepts, write in self.FORMS:
            if fn is builtin and accepts(args, kw):
                return write(self, args, kw)
        return None

    def _tuple(self, args, kw):
        return self.owner._call("as_tuple", args[0])

    def _reversed(self, args, kw):
        backwards = gast.Slice(None, None, gast.Constant(-1, None))
        return gast.Subscript(args[0], backwards, gast.Load())

    def _divmod(self, args, kw):
        a, b = args
        return gast.Tuple([gast.BinOp(a, gast.FloorDiv(), b),
                           gast.BinOp(clone(a), gast.Mod(), clone(b))], gast.Load())

    FORMS = (  # (builtin, whether the call's arguments fit, how it is written)
        (tuple, lambda a, k: len(a) == 1 and not k, _tuple),
        (reversed, lambda a, k: len(a) == 1 and not k, _reversed),
        (sorted, lambda a, k: len(a) == 1 and set(k) <= {"key", "reverse"},
         lambda self, a, k: self._sorted(a[0], k)),
        (map, lambda a, k: len(a) >= 2 and not k, lambda self, a, k: self._mapped(a[0], a[1:])),
        (filter, lambda a, k: len(a) == 2 and not k,
         lambda self, a, k: self._filtered(a[0], a[1])),
        (divmod, lambda a, k: len(a) == 2 and not k and all(_atom(v) for v in a), _divmod),
    )

    def _sorted(self, items, kw):
        if not isinstance(items, gast.Name):
            return None  # normalize/sugar.py names it first; anything else is left alone
        key = kw.get("key")
        keys = gast.Constant(None, None)
        if key is not None and not (isinstance(key, gast.Constant) and key.value is None):
            keys = self._mapped(key, [items], gast.ListComp)
            if keys is None:
                return None
        reverse = kw.get("reverse", gast.Constant(False, None))
        order = self.owner._call("sort_keys", items, keys, reverse)
        return self.owner._call("list_permute", self.owner._call("as_list", clone(items)), order)

    def _element(self, f, count):
        """(comprehension target, element) applying ``f`` to ``count`` items, or None."""
        if isinstance(f, gast.Lambda):
            a = f.args
            simple = not (a.posonlyargs or a.kwonlyargs or a.vararg or a.kwarg or a.defaults)
            if not simple or len(a.args) != count:
                return None
            names = [p.id for p in a.args]
            return names, f.body
        if not isinstance(f, (gast.Name, gast.Attribute)):
            return None  # evaluated once per item would not be `map`'s one evaluation
        names = [self.owner._fresh(naming.ELEMENT) for _ in range(count)]
        call = gast.Call(f, [gast.Name(n, gast.Load(), None, None) for n in names], [])
        return names, call

    def _mapped(self, f, iterables, kind=gast.GeneratorExp):
        found = self._element(f, len(iterables))
        if found is None:
            return None
        names, elt = found
        targets = [gast.Name(n, gast.Store(), None, None) for n in names]
        target = targets[0] if len(targets) == 1 else gast.Tuple(targets, gast.Store())
        it = iterables[0] if len(iterables) == 1 else gast.Call(
            gast.Name(self.owner.ctx.global_name(zip, "zip"), gast.Load(), None, None),
            list(iterables), [])
        return kind(elt, [gast.comprehension(target, it, [], 0)])

    def _filtered(self, f, iterable):
        found = self._element(f, 1)
        if found is None:
            return None
        (name,), test = found
        target = gast.Name(name, gast.Store(), None, None)
        elt = gast.Name(name, gast.Load(), None, None)
        return gast.GeneratorExp(elt, [gast.comprehension(target, iterable, [test], 0)])


def _atom(node):
    return isinstance(node, (gast.Name, gast.Constant))


def _builtin_call(readers, node):
    """``node`` written by ``_Builtins`` if it is a call of one of its builtins, else None; a
    lambda left among the arguments is refused."""
    owner, func = readers.owner, node.func
    if isinstance(func, gast.Name) and not any(
        isinstance(a, gast.Starred) for a in node.args
    ) and all(k.arg is not None for k in node.keywords):
        fn = owner.ctx.namespace.resolve(func, owner.locals)
        rewritten = _Builtins(owner).call(fn, node)
        if rewritten is not None:
            for n in ordered_walk(rewritten):
                if isinstance(n, gast.expr) and getattr(n, "lineno", None) is None:
                    gast.copy_location(n, node)
            return rewritten
    for lam in [*node.args, *(k.value for k in node.keywords)]:
        if isinstance(lam, gast.Lambda):
            raise owner._error(lam, "srcgrad does not support a lambda here (passed to "
                               "anything but the builtins map, filter and sorted's key=); "
                               "assign it to a name of its own, once, and call that")
    return None


class _HoistPops(NodeTransformer):
    """``s = s + hs.pop(0)``: the pop runs first, into a fresh name (refused where the
    statement reads the list elsewhere: Python would read it before the pop)."""

    def __init__(self, owner, pre, stmt):
        self.owner = owner
        self.pre = pre
        self.stmt = stmt

    def visit_Lambda(self, node):
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        owner = self.owner
        if owner._method(node, "pop") and node.args:
            recv = node.func.value.id
            reads = [n for n in ordered_walk(self.stmt) if isinstance(n, gast.Name)
                     and n.id == recv]
            if len(reads) > 1 or recv in stored(self.stmt):
                raise owner._error(node, f"`{recv}.pop(...)` inside an expression that also "
                                   f"uses `{recv}`; pop into a name first")
            held = owner._fresh(naming.POPPED.format(recv))
            self.pre.extend(owner._pop(held, node, self.stmt))
            return gast.copy_location(gast.Name(held, gast.Load(), None, None), node)
        return node


def _load(name):
    return gast.Name(name, gast.Load(), None, None)


def _located(stmt, where):
    gast.copy_location(stmt, where)
    for n in ordered_walk(stmt):
        if isinstance(n, (gast.stmt, gast.expr)) and getattr(n, "lineno", None) is None:
            gast.copy_location(n, where)
    return stmt


def _target(s):
    return s.targets[0] if isinstance(s, gast.Assign) else s.target
