"""A persistent disk cache of derivatives: a new process reuses the code an earlier one generated.

On by default, as numba's ``cache=True``; ``SRCGRAD_CACHE=0`` turns it off and
``SRCGRAD_CACHE_DIR`` moves it from the platform's user cache directory (``$XDG_CACHE_HOME`` or
``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows, then
``srcgrad``). One file per derivative holds its text, its compiled code, and how to find again
every object the code was bound to.

A stale entry would be a silently wrong gradient, so an entry is used only when what the
derivative was generated from is unchanged, checked in two steps:

* **the key**, computed before anything is generated, hashes srcgrad's own modules (name, size,
  modification time of each), the versions of NumPy, gast and Python, the function (its code:
  bytecode, constants, names, file, first line, qualified name; its defaults by value), the
  transform, ``wrt`` and the options, and every custom rule registered so far (its function and
  its code);
* **the reads**, recorded while the derivative was generated (``frontend/resolve.py``): every name
  and dotted name the passes looked up, in the function's namespace and in each inlined helper's,
  with a signature of what it denoted then: a module by name, a function by its code and
  defaults, a number, string or array by value, a class or NumPy function by module and name,
  ``missing`` for a name not defined. The entry is used only when each name denotes an object of
  the same signature now. Anything else read (an instance of a user class, say) has no signature,
  and the derivative is not cached on disk: it is generated in every process, as without a cache.

A file is used only when it names the key asked for and the digest it records matches its
content: a truncated, tampered or foreign file is ignored (never executed) and written anew.
Files are written to a temporary name and renamed (``os.replace``), so concurrent processes
read either a whole entry or none.

The key trusts that the srcgrad running is the srcgrad on disk: a tool that changes srcgrad in
memory (a rule template mutated by ``tests/mutate_rules.py``, a pass patched by a test) runs with
``SRCGRAD_CACHE=0``, or with a ``SRCGRAD_CACHE_DIR`` of its own that it removes (the test suite's
``conftest.py``).

    python -m srcgrad cache info     # where the cache is, how many entries, their size
    python -m srcgrad cache clear    # delete every entry
"""

from __future__ import annotations

import dataclasses
import importlib
import marshal
import os
import sys
import types
from hashlib import blake2b
from typing import Any

import numpy as np

from ..derived import PUBLIC, Derived
from ..errors import SrcgradError
from ..frontend.resolve import MISSING, Namespace, recording
from ..frontend.source import GENERATED_SOURCE
from ..rules.registry import CUSTOM_RULES
from . import notes
from .compile import _contents, instantiate

FORMAT = 1
MAGIC = b"srcgrad-cache"
SUFFIX = ".sgc"
_LIBRARIES = ("builtins", "numpy", "srcgrad", "math", "cmath", "scipy", "operator", "functools")


# what this process did: derivatives loaded, generated and stored, generated but not storable
STATS = {"loaded": 0, "stored": 0, "uncacheable": 0}


class Unsignable(SrcgradError):
    """An object whose equality across processes the cache cannot establish (caught here:
    the derivative is then not stored)."""


def enabled():
    """Whether the disk cache is on (``SRCGRAD_CACHE=0`` turns it off)."""
    return os.environ.get("SRCGRAD_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def directory():
    """The cache directory: ``SRCGRAD_CACHE_DIR``, else srcgrad's user cache directory."""
    explicit = os.environ.get("SRCGRAD_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(base, "srcgrad", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/srcgrad")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "srcgrad")


def derive_cached(f: Any, target: Any, mode: str, wrt: tuple[str, ...], as_tuple: bool,
                  options: Any, derive: Any) -> Any:
    """``derive(target, mode, wrt, options, as_tuple)``'s function, from the disk cache when an
    entry for it is valid; else generated and, when everything it read has a signature, stored.
    ``f`` is what the user asked to differentiate (``target`` itself, or a function known only
    by its rule, for which ``target`` is a generated wrapper)."""
    key = None
    if enabled() and not (options.dump or options.verbose or os.environ.get("SRCGRAD_DUMP")):
        key = entry_key(f, mode, wrt, as_tuple, options)
    if key is not None:
        fn = _safely(load, key, target)
        if fn:
            STATS["loaded"] += 1
            return fn
    with recording() as reads:
        fn, _ = derive(target, mode, wrt, options, as_tuple=as_tuple)
    if key is not None and _safely(store, key, target, fn, reads) is False:
        STATS["uncacheable"] += 1
    return fn


