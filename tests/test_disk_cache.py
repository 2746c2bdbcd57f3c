"""The disk cache: a derivative is reused in a new process only while what it was generated from
is unchanged; a damaged or foreign file is never run; concurrent processes are safe."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad import transforms
from srcgrad.__main__ import main as cli
from srcgrad.emit import diskcache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = """\
import numpy as np


def act(z):
    return np.tanh(z)


def loss(W, b, X, y, scale=2.0):
    z = act(X @ W + b)
    e = z - y
    return scale * np.sum(e * e)
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of the test's own; in-memory derivatives forgotten before and
    after, so that a transform goes to the disk."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(directory))
    monkeypatch.delenv("SRCGRAD_CACHE", raising=False)
    transforms.forget()
    yield directory
    transforms.forget()


def _module(path, text, name):
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(5, 3)), \
        rng.normal(size=(5, 2))


def _numeric(f, args, i, eps=1e-6):
    args = [np.array(a, dtype=float) for a in args]
    g = np.zeros_like(args[i])
    for idx in np.ndindex(args[i].shape):
        up = [a.copy() for a in args]
        down = [a.copy() for a in args]
        up[i][idx] += eps
        down[i][idx] -= eps
        g[idx] = (f(*up) - f(*down)) / (2 * eps)
    return g


def _entries(directory):
    return sorted(p for p in directory.rglob("*" + diskcache.SUFFIX))


def _counts():
    return dict(diskcache.STATS)


def _delta(before):
    return {k: diskcache.STATS[k] - before[k] for k in before}


def test_a_derivative_is_stored_and_loaded_with_the_same_gradient(cache, tmp_path):
    m = _module(tmp_path / "m_store.py", MODEL, "m_store")
    args = _inputs()
    before = _counts()
    first = srcgrad.grad(m.loss, wrt=(0, 1))(*args)
    assert _delta(before)["stored"] == 1 and len(_entries(cache)) == 1
    transforms.forget()
    before = _counts()
    loaded = srcgrad.grad(m.loss, wrt=(0, 1))
    assert _delta(before) == {"loaded": 1, "stored": 0, "uncacheable": 0}
    for got, want, i in zip(loaded(*args), first, (0, 1)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(got, _numeric(m.loss, args, i), rtol=1e-6, atol=1e-8)
    assert "def dloss(" in srcgrad.source(loaded)


def test_a_redefined_helper_is_not_served_the_old_derivative(cache, tmp_path):
    m = _module(tmp_path / "m_helper.py", MODEL, "m_helper")
    args = _inputs()
    srcgrad.grad(m.loss)(*args)
    transforms.forget()
    other = _module(tmp_path / "m_helper2.py", MODEL.replace("tanh", "sin"), "m_helper2")
    m.act = other.act  # the same name, another body
    before = _counts()
    got = srcgrad.grad(m.loss)(*args)
    assert _delta(before)["loaded"] == 0
    np.testing.assert_allclose(got, _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)


def test_a_global_rebound_to_another_function_is_not_served_the_old_derivative(cache, tmp_path):
    m = _module(tmp_path / "m_rebound.py", MODEL, "m_rebound")
    args = _inputs()
    srcgrad.grad(m.loss)(*args)
    transforms.forget()
    m.np = type(np)("fake_numpy")
    m.np.__dict__.update(vars(np))
    m.np.tanh = np.sin  # `np.tanh` in the helper denotes another function now
    before = _counts()
    got = srcgrad.grad(m.loss)(*args)
    assert _delta(before)["loaded"] == 0
    np.testing.assert_allclose(got, _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)


def test_changed_defaults_and_options_are_other_entries(cache, tmp_path):
    m = _module(tmp_path / "m_defaults.py", MODEL, "m_defaults")
    args = _inputs()
    srcgrad.grad(m.loss)(*args)
    transforms.forget()
    m.loss.__defaults__ = (5.0,)
    before = _counts()
    got = srcgrad.grad(m.loss)(*args)
    assert _delta(before)["loaded"] == 0
    np.testing.assert_allclose(got, _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)
    for transform in (lambda: srcgrad.grad(m.loss, wrt=1), lambda: srcgrad.vjp(m.loss),
                      lambda: srcgrad.grad(m.loss, optimize=False)):
        before = _counts()
        transform()
        assert _delta(before)["loaded"] == 0
    assert len(_entries(cache)) == 5


def test_an_edited_module_is_not_served_the_old_derivative(cache, tmp_path):
    path = tmp_path / "m_edited.py"
    m = _module(path, MODEL, "m_edited")
    args = _inputs()
    srcgrad.grad(m.loss)(*args)
    transforms.forget()
    m = _module(path, MODEL.replace("e * e", "e * e * e"), "m_edited")
    before = _counts()
    got = srcgrad.grad(m.loss)(*args)
    assert _delta(before)["loaded"] == 0
    np.testing.assert_allclose(got, _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)


def test_a_custom_rule_registered_later_is_not_bypassed(cache, tmp_path):
    m = _module(tmp_path / "m_rule.py", MODEL, "m_rule")
    args = _inputs()
    srcgrad.grad(m.loss)(*args)
    transforms.forget()
    registered = list(srcgrad.rules.registry.CUSTOM_RULES)
    try:
        @srcgrad.adjoint(m.act)
        def act_adjoint(dy, y, z):
            return 2.0 * dy  # deliberately not tanh's derivative: it must be used

        before = _counts()
        got = srcgrad.grad(m.loss)(*args)
        assert _delta(before)["loaded"] == 0
        assert "2.0 *" in srcgrad.source(srcgrad.grad(m.loss))
    finally:
        srcgrad.rules.RULES.pop(m.act, None)
        srcgrad.rules.registry.CUSTOM_RULES[:] = registered
        transforms.forget()
    z = args[2] @ args[0] + args[1]
    e = np.tanh(z) - args[3]
    np.testing.assert_allclose(got, args[2].T @ (2.0 * 2.0 * 2.0 * e), rtol=1e-12)


def test_another_srcgrad_or_numpy_is_another_key(cache, tmp_path, monkeypatch):
    m = _module(tmp_path / "m_versions.py", MODEL, "m_versions")
    key = diskcache.entry_key(m.loss, "grad", ("W",), False, srcgrad.context.Options())
    monkeypatch.setattr(diskcache, "_ENVIRONMENT", [])
    monkeypatch.setattr(np, "__version__", np.__version__ + ".post1")
    assert diskcache.entry_key(m.loss, "grad", ("W",), False, srcgrad.context.Options()) != key
    monkeypatch.setattr(diskcache, "_ENVIRONMENT", [])
    monkeypatch.undo()
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(cache))
    assert diskcache.entry_key(m.loss, "grad", ("W",), False, srcgrad.context.Options()) == key


