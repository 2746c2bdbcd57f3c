"""Rules for functions srcgrad generated, so a derived function can be called inside a body that
is differentiated again (``def h(x): return grad(g)(x) * x``).

A generated function needs no inlining: its derivatives are generated functions too. The rule for
a call ``D(a, b)`` says that the cotangent of ``a`` is ``vjp(D, wrt="a")(a, b, dy)`` and its tangent
contribution is the forward-mode tangent of ``D`` along ``da``. Those functions are generated
lazily, the first time a template asks for them, and the generated code calls them by name
(``dg_vjp_x``), so ``source()`` shows exactly what runs. The callee's primal is recomputed inside
its vjp: the price of not inlining, paid only where a derived function is itself differentiated.

In reverse-mode code a recursive call goes through a :class:`Splitter` instead
(``normalize/recursion.py``): the callee's primal runs once per call and its adjoint once, in a
generator (``runtime/recursion.py``), so a recursion is linear in its depth. Code that is
differentiated again is generated anew without splitting (``pipeline.derive``).

A generated vjp takes and returns cotangents in srcgrad's public convention (``df/dx + 1j*df/dy``),
the conjugate of the one inside generated code (``runtime/complex_values.py``): the rule
conjugates the cotangent it passes and the gradient it gets (``conj_like``; nothing for real
values).

Template names are private aliases (``_a0``, ``_dy``), not the callee's parameter names, because a
parameter may well be called ``y`` or ``dy``.
"""

from __future__ import annotations

import functools
import inspect
import types

import gast

from .. import runtime, transforms
from ..astutil import walk
from ..context import Options
from ..errors import NoRuleError
from ..frontend.resolve import MISSING
from ..frontend.source import GENERATED_SOURCE, parse_function
from .kinds import Kind
from .registry import COTANGENT, RESULT, DictNamespace, Rule, Template, param, tangent

_RULES: dict = {}


def derived_rule(fn):
    """The rule of a function srcgrad generated, or None for any other function."""
    code = getattr(fn, "__code__", None)
    if code is None or code not in GENERATED_SOURCE:
        return None
    if fn not in _RULES:
        _RULES[fn] = _build(fn)
        if getattr(fn, "__srcgrad_special__", None):
            # a derivative through a recursion: forward mode calls its jvp once (JvpPair)
            _RULES[fn].recursive = fn
    return _RULES[fn]


# methods that change the list, dict or array they are called on
_MUTATING = {"append", "insert", "extend", "pop", "remove", "reverse", "sort", "clear", "update",
             "fill", "resize", "setdefault", "popitem", "put", "itemset", "partition"}
_CHECKED: dict = {}


def refuse_writes_into_arguments(fn):
    """A recursive function is called, not inlined, and its derivatives write into copies of
    their arguments: a write into an argument in place (``v[0] = ...``, ``v += ...``,
    ``v.append(...)``, ``v.attr = ...``) would be seen by the caller in Python but not by the
    derivative. Refused at the line of the write (checked once per function)."""
    if fn in _CHECKED:
        return
    parsed = parse_function(fn)
    node = parsed.node
    args = node.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    for n in walk(node):
        written = _written_param(n)
        if written in params:
            raise parsed.location.error(NoRuleError, n, (
                f"`{fn.__name__}` calls itself (it is not inlined) and changes its argument "
                f"`{written}` in place here: its derivative would change a copy, and the caller "
                f"would not see the change; write a new value (`{written} = {written} + ...`, "
                f"`{written} = np.concatenate(...)`) and return it"))
    _CHECKED[fn] = True


def _written_param(n):
    """The name a statement or call changes in place, if it is a plain name."""
    target = None
    if isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, (gast.Store,
                                                                              gast.Del)):
        target = n.value
    elif isinstance(n, gast.AugAssign):
        target = n.target
    elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and (
            n.func.attr in _MUTATING):
        target = n.func.value
    elif isinstance(n, gast.Call):
        outs = [k.value for k in n.keywords if k.arg == "out"]
        target = outs[0] if outs else None
    return target.id if isinstance(target, gast.Name) else None


