"""A recursive call in reverse-mode code, run once: the callee's split derivative.

A recursive call cannot be inlined into itself. In reverse-mode code it becomes
``s = f_split(a, b); y = recursion_value(s)``: ``f_split`` (``rules/derived.py``) starts the
callee's derivative in mode "split", a generator that runs the callee's primal once, yields its
value and waits for the cotangent; the caller's adjoint sweep sends it (``recursion_send``), the
generator runs the callee's own adjoint sweep on the values its primal left, and the gradients
come back by parameter name (``recursion_grad``). Each level of a recursion thus runs its primal
once and its adjoint once: linear in the depth, where calling the callee's vjp (which reruns the
primal, and the primal of every level below) was quadratic.
"""

from __future__ import annotations

from ..errors import SrcgradError
from .complex_values import conj_like
from .containers import zeros_like


class Split:
    """A started split derivative: the generator, the value it yielded and the names of the
    parameters whose gradients it will give."""

    __slots__ = ("gen", "value", "wrt")

    def __init__(self, gen, value, wrt):
        self.gen, self.value, self.wrt = gen, value, wrt

    def __repr__(self):
        return f"<split call waiting for its cotangent, wrt {self.wrt}>"


def recursion_value(s):
    """The value of the recursive call ``s`` (its primal ran when the call started)."""
    return s.value


def recursion_send(s, seed):
    """The gradients (by parameter name) of the recursive call ``s`` for the cotangent ``seed``
    of its value: the callee's adjoint sweep runs now, once. None when ``seed`` is None."""
    if seed is None or s.gen is None:
        return None
    gen, s.gen = s.gen, None
    try:
        # the split derivative takes and gives cotangents in the public convention, the
        # conjugate of generated code's (runtime/complex_values.py); real values are unchanged
        gen.send(conj_like(seed, seed))
    except StopIteration as stop:
        return dict(zip(s.wrt, stop.value))
    raise SrcgradError("internal error: a split derivative yielded twice")


def recursion_grad(grads, name, x):
    """The gradient of parameter ``name`` (given ``x``) from ``recursion_send``'s result."""
    g = None if grads is None else grads.get(name)
    return zeros_like(x) if g is None else conj_like(g, x)


def recursion_no_tangent(*args):
    """The tangent of a split call: never generated (forward mode and code differentiated again
    call the callee's own derivatives); reaching it is a bug in srcgrad, not a number."""
    raise SrcgradError("internal error: a tangent of a split recursive call was computed")
