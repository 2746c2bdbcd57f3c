"""The NumPy rule table, one row per rule, each checked against central differences.

A row is the NumPy call as it would appear in user code, written over named inputs; the test
defines ``def f(<inputs>): return np.sum((<call>) * W)`` with fixed random weights ``W`` shaped
like the call's result, so every output element is tested, then compares ``grad(f)`` for every
input with central differences in float64 (and ``jvp(f)`` against it when forward mode exists).
A row whose call is a ``;``-separated body uses its last part as the result.

``NONDIFF`` lists the functions whose output carries no gradient. The meta-test checks that every
NumPy function in the registry has a row in one table or the other.
"""

from __future__ import annotations

import itertools
import linecache
import operator
from dataclasses import dataclass, field

import numpy as np
import pytest
from gradcheck import check_grad

import srcgrad
from srcgrad import grad
from srcgrad.errors import UnsupportedCaseError
from srcgrad.rules import RULES

# Input domains: the interval values are drawn from.
REAL = (-2.0, 2.0)
POS = (0.5, 2.0)
UNIT = (-0.9, 0.9)
ABOVE1 = (1.2, 3.0)
# Complex values: real and imaginary parts each drawn from the interval.
CX = (-1.5, 1.5, "complex")
CPOS = (0.5, 1.5, "complex")

_counter = itertools.count()


@dataclass
class Row:
    fn: object  # the NumPy function this row covers
    call: str
    inputs: dict  # parameter name -> (shape, domain); global name -> a constant array
    wrt: tuple = ()  # default: every input
    marks: tuple = ()
    rtol: float = 1e-5
    id: str = field(default="")


def row(fn, call, marks=(), wrt=(), rtol=1e-5, **inputs):
    return Row(fn, call, inputs, wrt, marks if isinstance(marks, tuple) else (marks,), rtol)


def x(shape=(3, 4), domain=REAL):
    return (shape, domain)


A = x()
V = x((4,))
S = x(())
M = x((3, 3))
P = x((3, 4), POS)


def _sq(n=3):
    return x((n, n))


def elementwise_rows():
    rows = []
    unary = [
        (np.negative, REAL), (np.positive, REAL), (np.exp, REAL), (np.exp2, REAL),
        (np.expm1, REAL), (np.log, POS), (np.log2, POS), (np.log10, POS), (np.log1p, POS),
        (np.sqrt, POS), (np.cbrt, POS), (np.square, REAL), (np.reciprocal, POS),
        (np.sin, REAL), (np.cos, REAL), (np.tan, UNIT), (np.arcsin, UNIT), (np.asin, UNIT),
        (np.arccos, UNIT), (np.acos, UNIT), (np.arctan, REAL), (np.atan, REAL), (np.sinh, REAL),
        (np.cosh, REAL), (np.tanh, REAL), (np.arcsinh, REAL), (np.asinh, REAL),
        (np.arccosh, ABOVE1), (np.acosh, ABOVE1), (np.arctanh, UNIT), (np.atanh, UNIT),
        (np.abs, POS), (np.fabs, POS), (np.sinc, REAL), (np.deg2rad, REAL), (np.radians, REAL),
        (np.rad2deg, REAL), (np.degrees, REAL), (np.conj, REAL), (np.real, REAL),
        (np.nan_to_num, REAL),
    ]
    for fn, domain in unary:
        name = f"np.{fn.__name__}"
        rows.append(row(fn, f"{name}(x)", x=x((3, 4), domain)))
        rows.append(row(fn, f"{name}(x)", x=x((), domain)))
    rows.append(row(np.absolute, "np.absolute(-x)", x=P))
    rows.append(row(np.sign, "np.sign(x) * x", x=A))  # piecewise constant: the gradient of x
    rows.append(row(np.fabs, "np.fabs(-x)", x=P))
    binary = [
        (np.add, REAL, REAL), (np.subtract, REAL, REAL), (np.multiply, REAL, REAL),
        (np.divide, REAL, POS), (np.true_divide, REAL, POS), (np.power, POS, REAL),
        (np.pow, POS, REAL), (np.float_power, POS, REAL), (np.hypot, REAL, REAL),
        (np.arctan2, REAL, POS), (np.atan2, POS, REAL), (np.logaddexp, REAL, REAL),
        (np.logaddexp2, REAL, REAL), (np.maximum, REAL, REAL), (np.minimum, REAL, REAL),
        (np.fmax, REAL, REAL), (np.fmin, REAL, REAL), (np.remainder, POS, (0.3, 0.4)),
        (np.mod, POS, (0.3, 0.4)), (np.fmod, POS, (0.3, 0.4)),
    ]
    for fn, d1, d2 in binary:
        name = f"np.{fn.__name__}"
        rows.append(row(fn, f"{name}(a, b)", a=x((3, 4), d1), b=x((3, 4), d2)))
        rows.append(row(fn, f"{name}(a, b)", a=x((3, 1), d1), b=x((4,), d2)))
        rows.append(row(fn, f"{name}(a, b)", a=x((), d1), b=x((2, 3), d2)))
    rows += [
        row(np.copysign, "np.copysign(a, b)", wrt=("a",), a=A, b=A),
        row(np.ldexp, "np.ldexp(a, K)", a=A, K=np.array([1, 2, -1, 0])),
        row(np.clip, "np.clip(a, -0.5, 0.7)", a=A),
        row(np.clip, "np.clip(a, lo, hi)", a=A, lo=x((4,), (-3.0, -0.5)), hi=x((3, 1), (0.5, 3))),
        row(np.clip, "np.clip(a, None, hi)", a=A, hi=x((), (-0.5, 0.5))),
        # a lower bound above the upper one: NumPy gives the upper (the rule gave the lower's)
        row(np.clip, "np.clip(a, lo, hi)", a=A, lo=x((4,), (0.3, 1.5)), hi=x((3, 1), (-1.0, 0.9))),
        row(np.where, "np.where(a > 0, a, b)", a=A, b=V),
        row(np.where, "np.where(b > 0, a * 2, 1.0)", a=A, b=V),
    ]
    return rows


def reduction_rows():
    rows = []
    a3 = x((2, 3, 4))
    for fn in (np.sum, np.mean, np.prod, np.nansum, np.nanmean):
        n = f"np.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=a3),
            row(fn, f"{n}(a, axis=1)", a=a3),
            row(fn, f"{n}(a, axis=-1, keepdims=True)", a=a3),
            row(fn, f"{n}(a, axis=(0, 2))", a=a3),
            row(fn, f"{n}(a)", a=S),
        ]
    for fn in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.ptp):
        n = f"np.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=a3),
            row(fn, f"{n}(a, axis=0)", a=a3),
            row(fn, f"{n}(a, axis=(-1, 0), keepdims=True)", a=a3),
        ]
    for fn in (np.var, np.std):
        n = f"np.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=a3),
            row(fn, f"{n}(a, axis=1, ddof=1)", a=a3),
            row(fn, f"{n}(a, axis=(0, -1), keepdims=True)", a=a3),
        ]
    rows += [
        row(np.prod, "np.prod(a * Z, axis=1)", a=A, Z=np.array([1.0, 0.0, 1.0, 1.0])),
        row(np.prod, "np.prod(a * Z)", a=V, Z=np.array([0.0, 0.0, 1.0, 1.0])),
        row(np.average, "np.average(a)", a=A),
        row(np.average, "np.average(a, axis=1, weights=w)", a=A, w=x((4,), POS)),
        row(np.average, "np.average(a, axis=0, weights=w)", a=A, w=x((3,), POS)),
        row(np.average, "np.average(a, axis=0, weights=w, keepdims=True)", a=A, w=P),
        # keepdims over a trailing axis: over the leading one, a dropped keepdims only broadcasts
        row(np.average, "np.average(a, axis=1, weights=w, keepdims=True)", a=A, w=x((4,), POS)),
        row(np.average, "np.average(a, axis=1, weights=[1, 2, 3, 4])", a=A),  # a list, of ints
        # keepdims without weights: the tangent's ones are shaped like y (kept axes), which
        # mean_grad spreads only when told keepdims
        row(np.average, "np.average(a, axis=1, keepdims=True)", a=A),
        row(np.median, "np.median(a)", a=x((5,))),
        row(np.median, "np.median(a, axis=0)", a=x((4, 3))),
        row(np.median, "np.median(a, axis=1, keepdims=True)", a=x((4, 3))),
        row(np.quantile, "np.quantile(a, 0.3, axis=1)", a=A),
        row(np.quantile, "np.quantile(a, Q, axis=0, keepdims=True)", a=A, Q=np.array([0.2, 0.9])),
        row(np.quantile, "np.quantile(a, 0.3, axis=1, keepdims=True)", a=A),
        row(np.percentile, "np.percentile(a, 70.0)", a=A),
        row(np.percentile, "np.percentile(a, 70.0, axis=1, keepdims=True)", a=A),
        # every interpolation NumPy has: the rule ignored `method` (the linear weights for all)
        *(row(np.quantile, f"np.quantile(a, Q, axis=1, method={m!r})", a=A,
              Q=np.array([0.05, 0.3, 0.55, 0.95]))
          for m in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                    "normal_unbiased", "lower", "higher", "midpoint", "nearest")),
        row(np.percentile, "np.percentile(a, 30.0, method='nearest')", a=A),
        row(np.cumsum, "np.cumsum(a)", a=A),
        row(np.cumsum, "np.cumsum(a, axis=-1)", a=a3),
        row(np.cumulative_sum, "np.cumulative_sum(a, axis=0)", a=A),
        row(np.cumprod, "np.cumprod(a, axis=1)", a=A),
        row(np.cumprod, "np.cumprod(a)", a=x((5,))),
        row(np.cumprod, "np.cumprod(a * Z, axis=1)", a=A, Z=np.array([1.0, 0.0, 1.0, 1.0])),
        row(np.cumulative_prod, "np.cumulative_prod(a, axis=1)", a=A),
        row(np.trace, "np.trace(a)", a=A),
        row(np.trace, "np.trace(a, 1, 2, 0)", a=a3),
        row(np.diff, "np.diff(a)", a=A),
        row(np.diff, "np.diff(a, 2, axis=0)", a=x((5, 3))),
        # logsumexp-style code built from the rules
        row(np.max, "m = np.max(a, axis=1, keepdims=True); "
            "np.log(np.sum(np.exp(a - m), axis=1)) + m[:, 0]", a=A),
    ]
    return rows