def recursive_rule(fn):
    """The rule of a user function called recursively, which cannot be inlined into itself.

    Like a generated function, it is differentiated through its own generated vjp and tangent;
    those are generated at the first call (the function's own transform is still being built
    when the rule is made).
    """
    if not inspect.isfunction(fn) or getattr(fn, "__code__", None) is None:
        return None
    key = ("recursive", fn)
    if key not in _RULES:
        _RULES[key] = _build(fn, lazy=True)
        _RULES[key].recursive = fn  # forward mode calls its jvp once (JvpPair)
    return _RULES[key]


def lazy_rule(obj):
    """The rule of a recursive function's derivative called by name in generated code
    (``power_vjp_x``, a :class:`_Lazy`): that of the function it generates, so the derivative
    of a derivative goes through recursion too (``grad(grad(f))`` of a recursive ``f``)."""
    if not isinstance(obj, _Lazy):
        return None
    return recursive_rule(obj.generated())


class _Lazy:
    """A derivative generated on its first call."""

    def __init__(self, fn, mode, wrt):
        self.fn, self.mode, self.wrt = fn, mode, wrt
        self.__name__ = f"{fn.__name__}_{mode}_{wrt}"
        self.made = None

    def __call__(self, *args, **kwargs):
        return self.generated()(*args, **kwargs)

    def generated(self):
        """The generated function, made now if it was not yet."""
        if self.made is None:
            self.made = transforms.derived(self.fn, self.mode, self.wrt)
        return self.made


class _Derivatives:
    """Template namespace: ``<name>_vjp_<param>`` and ``<name>_tangent_<param>``, generated when
    first looked up."""

    def __init__(self, fn, lazy=False):
        self.fn = fn
        self.lazy = lazy
        self.made = {}

    def lookup(self, name):
        if name == "conj_like":
            return runtime.conj_like
        if name not in self.made:
            base = self.fn.__name__
            for mode in ("vjp", "tangent"):
                prefix = f"{base}_{mode}_"
                if name.startswith(prefix):
                    wrt = name[len(prefix):]
                    if self.lazy:
                        self.made[name] = _Lazy(self.fn, mode, wrt)
                    else:
                        self.made[name] = transforms.derived(self.fn, mode, wrt)
                    break
            else:
                return MISSING
        return self.made[name]


