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
from .containers import Cotangents, DictCotangents, zeros_like


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
    if isinstance(grads, dict):
        g = grads.get(name)
    elif grads is None or _zero(grads):  # nothing sent
        g = None
    else:  # gradients not by name (a step's kind mistaken) must not read as zeros
        raise SrcgradError(f"internal error: the gradients of a split call are a "
                           f"{type(grads).__name__}, not a dict by name")
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


# --- third order and beyond: a split derivative of order k, driven step by step -----------------
# Reverse mode over code with split calls of order k (normalize/recursion.higher) starts, for each,
# the split derivative G_(k+1) of the callee's G_k. G_1 is f's split derivative; G_(k+1) runs
# G_k's primal (its yields pass through: steps 1 .. 2**k, the last being G_k's return), then its
# adjoint, which at each of G_k's steps j, last first, is sent the cotangent of what step j gave
# and gives the cotangent of what step j was sent: step 2**(k+1) + 1 - j. A step is numbered
# once for all orders, so the caller names it by a constant (rules/derived.Step); a step the
# caller skips (an inactive statement) is taken with a zero cotangent when a later one is asked
# for. At every order each level of the recursion runs once. Forward mode over such code (and over
# code of order 2, written in the same form: normalize/recursion.steps) starts the jvp of G_k
# instead: every step is sent a value with its tangent and gives one with its tangent (paired).
# A chain may hold forward layers too (``JvpLayer``: the jvp of the chain below it, from
# forward mode over split calls differentiated again, normalize/recursion.unpair): a forward layer
# adds no step, each of its steps gives and is sent a pair (value, tangent).


class JvpLayer:
    """A forward layer of a chain of derivatives (``SplitN``, ``rules/derived.SplitterN``): the
    jvp, with respect to ``wrt``, of the chain below it. Never equal to a split layer (a tuple of
    names)."""

    __slots__ = ("wrt",)

    def __init__(self, wrt):
        self.wrt = tuple(wrt)

    def __eq__(self, other):
        return isinstance(other, JvpLayer) and other.wrt == self.wrt

    def __hash__(self):
        return hash(("jvp", self.wrt))

    def __repr__(self):
        return f"jvp{self.wrt}"


class SplitN:
    """A started split derivative of order ``len(wrts)`` (2 and more): the generator, what each
    step gave (``got``) and was sent (``sent``), the cotangents waiting for their step
    (``pending``) and the number of the last step taken. ``wrts``: its layers, the ``wrt`` of each
    split layer or a ``JvpLayer``. ``paired``: the generator is the jvp of the split derivative
    (forward mode over code with steps, ``rules/derived.SplitNJvp``): each step is sent a value
    with its tangent and gives one with its tangent (``tangents``, the tangents waiting in
    ``pending_t``, sent in ``sent_t``)."""

    __slots__ = ("gen", "wrts", "got", "sent", "pending", "taken", "last", "tangents",
                 "pending_t", "sent_t", "kinds")

    def __init__(self, gen, wrts, paired=False):
        self.gen, self.wrts = gen, wrts
        self.kinds = _kinds(wrts)
        self.last = 2 ** sum(1 for w in wrts if not isinstance(w, JvpLayer))
        self.got, self.sent, self.pending, self.taken = {}, {}, {}, 1
        self.tangents = {} if paired else None
        self.pending_t, self.sent_t = {}, {}
        first = next(gen)
        if paired:
            first, tangent = first
            self.tangents[1] = _incoming(self, 1, tangent)
        self.got[1] = _incoming(self, 1, first)

    def __repr__(self):
        return f"<split derivative of order {len(self.wrts)} at step {self.taken}>"

    # its own cotangent is a token, as Split2's: sums and zeros leave it unchanged
    def __add__(self, other):
        return self

    __radd__ = __iadd__ = __add__


def step_take(s, j, x):
    """Step ``j`` of the split derivative ``s`` is sent ``x`` (None: a zero), summed with what
    other statements send it (the cotangents of two reads of one step), when a later step is
    read (``step_got``). Gives ``s`` (a token). A value sent after its step was taken is an
    error, never a silently dropped cotangent."""
    if s.taken >= j:
        if not (_zero(x) or x is s.sent.get(j)):
            raise SrcgradError(f"internal error: step {j} of a split derivative was taken "
                               f"before its cotangent came")
        return s
    _wait(s.pending, j, x)
    return s


def step_take_pair(s, j, x, dx):
    """``step_take`` of a value with its tangent ``dx`` (None: a zero), forward mode's form of
    a step sent (``s`` started paired)."""
    if s.taken >= j and not (_zero(dx) or dx is s.sent_t.get(j)):
        raise SrcgradError(f"internal error: step {j} of a split derivative was taken "
                           f"before its tangent came")
    step_take(s, j, x)
    if s.taken < j:
        _wait(s.pending_t, j, dx)
    return s


def _wait(pending, j, x):
    if not _zero(x):
        waiting = pending.get(j)
        if isinstance(waiting, tuple):  # a pair sent: summed element by element
            waiting = Cotangents(waiting)
        pending[j] = x if waiting is None else waiting + x


