"""NumPy calls that write into an array become the element writes they are; any other call that
may write into the function's values is refused.

Requires: an A-normal-form body after inlining (``y[i] = v`` reads ``y = setitem(y, i, v)``).
Guarantees: no statement changes an array except through ``setitem``, whose overwritten values
the transforms save and restore and whose aliases the copy pass checks. In particular:

* ``f(..., out=y)`` (a ufunc, a reduction, a scan, ``clip``, a method such as ``x.sum(out=y)``)
  computes ``f(...)`` as a new value and writes it into ``y[...]``; the call's result is ``y``;
* ``y.sort()``, ``y.partition(k)``, ``y.fill(v)``, ``y.put(i, v)``, ``np.copyto``, ``np.put``,
  ``np.put_along_axis``, ``np.place``, ``np.putmask``, ``np.fill_diagonal`` write the values they
  would write at the positions they would write them (index helpers in
  ``runtime/writes.py``); their result is None;
* ``ufunc.at(a, i, b)`` writes ``a[...] = a + scatter(b)`` (add, subtract) or
  ``a[...] = ufunc_at(ufunc, a, i, b)`` (multiply, divide, maximum, minimum);
* a call whose result is not used, or that reads the function's values and may change them in
  place (a method of an array not known to be pure, a function with neither a rule nor source),
  is an ``UnsupportedSyntaxError`` at the call: never silently ignored.

Known pure: functions with a rule (unless given ``out=``), the array methods of
``analysis.ops.METHODS``, and ``print``.

    np.exp(x, out=y)        ->      exp_x = np.exp(x)
                                    y = setitem(y, Ellipsis, exp_x)
    y.sort()                ->      sort_y = np.sort(y)
                                    y = setitem(y, Ellipsis, sort_y)
"""

from __future__ import annotations

import collections
import inspect

import gast
import numpy as np

from .. import rules, runtime
from ..analysis.ops import METHOD_KEYWORDS, METHODS
from ..astutil import local_names, ordered_walk, walk
from ..emit import naming
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING
from ..rules import random_draws
from ..runtime import writes as ir
from .call_effects import (
    IN_PLACE_HELPERS,
    MUTABLE_TYPES,
    UFUNC_OUT_AT,
    keeps,
    mutator,
    own_helper,
    shuffles,
    trusted,
)

# Array methods that write into the array they are called on, and the NumPy function computing
# the values they write (self becomes its first argument).
SORTING_METHODS = {"sort": np.sort, "partition": np.partition}


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)


def _assign(id_, value):
    return gast.Assign([gast.Name(id_, gast.Store(), None, None)], value, None)


def _is_none(atom):
    return isinstance(atom, gast.Constant) and atom.value is None


def _none():
    return gast.Constant(None, None)


def _ellipsis():
    return gast.Constant(Ellipsis, None)


def run(fn_node, ctx):
    """The pass: in-place NumPy calls become element writes; unknown writes are refused."""
    return InPlaceCalls(ctx, ctx.helpers["setitem"]).run(fn_node)


