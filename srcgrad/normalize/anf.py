"""A-normal form: one operation per statement, operands are names or constants.

Requires: a function accepted by ``CheckSupported``. Guarantees: every statement of the body is
``name = <one operation on atoms>``, a bare call, or the final ``return atom``; an atom is a
variable, a constant, or a static dotted name (``np.pi``). Temporaries are named after what they
hold. Each new statement keeps the line number of the source statement it came from, which is how
adjoint blocks later quote the line they differentiate.

    z = np.tanh(X @ W + b)          X_matmul_W = X @ W
                             ->     X_matmul_W_plus_b = X_matmul_W + b
                                    z = np.tanh(X_matmul_W_plus_b)
"""

from __future__ import annotations

import gast

from ..astutil import clone, index_value
from ..emit import naming
from ..errors import InternalError


def run(fn_node, ctx):
    """The pass: one operation per statement. Sets ``ctx.helpers``, the generated names of the
    runtime helpers it writes in-place updates with."""
    ctx.helpers = in_place_helpers(ctx)
    return ANF(ctx.namer, ctx.local_names, ctx.helpers, derives(ctx, ctx.local_names)).run(
        fn_node)


def derives(ctx, locals_):
    """Whether a call whose result is called where it is made is one of srcgrad's transforms
    (``grad(g)(x)``, evaluated at transform time by analysis/ops.py); any other one
    (``Dense(0.4)(x)``, ``operator.itemgetter(1)(t)``) is bound to a name first, and that name
    is called, as if the user had named it."""
    from .. import transforms

    return lambda call: transforms.is_transform(ctx.namespace.resolve(call.func, locals_))


def in_place_helpers(ctx):
    """The runtime helpers ANF writes in-place list and array updates with, by generated name."""
    from .. import runtime

    helpers = {
        name: ctx.global_name(getattr(runtime, name), name)
        for name in ("list_append", "list_pop", "setitem", "check_not_array", "max_of", "min_of",
                     "repeat_sequence", "check_unpacked")
    }
    # the builtins ANF writes calls of: the user's module may bind their names to its own
    helpers.update((f.__name__, ctx.global_name(f, f.__name__)) for f in (bool, slice))
    return helpers


def _text(value):
    """The user's text of a value unpacked: a name, or ``v``."""
    return value.id if isinstance(value, gast.Name) else "v"


def _made_here(value):
    """Whether ``value`` is a tuple srcgrad built itself of the length its unpacking takes (a
    checkpointed loop's results, an inlined helper's)."""
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and (
        value.func.id.startswith(("checkpointed_loop", "split_")))