def _safely(step, *args):
    """``step(*args)``, or False if it raised: the cache is never why a transform fails (an
    entry that cannot be read is a miss; one that cannot be written is not kept)."""
    try:
        return step(*args)
    except Exception:  # an unforeseen object or file: no entry, never an error
        return False


# --- the key -------------------------------------------------------------------------------------

def _sources():
    """Name, size and modification time of each of srcgrad's modules, as they were when srcgrad
    was imported (a module edited later is not the code this process runs)."""
    files: list = []
    _stat_tree(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "", files)
    return tuple(sorted(files))


_ENVIRONMENT: list = []


def environment():
    """What every entry depends on beyond its function: srcgrad's version and modules, the
    versions of Python, NumPy, gast, and of SciPy once it is imported (its rules call it)."""
    if not _ENVIRONMENT:
        import gast

        _ENVIRONMENT.append((
            FORMAT, getattr(sys.modules.get("srcgrad"), "__version__", ""), sys.version,
            sys.implementation.cache_tag, np.__version__, getattr(gast, "__version__", ""),
            _SOURCES,
        ))
    scipy = sys.modules.get("scipy")
    return _ENVIRONMENT[0] + (getattr(scipy, "__version__", None),)


def _stat_tree(directory_, prefix, out):
    with os.scandir(directory_) as found:
        for entry in found:
            if entry.name.endswith(".py"):
                st = entry.stat()
                out.append((prefix + entry.name, st.st_size, st.st_mtime_ns))
            elif entry.name != "__pycache__" and entry.is_dir():
                _stat_tree(entry.path, prefix + entry.name + "/", out)


_SOURCES = _sources()


def entry_key(f, mode, wrt, as_tuple, options):
    """The key of ``mode`` of ``f`` with respect to ``wrt``, or None when ``f`` has no
    signature."""
    choices = tuple(
        (field.name, getattr(options, field.name)) for field in dataclasses.fields(options)
        if field.name not in ("verbose", "dump")
    )
    try:
        ident = (environment(), signature(f), mode, tuple(wrt), as_tuple, choices)
    except Unsignable:
        return None
    return blake2b(repr(ident).encode(), digest_size=20).hexdigest()


# --- signatures ----------------------------------------------------------------------------------

def signature(obj, depth=0):
    """A description of ``obj`` that is equal in another process exactly when the object there
    is the same for a derivation (nested tuples of strings and numbers); Unsignable if none.
    A function with a rule the user registered (``srcgrad.adjoint``, ...) includes the rule."""
    own = _signature(obj, depth)
    if CUSTOM_RULES and callable(obj):
        rules = tuple((kind, signature(rule, depth + 1)) for kind, fn, rule in CUSTOM_RULES
                      if fn is obj)
        if rules:
            return own + (("rules",) + rules,)
    return own


def _signature(obj, depth):
    if depth > 8:
        raise Unsignable("nested too deeply")
    if obj is MISSING:
        return ("missing",)
    kind = type(obj)
    if obj is None or obj is Ellipsis or kind in (bool, int, float, complex, str, bytes):
        return ("value", kind.__name__, repr(obj))
    if kind in (tuple, list):
        return (kind.__name__,) + tuple(signature(o, depth + 1) for o in obj)
    if kind is dict:
        items = sorted((repr(signature(k, depth + 1)), signature(v, depth + 1))
                       for k, v in obj.items())
        return ("dict",) + tuple(items)
    if isinstance(obj, (np.ndarray, np.generic)):
        return _array_signature(obj)
    if isinstance(obj, np.dtype):
        return ("dtype", obj.str, str(obj))
    return _object_signature(obj, depth)


def _object_signature(obj, depth):
    """Modules, functions, classes, library callables and guards."""
    if isinstance(obj, types.ModuleType):
        return ("module", obj.__name__)
    if isinstance(obj, types.FunctionType):
        return _function_signature(obj, depth)
    if isinstance(obj, type):
        return ("class",) + _importable(obj) if _in_library(obj) else _class_signature(obj, depth)
    if type(obj).__name__ == "Derivative" and type(obj).__module__ == __package__ + ".guard":
        # the guard of a derivative being differentiated again: read, never bound (see
        # _Scopes.describe), and any guard is the same to the passes
        return ("guard",)
    if callable(obj) and _in_library(obj):
        return ("global",) + _importable(obj)
    raise Unsignable(f"{type(obj).__module__}.{type(obj).__qualname__}")


def _array_signature(obj):
    arr = np.asarray(obj)
    if arr.dtype.hasobject:
        raise Unsignable("an object array")
    digest = blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).hexdigest()
    return (type(obj).__name__, arr.dtype.str, arr.shape, digest)