def _build(fn, lazy=False):
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    aliases = {p.name: f"_a{i}" for i, p in enumerate(params)}
    roles = {aliases[p.name]: param(p.name) for p in params}
    # `*rest` of a derivative of a function with optional parameters (transform/defaults.py)
    # holds the optional values and the seed: no template differentiates what it holds, so a
    # value carrying gradient there is refused at transform time (never silently dropped)
    packed = [p for p in params if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    plain = [p for p in params if p not in packed]

    def call(callee, last):
        last = _name(last) if isinstance(last, str) else last
        args = []
        for p in params:
            if p.kind == p.VAR_POSITIONAL:
                args.append(gast.Starred(_name(aliases[p.name]), gast.Load()))
            elif p.kind != p.KEYWORD_ONLY and p.kind != p.VAR_KEYWORD:
                args.append(_name(aliases[p.name]))
        keywords = [
            gast.keyword(p.name, _name(aliases[p.name])) for p in params if p.kind == p.KEYWORD_ONLY
        ]
        keywords += [gast.keyword(None, _name(aliases[p.name])) for p in params
                     if p.kind == p.VAR_KEYWORD]
        return gast.Call(_name(callee), args + [last], keywords)

    namespace = _Derivatives(fn, lazy)
    base = fn.__name__
    seed = gast.Call(_name("conj_like"), [_name("_dy"), _name("_dy")], [])
    vjp_outputs = {
        p.name: gast.Call(
            _name("conj_like"), [call(f"{base}_vjp_{p.name}", seed), _name(aliases[p.name])], []
        )
        for p in plain
    }
    vjp = Template([], vjp_outputs, namespace, {**roles, "_y": RESULT, "_dy": COTANGENT})
    jvp_outputs = {p.name: call(f"{base}_tangent_{p.name}", f"_t{i}")
                   for i, p in enumerate(params) if p in plain}
    tangent_roles = {f"_t{i}": tangent(p.name) for i, p in enumerate(params)}
    jvp = Template([], jvp_outputs, namespace, {**roles, "_y": RESULT, **tangent_roles})
    unsupported = {p.name: (
        f"what `{fn.__name__}` takes in `{'*' if p.kind == p.VAR_POSITIONAL else '**'}"
        f"{p.name}` (the optional arguments and the seed of a derivative of a function with "
        f"default values) is not differentiated again; define the function differentiated "
        f"without default values (pass every argument), or differentiate it once"
    ) for p in packed}
    return Rule(fn, signature, vjp_template=vjp, jvp_template=jvp, kind=Kind.DERIVED,
                namespace=namespace, unsupported=unsupported)


def _name(id_):
    return gast.Name(id_, gast.Load(), None, None)


# --- recursive calls in reverse-mode code, each level run once ----------------------------------
_SPLITTERS: dict = {}
# values that never carry a gradient: the split derivative is not asked for theirs
_NO_GRADIENT = (str, bytes, bool, type(None), type, types.ModuleType, types.FunctionType,
                types.BuiltinFunctionType, types.MethodType, functools.partial)


class Splitter:
    """``f_split(a, b)``: starts ``f``'s split derivative (mode "split", a generator) with
    respect to ``wrt`` on the arguments, runs it to its yield (``f``'s primal, once) and returns
    the started :class:`runtime.Split`; the caller's sweep sends it the cotangent later.
    ``wrt`` is set by the reverse transform to the parameters given values that carry gradient
    (``with_wrt``); None (not yet known) takes every argument that can carry one."""

    def __init__(self, fn, wrt=None):
        self.fn = fn
        self.wrt = wrt
        self.signature = inspect.signature(fn)
        self.__name__ = f"{fn.__name__}_split"

    def __call__(self, *args, **kwargs):
        wrt = self.wrt
        if wrt is None:
            bound = self.signature.bind(*args, **kwargs)
            wrt = tuple(n for n, v in bound.arguments.items() if not isinstance(v, _NO_GRADIENT))
        if not wrt:
            return runtime.Split(None, self.fn(*args, **kwargs), wrt)
        gen = transforms.derived(self.fn, "split", wrt)(*args, **kwargs)
        return runtime.Split(gen, next(gen), wrt)

    def with_wrt(self, wrt):
        """The splitter of the same function with respect to ``wrt`` (a tuple of names)."""
        key = (self.fn, tuple(wrt))
        if key not in _SPLITTERS:
            _SPLITTERS[key] = Splitter(self.fn, tuple(wrt))
        return _SPLITTERS[key]

    def __repr__(self):
        return f"<split derivative of {self.fn.__qualname__}>"


def splitter(fn):
    """The :class:`Splitter` of ``fn`` (one per function), or None for a function it cannot
    split: only a plain parameter list (no ``*args``, ``**kwargs`` or keyword-only ones)."""
    if fn not in _SPLITTERS:
        kinds = {p.kind for p in inspect.signature(fn).parameters.values()}
        plain = kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD}
        _SPLITTERS[fn] = Splitter(fn) if plain else None
    return _SPLITTERS[fn]


