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
from .containers import DictCotangents, zeros_like


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


# --- reverse mode over a split call: grad(grad(f)) through a recursion ---------------------------
# Reverse-mode code differentiated again in reverse mode (normalize/recursion.double) starts, for
# each split call, the split derivative of the callee's split derivative ``G`` (its jvp's peer):
# a generator that yields G's value (f's value), is sent f's seed and yields G's value (the
# gradients), is sent their cotangents and yields the cotangent of the seed, is sent the
# cotangent of f's value and returns the cotangents of the call's arguments. The four steps are
# driven from the caller's primal (value, send) and sweep (the cotangents of the gradients, then
# of the value); a step the caller skips (an inactive statement) is taken with zero cotangents.


class Split2:
    """A started split derivative of a split derivative; ``state`` is the number of the last
    step taken (1 value out, 2 gradients out, 3 cotangent of the seed out, 4 done)."""

    __slots__ = ("gen", "value", "wrt", "wrt2", "state", "grads", "dseed", "final")

    def __init__(self, gen, value, wrt, wrt2):
        self.gen, self.value, self.wrt, self.wrt2 = gen, value, wrt, wrt2
        self.state = 1
        self.grads = self.dseed = self.final = None

    def __repr__(self):
        return f"<split call of a split derivative (wrt {self.wrt}, then {self.wrt2})>"

    # The cotangent of the split call itself is the call (a token): the steps keep what they
    # compute (``split2_final`` reads it), and contributions summed by the sweep (``ds + s``,
    # a zero ``0.0`` where a branch did not run) stay the token.
    def __add__(self, other):
        return self

    __radd__ = __iadd__ = __add__


def split2_value(s):
    """The value of the split call ``s`` (step 1 ran when it started)."""
    return s.value


def split2_send(s, seed):
    """Step 2: the callee's seed goes in, its gradients (by name) come out; None for a None
    seed, as ``recursion_send`` gives."""
    if seed is None or s.state != 1:
        return None
    if not s.wrt:  # the callee carried no gradient at first order: nothing was sent there
        return None
    grads = s.gen.send(conj_like(seed, seed))  # as recursion_send sends it
    s.state, s.grads = 2, dict(zip(s.wrt, grads))
    return s.grads


def split2_back(s, dgrads):
    """Step 3: the cotangents of the gradients go in (zeros for those not given); the cotangent
    of the seed is kept for ``split2_seed_back``. Gives the split call's cotangent (``s``)."""
    if s.state == 2:
        dgrads = dgrads or {}
        # the public convention of the split derivative's seed (runtime/complex_values.py)
        sent = tuple(zeros_like(s.grads[n]) if dgrads.get(n) is None
                     else conj_like(dgrads[n], s.grads[n]) for n in s.wrt)
        s.dseed = s.gen.send(sent)
        s.state = 3
    return s


def split2_seed_back(s, dgrads):
    """The cotangent of the seed given to ``split2_send`` (step 3, taken once)."""
    split2_back(s, dgrads)
    return None if s.dseed is None else conj_like(s.dseed, s.dseed)  # it sent conj(seed)


def split2_finish(s, dvalue):
    """Step 4: the cotangent of the value goes in (steps skipped before are taken with zeros),
    the cotangents of the call's arguments come out by name, kept for ``split2_final``. Gives
    the split call's cotangent (``s``)."""
    if s.state == 4:
        return s
    if s.state == 1 and s.wrt:
        split2_send(s, zeros_like(s.value))
    split2_back(s, None)
    if dvalue is None:
        dvalue = zeros_like(s.value)
    try:
        s.gen.send(dvalue)
    except StopIteration as stop:
        s.state, s.final = 4, dict(zip(s.wrt2, stop.value))
        return s
    raise SrcgradError("internal error: a split derivative of a split derivative yielded again")


def split2_final(s, ds):
    """The cotangents (by name) of the arguments of the split call ``s`` (``ds``, its cotangent,
    is ``s`` itself or zero): finished by the sweep, or now with a zero cotangent of its
    value."""
    split2_finish(s, None)
    return s.final


def recursion_grad_back(d, grads, name):
    """The cotangent of the gradients ``recursion_grad`` read ``name`` from, given ``d``, the
    cotangent of what it read: ``{name: d}``."""
    if grads is None or d is None:
        return None
    return _GradCotangents({name: conj_like(d, grads[name])})  # recursion_grad conjugates


class _GradCotangents(DictCotangents):
    """Cotangents of a split call's gradients by name: summed key by key by the sweep's ``+``
    (the cotangents of two gradients read from one call), a zero ``0.0`` or None adding
    nothing."""

    def __add__(self, other):
        if other is None or (isinstance(other, (int, float)) and other == 0):
            return self
        return _GradCotangents(DictCotangents.__add__(self, other))

    __radd__ = __iadd__ = __add__