class InPlaceCalls:
    def __init__(self, ctx, setitem):
        self.ctx = ctx
        self.setitem = setitem  # the name generated code calls runtime.setitem by

    def run(self, fn_node):
        self.locals = self.ctx.local_names
        self.locals |= local_names(fn_node)  # with the temporaries of ANF and inlining
        self.tuples = {}  # name -> Tuple literal it was bound to (for `out=(y,)`)
        for n in ordered_walk(fn_node):
            if (
                isinstance(n, gast.Assign)
                and isinstance(n.targets[0], gast.Name)
                and isinstance(n.value, gast.Tuple)
            ):
                self.tuples.setdefault(n.targets[0].id, []).append(n.value)
        self.lists = self._lists(fn_node)
        self.params = {a.id for a in fn_node.args.args}
        # where each call stands and each name is read (and how often), and the names that only
        # ever hold a number or a string
        self.order, self.name_reads, self.unseen = _in_order(fn_node)
        self.reads = collections.Counter({n: len(r) for n, r in self.name_reads.items()})
        self.fresh = _fresh_names(fn_node, self.ctx.namespace, self.locals)
        fn_node.body = self._block(fn_node.body)
        return fn_node

    def _lists(self, fn_node):
        """Names that hold a list somewhere: a list literal, ``list(...)``, grown or shrunk."""
        helpers = {self.ctx.helpers.get(h) for h in ("list_append", "list_pop")} - {None}
        out = set()
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                value = n.value
                if isinstance(value, gast.List) or (
                    isinstance(value, gast.Call)
                    and (
                        isinstance(value.func, gast.Name) and value.func.id in helpers
                        or self.ctx.namespace.resolve(value.func, self.locals) is list
                    )
                ):
                    out.add(n.targets[0].id)
        return out

    # --- statements -----------------------------------------------------------------------------
    def _block(self, stmts):
        out = []
        for s in stmts:
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner:
                    setattr(s, field, self._block(inner) or [gast.Pass()])
            if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                new = self._call(s.value, None, s)
            elif (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and isinstance(s.value, gast.Call)
            ):
                new = self._call(s.value, s.targets[0].id, s)
            else:
                new = None
            if new is None:
                out.append(s)
                continue
            for n in new:
                n.lineno = s.lineno
                n.col_offset = getattr(s, "col_offset", 0)
                for e in ordered_walk(n):
                    if isinstance(e, gast.expr) and getattr(e, "lineno", None) is None:
                        gast.copy_location(e, s.value)
            out.extend(new)
        return out

    def _call(self, call, target, stmt):
        """The statements replacing ``stmt`` (``target = call`` or the bare ``call``), or None
        to keep it."""
        func = call.func
        if isinstance(func, gast.Attribute) and self._is_local(func.value):
            return self._method(call, target)
        fn = self.ctx.namespace.resolve(func, self.locals)
        if fn is MISSING:
            if target is None and self._reads_locals(call):
                raise self._refuse(
                    call, f"a call of `{_dotted(func)}` whose result is not used (srcgrad does "
                    f"not know whether it changes its arguments in place)"
                )
            self._foreign_names(call, f"a call of `{_dotted(func)}`")
            return None
        mutates = mutator(fn, call)
        if mutates is not None:
            raise self._refuse(call, mutates, "call a method of the array or list, or build a "
                               "new value (`y = f(x)`)")
        self._foreign_writes(fn, call)
        if random_draws.is_draw(fn):
            drawn = self._draw_into(call, target)
            if drawn is not None:
                return drawn
        if _is_ufunc_at(fn):
            return self._ufunc_at(fn.__self__, call, target)
        writer = WRITERS.get(_key(fn))
        if writer is not None:
            return writer(self, call, target)
        out = self._out_of(fn, call.args, call.keywords, call)
        if out is not None:
            return self._write_result(call, fn, out, target)
        if target is not None and not self._pure(fn):
            self._opaque_writes(fn, call)
        if target is None and not self._pure(fn) and self._reads_locals(call):
            if random_draws.is_draw(fn) or own_helper(fn) or isinstance(
                getattr(fn, "__self__", None), (list, dict, set)
            ):  # (a global list's `append`: it changes the global, not what it is given)
                # a draw whose numbers are not used still advances the generator: it runs
                # (activity analysis refuses it if it is given a value that carries gradient);
                # srcgrad's own helpers (`no_gradient` raising) change none of their arguments
                return [_assign(self._fresh(naming.UNUSED), call)]
            # any other call made for its effect may change what it is given in place, an
            # array without gradient too (an index, a mask), which the derivative reads
            raise self._refuse(
                call,
                f"a call of `{_dotted(func)}` whose result is not used (srcgrad does not know "
                f"whether it changes its arguments in place)",
            )
        return None

    def _method(self, call, target):
        func = call.func
        owner, attr = func.value, func.attr
        if owner.id in self.lists:
            if target is None and attr not in METHODS:
                raise self._refuse(call, f"the list method `.{attr}()` of `{owner.id}`",
                                   "build a new list instead")
            return None  # the classifier decides about a list method whose result is used
        if attr in SORTING_METHODS:
            checked = []
            if owner.id in self.params:  # a list argument is sorted as a list: refused when run
                what = gast.Constant(f"{owner.id}.{attr}()", None)
                check, owner = self._helper(
                    ir.array_only, [owner, what], naming.ARRAY_ONLY.format(owner.id)
                )
                checked.append(check)
            args = [owner] + list(call.args)
            value = gast.Call(self._np(attr), args, list(call.keywords))
            name = func.value.id
            return checked + self._write(name, value, target, _none(), f"{name}_{attr}ed")
        if attr == "fill":
            (value,) = self._bind(call, f"{owner.id}.fill", ("value",), 1)
            return self._write_atom(owner.id, _ellipsis(), value, target, _none())
        if attr == "put":
            ind, v, mode = self._bind(call, f"{owner.id}.put", ("indices", "values", "mode"), 2)
            return self._put(owner, ind, v, mode, target)
        fn = METHODS.get(attr)
        if fn is None and attr in random_draws.METHODS:
            drawn = self._draw_into(call, target)
            if drawn is not None:
                return drawn
            if attr == "shuffle":
                raise self._shuffle_refusal(call, owner.id, call.args)
            # a draw whose numbers are not used still advances the generator: it runs
            return None if target is not None else [_assign(self._fresh(naming.UNUSED), call)]
        if fn is None:
            if target is not None:
                return None  # the classifier refuses a method it does not know
            raise self._refuse(
                call,
                f"the method `.{attr}()` of `{owner.id}` (srcgrad does not know whether it "
                f"changes `{owner.id}` in place)",
            )
        keywords = [
            gast.keyword(METHOD_KEYWORDS.get((attr, k.arg), k.arg), k.value)
            for k in call.keywords
        ]
        out = self._out_of(fn, [owner] + list(call.args), keywords, call)
        if out is not None:
            return self._write_result(call, fn, out, target, method=True)
        return None

    def _opaque_writes(self, fn, call):
        """A call whose result is used, of a function srcgrad neither has a rule for nor reads
        (compiled code: a numba or Cython function, a BLAS routine), may still write into an
        array or list it is given. Refused when what it is given is read anywhere else in the
        function (the derivative would read the changed value where the function read the old
        one); given a copy made for the call (``g(y.copy())``), it may write into it freely."""
        output = _output_into(fn, call)
        if output is not None and self._is_local(output):
            raise self._refuse(
                call, f"`output=` into `{output.id}` in a call of `{_dotted(call.func)}` (it "
                f"writes its result into `{output.id}` in place)",
                f"write `{output.id} = {_dotted(call.func)}(...)` without `output=`")
        if trusted(fn):
            return
        given = [a.value if isinstance(a, gast.Starred) else a for a in call.args]
        given += [k.value for k in call.keywords]
        here = collections.Counter(
            n.id for n in walk(call) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
        for atom in given:
            if not self._is_local(atom) or atom.id in self.fresh["numbers"]:
                continue
            if self.reads[atom.id] > here[atom.id]:
                why = "is read elsewhere in the function"
            elif atom.id not in self.params and atom.id not in self.fresh["values"]:
                why = "may share memory with another value"
            else:
                continue  # a copy made for the call, or an argument read only here
            raise self._refuse(
                call, f"`{_dotted(call.func)}` given `{atom.id}`, which {why}: "
                f"`{_dotted(call.func)}` has neither a gradient rule nor Python source, so "
                f"srcgrad cannot tell whether it changes `{atom.id}` in place",
                f"pass it a copy made for the call (`{atom.id}.copy()`), or register a rule for "
                f"it (srcgrad.adjoint)")

    def _foreign_writes(self, fn, call):
        """A call that may change in place an array or container the function does not own (a
        global, a closure variable): srcgrad reads such a value as one value wherever the
        function reads it, so a change between two reads is refused. Code run by `exec` or
        `eval` may change anything, and is refused."""
        if any(fn is f for f in (exec, eval)):
            raise self._refuse(
                call, f"`{fn.__name__}` (srcgrad cannot see what the code it runs changes)",
                "write the code out in the function")
        func = call.func
        if any(fn is f for f in SETTERS) and call.args and not self._is_local(call.args[0]):
            self._foreign(call, call.args[0], f"`{_dotted(func)}(...)`")
        if isinstance(func, gast.Attribute) and not self._is_local(func.value):
            owner = self.ctx.namespace.resolve(func.value, self.locals)
            if isinstance(owner, MUTABLE_TYPES) and not keeps(owner, func.attr, call):
                self._foreign(call, func.value, f"`{_dotted(func)}(...)`")
        if shuffles(fn):  # whatever it is given: an index read before and after is two values
            bound = random_draws.is_draw(fn)
            owner = _dotted(func.value) if bound and isinstance(func, gast.Attribute) else "rng"
            raise self._shuffle_refusal(call, owner, call.args[0 if bound else 1:])
        if not trusted(fn):
            self._foreign_names(call, f"`{_dotted(func)}`")

    def _shuffle_refusal(self, call, owner, given):
        """``{owner}.shuffle(given[0])`` changes what it is given in place: the refusal."""
        shuffled = _dotted(given[0]) if given else "x"
        return self.ctx.location.error(
            UnsupportedSyntaxError, call, random_draws.shuffle_refusal(owner, shuffled))

    def _foreign_names(self, call, what):
        """``_foreign`` for every array, list or dict from outside the function ``call`` reads
        (given to it, or to a call in it)."""
        for n in walk(call):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and not self._is_local(n):
                if isinstance(self.ctx.namespace.resolve(n, self.locals), MUTABLE_TYPES):
                    self._foreign(call, n, f"{what} given `{n.id}`")

    def _foreign(self, call, atom, what):
        """Refuse ``call``, which may change ``atom`` (held outside the function) in place,
        when the function reads ``atom`` before it (or in a loop around it): every read after
        the last change sees the value the derivative reads, as in Python."""
        root = atom
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name):
            return
        here = {id(n) for n in walk(call)}
        at, loops = self.order.get(id(call), (None, ()))
        for node, (index, around) in self.name_reads.get(root.id, ()):
            if id(node) in here or id(node) in self.unseen:
                continue
            if at is None or index < at or set(loops) & set(around):
                break
        else:
            return  # changed, then read only after it: every read sees the value Python sees
        name = _dotted(atom)
        raise self._refuse(
            call, f"{what}, which may change `{name}` in place: `{name}` is not the function's "
            f"own (a global or a closure variable) and is read before the change (or in the same "
            f"loop), where srcgrad reads it as one value",
            f"make a copy of your own first (`{name.replace('.', '_')}_own = {name}.copy()`) "
            f"and use it throughout the function")

    def _draw_into(self, call, target):
        """A draw given ``out=y`` (``rng.random(out=y)``, ``rng.permuted(x, out=y)``): it fills
        a new array of y's shape and dtype, copied into ``y`` as an element write (the same
        numbers); None for a draw without ``out``."""
        outs = [k.value for k in call.keywords if k.arg == "out" and not _is_none(k.value)]
        if not outs:
            return None
        out = self._out_target(outs[0], call)
        buffer = self._fresh(naming.DRAW_BUFFER.format(out.id))
        empty = _assign(buffer, gast.Call(self._np("empty_like"), [_name(out.id)], []))
        keywords = [gast.keyword("out", _name(buffer)) if k.arg == "out" else k
                    for k in call.keywords]
        draw = gast.Call(call.func, list(call.args), keywords)
        return [empty] + self._write(out.id, draw, target, _name(out.id),
                                     naming.DRAWN.format(out.id))

    # --- out= -----------------------------------------------------------------------------------
    def _out_of(self, fn, args, keywords, call):
        """``(out atom, args, keywords)`` when the call writes its result into ``out=``, else
        None; the returned args and keywords are the call's without ``out``."""
        if isinstance(fn, np.ufunc):
            return self._ufunc_out(fn, args, keywords, call)
        if isinstance(getattr(fn, "__self__", None), np.ufunc) and fn.__name__ in UFUNC_OUT_AT:
            return self._ufunc_method_out(fn, args, keywords, call)
        if not (getattr(fn, "__module__", None) or "").startswith("numpy"):
            return None  # `out` means NumPy's output buffer only for NumPy's functions
        signature = _signature(fn)
        if signature is None or "out" not in signature.parameters:
            if any(k.arg == "out" and not _is_none(k.value) for k in keywords):
                raise self._refuse(call, f"`out=` in a call of {_describe(fn)}")
            return None
        try:
            bound = signature.bind_partial(*args, **{k.arg: k.value for k in keywords if k.arg})
        except TypeError:
            return None  # the classifier reports the mismatch
        out = bound.arguments.get("out")
        if out is None or _is_none(out):
            return None
        params = list(signature.parameters)
        cut = params.index("out")
        kept_args = list(args[:cut])
        kept_keywords = [k for k in keywords if k.arg != "out"]
        # positional arguments after `out` become keywords
        moved = [gast.keyword(p, value) for p, value in zip(params[cut + 1:], args[cut + 1:])]
        return self._out_target(out, call), kept_args, kept_keywords + moved

    def _ufunc_out(self, fn, args, keywords, call):
        """``_out_of`` for a ufunc, whose outputs may also come as positional arguments after
        its inputs."""
        outs = list(args[fn.nin:])
        args = list(args[:fn.nin])
        rest = []
        for k in keywords:
            if k.arg == "out":
                outs.append(k.value)
            else:
                rest.append(k)
        outs = [o for o in outs if not _is_none(o)]
        if not outs:
            return None
        if len(outs) > 1 or fn.nout > 1:
            raise self._refuse(call, f"several outputs (`out=`) of np.{fn.__name__}")
        return self._out_target(outs[0], call), args, rest

    def _ufunc_method_out(self, fn, args, keywords, call):
        """``_out_of`` for ``ufunc.reduce``, ``accumulate``, ``reduceat`` and ``outer``, whose
        ``out`` may also come by position (after ``array, axis, dtype``)."""
        at = UFUNC_OUT_AT[fn.__name__]
        out = [k.value for k in keywords if k.arg == "out"]
        if at is not None and len(args) > at:
            out.append(args[at])
        out = [o for o in out if not _is_none(o)]
        if not out:
            return None
        args = list(args[:at]) if at is not None else list(args)
        rest = [k for k in keywords if k.arg != "out"]
        return self._out_target(out[0], call), args, rest

    def _out_target(self, out, call):
        if isinstance(out, gast.Name) and len(self.tuples.get(out.id, ())) == 1:
            elts = self.tuples[out.id][0].elts
            if len(elts) != 1:
                raise self._refuse(call, "several outputs in `out=`")
            out = elts[0]
        if not self._is_local(out):
            raise self._refuse(
                call, f"`out=` into `{_dotted(out)}`, which is not an array of the function's own"
            )
        return out

    def _write_result(self, call, fn, found, target, method=False):
        out, args, keywords = found
        if any(k.arg == "where" for k in keywords):
            raise self._refuse(call, "`where=` together with `out=`")
        if method:
            # the method without `out`, its other arguments as the user spelled them
            given = [k for k in call.keywords if k.arg != "out"]
            moved = keywords[len(given):]
            func = gast.Attribute(args[0], call.func.attr, gast.Load())
            value = gast.Call(func, args[1:], given + moved)
        else:
            value = gast.Call(call.func, args, keywords)
        written = self._write(out.id, value, target, _name(out.id))
        # NumPy's error where the result is larger than `out` (`g[...] = v` would drop v's
        # leading axes of length 1): runtime/writes.py
        operands = [_name(out.id), _name(written[0].targets[0].id)]
        if _broadcasts_into_out(fn):
            helper = self._ref(ir.inplace_target, ir.inplace_target.__name__)
            check = gast.Call(helper, operands, [])
        else:  # a reduction, a scan...: NumPy wants out= of the result's own shape
            size = gast.Constant(fn is np.round or fn is np.around, None)
            check = gast.Call(self._ref(ir.exact_target, ir.exact_target.__name__),
                              operands + [size], [])
        return written[:1] + [gast.Expr(check)] + written[1:]

    # --- the write ------------------------------------------------------------------------------
    def _write(self, array, value, target, result, temp=None):
        """``v = value; array[...] = v``, then ``target = result`` (the call's own result) when
        the call's result is used."""
        held = self._fresh(temp) if temp else self.ctx.namer.temp(value)
        self.locals.add(held)
        return [_assign(held, value)] + self._write_atom(array, _ellipsis(), _name(held), target,
                                                          result)

    def _write_atom(self, array, index, atom, target, result):
        call = gast.Call(_name(self.setitem), [_name(array), index, atom], [])
        out = [_assign(array, call)]
        if target is not None:
            out.append(_assign(target, result))
        return out

    def _fresh(self, base):
        name = self.ctx.namer.fresh(base)
        self.locals.add(name)
        return name

    def _helper(self, fn, args, base):
        """``name = fn(*args)`` for a runtime helper; returns (statement, Name)."""
        held = self._fresh(base)
        return _assign(held, gast.Call(self._ref(fn, fn.__name__), list(args), [])), _name(held)

    def _ref(self, obj, preferred):
        return _name(self.ctx.global_name(obj, preferred))

    def _np(self, attr):
        return gast.Attribute(self._ref(np, "np"), attr, gast.Load())

    def _indexed_write(self, array, index_stmt, values, sources_fn, source_args, target):
        """``array[index] = np.take(values, sources)``: the values each position receives."""
        index_stmt, index = index_stmt
        sources_stmt, sources = self._helper(sources_fn, source_args, naming.SOURCES)
        taken = self._fresh(naming.TAKEN.format(_dotted(values)))
        take = _assign(taken, gast.Call(self._np("take"), [values, sources], []))
        return [index_stmt, sources_stmt, take] + self._write_atom(
            array.id, index, _name(taken), target, _none()
        )

    def _put(self, array, ind, values, mode, target):
        mode = mode if mode is not None else gast.Constant("raise", None)
        index = self._helper(ir.put_index, [array, ind, mode], naming.PUT_INDEX)
        return self._indexed_write(array, index, values, ir.put_sources, [values, ind], target)

    # --- np.copyto, np.put, ... -----------------------------------------------------------------
    def _copyto(self, call, target):
        dst, src, _, where = self._bind(call, "np.copyto", ("dst", "src", "casting", "where"), 2)
        self._array_argument(dst, call, "np.copyto")
        if where is None or (isinstance(where, gast.Constant) and where.value is True):
            return self._write_atom(dst.id, _ellipsis(), src, target, _none())
        # only where `where` holds: the old values elsewhere
        chosen = gast.Call(self._np("where"), [where, src, dst], [])
        return self._write(dst.id, chosen, target, _none(), f"{dst.id}_copied")

    def _np_put(self, call, target):
        array, ind, v, mode = self._bind(call, "np.put", ("a", "ind", "v", "mode"), 3)
        self._array_argument(array, call, "np.put")
        return self._put(array, ind, v, mode, target)

    def _place(self, call, target):
        arr, mask, vals = self._bind(call, "np.place", ("arr", "mask", "vals"), 3)
        self._array_argument(arr, call, "np.place")
        index = self._helper(ir.mask_index, [arr, mask], naming.PLACE_INDEX)
        return self._indexed_write(arr, index, vals, ir.place_sources, [vals, mask], target)

    def _putmask(self, call, target):
        a, mask, values = self._bind(call, "np.putmask", ("a", "mask", "values"), 3)
        self._array_argument(a, call, "np.putmask")
        index = self._helper(ir.mask_index, [a, mask], naming.PUTMASK_INDEX)
        return self._indexed_write(a, index, values, ir.putmask_sources, [values, mask], target)

    def _fill_diagonal(self, call, target):
        a, val, wrap = self._bind(call, "np.fill_diagonal", ("a", "val", "wrap"), 2)
        self._array_argument(a, call, "np.fill_diagonal")
        wrap = wrap or gast.Constant(False, None)
        index = self._helper(ir.diagonal_index, [a, wrap], naming.DIAGONAL_INDEX)
        return self._indexed_write(a, index, val, ir.diagonal_sources, [val, index[1]], target)

    def _put_along_axis(self, call, target):
        arr, indices, values, axis = self._bind(
            call, "np.put_along_axis", ("arr", "indices", "values", "axis"), 4
        )
        self._array_argument(arr, call, "np.put_along_axis")
        stmt, index = self._helper(ir.along_axis_index, [arr, indices, axis], naming.ALONG_INDEX)
        return [stmt] + self._write_atom(arr.id, index, values, target, _none())

    def _ufunc_at(self, ufunc, call, target):
        name = f"np.{ufunc.__name__}.at"
        if call.keywords or len(call.args) != 3:
            raise self._refuse(call, f"`{name}` other than `{name}(a, indices, b)`")
        a, indices, b = call.args
        self._array_argument(a, call, name)
        if ufunc is np.add or ufunc is np.subtract:
            # a + scatter(b): repeated indices add up, as the adjoint of a read x[i] does
            item = self._fresh(naming.ITEM.format(a.id))
            read = _assign(item, gast.Subscript(a, indices, gast.Load()))
            spread_stmt, spread = self._helper(runtime.broadcast_like, [b, _name(item)],
                                               naming.SPREAD.format(_dotted(b)))
            scatter_stmt, scatter = self._helper(runtime.getitem_grad, [spread, a, indices],
                                                 naming.SCATTERED)
            op = gast.Add() if ufunc is np.add else gast.Sub()
            value = gast.BinOp(a, op, scatter)
            return [read, spread_stmt, scatter_stmt] + self._write(
                a.id, value, target, _none(), naming.AT.format(a.id)
            )
        if not any(ufunc is u for u in ir.AT_UFUNCS):
            raise self._refuse(
                call, f"`{name}` (srcgrad differentiates the `.at` of add, subtract, multiply, "
                f"divide, maximum and minimum)"
            )
        value = gast.Call(self._ref(ir.ufunc_at, "ufunc_at"),
                          [self._np(ufunc.__name__), a, indices, b], [])
        return self._write(a.id, value, target, _none(), naming.AT.format(a.id))

    # --- checks ---------------------------------------------------------------------------------
    def _pure(self, fn):
        if any(fn is h for h in IN_PLACE_HELPERS):
            return False
        return rules.lookup(fn) is not None

    def _is_local(self, atom):
        return isinstance(atom, gast.Name) and atom.id in self.locals

    def _reads_locals(self, call):
        return any(
            isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.locals
            for n in walk(call)
        )

    def _array_argument(self, atom, call, what):
        if not self._is_local(atom):
            raise self._refuse(
                call, f"`{what}` into `{_dotted(atom)}`, which is not an array of the "
                f"function's own"
            )

    def _bind(self, call, what, params, required):
        """The call's arguments for ``params`` (None where not given), by position or keyword;
        the first ``required`` must be given."""
        if len(call.args) > len(params):
            raise self._refuse(call, f"`{what}` with more than {len(params)} arguments")
        values = list(call.args) + [None] * (len(params) - len(call.args))
        for k in call.keywords:
            if k.arg not in params or values[params.index(k.arg)] is not None:
                raise self._refuse(call, f"`{what}` with the keyword `{k.arg}`")
            values[params.index(k.arg)] = k.value
        missing = [p for p, v in zip(params[:required], values) if v is None]
        if missing:
            raise self._refuse(call, f"`{what}` without its argument `{missing[0]}`")
        return values

    def _refuse(self, node, what, advice=None):
        advice = advice or (
            "write the new values as a new array (`y = f(x)`) or into `y[...] = ...`"
        )
        return self.ctx.location.error(
            UnsupportedSyntaxError, node, f"srcgrad does not support {what} here; {advice}"
        )


