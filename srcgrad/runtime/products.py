"""Adjoints and tangents of NumPy products: ``matmul``/``@``, ``dot``, ``einsum``, ``tensordot``,
``inner``, ``kron``, ``cross``, ``convolve`` and ``correlate``, for every combination of ranks
these accept, summed back over broadcast axes.
"""

from __future__ import annotations

import numpy as np

from .shapes import _float_array, _like, by_source, float_dtype, unbroadcast


def _ndim(a):
    return a.ndim if isinstance(a, np.ndarray) else np.ndim(a)


def _swap(a):
    return np.swapaxes(a, -1, -2)


def matmul_vjp_left(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``a``, for every combination of ranks."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return dy @ b.T
    if a_nd == 2 and b_nd == 1:
        return np.outer(dy, b)
    if b_nd == 1:
        g = np.multiply.outer(dy, b) if a_nd > 1 else np.multiply(dy, b)
    elif a_nd == 1:
        g = np.matmul(b, np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(dy, _swap(b))
    return unbroadcast(g, a)


def matmul_vjp_right(dy, a, b):
    """Gradient of ``a @ b`` with respect to ``b``, for every combination of ranks."""
    a_nd, b_nd = _ndim(a), _ndim(b)
    if a_nd == 2 and b_nd == 2:
        return a.T @ dy
    if a_nd == 2 and b_nd == 1:
        return a.T @ dy
    if a_nd == 1 and b_nd == 2:
        return np.outer(a, dy)
    if a_nd == 1 and b_nd == 1:
        g = np.multiply(dy, a)
    elif a_nd == 1:
        g = np.multiply(np.expand_dims(a, -1), np.expand_dims(dy, -2))
    elif b_nd == 1:
        g = np.matmul(_swap(a), np.expand_dims(dy, -1))[..., 0]
    else:
        g = np.matmul(_swap(a), dy)
    return unbroadcast(g, b)


def steps_layout(dys, xs, b):
    """How ``matmul_vjp_right_steps`` sums: 1 where ``b`` is a matrix and every ``dys[i]`` and
    ``xs[i]`` a vector (stacked), 2 where every one is a matrix (their rows joined), 0 (a
    product per step) otherwise. No gradient (a constant of the derivative)."""
    if type(b) is not np.ndarray or b.ndim != 2 or not xs:
        return 0
    k = xs[0].ndim if type(xs[0]) is np.ndarray else 0
    if k not in (1, 2):
        return 0
    for x in xs:
        if type(x) is not np.ndarray or x.ndim != k:
            return 0
    for dy in dys:
        if type(dy) is not np.ndarray or dy.ndim != k:
            return 0
    return k


def sums_layout(gs, x):
    """How ``unbroadcast_steps`` sums: 0 (one sum per step) unless every ``gs[i]`` is an array
    of one shape, of no fewer dimensions than ``x``, itself an array; then 1 (their rows
    joined: they have more dimensions than ``x``, so their first axis is summed) or 2
    (stacked). No gradient."""
    if type(x) is not np.ndarray or not gs or type(gs[0]) is not np.ndarray:
        return 0
    shape = gs[0].shape
    if len(shape) < x.ndim or not all(type(g) is np.ndarray and g.shape == shape for g in gs):
        return 0
    return 1 if len(shape) > x.ndim else 2


@by_source
def matmul_vjp_right_steps(dys, xs, b):
    """The sum over ``i`` of ``matmul_vjp_right(dys[i], xs[i], b)``: what a reversed loop adds
    to the gradient of ``b`` over its iterations (optimize/steps.py), as one matrix product
    where ``b`` is a matrix and every ``xs[i]`` a vector (the rows stacked) or every one a
    matrix (their rows joined); a product per step otherwise. Plain NumPy code marked
    ``by_source``: its derivatives are those of this code."""
    layout = steps_layout(dys, xs, b)
    if layout == 1:
        return np.stack(xs).T @ np.stack(dys)
    if layout == 2:
        return np.concatenate(xs).T @ np.concatenate(dys)
    if len(dys) == 0:
        return 0.0
    g = matmul_vjp_right(dys[0], xs[0], b)
    for i in range(1, len(dys)):
        g = g + matmul_vjp_right(dys[i], xs[i], b)
    return g


@by_source
def unbroadcast_steps(gs, x):
    """The sum over ``i`` of ``unbroadcast(gs[i], x)``: what a reversed loop adds to the
    gradient of ``x`` over its iterations (optimize/steps.py), as one sum of the stacked
    contributions where they are arrays of one shape, one sum per step otherwise. Plain NumPy
    code marked ``by_source``."""
    layout = sums_layout(gs, x)
    if layout == 1:
        return unbroadcast(np.concatenate(gs), x)
    if layout == 2:
        return unbroadcast(np.stack(gs), x)
    if len(gs) == 0:
        return 0.0
    g = unbroadcast(gs[0], x)
    for i in range(1, len(gs)):
        g = g + unbroadcast(gs[i], x)
    return g


def joined(arrays, stack, joins):
    """``np.stack(arrays)`` (``stack``) or ``np.concatenate(arrays)``, or the array an earlier
    call with the same ``joins`` made of the very same arrays, in order (the contributions a
    reversed loop appended to several lists are often one array: ``unbroadcast`` of a
    contribution the broadcast did not change returns it). ``joins`` is a list the generated
    code makes empty for the sums after one loop, so it lives no longer than they run; nothing
    runs between them that could change an array in place."""
    for how, seen, result in joins:
        if how == stack and len(seen) == len(arrays) and all(
                a is b for a, b in zip(seen, arrays)):
            return result
    result = np.stack(arrays) if stack else np.concatenate(arrays)
    joins.append((stack, tuple(arrays), result))
    return result


def matmul_vjp_right_steps_joined(dys, xs, b, joins):
    """``matmul_vjp_right_steps(dys, xs, b)``, its stacked or joined factors from ``joined``
    (code specialized to its arguments' kinds only: optimize/steps.py)."""
    layout = steps_layout(dys, xs, b)
    if layout:
        return joined(xs, layout == 1, joins).T @ joined(dys, layout == 1, joins)
    return matmul_vjp_right_steps(dys, xs, b)


def matmul_vjp_right_steps_known(dys, xs, joins):
    """``matmul_vjp_right_steps_joined(dys, xs, b, joins)`` where the code's kinds prove what
    ``steps_layout`` checks: ``b``, every ``xs[i]`` and every ``dys[i]`` a float64 matrix
    (optimize/scalars.py); no steps, no gradient."""
    if not xs:
        return 0.0
    return joined(xs, False, joins).T @ joined(dys, False, joins)


def unbroadcast_steps_joined(gs, x, joins):
    """``unbroadcast_steps(gs, x)``, its stacked or joined contributions from ``joined``."""
    layout = sums_layout(gs, x)
    if layout:
        return unbroadcast(joined(gs, layout == 2, joins), x)
    return unbroadcast_steps(gs, x)


def matmul_vjp_right_rows(dys, xs, joins):
    """``matmul_vjp_right_steps_known(dys, list(xs[::-1]), joins)``: the rows of the argument
    ``xs``, a float64 array of three dimensions, that a loop read in turn and the reversed loop
    kept in reversed order (optimize/rows.py), joined by one copy of ``xs[::-1]``."""
    if not dys or len(dys) != len(xs):
        return matmul_vjp_right_steps_known(dys, list(xs[::-1]), joins)
    rows = np.ascontiguousarray(xs[::-1]).reshape(-1, xs.shape[-1])  # (as joined: C order)
    return rows.T @ joined(dys, False, joins)


def unbroadcast_steps_known(gs, x, joins, stack):
    """``unbroadcast_steps_joined(gs, x, joins)`` where the code's kinds prove what
    ``sums_layout`` checks but the shapes: ``x`` and every ``gs[i]`` float64 arrays, the
    ``gs[i]`` of more dimensions than ``x`` (``stack`` False: their rows joined) or as many
    (True: stacked). Only that the ``gs[i]`` have one shape is checked, by a plain loop."""
    if gs:
        shape = gs[0].shape
        for g in gs:
            if g.shape != shape:
                break
        else:
            return unbroadcast(joined(gs, stack, joins), x)
    return unbroadcast_steps(gs, x)


def dot_vjp_left(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``a``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, b), a)
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        return tensordot_vjp_left(dy, a, b, _dot_axes(b))
    return matmul_vjp_left(dy, a, b)


def dot_vjp_right(dy, a, b):
    """Gradient of ``np.dot(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, a), b)
    if np.ndim(a) > 2 or np.ndim(b) > 2:
        return tensordot_vjp_right(dy, a, b, _dot_axes(b))
    return matmul_vjp_right(dy, a, b)


def _dot_axes(b):
    """``np.dot(a, b)`` of N-d arrays as ``np.tensordot``: the last axis of ``a`` against the
    second-to-last of ``b`` (its only one for a vector)."""
    return ((-1,), (max(np.ndim(b) - 2, 0),))


def _einsum_labels(subscripts, shapes):
    """Each operand's labels and the output's, with '...' spelled out as letters."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    inputs = inputs.split(",")
    used = set(spec)
    free = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used]
    spans = [len(shape) - (len(s) - 3) for s, shape in zip(inputs, shapes) if "..." in s]
    ellipsis = free[: max(spans, default=0)]
    labels = []
    for s, shape in zip(inputs, shapes):
        if "..." in s:
            span = len(shape) - (len(s) - 3)
            s = s.replace("...", "".join(ellipsis[len(ellipsis) - span :]))
        labels.append(s)
    if arrow:
        output = output.replace("...", "".join(ellipsis))
    else:
        letters = "".join(inputs).replace(".", "")
        output = "".join(ellipsis) + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1)
        )
    return labels, output


