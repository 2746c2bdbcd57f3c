"""Errors raised by srcgrad.

Every error derives from :class:`SrcgradError`. Errors about the user's code carry the file, line
and column of the offending construct and render the source line with a caret under it, the way
Python's own ``SyntaxError`` does.
"""

from __future__ import annotations

import re


class SrcgradError(Exception):
    """Base class of every error srcgrad raises."""


class LocatedError(SrcgradError):
    """An error tied to a place in the user's source.

    ``offset`` is 1-based, like ``SyntaxError.offset``; ``line`` is the offending source line.
    """

    def __init__(self, message, filename=None, lineno=None, offset=None, line=None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.offset = offset
        self.line = line
        super().__init__(self._render())

    def _render(self):
        if self.filename is None and self.lineno is None:
            return self.message
        text = f'{self.message}\n  File "{self.filename}", line {self.lineno}'
        if self.line is not None:
            stripped = self.line.rstrip("\n")
            text += f"\n    {stripped}"
            if self.offset is not None:
                text += "\n    " + " " * (self.offset - 1) + "^"
        return text


    def named_as_written(self, names):
        """This error with each generated name of ``names`` (a helper's renamed local ``b_2``
        -> ``("b", where it is bound)``) written, inside the message's backquotes, as the user
        wrote it, and where that is said after the message."""
        found = {}

        def word(match):
            name = match.group(0)
            if name in names:
                found[names[name][0]] = names[name][1]
                return names[name][0]
            return name

        def spans(match):
            return re.sub(r"[A-Za-z_][A-Za-z0-9_]*", word, match.group(0))

        message = re.sub(r"`[^`\n]*`", spans, self.message)
        if found:
            notes = "; ".join(f"`{name}`: {where}" for name, where in sorted(found.items()))
            self.message = f"{message} ({notes})"
            self.args = (self._render(),)
        return self


class UnsupportedSyntaxError(LocatedError):
    """A construct srcgrad does not differentiate (yet), found at transform time."""


class ClassesNeeded(UnsupportedSyntaxError):
    """A method called on an object taken out of a parameter (``P.ps[0].affine(x)``) whose class
    is known only when the derivative is called: the transform then makes a derivative
    specialized per classes of the objects passed (``specialize.Specializing``). Raised from
    an unspecialized transform only; the message is the refusal a user sees where no object
    of a known class reaches the call (``refusal``)."""

    held = True  # `wrt` may select the parameter: its objects' fields carry gradient

    def __init__(self, param, refusal):
        self.param = param
        self.refusal = refusal
        super().__init__(refusal.message, filename=refusal.filename, lineno=refusal.lineno,
                         offset=refusal.offset, line=refusal.line)


class NoRuleError(LocatedError):
    """A call to a function that has neither Python source nor a registered rule."""


class SourceUnavailableError(SrcgradError):
    """The function's source cannot be read (defined at a bare REPL, built by ``exec``, ...)."""


class UnsupportedCaseError(SrcgradError, NotImplementedError):
    """A function srcgrad has rules for, called with arguments its derivative does not cover (a
    mode, an ``ord``, an array rank), found when the generated code runs. It is also a
    ``NotImplementedError``."""


class DerivedCallError(SrcgradError, TypeError):
    """A derived function called with arguments that do not fit its parameters. Like any call
    with the wrong arguments, it is also a ``TypeError``."""


class InternalError(SrcgradError, AssertionError):
    """A bug in srcgrad: a pass got input that an earlier pass should have rewritten or refused.
    Please report it with the function that triggers it."""


class NumPyValueError(SrcgradError, ValueError):
    """An argument NumPy itself refuses, found by a helper standing in for the NumPy function:
    the message is NumPy's, and like NumPy's own error it is a ``ValueError``."""


class CompiledValueError(SrcgradError, ValueError):
    """A seed, tangent or output of the wrong shape, found while a derivative compiled by numba
    (``backend="numba"``) runs; the Python backend raises ``SeedShapeError``,
    ``TangentShapeError`` or ``NonScalarOutputError`` for the same case (numba can only raise
    an error made of constants). It is also a ``ValueError``."""


class NumPyIndexError(SrcgradError, IndexError):
    """An index out of bounds, found by a helper standing in for a NumPy function: the message
    is NumPy's, and like NumPy's own error it is an ``IndexError``."""


class PythonTypeError(SrcgradError, TypeError):
    """What Python raises for a list or dict operation on a value that does not support it
    (``del y[0]`` of an array), found by the helper standing in for it (``runtime/lists.py``)."""


class PythonAttributeError(SrcgradError, AttributeError):
    """A list or dict method called on a value that does not have it (``y.insert`` of an array),
    found by the helper standing in for the method (``runtime/lists.py``)."""


class PythonIndexError(SrcgradError, IndexError):
    """A list position out of range (``xs.pop(5)`` of a shorter list), found by the helper
    standing in for the method (``runtime/lists.py``)."""


class PythonValueError(SrcgradError, ValueError):
    """``a, b = v`` of a sequence of another length (srcgrad reads ``v[0]``, ``v[1]``), found by
    the helper that checks it (``runtime/lists.py``): Python's message."""


class NonScalarOutputError(SrcgradError):
    """``grad`` of a function whose output has more than one element."""

    def __init__(self, shape, name="the function", container=None, where=""):
        self.shape = tuple(shape)
        if container is not None:
            # `return loss, aux`: most likely an auxiliary output
            message = (
                f"grad requires a scalar output, but {name} returned a {container}. If it "
                f"returns (output, aux), say so: grad(f, has_aux=True) returns (gradient, aux) "
                f"and value_and_grad(f, has_aux=True) returns ((value, aux), gradient). For "
                f"several outputs use srcgrad.vjp(f)(*args, seed) with one seed per output."
            )
        else:
            message = (
                f"grad requires a scalar output, but {name} returned an output of shape "
                f"{self.shape} ({_size(self.shape)} elements). For a non-scalar output use "
                f"srcgrad.vjp(f)(*args, seed) with a seed of shape {self.shape}, or "
                f"srcgrad.jacobian(f) for the full Jacobian."
            )
        super().__init__(message + where)


class SeedShapeError(SrcgradError):
    """The seed passed to a ``vjp`` does not have the shape of the function's output."""

    def __init__(self, seed_shape, out_shape, where="", structure=None):
        self.seed_shape = tuple(seed_shape)
        self.out_shape = tuple(out_shape)
        part = f"`{where}` of the output" if where else "the function's output"
        if structure is not None:  # a container or object whose structure differs
            super().__init__(
                f"vjp seed{where} is {structure[0]} but {part} is {structure[1]}; the seed must "
                f"have the structure of the output (None for a zero part)"
            )
            return
        super().__init__(
            f"vjp seed{where} has shape {self.seed_shape} but {part} has shape "
            f"{self.out_shape}; the seed must have the shape of the output"
        )


class TangentShapeError(SrcgradError):
    """A tangent passed to a ``jvp`` does not have the shape of the argument it belongs to."""

    def __init__(self, tangent_shape, arg_shape, name, structure=None):
        self.tangent_shape = tuple(tangent_shape)
        self.arg_shape = tuple(arg_shape)
        if structure is not None:  # a container or object whose structure differs
            super().__init__(
                f"jvp tangent for {name!r} is {structure[0]} but the argument is {structure[1]}; "
                f"each tangent must have the structure of its argument"
            )
            return
        super().__init__(
            f"jvp tangent for {name!r} has shape {self.tangent_shape} but the argument has shape "
            f"{self.arg_shape}; each tangent must have the shape of its argument"
        )


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n