def shape_rows():
    b = x((2, 3, 4))
    return [
        row(np.transpose, "np.transpose(a)", a=b),
        row(np.transpose, "np.transpose(a, (1, 2, 0))", a=b),
        row(np.matrix_transpose, "np.matrix_transpose(a)", a=b),
        row(np.swapaxes, "np.swapaxes(a, 0, -1)", a=b),
        row(np.moveaxis, "np.moveaxis(a, 0, -1)", a=b),
        row(np.moveaxis, "np.moveaxis(a, (0, 1), (2, 0))", a=b),
        row(np.reshape, "np.reshape(a, (4, 3))", a=A),
        row(np.reshape, "np.reshape(a, -1, order='F')", a=A),
        row(np.ndarray.view, "a.view()", a=A),
        row(np.ravel, "np.ravel(a)", a=b),
        row(np.expand_dims, "np.expand_dims(a, (0, -1))", a=A),
        row(np.squeeze, "np.squeeze(a)", a=x((3, 1, 4, 1))),
        row(np.squeeze, "np.squeeze(a, axis=1)", a=x((3, 1, 4, 1))),
        row(np.atleast_1d, "np.atleast_1d(a)", a=S),
        row(np.atleast_2d, "np.atleast_2d(a)", a=V),
        row(np.atleast_3d, "np.atleast_3d(a)", a=A),
        row(np.asarray, "np.asarray(a)", a=A),
        row(np.asarray, "np.asarray(a)", a=S),
        row(np.array, "np.array(a)", a=A),
        row(np.array, "np.array((a, b))", a=V, b=V),
        row(np.copy, "np.copy(a)", a=A),
        row(np.ascontiguousarray, "np.ascontiguousarray(a)", a=A),
        row(np.broadcast_to, "np.broadcast_to(a, (2, 3, 4))", a=x((3, 1))),
        row(np.flip, "np.flip(a)", a=A),
        row(np.flip, "np.flip(a, 1)", a=A),
        row(np.fliplr, "np.fliplr(a)", a=A),
        row(np.flipud, "np.flipud(a)", a=A),
        row(np.roll, "np.roll(a, 2)", a=A),
        row(np.roll, "np.roll(a, (1, -1), axis=(0, 1))", a=A),
        row(np.rot90, "np.rot90(a)", a=A),
        row(np.rot90, "np.rot90(a, 3, (1, 2))", a=b),
        row(np.triu, "np.triu(a, 1)", a=A),
        row(np.tril, "np.tril(a)", a=A),
        row(np.tril, "np.tril(a, 1)", a=A),
        row(np.diag, "np.diag(a)", a=V),
        row(np.diag, "np.diag(a, -1)", a=A),
        row(np.diagflat, "np.diagflat(a, 1)", a=x((2, 2))),
        row(np.diagonal, "np.diagonal(a)", a=A),
        row(np.diagonal, "np.diagonal(a, 1, 2, 0)", a=b),
        row(np.tile, "np.tile(a, (2, 1, 2))", a=A),
        row(np.repeat, "np.repeat(a, 2)", a=A),
        row(np.repeat, "np.repeat(a, K, axis=0)", a=A, K=np.array([1, 0, 3])),
        row(np.take, "np.take(a, K)", a=A, K=np.array([0, 2, 2, 7])),
        row(np.take, "np.take(a, K, axis=1)", a=A, K=np.array([[1, 1], [3, 0]])),
        row(np.take, "np.take(a, K, mode='wrap')", a=A, K=np.array([1, 13, 5, -11])),
        row(np.take_along_axis, "np.take_along_axis(a, K, 0)", a=A,
            K=np.array([[0, 2, 1, 1], [2, 2, 0, 1]])),
        row(np.take_along_axis, "np.take_along_axis(a, K, 1)", a=A,
            K=np.array([[0, 0], [3, 1], [2, 2]])),
        row(np.delete, "np.delete(a, 1, axis=1)", a=A),
        row(np.resize, "np.resize(a, (5, 3))", a=x((2, 3))),
        row(np.pad, "np.pad(a, ((1, 2), (0, 1)))", a=A),
        row(np.pad, "np.pad(a, 2, 'reflect')", a=A),
        row(np.pad, "np.pad(a, 1, 'edge')", a=A),
        row(np.pad, "np.pad(a, 1, 'wrap')", a=A),
        row(np.pad, "np.pad(a, 1, 'constant', constant_values=c)", a=A, c=S),
        row(np.append, "np.append(a, b)", a=A, b=V),
        row(np.append, "np.append(a, b, axis=0)", a=A, b=x((2, 4))),
        row(np.append, "np.append(a, b, axis=0)", a=A, b=x((2, 4)), wrt=("a",)),
        row(np.append, "np.append(a, b, axis=0)", a=A, b=x((2, 4)), wrt=("b",)),
        row(np.full, "np.full((2, 3), c)", c=S),
        row(np.full, "np.full((2, 3), c)", c=x((3,))),
        row(np.full_like, "np.full_like(a, c)", a=A, c=S, wrt=("c",)),
        row(np.linspace, "np.linspace(a, b, 7)", a=S, b=S),
        row(np.linspace, "np.linspace(a, b, 5, endpoint=False)", a=S, b=S),
        row(np.bincount, "np.bincount(K, w)", w=V, K=np.array([0, 1, 1, 3])),
        row(np.concatenate, "np.concatenate((a, b), axis=1)", a=A, b=x((3, 2))),
        row(np.concat, "np.concat((a, b))", a=A, b=x((1, 4))),
        row(np.stack, "np.stack((a, b), axis=-1)", a=A, b=A),
        row(np.hstack, "np.hstack((a, b))", a=V, b=x((2,))),
        row(np.vstack, "np.vstack((a, b))", a=V, b=V),
        row(np.dstack, "np.dstack((a, b))", a=A, b=A),
        row(np.column_stack, "np.column_stack((a, b))", a=x((3,)), b=A),
        row(np.split, "np.split(a, 2, axis=1)[1]", a=A),
        row(np.array_split, "np.array_split(a, 3)[0]", a=V),
        row(np.array_split, "np.array_split(a, 3, axis=1)[2]", a=A),
        row(np.hsplit, "np.hsplit(a, 2)[0]", a=A),
        row(np.vsplit, "np.vsplit(a, 3)[2]", a=A),
        row(np.dsplit, "np.dsplit(a, 2)[1]", a=b),
        row(np.unstack, "np.unstack(a)[1]", a=A),
        row(np.unstack, "np.unstack(a, axis=1)[1]", a=A),
    ]


def product_rows():
    b = x((2, 3, 4))
    return [
        row(np.matmul, "np.matmul(a, b)", a=A, b=x((4, 2))),
        row(np.matmul, "np.matmul(a, b)", a=b, b=V),
        # `a @ b` is operator.matmul's rule (the same templates, checked on their own)
        row(operator.matmul, "a @ b", a=b, b=V),
        row(operator.matmul, "v @ a", v=x((3,)), a=A),
        row(np.linalg.matmul, "np.linalg.matmul(a, b)", a=x((2, 3)), b=A),
        row(np.dot, "np.dot(a, b)", a=A, b=V),
        row(np.dot, "np.dot(a, b)", a=S, b=A),
        row(np.vdot, "np.vdot(a, b)", a=A, b=x((2, 6))),
        row(np.inner, "np.inner(a, b)", a=A, b=x((2, 4))),
        row(np.inner, "np.inner(a, b)", a=V, b=V),
        row(np.outer, "np.outer(a, b)", a=V, b=x((2, 2))),
        row(np.linalg.outer, "np.linalg.outer(a, b)", a=V, b=x((3,))),
        row(np.tensordot, "np.tensordot(a, b)", a=b, b=x((3, 4, 2))),
        row(np.tensordot, "np.tensordot(a, b, axes=((0, 2), (2, 0)))", a=b, b=x((4, 5, 2))),
        row(np.tensordot, "np.tensordot(a, b, 0)", a=V, b=x((2,))),
        row(np.linalg.tensordot, "np.linalg.tensordot(a, b, axes=1)", a=A, b=x((4, 2))),
        row(np.vecdot, "np.vecdot(a, b)", a=A, b=V),
        row(np.linalg.vecdot, "np.linalg.vecdot(a, b, axis=0)", a=A, b=A),
        row(np.matvec, "np.matvec(a, b)", a=b, b=V),
        row(np.vecmat, "np.vecmat(a, b)", a=x((3,)), b=b),
        row(np.einsum, "np.einsum('ij,jk->ik', a, b)", a=A, b=x((4, 2))),
        row(np.einsum, "np.einsum('ij,ij', a, b)", a=A, b=A),
        row(np.einsum, "np.einsum('ii->i', a)", a=M),
        row(np.einsum, "np.einsum('ii', a)", a=M),
        row(np.einsum, "np.einsum('ij->j', a)", a=A),
        row(np.einsum, "np.einsum('ij,k->ijk', a, b)", a=A, b=x((2,))),
        row(np.einsum, "np.einsum('...ij,...jk->...ik', a, b)", a=b, b=x((4, 2))),
        row(np.einsum, "np.einsum('b...,b', a, b)", a=b, b=x((2,))),
        row(np.einsum, "np.einsum('ij,jk,kl', a, b, c)", a=A, b=x((4, 2)), c=x((2, 3))),
        # six operands (the most einsum's rule takes), each of its own shape
        row(np.einsum, "np.einsum('i,ij,j,jk,k,k->i', a, b, c, d, e, f)", a=x((2,)),
            b=x((2, 3)), c=x((3,)), d=x((3, 4)), e=x((4,)), f=x((4,))),
        row(np.einsum, "np.einsum('i,ij,j,jk,k,k->i', a, b, c, d, e, f)", wrt=("f",), a=x((2,)),
            b=x((2, 3)), c=x((3,)), d=x((3, 4)), e=x((4,)), f=x((4,))),
        # one operand active, the others constants whose tangents are None (a mutant of jvp[x2]
        # passing dx0 for x2 dropped an operand)
        row(np.einsum, "np.einsum('i,ij,j,jk,k,k->i', a, b, c, d, e, f)", wrt=("c",), a=x((2,)),
            b=x((2, 3)), c=x((3,)), d=x((3, 4)), e=x((4,)), f=x((4,))),
        row(np.einsum, "np.einsum('i,ij,j,jk,k,k->i', a, b, c, d, e, f)", wrt=("d",), a=x((2,)),
            b=x((2, 3)), c=x((3,)), d=x((3, 4)), e=x((4,)), f=x((4,))),  # jvp[x3] passed dx4
        row(np.einsum, "np.einsum('i,i->i', a, b)", a=x((1,)), b=V),
        row(np.einsum, "np.einsum('iij->j', a)", a=x((3, 3, 2))),
        row(np.kron, "np.kron(a, b)", a=x((2, 3)), b=x((2, 2))),
        row(np.kron, "np.kron(a, b)", a=x((3,)), b=x((2, 2))),
        row(np.cross, "np.cross(a, b)", a=x((4, 3)), b=x((3,))),
        row(np.cross, "np.cross(a, b, axis=0)", a=x((3, 4)), b=x((3, 4))),
        row(np.cross, "np.cross(a, b, axisa=0, axisb=0, axisc=0)", a=x((3, 4)), b=x((3, 4))),
        row(np.linalg.cross, "np.linalg.cross(a, b, axis=0)", a=x((3, 4)), b=x((3, 4))),
        row(np.linalg.cross, "np.linalg.cross(a, b)", a=x((3,)), b=x((3,))),
        row(np.convolve, "np.convolve(a, b)", a=x((5,)), b=x((3,))),
        row(np.convolve, "np.convolve(a, b, 'same')", a=x((4,)), b=x((6,))),
        row(np.convolve, "np.convolve(a, b, 'valid')", a=x((6,)), b=x((4,))),
        row(np.correlate, "np.correlate(a, b)", a=x((6,)), b=x((3,))),
        row(np.correlate, "np.correlate(a, b, 'full')", a=x((3,)), b=x((4,))),
        row(np.correlate, "np.correlate(a, b, 'same')", a=x((5,)), b=x((4,))),
    ]


