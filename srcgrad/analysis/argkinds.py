"""The kind of an argument, as a derivative specialized to its arguments sees it (kinds.py).

Requires: an argument value. Guarantees: its kind, what a call's argument tells about the code
that handles it, without its values: a
Python ``float`` or ``int``, a NumPy scalar of a dtype, an array of a dtype and a number of
dimensions. Anything else (lists, structures, objects, subclasses of ndarray) has no kind, and
the derivative handles it as the unspecialized one does.

    kind_of(0.5)                    ->  ("float",)
    kind_of(3)                      ->  ("int",)
    kind_of(np.float32(1))          ->  ("scalar", "<f4")
    kind_of(np.zeros((2, 3)))       ->  ("array", 2, "<f8")
    kind_of(np.array([[1], "a"], dtype=object))  ->  None

``signature_kind`` is the fast form the dispatcher compares on every call (the dtype object, not
its string); ``stable`` turns it into the form above, equal in another process (for the disk
cache).
"""

from __future__ import annotations

from typing import Any

import numpy as np

FLOAT = ("float",)
INT = ("int",)
FLOAT64 = np.dtype(np.float64).str
NUMERIC = "biufc"  # the dtype kinds of numbers (bool arrays too: their elements are numbers)


def signature_kind(value: Any) -> Any:
    """The kind of ``value`` in the form compared at every call (None: no kind)."""
    t = type(value)
    if t is float:
        return FLOAT
    if t is np.ndarray:  # of numbers only: an element of an object array may be anything
        dtype = value.dtype
        return ("array", value.ndim, dtype) if dtype.kind in NUMERIC else None
    if t is int:
        return INT
    if isinstance(value, np.generic) and value.dtype.kind in NUMERIC and t is not np.bool_:
        return ("scalar", value.dtype)
    return None


def stable(kind: Any) -> Any:
    """``kind`` with its dtype as a string (``"<f8"``)."""
    if kind is None or kind[0] in ("float", "int"):
        return kind
    return kind[:-1] + (kind[-1].str,)


def kind_of(value: Any) -> Any:
    """The stable kind of ``value``, or None."""
    return stable(signature_kind(value))


def ndim(kind: Any) -> Any:
    """The number of dimensions a value of ``kind`` has (None: unknown)."""
    if kind is None:
        return None
    return kind[1] if kind[0] == "array" else 0


def is_float64_scalar(kind: Any) -> bool:
    """A Python float or a NumPy float64 scalar: values that compute alike (IEEE doubles)."""
    return kind == FLOAT or (kind is not None and kind[0] == "scalar" and kind[1] == FLOAT64)


def wide(kind: Any) -> bool:
    """A number, or an array of numbers, computed as float64 or as integers (not float32,
    float16 or complex)."""
    if kind is None or kind[0] in ("float", "int"):
        return kind is not None
    dtype = np.dtype(kind[-1])
    return dtype == np.float64 or dtype.kind in "biu"


def is_float64_array(kind: Any) -> bool:
    """An ndarray of float64 (of any number of dimensions)."""
    return kind is not None and kind[0] == "array" and kind[2] == FLOAT64
