"""Derived functions pickle by reference: what was asked for, not the generated code.

``pickle.dumps(grad(loss, wrt="W"))`` holds the transform (``"grad"``), the function it was
applied to, ``wrt`` and the options; ``pickle.loads`` calls ``srcgrad.grad(loss, wrt="W")``
again in the receiving process (which finds the code in the disk cache when it has one). So it
works with ``multiprocessing``, ``concurrent.futures.ProcessPoolExecutor``, joblib and Dask, and
for derivatives of derivatives (the inner one is pickled the same way).

The function is pickled by module and qualified name when another process can import it there.
Otherwise (defined in ``__main__``, in a function, or a lambda) it is pickled by value: its source
as srcgrad reads it (decorators dropped, a lambda as a ``def``), the values of the globals and
closure variables it names (modules by name, functions again by reference or by value), and its
defaults. The receiving process compiles that source under a file name of its own, so srcgrad
can read it there. What cannot be pickled is a clear ``PicklingError`` naming it.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import importlib
import linecache
import pickle
import types

from .derived import Derived

BY_VALUE = "__srcgrad_by_value__"  # on a function pickled by value: its one _ByValue


def reduce_derived(derived):
    """``Derived.__reduce__``: rebuild by calling the same transform again."""
    transform, of, wrt, options = derived.__srcgrad_request__
    return _rebuild, (transform, function_reference(of), wrt, options)


def _rebuild(transform, of, wrt, options):
    from . import transforms

    return transforms.get(transform)(of, wrt, **options)


def function_reference(fn):
    """``fn`` when pickle can find it by name in another process; else ``fn`` by value."""
    if type(fn) is Derived or _importable(fn):
        return fn
    if not isinstance(fn, types.FunctionType):
        return fn  # a NumPy function with a rule, a class: pickle knows it by name
    return _ByValue.of(fn)


def _importable(fn):
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return False
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return False
    return obj is fn


class _ByValue:
    """A function to pickle by its source and the values it reads."""

    def __init__(self, fn):
        self.fn = fn

    @classmethod
    def of(cls, fn):
        """The one ``_ByValue`` of ``fn``: pickle's memo then writes a function that calls
        itself (or two that call each other) once."""
        found = fn.__dict__.get(BY_VALUE)
        if found is None:
            found = fn.__dict__[BY_VALUE] = cls(fn)
        return found

    def __reduce__(self):
        source, name, defaults, names = _source(self.fn)
        where = f"{getattr(self.fn, '__module__', '?')}.{self.fn.__qualname__}"
        state = {n: _value(v, n, self.fn) for n, v in _reads(self.fn, names).items()}
        # the globals are state, set after the function exists: so the cycle is possible
        names = (name, self.fn.__name__, self.fn.__qualname__)
        return (_from_source, (source, names, where, defaults), state, None, None,
                _set_globals)


def _source(fn):
    """The text of ``fn`` as srcgrad reads it (its defaults bound to names), its name there,
    the defaults' values and the names it reads."""
    import gast

    from .frontend.source import parse_function

    node = parse_function(fn).node
    args = node.args
    values = list(fn.__defaults__ or ())
    defaults = {}
    for i, _ in enumerate(args.defaults):
        name = f"__srcgrad_default_{i}"
        defaults[name] = values[i]
        args.defaults[i] = gast.Name(name, gast.Load(), None, None)
    kw_values = fn.__kwdefaults__ or {}
    for i, (arg, expr) in enumerate(zip(args.kwonlyargs, args.kw_defaults)):
        if expr is not None:
            name = f"__srcgrad_kwdefault_{i}"
            defaults[name] = kw_values[arg.id]
            args.kw_defaults[i] = gast.Name(name, gast.Load(), None, None)
    names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    module = gast.gast_to_ast(gast.Module([node], []))
    text = ast.unparse(ast.fix_missing_locations(module)) + "\n"
    return text, node.name, {k: _value(v, k, fn) for k, v in defaults.items()}, names


def _reads(fn, names):
    """The values of the globals and closure variables among ``names``."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    found = {}
    for name in sorted(names):
        if name in cells:
            try:
                found[name] = cells[name].cell_contents
            except ValueError:
                continue
        elif name in fn.__globals__:
            found[name] = fn.__globals__[name]
    return found


def _value(value, name, fn):
    if isinstance(value, types.ModuleType):
        return _Module(value.__name__)
    if isinstance(value, types.FunctionType):
        return function_reference(value)
    try:
        pickle.dumps(value)
    except Exception as exc:
        raise pickle.PicklingError(
            f"cannot pickle {fn.__qualname__} by value: the {name!r} it reads "
            f"({type(value).__name__}) cannot be pickled ({exc}); define {fn.__qualname__} "
            f"in an importable module instead"
        ) from None
    return value


class _Module:
    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return importlib.import_module, (self.name,)


def _from_source(source, names, where, defaults):
    """The function defined by ``source``, in a namespace of its own; ``names`` are its name
    there, and the name and qualified name it had."""
    name, fn_name, qualname = names
    # named after its text: two functions of one name (two scripts' `loss` in a reused worker)
    # never share a file name, so neither is read with the other's source
    digest = hashlib.blake2b(source.encode(), digest_size=6).hexdigest()
    filename = f"<srcgrad pickled {where} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__srcgrad_pickled__", "__builtins__": builtins, **defaults}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[name]
    fn.__name__, fn.__qualname__ = fn_name, qualname
    return fn


def _set_globals(fn, state):
    fn.__globals__.update(state)