class ANF:
    def __init__(self, namer, locals_, helpers=None, derives=None):
        self.namer = namer
        self.locals = locals_
        self.derives = derives  # (a callee made in place kept in place: `derives` above)
        # the names generated code calls runtime.list_append, list_pop and setitem by
        helpers = helpers or {}
        self.list_append = helpers.get("list_append", "list_append")
        self.list_pop = helpers.get("list_pop", "list_pop")
        self.setitem = helpers.get("setitem", "setitem")
        self.check_unpacked = helpers.get("check_unpacked")
        self.helpers = helpers
        self.out = []
        self.lineno = None

    def run(self, fn_node):
        fn_node.body = self.block(fn_node.body)
        return fn_node

    def block(self, stmts):
        saved = self.out, self.lineno
        self.out = []
        for stmt in stmts:
            self.statement(stmt)
        out = self.out
        self.out, self.lineno = saved
        return out

    def statement(self, node):
        self.lineno = getattr(node, "lineno", None) or self.lineno
        handler = self._STATEMENTS.get(type(node))
        if handler is None:
            raise InternalError(f"ANF got an unchecked statement {type(node).__name__}")
        handler(self, node)

    def _assign_stmt(self, node):
        self._assign(node.targets[0], node.value)

    def _ann_assign(self, node):
        self._assign(node.target, node.value)
        last = self.out[-1] if self.out else None
        if isinstance(node.target, gast.Name) and isinstance(last, gast.Assign) and isinstance(
                last.targets[0], gast.Name) and last.targets[0].id == node.target.id:
            last.annotation = node.annotation  # `lay: Dense = P.ps[0]`: its class (methods.py)

    def _aug_assign(self, node):
        if isinstance(node.target, gast.Subscript):
            # `L[i] += v` is Python's `t = L[i]; t += v; L[i] = t`: an array item is updated in
            # place, so what else holds it (`L = [a, a]`) sees the update (normalize/sharing.py)
            index = self._index(node.target.slice)
            current = gast.Subscript(node.target.value, index, gast.Load())
            item = self._bind(current, self.namer.temp(current))
            self._emit(gast.AugAssign(gast.Name(item.id, gast.Store(), None, None), node.op,
                                      self.atom(node.value)))
            self._assign(gast.copy_location(gast.Subscript(node.target.value, index, gast.Store()),
                                            node.target), item)
            return
        # `y += v` stays an update of y, with an atom operand: whether another variable sees it
        # (`x = y`, `L = [y]`) is decided once helpers are inlined (normalize/sharing.py)
        target = gast.Name(node.target.id, gast.Store(), None, None)
        self._emit(gast.AugAssign(target, node.op, self.atom(node.value)))

    def _return(self, node):
        value = node.value if node.value is not None else gast.Constant(None, None)
        self._emit(gast.Return(self.atom(value)))

    def _expr_stmt(self, node):
        if _is_append(node.value, self.locals):
            # `hs.append(h)` as a value: `hs = list_append(hs, h)`, so the list's growth is an
            # assignment the transforms see like any other
            call = node.value
            items = call.func.value
            helper = gast.Name(self.list_append, gast.Load(), None, None)
            value = gast.Call(helper, [items, self.atom(call.args[0])], [])
            self._emit(_assign(items.id, gast.copy_location(value, call)))
        elif not isinstance(node.value, gast.Constant):  # docstrings and bare literals go
            self._emit(gast.Expr(self.simple(node.value)))

    def _assert(self, node):
        # the message is evaluated only when the test fails, as in Python: it stays as written
        self._emit(gast.Assert(self.atom(node.test), node.msg))

    def _raise(self, node):
        exc = None if node.exc is None else self.simple(node.exc)
        self._emit(gast.Raise(exc, node.cause))

    def _if(self, node):
        test = self.atom(node.test)
        lineno = node.lineno
        body, orelse = self.block(node.body), self.block(node.orelse)
        self.lineno = lineno
        self._emit(gast.If(self._truth(test, node.test), body or [gast.Pass()], orelse))

    def _truth(self, test, node):
        """The test of a branch: a variable (``if c:``; ``both`` of ``a and b``) may be rebound
        or changed by the branch (`if c: c = False`, `if acc: acc.pop()`, a helper inlined
        later that empties acc; ``both = b`` itself; ``(c := v) if c else w``); the reverse
        sweep must replay the branch on the truth the test had when it ran, not on the value
        the branch left, so that truth is taken first."""
        if not (isinstance(test, gast.Name) and test.id in self.locals):
            return test
        truth = gast.Call(self._builtin("bool"), [test], [])
        return self._bind(gast.copy_location(truth, node), self.namer.temp(truth))

    def _for(self, node):
        it = node.iter
        header = gast.Call(it.func, [self.atom(a) for a in it.args], [])
        lineno = node.lineno
        body = self.block(node.body)
        self.lineno = lineno
        loop = gast.For(node.target, gast.copy_location(header, it), body, [], None)
        loop.runs_over = getattr(node, "runs_over", None)  # (normalize/loop_lengths.py)
        self._emit(loop)

    def _jump(self, node):
        self._emit(type(node)())

    def _while(self, node):
        lineno = node.lineno
        if isinstance(node.test, (gast.Constant, gast.Name)):
            simple, pre = node.test, []
        else:
            probe = gast.Expr(node.test)
            probe.lineno = lineno
            test_stmts = self.block([probe])
            simple, pre = test_stmts[-1].value, test_stmts[:-1]
        body = self.block(node.body)
        self.lineno = lineno
        if pre:
            # the test needs statements of its own: evaluate it before the loop and at the end
            cond = self.namer.fresh(naming.COND)
            self.locals.add(cond)
            test = [*pre, _assign(cond, simple)]
            for s in test:
                s.lineno = lineno
            self.out.extend(test)
            self._emit(
                gast.While(gast.Name(cond, gast.Load(), None, None), _fall_through(body, test), [])
            )
        else:
            self._emit(gast.While(simple, body, []))

    def _builtin(self, word):
        """The name generated code calls the builtin ``word`` by (in_place_helpers)."""
        return gast.Name(self.helpers.get(word, word) if self.helpers else word, gast.Load(),
                         None, None)

    def _emit(self, stmt):
        stmt.lineno = self.lineno
        stmt.col_offset = 0
        self.out.append(stmt)

    def _assign(self, target, value):
        if isinstance(target, gast.Name) and _is_pop(value, self.locals):
            self._pop(target.id, value)
            return
        if isinstance(target, gast.Subscript):
            # `y[i] = v` as a value: `y = setitem(y, i, v)`, an overwrite of `y` in place
            index = index_value(self._index(target.slice), self._builtin("slice").id)
            helper = gast.Name(self.setitem, gast.Load(), None, None)
            call = gast.Call(helper, [target.value, index, self.atom(value)], [])
            self._emit(_assign(target.value.id, gast.copy_location(call, target)))
            return
        if isinstance(target, gast.Tuple) and not isinstance(value, gast.Tuple):
            # `a, b = f(x)`: name the value, then take it apart by index
            whole = self.atom(value)
            if not isinstance(whole, gast.Name):
                whole = self._bind(whole, self.namer.fresh(naming.PACKED))
            if self.check_unpacked is not None and not _made_here(value):
                # Python's error for another length (the reads by position would not raise)
                check = gast.Call(gast.Name(self.check_unpacked, gast.Load(), None, None),
                                  [whole, gast.Constant(len(target.elts), None),
                                   gast.Constant(_text(value), None)], [])
                self._emit(gast.Expr(gast.copy_location(check, value)))
            for i, t in enumerate(target.elts):
                item = gast.Subscript(whole, gast.Constant(i, None), gast.Load())
                self._emit(_assign(t.id, item))
            return
        if isinstance(target, gast.Tuple):
            atoms = [self.atom(v) for v in value.elts]
            names = {t.id for t in target.elts}
            # `a, b = b, a`: read every right-hand value before any target is rebound
            for i, a in enumerate(atoms):
                if isinstance(a, gast.Name) and a.id in names:
                    atoms[i] = self._bind(a, self.namer.fresh(naming.OLD.format(a.id)))
            for t, a in zip(target.elts, atoms):
                self._emit(_assign(t.id, a))
            return
        self._emit(_assign(target.id, self.simple(value)))

    def _bind(self, expr, name):
        self._emit(_assign(name, expr))
        return gast.Name(name, gast.Load(), None, None)

    def is_static(self, node):
        if isinstance(node, gast.Constant):
            return True
        if isinstance(node, gast.Name):
            return node.id not in self.locals
        if isinstance(node, gast.Attribute):
            return self.is_static(node.value)
        if isinstance(node, gast.Tuple):
            return all(self.is_static(e) for e in node.elts)
        return False

    def _static_call(self, node):
        """A call on static values only, such as ``grad(g)`` in ``grad(g)(x)``: kept in place
        as the callee, so analysis can resolve it at transform time."""
        return (
            isinstance(node, gast.Call)
            and self.is_static(node.func)
            and all(self.is_static(a) for a in node.args)
            and all(self.is_static(k.value) for k in node.keywords)
            and (self.derives is None or self.derives(node))
        )

    def _pop(self, target, call):
        """``x = stack.pop()``: read the last element, then shrink the list in place."""
        items = call.func.value
        last = gast.Subscript(items, gast.Constant(-1, None), gast.Load())
        self._emit(_assign(target, gast.copy_location(last, call)))
        helper = gast.Name(self.list_pop, gast.Load(), None, None)
        self._emit(_assign(items.id, gast.copy_location(gast.Call(helper, [items], []), call)))
        return gast.Name(target, gast.Load(), None, None)

    def atom(self, node):
        """An atom holding the value of ``node``, emitting statements as needed."""
        if _is_pop(node, self.locals):
            return self._pop(self.namer.fresh(naming.LAST.format(node.func.value.id)), node)
        if isinstance(node, gast.Name) or self.is_static(node):
            return node
        if (
            isinstance(node, gast.UnaryOp)
            and isinstance(node.op, gast.USub)
            and _is_number(node.operand)
        ):
            return gast.Constant(-node.operand.value, None)
        simple = self.simple(node)
        return self._bind(simple, self.namer.temp(simple))

    def simple(self, node):
        """``node`` with every operand replaced by an atom, at ``node``'s source location."""
        return gast.copy_location(self._simple(node), node)

    def _simple(self, node):
        handler = self._EXPRESSIONS.get(type(node))
        if handler is None:
            raise InternalError(f"ANF got an unchecked expression {type(node).__name__}")
        return handler(self, node)

    def _binop(self, node):
        left, right = self.atom(node.left), self.atom(node.right)
        if isinstance(node.op, gast.Mult):
            # `[v] * n`, `n * (a, b)`: a repetition (the same objects n times over), not a product
            for seq, count, n in ((node.left, node.right, right), (node.right, node.left, left)):
                if isinstance(seq, (gast.List, gast.Tuple)) and _is_count(count):
                    helper = gast.Name(self.helpers.get("repeat_sequence", "repeat_sequence"),
                                       gast.Load(), None, None)
                    return gast.Call(helper, [right if seq is node.right else left, n], [])
        return gast.BinOp(left, node.op, right)

    def _unaryop(self, node):
        if _is_number(node.operand) and isinstance(node.op, gast.USub):
            return self.atom(node)  # folded: -1j is a number too
        return gast.UnaryOp(node.op, self.atom(node.operand))

    def _compare(self, node):
        if len(node.ops) == 1:
            left = self.atom(node.left)
            return gast.Compare(left, node.ops, [self.atom(c) for c in node.comparators])
        # a < b < c  ->  a < b and b < c, each operand evaluated once
        atoms = [self.atom(node.left)] + [self.atom(c) for c in node.comparators]
        pairs = [gast.Compare(atoms[i], [op], [atoms[i + 1]]) for i, op in enumerate(node.ops)]
        return self._boolop(gast.And(), pairs)

    def _call(self, node):
        extremum = self._extremum(node)
        if extremum is not None:
            return extremum
        func = node.func
        if not self.is_static(func) and isinstance(func, gast.Attribute):
            method = gast.Attribute(self.atom(func.value), func.attr, gast.Load())
            func = gast.copy_location(method, func)
        elif not self.is_static(func) and not self._static_call(func):
            func = gast.copy_location(self.atom(func), func)  # (located: `cannot resolve` it)
        args = [self.atom(a) for a in node.args]
        keywords = [gast.keyword(k.arg, self.atom(k.value)) for k in node.keywords]
        return gast.Call(func, args, keywords)

    def _extremum(self, node):
        """Python's ``max`` and ``min`` in the forms that have rules, or None for any other call:
        ``max(a, b, c)`` is ``max(max(a, b), c)``; ``max(xs)`` of one iterable is ``max_of(xs)``.
        """
        func = node.func
        if not (
            isinstance(func, gast.Name)
            and func.id in ("max", "min")
            and func.id not in self.locals
            and not node.keywords
        ):
            return None
        if len(node.args) > 2:
            inner = gast.Call(func, node.args[:-1], [])
            return self._simple(gast.Call(func, [inner, node.args[-1]], []))
        helper = self.helpers.get(f"{func.id}_of")
        if len(node.args) == 1 and not isinstance(node.args[0], gast.Starred) and helper:
            helper = gast.Name(helper, gast.Load(), None, None)
            return gast.Call(helper, [self.atom(node.args[0])], [])
        return None

    def _attribute(self, node):
        if self.is_static(node):
            return node
        return gast.Attribute(self.atom(node.value), node.attr, gast.Load())

    def _subscript(self, node):
        return gast.Subscript(self.atom(node.value), self._index(node.slice), gast.Load())

    def _sequence(self, node):
        return type(node)([self.atom(e) for e in node.elts], gast.Load())

    def _dict(self, node):
        return gast.Dict(list(node.keys), [self.atom(v) for v in node.values])

    def _itself(self, node):
        return node

    def _named(self, node):
        """``(n := v)`` where it is evaluated: ``n = v``, then ``n`` (normalize/walrus.py)."""
        self._emit(_assign(node.target.id, self.simple(node.value)))
        return gast.Name(node.target.id, gast.Load(), None, None)

    def _joined(self, node):
        """An f-string stays one: each ``{value}`` an atom, its format spec as written."""
        values = []
        for part in node.values:
            if isinstance(part, gast.FormattedValue):
                spec = part.format_spec
                if spec is not None:
                    spec = self._joined(spec)
                part = gast.FormattedValue(self.atom(part.value), part.conversion, spec)
            values.append(part)
        return gast.JoinedStr(values)

    def _boolop_expr(self, node):
        return self._boolop(node.op, node.values)

    def _select(self, node):
        """``a if c else b`` as an if statement assigning a fresh name; only one side runs."""
        test = self._truth(self.atom(node.test), node.test)
        name = self.namer.fresh(naming.SELECT)
        self.locals.add(name)
        lineno = self.lineno
        body = self._branch(name, node.body)
        orelse = self._branch(name, node.orelse)
        self.lineno = lineno
        self._emit(gast.If(test, body, orelse))
        return gast.Name(name, gast.Load(), None, None)

    def _branch(self, name, expr):
        saved = self.out
        self.out = []
        self._emit(_assign(name, self.simple(expr)))
        out, self.out = self.out, saved
        return out

    def _boolop(self, op, values):
        """``a and b``: ``t = a`` then, only if ``t`` is true (false for ``or``), ``t = b``."""
        name = self.namer.fresh(naming.BOTH if isinstance(op, gast.And) else naming.EITHER)
        self.locals.add(name)
        self._emit(_assign(name, self.simple(values[0])))
        if len(values) > 1:
            lineno = self.lineno
            rest = self._branch(name, gast.BoolOp(op, values[1:]) if len(values) > 2 else values[1])
            self.lineno = lineno
            test = gast.Name(name, gast.Load(), None, None)
            if isinstance(op, gast.Or):
                test = self.atom(gast.UnaryOp(gast.Not(), test))
            else:
                test = self._truth(test, values[0])
            self._emit(gast.If(test, rest, []))
        return gast.Name(name, gast.Load(), None, None)

    def _index(self, node):
        if isinstance(node, gast.Slice):
            parts = [node.lower, node.upper, node.step]
            lower, upper, step = (None if p is None else self.atom(p) for p in parts)
            return gast.Slice(lower, upper, step)
        if isinstance(node, gast.Tuple):
            return gast.Tuple([self._index(e) for e in node.elts], gast.Load())
        return self.atom(node)

    _STATEMENTS = {
        gast.Assign: _assign_stmt,
        gast.AnnAssign: _ann_assign,
        gast.AugAssign: _aug_assign,
        gast.Return: _return,
        gast.Expr: _expr_stmt,
        gast.If: _if,
        gast.For: _for,
        gast.While: _while,
        gast.Break: _jump,
        gast.Pass: _jump,
        gast.Assert: _assert,
        gast.Raise: _raise,
    }
    _EXPRESSIONS = {
        gast.BinOp: _binop,
        gast.UnaryOp: _unaryop,
        gast.Compare: _compare,
        gast.Call: _call,
        gast.Attribute: _attribute,
        gast.Subscript: _subscript,
        gast.Tuple: _sequence,
        gast.List: _sequence,
        gast.Dict: _dict,
        gast.Name: _itself,
        gast.Constant: _itself,
        gast.JoinedStr: _joined,
        gast.IfExp: _select,
        gast.BoolOp: _boolop_expr,
        gast.NamedExpr: _named,
    }


