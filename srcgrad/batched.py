"""A batched reverse sweep: a pullback's ``back`` run once for many seeds (reverse ``jacobian``).

Requires: a generated pullback (``f_pullback(*args) -> (value, back)``, its text registered for
``source()``). Guarantees: ``seeded(pullback)`` is the same pullback returning a third function,
``back_many(seeds)``: the sweep of ``back`` with every cotangent an array of shape
``(k,) + shape``, row ``i`` the value ``back(seeds[i])`` computes (srcgrad/runtime/batched.py);
or ``None`` when the sweep does something that cannot be written so. A Jacobian then calls
``back_many`` once per block of output elements instead of ``back`` once per element: one pass
over the tape (a loop's saved values, the primal's arrays) instead of ``k``, its products matrix
products.

Which names are batched: the seed, and every name the sweep assigns a value computed from a
batched one (to a fixed point, whatever the order). A batched name assigned a value that is not
(the zeros a cotangent starts from) gets that value in every row (``tile``). What may touch a
batched value: ``+ - * / **`` and unary minus (each row broadcast as the per-seed value would
be), ``@`` with one batched operand, NumPy ufuncs of one argument, and the runtime helpers
below (array reads and writes at basic and advanced indices, list, tuple and dict cotangents,
max/min, stack/concatenate, dot/einsum, cumsum), each replaced by its batched twin; a read
at an index (the same index in every row; a list of cotangents' item); a helper of
``ROW_BY_ROW`` or a NumPy function writing into no argument, called once per row (``rowwise``:
the per-seed call itself, lists of cotangents read and stacked item by item); a
batched value anywhere else (an index, an attribute, a test, a call of anything else, a name
``back`` takes as a default) and the sweep is refused here, at generation. A sweep returning several
gradients (a tuple ``wrt``) returns each batched. What a batched
helper cannot be sure to compute row by row as the per-seed one (a complex value, an unusual
rank) raises ``Unbatched`` when it runs, and the Jacobian calls ``back`` per seed instead.

    def back(seed):                                def back_many(seed):
        dy = check_seed(seed, y)                       seeds = many_count(seed)
        dx = dy * np.cos(x)              ->            dy = many_check_seeds(seed, y)
        return cast_like(dx, x)                        dx = many_binop('*', dy, np.cos(x),
                                                                       True, False)
                                                       return many_cast_like(dx, x)
"""

from __future__ import annotations

import builtins
import copy
from typing import Any

import gast
import numpy as np

from . import runtime, transforms
from .astutil import walk
from .emit import guard, naming
from .emit.compile import compile_function
from .emit.naming import Namer
from .emit.unparse import comment, unparse
from .errors import SrcgradError
from .frontend.source import GENERATED_SOURCE
from .runtime import batched

# per-seed helper -> (batched helper, the positions of its arguments that may be batched)
TWINS = {
    "check_seed": ("check_seeds", (0,)),
    "unbroadcast": ("unbroadcast", (0,)),
    "unreduce": ("unreduce", (0,)),
    "cast_like": ("cast_like", (0,)),
    "as_like": ("as_like", (0,)),
    "reshape_like": ("reshape_like", (0,)),
    "getitem_grad": ("getitem_grad", (0,)),
    "copy_grad": ("copy_grad", (0,)),
    "matmul_vjp_left": ("matmul_vjp_left", (0,)),
    "matmul_vjp_right": ("matmul_vjp_right", (0,)),
    "stack_grad": ("stack_grad", (0,)),
    "concatenate_grad": ("concatenate_grad", (0,)),
    "chooser_grad": ("chooser_grad", (0,)),
    "dot_vjp_left": ("dot_vjp_left", (0,)),
    "dot_vjp_right": ("dot_vjp_right", (0,)),
    "einsum_vjp": ("einsum_vjp", (0,)),
    "take_item": ("take_item", (0,)),
    "zero_item": ("zero_item", (0,)),
    "copy_array": ("copy_array", (0,)),
    "cumsum_grad": ("cumsum_grad", (0,)),
}
# per-seed helpers without a twin, called once per row by ``rowwise`` (each reads its arguments
# and writes only into arrays it makes: no effect a second call could see)
ROW_BY_ROW = frozenset("""
    average_grad average_weights_grad cholesky_vjp column_stack_grad cond_vjp convolve_vjp
    corrcoef_vjp correlate_vjp cov_vjp cross_vjp cumprod_grad det_vjp diag_grad diagonal_grad
    diff_grad diff_part_grad dstack_grad ediff1d_grad eig_vectors_vjp eigh_vjp eigvals_vjp
    eigvalsh_vjp fit_axes gradient_vjp hermitian_weights hstack_grad inner_vjp_left
    inner_vjp_right kron_vjp linspace_grad lstsq_vjp mT matrix_norm_grad matrix_power_vjp
    mean_grad norm_grad pad_grad permutation_grad pinv_vjp polyfit_grad prod_grad ptp_grad
    qr_vjp quantile_grad select_grad slogdet_vjp solve_vjp_a solve_vjp_b split_grad
    hsplit_grad stack_cotangents svd_vjp tensordot_vjp_left tensordot_vjp_right trace_grad
    trapezoid_grad var_grad vector_norm_grad vstack_grad""".split())