def _function_signature(fn, depth):
    code = fn.__code__
    if code in GENERATED_SOURCE:
        # what it computes is its text and what that text is bound to (not the request that
        # made it: a derivative of the same function differs once a helper it inlined does)
        text = GENERATED_SOURCE[code][0]
        cells = tuple(_contents(c) for c in fn.__closure__ or ())
        return (
            "generated", blake2b(text.encode(), digest_size=16).hexdigest(),
            signature(cells, depth + 1), signature(fn.__defaults__, depth + 1),
            signature(fn.__kwdefaults__ or {}, depth + 1),
        )
    # a closure's values, and the function a decorator wraps (whose source inspect reads for
    # the wrapper), decide what it computes as much as its own code
    cells = tuple(_contents(c) for c in fn.__closure__ or ())
    wrapped = fn.__dict__.get("__wrapped__")
    return (
        "function", fn.__module__, fn.__qualname__, code_digest(code),
        signature(fn.__defaults__, depth + 1),
        signature(fn.__kwdefaults__ or {}, depth + 1),
        signature(cells, depth + 1),
        () if wrapped is None else signature(wrapped, depth + 1),
    )


def _class_signature(cls, depth):
    """A user's class: its bases and what it defines (methods by their code)."""
    members = []
    for name, value in sorted(vars(cls).items()):
        if name in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__"):
            continue
        inner = getattr(value, "__func__", value)
        if isinstance(value, property):
            inner = (value.fget, value.fset)
        try:
            members.append((name, signature(inner, depth + 1)))
        except Unsignable:
            members.append((name, type(value).__qualname__))
    bases = tuple(f"{b.__module__}.{b.__qualname__}" for b in cls.__mro__)
    return ("class", cls.__module__, cls.__qualname__, bases, tuple(members))


def code_digest(code):
    """A digest of a code object that is the same in every process (``marshal`` output is not:
    it depends on reference counts)."""
    h = blake2b(digest_size=16)
    _digest_code(code, h)
    return h.hexdigest()


