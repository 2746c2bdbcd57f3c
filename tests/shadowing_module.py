"""A module with a ``list`` of its own, for tests/test_supported_claims.py: an inlined helper's
starred unpacking is written with ``list``, which srcgrad refuses to take from this module."""

import builtins

import numpy as np


def list(seq):  # noqa: A001 (the point of the module)
    return builtins.list(seq)[::-1]


def _split(v):
    first, *rest = [v, v * 2.0, v * 3.0]
    return first + rest[0] * 10.0


def unpacks_in_a_helper(x):
    return np.sum(_split(x) * x)
