"""What a transform returns: the generated function, with a name for what it is.

A :class:`Derived` is a ``functools.partial`` of the generated function with no bound
arguments: calling it is the C call of ``partial`` (tens of nanoseconds over a plain call), and it
adds what a plain function cannot have:

* a ``repr`` that says what it is: ``<grad of loss wrt ('W', 'b')>``;
* pickling by reference (``pickling.py``): the transform, the function it was applied to (by
  module and qualified name, or by value when it has none), ``wrt`` and the options; the process
  that unpickles it transforms again, through the disk cache;
* a highlighted HTML view in a notebook (``_repr_html_``, the same as ``show()``);
* the attributes of the generated function (``__code__``, ``__name__``, ``__wrapped__`` for
  ``inspect.signature`` and ``inspect.getsource``), and method binding as a class attribute.

Inside srcgrad only the generated function is used: :func:`unwrap` gives it back, and a name in a
user's namespace that holds a ``Derived`` resolves to it (``frontend/resolve.py``).
"""

from __future__ import annotations

import functools
import types
from typing import TYPE_CHECKING, Any

PUBLIC = "__srcgrad_public__"  # on a generated function: the Derived that wraps it
PYTHON_BEHIND = "__srcgrad_python__"  # on a numba-compiled derivative: its Python derivative
GENERATED = "__srcgrad_generated__"  # on a Derived: the generated function (what unwrap gives)


if TYPE_CHECKING:
    _Partial = functools.partial[Any]
else:
    _Partial = functools.partial


class Derived(_Partial):
    """A derived function: ``df(*args, **kwargs)`` calls ``called``: the generated code
    ``fn``, or (``api.by_kinds``) ``fn`` regenerated for the kinds of the arguments."""

    def __new__(cls, fn: Any, transform: str, of: Any, wrt: Any,
                options: dict[str, Any], called: Any = None) -> Derived:
        self = super().__new__(cls, fn if called is None else called)
        self.__dict__.update(
            __name__=fn.__name__, __qualname__=fn.__qualname__, __module__=fn.__module__,
            __doc__=fn.__doc__, __wrapped__=fn,
            __srcgrad_request__=(transform, of, wrt, dict(options)),
        )
        self.__dict__[GENERATED] = fn
        return self

    def __getattr__(self, name: str) -> Any:  # what the generated function has (``__code__``, ...)
        return getattr(self.__dict__[GENERATED], name)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        transform, of, wrt, options = self.__srcgrad_request__
        extra = "".join(f", {k}={v!r}" for k, v in options.items() if k == "method")
        return f"<{transform} of {_name(of)} wrt {_selected(unwrap(self), of, wrt)!r}{extra}>"

    def __reduce__(self) -> Any:
        from .pickling import reduce_derived

        return reduce_derived(self)

    def _repr_html_(self) -> str:
        from .emit.display import source_html
        from .kinds import Specialized

        called = self.func  # the code specialized to the last call's kinds, if any
        return source_html(called.last() if isinstance(called, Specialized) else unwrap(self))


def _name(fn: Any) -> str:
    if isinstance(fn, Derived):
        return repr(fn)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return name.rpartition("<locals>.")[2]


def _selected(generated: Any, of: Any, wrt: Any) -> Any:
    """``wrt`` as parameter names where they are known (``0`` -> ``'x'``)."""
    # a function known by its rule (np.sin): the generated one has its parameters first
    code = getattr(unwrap(of), "__code__", None) or getattr(generated, "__code__", None)
    if code is None:
        return wrt
    params = code.co_varnames[: code.co_argcount]
    if isinstance(unwrap(of), types.MethodType):  # a bound method: positions after `self`
        params = params[1:]

    def name(sel: Any) -> Any:
        if isinstance(sel, int) and not isinstance(sel, bool) and -len(params) <= sel < len(params):
            return params[sel]
        return sel

    return tuple(name(s) for s in wrt) if isinstance(wrt, (tuple, list)) else name(wrt)


def wrap(fn: Any, transform: str, of: Any, wrt: Any, options: dict[str, Any],
         called: Any = None) -> Derived:
    """The one ``Derived`` of the generated ``fn`` (made once, kept on ``fn``), calling
    ``called`` (by default ``fn``)."""
    made = fn.__dict__.get(PUBLIC) if hasattr(fn, "__dict__") else None
    if made is None:
        made = Derived(fn, transform, of, wrt, options, called)
        fn.__dict__[PUBLIC] = made
    return made


def unwrap(obj: Any) -> Any:
    """The generated function behind a ``Derived``; anything else as it is."""
    return obj.__dict__[GENERATED] if type(obj) is Derived else obj


def plain(obj: Any) -> Any:
    """``unwrap(obj)``, and for a derivative compiled by numba the Python derivative it
    compiles: what other transforms read and inline."""
    fn = unwrap(obj)
    if fn.__class__ is types.ModuleType:  # none is (and NumPy's getattr of a missing name is slow)
        return fn
    return getattr(fn, PYTHON_BEHIND, fn)