# NumPy functions that write into an argument (every other one returns a new value)
WRITERS = (np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis)
OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**"}


AGAIN = "__srcgrad_many__"  # the batched twin of a regenerated pullback, made once


class Refused(SrcgradError):
    """The sweep does something a batched sweep cannot write (said in the message; never reaches
    the user: the Jacobian then calls the per-seed sweep)."""


def seeded(pullback: Any) -> Any:
    """``pullback`` returning ``(value, back, back_many)``, or ``None`` (see the module)."""
    try:
        return batched_pullback(pullback)
    except Exception:  # noqa: BLE001  (Refused, or text it cannot read: one sweep per seed)
        return None


def batched_pullback(pullback):
    """``seeded``, raising :class:`Refused` (with the reason) where it returns ``None``."""
    entry = GENERATED_SOURCE.get(getattr(pullback, "__code__", None))
    if entry is None or not getattr(pullback, "__closure__", None):
        raise Refused("not a generated pullback")
    top = gast.parse(entry[0]).body[0]
    ret = top.body[-1]
    if not (isinstance(ret, gast.Return) and isinstance(ret.value, gast.Tuple)
            and len(ret.value.elts) == 2 and isinstance(ret.value.elts[1], gast.Name)):
        raise Refused("not a pullback returning (value, back)")
    back = next((s for s in top.body if isinstance(s, gast.FunctionDef)
                 and s.name == ret.value.elts[1].id), None)
    if back is None:
        raise Refused("no back")
    namer = Namer({n.id for n in walk(top) if isinstance(n, gast.Name)} | {top.name, back.name})
    names = {stem: namer.fresh(naming.MANY.format(stem)) for stem in batched.HELPERS}
    names[None] = namer.fresh(naming.SEEDS)
    many = copy.deepcopy(back)
    many.name = namer.fresh(naming.BACK_MANY)
    many.body = _Sweep(many, _resolver(pullback, top), names).rewrite()
    top.body.insert(top.body.index(back) + 1, many)
    ret.value.elts.append(gast.Name(many.name, gast.Load(), None, None))
    extras = {names[stem]: fn for stem, fn in batched.HELPERS.items()}
    if top.body and guard.is_guard(top.body[0], pullback):
        # a function it inlined was redefined: the batched twin of the regenerated pullback
        redo, held = namer.fresh(naming.MANY_AGAIN), namer.fresh(naming.BACK)
        extras.update({redo: again, held: pullback})
        called = top.body[0].body[0].value
        called.func = gast.Call(gast.Name(redo, gast.Load(), None, None),
                                [gast.Name(held, gast.Load(), None, None)], [])
    made = compile_function(unparse(top) + "\n", top.name, pullback, extras)
    made.__srcgrad_depends__ = getattr(pullback, "__srcgrad_depends__", ())
    return made


def again(pullback):
    """The batched twin of ``pullback`` regenerated (a function it inlined was redefined); if
    that one cannot be batched, it returns ``None`` for ``back_many`` (one sweep per seed)."""
    fresh = transforms.refreshed(pullback)
    made = fresh.__dict__.get(AGAIN)
    if made is None:
        made = seeded(fresh)
        if made is None:
            def made(*args, **kwargs):
                return (*fresh(*args, **kwargs), None)
        fresh.__dict__[AGAIN] = made
    return made


def _resolver(pullback, top):
    """The object a name (or ``module.attr``) of the generated text stands for; ``None`` for a
    local name of the pullback."""
    local = {n.id for n in walk(top) if isinstance(n, gast.Name)
             and isinstance(n.ctx, (gast.Store, gast.Param, gast.Del))}
    local |= {n.name for n in walk(top) if isinstance(n, gast.FunctionDef)}
    cells = dict(zip(pullback.__code__.co_freevars, pullback.__closure__))

    def resolve(node):
        if isinstance(node, gast.Attribute):
            base = resolve(node.value)
            return None if base is None else getattr(base, node.attr, None)
        if not isinstance(node, gast.Name) or node.id in local:
            return None
        if node.id in cells:
            return cells[node.id].cell_contents
        return pullback.__globals__.get(node.id, getattr(builtins, node.id, None))

    return resolve


