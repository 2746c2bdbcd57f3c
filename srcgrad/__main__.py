"""Command line: print or export the code srcgrad generates.

    python -m srcgrad show FILE.py:FUNC [--wrt NAMES] [--mode MODE]
    python -m srcgrad emit FILE.py:FUNC [--wrt NAMES] [--mode MODE] [-o OUT.py]
    python -m srcgrad cache info|clear

``show`` prints the generated source (highlighted on a terminal when Pygments is installed).
``emit`` writes a standalone module that imports only NumPy and the standard library (to stdout
without ``-o``). ``--wrt`` takes comma-separated parameter names or positions (default: the first
parameter); ``--mode`` is grad (default), value_and_grad, vjp or jvp. A FUNC that is already a
derived function (decorated with ``@grad``, say) is used as it is unless ``--wrt`` or ``--mode``
is given. ``cache info`` says where the disk cache is and what it holds; ``cache clear`` empties it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import types

from .errors import SrcgradError

MODES = ("grad", "value_and_grad", "vjp", "jvp")


class CLIError(SrcgradError):
    """A usage error reported as one line on stderr, without a traceback."""


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "cache":
        return _cache(args.action)
    try:
        text, fn = _derive(args)
        if args.command == "show":
            from .emit.unparse import highlight

            sys.stdout.write(highlight(text))
            return 0
        from .emit.standalone import standalone_module

        module = standalone_module(fn, header=_header(args, fn))
        if args.output in (None, "-"):
            sys.stdout.write(module)
        else:
            with open(args.output, "w", encoding="utf-8") as out:
                out.write(module)
            print(f"wrote {args.output}: {fn.__name__}", file=sys.stderr)
        return 0
    except (CLIError, SrcgradError) as exc:
        print(f"srcgrad {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"srcgrad {args.command}: error: {exc}", file=sys.stderr)
        return 1


def _parser():
    parser = argparse.ArgumentParser(
        prog="srcgrad", description="Print or export the derivative code srcgrad generates."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{show,emit,cache}")
    show = commands.add_parser("show", help="print the generated source")
    emit = commands.add_parser(
        "emit", help="write a standalone module (NumPy and the standard library only)"
    )
    for sub in (show, emit):
        sub.add_argument("target", metavar="FILE.py:FUNC", help="the function to differentiate")
        sub.add_argument(
            "--wrt", default=None, metavar="NAMES",
            help="comma-separated parameter names or positions (default: the first parameter)",
        )
        sub.add_argument("--mode", choices=MODES, default=None, help="default: grad")
    emit.add_argument("-o", "--output", metavar="OUT.py", help="output file (default: stdout)")
    cache = commands.add_parser("cache", help="show or clear the disk cache of derivatives")
    cache.add_argument("action", choices=("info", "clear"))
    return parser


def _cache(action):
    from .emit import diskcache

    if action == "clear":
        print(f"removed {diskcache.clear()} entries from {diskcache.directory()}")
        return 0
    paths = diskcache.entries()
    size = sum(os.path.getsize(p) for p in paths if os.path.exists(p))
    state = "on" if diskcache.enabled() else "off (SRCGRAD_CACHE=0)"
    print(f"srcgrad disk cache: {diskcache.directory()}\n"
          f"  {state}; {len(paths)} entries, {size / 1024:.1f} KiB\n"
          f"  SRCGRAD_CACHE=0 turns it off, SRCGRAD_CACHE_DIR moves it")
    return 0


def _derive(args):
    """(generated source, generated function) for the command line's target."""
    from . import api
    from .derived import unwrap
    from .frontend.source import GENERATED_SOURCE

    fn = unwrap(_load(args.target))
    generated = getattr(fn, "__code__", None) in GENERATED_SOURCE
    if not generated or args.mode is not None or args.wrt is not None:
        transform = getattr(api, args.mode or "grad")
        fn = unwrap(transform(fn, wrt=_wrt(args.wrt)))
    return api.source(fn), fn


def _wrt(text):
    if text is None:
        return 0
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise CLIError("--wrt needs at least one parameter name or position")
    selectors = [int(item) if item.lstrip("-").isdigit() else item for item in items]
    return selectors[0] if len(selectors) == 1 else tuple(selectors)


def _load(target):
    """The function ``FUNC`` (a dotted path is allowed) defined in ``FILE.py``."""
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func:
        raise CLIError(f"expected FILE.py:FUNC, got {target!r} (name the function after a colon)")
    if not os.path.isfile(path):
        raise CLIError(f"no such file: {path}")
    module = _import_file(path)
    obj = module
    for part in func.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            defined = sorted(
                n for n, v in vars(module).items()
                if isinstance(v, types.FunctionType) and v.__module__ == module.__name__
            )
            hint = f"; functions defined there: {', '.join(defined)}" if defined else ""
            raise CLIError(f"{path} has no function {func!r}{hint}") from None
    if not isinstance(obj, types.FunctionType) and not hasattr(obj, "__srcgrad_request__"):
        raise CLIError(
            f"{path}:{func} is a {type(obj).__name__}, not a Python function; srcgrad "
            f"differentiates functions defined with def"
        )
    return obj


def _import_file(path):
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else f"_srcgrad_cli_{id(path)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)  # the file's sibling modules import as when run directly
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        del sys.modules[name]
        raise CLIError(f"{path} does not parse: {exc}") from None
    except BaseException as exc:  # the user's module failed at import time
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):
            raise
        where = _user_frame(exc, path)
        raise CLIError(
            f"importing {path} raised {type(exc).__name__}: {exc}{where}"
        ) from None
    return module


def _user_frame(exc, path):
    tb, line = exc.__traceback__, None
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" (line {line})" if line is not None else ""


def _header(args, fn):
    wrt = f" --wrt {args.wrt}" if args.wrt is not None else ""
    mode = f" --mode {args.mode}" if args.mode is not None else ""
    return (
        f"{fn.__name__}: generated from {args.target}{wrt}{mode}.\n\n"
        f"Standalone: imports only NumPy and the Python standard library; the helpers it calls\n"
        f"are copied below."
    )


if __name__ == "__main__":
    sys.exit(main())
