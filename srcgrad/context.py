"""The options of a transform, and the context every pass receives: ``run(node, ctx) -> node``.

Holds what the passes of one derivation share beyond the tree: the request (the user function,
``mode``, ``wrt``, options), where errors point (``location``, ``source_lines``), the names
(the user function's namespace, a namer, its local names) and the results of analyses that later
passes read, each set by the stage that computes it:

    helpers         anf        generated names of the runtime helpers for in-place updates
    aux             aux        the expression holding the auxiliary output (``has_aux``)
    receivers       inline     the classes of locals whose methods are inlined
    derivative      guard      where the staleness guard finds the compiled function
    ops, active     activity   each statement's operation; the variables derivatives flow through
    out_name        transform  the derived function's name
    rest_layout     functional a derivative's ``*rest`` undone: optional, trailing parameters
    defaults        transform  the parameter defaults the transform dropped with a new parameter
    assigned_in_control  reverse  variables assigned inside an ``if`` or loop (and trip counters)
    shape_sets, adjoint_names  reverse  symbolic broadcast shapes; each variable's adjoint name
    followed        sharing    the containers whose items' updates in place reach their holders
    updated_params  sharing    the parameters whose object ``x op= v`` may update in place

It also gives one name per object that generated code refers to beyond the user's own names
(runtime helpers, ``numpy`` when the user imported it under another name), the user's own name
wherever it already denotes that object, and records the functions inlined, so a stale
derivative is noticed.

    ctx.global_name(runtime.unbroadcast, "unbroadcast")   ->  "unbroadcast"  (bound as a cell)
    ctx.global_name(numpy, "np")  when the user wrote `import numpy as np`  ->  "np" (theirs)
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """What the user asked for beyond the transform: see ``grad``'s keyword arguments."""

    optimize: bool = True
    verbose: bool = False
    dump: bool = False
    has_aux: bool = False  # f returns (output, aux): grad and value_and_grad
    backend: str = "python"  # "python", "numba" or "auto" (emit/numba_backend.py)
    # recursive calls in reverse-mode code run each level once (normalize/recursion.py); False
    # for code that is differentiated again
    split_recursion: bool = True
    checkpoint: object = None  # reverse transforms: snapshots per checkpointed loop, or "auto"
    max_memory: object = "200MB"  # what checkpoint="auto" may hold
    # ((parameter, kind), ...): the argument kinds a derivative is specialized to (kinds.py)
    kinds: tuple = ()
    # Python code numba compiles (emit/numba_backend.py): no per-step products kept for after
    # a loop (optimize/steps.py); specialized, per-iteration saves of numbers as typed arrays,
    # no lists of floats (optimize/scalars.py)
    for_numba: bool = False
    # a jvp whose optional parameters are plain ones (no `*rest`): what a JvpPair calls, so
    # that a recursion with default values is differentiated again (rules/derived.JvpPair)
    plain_defaults: bool = False
    # ((parameter, plan), ...): the arguments rebuilt as their registered unflatten builds them
    # (rebuilding.py, normalize/rebuilt_arguments.py)
    rebuild: tuple = ()