def _damage(path, how):
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        i = len(data) - 40
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x55]) + data[i + 1:])
    else:  # a well-formed entry of another key, under this key's name
        other = path.with_name("0" * 40 + diskcache.SUFFIX)
        path.write_bytes(other.read_bytes())


@pytest.mark.parametrize("how", ["truncated", "flipped", "foreign"])
def test_a_damaged_or_foreign_file_is_ignored_and_written_anew(cache, tmp_path, how):
    m = _module(tmp_path / f"m_damage_{how}.py", MODEL, f"m_damage_{how}")
    args = _inputs()
    want = srcgrad.grad(m.loss)(*args)
    (path,) = _entries(cache)
    if how == "foreign":
        srcgrad.grad(m.act)  # a second, valid entry, copied under the first one's name
        other = next(p for p in _entries(cache) if p != path)
        path.with_name("0" * 40 + diskcache.SUFFIX).write_bytes(other.read_bytes())
    _damage(path, how)
    transforms.forget()
    before = _counts()
    got = srcgrad.grad(m.loss)(*args)
    assert _delta(before)["loaded"] == 0 and _delta(before)["stored"] == 1
    np.testing.assert_allclose(got, want, rtol=1e-12)
    transforms.forget()
    before = _counts()
    srcgrad.grad(m.loss)
    assert _delta(before)["loaded"] == 1  # the file was written anew