def sorting_rows():
    return [
        row(np.sort, "np.sort(a)", a=A),
        row(np.sort, "np.sort(a, axis=0)", a=A),
        row(np.sort, "np.sort(a, axis=None)", a=A),
        row(np.partition, "np.partition(a, 2)", a=A),
        row(np.partition, "np.partition(a, (0, 2), axis=0)", a=x((5, 2))),
    ]


def _spd(name):
    return f"{name} @ np.transpose({name}) + 3 * np.eye(np.shape({name})[0])"


def linalg_rows():
    la = np.linalg
    b3 = x((2, 3, 3))
    return [
        row(la.inv, "np.linalg.inv(a + 3 * np.eye(3))", a=M),
        row(la.inv, "np.linalg.inv(a + 3 * np.eye(3))", a=b3),
        row(la.solve, "np.linalg.solve(a + 3 * np.eye(3), b)", a=M, b=x((3,))),
        row(la.solve, "np.linalg.solve(a + 3 * np.eye(3), b)", a=M, b=x((3, 2))),
        row(la.solve, "np.linalg.solve(a + 3 * np.eye(3), b)", a=b3, b=x((3, 1))),
        row(la.det, "np.linalg.det(a)", a=M),
        row(la.det, "np.linalg.det(a)", a=b3),
        row(la.slogdet, "np.linalg.slogdet(a)[1]", a=M),
        row(la.slogdet, "np.linalg.slogdet(a)[0] * np.sum(a)", a=M),  # the sign alone
        row(la.cholesky, f"np.linalg.cholesky({_spd('a')})", a=M),
        row(la.cholesky, f"np.linalg.cholesky({_spd('a')}, upper=True)", a=M),
        row(la.eigh, "e = np.linalg.eigh(a + np.transpose(a)); e[0] + e[1][0] ** 2", a=M),
        row(la.eigh, "np.linalg.eigh(a + np.transpose(a))[0]", a=M),  # the eigenvalues alone
        row(la.eigh, "e = np.linalg.eigh(a + np.swapaxes(a, -1, -2)); e[0] + e[1][..., 0, :] ** 2",
            a=x((2, 3, 3))),
        row(la.eigvalsh, "np.linalg.eigvalsh(a + np.transpose(a))", a=M),
        row(la.svd, "r = np.linalg.svd(a, full_matrices=False); "
            "np.sum(r[1]) + np.sum(r[0] ** 2 * r[1]) + r[0] @ r[2]", a=A),
        row(la.svd, "np.linalg.svd(a, compute_uv=False)", a=A),
        row(la.svdvals, "np.linalg.svdvals(a)", a=x((4, 3))),
        row(la.svd, "np.linalg.svd(a)[1]", a=M),  # square: full_matrices=True is fine
        row(la.qr, "r = np.linalg.qr(a); r[0] @ r[1] + r[0] ** 2 * np.diag(r[1])", a=x((4, 3))),
        row(la.qr, "np.abs(np.linalg.qr(a, mode='r'))", a=x((4, 3))),
        row(la.qr, "np.linalg.qr(a)[0]", a=x((4, 3))),  # q alone
        row(la.qr, "r = np.linalg.qr(a); r[0] * np.diag(r[1])", a=M),  # square
        row(la.pinv, "np.linalg.pinv(a)", a=A),
        row(la.pinv, "np.linalg.pinv(a)", a=x((4, 2))),
        row(la.matrix_power, "np.linalg.matrix_power(a, 3)", a=M),
        row(la.matrix_power, "np.linalg.matrix_power(a, 0)", a=M),
        row(la.matrix_power, "np.linalg.matrix_power(a, 1)", a=M),
        row(la.matrix_power, "np.linalg.matrix_power(a + 3 * np.eye(3), -2)", a=M),
        row(la.lstsq, "np.linalg.lstsq(a, b)[0]", a=x((5, 3)), b=x((5,))),
        # the residuals and the singular values carry derivatives too (their tangents were
        # dropped: found by mutating the lstsq templates)
        row(la.lstsq, "np.linalg.lstsq(a, b)[1]", a=x((5, 3)), b=x((5,))),
        row(la.lstsq, "np.linalg.lstsq(a, b)[1]", a=x((5, 3)), b=x((5, 2))),
        row(la.lstsq, "np.linalg.lstsq(a, b)[3]", a=x((5, 3)), b=x((5,)), wrt=("a",)),
        row(la.lstsq, "r = np.linalg.lstsq(a, b); r[0] * r[1]", a=x((5, 3)), b=x((5, 2))),
        # a square system has no residuals (an empty array, whose sum is read here)
        row(la.lstsq, "r = np.linalg.lstsq(a + 3 * np.eye(3), b); r[0] + np.sum(r[1])", a=M,
            b=x((3,))),
        # only `a` active, b a matrix: the tangent's branch is chosen by b, not by its tangent
        row(la.solve, "np.linalg.solve(a + 3 * np.eye(3), b)", a=M, b=x((3, 2)), wrt=("a",)),
        row(la.norm, "np.linalg.norm(a)", a=A),
        row(la.norm, "np.linalg.norm(a, axis=1)", a=A),
        row(la.norm, "np.linalg.norm(a, 1, axis=0, keepdims=True)", a=A),
        row(la.norm, "np.linalg.norm(a, np.inf)", a=V),
        row(la.norm, "np.linalg.norm(a, -np.inf)", a=V),
        row(la.norm, "np.linalg.norm(a, 3)", a=V),
        row(la.norm, "np.linalg.norm(a, 'fro')", a=A),
        row(la.norm, "np.linalg.norm(a, 'nuc')", a=A),
        row(la.norm, "np.linalg.norm(a, 2)", a=A),
        row(la.norm, "np.linalg.norm(a, -2)", a=A),
        row(la.norm, "np.linalg.norm(a, 1)", a=A),
        row(la.norm, "np.linalg.norm(a, np.inf)", a=A),
        row(la.norm, "np.linalg.norm(a, -1, axis=(2, 0))", a=x((3, 2, 4))),
        row(la.vector_norm, "np.linalg.vector_norm(a, axis=(0, 1))", a=x((2, 3, 4))),
        row(la.vector_norm, "np.linalg.vector_norm(a, ord=1)", a=A),
        row(la.vector_norm, "np.linalg.vector_norm(a, axis=-1)", a=A),
        row(la.vector_norm, "np.linalg.vector_norm(a, axis=1, keepdims=True)", a=A),
        row(la.matrix_norm, "np.linalg.matrix_norm(a)", a=x((2, 3, 4))),
        row(la.matrix_norm, "np.linalg.matrix_norm(a, keepdims=True)", a=x((2, 3, 4))),
        row(la.matrix_norm, "np.linalg.matrix_norm(a, ord='nuc')", a=x((2, 3, 4))),
        row(la.trace, "np.linalg.trace(a, offset=1)", a=x((2, 3, 4))),
        row(la.diagonal, "np.linalg.diagonal(a)", a=x((2, 3, 4))),
        row(la.diagonal, "np.linalg.diagonal(a, offset=1)", a=x((2, 3, 4))),
        row(la.matrix_transpose, "np.linalg.matrix_transpose(a)", a=x((2, 3, 4))),
    ]


def complex_rows():
    """Complex inputs (docs/complex.md): the gradient is ``df/dx + 1j*df/dy``, and a complex
    result is weighted by complex W (``build_parts``), which checks the vjp's convention too."""
    c, cv, cs, cm = x((2, 3), CX), x((3,), CX), x((), CX), x((3, 3), CX)
    rows = []
    unary = [
        (np.negative, CX), (np.exp, CX), (np.exp2, CX), (np.expm1, CX), (np.log, CPOS),
        (np.log2, CPOS), (np.log10, CPOS), (np.log1p, CPOS), (np.sqrt, CPOS), (np.square, CX),
        (np.reciprocal, CPOS), (np.sin, CX), (np.cos, CX), (np.tan, CX), (np.arcsin, CPOS),
        (np.arccos, CPOS), (np.arctan, CPOS), (np.sinh, CX), (np.cosh, CX), (np.tanh, CX),
        (np.arcsinh, CPOS), (np.arccosh, CPOS), (np.arctanh, CPOS), (np.abs, CX),
        (np.conj, CX), (np.real, CX), (np.imag, CX), (np.angle, CPOS),
    ]
    # three functions per row (each also has rows of its own on real input), to keep it quick
    for domain in (CX, CPOS):
        fns = [fn for fn, d in unary if d is domain]
        for k in range(0, len(fns), 3):
            call = " + ".join(f"np.{fn.__name__}(z)" for fn in fns[k:k + 3])
            rows.append(row(fns[k], call, z=x((3,), domain)))
    rows += [
        row(np.abs, "np.abs(z)", z=cs),
        row(np.angle, "np.angle(z, deg=True)", z=x((3,), CPOS)),
        # a real input meeting complex intermediates gets a real gradient
        row(np.abs, "np.abs(h * (1 + 2j))", h=A),
        row(np.real, "np.real(np.exp(1j * h))", h=A),
        row(np.imag, "np.imag(h * z)", h=x((2, 1)), z=c),
        row(np.multiply, "np.multiply(a, z)", a=x((2, 1)), z=cv),
        row(np.add, "np.add(z, w)", z=c, w=cv),
        row(np.divide, "np.divide(z, w)", z=c, w=x((3,), CPOS)),
        row(np.power, "np.power(w, z)", w=x((3,), CPOS), z=x((2, 1), CX)),
        row(np.power, "z ** 3", z=c),
        row(np.where, "np.where(h > 0, z, w)", h=A, z=x((3, 4), CX), w=x((4,), CX),
            wrt=("z", "w")),
        row(np.sum, "np.sum(z, axis=0)", z=c),
        row(np.mean, "np.mean(z, axis=1, keepdims=True)", z=c),
        row(np.prod, "np.prod(z, axis=1)", z=c),
        row(np.cumsum, "np.cumsum(z, axis=1)", z=c),
        row(np.cumprod, "np.cumprod(z)", z=c),
        row(np.diff, "np.diff(z, axis=1)", z=c),
        row(np.trace, "np.trace(z)", z=cm),
        row(np.average, "np.average(z, axis=1, weights=w)", z=c, w=cv),
        row(np.roll, "np.roll(z.T, 1)", z=c),
        row(np.tile, "np.tile(z, 2)", z=cv),
        row(np.concatenate, "np.concatenate([z, h])", z=c, h=x((1, 3))),
        row(np.take, "np.take(z, [0, 2, 2], axis=1)", z=c),
        row(np.pad, "np.pad(z, 1)", z=c),
        row(np.split, "np.split(z, 3, axis=1)[1]", z=c),
        row(np.repeat, "np.repeat(z, 2, axis=0)", z=c),
        row(np.diagonal, "np.diagonal(z)", z=cm),
        row(np.diag, "np.diag(z)", z=cv),
        row(operator.getitem, "z[1, ::2]", z=c),
        row(np.matmul, "z @ w", z=c, w=x((3, 2), CX)),
        row(np.dot, "np.dot(z, w)", z=c, w=cv),
        row(np.vdot, "np.vdot(z, w)", z=c, w=x((2, 3), CX)),
        row(np.vecdot, "np.vecdot(z, w, axis=0)", z=c, w=x((2, 1), CX)),
        row(np.linalg.vecdot, "np.linalg.vecdot(z, w, axis=0)", z=c, w=x((2, 1), CX)),
        row(np.vecmat, "np.vecmat(w, z)", z=c, w=x((2,), CX)),
        row(np.matvec, "np.matvec(z, w)", z=c, w=cv),
        row(np.inner, "np.inner(z, w)", z=c, w=cv),
        row(np.outer, "np.outer(z, w)", z=cv, w=cv),
        row(np.tensordot, "np.tensordot(z, w, 1)", z=c, w=x((3, 2), CX)),
        row(np.einsum, "np.einsum('ij,j->i', z, w)", z=c, w=cv),
        row(np.kron, "np.kron(z, w)", z=cv, w=x((2,), CX)),
        row(np.cross, "np.cross(z, w)", z=cv, w=cv),
        row(np.convolve, "np.convolve(z, w)", z=cv, w=x((2,), CX)),
        row(np.linalg.inv, "np.linalg.inv(z + 3 * np.eye(3))", z=cm),
        row(np.linalg.solve, "np.linalg.solve(z + 3 * np.eye(3), w)", z=cm, w=cv),
        row(np.linalg.det, "np.linalg.det(z)", z=cm),
        row(np.linalg.matrix_power, "np.linalg.matrix_power(z, 3)", z=cm),
        row(np.linalg.norm, "np.linalg.norm(z)", z=c),
        row(np.linalg.norm, "np.linalg.norm(z, 1, axis=1)", z=c),
        row(np.linalg.norm, "np.linalg.norm(z, np.inf)", z=c),
        row(np.linalg.vector_norm, "np.linalg.vector_norm(z, ord=3)", z=c),
        row(np.linalg.matrix_norm, "np.linalg.matrix_norm(z)", z=c),
    ]
    return rows