def _output_into(fn, call):
    """The array a SciPy function is given as ``output=`` (``scipy.ndimage``), or None."""
    if not (getattr(fn, "__module__", None) or "").startswith("scipy"):
        return None
    signature = _signature(fn)
    if signature is None or "output" not in signature.parameters:
        return None
    try:
        bound = signature.bind_partial(*call.args, **{k.arg: k.value for k in call.keywords
                                                       if k.arg})
    except TypeError:
        return None
    output = bound.arguments.get("output")
    return output if isinstance(output, gast.Name) else None


def _fresh_names(fn_node, namespace, locals_):
    """``{"numbers": names every assignment binds to a number or string (a constant, ``len``,
    ``int``, ``float``, ``round``, ``bool``, ``str`` of something), "values": names every
    assignment binds to a new object no other name holds (arithmetic, a literal of constants,
    ``.copy()``, an array creator, a ufunc)}``."""
    from .inplace import CREATORS

    def kind(value):
        if isinstance(value, gast.Constant):
            return "numbers" if isinstance(value.value, (int, float, complex, str, bool)) else None
        if isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            return "values"
        if isinstance(value, (gast.List, gast.Tuple)):
            return "values" if all(isinstance(e, gast.Constant) for e in value.elts) else None
        if not isinstance(value, gast.Call):
            return None
        if isinstance(value.func, gast.Attribute) and value.func.attr in ("copy", "flatten"):
            return "values"
        fn = namespace.resolve(value.func, locals_)
        if any(fn is f for f in (len, int, float, round, bool, str)):
            return "numbers"
        if isinstance(fn, np.ufunc) and not value.keywords or any(fn is c for c in CREATORS):
            return "values"
        return None

    kinds = {}
    for n in walk(fn_node):
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            found = kind(n.value)
            name = n.targets[0].id
            kinds[name] = found if kinds.get(name, found) == found else None
        elif isinstance(n, (gast.For, gast.AugAssign)):
            kinds.update({t.id: None for t in walk(n.target) if isinstance(t, gast.Name)})
    return {k: {v for v, found in kinds.items() if found == k} for k in ("numbers", "values")}