def _row_by_row(fn):
    """Whether ``fn`` of one batched argument gives each row what it gives per seed: a NumPy
    ufunc of one argument, ``np.real``, ``np.imag``."""
    return (isinstance(fn, np.ufunc) and fn.nin == 1 and fn.nout == 1) or any(
        fn is f for f in (np.real, np.imag))


class _Sweep:
    """The rewrite of one ``back`` into its batched twin."""

    def __init__(self, back, resolve, names):
        self.back, self.resolve, self.names = back, resolve, names
        self.seed = back.args.args[0].id
        self.many = self._batched_names()
        params = {a.id for a in back.args.args[1:]}
        if self.many & params:
            raise Refused(f"a batched name is a default of back: {sorted(self.many & params)}")
        self.count = gast.Name(names[None], gast.Load(), None, None)

    def _batched_names(self):
        many, grown = {self.seed}, True
        while grown:
            grown = False
            for node in walk(gast.Module(self.back.body, [])):
                if isinstance(node, gast.Assign) and self._mentions(node.value, many):
                    targets = node.targets
                elif isinstance(node, gast.AugAssign) and self._mentions(node.value, many):
                    targets = [node.target]
                else:
                    continue
                stored = {n.id for t in targets for n in walk(t) if isinstance(n, gast.Name)}
                grown |= not stored <= many
                many |= stored
        return many

    @staticmethod
    def _mentions(node, many):
        return any(isinstance(n, gast.Name) and n.id in many for n in walk(node))

    def _helper(self, stem, args):
        return gast.Call(gast.Name(self.names[stem], gast.Load(), None, None), args, [])

    def rewrite(self):
        """The batched body: the number of seeds first, then each statement rewritten."""
        start = gast.Assign([gast.Name(self.names[None], gast.Store(), None, None)],
                            self._helper("count", [gast.Name(self.seed, gast.Load(), None,
                                                             None)]), None)
        note = comment("the sweep once for all seeds: each cotangent has one row per seed")
        return [note, start] + self._block(self.back.body)

    def _block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self._stmt(stmt))
        return out

    def _stmt(self, stmt):
        if isinstance(stmt, (gast.For, gast.If, gast.While)):
            head = stmt.iter if isinstance(stmt, gast.For) else stmt.test
            target = stmt.target if isinstance(stmt, gast.For) else gast.Pass()
            if self._mentions(head, self.many) or self._mentions(target, self.many):
                raise Refused("a loop or a test on a batched value")
            stmt.body, stmt.orelse = self._block(stmt.body), self._block(stmt.orelse)
            return [stmt]
        if isinstance(stmt, gast.Try) and not stmt.handlers and not stmt.orelse:
            # the undo log of a sweep writing into the primal (transform/pullback.py)
            stmt.body, stmt.finalbody = self._block(stmt.body), self._block(stmt.finalbody)
            return [stmt]
        if isinstance(stmt, gast.Assign):
            return [self._assign(stmt)]
        if isinstance(stmt, gast.AugAssign):
            return [self._augmented(stmt)]
        if isinstance(stmt, gast.Return):
            return [gast.Return(self._batched(stmt.value))]
        if isinstance(stmt, gast.Delete) and all(isinstance(t, gast.Name) for t in stmt.targets):
            return [stmt]
        if isinstance(stmt, (gast.Expr, gast.Pass)) and not self._mentions(stmt, self.many):
            return [stmt]
        raise Refused(f"a {type(stmt).__name__} statement")

    def _assign(self, stmt):
        target = stmt.targets[0]
        if len(stmt.targets) == 1 and isinstance(target, gast.Name) and target.id in self.many:
            return gast.Assign([target], self._batched(stmt.value), None)
        if self._mentions(stmt, self.many):
            raise Refused("an assignment into a batched value's part")
        return stmt

    def _augmented(self, stmt):
        target, op = stmt.target, OPERATORS.get(type(stmt.op))
        if not self._mentions(stmt, self.many):
            return stmt
        if not isinstance(target, gast.Name) or target.id not in self.many or op is None:
            raise Refused("an augmented assignment that is not `+=`-like on a name")
        value, many = self._expr(stmt.value)
        load = gast.Name(target.id, gast.Load(), None, None)
        call = self._helper("augmented", [gast.Constant(op, None), load, value,
                                          gast.Constant(True, None),
                                          gast.Constant(many, None), self.count])
        return gast.Assign([gast.Name(target.id, gast.Store(), None, None)], call, None)

    def _batched(self, node):
        """``node`` rewritten, tiled when it is the same for every seed (each gradient of a
        tuple of them)."""
        if isinstance(node, gast.Tuple):
            return gast.Tuple([self._batched(e) for e in node.elts], gast.Load())
        value, many = self._expr(node)
        return value if many else self._helper("tile", [value, self.count])

    def _expr(self, node):
        """``(rewritten node, whether it is batched)``."""
        if not self._mentions(node, self.many):
            return node, False
        if isinstance(node, gast.Name):
            return node, True
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            (a, am), (b, bm) = self._expr(node.left), self._expr(node.right)
            return self._helper("matmul", [a, b, gast.Constant(am, None),
                                           gast.Constant(bm, None)]), True
        if isinstance(node, gast.BinOp) and type(node.op) in OPERATORS:
            (a, am), (b, bm) = self._expr(node.left), self._expr(node.right)
            return self._helper("binop", [gast.Constant(OPERATORS[type(node.op)], None), a, b,
                                          gast.Constant(am, None), gast.Constant(bm, None)]), True
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            node.operand = self._expr(node.operand)[0]
            return node, True
        if isinstance(node, gast.Call):
            return self._call(node), True
        if isinstance(node, gast.Subscript) and not self._mentions(node.slice, self.many):
            # the same index in every row
            index = gast.Subscript(gast.Name(self.names["index"], gast.Load(), None, None),
                                   node.slice, gast.Load())
            return self._helper("getitem", [self._expr(node.value)[0], index]), True
        if isinstance(node, gast.IfExp) and not self._mentions(node.test, self.many):
            # a choice on a primal value (the complex conjugate of a cotangent, or not)
            return gast.IfExp(node.test, self._batched(node.body), self._batched(node.orelse)), True
        raise Refused(f"a batched value in a {type(node).__name__}")

    def _call(self, node):
        fn = self.resolve(node.func)
        args = [self._expr(a) for a in node.args]
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
                self._mentions(k.value, self.many) for k in node.keywords):
            raise Refused("a batched value passed by keyword or unpacked")
        special = self._special(fn, node, args)
        if special is not None:
            return special
        for stem, (twin, may) in TWINS.items():
            if fn is getattr(runtime, stem) and all(i in may for i, (_, m) in enumerate(args)
                                                    if m):
                call = self._helper(twin, [a for a, _ in args])
                call.keywords = node.keywords
                return call
        if self._pure(fn, node):
            flags = gast.Tuple([gast.Constant(m, None) for _, m in args], gast.Load())
            call = self._helper("rowwise", [node.func, flags] + [a for a, _ in args])
            call.keywords = node.keywords
            return call
        raise Refused(f"a batched value passed to {unparse(node.func)}")

    @staticmethod
    def _pure(fn, node):
        """Whether ``fn`` may be called once per row: a helper of ``ROW_BY_ROW``, or a NumPy
        function (not a random draw) writing into none of its arguments."""
        if any(getattr(runtime, name, None) is fn for name in ROW_BY_ROW):
            return True
        module = getattr(fn, "__module__", None) or ""
        return (callable(fn) and (module == "numpy" or module.startswith("numpy.")) and
                not module.startswith("numpy.random") and all(fn is not w for w in WRITERS)
                and not any(k.arg == "out" for k in node.keywords))

    def _special(self, fn, node, args):
        """``add``, ``add_at`` and a ufunc of one argument, batched; None for other calls."""
        if node.keywords:
            return None
        flags = [gast.Constant(m, None) for _, m in args]
        if fn is runtime.add and len(args) == 2:
            return self._helper("add", [args[0][0], args[1][0]] + flags + [self.count])
        if fn is runtime.add_at and len(args) == 3 and args[0][1] and not args[1][1]:
            return self._helper("add_at", [a for a, _ in args] + flags[2:])
        if fn is runtime.elem and len(args) == 3 and not args[1][1] and not args[2][1]:
            return self._helper("elem", [a for a, _ in args] + [self.count])
        if _row_by_row(fn) and len(args) == 1:
            node.args = [args[0][0]]
            return node
        return None
