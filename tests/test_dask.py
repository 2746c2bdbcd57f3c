"""Derivatives of functions of Dask arrays: lazy graphs in, lazy graphs out, equal to NumPy.

The generated code is NumPy calls, and NumPy hands a call on a Dask array to Dask (NEP-18's
``__array_function__``, NEP-13's ``__array_ufunc__``); srcgrad's runtime helpers must do the
same and never convert a Dask array to NumPy (which would compute the whole graph in one
process). Every row of the NumPy rule table runs here on arrays split into several chunks per
axis, under a scheduler that fails if anything is computed; the gradient is then computed and
compared with the gradient of the same function on NumPy arrays.

``DASK_UNIMPLEMENTED`` and ``DASK_PARTIAL`` list the functions whose *primal* computes its input
or fails: NumPy functions Dask does not implement (Dask then computes the array and warns), or
implements for fewer arguments. The gradient cannot be lazier than the function.
``MATERIALIZING`` lists the rules whose gradient computes its cotangent although the primal is
lazy; the documentation repeats these lists.

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


# The NumPy functions Dask does not implement: NumPy computes the Dask array first (and Dask
# warns), so neither the function nor its gradient can be lazy.
DASK_UNIMPLEMENTED = {
    np.cumulative_sum, np.cumulative_prod, np.matrix_transpose, np.asarray, np.array, np.copy,
    np.ascontiguousarray, np.diagflat, np.take_along_axis, np.resize, np.full, np.column_stack,
    np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, np.unstack, np.linalg.matmul,
    np.inner, np.linalg.outer, np.linalg.tensordot, np.linalg.vecdot, np.kron, np.cross,
    np.linalg.cross, np.convolve, np.correlate, np.sort, np.partition, np.linalg.det,
    np.linalg.slogdet, np.linalg.eigh, np.linalg.eigvalsh, np.linalg.svdvals, np.linalg.pinv,
    np.linalg.matrix_power, np.linalg.vector_norm, np.linalg.matrix_norm, np.linalg.trace,
    np.linalg.diagonal, np.linalg.matrix_transpose,
}
# The NumPy functions Dask implements for some arguments only (it raises for the others: an
# axis it needs, a stack of matrices, chunks along both axes, a keyword it lacks).
DASK_PARTIAL = {
    np.ptp, np.median, np.percentile, np.linspace, np.reshape, np.repeat, np.take, np.bincount,
    np.dot, np.vecdot, np.matvec, np.vecmat, np.linalg.inv, np.linalg.solve, np.linalg.cholesky,
    np.linalg.svd, np.linalg.qr, np.linalg.lstsq, np.linalg.norm,
    # numpy.fft: Dask transforms along an axis in one chunk only
    np.fft.fft, np.fft.ifft, np.fft.fft2, np.fft.ifft2, np.fft.fftn, np.fft.ifftn, np.fft.rfft,
    np.fft.irfft, np.fft.rfft2, np.fft.irfft2, np.fft.rfftn, np.fft.irfftn, np.fft.hfft,
    np.fft.ihfft, np.fft.fftshift, np.fft.ifftshift,
}

# The rules whose gradient computes its cotangent although the primal is lazy: the adjoint of
# a quantile ranks the elements (`np.argsort`); those of the functions that copy elements to
# several places sum them back with `np.bincount`; that of an einsum with a repeated label
# writes onto a diagonal. Dask implements none of these lazily.
MATERIALIZING = {np.median, np.quantile, np.percentile, np.tile, np.delete, np.pad}
MATERIALIZING_ROWS = {"np.einsum('ii->i', a) a(3, 3)", "np.einsum('iij->j', a) a(3, 3, 2)",
                      "np.take(z, [0, 2, 2], axis=1) z(2, 3)", "np.repeat(z, 2, axis=0) z(2, 3)"}

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
        assert r.fn in DASK_UNIMPLEMENTED | DASK_PARTIAL, f"{row_id}: not lazy in Dask, unlisted"
        return
    if any(isinstance(v, da.Array) for v in lazies):
        assert r.fn not in DASK_UNIMPLEMENTED, f"{row_id}: lazy in Dask now: unlist {r.fn}"
    df = srcgrad.grad(f, wrt=wrt)
    if row_id in REFUSED:
        with pytest.raises(UnsupportedCaseError, match="Dask"):
            df(*lazies)
        return
    expected = df(*values)
    materializes = r.fn in MATERIALIZING or row_id in MATERIALIZING_ROWS
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
        assert row_id not in MATERIALIZING_ROWS, f"{row_id}: the gradient is lazy now: unlist it"
    for got, want in zip(_computed(grads), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


LAZY_ROWS = [
    p for p in ROWS
    if p.values[0].fn not in DASK_UNIMPLEMENTED | MATERIALIZING
    and key(p.values[0]) not in REFUSED | MATERIALIZING_ROWS
]


@pytest.mark.parametrize("r", LAZY_ROWS)
def test_rule_tangent_on_dask(r):
    f, args = build(r, 7)
    values = list(args.values())
    lazies = [lazy(v) for v in values]
    if not _primal_is_lazy(f, lazies):
        assert r.fn in DASK_PARTIAL
        return
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


def test_the_documentation_lists_the_same_functions():
    """docs/distributed.md names exactly the functions listed here, in the same groups."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "distributed.md").read_text()
    items = re.split(r"\n- ", page.split("## What stays lazy", 1)[1])[1:]

    def named(item):
        return set(re.findall(r"`(np\.[\w.]+)`", item))

    def spelled(functions):
        return {
            f"np.{f.__name__}" if getattr(np, f.__name__, None) is f else
            f"np.fft.{f.__name__}" if getattr(np.fft, f.__name__, None) is f else
            f"np.linalg.{f.__name__}" for f in functions
        }

    assert named(items[0]) == spelled(DASK_UNIMPLEMENTED)
    assert named(items[1]) == spelled(DASK_PARTIAL)
    assert named(items[2]) == spelled(MATERIALIZING) | {"np.einsum"}