def einsum_vjp(dy, subscripts, k, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The adjoint of ``np.einsum(subscripts, x0, x1, ...)`` with respect to operand ``k``.

    Handles implicit output, '...', labels repeated within an operand (diagonals), labels summed
    within one operand only, and operands broadcast along a size-1 axis.
    """
    operands = [x for x in (x0, x1, x2, x3, x4, x5) if x is not None]
    shapes = [np.shape(x) for x in operands]
    labels, output = _einsum_labels(subscripts, shapes)
    target = labels[k]
    others = [j for j in range(len(operands)) if j != k]
    known = set(output).union(*(labels[j] for j in others))
    unique = list(dict.fromkeys(target))
    computed = "".join(c for c in unique if c in known)
    spec = ",".join([output] + [labels[j] for j in others]) + "->" + computed
    g = np.einsum(spec, dy, *(operands[j] for j in others))
    sizes = {c: n for c, n in zip(target, shapes[k])}
    g = _one_axis_per_label(g, unique, known, sizes)
    if len(unique) == len(target):
        return _like(g, operands[k])
    return _onto_diagonals(g, target, unique, sizes, shapes[k])


def _one_axis_per_label(g, unique, known, sizes):
    """``g`` with one axis per label in ``unique``, each of the operand's size: a label that
    neither the output nor another operand carries gets a new axis (its cotangent is constant
    along it), and an axis the operand had with size 1 (broadcast) is summed."""
    for axis, c in enumerate(unique):
        if c not in known:
            g = np.expand_dims(g, axis)
        if sizes[c] == 1 and g.shape[axis] != 1:
            g = np.sum(g, axis=axis, keepdims=True)
    return np.broadcast_to(g, tuple(sizes[c] for c in unique))


def _onto_diagonals(g, target, unique, sizes, shape):
    """The cotangent of an operand whose labels repeat (``'ii->i'``): ``g``, which has one axis
    per distinct label, written onto those diagonals of zeros of ``shape``."""
    out = np.zeros(shape, dtype=float_dtype(g))
    index = []
    for c in target:
        axis = unique.index(c)
        index.append(np.arange(sizes[c]).reshape([-1 if i == axis else 1 for i in range(g.ndim)]))
    out[tuple(index)] = g
    return out


def einsum_jvp(subscripts, k, tangent, x0, x1=None, x2=None, x3=None, x4=None, x5=None):
    """The tangent of ``np.einsum`` from operand ``k``: operand k replaced by its tangent."""
    operands = [x for x in (x0, x1, x2, x3, x4, x5) if x is not None]
    operands[k] = tangent
    return np.einsum(subscripts, *operands)


def _tensordot_subscripts(a, b, axes):
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        a_axes, b_axes = list(range(na - axes, na)), list(range(axes))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la = [next(letters) for _ in range(na)]
    lb = [next(letters) for _ in range(nb)]
    for i, j in zip(a_axes, b_axes):
        lb[j % nb] = la[i % na]
    contracted = {la[i % na] for i in a_axes}
    out = [c for c in la if c not in contracted] + [c for c in lb if c not in contracted]
    return "".join(la) + "," + "".join(lb) + "->" + "".join(out)


def tensordot_vjp_left(dy, a, b, axes=2):
    """The adjoint of ``np.tensordot(a, b, axes)`` with respect to ``a``."""
    return einsum_vjp(dy, _tensordot_subscripts(a, b, axes), 0, a, b)


def tensordot_vjp_right(dy, a, b, axes=2):
    """The adjoint of ``np.tensordot(a, b, axes)`` with respect to ``b``."""
    return einsum_vjp(dy, _tensordot_subscripts(a, b, axes), 1, a, b)


def inner_vjp_left(dy, a, b):
    """The adjoint of ``np.inner(a, b)`` with respect to ``a``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, b), a)
    return tensordot_vjp_left(dy, a, b, (-1, -1))


