"""A recursive call in reverse-mode code, run once: the callee's split derivative.

A recursive call cannot be inlined into itself. In reverse-mode code it becomes
``s = f_split(a, b); y = recursion_value(s)``: ``f_split`` (``rules/derived.py``) starts the
callee's derivative in mode "split", a generator that runs the callee's primal once, yields its
value and waits for the cotangent; the caller's adjoint sweep sends it (``recursion_send``), the
generator runs the callee's own adjoint sweep on the values its primal left, and the gradients
come back by parameter name (``recursion_grad``). Each level of a recursion thus runs its primal
once and its adjoint once: linear in the depth, where calling the callee's vjp (which reruns the
primal, and the primal of every level below) was quadratic.

Forward mode over such code (a Hessian-vector product: the tangent of a gradient) starts the
jvp of the callee's split derivative instead (``rules/derived.SplitJvp``): a generator that
yields the value and its tangent, is sent the cotangent and its tangent
(``recursion_send_pair``) and returns the gradients and theirs, so second order through a
recursion is linear in its depth too.
"""

from __future__ import annotations

from ..errors import SrcgradError
from .complex_values import conj_like
from .containers import zeros_like


class Split:
    """A started split derivative: the generator, the value it yielded and the names of the
    parameters whose gradients it will give."""

    __slots__ = ("gen", "value", "wrt", "tangent", "sent_tangent")

    def __init__(self, gen, value, wrt, tangent=None):
        self.gen, self.value, self.wrt = gen, value, wrt
        self.tangent = tangent  # the tangent of the value (a started jvp of a split derivative)
        self.sent_tangent = None  # the tangents of the gradients, once sent (recursion_send_pair)

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


def recursion_tangent(s):
    """The tangent of the value of the recursive call ``s`` (started by ``SplitJvp``)."""
    return s.tangent


def recursion_send_pair(s, seed, dseed):
    """``recursion_send`` for a split call started by ``SplitJvp``: the cotangent and its
    tangent go in together; the gradients come back (their tangents kept for
    ``recursion_sent_tangent``)."""
    if seed is None or s.gen is None:
        return None
    if dseed is None:
        dseed = zeros_like(seed)
    gen, s.gen = s.gen, None
    try:
        gen.send((conj_like(seed, seed), conj_like(dseed, seed)))
    except StopIteration as stop:
        grads, dgrads = stop.value
        s.sent_tangent = dict(zip(s.wrt, dgrads))
        return dict(zip(s.wrt, grads))
    raise SrcgradError("internal error: a split derivative yielded twice")


def recursion_sent_tangent(s):
    """The tangents of the gradients ``recursion_send_pair`` returned for ``s``."""
    return s.sent_tangent


def split_yield(value):
    """Marks ``seed = yield value`` of a split derivative while forward mode differentiates it
    (``normalize/recursion.mark_yields``); the forward transform writes the ``yield`` back."""
    raise SrcgradError("internal error: a split derivative's yield marker was run")


def recursion_no_tangent(*args):
    """The tangent of a split call: never generated (forward mode and code differentiated again
    call the callee's own derivatives); reaching it is a bug in srcgrad, not a number."""
    raise SrcgradError("internal error: a tangent of a split recursive call was computed")
