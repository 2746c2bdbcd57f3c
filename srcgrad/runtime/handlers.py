"""Run-time helpers of ``try`` ... ``except`` in generated code (normalize/handlers.py).

Until the code is emitted, a ``try`` is a branch on a marker (``flag = try_begin(E)``): the try
block one way, the handler the other. The emitted primal runs the try block inside a real
``try``. When it raises, what the block did is undone: each name it pushed on a stack of the
reverse sweep gets the value it had before (``restore_tape``), each list it appended to its
length (``cut_list``), so the state is the one the branch model describes: the handler ran, the
block did not.
"""

from __future__ import annotations

from ..errors import SrcgradError


def try_begin(*errors):
    """The marker of a ``try`` until it is emitted (never runs in emitted code)."""
    raise SrcgradError("internal error: a `try` marker was not emitted as a `try` statement")


def try_which(flag):
    """The marker of the handler that ran (never runs in emitted code)."""
    raise SrcgradError("internal error: a `try` marker was not emitted as a `try` statement")


def try_error(flag, index):
    """The marker of ``except E as e`` (never runs in emitted code)."""
    raise SrcgradError("internal error: a `try` marker was not emitted as a `try` statement")


def tape_size(items):
    """The length of a stack or list before a try block (None: it holds no list yet)."""
    return len(items) if isinstance(items, list) else None


def tape_grew(saved, size):
    """Whether a try block that raised pushed on the stack ``saved`` (cut back to ``size``):
    only then is the variable it saves restored, so that one the block would have bound first
    (a loop's index, the raise coming before the loop) is not read unbound."""
    return isinstance(saved, list) and len(saved) > (size or 0)


def restore_tape(saved, size, value):
    """``value`` as it was before a try block that raised: the first value the block pushed on
    the stack ``saved`` (the stack cut back to ``size``), or ``value`` if it pushed none."""
    start = size or 0
    if isinstance(saved, list) and len(saved) > start:
        value = saved[start]
        del saved[start:]
    return value


def cut_list(items, size):
    """A list a try block that raised appended to, back at its length ``size`` (None, when
    there was no list before)."""
    if size is None:
        return None
    del items[size:]
    return items