# Methods whose result may share memory with the array they are called on.
# Array methods whose result may be the array itself or a view of it (`conj` of a real array
# is the array; `diagonal` a view)
VIEW_METHODS = {"reshape", "ravel", "transpose", "squeeze", "view", "swapaxes", "diagonal",
                "conj", "conjugate"}


def _is_pop(call, locals_):
    return (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and call.func.attr == "pop"
        and isinstance(call.func.value, gast.Name)
        and call.func.value.id in locals_
        and not call.args
        and not call.keywords
    )


def _is_append(call, locals_):
    return (
        isinstance(call, gast.Call)
        and isinstance(call.func, gast.Attribute)
        and call.func.attr == "append"
        and isinstance(call.func.value, gast.Name)
        and call.func.value.id in locals_
        and len(call.args) == 1
        and not call.keywords
    )


def _fall_through(block, stmts):
    """``block`` with ``stmts`` added at the end of every path that does not ``break``."""
    if block and isinstance(block[-1], (gast.Break, gast.Return)):
        return block
    if block and isinstance(block[-1], gast.If):
        last = block[-1]
        last.body = _fall_through(last.body, stmts)
        last.orelse = _fall_through(last.orelse, stmts) if last.orelse else _copy(stmts)
        return block
    return block + _copy(stmts)


def _copy(stmts):
    return clone(stmts)


def _assign(name, value):
    return gast.Assign([gast.Name(name, gast.Store(), None, None)], value, None)


def _is_count(node):
    """An int literal or ``len(...)``: what a list or tuple display is repeated by."""
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and node.func.id == "len")


def _is_number(node):
    """Whether ``node`` is a numeric literal (``-`` of one is folded into one constant)."""
    return isinstance(node, gast.Constant) and isinstance(node.value, (int, float, complex))