def inner_vjp_right(dy, a, b):
    """The adjoint of ``np.inner(a, b)`` with respect to ``b``."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(np.multiply(dy, a), b)
    return tensordot_vjp_right(dy, a, b, (-1, -1))


def kron_vjp(dy, a, b, wrt=0):
    """The adjoint of ``np.kron(a, b)`` with respect to ``a`` (wrt=0) or ``b`` (wrt=1)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    blocks = np.reshape(dy, [n for pair in zip(sa, sb) for n in pair])
    la, lb = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
    interleaved = list(range(2 * nd))
    if wrt == 0:
        g = np.einsum(blocks, interleaved, np.reshape(b, sb), lb, la)
        return _like(g, a)
    g = np.einsum(blocks, interleaved, np.reshape(a, sa), la, lb)
    return _like(g, b)


def _as3(v, axis):
    v = np.moveaxis(_float_array(v), axis, -1)
    if v.shape[-1] == 2:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,))], axis=-1)
    return v


def cross_vjp(dy, a, b, wrt=0, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The adjoint of ``np.cross`` with respect to ``a`` (wrt=0) or ``b`` (wrt=1)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a3, b3 = _as3(a, axisa), _as3(b, axisb)
    if np.shape(a)[axisa] == 2 and np.shape(b)[axisb] == 2:
        d = _float_array(dy)[..., None] * np.array([0.0, 0.0, 1.0])
    else:
        d = np.moveaxis(_float_array(dy), axisc, -1)
    if wrt == 0:
        g, x, ax = np.cross(b3, d), a, axisa
    else:
        g, x, ax = np.cross(d, a3), b, axisb
    g = np.moveaxis(g[..., : np.shape(x)[ax]], -1, ax)
    return unbroadcast(g, x)


def _full_cotangent(dy, n, m, mode):
    """``dy`` of a convolution in ``mode`` placed inside a cotangent of the 'full' result."""
    if mode == "full":
        return dy
    start = min(n, m) - 1 if mode == "valid" else (min(n, m) - 1) // 2
    full = np.zeros(n + m - 1, dtype=float_dtype(dy))
    full[start : start + len(dy)] = dy
    return full


def convolve_vjp(dy, a, v, mode="full", wrt=0):
    """The adjoint of ``np.convolve(a, v, mode)`` with respect to ``a`` (wrt=0) or ``v``."""
    full = _full_cotangent(dy, len(a), len(v), mode)
    other = v if wrt == 0 else a
    # np.correlate conjugates its second operand, which the adjoint of a convolution does not
    return np.correlate(full, np.conj(other) if np.iscomplexobj(other) else other, "valid")


def correlate_vjp(dy, a, v, mode="valid", wrt=0):
    """The adjoint of ``np.correlate(a, v, mode)`` (``convolve(a, v[::-1])`` for real input)."""
    g = convolve_vjp(dy, a, v[::-1], mode, wrt)
    return g if wrt == 0 else g[::-1]
