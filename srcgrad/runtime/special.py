"""Special functions the ``math`` rules need, in NumPy alone: ``digamma`` (the derivative of
``math.lgamma``) and ``trigamma`` (its derivative), for real arguments away from the poles.

Both reduce the argument with the recurrence to x >= 12, use the asymptotic series there and
reflect arguments below 1/2. Measured against ``scipy.special`` on 200,001 points of [-9.95, 40]
(0.001 or more from the poles): relative error at most 4e-12 for digamma (where it is not near
a root) and 1.4e-12 for trigamma (the series' truncation at 12).
"""

from __future__ import annotations

import math

import numpy as np


def _as_input(x):
    return np.asarray(x, dtype=np.float64), np.ndim(x) == 0 and not isinstance(x, np.ndarray)


def _result(out, scalar):
    return float(out) if scalar else out


def digamma(x):
    """psi(x) = d/dx log|Gamma(x)|."""
    a, scalar = _as_input(x)
    reflect = a < 0.5
    v = np.where(reflect, 1.0 - a, a)
    shift = np.zeros_like(v)
    while np.any(v < 12.0):
        small = v < 12.0
        shift = shift - np.where(small, 1.0 / np.where(small, v, 1.0), 0.0)
        v = np.where(small, v + 1.0, v)
    inv2 = 1.0 / (v * v)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 * (1 / 132)))))
    out = np.log(v) - 0.5 / v - series + shift
    out = np.where(reflect, out - math.pi / np.tan(math.pi * a), out)
    return _result(out, scalar)


def trigamma(x):
    """psi'(x), the derivative of ``digamma``."""
    a, scalar = _as_input(x)
    reflect = a < 0.5
    v = np.where(reflect, 1.0 - a, a)
    shift = np.zeros_like(v)
    while np.any(v < 12.0):
        small = v < 12.0
        w = np.where(small, v, 1.0)
        shift = shift + np.where(small, 1.0 / (w * w), 0.0)
        v = np.where(small, v + 1.0, v)
    inv = 1.0 / v
    inv2 = inv * inv
    series = inv + 0.5 * inv2 + inv * inv2 * (1 / 6 - inv2 * (1 / 30 - inv2 * (
        1 / 42 - inv2 * (1 / 30))))
    out = series + shift
    out = np.where(reflect, -out + (math.pi / np.sin(math.pi * a)) ** 2, out)
    return _result(out, scalar)