def fft_rows():
    """numpy.fft: every transform with n/s, axis/axes and each norm, odd and even lengths (a
    real inverse transform's weights differ: hermitian_weights), on real and complex input."""
    fft = np.fft
    r35, c35 = x((3, 5)), x((3, 5), CX)
    rows = []
    for fn in (fft.fft, fft.ifft):
        n = f"np.fft.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=c35),
            row(fn, f"{n}(a, 7, axis=0, norm='ortho')", a=r35),
            row(fn, f"{n}(a, n=3, norm='forward')", a=c35),
        ]
    for fn in (fft.fft2, fft.ifft2, fft.fftn, fft.ifftn):
        n = f"np.fft.{fn.__name__}"
        rows.append(row(fn, f"{n}(a)", a=c35))
        rows.append(row(fn, f"{n}(a, s=(4, 3), norm='ortho')", a=r35))
    rows += [
        row(fft.fftn, "np.fft.fftn(a, axes=(0, 2), norm='forward')", a=x((2, 3, 2), CX)),
        row(fft.ifftn, "np.fft.ifftn(a, s=(3,), axes=(1,), norm='forward')", a=x((2, 2, 2), CX)),
    ]
    for fn in (fft.rfft, fft.ihfft):
        n = f"np.fft.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=r35),
            row(fn, f"{n}(a, 6, axis=0, norm='ortho')", a=r35),
            row(fn, f"{n}(a, n=4, norm='forward')", a=r35),
        ]
    for fn in (fft.rfft2, fft.rfftn):
        n = f"np.fft.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=r35),
            row(fn, f"{n}(a, s=(4, 6), axes=(1, 0), norm='ortho')", a=r35),
        ]
    for fn in (fft.irfft, fft.hfft):
        n = f"np.fft.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=c35),
            row(fn, f"{n}(a, 7)", a=c35),  # odd length: no Nyquist frequency
            row(fn, f"{n}(a, 4, axis=0, norm='ortho')", a=c35),
            row(fn, f"{n}(a, n=11, norm='forward')", a=r35),
        ]
    for fn in (fft.irfft2, fft.irfftn):
        n = f"np.fft.{fn.__name__}"
        rows += [
            row(fn, f"{n}(a)", a=c35),
            row(fn, f"{n}(a, s=(3, 7), axes=(0, 1), norm='ortho')", a=c35),
            row(fn, f"{n}(a, s=(2, 5), axes=(1, 0))", a=x((3, 4), CX)),
        ]
    rows += [
        # a complex use of a real inverse transform's result: its cotangent is complex there,
        # of which the real part counts (np.real in the adjoints)
        row(fft.irfft, "np.fft.irfft(a) * (1 + 2j)", a=c35),
        row(fft.hfft, "np.fft.hfft(a, 5) * (1 - 1j)", a=c35),
        row(fft.irfftn, "np.fft.irfftn(a, axes=(0, 2)) * (2 - 1j)", a=x((2, 2, 3), CX)),
        row(fft.irfft2, "np.fft.irfft2(a, axes=(0, 1, 2)) * 1j", a=x((2, 2, 3), CX)),
        row(fft.rfftn, "np.fft.rfftn(a, axes=(0, 2))", a=x((2, 3, 2))),
        row(fft.fftshift, "np.fft.fftshift(a)", a=c35),
        row(fft.fftshift, "np.fft.fftshift(a, axes=1)", a=r35),
        row(fft.ifftshift, "np.fft.ifftshift(a, axes=(0,))", a=c35),
        row(fft.ifftshift, "np.fft.ifftshift(a)", a=r35),
    ]
    return rows


ROWS = elementwise_rows() + reduction_rows() + shape_rows() + product_rows() + sorting_rows()
ROWS += linalg_rows() + complex_rows() + fft_rows()

# Constants of the rows of numerical methods.
XS = np.array([0.0, 0.3, 1.0, 1.4, 2.5])
XS4 = np.array([-1.0, -0.2, 0.5, 2.0])
XP = np.array([0.0, 1.0, 1.5, 3.0])
MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])
MASK4 = np.array([True, False, True, True])
AW = np.array([0.5, 2.0, 1.0, 1.5])
FW = np.array([1, 3, 2, 1])
D3 = np.diag([1.0, 2.0, 4.0])


