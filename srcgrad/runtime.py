"""The few helpers generated code calls.

Generated code is plain Python + NumPy plus these functions. Each has a gradient rule of its own
(``rules/runtime_rules.py``), because generated code is itself valid input to every transform.
Helpers keep types faithful: a gradient for a Python float is a float, for an array an array of
the same shape.
"""

from __future__ import annotations

import numpy as np

from .errors import NonScalarOutputError, SeedShapeError, TangentShapeError


def unbroadcast(g, x):
    """Sum ``g`` back to the shape of ``x``, undoing NumPy broadcasting."""
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    g = np.asarray(g)
    if g.ndim < len(shape) or any(n != 1 and m == 1 for n, m in zip(shape[::-1], gshape[::-1])):
        g = np.broadcast_to(g, np.broadcast_shapes(g.shape, shape))
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if not shape and not isinstance(x, np.ndarray):
        return g[()]
    return g


def _expand(dy, ndim, axis, keepdims):
    if axis is None or keepdims:
        return dy
    axes = axis if isinstance(axis, tuple) else (axis,)
    return np.expand_dims(dy, tuple(a % ndim for a in axes))


def unreduce(dy, x, axis=None, keepdims=False):
    """The adjoint of a sum: spread ``dy`` over the reduced axes of ``x``."""
    shape = np.shape(x)
    if not shape and not isinstance(x, np.ndarray):
        return dy
    out = np.empty(shape, dtype=np.result_type(dy, float))
    out[...] = _expand(dy, len(shape), axis, keepdims)
    return out


def mean_grad(dy, x, axis=None, keepdims=False):
    """The adjoint of a mean: ``dy`` divided by the count, spread over the reduced axes."""
    shape = np.shape(x)
    if axis is None:
        count = int(np.prod(shape))
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        count = int(np.prod([shape[a] for a in axes]))
    return unreduce(np.divide(dy, count), x, axis, keepdims)


def getitem_grad(dy, x, index):
    """The adjoint of ``x[index]``: zeros of x's shape with ``dy`` added at ``index``.

    Repeated integer indices accumulate (``np.add.at``), as the chain rule requires.
    """
    g = np.zeros(np.shape(x), dtype=np.result_type(dy, float))
    if _is_basic(index):
        g[index] = dy
    else:
        np.add.at(g, index, dy)
    return g


def _is_basic(index):
    if isinstance(index, tuple):
        return all(_is_basic(i) for i in index)
    return index is None or index is Ellipsis or isinstance(index, (int, np.integer, slice))


def _swap(a):
    return np.swapaxes(a, -1, -2)


def matmul_vjp_left(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, for every combination of ranks."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 2 and b_nd == 2:
        return dy @ b.T
    if b_nd == 1:
        g = np.multiply.outer(dy, b) if a_nd > 1 else np.multiply(dy, b)
    elif a_nd == 1:
        g = np.matmul(b, np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(dy, _swap(b))
    return unbroadcast(g, a)


def matmul_vjp_right(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, for every combination of ranks."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ dy
    if a_nd == 1 and b_nd == 1:
        g = np.multiply(dy, a)
    elif a_nd == 1:
        g = np.multiply(np.expand_dims(a, -1), np.expand_dims(dy, -2))
    elif b_nd == 1:
        g = np.matmul(_swap(a), np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(_swap(a), dy)
    return unbroadcast(g, b)


def dot_vjp_left(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, b), a)
    _check_dot(a, b)
    return matmul_vjp_left(dy, a, b)


def dot_vjp_right(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, a), b)
    _check_dot(a, b)
    return matmul_vjp_right(dy, a, b)


def _check_dot(a, b):
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        raise NotImplementedError(
            f"srcgrad differentiates np.dot for arrays of up to 2 dimensions; got shapes "
            f"{np.shape(a)} and {np.shape(b)}. Use np.matmul or np.tensordot for stacked arrays."
        )


def zeros_like(x):
    """A zero gradient for ``x``: ``0.0`` for a Python scalar, a float array otherwise."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=np.result_type(x, float))
    if np.ndim(x) == 0:
        return 0.0
    return np.zeros(np.shape(x))


def unit_seed(out, name="the function"):
    """The seed of ``grad``: 1 shaped like the output, which must have exactly one element."""
    if isinstance(out, (float, int)) and not isinstance(out, bool):
        return 1.0
    shape = np.shape(out)
    if int(np.prod(shape)) != 1:
        raise NonScalarOutputError(shape, name)
    if isinstance(out, np.ndarray):
        return np.ones(shape, dtype=np.result_type(out, float))
    return 1.0


def check_seed(seed, out):
    """A ``vjp`` seed must have the shape of the output it seeds."""
    if np.shape(seed) != np.shape(out):
        raise SeedShapeError(np.shape(seed), np.shape(out))
    return seed


def check_tangent(tangent, x, name="x"):
    """A ``jvp`` tangent must have the shape of the argument it perturbs."""
    if np.shape(tangent) != np.shape(x):
        raise TangentShapeError(np.shape(tangent), np.shape(x), name)
    return tangent
