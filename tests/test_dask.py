"""Derivatives of functions of Dask arrays: lazy graphs in, lazy graphs out, equal to NumPy.

The generated code is NumPy calls, and NumPy hands a call on a Dask array to Dask (NEP-18's
``__array_function__``, NEP-13's ``__array_ufunc__``); srcgrad's runtime helpers must do the
same and never convert a Dask array to NumPy (which would compute the whole graph in one
process). Every row of the NumPy rule table runs here on arrays split into several chunks per
axis, under a scheduler that fails if anything is computed; the gradient is then computed and
compared with the gradient of the same function on NumPy arrays.

``DASK_EAGER`` lists the rows whose *primal* computes its input: NumPy functions Dask does not
implement (Dask then computes the array and warns), or implements with another signature. The
gradient cannot be lazier than the function. ``MATERIALIZING`` lists the rules whose gradient
computes its input although the primal is lazy; the documentation repeats both lists.

The second half runs on a ``LocalCluster`` of two worker processes: a logistic-regression
gradient over a data set in many chunks, and a sweep of ``client.map`` over parameter sets.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from test_rules import PARAMS, build  # noqa: E402

import srcgrad  # noqa: E402
from srcgrad.errors import UnsupportedCaseError  # noqa: E402


class Computed(Exception):
    """Raised by the scheduler installed while a derivative is built: nothing may be computed."""


def _refuse(*args, **kwargs):
    raise Computed


def lazy(value):
    """``value`` as a Dask array in about two chunks per axis (numbers stay numbers)."""
    if isinstance(value, np.ndarray) and value.ndim:
        return da.from_array(value, chunks=tuple(max(1, n // 2) for n in value.shape))
    return value


def key(r):
    """A row of tests/test_rules.py as text: its call and the shapes of its inputs."""
    shapes = (f"{k}{v[0]}" for k, v in r.inputs.items() if isinstance(v, tuple))
    return " ".join([r.call, *shapes])


# Rows whose primal is not lazy in Dask: Dask does not implement the NumPy function and computes
# the array (with a warning), or implements it with a narrower signature and raises.
DASK_EAGER = {
    # not implemented by Dask: NumPy computes the Dask array first
    "np.cumulative_sum(a, axis=0) a(3, 4)",
    "np.cumulative_prod(a, axis=1) a(3, 4)",
    "np.matrix_transpose(a) a(2, 3, 4)",
    "np.asarray(a) a(3, 4)",
    "np.array(a) a(3, 4)",
    "np.array((a, b)) a(4,) b(4,)",
    "np.copy(a) a(3, 4)",
    "np.ascontiguousarray(a) a(3, 4)",
    "np.diagflat(a, 1) a(2, 2)",
    "np.take_along_axis(a, K, 1) a(3, 4)",
    "np.resize(a, (5, 3)) a(2, 3)",
    "np.full((2, 3), c) c(3,)",
    "np.column_stack((a, b)) a(3,) b(3, 4)",
    "np.split(a, 2, axis=1)[1] a(3, 4)",
    "np.array_split(a, 3)[0] a(4,)",
    "np.hsplit(a, 2)[0] a(3, 4)",
    "np.vsplit(a, 3)[2] a(3, 4)",
    "np.dsplit(a, 2)[1] a(2, 3, 4)",
    "np.unstack(a)[1] a(3, 4)",
    "np.linalg.matmul(a, b) a(2, 3) b(3, 4)",
    "np.inner(a, b) a(3, 4) b(2, 4)",
    "np.inner(a, b) a(4,) b(4,)",
    "np.linalg.outer(a, b) a(4,) b(3,)",
    "np.linalg.tensordot(a, b, axes=1) a(3, 4) b(4, 2)",
    "np.linalg.vecdot(a, b, axis=0) a(3, 4) b(3, 4)",
    "np.kron(a, b) a(2, 3) b(2, 2)",
    "np.kron(a, b) a(3,) b(2, 2)",
    "np.cross(a, b) a(4, 3) b(3,)",
    "np.cross(a, b, axis=0) a(3, 4) b(3, 4)",
    "np.linalg.cross(a, b) a(3,) b(3,)",
    "np.convolve(a, b) a(5,) b(3,)",
    "np.convolve(a, b, 'same') a(4,) b(6,)",
    "np.convolve(a, b, 'valid') a(6,) b(4,)",
    "np.correlate(a, b) a(6,) b(3,)",
    "np.correlate(a, b, 'full') a(3,) b(4,)",
    "np.correlate(a, b, 'same') a(5,) b(4,)",
    "np.sort(a) a(3, 4)",
    "np.sort(a, axis=0) a(3, 4)",
    "np.sort(a, axis=None) a(3, 4)",
    "np.partition(a, 2) a(3, 4)",
    "np.partition(a, (0, 2), axis=0) a(5, 2)",
    "np.linalg.det(a) a(3, 3)",
    "np.linalg.det(a) a(2, 3, 3)",
    "np.linalg.slogdet(a)[1] a(3, 3)",
    "e = np.linalg.eigh(a + np.transpose(a)); e[0] + e[1][0] ** 2 a(3, 3)",
    "np.linalg.eigvalsh(a + np.transpose(a)) a(3, 3)",
    "np.linalg.svdvals(a) a(4, 3)",
    "np.linalg.pinv(a) a(3, 4)",
    "np.linalg.pinv(a) a(4, 2)",
    "np.linalg.matrix_power(a, 3) a(3, 3)",
    "np.linalg.matrix_power(a, 0) a(3, 3)",
    "np.linalg.matrix_power(a + 3 * np.eye(3), -2) a(3, 3)",
    "np.linalg.vector_norm(a, axis=(0, 1)) a(2, 3, 4)",
    "np.linalg.vector_norm(a, ord=1) a(3, 4)",
    "np.linalg.matrix_norm(a) a(2, 3, 4)",
    "np.linalg.matrix_norm(a, ord='nuc') a(2, 3, 4)",
    "np.linalg.trace(a, offset=1) a(2, 3, 4)",
    "np.linalg.diagonal(a) a(2, 3, 4)",
    "np.linalg.matrix_transpose(a) a(2, 3, 4)",
    # implemented by Dask, but not for these arguments (Dask raises)
    "np.ptp(a, axis=(-1, 0), keepdims=True) a(2, 3, 4)",
    "np.median(a) a(5,)",
    "np.percentile(a, 70.0) a(3, 4)",
    "np.reshape(a, (4, 3)) a(3, 4)",
    "np.reshape(a, -1, order='F') a(3, 4)",
    "np.repeat(a, 2) a(3, 4)",
    "np.repeat(a, K, axis=0) a(3, 4)",
    "np.take(a, K) a(3, 4)",
    "np.take(a, K, axis=1) a(3, 4)",
    "np.bincount(K, w) w(4,)",
    "np.dot(a, b) a() b(3, 4)",
    "np.vecdot(a, b) a(3, 4) b(4,)",
    "np.matvec(a, b) a(2, 3, 4) b(4,)",
    "np.vecmat(a, b) a(3,) b(2, 3, 4)",
    "np.linalg.inv(a + 3 * np.eye(3)) a(2, 3, 3)",
    "np.linalg.solve(a + 3 * np.eye(3), b) a(2, 3, 3) b(3, 1)",
    "np.linalg.cholesky(a @ np.transpose(a) + 3 * np.eye(np.shape(a)[0]), upper=True) a(3, 3)",
    "r = np.linalg.svd(a, full_matrices=False); np.sum(r[1]) + np.sum(r[0] ** 2 * r[1])"
    " + r[0] @ r[2] a(3, 4)",
    "np.linalg.svd(a, compute_uv=False) a(3, 4)",
    "r = np.linalg.qr(a); r[0] @ r[1] + r[0] ** 2 * np.diag(r[1]) a(4, 3)",
    "np.abs(np.linalg.qr(a, mode='r')) a(4, 3)",
    "np.linalg.lstsq(a, b)[0] a(5, 3) b(5,)",
    "np.linalg.norm(a, 'nuc') a(3, 4)",
    "np.linalg.norm(a, 2) a(3, 4)",
    "np.linalg.norm(a, -2) a(3, 4)",
}

# Rules whose gradient computes its input although the primal is lazy: the adjoint of a
# quantile ranks the elements (`np.argsort`); those of the functions that copy elements to
# several places sum them back with `np.bincount`; that of an einsum with a repeated label
# writes onto a diagonal. Dask implements none of these lazily.
MATERIALIZING = {
    "np.median(a, axis=0) a(4, 3)",
    "np.quantile(a, 0.3, axis=1) a(3, 4)",
    "np.quantile(a, Q, axis=0, keepdims=True) a(3, 4)",
    "np.tile(a, (2, 1, 2)) a(3, 4)",
    "np.delete(a, 1, axis=1) a(3, 4)",
    "np.pad(a, ((1, 2), (0, 1))) a(3, 4)",
    "np.pad(a, 2, 'reflect') a(3, 4)",
    "np.pad(a, 1, 'edge') a(3, 4)",
    "np.pad(a, 1, 'wrap') a(3, 4)",
    "np.pad(a, 1, 'constant', constant_values=c) a(3, 4) c()",
    "np.einsum('ii->i', a) a(3, 3)",
    "np.einsum('iij->j', a) a(3, 3, 2)",
}

# Rules srcgrad refuses on Dask arrays rather than differentiate another function than NumPy's:
# `np.linalg.cholesky` of a Dask array returns the upper factor.
REFUSED = {"np.linalg.cholesky(a @ np.transpose(a) + 3 * np.eye(np.shape(a)[0])) a(3, 3)"}

ROWS = [p for p in PARAMS if not p.marks]


def _primal_is_lazy(f, values):
    with warnings.catch_warnings(), dask.config.set(scheduler=_refuse):
        warnings.simplefilter("ignore")
        try:
            f(*values)
        except Computed:
            return False
        except (NotImplementedError, TypeError, ValueError, IndexError, AttributeError):
            return False  # Dask does not accept these arguments
    return True


def _computed(values):
    return [np.asarray(v) for v in dask.compute(*values)]


@pytest.mark.parametrize("r", ROWS)
def test_rule_on_dask(r):
    row_id = key(r)
    f, args = build(r, 7)
    values = list(args.values())
    lazies = [lazy(v) for v in values]
    wrt = tuple(r.wrt) or tuple(args)
    if not _primal_is_lazy(f, lazies):
        assert row_id in DASK_EAGER, f"{row_id}: not lazy in Dask, and not listed"
        return
    assert row_id not in DASK_EAGER, f"{row_id}: lazy in Dask now: unlist it"
    df = srcgrad.grad(f, wrt=wrt)
    if row_id in REFUSED:
        with pytest.raises(UnsupportedCaseError, match="Dask"):
            df(*lazies)
        return
    expected = df(*values)
    materializes = row_id in MATERIALIZING
    with warnings.catch_warnings(), dask.config.set(scheduler=_refuse):
        warnings.simplefilter("ignore")
        try:
            grads = df(*lazies)
        except Computed:
            assert materializes, f"{row_id}: the gradient computed its Dask input"
            grads = None
    if grads is None:
        grads = df(*lazies)
    else:
        assert not materializes, f"{row_id}: the gradient is lazy now: unlist it"
    for got, want in zip(_computed(grads), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


LAZY_ROWS = [p for p in ROWS if key(p.values[0]) not in DASK_EAGER | REFUSED | MATERIALIZING]


@pytest.mark.parametrize("r", LAZY_ROWS)
def test_rule_tangent_on_dask(r):
    f, args = build(r, 7)
    values = list(args.values())
    lazies = [lazy(v) for v in values]
    wrt = tuple(r.wrt) or tuple(args)
    rng = np.random.default_rng(3)
    tangents = tuple(
        rng.normal(size=np.shape(args[w])) if np.ndim(args[w]) else float(rng.normal())
        for w in wrt
    )
    jvp = srcgrad.jvp(f, wrt=wrt if len(wrt) > 1 else wrt[0])
    seed = tangents if len(wrt) > 1 else tangents[0]
    value, out = jvp(*values, seed)
    lazy_seed = tuple(lazy(t) for t in tangents) if len(wrt) > 1 else lazy(tangents[0])
    with warnings.catch_warnings(), dask.config.set(scheduler=_refuse):
        warnings.simplefilter("ignore")
        lazy_value, lazy_out = jvp(*lazies, lazy_seed)
    got_value, got_out = _computed([lazy_value, lazy_out])
    np.testing.assert_allclose(got_value, value, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_out, out, rtol=1e-10, atol=1e-12)


# --- a cluster of two worker processes --------------------------------------------------------


def logistic_loss(w, b, X, y):
    z = X @ w + b
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.mean(softplus - y * z) + 0.01 * np.sum(w**2)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > rng.logistic(size=n)).astype(float)
    return X, y


def test_logistic_gradient_on_a_cluster(client):
    X, y = _data(20_000, 8)
    Xd = da.from_array(X, chunks=(1_000, 8))
    yd = da.from_array(y, chunks=1_000)
    w, b = np.linspace(-0.5, 0.5, 8), 0.25
    dloss = srcgrad.value_and_grad(logistic_loss, wrt=("w", "b"))
    value, (dw, db) = dloss(w, b, Xd, yd)
    assert isinstance(dw, da.Array) and isinstance(db, da.Array)
    assert dw.npartitions == 1 and len(Xd.chunks[0]) == 20  # a reduction over 20 chunks
    value, dw, db = dask.compute(value, dw, db)  # on the cluster
    ref_value, (ref_dw, ref_db) = dloss(w, b, X, y)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(db, ref_db, rtol=1e-10, atol=1e-14)
    workers = client.run(lambda: 1)
    assert len(workers) == 2


def test_sweep_with_client_map(client):
    X, y = _data(500, 4, seed=1)
    dloss = srcgrad.grad(logistic_loss, wrt=("w", "b"))
    params = [(np.full(4, s), s / 2) for s in np.linspace(-1, 1, 16)]
    futures = client.map(lambda p: dloss(p[0], p[1], X, y), params)
    results = client.gather(futures)
    for (w, b), (dw, db) in zip(params, results):
        ref_dw, ref_db = dloss(w, b, X, y)
        np.testing.assert_allclose(dw, ref_dw, rtol=1e-12)
        np.testing.assert_allclose(db, ref_db, rtol=1e-12)