def test_a_file_whose_digest_does_not_match_is_never_run(cache, tmp_path):
    import marshal

    m = _module(tmp_path / "m_never.py", MODEL, "m_never")
    srcgrad.grad(m.loss)
    (path,) = _entries(cache)
    head, _, payload = path.read_bytes().partition(b"\n")
    entry, _ = marshal.loads(payload)
    marker = tmp_path / "ran"
    evil = compile(f"open({str(marker)!r}, 'w').close()", "<evil>", "exec")
    path.write_bytes(head + b"\n" + marshal.dumps((entry, evil)))
    transforms.forget()
    args = _inputs()
    got = srcgrad.grad(m.loss)(*args)
    assert not marker.exists()
    np.testing.assert_allclose(got, _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)


def test_what_cannot_be_found_again_is_not_stored(cache, tmp_path):
    text = MODEL + "\n\nclass Box:\n    pass\n\n\nBOX = Box()\n\n\ndef boxed(x):\n" \
        "    return BOX and np.sum(x * x)\n"
    m = _module(tmp_path / "m_unsigned.py", text, "m_unsigned")
    before = _counts()
    df = srcgrad.grad(m.boxed)
    assert _delta(before) == {"loaded": 0, "stored": 0, "uncacheable": 1}
    np.testing.assert_allclose(df(np.arange(3.0)), 2 * np.arange(3.0))