def numeric_rows():
    """NumPy's numerical methods, ``where=``/``initial=`` of the reductions, ufunc methods and
    the calling forms of the products (issue 15 item 5). Kept out of ROWS: test_dask.py runs
    those lazily, and these helpers compute their Dask inputs (not claimed lazy)."""
    b = x((2, 3, 4))
    return [
        row(np.gradient, "np.gradient(a)", a=V),
        row(np.gradient, "np.gradient(a, 0.5, edge_order=2)", a=x((5,))),
        row(np.gradient, "np.gradient(a, XS)", a=x((5,))),
        row(np.gradient, "np.gradient(a, XS, edge_order=2)", a=x((5,))),
        row(np.gradient, "np.gradient(a, axis=0)", a=A),
        row(np.gradient, "g = np.gradient(a, 2.0, XS4); g[0] + 2 * g[1]", a=A),
        row(np.gradient, "np.gradient(a, axis=(2, 0))[1]", a=b),  # one component inactive
        row(np.gradient, "np.gradient(a)", a=x((2,))),
        row(np.trapezoid, "np.trapezoid(a)", a=A),
        row(np.trapezoid, "np.trapezoid(a, dx=h, axis=0)", a=A, h=S),
        row(np.trapezoid, "np.trapezoid(a, t, axis=0)", a=A, t=x((3,))),
        row(np.trapezoid, "np.trapezoid(a, t)", a=A, t=A),
        row(np.trapezoid, "np.trapezoid(a, t, axis=1)", a=b, t=x((1, 3, 1))),
        row(np.trapezoid, "np.trapezoid(a, t, dx=h)", a=A, t=V, h=S, wrt=("h",)),  # dx unused
        row(np.interp, "np.interp(t, XP, f)", t=x((5,), (-0.5, 3.5)), f=V),
        row(np.interp, "np.interp(t, XP, f, left=lo, right=hi)", t=x((3, 2), (-1.0, 4.0)), f=V,
            lo=S, hi=S),
        row(np.interp, "np.interp(s, XP, f)", s=x((), (0.1, 2.9)), f=V),
        # linear in fp with real weights: complex fp interpolates both parts
        row(np.interp, "np.interp(t, XP, z)", t=x((5,), (-0.5, 3.5)), z=x((4,), CX), wrt=("z",)),
        row(np.polyval, "np.polyval(p, t)", p=V, t=x((3, 2))),
        row(np.polyval, "np.polyval(p, s)", p=x((3,)), s=S),
        row(np.polyval, "np.polyval(p, t)", p=x((1,)), t=x((3,))),
        row(np.polyval, "np.polyval(p, t)", p=x((3,)), t=x((2,)), wrt=("t",)),
        row(np.polyfit, "np.polyfit(XS, b, 2)", b=x((5,))),
        row(np.polyfit, "np.polyfit(XS, b, 1, w=XS + 1)", b=x((5, 2))),
        row(np.polyfit, "np.polyfit(XS, b, 3, rcond=0.05)", b=x((5,))),  # a value cut off
        row(np.unwrap, "np.unwrap(a * 3)", a=A),
        row(np.unwrap, "np.unwrap(a * 3, axis=0, period=q)", a=A, q=x((), (2.0, 4.0))),
        row(np.cov, "np.cov(a)", a=A),
        row(np.cov, "np.cov(a, rowvar=False, bias=True)", a=A),
        row(np.cov, "np.cov(a, b)", a=V, b=V),
        row(np.cov, "np.cov(a)", a=V),
        row(np.cov, "np.cov(a, aweights=AW)", a=A),
        row(np.cov, "np.cov(a, fweights=FW, aweights=AW, ddof=0)", a=A),
        row(np.cov, "np.cov(a, fweights=FW)", a=A),
        row(np.corrcoef, "np.corrcoef(a)", a=A),
        row(np.corrcoef, "np.corrcoef(a, b, rowvar=False)", a=x((5, 2)), b=x((5,))),
        row(np.select, "np.select([a > 0, a < -1], [a * 2, b], c)", a=A, b=V, c=S),
        row(np.select, "np.select([a > 0], [b])", a=A, b=A),
        # the result's shape comes from a choice without gradient alone
        row(np.select, "np.select([MASK4, ~MASK4], [b, MASK * 2.0])", b=V),
        row(np.select, "np.select([MASK4], [b], c)", b=A, c=S),
        row(np.select, "np.select([MASK4], [b], c)", b=A, c=S, wrt=("c",)),
        # the default broadcasts the result to a larger shape than the choices'
        row(np.select, "np.select([b > 0], [b], c)", b=V, c=A, wrt=("b",)),
        row(np.rollaxis, "np.rollaxis(a, 2)", a=b),
        row(np.rollaxis, "np.rollaxis(a, 0, 3)", a=b),
        row(np.rollaxis, "np.rollaxis(a, -1, 1)", a=b),
        row(np.real_if_close, "np.real_if_close(a)", a=A),
        row(np.where, "a[np.where(a > 0)] ** 2", a=x((5,))),
        row(np.sum, "np.sum(a, where=MASK)", a=A),
        row(np.sum, "np.sum(a, axis=1, keepdims=True, where=MASK4)", a=A),
        row(np.sum, "np.sum(a, axis=0, initial=c)", a=A, c=S),
        row(np.mean, "np.mean(a, axis=1, where=MASK)", a=A),
        row(np.mean, "np.mean(a, where=MASK4)", a=A),
        row(np.prod, "np.prod(a, axis=1, where=MASK)", a=A),
        row(np.prod, "np.prod(a, initial=c, where=MASK4)", a=A, c=S),
        row(np.prod, "np.prod(a, axis=0, initial=c)", a=A, c=S),
        row(np.add.reduce, "np.add.reduce(a)", a=A),
        row(np.add.reduce, "np.add.reduce(a, axis=None, initial=c, where=MASK)", a=A, c=S),
        row(np.add.reduce, "np.add.reduce(a, axis=1, keepdims=True, initial=c)", a=A, c=S),
        row(np.add.reduce, "np.add.reduce(a, axis=1)", a=A),
        row(np.add.reduce, "np.add.reduce(a, axis=1, keepdims=True, initial=c)", a=A, c=S,
            wrt=("c",)),
        row(np.multiply.reduce, "np.multiply.reduce(a, axis=1, keepdims=True)", a=A),
        row(np.maximum.reduce, "np.maximum.reduce(a)", a=A),
        row(np.maximum.reduce, "np.maximum.reduce(a, axis=1, keepdims=True)", a=A),
        row(np.maximum.reduce, "np.maximum.reduce(a, axis=1)", a=A),
        row(np.minimum.reduce, "np.minimum.reduce(a, axis=(0, 1))", a=A),
        row(np.minimum.reduce, "np.minimum.reduce(a, axis=1, keepdims=True)", a=A),
        row(np.add.accumulate, "np.add.accumulate(a, axis=1)", a=A),
        row(np.multiply.accumulate, "np.multiply.accumulate(a)", a=A),
        row(np.maximum.accumulate, "np.maximum.accumulate(a)", a=A),
        row(np.minimum.accumulate, "np.minimum.accumulate(a, axis=-1)", a=b),
        row(np.minimum.accumulate, "np.minimum.accumulate(a)", a=A),
        row(np.tensordot, "np.tensordot(a, b, axes=([1], [0]))", a=A, b=x((4, 2))),
        row(np.tensordot, "np.tensordot(a, b, axes=(1, 0))", a=A, b=x((4, 2))),
        row(np.tensordot, "np.tensordot(a, b, axes=[[0, 1], [1, 0]])", a=A, b=x((4, 3))),
        row(np.tensordot, "np.tensordot(a, b, axes=0)", a=x((2,)), b=x((3,))),
        row(np.einsum, "np.einsum(a, [0, 1], b, [1, 2])", a=A, b=x((4, 2))),
        row(np.einsum, "np.einsum(a, [0, 1], b, [1, 2], [2, 0])", a=A, b=x((4, 2))),
        row(np.einsum, "np.einsum(a, [Ellipsis, 1], b, [1])", a=b, b=V),
        row(np.einsum, "np.einsum('ij,jk,kl->il', a, b, c, optimize=True)", a=A, b=x((4, 2)),
            c=x((2, 3))),
        row(np.einsum, "np.einsum('ij,jk', a, b, optimize='greedy')", a=A, b=x((4, 2))),
        row(np.einsum, "np.einsum('ij,jk->ki', a, b, optimize='optimal')", a=A, b=x((4, 2))),
        row(np.linalg.eigvals, "np.linalg.eigvals(D3 + 0.2 * a)", a=M),  # a real spectrum
        row(np.linalg.eigvals, "np.real(np.linalg.eigvals(a))", a=x((2, 3, 3))),
        row(np.linalg.eigvals, "np.real(np.linalg.eigvals(a) ** 2)", a=M),
        row(np.linalg.cond, "np.linalg.cond(a)", a=M),
        row(np.linalg.cond, "np.linalg.cond(a, -2)", a=x((4, 3))),
        row(np.linalg.cond, "np.linalg.cond(a, 'fro')", a=x((2, 3, 3))),
        row(np.linalg.cond, "np.linalg.cond(a, 'nuc')", a=M),
        row(np.linalg.cond, "np.linalg.cond(a, 1)", a=M),
        row(np.linalg.cond, "np.linalg.cond(a, -np.inf)", a=M),
        # NumPy 2's keywords of var and std: `correction` (ddof), `mean` (given, or a's own)
        row(np.var, "np.var(a, axis=1, correction=1)", a=A),
        row(np.std, "np.std(a, correction=1)", a=A),
        row(np.var, "np.var(a, axis=1, keepdims=True, mean=m)", a=A, m=x((3, 1))),
        row(np.std, "np.std(a, axis=0, ddof=1, mean=m)", a=A, m=x((1, 4))),
        row(np.var, "np.var(a, axis=(0, 2), mean=np.mean(a, axis=(0, 2), keepdims=True))",
            a=b),
        row(np.std, "np.std(a, mean=np.mean(a, keepdims=True), correction=1)", a=A),
        # np.diff's prepend/append: arrays and numbers, with gradient or without
        row(np.diff, "np.diff(a, prepend=p, append=q)", a=A, p=x((3, 1)), q=x((3, 2))),
        row(np.diff, "np.diff(a, 2, axis=0, prepend=c)", a=A, c=S),
        row(np.diff, "np.diff(a, append=c)", a=V, c=S),
        row(np.diff, "np.diff(a, axis=0, prepend=0.5, append=q)", a=A, q=x((1, 4))),
        row(np.diff, "np.diff(a, prepend=p, append=c)", a=A, p=x((3, 1)), c=S, wrt=("a",)),
        row(np.diff, "np.diff(a, prepend=p, append=q)", a=A, p=x((3, 1)), q=x((3, 2)), wrt=("q",)),
        # np.linspace with the samples along another axis
        row(np.linspace, "np.linspace(a, b, 5, axis=1)", a=x((3,)), b=x((2, 1))),
        row(np.linspace, "np.linspace(a, b, 4, endpoint=False, axis=-1)", a=V, b=S),
        # `initial` as one more (constant) element: where it is the extreme, a gets nothing
        row(np.max, "np.max(a, axis=1, initial=1.0)", a=A),
        row(np.amin, "np.amin(a, axis=0, initial=-1.0, keepdims=True)", a=A),
        row(np.nanmax, "np.nanmax(a, initial=0.5)", a=A),
        row(np.cumulative_sum, "np.cumulative_sum(a, axis=1, include_initial=True)", a=A),
        row(np.cumulative_sum, "np.cumulative_sum(a, include_initial=True)", a=V),
        row(np.vander, "np.vander(a)", a=V),
        row(np.vander, "np.vander(a, 3, increasing=True)", a=x((5,))),
        row(np.vander, "np.vander(a, 1)", a=V),
        row(np.ediff1d, "np.ediff1d(a)", a=A),
        row(np.ediff1d, "np.ediff1d(a, to_end=c, to_begin=b)", a=V, b=x((2,)), c=S),
        row(np.ediff1d, "np.ediff1d(a, to_begin=-1.0)", a=A),
        row(np.ediff1d, "np.ediff1d(a, to_begin=b)", a=V, b=x((2,))),  # and no to_end
        row(np.ediff1d, "np.ediff1d(a, to_end=c, to_begin=b)", a=V, b=x((2,)), c=S, wrt=("a",)),
        row(np.modf, "np.modf(a)[0]", a=A),
        row(np.modf, "r = np.modf(a); r[0] * r[1]", a=x((3, 4), (-4.0, 4.0))),
        row(np.modf, "np.modf(a)[1] + a", a=x((3, 4), (-4.0, 4.0))),  # no cotangent of [0]
        row(np.frexp, "np.frexp(a)[0]", a=x((3, 4), (-8.0, 8.0))),
        row(np.frexp, "m, e = np.frexp(a); m * e", a=x((3, 4), (-8.0, 8.0))),
        row(np.nancumsum, "np.nancumsum(a, axis=1)", a=A),
        row(np.nancumsum, "np.nancumsum(a)", a=A),
        row(np.nancumprod, "np.nancumprod(a, axis=0)", a=A),
        row(np.nancumprod, "np.nancumprod(a)", a=V),
        row(np.nanvar, "np.nanvar(a, axis=1, ddof=1)", a=A),
        row(np.nanvar, "np.nanvar(a, keepdims=True)", a=A),
        row(np.nanstd, "np.nanstd(a, axis=0)", a=A),
        row(np.nanstd, "np.nanstd(a, axis=1, ddof=1, keepdims=True)", a=A),
        row(np.multiply.outer, "np.multiply.outer(a, b)", a=A, b=x((2,))),
        row(np.multiply.outer, "np.multiply.outer(a, b)", a=S, b=V),
        row(np.add.outer, "np.add.outer(a, b)", a=x((2,)), b=A),
        row(np.subtract.outer, "np.subtract.outer(a, b)", a=V, b=x((2, 1))),
        row(np.subtract.outer, "np.subtract.outer(a, b)", a=V, b=S),
        row(np.geomspace, "np.geomspace(a, b, 5)", a=x((), POS), b=x((), POS)),
        row(np.geomspace, "np.geomspace(a, b, 4, endpoint=False, axis=1)", a=x((3,), POS),
            b=x((2, 1), POS)),
        row(np.geomspace, "np.geomspace(-a, -b, 5)", a=x((3,), POS), b=x((3,), POS)),  # < 0
        row(np.logspace, "np.logspace(a, b, 5)", a=S, b=S),
        row(np.logspace, "np.logspace(a, b, 5, base=c)", a=S, b=S, c=x((), POS)),  # y 1-D
        row(np.logspace, "np.logspace(a, b, 4, base=c, axis=1)", a=x((3,)), b=x((2, 1)),
            c=x((), (1.5, 3.0))),
        row(np.logspace, "np.logspace(a, b, 3, endpoint=False, base=c, axis=-1)", a=S, b=x((2,)),
            c=x((3, 1), (1.5, 3.0))),
        row(np.logspace, "np.logspace(a, b, 3, base=c, axis=1)", a=x((2,)), b=x((3, 1)),
            c=x((2,), (1.5, 3.0))),  # y 3-D, the samples' axis inside: base's axes placed right
    ]