def _digest_code(code, h):
    h.update(code.co_code)
    h.update(repr((
        code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_flags,
        code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, code.co_name,
        code.co_filename, code.co_firstlineno,
    )).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest_code(const, h)
        else:
            h.update(_const_repr(const).encode())


def _const_repr(const):
    if isinstance(const, frozenset):
        return "frozenset(" + ",".join(sorted(_const_repr(c) for c in const)) + ")"
    if isinstance(const, tuple):
        return "(" + ",".join(_const_repr(c) for c in const) + ")"
    return f"{type(const).__name__}:{const!r}"


def _in_library(obj):
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARIES


def _importable(obj):
    """``(module, qualified name)`` under which ``obj`` is found, or Unsignable."""
    runtime = sys.modules.get(__package__.rpartition(".")[0] + ".runtime")
    for name, value in vars(runtime).items():  # a sentinel of the runtime (UNSET)
        if value is obj and not name.startswith("_"):
            return (runtime.__name__, name)
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not module or not qualname or find_global(module, qualname) is not obj:
        # NumPy's ufuncs say __module__ "numpy" but some live in submodules only
        raise Unsignable(f"{obj!r} is not found under its name")
    return (module, qualname)


def find_global(module, qualname):
    """The object ``module.qualname`` (importing the module), or MISSING."""
    try:
        obj = sys.modules.get(module) or importlib.import_module(module)
    except ImportError:
        return MISSING
    for part in qualname.split("."):
        obj = getattr(obj, part, MISSING)
        if obj is MISSING:
            return MISSING
    return obj


# --- an entry ------------------------------------------------------------------------------------

def store(key, fn, compiled, reads):
    """Write the entry of ``compiled`` (generated from ``fn``, having made ``reads``), unless
    something it read or is bound to cannot be found again in another process."""
    try:
        entry = _entry(key, fn, compiled, reads)
    except Unsignable:
        STATS["uncacheable"] += 1
        return
    # marshal reads data back without running anything (unlike pickle); code is run only after
    # the digest and the key have been checked
    try:
        payload = marshal.dumps((entry, compiled.__srcgrad_factory__))
    except ValueError:  # an option or a default that marshal cannot hold
        STATS["uncacheable"] += 1
        return
    if _write(_path(key), key, payload):
        STATS["stored"] += 1


def _entry(key, fn, compiled, reads):
    if getattr(compiled, "__srcgrad_plain__", None) is not None:
        # split recursive calls (normalize/recursion.py): a derivative of it is generated from
        # its plain version, which a loaded function would not have
        raise Unsignable("recursive calls split")
    if getattr(compiled, "__srcgrad_specialized__", False):
        # methods inlined for the classes of objects (normalize/methods.py): the key sees
        # neither those objects nor the methods found through them
        raise Unsignable("methods inlined for the classes of objects")
    scopes = _Scopes(fn, compiled)
    checked = {}
    for namespace, path, obj in reads:
        if not isinstance(namespace, Namespace):
            continue
        index = scopes.index(namespace.fn)
        checked.setdefault((index, path), obj)
        scopes.seen(obj, ("read", index, path))
    digest = _reads_digest([signature(obj) for obj in checked.values()])
    inner = compiled.__code__
    text = GENERATED_SOURCE[inner][0]
    code = getattr(fn, "__code__", None)
    own = dict(zip(code.co_freevars, fn.__closure__ or ())) if code is not None else {}
    bound = {}
    for name, value in compiled.__srcgrad_bound__.items():
        if name not in own or value is not _contents(own[name]):
            bound[name] = scopes.describe(value)
    depends = [
        (scopes.index(ns.fn), _expr_path(expr))
        for ns, expr, _ in getattr(compiled, "__srcgrad_depends__", ())
        if isinstance(ns, Namespace)
    ]
    if len(depends) != len(getattr(compiled, "__srcgrad_depends__", ())):
        raise Unsignable("a dependency outside the recorded namespaces")
    lines = notes.LINES.get(inner)
    return {
        "key": key, "name": compiled.__name__, "text": text, "scopes": scopes.descriptions,
        "reads": list(checked), "digest": digest, "bound": bound,
        "depends": depends,
        "lines": lines,
    }


class _Scopes:
    """The namespaces a derivation read from, numbered (0: the function's own), and how to find
    each one's function, and each object generated code is bound to, in another process."""

    def __init__(self, fn, compiled):
        self.compiled = compiled
        self.functions = [fn]
        self.descriptions = [("root",)]
        self.found = {}  # id(object) -> description
        self._keep = []
        self._own_parts(0, fn)

    def index(self, fn):
        for i, known in enumerate(self.functions):
            if known is fn:
                return i
        self.descriptions.append(self.describe(fn))
        self.functions.append(fn)
        self._own_parts(len(self.functions) - 1, fn)
        return len(self.functions) - 1

    def seen(self, obj, description):
        if id(obj) not in self.found:
            self.found[id(obj)] = description
            self._keep.append(obj)

    def _own_parts(self, index, fn):
        for i, value in enumerate(getattr(fn, "__defaults__", None) or ()):
            self.seen(value, ("default", index, i))
        for name, value in (getattr(fn, "__kwdefaults__", None) or {}).items():
            self.seen(value, ("kwdefault", index, name))
        code = getattr(fn, "__code__", None)
        if code is not None:
            for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
                self.seen(cell, ("cell", index, name))
        if getattr(fn, "__globals__", None) is not None:
            self.seen(fn.__globals__, ("globals", index))

    def describe(self, obj):
        """How to find ``obj`` again: by a name read, as part of a function read, as a module
        or a global of one, as a derivative regenerated; Unsignable when none applies."""
        from .guard import Derivative

        if isinstance(obj, Derivative):
            if obj.fn is not self.compiled:  # another derivative's guard: not made anew here
                raise Unsignable("the guard of another derivative")
            return ("derivative",)
        if type(obj) is Derived:
            return ("public", self.describe(obj.func))
        if id(obj) in self.found:
            return self.found[id(obj)]
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        recipe = getattr(obj, "__srcgrad_recipe__", None)
        if recipe is not None and recipe[4].__name__ == "_generated":
            f, mode, wrt, options, _ = recipe
            plain = {field.name: getattr(options, field.name)
                     for field in dataclasses.fields(options)}
            return ("derived", self.describe(f), mode, wrt, plain)
        return ("global",) + _importable(obj)


def _reads_digest(signatures):
    return blake2b(repr(signatures).encode(), digest_size=20).hexdigest()


def _expr_path(expr):
    parts = []
    while type(expr).__name__ == "Attribute":
        parts.append(expr.attr)
        expr = expr.value
    if type(expr).__name__ != "Name":
        raise Unsignable("a dependency that is not a dotted name")
    parts.append(expr.id)
    return tuple(reversed(parts))


def load(key, fn):
    """The derivative stored under ``key`` for ``fn``, bound in this process; None when there is
    no valid entry or something it read denotes another object now."""
    found = _read(_path(key), key)
    if found is None:
        return None
    entry, code = found
    try:
        functions = _functions(entry["scopes"], fn)
        spaces = [Namespace(f) for f in functions]
        now = [signature(spaces[i].read(path)) for i, path in entry["reads"]]
        if _reads_digest(now) != entry["digest"]:
            return None
        extras = {name: _find(d, functions, spaces) for name, d in entry["bound"].items()}
    except Unsignable:
        return None
    if any(value is MISSING for value in extras.values()):
        return None
    from .guard import Derivative

    holders = [v for v in extras.values() if isinstance(v, Derivative)]
    lines = entry["lines"]
    code = _renamed(code, f"<srcgrad {entry['name']}#cached-{key[:12]}>")
    compiled = instantiate(code, entry["text"], entry["name"], fn, extras, lines)
    compiled.__srcgrad_depends__ = tuple(
        (spaces[i], _expr(path), spaces[i].read(path)) for i, path in entry["depends"]
    )
    for holder in holders:
        holder.fn = compiled
    return compiled


def _functions(descriptions, fn):
    functions = [fn]
    spaces = [Namespace(fn)]
    for description in descriptions[1:]:
        found = _find(description, functions, spaces)
        if found is MISSING:
            raise Unsignable("a namespace is gone")
        functions.append(found)
        spaces.append(Namespace(found))
    return functions


def _find(description, functions, spaces):
    """The object ``description`` (``_Scopes.describe``) denotes in this process, or MISSING."""
    kind, *rest = description
    if kind == "derivative":
        from .guard import Derivative

        return Derivative()
    if kind == "read":
        return spaces[rest[0]].read(rest[1])
    if kind == "module":
        try:
            return importlib.import_module(rest[0])
        except ImportError:
            return MISSING
    if kind == "global":
        return find_global(*rest)
    if kind == "public":
        fn = _find(rest[0], functions, spaces)
        return getattr(fn, "__dict__", {}).get(PUBLIC, MISSING)
    if kind == "derived":
        from .. import transforms
        from ..context import Options

        f = _find(rest[0], functions, spaces)
        if f is MISSING:
            return MISSING
        return transforms.derived(f, rest[1], rest[2], Options(**rest[3]))
    fn = functions[rest[0]]
    if kind == "default":
        return fn.__defaults__[rest[1]]
    if kind == "kwdefault":
        return fn.__kwdefaults__[rest[1]]
    if kind == "cell":
        return dict(zip(fn.__code__.co_freevars, fn.__closure__))[rest[1]]
    if kind == "globals":
        return fn.__globals__
    raise Unsignable(f"unknown description {kind!r}")


def _expr(path):
    import gast

    node = gast.Name(path[0], gast.Load(), None, None)
    for attr in path[1:]:
        node = gast.Attribute(node, attr, gast.Load())
    return node


def _renamed(code, filename):
    consts = tuple(
        _renamed(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


# --- files ---------------------------------------------------------------------------------------

def _path(key):
    return os.path.join(directory(), key[:2], key + SUFFIX)


def _header(key, payload):
    digest = blake2b(payload, digest_size=32, person=b"srcgrad-entry").hexdigest()
    return b"%s %d %s %s\n" % (MAGIC, FORMAT, key.encode(), digest.encode())


def _write(path, key, payload):
    """Write an entry atomically (to a temporary file in the same directory, then renamed);
    whether it was written."""
    import tempfile

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(_header(key, payload) + payload)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return False  # a read-only or full disk: the derivative works, it is just not kept
    return True


def read_marshalled(path, key):
    """What the file at ``path`` holds (``marshal``-ed) if it is a whole file for ``key``, or
    None (``_write``'s counterpart; the numba backend's lowerings are kept the same way)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    head, sep, payload = data.partition(b"\n")
    if not sep or head + b"\n" != _header(key, payload):
        return None  # truncated, tampered with, or another key's
    try:
        return marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None


def _read(path, key):
    """``(entry, code)`` from the file at ``path`` if it is a whole entry for ``key``."""
    found = read_marshalled(path, key)
    if not (isinstance(found, tuple) and len(found) == 2):
        return None
    entry, code = found
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    if not isinstance(code, types.CodeType):
        return None
    return entry, code


def entries():
    """The paths of every entry in the cache directory."""
    root = directory()
    found = []
    if os.path.isdir(root):
        for sub in os.scandir(root):
            if sub.is_dir():
                found.extend(e.path for e in os.scandir(sub.path) if e.name.endswith(SUFFIX))
    return found


def clear():
    """Delete every entry (and left-over temporary files); the number of entries deleted."""
    count = 0
    for path in entries():
        try:
            os.unlink(path)
            count += 1
        except OSError:
            pass
    return count