def _is_ufunc_at(fn):
    return getattr(fn, "__name__", None) == "at" and isinstance(
        getattr(fn, "__self__", None), np.ufunc
    )


def _key(fn):
    try:
        hash(fn)
    except TypeError:
        return id(fn)
    return fn


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        rule = rules.lookup(fn)
        return rule.signature if rule is not None else None


def _describe(fn):
    name = getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", "") or ""
    return f"np.{name}" if module.startswith("numpy") else f"`{name}`"


def _in_order(fn_node):
    """Each call's place in ``fn_node`` (a number increasing in the order the source reads,
    the loops around it), for each name the nodes reading it with theirs, and the reads that
    see nothing of the value (``log`` of ``log.append(v)``: a change that reads nothing)."""
    order, reads, unseen = {}, collections.defaultdict(list), set()
    count = iter(range(1 << 62))

    def visit(node, loops):
        place = (next(count), loops)
        if isinstance(node, gast.Call):
            order[id(node)] = place
            if isinstance(node.func, gast.Attribute) and node.func.attr in BLIND_CHANGES:
                unseen.add(id(node.func.value))
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            reads[node.id].append((node, place))
        if isinstance(node, (gast.For, gast.While)):
            loops = loops + (id(node),)
        for child in gast.iter_child_nodes(node):
            visit(child, loops)

    visit(fn_node, ())
    return order, reads, unseen


def _dotted(node):
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, gast.Constant):
        return repr(node.value)
    if isinstance(node, gast.Call):
        return f"{_dotted(node.func)}(...)"
    return type(node).__name__


# Methods that change a list, dict or set without reading what it holds.
BLIND_CHANGES = {"append", "extend", "insert", "add", "update", "clear"}

# Calls that set or delete an attribute of the object they are given first.
SETTERS = (setattr, delattr, object.__setattr__, object.__delattr__)

WRITERS = {
    np.copyto: InPlaceCalls._copyto,
    np.put: InPlaceCalls._np_put,
    np.place: InPlaceCalls._place,
    np.putmask: InPlaceCalls._putmask,
    np.fill_diagonal: InPlaceCalls._fill_diagonal,
    np.put_along_axis: InPlaceCalls._put_along_axis,
}


def _broadcasts_into_out(fn):
    """Whether NumPy broadcasts ``fn``'s result into a larger ``out=`` (a ufunc, its
    ``outer``, ``np.clip``, ``np.fix``): a reduction or a scan requires the result's shape."""
    if isinstance(fn, np.ufunc) or fn is np.clip or fn is np.fix:
        return True
    return isinstance(getattr(fn, "__self__", None), np.ufunc) and fn.__name__ == "outer"