_CONSTANTS = {
    "XS": XS, "XS4": XS4, "XP": XP, "MASK": MASK, "MASK4": MASK4, "AW": AW, "FW": FW, "D3": D3,
}
NUMERIC_ROWS = numeric_rows()
for _r in NUMERIC_ROWS:  # the constants a row's call names are globals of its function
    _r.inputs.update({k: v for k, v in _CONSTANTS.items() if k in _r.call})

# Calls whose result carries no gradient: `x` is added to make the function depend on it.
NONDIFF = {
    np.shape: "np.shape(a)", np.size: "np.size(a)", np.ndim: "np.ndim(a)",
    np.signbit: "np.signbit(a)", np.heaviside: "np.heaviside(a, 0.5)",
    np.floor: "np.floor(a)", np.ceil: "np.ceil(a)", np.round: "np.round(a, 1)",
    np.around: "np.around(a)", np.rint: "np.rint(a)", np.trunc: "np.trunc(a)",
    np.fix: "np.fix(a)", np.spacing: "np.spacing(a)", np.floor_divide: "np.floor_divide(a, 0.3)",
    np.argmax: "np.argmax(a)",
    np.argmin: "np.argmin(a, axis=0)", np.nanargmax: "np.nanargmax(a)",
    np.nanargmin: "np.nanargmin(a)", np.argsort: "np.argsort(a)",
    np.argpartition: "np.argpartition(a, 1)", np.lexsort: "np.lexsort(a)",
    np.searchsorted: "np.searchsorted(EDGES, a)",
    np.digitize: "np.digitize(a, EDGES)", np.nonzero: "np.nonzero(a > 0)[0]",
    np.flatnonzero: "np.flatnonzero(a > 0)", np.argwhere: "np.argwhere(a > 0)",
    np.count_nonzero: "np.count_nonzero(a > 0)", np.isnan: "np.isnan(a)",
    np.isfinite: "np.isfinite(a)", np.isinf: "np.isinf(a)", np.isposinf: "np.isposinf(a)",
    np.isneginf: "np.isneginf(a)", np.isreal: "np.isreal(a)", np.iscomplex: "np.iscomplex(a)",
    np.isrealobj: "np.isrealobj(a)", np.iscomplexobj: "np.iscomplexobj(a)",
    np.isclose: "np.isclose(a, 0.5)", np.allclose: "np.allclose(a, 0.5)",
    np.array_equal: "np.array_equal(a, a)", np.array_equiv: "np.array_equiv(a, a)",
    np.isin: "np.isin(a, a)", np.all: "np.all(a > 0)", np.any: "np.any(a > 0)",
    np.zeros: "np.zeros(np.shape(a))", np.ones: "np.ones(np.shape(a))",
    np.empty: "0 * np.empty(3)", np.zeros_like: "np.zeros_like(a)",
    np.ones_like: "np.ones_like(a)", np.empty_like: "0 * np.empty_like(a)",
    np.arange: "np.arange(np.size(a))", np.eye: "np.eye(np.size(a))",
    np.identity: "np.identity(2)", np.tri: "np.tri(3)", np.indices: "np.indices((2, 2))",
    np.tril_indices: "np.tril_indices(3)[0]", np.triu_indices: "np.triu_indices(3)[1]",
    np.diag_indices: "np.diag_indices(3)[0]", np.unravel_index: "np.unravel_index(5, (3, 4))[0]",
    np.ravel_multi_index: "np.ravel_multi_index((1, 2), (3, 4))",
    np.result_type: "np.ones(2, np.result_type(a))", np.greater: "np.greater(a, 0)",
    np.greater_equal: "np.greater_equal(a, 0)", np.less: "np.less(a, 0)",
    np.less_equal: "np.less_equal(a, 0)", np.equal: "np.equal(a, 0)",
    np.not_equal: "np.not_equal(a, 0)", np.logical_and: "np.logical_and(a > 0, a < 1)",
    np.logical_or: "np.logical_or(a > 0, a < 1)", np.logical_not: "np.logical_not(a > 0)",
    np.logical_xor: "np.logical_xor(a > 0, a < 1)",
    np.bitwise_and: "np.bitwise_and(np.argsort(a), 1)",
    np.bitwise_or: "np.bitwise_or(np.argsort(a), 1)",
    np.bitwise_xor: "np.bitwise_xor(np.argsort(a), 1)", np.invert: "np.invert(a > 0)",
    np.left_shift: "np.left_shift(np.argsort(a), 1)",
    np.right_shift: "np.right_shift(np.argsort(a), 1)", np.gcd: "np.gcd(np.argsort(a), 2)",
    np.lcm: "np.lcm(np.argsort(a), 2)", np.linalg.matrix_rank: "np.linalg.matrix_rank(a)",
}


# --- defining the test functions ------------------------------------------------------------


def define(params, body, namespace):
    """A function with real source (registered with linecache, so srcgrad can read it)."""
    n = next(_counter)
    filename = f"<rule-spec-{n}>"
    # A distinct name per function: equal code objects would share srcgrad's cache entry.
    lines = [f"def f{n}({', '.join(params)}):"]
    lines += [f"    {stmt.strip()}" for stmt in body]
    text = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    scope = {"np": np, **namespace}
    exec(compile(text, filename, "exec"), scope)
    return scope[f"f{n}"]


def materialize(spec, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name, value in spec.items():
        if isinstance(value, np.ndarray):
            continue  # a constant: a global of the function
        shape, (lo, hi, *kind) = value
        sample = rng.uniform(lo, hi, size=shape)
        if kind:
            sample = sample + 1j * rng.uniform(lo, hi, size=shape)
            out[name] = complex(sample) if shape == () else sample
            continue
        out[name] = float(sample) if shape == () else sample
    return out


def build(r, seed):
    """The user function of a row, its arguments, and the weights W."""
    f, args, _, _ = build_parts(r, seed)
    return f, args


def build_parts(r, seed):
    """``build``, and also the row's call itself (the primal, unweighted) and the weights."""
    args = materialize(r.inputs, seed)
    consts = {k: v for k, v in r.inputs.items() if isinstance(v, np.ndarray)}
    *stmts, result = r.call.split(";")
    primal = define(list(args), stmts + [f"return {result}"], consts)
    out = primal(*args.values())
    rng = np.random.default_rng(seed + 1)
    weights = rng.normal(size=np.shape(out))
    body = stmts + [f"return np.sum(({result}) * W)"]
    if np.iscomplexobj(out):
        # a complex result: the real part of its weighted sum tests both of its parts, and its
        # gradient is the vjp of the call seeded with conj(W) (srcgrad's convention)
        weights = weights + 1j * rng.normal(size=np.shape(out))
        body = stmts + [f"return np.real(np.sum(({result}) * W))"]
    f = define(list(args), body, {"W": weights, **consts})
    return f, args, primal, weights


def check_tangent(r, grads=None, seed=7):
    """``jvp`` of the row's call against its gradient: the tangent has the call's shape (a
    tangent that only broadcasts to it, as a dropped ``keepdims`` gives, is wrong), and weighted
    by W it is the directional derivative that the gradient of the weighted sum gives."""
    f, args, primal, weights = build_parts(r, seed)
    wrt = tuple(r.wrt) or tuple(args)
    values = list(args.values())
    if grads is None:
        grads = srcgrad.grad(f, wrt=wrt)(*values)
    rng = np.random.default_rng(3)
    tangents = tuple(_tangent_like(args[w], rng) for w in wrt)
    seed = tangents if len(wrt) > 1 else tangents[0]
    y, out = srcgrad.jvp(primal, wrt=wrt if len(wrt) > 1 else wrt[0])(*values, seed)
    assert np.shape(out) == np.shape(y), f"tangent of shape {np.shape(out)} for {np.shape(y)}"
    # the directional derivative along t is Re(sum(conj(g) * t)) (g real for a real input)
    expected = sum(np.real(np.sum(np.conj(g) * t)) for g, t in zip(grads, tangents))
    np.testing.assert_allclose(np.real(np.sum(out * weights)), expected, rtol=1e-6, atol=1e-8)
    return grads


def _tangent_like(value, rng):
    """A random tangent for ``value``: complex for a complex value."""
    t = rng.normal(size=np.shape(value))
    if np.iscomplexobj(value):
        t = t + 1j * rng.normal(size=np.shape(value))
        return t if np.ndim(value) else complex(t)
    return t if np.ndim(value) else float(t)


def _id(r):
    return r.call.split(";")[-1].strip()[:60] + "-" + "-".join(
        f"{k}{v[0] if isinstance(v, tuple) else 'fixed'}" for k, v in r.inputs.items()
    )


PARAMS = [pytest.param(r, id=f"{i}-{_id(r)}", marks=r.marks) for i, r in enumerate(ROWS)]


@pytest.mark.parametrize("r", PARAMS)
def test_rule_gradient_and_tangent(r):
    """The gradient against central differences, then (a row without marks) ``jvp`` against
    that gradient (``check_tangent``), which is ``grad``'s of the same function and arguments
    (``build(r, 7)``): one transform of ``grad`` serves both checks."""
    f, args = build(r, 7)
    wrt = tuple(r.wrt) or tuple(args)
    grads = check_grad(f, list(args.values()), wrt=wrt, rtol=r.rtol, atol=1e-6)
    if not r.marks:
        check_tangent(r, grads)


@pytest.mark.parametrize("fn", list(NONDIFF), ids=lambda fn: NONDIFF[fn][:40])
def test_nondiff_output_carries_no_gradient(fn):
    a = np.random.default_rng(5).uniform(0.1, 2.0, size=(3, 3))
    body = [f"return np.sum(a) + np.sum({NONDIFF[fn]})"]
    f = define(["a"], body, {"EDGES": np.array([0.0, 1.0])})
    np.testing.assert_array_equal(srcgrad.grad(f)(a), np.ones((3, 3)))


def _numpy_functions():
    named = {}
    for module in (np, np.linalg, np.fft):
        for name in dir(module):
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, type):
                named.setdefault(id(obj), obj)
    return named


NUMERIC_PARAMS = [pytest.param(r, id=f"{i}-{_id(r)}") for i, r in enumerate(NUMERIC_ROWS)]


@pytest.mark.parametrize("r", NUMERIC_PARAMS)
def test_numeric_rule(r):
    f, args = build(r, 7)
    wrt = tuple(r.wrt) or tuple(args)
    grads = check_grad(f, list(args.values()), wrt=wrt, rtol=r.rtol, atol=1e-6)
    check_tangent(r, grads if isinstance(grads, tuple) else (grads,))


def test_every_numpy_rule_has_a_row():
    numpy_fns = _numpy_functions()
    covered = {id(r.fn) for r in ROWS + NUMERIC_ROWS} | {id(fn) for fn in NONDIFF}
    registered = [rule for rule in RULES.values() if id(rule.fn) in numpy_fns]
    missing = sorted(rule.name for rule in registered if id(rule.fn) not in covered)
    assert not missing, f"rules without a row in tests/test_rules.py: {missing}"
    listed_nondiff = {id(fn) for fn in NONDIFF}
    for rule in registered:
        assert rule.nondiff == (id(rule.fn) in listed_nondiff), rule.name