class Splitter2:
    """``f_split2(a, b)``: reverse mode's form of a split call ``f_split(a, b)`` in code it
    differentiates (``normalize/recursion.double``). It starts the split derivative, with
    respect to ``wrt2``, of ``f``'s split derivative ``G`` (with respect to ``wrt``), runs it to
    its first yield (``f``'s value) and returns the started :class:`runtime.Split2`. When
    ``wrt`` is empty (the call carried no gradient at first order) it is ``f``'s own split
    derivative with respect to ``wrt2``."""

    def __init__(self, fn, wrt, wrt2=None):
        self.fn, self.wrt, self.wrt2 = fn, wrt, wrt2
        self.signature = inspect.signature(fn)
        self.__name__ = f"{fn.__name__}_split2"

    def __call__(self, *args, **kwargs):
        wrt2 = self.wrt2
        if wrt2 is None:
            bound = self.signature.bind(*args, **kwargs)
            wrt2 = tuple(n for n, v in bound.arguments.items() if not isinstance(v, _NO_GRADIENT))
        if self.wrt:
            first = transforms.derived(self.fn, "split", self.wrt)
            gen = transforms.derived(first, "split", wrt2)(*args, **kwargs)
        else:
            gen = transforms.derived(self.fn, "split", wrt2)(*args, **kwargs)
        return runtime.Split2(gen, next(gen), self.wrt, wrt2)

    def with_wrt(self, wrt2):
        """The same with respect to ``wrt2`` (a tuple of names)."""
        key = ("split2", self.fn, self.wrt, tuple(wrt2))
        if key not in _SPLITTERS:
            _SPLITTERS[key] = Splitter2(self.fn, self.wrt, tuple(wrt2))
        return _SPLITTERS[key]

    def __repr__(self):
        return (f"<split derivative of the split derivative of {self.fn.__qualname__} wrt "
                f"{self.wrt}, then {self.wrt2}>")


def splitter2(splitter_):
    """The :class:`Splitter2` of a specialized :class:`Splitter` (its ``wrt2`` set later)."""
    key = ("split2", splitter_.fn, tuple(splitter_.wrt), None)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = Splitter2(splitter_.fn, tuple(splitter_.wrt))
    return _SPLITTERS[key]


def split_rule(obj):
    """The rule of a :class:`Splitter` call ``s = f_split(a, b)``: the cotangent of ``s`` is
    what ``recursion_send`` returned, each argument's gradient taken from it by name. For a
    :class:`Splitter2` call, what finished it (``runtime.split2_final``)."""
    if not isinstance(obj, (Splitter, Splitter2)):
        return None
    key = ("split", obj)
    if key not in _RULES:
        params = list(obj.signature.parameters.values())
        aliases = {p.name: f"_a{i}" for i, p in enumerate(params)}
        roles = {aliases[p.name]: param(p.name) for p in params}
        grads = _name("_dy")
        if isinstance(obj, Splitter2):
            grads = gast.Call(_name("split2_final"), [_name("_y"), grads], [])
        outputs = {
            p.name: gast.Call(_name("recursion_grad"), [
                grads, gast.Constant(p.name, None), _name(aliases[p.name])], [])
            for p in params
        }
        namespace = DictNamespace({"recursion_grad": runtime.recursion_grad,
                                   "split2_final": runtime.split2_final,
                                   "recursion_no_tangent": runtime.recursion_no_tangent})
        vjp = Template([], outputs, namespace, {**roles, "_y": RESULT, "_dy": COTANGENT})
        refused = {p.name: gast.Call(_name("recursion_no_tangent"), [], []) for p in params}
        jvp = Template([], refused, namespace, roles)
        _RULES[key] = Rule(obj, obj.signature, vjp_template=vjp, jvp_template=jvp,
                           kind=Kind.DERIVED, namespace=namespace)
    return _RULES[key]


