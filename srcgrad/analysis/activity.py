"""Activity analysis: which variables carry gradient from a ``wrt`` argument to the output.

Requires: an A-normal-form body and an :class:`OpClassifier`. Guarantees: ``active`` holds every
variable that both depends on a differentiated argument (varying) and influences the returned
value (useful). Only active variables get adjoints. Comparisons, shapes, integers produced by
non-differentiable functions and constants are never active. Both halves are flow-insensitive
fixed points of the :mod:`dataflow` solver (the body run as if repeated), so they also hold for
bodies whose statements repeat (loops), and an active value no rule differentiates is refused.

    def f(x, n):               varying: x, a, b        useful: b, a, x, n
        a = x * n              active:  x, a, b
        b = np.sin(a)
        return b
"""

from __future__ import annotations

import operator

import gast

from ..astutil import local_names
from ..errors import NoRuleError, UnsupportedSyntaxError
from .dataflow import Dataflow
from .ops import OpClassifier, dotted
from .shifts import unshifted

# Operators without gradient that pass values on for some types: `|` merges dicts (and sets),
# `&`, `^` keep entries of sets and dict views. Given a value that carries gradient (never an
# int or bool array: those carry none), they are refused rather than dropping its gradient.
MERGING_OPERATORS = {operator.or_: "|", operator.and_: "&", operator.xor: "^"}


def assignments(body):
    """Every ``(target name, value)`` pair of the body, in textual order, inside compounds too."""
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            yield stmt.targets[0].id, stmt.value, stmt
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from assignments(inner)


def run(fn_node, ctx):
    """The analysis: sets ``ctx.local_names``, ``ctx.ops`` (each assignment's operation, by
    ``id`` of the statement), ``ctx.primal_statements`` (those statements, by ``id``) and
    ``ctx.active`` (the variables derivatives flow through, from ``ctx.wrt`` to the returned
    name). The tree is returned unchanged."""
    ctx.local_names = local_names(fn_node)
    classifier = OpClassifier(ctx.namespace, ctx.local_names, ctx.location, ctx.dependencies,
                              ctx.global_name(slice, "slice"))
    out = fn_node.body[-1].value
    outputs = {out.id} if isinstance(out, gast.Name) else set()
    activity = Activity(classifier, forward=ctx.mode in ("jvp", "tangent", "linearize"))
    ctx.active = activity.run(fn_node, ctx.wrt, outputs)
    ctx.ops = activity.ops
    ctx.primal_statements = {id(s): s for _, _, s in assignments(fn_node.body)}
    return fn_node