def test_coverage_exceeds_the_peers():
    numpy_fns = _numpy_functions()
    registered = [rule for rule in RULES.values() if id(rule.fn) in numpy_fns]
    assert len(registered) > 175


# --- adjoints of functions of or into sequences, checked without the transform -----------------
# Until the transform consumes tuples (the containers issue), the helpers behind the rules of
# eigh, svd, qr, lstsq, concatenate, ... are checked here directly: ``adjoint(dys)`` must be the
# gradient of ``sum(dy * out)`` over the outputs.

from gradcheck import numeric_grad  # noqa: E402

from srcgrad import runtime  # noqa: E402

_rng = np.random.default_rng(11)


def _sym(a):
    return a + a.T


def _check(loss, adjoint, a):
    np.testing.assert_allclose(adjoint(a), numeric_grad(loss, (a,), 0), rtol=1e-5, atol=1e-7)


def test_eigh_adjoint():
    c, w = _rng.normal(size=(3, 3)), _rng.normal(size=3)
    a = _rng.normal(size=(3, 3))

    def loss(a):
        e, v = np.linalg.eigh(_sym(a))
        return np.sum(w * e) + np.sum(c * v**2)

    def adjoint(a):
        out = np.linalg.eigh(_sym(a))
        g = runtime.eigh_vjp((w, 2 * c * out[1]), out)
        return g + g.T

    _check(loss, adjoint, a)
    only_values = runtime.eigh_vjp((w, None), np.linalg.eigh(_sym(a)))
    np.testing.assert_allclose(only_values, runtime.eigvalsh_vjp(w, _sym(a)))


_SPD_W = _rng.normal(size=(3, 3))


def _cholesky_weighted(a):
    return np.sum(np.linalg.cholesky(a) * _SPD_W)


def _eigh_weighted(a):
    e, v = np.linalg.eigh(a)
    return np.sum(e * _SPD_W[0]) + np.sum(v**2 * _SPD_W)