# --- a cluster of two worker processes --------------------------------------------------------


def logistic_loss(w, b, X, y):
    z = X @ w + b
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.mean(softplus - y * z) + 0.01 * np.sum(w**2)


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > rng.logistic(size=n)).astype(float)
    return X, y


def _gathered(client, futures, seconds=120):
    """The results of ``futures``; a ``TimeoutError`` rather than a hang if they take longer."""
    distributed.wait(futures, timeout=seconds)
    return client.gather(futures)


def test_gradients_on_a_cluster():
    # One cluster for both parts (pytest-xdist would start one per process for two tests). A
    # worker that dies fails the test (no task is retried), and every wait is bounded.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        _logistic_gradient_on_a_cluster(client)
        _sweep_with_client_map(client)
        assert len(client.scheduler_info()["workers"]) == 2


def _logistic_gradient_on_a_cluster(client):
    X, y = _data(20_000, 8)
    Xd = da.from_array(X, chunks=(1_000, 8))
    yd = da.from_array(y, chunks=1_000)
    w, b = np.linspace(-0.5, 0.5, 8), 0.25
    dloss = srcgrad.value_and_grad(logistic_loss, wrt=("w", "b"))
    value, (dw, db) = dloss(w, b, Xd, yd)
    assert isinstance(dw, da.Array) and isinstance(db, da.Array)
    assert dw.npartitions == 1 and len(Xd.chunks[0]) == 20  # a reduction over 20 chunks
    value, dw, db = _gathered(client, client.compute([value, dw, db]))  # on the cluster
    ref_value, (ref_dw, ref_db) = dloss(w, b, X, y)
    np.testing.assert_allclose(value, ref_value, rtol=1e-12)
    np.testing.assert_allclose(dw, ref_dw, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(db, ref_db, rtol=1e-10, atol=1e-14)


def _sweep_with_client_map(client):
    # the derivative pickles by reference and is generated again on each worker (from the disk
    # cache, which the reference gradients below fill first)
    X, y = _data(500, 4, seed=1)
    dloss = srcgrad.grad(logistic_loss, wrt=("w", "b"))
    params = [(np.full(4, s), s / 2) for s in np.linspace(-1, 1, 16)]
    expected = [dloss(w, b, X, y) for w, b in params]
    results = _gathered(client, client.map(lambda p: dloss(p[0], p[1], X, y), params))
    for (dw, db), (ref_dw, ref_db) in zip(results, expected):
        np.testing.assert_allclose(dw, ref_dw, rtol=1e-12)
        np.testing.assert_allclose(db, ref_db, rtol=1e-12)


def test_chooser_grad_of_a_lazy_array_splits_ties_and_chooses_nans():
    # the lazy branch of max/min's adjoint (no data-dependent test): ties share the cotangent,
    # a NaN maximum chose the NaNs
    from srcgrad import runtime

    a = np.array([[1.0, 3.0, 3.0], [np.nan, 2.0, 0.0], [4.0, 1.0, 0.0]])
    y = np.max(a, axis=1)
    want = [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    got = runtime.chooser_grad(da.from_array(np.ones(3)), da.from_array(a), da.from_array(y),
                               axis=1)
    assert got.compute().tolist() == want
    assert runtime.chooser_grad(np.ones(3), a, y, axis=1).tolist() == want
    # np.nanmax's result is no NaN: a NaN beside it gets nothing (a mutant choosing every NaN
    # split the cotangent with it)
    y = np.nanmax(a, axis=1)
    want = [[0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    got = runtime.chooser_grad(da.from_array(np.ones(3)), da.from_array(a), da.from_array(y),
                               axis=1)
    assert got.compute().tolist() == want
    assert runtime.chooser_grad(np.ones(3), a, y, axis=1).tolist() == want