class Activity:
    def __init__(self, classifier, forward=False):
        self.classifier = classifier
        self.forward = forward  # forward mode: rules marked `paired_in_forward` are its own

    def run(self, fn_node, wrt, outputs):
        self.ops = {id(s): self.classifier.classify(v) for _, v, s in assignments(fn_node.body)}
        # a split derivative's `seed = yield value` (normalize/recursion.mark_yields): the seed
        # comes in with a tangent, the value goes out with one
        # a step sent to a split derivative (rules/derived.Step): what it sends has a cotangent
        # whatever is read of the steps after it, as a yielded value has
        # a started split derivative's steps give values that depend on what the steps before
        # them were sent, whatever its arguments carry (rules/derived.SplitterN, SplitNJvp): it
        # varies (grad along y of grad(grad(grad(f, 0), 0), 0) of power(x, 4) * y**3 dropped
        # what step 7 gave, and its jvp along y read no tangent of it: 6.912 for 27.648)
        marks, takes, starts = [], set(), set()
        for target, _, stmt in assignments(fn_node.body):
            rule = self.ops[id(stmt)].rule
            if getattr(rule, "marks_yield", False):
                marks.append((target, stmt))
            elif getattr(rule, "takes_step", False):
                takes.add(target)
            elif getattr(rule, "starts_steps", False):
                starts.add(target)
        wrt = set(wrt) | {target for target, _ in marks} | starts
        outputs = set(outputs) | {_name(stmt.value.args[0]) for _, stmt in marks} - {None}
        outputs |= takes
        # a max subtracted before a softmax: the result does not depend on it (shifts.py)
        varying = _Varying(self.ops, unshifted(fn_node, self.ops)).repeated(
            fn_node.body, frozenset(wrt))
        useful = _Useful(self.ops).repeated(fn_node.body, frozenset(outputs))
        active = set(varying & useful)
        for target, _, stmt in assignments(fn_node.body):
            self._check(self.ops[id(stmt)], stmt, target in active, varying, active)
        return active

    def _check(self, op, stmt, is_active, varying, active):
        """Refuse an active value that no rule can differentiate, and a call without rule or
        source given a value that carries gradient (it may change it in place)."""
        if op.kind == "unknown":
            self._check_unknown(op, stmt, is_active, varying)
        if op.rule is not None and op.rule.fn in MERGING_OPERATORS:
            self._check_merging(op, varying)
        if op.kind != "rule" or not is_active:
            return
        if op.refused:
            raise self.classifier.location.error(UnsupportedSyntaxError, op.node, op.refused)
        if self.forward and getattr(op.rule, "paired_in_forward", False):
            return  # transform/forward.py writes this call's tangent itself
        for param in op.rule.unsupported or ():  # a dependence the rule cannot differentiate
            value = op.args.get(param)
            parts = value.elts if isinstance(value, gast.Tuple) else (
                value.values if isinstance(value, gast.Dict) else [value])
            if any(_name(v) in active for v in parts):
                raise self.classifier.location.error(
                    NoRuleError, op.node, op.rule.unsupported_message(param)
                )

    def _check_unknown(self, op, stmt, is_active, varying):
        """An operation srcgrad has no rule for: refused when active, or when given a value
        that carries gradient (it may change it in place)."""
        if is_active:
            raise self._no_rule(op, stmt)
        given = [_name(a) for a in op.operands() if _name(a) in varying]
        if given and op.refused:  # a call srcgrad knows better than "unknown"
            raise self.classifier.location.error(UnsupportedSyntaxError, op.node, op.refused)
        if given:  # its result carries no gradient, but it may change what it is given
            raise self._may_write(op, given[0])

    def _check_merging(self, op, varying):
        """``a | b`` given a value that carries gradient: a merge of dicts srcgrad did not see
        as one (normalize/operators.py merges those it sees) would drop its gradient."""
        node = op.node  # (an operator without gradient is a "constant" op: no args)
        atoms = [node.left, node.right] if isinstance(node, gast.BinOp) else list(node.args)
        given = [_name(a) for a in atoms if _name(a) in varying]
        if given:
            raise self.classifier.location.error(UnsupportedSyntaxError, op.node, (
                f"srcgrad does not support `{MERGING_OPERATORS[op.rule.fn]}` given "
                f"`{given[0]}`, which carries gradient: of dicts (sets) it merges them and "
                f"passes their values on, which srcgrad cannot see here. Merge where srcgrad "
                f"sees a dict: `d = dict(a)` then `d.update(b)`"))

    def _may_write(self, op, var):
        name = dotted(op.node.func) if isinstance(op.node, gast.Call) else repr(op.func)
        return self.classifier.location.error(
            UnsupportedSyntaxError,
            op.node,
            f"srcgrad does not support `{name}` given `{var}`, which carries gradient: it has "
            f"neither a rule nor Python source, so srcgrad cannot tell whether it changes "
            f"`{var}` in place. Register a rule for it (srcgrad.adjoint), or pass it a copy",
        )

    def _no_rule(self, op, stmt):
        if op.refused:
            return self.classifier.location.error(UnsupportedSyntaxError, op.node, op.refused)
        fn = op.func
        name = dotted(op.node.func) if isinstance(op.node, gast.Call) else repr(fn)
        location = self.classifier.location
        module = getattr(fn, "__module__", "") or ""
        if module.startswith("srcgrad"):
            return location.error(
                NoRuleError,
                op.node,
                f"a derivative of this derivative (higher order) is not supported here: the "
                f"code srcgrad generates for it calls its helper `{name}`, which has no rule "
                f"of its own yet.",
            )
        if fn in (set, frozenset):
            return location.error(NoRuleError, op.node, (
                f"a `{fn.__name__}` of values that carry gradient has no gradient rule (which "
                f"values it keeps, and in what order, depends on the values); use a list"))
        if fn is dict:
            return location.error(NoRuleError, op.node, (
                "`dict(...)` of a mapping or of pairs known only when it runs has no gradient "
                "rule (`dict(a=x)`, `dict(zip(ks, vs))` and a literal list of pairs are "
                "supported); write a dict comprehension: `{k: v for k, v in m.items()}`, "
                "`{k: v for k, v in pairs}`"))
        if hasattr(fn, "__code__"):
            why = (
                f"`{name}` is a Python function from `{module}`, whose source srcgrad does not "
                f"look into."
            )
        else:
            why = f"`{name}` has no Python source and no gradient rule."
        return location.error(
            NoRuleError,
            op.node,
            f"{why} Register a rule:\n\n"
            f"    @srcgrad.adjoint({name})\n"
            f"    def {name.split('.')[-1]}_adjoint(dy, y, *args):\n"
            f"        return ...  # one gradient per positional argument",
        )


class _Varying(Dataflow):
    """Variables that depend on a differentiated argument (but ``fixed``, which the result
    does not depend on)."""

    def __init__(self, ops, fixed):
        super().__init__()
        self.ops = ops
        self.fixed = fixed

    def transfer(self, stmt, facts):
        if isinstance(stmt, gast.Assign) and stmt.targets[0].id not in self.fixed and any(
            _name(a) in facts for a in self.ops[id(stmt)].operands()
        ):
            return facts | {stmt.targets[0].id}
        return facts


class _Useful(Dataflow):
    """Variables the returned value depends on."""

    backward = True

    def __init__(self, ops):
        super().__init__()
        self.ops = ops

    def transfer(self, stmt, facts):
        if isinstance(stmt, gast.Assign) and stmt.targets[0].id in facts:
            operands = {_name(a) for a in self.ops[id(stmt)].operands()}
            return facts | (operands - {None})
        return facts


def _name(atom):
    return atom.id if isinstance(atom, gast.Name) else None