@pytest.mark.parametrize("f", [_cholesky_weighted, _eigh_weighted], ids=lambda f: f.__name__)
def test_symmetric_factorizations_follow_the_symmetric_convention(f):
    """Of a symmetric argument, cholesky's and eigh's gradients are symmetric matrices, and
    their tangent along any direction (symmetric or not) is the gradient's inner product with
    it: the direction's symmetric part is what moves the factors."""
    b = _rng.normal(size=(3, 3))
    a = b @ b.T + 3 * np.eye(3)
    g = grad(f)(a)
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)
    v = _rng.normal(size=(3, 3))  # not symmetric
    tangent = srcgrad.jvp(f)(a, v)[1]
    assert tangent == pytest.approx(np.sum(g * v), rel=1e-9)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigvalsh_reads_the_triangle_it_is_told(uplo):
    """Of a matrix that is not symmetric, eigvalsh reads one triangle: the gradient of
    sum(w * W) is the symmetric V diag(W) V^T of that triangle's eigenvectors, exactly, and
    the tangent along da is diag(V^T da V)."""
    rng = np.random.default_rng(5)
    a, weights, da = rng.normal(size=(3, 4, 4)), rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
    w, v = np.linalg.eigh(a, UPLO=uplo)
    f = define(["a"], [f"return np.sum(np.linalg.eigvalsh(a, UPLO={uplo!r}) * W)"], {"W": weights})
    expected = v @ (weights[..., None] * np.swapaxes(v, -1, -2))
    np.testing.assert_allclose(grad(f)(a), expected, rtol=1e-10, atol=1e-12)
    tangent = srcgrad.jvp(f)(a, np.broadcast_to(da, a.shape).copy())[1]
    want = np.sum(weights * np.diagonal(np.swapaxes(v, -1, -2) @ da @ v, axis1=-2, axis2=-1))
    np.testing.assert_allclose(tangent, want, rtol=1e-10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_svd_adjoint(shape):
    a = _rng.normal(size=shape)
    k = min(shape)
    cu, cs = _rng.normal(size=(shape[0], k)), _rng.normal(size=k)
    cv = _rng.normal(size=(k, shape[1]))

    def loss(a):
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        return np.sum(cu * u**2) + np.sum(cs * s) + np.sum(cv * vt**2)

    def adjoint(a):
        u, s, vt = out = np.linalg.svd(a, full_matrices=False)
        return runtime.svd_vjp((2 * cu * u, cs, 2 * cv * vt), out, a, full_matrices=False)

    _check(loss, adjoint, a)


def test_qr_adjoint():
    a = _rng.normal(size=(5, 3))
    cq, cr = _rng.normal(size=(5, 3)), _rng.normal(size=(3, 3))

    def loss(a):
        q, r = np.linalg.qr(a)
        return np.sum(cq * q) + np.sum(cr * r)

    def adjoint(a):
        return runtime.qr_vjp((cq, cr), np.linalg.qr(a), a)

    _check(loss, adjoint, a)
    with pytest.raises(UnsupportedCaseError, match="m >= n") as info:
        runtime.qr_vjp((cq, None), None, np.ones((2, 3)))
    assert isinstance(info.value, NotImplementedError)  # what it is, for callers who catch that


@pytest.mark.parametrize("b_shape", [(6,), (6, 2)])
def test_lstsq_adjoint(b_shape):
    a, b = _rng.normal(size=(6, 3)), _rng.normal(size=b_shape)
    cx = _rng.normal(size=(3,) + b_shape[1:])
    cres = _rng.normal(size=b_shape[1:] or (1,))
    cs = _rng.normal(size=3)

    def loss(a, b):
        x, res, _, s = np.linalg.lstsq(a, b)
        return np.sum(cx * x) + np.sum(cres * res) + np.sum(cs * s)

    out = np.linalg.lstsq(a, b)
    dy = (cx, cres, None, cs)
    np.testing.assert_allclose(
        runtime.lstsq_vjp(dy, a, b, out), numeric_grad(loss, (a, b), 0), rtol=1e-5, atol=1e-7
    )
    np.testing.assert_allclose(
        runtime.lstsq_vjp(dy, a, b, out, wrt=1), numeric_grad(loss, (a, b), 1), rtol=1e-5,
        atol=1e-7,
    )


def test_sequence_adjoints():
    a, b = _rng.normal(size=(3, 4)), _rng.normal(size=(3, 2))
    g = _rng.normal(size=(3, 6))
    ga, gb = runtime.concatenate_grad(g, (a, b), axis=1)
    np.testing.assert_array_equal(np.concatenate((ga, gb), axis=1), g)
    v, w = _rng.normal(size=4), _rng.normal(size=2)
    gv, gw = runtime.hstack_grad(np.arange(6.0), (v, w))
    np.testing.assert_array_equal(gv, np.arange(4.0))
    gs = runtime.stack_grad(np.arange(8.0).reshape(4, 2), (v, v), axis=1)
    np.testing.assert_array_equal(gs[1], [1.0, 3.0, 5.0, 7.0])
    gv, ga = runtime.vstack_grad(np.ones((4, 4)), (v, a))
    assert gv.shape == (4,) and ga.shape == (3, 4)
    ga, gb = runtime.dstack_grad(np.ones((3, 4, 2)), (a, a))
    assert ga.shape == (3, 4)
    gv, ga = runtime.column_stack_grad(np.arange(15.0).reshape(3, 5), (np.ones(3), a))
    np.testing.assert_array_equal(gv, [0.0, 5.0, 10.0])
    pieces = (None, np.ones(1), 2 * np.ones(1))
    np.testing.assert_array_equal(runtime.split_grad(pieces, v, 3), [0.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(
        runtime.stack_cotangents((None, np.ones(4), None), a, axis=0)[1], np.ones(4)
    )


# --- conventions at kinks, ties and guarded branches ----------------------------------------------


def abs_sum(x):
    return np.sum(np.abs(x))


def fabs_sum(x):
    return np.sum(np.fabs(x))


def clip_bounds_sum(a, lo, hi):
    return np.sum(np.clip(a, lo, hi))


def copysign_sum(a, b):
    return np.sum(np.copysign(a, b))


def maximum_sum(a, b):
    return np.sum(np.maximum(a, b))


def max_all(a):
    return np.max(a)


def clip_sum(a):
    return np.sum(np.clip(a, 0.0, 1.0))


def guarded_log(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.log(safe), x))


def unguarded_log(x):
    return np.sum(np.where(x > 0, np.log(x), x))


def test_kinks_follow_the_documented_convention():
    np.testing.assert_array_equal(grad(abs_sum)(np.array([0.0, -2.0, 3.0])), [0.0, -1.0, 1.0])
    np.testing.assert_array_equal(grad(fabs_sum)(np.array([0.0, -2.0, 3.0])), [0.0, -1.0, 1.0])
    for f in (abs_sum, fabs_sum):  # forward mode too: dx * sign(x), 0 at 0 (not dx / sign(x))
        assert srcgrad.jvp(f)(np.array([0.0, -2.0, 3.0]), np.array([1.0, 2.0, 5.0]))[1] == 3.0
    g = grad(copysign_sum)(np.array([0.0, -2.0, 3.0]), np.array([1.0, 1.0, -1.0]))
    np.testing.assert_array_equal(g, [0.0, -1.0, -1.0])  # |a| sign(b), and np.sign(0) is 0
    ga, gb = grad(maximum_sum, wrt=(0, 1))(np.array([1.0, 2.0]), np.array([1.0, 3.0]))
    np.testing.assert_array_equal(ga, [1.0, 0.0])  # the tie goes to the first operand
    np.testing.assert_array_equal(gb, [0.0, 1.0])
    np.testing.assert_array_equal(grad(max_all)(np.array([1.0, 3.0, 3.0])), [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(grad(clip_sum)(np.array([0.0, 0.5, 1.0, 2.0])), [1, 1, 1, 0])
    # at a bound, the value is a's (clip's bounds are inclusive), and the bound gets nothing
    ga, glo, ghi = grad(clip_bounds_sum, wrt=(0, 1, 2))(np.array([0.0, 0.5, 1.0, 2.0, -1.0]),
                                                          0.0, 1.0)
    np.testing.assert_array_equal(ga, [1, 1, 1, 0, 0])
    assert (glo, ghi) == (1.0, 1.0)
    # a lower bound above the upper: the value is the upper bound, constant in a even where a
    # equals it
    ga = grad(clip_bounds_sum)(np.array([0.5, 2.0, 0.0, 1.0]), 1.0, 0.5)
    np.testing.assert_array_equal(ga, [0, 0, 0, 0])


def std_of_rows(a):
    return np.sum(np.std(a, axis=1) * np.array([1.0, 2.0]))


def std_of_rows_about(a, m):
    return np.sum(np.std(a, axis=1, keepdims=True, mean=m) * np.array([[1.0], [2.0]]))


def test_a_zero_std_has_gradient_and_tangent_zero():
    """A row of equal values has std 0, where the std is not differentiable: its gradient and
    tangent are 0 (as a norm's at zero), the other row's the usual (a - mean) / (n std)."""
    a = np.array([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]])
    g = grad(std_of_rows)(a)
    np.testing.assert_array_equal(g[0], 0.0)
    spread = a[1] - np.mean(a[1])
    np.testing.assert_allclose(g[1], 2.0 * spread / (3 * np.std(a[1])), rtol=1e-12)
    t = np.array([[1.0, -2.0, 0.5], [0.3, 0.1, -0.4]])
    assert srcgrad.jvp(std_of_rows)(a, t)[1] == pytest.approx(np.sum(g[1] * t[1]), rel=1e-12)
    # with the mean given (NumPy's mean=): the zero row's gradient in the mean is 0 too
    m = np.array([[1.5], [2.0]])
    gm = grad(std_of_rows_about, wrt=1)(a, m)
    assert gm[0, 0] == 0.0
    gap = a[1] - m[1, 0]
    assert gm[1, 0] == pytest.approx(-2.0 * np.sum(gap) / (3 * np.sqrt(np.mean(gap**2))))


def nan_to_num_sum(x):
    return np.sum(np.nan_to_num(x) * np.arange(1.0, 5.0))


def test_nan_to_num_passes_no_gradient_through_what_it_replaces():
    """NaN and the infinities become constants: their gradient is 0, the others' is dy."""
    g = grad(nan_to_num_sum)(np.array([0.5, np.inf, np.nan, -np.inf]))
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0])


def minimum_sum(a, b):
    return np.sum(np.minimum(a, b))


def fmax_sum(a, b):
    return np.sum(np.fmax(a, b) * np.arange(1.0, 5.0))


def fmin_sum(a, b):
    return np.sum(np.fmin(a, b) * np.arange(1.0, 5.0))


@pytest.mark.parametrize("f", [minimum_sum, fmax_sum, fmin_sum], ids=lambda f: f.__name__)
def test_extrema_ties_and_nans_follow_the_documented_convention(f):
    """A tie goes to the first operand; fmax/fmin return the operand that is not NaN, and the
    gradient goes where the value came from, in both modes."""
    a, b = np.array([1.0, 2.0, np.nan, 3.0]), np.array([1.0, 3.0, 4.0, np.nan])
    if f is minimum_sum:
        a, b = a[:2], b[:2]
    weights = np.ones(2) if f is minimum_sum else np.arange(1.0, 5.0)
    first = {minimum_sum: [1.0, 1.0], fmax_sum: [1.0, 0.0, 0.0, 1.0],
             fmin_sum: [1.0, 1.0, 0.0, 1.0]}[f]
    ga, gb = grad(f, wrt=(0, 1))(a, b)
    np.testing.assert_array_equal(ga, weights * first)
    np.testing.assert_array_equal(gb, weights * (1.0 - np.array(first)))
    for wrt, g in ((0, ga), (1, gb)):
        assert srcgrad.jvp(f, wrt=wrt)(a, b, np.ones_like(a))[1] == np.sum(g)


NAN_INPUT = np.array([[1.0, np.nan, 2.0, 0.5], [np.nan, 3.0, -4.0, np.nan]])


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod", "nanvar", "nanstd"])
def test_nan_functions_give_nans_no_gradient(name):
    """On an input with NaNs: the NaNs get no gradient and their tangent is ignored, exactly; the
    numbers get central differences' gradient, and the tangent agrees with the gradient."""
    weights = np.cos(np.arange(8.0)).reshape(2, 4)
    if name in ("nanvar", "nanstd"):
        weights = weights[:, 0]
    f = define(["a"], [f"return np.sum(np.{name}(a, axis=1) * W)"], {"W": weights})
    finite = ~np.isnan(NAN_INPUT)
    g = grad(f)(NAN_INPUT)
    np.testing.assert_array_equal(g[~finite], 0.0)
    for i in zip(*np.nonzero(finite)):
        e = np.zeros_like(NAN_INPUT)
        e[i] = 1e-6
        numeric = (f(NAN_INPUT + e) - f(NAN_INPUT - e)) / 2e-6
        np.testing.assert_allclose(g[i], numeric, rtol=1e-6, atol=1e-8)
    da = np.arange(1.0, 9.0).reshape(2, 4)
    np.testing.assert_allclose(srcgrad.jvp(f)(NAN_INPUT, da)[1], np.sum(g * da))


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanmin"])
def test_nan_reductions_skip_the_nans(name):
    """The NaN-ignoring reductions on an input with NaNs (the rows have none): the NaNs get no
    gradient and no tangent, exactly; the rest as in the reduction of the numbers alone."""
    reduce = getattr(np, name)
    weights = np.array([0.5, -2.0])
    f = define(["a"], [f"return np.sum(np.{name}(a, axis=1) * W)"], {"W": weights})
    finite = ~np.isnan(NAN_INPUT)
    if name == "nansum":
        partial = finite * 1.0
    elif name == "nanmean":
        partial = finite / finite.sum(axis=1, keepdims=True)
    else:
        partial = NAN_INPUT == reduce(NAN_INPUT, axis=1, keepdims=True)
    expected = weights[:, None] * partial
    np.testing.assert_array_equal(grad(f)(NAN_INPUT), expected)
    da = np.arange(1.0, 9.0).reshape(2, 4)
    np.testing.assert_allclose(srcgrad.jvp(f)(NAN_INPUT, da)[1], np.sum(expected * da))


def slogdet_sign(a):
    return np.linalg.slogdet(a)[0]


def test_slogdet_sign_alone_has_a_zero_gradient_of_the_matrix_shape():
    g = grad(slogdet_sign)(np.eye(3) * 2.0)
    assert isinstance(g, np.ndarray) and g.shape == (3, 3) and not g.any()


def slogdet_logdet(a):
    return np.linalg.slogdet(a)[1]


def test_slogdet_logdet_returned_alone():
    # its cotangent is the Python float seed, not an array
    a = np.array([[2.0, 0.3], [0.1, 1.5]])
    np.testing.assert_allclose(grad(slogdet_logdet)(a), np.linalg.inv(a).T, rtol=1e-12)


# Rows kept out of ROWS because Dask arrays cannot run them lazily (tests/test_dask.py runs ROWS):
# one operand active where the other's tangent is None (np.pad's constant_values alone: its zeros
# come from the array's value; np.linspace's number bound against an array bound: the tangent has
# the broadcast shape of both), and np.ravel in Fortran order.
ONE_ACTIVE = [
    row(np.ravel, "np.ravel(a, order='F')", a=x((2, 3, 4))),
    row(np.pad, "np.pad(a, 1, 'constant', constant_values=c)", a=A, c=S, wrt=("c",)),
    row(np.linspace, "np.linspace(a, b, 5)", a=S, b=x((3,)), wrt=("a",)),
    row(np.linspace, "np.linspace(a, b, 5)", a=x((3,)), b=S, wrt=("b",)),
    # one bound active, the other (inactive) of a larger shape: the tangent has the broadcast shape
    row(np.logspace, "np.logspace(a, b, 4)", a=S, b=x((3,)), wrt=("a",)),
    row(np.geomspace, "np.geomspace(a, b, 4)", a=x((3,), POS), b=x((), POS), wrt=("b",)),
    # the mean given but inactive: the tangent is about that mean, not a's own
    row(np.std, "np.std(a, axis=0, ddof=1, mean=m)", a=A, m=x((1, 4)), wrt=("a",)),
]


@pytest.mark.parametrize("r", ONE_ACTIVE, ids=lambda r: f"{r.call}-{r.wrt}")
def test_rule_rows_not_run_on_dask(r):
    test_rule_gradient_and_tangent(r)


def test_guarded_where_gives_no_nan():
    x = np.array([-1.0, 0.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(grad(guarded_log)(x), [1.0, 1.0, 0.5])
        assert np.isnan(grad(unguarded_log)(x)[1])  # 0 * (1 / 0): why the guard is needed


IDX = np.array([1, 2])


def methods(x):
    return (
        x.reshape((6,)).max() + x.clip(0.1, 0.5).sum() + x.flatten().prod() + x.var(axis=0).sum()
        + x.std(ddof=1) + x.cumsum(1).sum() + x.ravel().min() + x.squeeze().trace()
        + x.swapaxes(0, 1).take(IDX).sum() + x.repeat(2).copy().mean()
        + x.T.diagonal().sum() + x.cumprod(0).sum() + x.argmax()
    )


def test_array_methods():
    check_grad(methods, (np.arange(1.0, 7.0).reshape(2, 3) / 7,))


def reshape_spread(x):
    return np.sum(x.reshape(3, 2))


def add_out(a, b):
    return np.sum(np.add(a, b, out=a))


def add_out_positional(a, b):
    return np.sum(np.multiply(a, b, a))


def test_out_arguments_write_into_a_copy_of_the_argument():
    # more in-place forms in test_inplace_numpy.py (f itself writes into `a`, so no differences)
    a, b = np.array([0.5, -2.0]), np.array([1.5, 0.25])
    da, db = grad(add_out, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(da, [1.0, 1.0])
    np.testing.assert_allclose(db, [1.0, 1.0])
    da, db = grad(add_out_positional, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(da, b)
    np.testing.assert_allclose(db, a)
    np.testing.assert_array_equal(a, [0.5, -2.0])


def test_reshape_method_with_spread_shape():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(grad(reshape_spread)(x), np.ones((2, 3)))


def test_every_ufunc_rule_declares_out():
    for rule in RULES.values():
        if isinstance(rule.fn, np.ufunc) and not rule.nondiff:
            assert "out" in rule.signature.parameters, rule.name


def test_transform_of_a_numpy_function():
    assert np.isclose(grad(np.sin)(0.3), np.cos(0.3))
    assert np.isclose(grad(np.tanh)(0.3), 1 - np.tanh(0.3) ** 2)


def max_with_initial(a):
    return np.sum(np.max(a, axis=1, initial=1.0) * np.array([1.0, 2.0, 3.0]))


def max_of_initial_with_gradient(a):
    return np.max(a, initial=a[0] * 2.0)


def test_initial_takes_part_as_a_constant_element():
    """Where `initial` is the extreme no element gets gradient; at a tie with it the tied
    elements get it all (both modes); an `initial` carrying gradient is refused."""
    a = np.array([[0.2, 0.5], [2.0, -1.0], [1.0, 0.3]])
    expected = [[0.0, 0.0], [2.0, 0.0], [3.0, 0.0]]
    np.testing.assert_array_equal(grad(max_with_initial)(a), expected)
    assert srcgrad.jvp(max_with_initial)(a, np.ones_like(a))[1] == 5.0
    with pytest.raises(srcgrad.SrcgradError, match="initial"):
        grad(max_of_initial_with_gradient)(np.array([0.5, -1.0]))


def linspace_with_retstep(a, b):
    return np.sum(np.linspace(a, b, 3, retstep=True)[0])


def test_keyword_combinations_without_a_rule_are_refused_where_they_are_written():
    with pytest.raises(srcgrad.SrcgradError, match="retstep") as info:
        grad(linspace_with_retstep)(0.5, 1.5)
    assert "test_rules.py" in str(info.value)
