"""``np.einsum``'s interleaved form becomes its subscripts form, which the einsum rule reads.

Requires: an A-normal-form body after inlining. Guarantees: every ``np.einsum`` call has a
subscripts string as its first argument, with an explicit output. The sublists of the interleaved
form (``np.einsum(A, [0, 1], B, [1, 2], [0, 2])``) must be known at transform time: list or
tuple literals of integers and ``...``, or module-level constants; otherwise, and where the first
argument cannot be told to be a string, the call is refused at the user's line.

    lst = [0, 1]                            lst = [0, 1]
    lst_2 = [1, 2]                    ->    lst_2 = [1, 2]
    t = np.einsum(A, lst, B, lst_2)         t = np.einsum('ab,bc->ac', A, B)
"""

from __future__ import annotations

import string

import gast
import numpy as np

from ..astutil import binding_counts, ordered_walk
from ..errors import UnsupportedSyntaxError
from ..frontend.resolve import MISSING

LETTERS = string.ascii_lowercase + string.ascii_uppercase  # NumPy's labels 0..51


def run(fn_node, ctx):
    """The pass: interleaved einsum calls get a subscripts string."""
    return EinsumSubscripts(ctx).run(fn_node)


class EinsumSubscripts:
    def __init__(self, ctx):
        self.ctx = ctx

    def run(self, fn_node):
        counts = binding_counts(fn_node)
        self.literals = {}  # name assigned once -> its List, Tuple or Constant value
        for n in ordered_walk(fn_node):
            if (
                isinstance(n, gast.Assign)
                and isinstance(n.targets[0], gast.Name)
                and counts[n.targets[0].id] == 1
                and isinstance(n.value, (gast.List, gast.Tuple, gast.Constant))
            ):
                self.literals[n.targets[0].id] = n.value
        for n in ordered_walk(fn_node):
            if isinstance(n, gast.Call) and self._is_einsum(n.func) and n.args:
                self._rewrite(n)
        return fn_node

    def _is_einsum(self, func):
        return self.ctx.namespace.resolve(func, self.ctx.local_names) is np.einsum

    def _static(self, atom):
        """The Python value of an atom known at transform time, or MISSING."""
        if isinstance(atom, gast.Name) and atom.id in self.literals:
            atom = self.literals[atom.id]
        if isinstance(atom, gast.Constant):
            return atom.value
        if isinstance(atom, (gast.List, gast.Tuple)):
            values = [self._static(e) for e in atom.elts]
            return MISSING if any(v is MISSING for v in values) else values
        if isinstance(atom, gast.Name) and atom.id in self.ctx.local_names:
            return MISSING
        return self.ctx.namespace.resolve(atom, self.ctx.local_names)

    def _rewrite(self, call):
        first = self._static(call.args[0])
        if isinstance(first, str):
            return
        if len(call.args) < 2 or not _is_sublist(self._static(call.args[1])):
            raise self._error(
                call, "an `np.einsum` call whose first argument srcgrad cannot tell at transform "
                "time to be the subscripts string; write the subscripts as a string literal"
            )
        operands, sublists = call.args[0::2], call.args[1::2]
        output = None
        if len(call.args) % 2:
            output = self._sublist(operands.pop(), call)
        inputs = [self._sublist(s, call) for s in sublists]
        if output is None:
            # implicit output: the labels used once, in increasing order, after any ellipsis
            labels = [k for s in inputs for k in s if k is not Ellipsis]
            once = sorted(k for k in set(labels) if labels.count(k) == 1)
            output = ([Ellipsis] if any(Ellipsis in s for s in inputs) else []) + once
        text = ",".join(_letters(s, call, self) for s in inputs) + "->" + _letters(
            output, call, self
        )
        call.args = [gast.Constant(text, None)] + list(operands)

    def _sublist(self, atom, call):
        value = self._static(atom)
        if not _is_sublist(value):
            raise self._error(
                call, "`np.einsum`'s interleaved form with a sublist srcgrad cannot read at "
                "transform time (a list of integers and `...` written in the function or at "
                "module level)"
            )
        return list(value)

    def _error(self, node, what):
        return self.ctx.location.error(
            UnsupportedSyntaxError, node, f"srcgrad does not support {what}"
        )


def _is_sublist(value):
    return isinstance(value, (list, tuple)) and all(
        v is Ellipsis or (isinstance(v, (int, np.integer)) and not isinstance(v, bool))
        for v in value
    )


def _letters(sublist, call, owner):
    out = []
    for k in sublist:
        if k is Ellipsis:
            out.append("...")
        elif 0 <= k < len(LETTERS):
            out.append(LETTERS[k])
        else:
            raise owner._error(call, f"an `np.einsum` label {k} (NumPy takes 0 to 51)")
    return "".join(out)