class JvpPair:
    """``f_jvp_pair((da, db), a, b)``: ``f``'s value and tangent from one call of its jvp with
    respect to ``wrt``. Forward-mode code calls it in place of a recursive call and its tangent,
    so each level of a recursion runs its primal once (a call and a separate tangent function
    would each run it, and every level below)."""

    def __init__(self, fn, wrt):
        self.fn, self.wrt = fn, wrt
        self.signature = inspect.signature(fn)
        self.__name__ = f"{fn.__name__}_jvp_pair"
        # its call differentiated again is that of the callee's jvp (pair_rule): only when it
        # takes every argument by position (an optional one is given its default here)
        self.pairable = all(p.kind == p.POSITIONAL_OR_KEYWORD
                            for p in self.signature.parameters.values())

    def __call__(self, tangents, *args, **kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return self.generated()(*bound.args, tangents)

    def generated(self):
        """The callee's generated jvp, ``f_jvp(a, n, tangent)``: every parameter plain, an
        optional one too (no ``*rest``, which no rule differentiates again)."""
        return transforms.derived(self.fn, "jvp", self.wrt, Options(plain_defaults=True))

    def __repr__(self):
        return f"<value and tangent of {self.fn.__qualname__} wrt {self.wrt}>"


def pair_rule(obj):
    """The rule of a :class:`JvpPair` call ``P((da,), a, n)`` in forward-mode code that is
    differentiated again: that of the callee's generated jvp ``g(a, n, tangent)`` it calls
    (the tangents passed first). Forward mode pairs it again (``g``'s own JvpPair), reverse
    mode splits it (``normalize/recursion.py``), so each level still runs once."""
    if not isinstance(obj, JvpPair) or not obj.pairable:
        return None
    key = ("pair", obj)
    if key not in _RULES:
        g = obj.generated()
        rule = _build(g, lazy=True)
        params = list(inspect.signature(g).parameters.values())
        # the optional parameters keep their defaults for the call, which may leave them out
        optional = {p.name: p.default for p in obj.signature.parameters.values()}
        params[:-1] = [p.replace(default=optional.get(p.name, p.empty)) for p in params[:-1]]
        rule.signature = inspect.Signature(params[-1:] + params[:-1])
        rule.fn = obj
        rule.recursive = g
        _RULES[key] = rule
    return _RULES[key]


def jvp_pair(fn, wrt):
    """The :class:`JvpPair` of ``fn`` with respect to ``wrt`` (a tuple of names)."""
    key = ("pair", fn, wrt)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = JvpPair(fn, wrt)
    return _SPLITTERS[key]



class SplitJvp:
    """``f_split_jvp((da,), a, b)``: forward mode's form of a split call ``f_split(a, b)``
    (``transform/forward.py``). It starts the jvp, with respect to ``wrt``, of ``f``'s split
    derivative with respect to ``split_wrt``: a generator that runs ``f``'s primal and its
    tangent once, yields both, and is later sent the cotangent and its tangent
    (``runtime.recursion_send_pair``). The returned :class:`runtime.Split` holds the value and
    its tangent: each level of a recursion runs once at second order too."""

    def __init__(self, fn, split_wrt, wrt):
        self.fn, self.split_wrt, self.wrt = fn, split_wrt, wrt
        self.signature = inspect.signature(fn)
        self.__name__ = f"{fn.__name__}_split_jvp"

    def __call__(self, tangents, *args, **kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        split = transforms.derived(self.fn, "split", self.split_wrt)
        gen = transforms.derived(split, "jvp", self.wrt)(*bound.args, tangents)
        value, tangent = next(gen)
        return runtime.Split(gen, value, self.split_wrt, tangent)

    def __repr__(self):
        return (f"<split derivative of {self.fn.__qualname__} wrt {self.split_wrt}, with "
                f"tangents wrt {self.wrt}>")


def split_jvp(splitter_, wrt):
    """The :class:`SplitJvp` of a :class:`Splitter` with tangents with respect to ``wrt``."""
    key = ("split_jvp", splitter_.fn, splitter_.wrt, wrt)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = SplitJvp(splitter_.fn, splitter_.wrt, wrt)
    return _SPLITTERS[key]


# --- third order and beyond through a recursion (normalize/recursion.higher) ---------------------
class SplitterN:
    """``f_splitn(a, b)``: starts the split derivative of order ``len(wrts)`` (3 and more) of
    ``f`` (``runtime.SplitN``): f's split derivative with respect to ``wrts[0]``, its split
    derivative with respect to ``wrts[1]``, and so on. The last ``wrts`` entry None (not yet
    known, ``with_wrt`` sets it) takes every argument that can carry a gradient. An entry may be
    a forward layer (``runtime.JvpLayer``, normalize/recursion.unpair): the jvp of the chain
    below it, which takes the tangents as one more parameter (``signature``: the chain's)."""

    def __init__(self, fn, wrts):
        self.fn, self.wrts = fn, wrts
        self.order = sum(1 for w in wrts if not isinstance(w, runtime.JvpLayer))
        forward = [i for i, w in enumerate(wrts) if isinstance(w, runtime.JvpLayer)]
        below = chain(fn, wrts[:forward[-1] + 1]) if forward else fn
        self.signature = inspect.signature(below)
        self.__name__ = f"{fn.__name__}_split{self.order}"

    def __call__(self, *args, **kwargs):
        wrts = self.wrts
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if wrts[-1] is None:
            wrts = wrts[:-1] + (tuple(n for n, v in bound.arguments.items()
                                      if not isinstance(v, _NO_GRADIENT)),)
        return runtime.SplitN(chain(self.fn, wrts)(*bound.args), wrts)

    def with_wrt(self, wrt):
        """The same with the last order's ``wrt`` set (a tuple of names)."""
        return splitter_n(self.fn, self.wrts[:-1] + (tuple(wrt),))

    def raised(self):
        """The splitter of the next order (its last ``wrt`` not yet known)."""
        return splitter_n(self.fn, self.wrts + (None,))

    def __repr__(self):
        return f"<split derivative of order {self.order} of {self.fn.__qualname__}: {self.wrts}>"


def chain(fn, wrts):
    """The generated function of the chain ``wrts`` of derivatives of ``fn`` (each a split
    derivative, or a jvp for a ``runtime.JvpLayer``, taking every parameter plain)."""
    for wrt in wrts:
        if isinstance(wrt, runtime.JvpLayer):
            fn = transforms.derived(fn, "jvp", wrt.wrt, Options(plain_defaults=True))
        else:
            fn = transforms.derived(fn, "split", wrt)
    return fn


class SplitNJvp:
    """``f_splitn_jvp((da,), a, b)``: forward mode's form of a split call of order k
    (``transform/forward.py``: a :class:`SplitterN` call, or a :class:`Splitter2` call written
    as one by ``normalize/recursion.steps``). It starts the jvp, with respect to ``wrt``, of
    ``f``'s split derivative of order k (``splitter_.wrts``): a generator whose every step is
    sent a value with its tangent and gives one with its tangent (``runtime.SplitN``, paired).
    Each level of a recursion runs once in ``jvp(grad(grad(f)))`` and ``hvp(grad(f))`` too."""

    def __init__(self, splitter_, wrt):
        self.splitter, self.wrt = splitter_, wrt
        self.signature = splitter_.signature
        self.__name__ = f"{splitter_.__name__}_jvp"

    def __call__(self, tangents, *args, **kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        g = chain(self.splitter.fn, self.splitter.wrts)
        gen = transforms.derived(g, "jvp", self.wrt)(*bound.args, tangents)
        return runtime.SplitN(gen, self.splitter.wrts, paired=True)

    def __repr__(self):
        return f"<jvp wrt {self.wrt} of {self.splitter!r}>"


def split_n_jvp(splitter_, wrt):
    """The :class:`SplitNJvp` of a :class:`SplitterN` with tangents with respect to ``wrt``."""
    key = ("splitn_jvp", splitter_, wrt)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = SplitNJvp(splitter_, wrt)
    return _SPLITTERS[key]


def splitter_n(fn, wrts):
    """The :class:`SplitterN` of ``fn`` with respect to ``wrts`` (one per key)."""
    key = ("splitn", fn, wrts)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = SplitterN(fn, wrts)
    return _SPLITTERS[key]


class Step:
    """A step of a started split derivative of order ``order`` in code of that order: ``take``
    sends a value (``runtime.step_take``), ``got`` reads what a step gave (``runtime.step_got``).
    Its rule (``step_rule``) is the step of the next order that takes the other way:
    ``2**order + 1 - j``."""

    def __init__(self, kind, j, order):
        self.kind, self.j, self.order = kind, j, order
        self.__name__ = f"step{j}_{kind}"
        self.signature = inspect.signature(_take if kind == "take" else _got)

    def __call__(self, s, x=None):
        if self.kind == "take":
            return runtime.step_take(s, self.j, x)
        return runtime.step_got(s, self.j, x)

    def raised(self):
        """The same step in code of the next order."""
        return step(self.kind, self.j, self.order + 1)

    def __repr__(self):
        return f"<step {self.j} ({self.kind}) of a split derivative of order {self.order}>"


def _take(s, x):
    """The signature of a taking step."""


def _got(s, after):
    """The signature of a reading step (``after``: the token of the step taken)."""


def step(kind, j, order):
    """The :class:`Step` (one per key)."""
    key = ("step", kind, j, order)
    if key not in _SPLITTERS:
        _SPLITTERS[key] = Step(kind, j, order)
    return _SPLITTERS[key]


def step_rule(obj):
    """The rule of a :class:`Step` or :class:`SplitterN` call, in reverse mode of the next
    order. ``t = take_j(s, x)``: the cotangent of ``x`` is what step ``J = 2**order + 1 - j``
    gives, read after the token ``dt``. ``y = got_j(s, after)``: ``dy`` is sent at step ``J``,
    whose token is the cotangent of ``after``. A start ``s = f_splitn(a, b)``: each argument's
    cotangent from the last step's gradients (``recursion_grad``)."""
    if not isinstance(obj, (Step, SplitterN)):
        return None
    key = ("steprule", obj)
    if key not in _RULES:
        _RULES[key] = _step_rule(obj) if isinstance(obj, Step) else _start_rule(obj)
    return _RULES[key]


def _step_rule(obj):
    order = obj.order
    back = 2 ** order + 1 - obj.j
    names = {"take": step("take", back, order), "got": step("got", back, order),
             "recursion_no_tangent": runtime.recursion_no_tangent}
    namespace = DictNamespace(names)
    # the handle's own cotangent is a token (``runtime.SplitN``): ``s`` itself
    if obj.kind == "take":
        outputs = {"s": "s", "x": "got(s, dy)"}
        roles = {"s": param("s"), "x": param("x"), "dy": COTANGENT}
    else:
        outputs = {"s": "s", "after": "take(s, dy)"}
        roles = {"s": param("s"), "after": param("after"), "dy": COTANGENT}
    vjp = Template([], {k: gast.parse(v).body[0].value for k, v in outputs.items()}, namespace,
                   roles)
    refused = {k: gast.Call(_name("recursion_no_tangent"), [], []) for k in outputs}
    jvp = Template([], refused, namespace, {k: v for k, v in roles.items() if k != "dy"})
    rule = Rule(obj, obj.signature, vjp_template=vjp, jvp_template=jvp, kind=Kind.DERIVED,
                namespace=namespace)
    # the cotangent of what a step sent is always read back (analysis/activity.py,
    # transform/reverse.py): the steps after it may depend on it, which no statement shows
    rule.takes_step = obj.kind == "take"
    # the send of the adjoint of a read is never dropped: carried by the handle when the token
    # ``after`` is a constant or inactive (transform/reverse.py: _moved_step)
    rule.sends_step = obj.kind == "got"
    return rule


def _start_rule(obj):
    params = list(obj.signature.parameters.values())
    aliases = {p.name: f"_a{i}" for i, p in enumerate(params)}
    roles = {aliases[p.name]: param(p.name) for p in params}
    final = gast.Call(_name("got"), [_name("_y"), _name("_dy")], [])
    outputs = {p.name: gast.Call(_name("recursion_grad"), [
        final, gast.Constant(p.name, None), _name(aliases[p.name])], []) for p in params}
    namespace = DictNamespace({"recursion_grad": runtime.recursion_grad,
                               "got": step("got", 2 ** obj.order, obj.order),
                               "recursion_no_tangent": runtime.recursion_no_tangent})
    vjp = Template([], outputs, namespace, {**roles, "_y": RESULT, "_dy": COTANGENT})
    refused = {p.name: gast.Call(_name("recursion_no_tangent"), [], []) for p in params}
    jvp = Template([], refused, namespace, roles)
    rule = Rule(obj, obj.signature, vjp_template=vjp, jvp_template=jvp, kind=Kind.DERIVED,
                namespace=namespace)
    # every step may give a value that varies through what the steps before it were sent,
    # whether or not the call's arguments vary: the handle counts as varying
    # (analysis/activity.py)
    rule.starts_steps = True
    return rule
