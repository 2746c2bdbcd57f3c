"""Derived functions pickle by reference and are generated again where they are unpickled: in a
fresh process, in multiprocessing and concurrent.futures pools, in joblib, at higher order."""

import concurrent.futures
import multiprocessing
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import srcgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def act(z):
    return np.tanh(z)


def loss(w, x, c=2.0):
    return c * np.sum(act(x * w) ** 2)


def expected(w, x, c=2.0):
    t = np.tanh(x * w)
    return c * 2 * t * (1 - t * t) * x


X = np.linspace(-1.0, 1.0, 4)
W = np.array([0.3, -0.2, 0.5, 1.0])

UNPICKLE = """\
import pickle, sys
import numpy as np
blob = sys.stdin.buffer.read()
assert "srcgrad" not in sys.modules
df = pickle.loads(blob)
print(repr(df))
args = pickle.loads(bytes.fromhex(sys.argv[1]))
print(repr(np.asarray(df(*args), dtype=float).tolist()))
"""


def _in_fresh_process(df, args, path=ROOT):
    """Unpickle ``df`` in a new interpreter and call it on ``args``: (repr, result)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, path]))
    out = subprocess.run(
        [sys.executable, "-c", UNPICKLE, pickle.dumps(args).hex()], input=pickle.dumps(df),
        capture_output=True, env=env, timeout=300,
    )
    assert out.returncode == 0, out.stderr.decode()
    text, result = out.stdout.decode().splitlines()
    return text, np.array(eval(result))


def test_repr_says_what_it_is():
    assert repr(srcgrad.grad(loss)) == "<grad of loss wrt 'w'>"
    assert repr(srcgrad.value_and_grad(loss, wrt=(0, "x"))) == \
        "<value_and_grad of loss wrt ('w', 'x')>"
    assert repr(srcgrad.grad(srcgrad.grad(np.sin))) == "<grad of <grad of sin wrt 'x'> wrt 'x'>"
    assert repr(srcgrad.jacobian(act, method="forward")) == \
        "<jacobian of act wrt 'z', method='forward'>"


def test_a_derivative_of_a_module_function_round_trips_through_a_fresh_process():
    df = srcgrad.grad(loss)
    blob = pickle.dumps(df)
    assert b"act" not in blob and b"tanh" not in blob  # by reference: no code, no source
    assert pickle.loads(blob) is df
    text, got = _in_fresh_process(df, (W, X), os.path.dirname(__file__))
    assert text == "<grad of loss wrt 'w'>"
    np.testing.assert_allclose(got, expected(W, X), rtol=1e-12)


def test_higher_order_and_options_round_trip():
    ddf = srcgrad.grad(lambda w: np.sum(srcgrad.grad(loss)(w, X) ** 2))
    text, got = _in_fresh_process(ddf, (W,), os.path.dirname(__file__))
    assert text == "<grad of <lambda> wrt 'w'>"
    np.testing.assert_allclose(got, ddf(W), rtol=1e-10)
    hv = srcgrad.hvp(loss, wrt="w", optimize=False)
    _, got = _in_fresh_process(hv, (W, X, np.ones(4)), os.path.dirname(__file__))
    np.testing.assert_allclose(got, hv(W, X, np.ones(4)), rtol=1e-10)


SCRIPT = """\
import pickle, sys
import numpy as np
import srcgrad

SCALE = np.array([1.0, 2.0, 3.0])


def helper(v):
    return np.sin(v) * SCALE


def count(n):
    return 1 if n <= 0 else 1 + count(n - 1)


@srcgrad.grad
def dloss(w, k=3):
    return np.sum(helper(w) ** 2) * count(k)


shift = 0.5
dlam = srcgrad.grad(lambda w: np.sum((w - shift) ** 3))
sys.stdout.buffer.write(pickle.dumps((dloss, dlam)))
"""


def test_functions_of_main_and_lambdas_pickle_by_value(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT)
    made = subprocess.run([sys.executable, str(script)], capture_output=True, env=env,
                          timeout=300)
    assert made.returncode == 0, made.stderr.decode()
    dloss, dlam = pickle.loads(made.stdout)  # here: __main__ is not the script
    w = np.array([0.1, 0.2, 0.3])
    want = 2 * np.sin(w) * np.cos(w) * np.array([1.0, 4.0, 9.0]) * 4
    np.testing.assert_allclose(dloss(w), want, rtol=1e-12)
    np.testing.assert_allclose(dlam(w), 3 * (w - 0.5) ** 2, rtol=1e-12)
    assert repr(dlam) == "<grad of <lambda> wrt 'w'>"


def test_a_value_that_cannot_be_pickled_is_a_clear_error():
    lock = __import__("threading").Lock()

    def locked(w):
        return np.sum(w * w) if lock else 0.0

    with pytest.raises(pickle.PicklingError, match="'lock' it reads"):
        pickle.dumps(srcgrad.grad(locked))


def test_multiprocessing_pool_and_process_pool_executor():
    df = srcgrad.grad(loss)
    jobs = [(W * k, X) for k in range(4)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        got = pool.starmap(df, jobs)
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as executor:
        got2 = list(executor.map(df, *zip(*jobs)))
    for a, b, (w, x) in zip(got, got2, jobs):
        np.testing.assert_allclose(a, expected(w, x), rtol=1e-12)
        np.testing.assert_allclose(b, expected(w, x), rtol=1e-12)


def test_joblib():
    joblib = pytest.importorskip("joblib")  # in the test extra
    df = srcgrad.grad(loss)
    got = joblib.Parallel(n_jobs=2)(joblib.delayed(df)(W * k, X) for k in range(3))
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, expected(W * k, X), rtol=1e-12)
