"""Dead-code elimination for straight-line generated code.

Requires: a generated function. Straight-line code is swept backwards with liveness; around
loops and branches, top-level assignments to names read nowhere are dropped (statements inside
compound statements are left alone). Guarantees: assignments whose target is never read again and
whose value has no side effect are removed. Calls are kept unless the callee is known to be pure
(it has a rule, or is a runtime helper), so ``print`` and random draws stay.

    t = x * 2          (t never read)
    y = np.sin(x)  ->  y = np.sin(x)
    return y           return y
"""

from __future__ import annotations

import gast

from .. import rules, runtime
from ..astutil import loaded, stored, walk
from ..emit.unparse import is_comment
from ..rules.derived import JvpPair, Splitter, Splitter2, SplitterN, Step

# Helpers that validate at run time: never removed, even when their result is unused.
CHECKS = (runtime.unit_seed, runtime.check_real, runtime.check_seed, runtime.check_class,
          runtime.check_updated_in_place, runtime.check_element_written,
          runtime.check_argument_parts, runtime.check_arguments_apart,
          runtime.check_held_method, runtime.check_method_of, runtime.check_copied_array)
# the steps of a started split derivative (runtime/recursion.py): each resumes its generator,
# whose later steps need it taken, whether or not its own result is read
STEPS = (runtime.recursion_send, runtime.recursion_send_pair, runtime.split2_send,
         runtime.split2_back, runtime.split2_seed_back, runtime.split2_finish,
         runtime.split2_final)


def run(fn_node, ctx):
    """The pass: statements whose results nothing reads are dropped."""
    return DeadCode(ctx).run(fn_node)


class DeadCode:
    def __init__(self, ctx):
        self.ctx = ctx

    def run(self, fn_node):
        if any(isinstance(s, (gast.If, gast.For, gast.While)) for s in fn_node.body):
            return self._with_control_flow(fn_node)
        live = set()
        kept = []
        for stmt in reversed(fn_node.body):
            if (
                isinstance(stmt, gast.Assign)
                and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id not in live
                and self._pure(stmt.value)
            ):
                continue
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                if stmt.target.id not in live and self._pure(stmt.value):
                    continue  # `d += c` into a buffer only this name holds, never read again
                live.add(stmt.target.id)  # and it reads the buffer it adds into
            if isinstance(stmt, gast.Assign):
                live.difference_update(stored(stmt.targets[0]))
            live.update(
                n.id for n in walk(stmt)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            )
            kept.append(stmt)
        fn_node.body = kept[::-1]
        return _drop_orphan_comments(fn_node)

    def _with_control_flow(self, fn_node):
        """Around loops and branches: drop top-level assignments to names nothing reads."""
        while True:
            read = loaded(fn_node) | {  # `dx += c` reads dx too
                n.target.id for n in walk(fn_node)
                if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)
            }
            kept = [
                s for s in fn_node.body
                if not (
                    isinstance(s, gast.Assign)
                    and isinstance(s.targets[0], gast.Name)
                    and s.targets[0].id not in read
                    and self._pure(s.value)
                )
            ]
            if len(kept) == len(fn_node.body):
                return _drop_orphan_comments(fn_node)
            fn_node.body = kept

    def _pure(self, value):
        for node in walk(value):
            if isinstance(node, gast.Call) and not self._pure_callee(node.func):
                return False
            if isinstance(node, (gast.Yield, gast.YieldFrom)):  # a step of a split derivative
                return False
        return True

    def _pure_callee(self, func):
        if isinstance(func, gast.Name) and func.id in self.ctx.extras:
            held = self.ctx.extras[func.id]
            # a split recursive call runs the user's function (its prints, its draws)
            return held not in CHECKS and not isinstance(
                held, (Splitter, Splitter2, SplitterN, Step, JvpPair)) and (
                not any(held is s for s in STEPS))
        obj = self.ctx.namespace.resolve(func, self.ctx.local_names)
        if any(obj is s for s in STEPS) or any(obj is c for c in CHECKS):
            return False  # (a check in generated code differentiated again is kept too)
        if isinstance(func, gast.Name) and func.id == "slice":
            return True
        rule = rules.lookup(obj)
        return rule is not None and obj is not print


def _drop_orphan_comments(fn_node):
    """A ``# grad of:`` comment whose statements all went is dropped too."""
    body = fn_node.body
    fn_node.body = [
        s for i, s in enumerate(body)
        if not (is_comment(s) and (i + 1 == len(body) or is_comment(body[i + 1])
                                   or isinstance(body[i + 1], gast.Return)))
    ]
    return fn_node
