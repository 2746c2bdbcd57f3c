"""What the rules of ``numpy.fft`` call: the axes and lengths of a transform, the crop or zero
padding that ``n``/``s`` apply to its input, and the weights of a real inverse transform.

``fit_axes`` is linear, and its adjoint is ``fit_axes`` back to the original lengths (cropping
and zero padding are each other's transposes); the others only read shapes.
"""

from __future__ import annotations

import numpy as np

from .shapes import as_array


def _tuple(v):
    return (v,) if isinstance(v, (int, np.integer)) else tuple(v)


def fft_axes(a, s=None, axes=None):
    """The axes an n-dimensional transform of ``a`` runs over, as non-negative ints: ``axes``, or
    the last ``len(s)`` axes, or all of them (NumPy's defaults)."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim - len(_tuple(s)), ndim) if s is not None else range(ndim)
    return tuple(int(ax) % ndim for ax in _tuple(axes))


def fft_sizes(a, s=None, axes=None):
    """The lengths of the transform of ``a`` along ``fft_axes(a, s, axes)``: ``s`` (``n`` of a
    one-dimensional transform) where given, else ``a``'s own."""
    if s is not None:
        return _tuple(s)
    return axis_sizes(a, fft_axes(a, s, axes))


def axis_sizes(x, axes):
    """The lengths of ``x`` along ``axes`` (an int or a tuple)."""
    shape = np.shape(x)
    return tuple(shape[ax] for ax in _tuple(axes))


def fit_axes(g, sizes, axes):
    """``g`` cropped or zero-padded at the end of each of ``axes`` to the lengths ``sizes``: what
    a transform's ``n``/``s`` do to its input."""
    g = as_array(g)
    index = [slice(None)] * g.ndim
    widths = [(0, 0)] * g.ndim
    for ax, n in zip(_tuple(axes), _tuple(sizes)):
        have = g.shape[ax]
        if have > n:
            index[ax] = slice(0, n)
        elif have < n:
            widths[ax] = (0, n - have)
    g = g[tuple(index)]
    if any(w != (0, 0) for w in widths):
        g = np.pad(g, widths)
    return g


def hermitian_weights(y, axis):
    """How often each kept frequency of a real signal ``y`` counts along ``axis``: 1 for the
    mean and (for an even length) the Nyquist frequency, 2 for the others, whose mirror images
    the half spectrum leaves out. Shaped to broadcast against the half spectrum."""
    n = np.shape(y)[axis]
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * np.ndim(y)
    shape[axis] = n // 2 + 1
    return np.reshape(w, shape)