@dataclass
class Context:
    # the request
    fn: object  # the user function
    mode: str  # "grad", "value_and_grad", "vjp", "jvp", "tangent" or "split"
    wrt: tuple  # parameter names
    as_tuple: bool = False  # gradients as a tuple even when there is only one
    optimize: bool = True
    has_aux: bool = False  # f returns (output, aux)
    # parameter -> the callable the call passes, for a derivative specialized per function
    # passed (normalize/callables.py)
    static: dict = field(default_factory=dict)
    # the source, for errors and comments
    location: object = None
    source_lines: list = field(default_factory=list)
    # parameter -> the value the call passes, for a derivative specialized per classes of the
    # objects it holds (normalize/methods.py)
    examples: dict = field(default_factory=dict)
    # parameter -> the ``Packed`` length (keys) of the tuple or list (dict) a call passes,
    # where the derivative is specialized per length (``f(*xs)``, normalize/starred_params.py)
    packed: dict = field(default_factory=dict)
    # the parameters a call passes None, and whether the derivative is specialized per the
    # callables a call passes at all (normalize/chosen.py decides the tests `g is None`)
    nones: frozenset = frozenset()
    specialized: bool = False
    local_functions: dict = field(default_factory=dict)  # lambdas and nested defs, by name
    # a list of lambdas holding (which, defaults) passed to a helper: name -> its lambdas
    lambda_lists: dict = field(default_factory=dict)  # (normalize/lambda_lists.py)
    dispatched_fields: list = field(default_factory=list)  # (normalize/chosen_passed_fields.py)
    # name -> builtin, for a builtin the desugaring calls under a name of its own (the user's
    # module binds the builtin's name to something else): extras of the namespace made later
    renamed_builtins: dict = field(default_factory=dict)
    # names
    namespace: object = None  # the user function's Namespace
    namer: object = None
    local_names: set = field(default_factory=set)
    user_names: dict = field(default_factory=dict)  # a helper's local renamed -> its own name
    _names: dict = field(default_factory=dict)  # id(object) -> generated name
    # (namespace, callee expression, function) for every inlined call: the derivative is stale
    # once the expression names another function (a helper redefined after the transform)
    dependencies: list = field(default_factory=list)
    # results of earlier stages, read by later ones (see the module docstring)
    helpers: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)
    # the function's own assignments, by id (activity): optimize/fold.py keeps `x * 1.0` there
    primal_statements: dict = field(default_factory=dict)
    active: set = field(default_factory=set)
    rest_layout: object = None  # normalize/functional.py's RestLayout
    out_name: str = None
    seed: str = None  # the seed parameter of reverse mode (vjp, pullback)
    defaults: list = field(default_factory=list)
    assigned_in_control: set = field(default_factory=set)
    shape_sets: dict = field(default_factory=dict)
    adjoint_names: dict = field(default_factory=dict)
    aux: object = None  # the expression holding the auxiliary output (has_aux)
    derivative: object = None  # emit/guard.py's Derivative, when the function has a guard
    receivers: object = None  # inline: what is known of the classes of locals (methods.py)
    split_recursion: bool = True  # Options.split_recursion
    split_used: bool = False  # normalize/recursion.py split a recursive call
    # the kinds of recursive calls the generated code makes ("split", "pair", "split_jvp",
    # "pair_defaults"): which transforms of it differentiate them (pipeline._differentiable)
    special_calls: set = field(default_factory=set)
    yield_marker: object = None  # (name, runtime.split_yield): normalize/recursion.mark_yields
    kinds: dict = field(default_factory=dict)  # Options.kinds: parameter -> kind of its argument
    for_numba: bool = False  # Options.for_numba
    # a `try` statement was taken apart into markers (normalize/handlers.py): emit/handlers.py
    # writes them back; without one it has nothing to look for
    tried: bool = False
    plain_defaults: bool = False  # Options.plain_defaults
    rebuild: dict = field(default_factory=dict)  # Options.rebuild: parameter -> plan
    # the containers whose items' updates in place (`T[i] += v`) normalize/sharing.py passes on
    # to every other holder of the item, by identity (None: not known; True: every container,
    # as no item is updated in place)
    followed: object = None
    # the parameters whose object `x op= v` (normalize/sharing.py) may update in place, through
    # any name: normalize/inplace.py checks that they share nothing with another argument
    updated_params: set = field(default_factory=set)

    @property
    def extras(self):
        """Generated name -> object, for names generated code adds beyond the user's own."""
        return self.namespace.extras

    @property
    def in_place_calls(self):
        """Generated names of the helpers that update a list or array in place."""
        return tuple(self.helpers[h] for h in ("list_append", "list_pop", "setitem"))

    def named(self, obj):
        """The name generated code calls ``obj`` by, if it calls it (``global_name``)."""
        return self._names.get(id(obj))

    def global_name(self, obj, preferred):
        """The name generated code uses for ``obj``; prefers the user's own name for it."""
        key = id(obj)
        if key in self._names:
            return self._names[key]
        if preferred not in self.local_names and self.namespace.lookup(preferred) is obj:
            name = preferred
            self.namer.reserve(name)
        else:
            name = self.namer.fresh(preferred)
            self.extras[name] = obj
        self._names[key] = name
        return name