def step_got(s, j, after=None):
    """What step ``j`` of ``s`` gave; the steps up to it are taken now with what they were
    sent (a zero if nothing: their cotangent is zero). ``after`` is the token of the step, for
    the order of the statements only."""
    _catch_up(s, j)
    return s.got[j]


def step_tangent(s, j):
    """The tangent of what step ``j`` of ``s`` (started paired) gave."""
    _catch_up(s, j)
    return s.tangents[j]


def _zero(x):
    return x is None or (isinstance(x, (int, float)) and not isinstance(x, bool) and x == 0)


def _catch_up(s, j):
    while s.taken < j:
        _send(s, s.taken + 1, s.pending.pop(s.taken + 1, None))


def _send(s, j, x):
    s.sent[j] = x
    value = _outgoing(s, j, x)
    if s.tangents is not None:
        dx = s.sent_t[j] = s.pending_t.pop(j, None)
        value = (value, _outgoing(s, j, dx))
    try:
        y = s.gen.send(value)
    except StopIteration as stop:
        if j != s.last:
            raise SrcgradError("internal error: a split derivative returned early") from None
        y = stop.value
    else:
        if j == s.last:
            raise SrcgradError("internal error: a split derivative yielded past its last step")
    s.taken = j
    if s.tangents is not None:
        y, dy = y
        s.tangents[j] = _incoming(s, j, dy)
    s.got[j] = _incoming(s, j, y)


def _partner(j):
    """The step whose adjoint step ``j`` is (``2**(k-1) < j <= 2**k``: ``2**k + 1 - j``)."""
    k = (j - 1).bit_length()
    return 2 ** k + 1 - j


# What each step of a chain gives and is sent, a kind: ("V", conj) a value, ("N", names, conj)
# gradients by name (a tuple in the generator, a dict for the caller), ("P", a, b) a pair (value,
# tangent) of a forward layer. ``conj``: the value crosses in the public convention, the
# conjugate of generated code's (runtime/complex_values.py). A split layer over a chain of S
# steps adds steps S + 1 .. 2S: step J = 2S + 1 - j is sent the cotangent of what step j gave
# (as a seed, once more conjugated, for j = S, the chain's return: ``check_seed`` takes the
# public convention) and gives the cotangent of what step j was sent (the gradients of the
# layer's ``wrt`` for j = 1, by name, raw: ``recursion_grad`` conjugates them in the caller).
# A forward layer pairs every kind with itself: the tangent of a value crosses as the value
# does. Checked against differences at orders 3 and 4 (two complex values carried through a
# recursion, reverse mode and forward mode last).
_KINDS: dict = {}


def _kinds(layers):
    """``(gives, sends)``: the kind of what each step of the chain ``layers`` gives and is
    sent."""
    if layers not in _KINDS:
        gives, sends, last = {1: ("V", False)}, {}, 1
        for layer in layers:
            if isinstance(layer, JvpLayer):
                gives = {j: ("P", k, k) for j, k in gives.items()}
                sends = {j: ("P", k, k) for j, k in sends.items()}
                continue
            for j in range(1, last + 1):
                back = 2 * last + 1 - j
                sends[back] = _flipped(gives[j]) if j == last else gives[j]
                gives[back] = sends[j] if j >= 2 else ("N", tuple(layer), False)
            last *= 2
        _KINDS[layers] = gives, sends
    return _KINDS[layers]


def _flipped(kind):
    if kind[0] == "P":
        return ("P", _flipped(kind[1]), _flipped(kind[2]))
    return kind[:-1] + (not kind[-1],)


def _outgoing(s, j, x):
    """What the generator is sent at step ``j`` for the caller's ``x``: the cotangent of what
    step ``_partner(j)`` gave, of its kind (``_kinds``)."""
    return _out(s.kinds[1][j], x, s.got[_partner(j)])


def _out(kind, x, like):
    if kind[0] == "P":
        x = (None, None) if _zero(x) else x
        return (_out(kind[1], x[0], like[0]), _out(kind[2], x[1], like[1]))
    if kind[0] == "N":
        given = {} if _zero(x) else x
        return tuple(zeros_like(like[n]) if given.get(n) is None
                     else _conj(kind, given[n], like[n]) for n in kind[1])
    if _zero(x):
        return zeros_like(like)
    return _conj(kind, x, like)


def _incoming(s, j, y):
    """What step ``j`` gave, for the caller, of its kind (``_kinds``): gradients by name, a
    value or a pair, conjugated back where it is in the public convention."""
    return _in(s.kinds[0][j], y)


def _in(kind, y):
    if kind[0] == "P":
        y = (None, None) if y is None else y
        return (_in(kind[1], y[0]), _in(kind[2], y[1]))
    if kind[0] == "N":
        if y is None or _zero(y):  # nothing came back: zeros (recursion_grad)
            return {}
        return {n: _conj(kind, v, v) for n, v in zip(kind[1], y, strict=True)}
    return _conj(kind, y, y)


def _conj(kind, value, like):
    return conj_like(value, like) if kind[-1] else value