def test_the_cache_is_off_with_srcgrad_cache_0(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE", "0")
    m = _module(tmp_path / "m_off.py", MODEL, "m_off")
    srcgrad.grad(m.loss)(*_inputs())
    assert not cache.exists()


def test_cache_info_and_clear(cache, tmp_path, capsys):
    m = _module(tmp_path / "m_cli.py", MODEL, "m_cli")
    srcgrad.grad(m.loss)
    srcgrad.grad(m.act)
    assert cli(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache) in out and "2 entries" in out
    assert cli(["cache", "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out
    assert _entries(cache) == []


PROCESS = """\
import json, sys
import numpy as np
import srcgrad
from srcgrad.emit import diskcache
import model
rng = np.random.default_rng(0)
args = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
gW, gb = srcgrad.grad(model.loss, wrt=("W", "b"))(*args)
print(json.dumps({"stats": diskcache.STATS, "gW": gW.tolist(), "gb": gb.tolist()}))
"""


def _spawn(directory, cache, n):
    env = dict(os.environ, PYTHONPATH=ROOT, SRCGRAD_CACHE_DIR=str(cache))
    procs = [
        subprocess.Popen([sys.executable, "-c", PROCESS], cwd=directory, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out))
    return results


def test_processes_transforming_the_same_function_at_once(tmp_path):
    """Four fresh processes start on an empty cache together; then a fifth finds the entry."""
    cache = tmp_path / "cache"
    (tmp_path / "model.py").write_text(MODEL)
    results = _spawn(tmp_path, cache, 4)
    entries = _entries(cache)
    assert len(entries) == 1 and not list(cache.rglob("*.tmp"))
    (late,) = _spawn(tmp_path, cache, 1)
    assert late["stats"]["loaded"] == 1
    for r in results + [late]:
        np.testing.assert_allclose(r["gW"], results[0]["gW"], rtol=1e-12)
        np.testing.assert_allclose(r["gb"], results[0]["gb"], rtol=1e-12)
    m = _module(tmp_path / "model_check.py", MODEL, "model_check")
    args = _inputs()
    np.testing.assert_allclose(late["gW"], _numeric(m.loss, args, 0), rtol=1e-6, atol=1e-8)


def test_a_module_choosing_its_helper_at_import_gets_its_own_derivative(tmp_path):
    """The same file, read by two processes in which a global denotes different functions."""
    text = MODEL.replace("def act(z):\n    return np.tanh(z)\n",
                         "import os\nact = np.sin if os.environ.get('USE_SIN') else np.tanh\n")
    (tmp_path / "model.py").write_text(textwrap.dedent(text))
    cache = tmp_path / "cache"
    (tanh,) = _spawn(tmp_path, cache, 1)
    os.environ["USE_SIN"] = "1"
    try:
        (sin,) = _spawn(tmp_path, cache, 1)
    finally:
        del os.environ["USE_SIN"]
    assert sin["stats"]["loaded"] == 0 and sin["gW"] != tanh["gW"]
    os.environ["USE_SIN"] = "1"
    try:
        m = _module(tmp_path / "model_sin.py", text, "model_sin")
    finally:
        del os.environ["USE_SIN"]
    np.testing.assert_allclose(sin["gW"], _numeric(m.loss, _inputs(), 0), rtol=1e-6, atol=1e-8)


LOOP = """\
import numpy as np

SCALES = [lambda x, c=c: c * np.sum(x * x) for c in (1.0, 3.0)]


def outer(w):
    return np.sum(inner_grad(w) ** 2)


def inner(w, scale=2.0):
    return scale * np.sum(np.tanh(w) ** 2)


def inner_grad(w):
    return grad_of_inner(w)
"""


def test_loaded_derivatives_bind_what_their_defaults_and_guards_read(cache, tmp_path):
    """A vjp's optional parameters (``*rest, scale=UNSET``), a lambda's default bound by value,
    second order through a guarded derivative: generated, then loaded, the same numbers."""
    m = _module(tmp_path / "m_bound.py", LOOP, "m_bound")
    m.grad_of_inner = srcgrad.grad(m.inner)
    x = np.array([0.3, -0.7, 1.1])

    def results():
        return [
            srcgrad.vjp(m.inner)(x, 1.5),
            srcgrad.vjp(m.inner)(x, 3.0, 1.5),
            srcgrad.grad(m.SCALES[0])(x), srcgrad.grad(m.SCALES[1])(x),
            srcgrad.hvp(m.inner)(x, x),
            srcgrad.grad(m.outer)(x),
        ]

    first = results()
    transforms.forget()
    m.grad_of_inner = srcgrad.grad(m.inner)
    before = _counts()
    again = results()
    assert _delta(before)["loaded"] >= 5
    for a, b in zip(first, again):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    t = np.tanh(x)
    np.testing.assert_allclose(again[0], 1.5 * 2.0 * 2 * t * (1 - t * t), rtol=1e-12)
    np.testing.assert_allclose(again[1], 1.5 * 3.0 * 2 * t * (1 - t * t), rtol=1e-12)
    np.testing.assert_allclose(again[2], 2 * x, rtol=1e-12)
    np.testing.assert_allclose(again[3], 6 * x, rtol=1e-12)
    np.testing.assert_allclose(again[5], _numeric(m.outer, [x], 0), rtol=1e-6, atol=1e-8)


WRAPPED = """\
import functools

import numpy as np


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@traced
def act(z):
    return np.tanh(z)


def loss(x):
    return np.sum(act(x) ** 2)
"""


def test_a_decorated_helper_is_known_by_what_it_wraps(cache, tmp_path):
    """The wrapper's own code is the same for every function it wraps: what srcgrad reads is
    the wrapped function's source, so that is part of what an entry is checked against."""
    path = tmp_path / "m_wrapped.py"
    m = _module(path, WRAPPED, "m_wrapped")
    x = np.array([0.2, -0.4])
    srcgrad.grad(m.loss)(x)
    transforms.forget()
    m2 = _module(path, WRAPPED.replace("np.tanh(z)", "np.sin(z)"), "m_wrapped")
    assert m2.act.__code__.co_code == m.act.__code__.co_code  # the same wrapper
    m.act = m2.act
    before = _counts()
    got = srcgrad.grad(m.loss)(x)
    assert _delta(before)["loaded"] == 0
    np.testing.assert_allclose(got, 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_a_failure_inside_the_cache_is_never_a_failure_of_the_transform(cache, tmp_path,
                                                                         monkeypatch):
    m = _module(tmp_path / "m_failing.py", MODEL, "m_failing")
    args = _inputs()

    def broken(*_):
        raise RuntimeError("a bug in the cache")

    monkeypatch.setattr(diskcache, "_entry", broken)
    before = _counts()
    want = srcgrad.grad(m.loss)(*args)
    assert _delta(before) == {"loaded": 0, "stored": 0, "uncacheable": 1}
    monkeypatch.undo()
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(cache))
    transforms.forget()
    srcgrad.grad(m.loss)  # stored now
    transforms.forget()
    monkeypatch.setattr(diskcache, "_functions", broken)
    before = _counts()
    np.testing.assert_allclose(srcgrad.grad(m.loss)(*args), want, rtol=1e-12)
    assert _delta(before)["loaded"] == 0
