"""``backend="numba"`` and ``backend="auto"`` (srcgrad/emit/numba_backend.py).

numba compiles each derivative in about a second, so these tests use a handful of functions;
``SRCGRAD_NUMBA_SWEEP=1`` adds the benchmark's workloads (an RNN, a pendulum, Rosenbrock) and 40
random scalar loops (saves recomputed: optimize/recompute.py). The
derivatives numba compiles are cached in the suite's own cache directory (tests/conftest.py).
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import numeric_grad

import srcgrad
from srcgrad import SrcgradError, UnsupportedSyntaxError
from srcgrad.errors import CompiledValueError

numba = pytest.importorskip("numba")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rosen(x, k):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + k * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def pendulum(c, L, theta0):
    theta = theta0
    omega = 0.0
    for _ in range(200):
        alpha = -(9.81 / L) * np.sin(theta) - c * omega
        theta = theta + 0.01 * omega
        omega = omega + 0.01 * alpha
    return theta * theta


def iterated(x):
    y = x
    for _ in range(3):
        y = np.sin(y) * x  # saves y, an array: a list of arrays (numbers go to arrays)
    return np.sum(y)


def square_root(x):
    y = x
    while True:  # no trip count: the saves stay a list
        y = 0.5 * (y + x / y)
        if abs(y * y - x) < 1e-12:
            break
    return y


def wave(a, b):
    y = a * b + np.cos(a)
    return y * np.tanh(y)


def with_dict(x):
    d = {"a": x}
    return d["a"] * 2.0


def projected(x, w):
    return np.sum(x @ w)


def projected_in_a_loop(x, w):
    s = 0.0
    for _ in range(2):
        s = s + np.sum(x @ w)
    return s


X = np.array([0.3, -0.7, 1.1, 0.5, -0.2])


def test_grad_of_a_loop_over_an_array_equals_python_and_central_differences():
    dn = srcgrad.grad(rosen, wrt=(0, 1), backend="numba")
    gx, gk = dn(X, 100.0)
    px, pk = srcgrad.grad(rosen, wrt=(0, 1))(X, 100.0)
    np.testing.assert_allclose(gx, px, rtol=1e-13)
    np.testing.assert_allclose(gk, pk, rtol=1e-13)
    np.testing.assert_allclose(gx, numeric_grad(rosen, (X, 100.0), 0), rtol=1e-6)
    np.testing.assert_allclose(gk, numeric_grad(rosen, (X, 100.0), 1), rtol=1e-6)
    assert type(gx) is np.ndarray and gx.shape == X.shape and type(gk) is float
    x = X.copy()
    again = dn(x, 100.0)
    assert np.array_equal(again[0], gx) and np.array_equal(x, X)  # same result, x kept
    # the returned array is allocated by the caller (numba_backend._outputs), anew every call
    assert "# dx: allocated by the caller as np.empty(x.shape)" in srcgrad.source(dn)
    assert again[0] is not gx and again[1] == gk
    slow = dn.__wrapped__.__globals__["__srcgrad_calls__"].call(X, 100.0)  # not the fast path
    assert np.array_equal(slow[0], gx) and slow[1] == gk and slow[0] is not gx


def test_forward_mode_and_vjp_equal_python():
    t = np.linspace(-1.0, 1.0, 5)
    value, tangent = srcgrad.jvp(rosen, backend="numba")(X, 100.0, t)
    pv, pt = srcgrad.jvp(rosen)(X, 100.0, t)
    assert value == pytest.approx(pv, rel=1e-14) and tangent == pytest.approx(pt, rel=1e-12)
    assert tangent == pytest.approx(float(numeric_grad(rosen, (X, 100.0), 0) @ t), rel=1e-6)
    g = srcgrad.vjp(rosen, backend="numba")(X, 100.0, 2.0)
    np.testing.assert_allclose(g, 2.0 * srcgrad.grad(rosen)(X, 100.0), rtol=1e-13)
    with pytest.raises(CompiledValueError, match="seed must have the shape"):
        srcgrad.vjp(rosen, backend="numba")(X, 100.0, np.ones(2))


def test_saves_of_arrays_and_of_a_loop_without_a_trip_count(monkeypatch, tmp_path):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path))  # (numba's cache of it empty)
    dn = srcgrad.grad(iterated, backend="numba")
    g = dn(X)
    np.testing.assert_allclose(g, srcgrad.grad(iterated)(X), rtol=1e-13)
    np.testing.assert_allclose(g, numeric_grad(iterated, (X,), 0), rtol=1e-6)
    assert srcgrad.grad(square_root, backend="numba")(2.0) == pytest.approx(0.5 / 2**0.5)
    compiled_in_tiers(dn, g)
    helpers_called_unlinked(dn)


def compiled_in_tiers(dn, g):
    """emit/numba_tiers.py: the first call ran the quick tier, whose module was optimized at the
    quick levels; the full code, compiled behind it, serves the calls now, with the same
    result to the last bit; the first call had nothing else to compile."""
    from srcgrad.emit import numba_tiers

    numba_tiers.settle()
    calls = dn.__wrapped__.__globals__["__srcgrad_calls__"]
    (compiled,) = calls.made.values()
    quick = numba_tiers._QUICK[compiled.path]
    assert compiled.serving is compiled.jitted is calls.scope["__srcgrad_jit__"] is not quick
    assert quick.signatures == compiled.jitted.signatures and len(quick.signatures) == 1
    (result,) = quick.overloads.values()
    assert result.library._srcgrad_levels == numba_tiers.QUICK
    assert quick.targetoptions == compiled.jitted.targetoptions  # (bounds checked, as the full)
    (full,) = compiled.jitted.overloads.values()
    assert not hasattr(full.library, "_srcgrad_levels")
    np.testing.assert_array_equal(quick(X), g)
    np.testing.assert_array_equal(dn(X), g)


def test_the_quick_tier_optimizes_at_its_levels_and_a_failed_full_compile_keeps_it(
        monkeypatch):
    from types import SimpleNamespace

    from numba.core import config

    from srcgrad.emit import numba_calls, numba_tiers

    # SRCGRAD_NUMBA_TIERS=0: no quick tier (the first call compiles the full code)
    monkeypatch.setenv("SRCGRAD_NUMBA_TIERS", "0")
    uncompiled = SimpleNamespace(typeof_pyval=type, overloads={})  # (tiers would compile it)
    assert numba_calls.Compiled._quick(SimpleNamespace(jitted=uncompiled), (1.0,)) is None
    monkeypatch.setenv("SRCGRAD_NUMBA_TIERS", "1")
    assert numba_tiers.enabled()
    monkeypatch.delenv("SRCGRAD_NUMBA_TIERS")
    assert numba_tiers.enabled()

    class Library:
        seen = []

        def _optimize_functions(self, module):
            self.seen.append(("functions", int(config.OPT)))

        def _optimize_final_module(self):
            self.seen.append(("module", int(config.OPT)))

    saved = int(config.OPT)
    library = Library()
    numba_tiers._quick_library(library)
    library._optimize_functions(None)
    library._optimize_final_module()
    assert Library.seen == [("functions", numba_tiers.QUICK[0]), ("module", numba_tiers.QUICK[1])]
    assert int(config.OPT) == saved and library._srcgrad_levels == numba_tiers.QUICK

    class Failing:
        def compile(self, sig):
            raise RuntimeError("no")

    done = []
    numba_tiers.behind(Failing(), (), lambda: done.append(1))
    numba_tiers.behind(type("Fine", (), {"compile": lambda self, sig: None})(), (),
                       lambda: done.append(2))
    numba_tiers.settle()
    assert done == [2]


def helpers_called_unlinked(dn):
    """runtime/numba_linking.py: the cached helpers' code is not linked into (and optimized
    again in) the derivative's module; its reload list loads them in a later process."""
    from llvmlite import binding

    from srcgrad.runtime import numba_linking

    (result,) = dn.__wrapped__.__srcgrad_numba__.overloads.values()
    reloads = [f for f in result.reload_init if getattr(f, "func", None) is numba_linking.loaded]
    called = {f.args[1] for f in reloads}
    assert {"srcgrad_save", "srcgrad_restore", "_unreduce_cached"} <= called, called
    module = result.library._shared_module or result.library._final_module  # (numba's cache)
    for reload in reloads:
        assert module.get_function(reload.args[3]).is_declaration
    # a helper compiled again under another symbol (its cache written by another process): the
    # symbol the derivative calls becomes an alias of its code
    module, qualname, key, symbol = reloads[0].args
    helper = getattr(sys.modules[module], qualname).overloads[key]
    numba_linking.loaded(module, qualname, key, "srcgrad_test_" + symbol)
    address = helper.library.get_pointer_to_function(helper.fndesc.mangled_name)
    assert binding.address_of_symbol("srcgrad_test_" + symbol) == address != 0


def test_scalar_arguments_value_and_grad_and_hessian():
    vg = srcgrad.value_and_grad(pendulum, wrt=("c", "L"), backend="numba")
    value, (gc, gL) = vg(0.3, 1.5, 1.0)
    pvalue, (pc, pL) = srcgrad.value_and_grad(pendulum, wrt=("c", "L"))(0.3, 1.5, 1.0)
    assert value == pytest.approx(pvalue, rel=1e-14)
    assert (gc, gL) == (pytest.approx(pc, rel=1e-12), pytest.approx(pL, rel=1e-12))
    assert gc == pytest.approx(numeric_grad(pendulum, (0.3, 1.5, 1.0), 0), rel=1e-6)
    assert gL == pytest.approx(numeric_grad(pendulum, (0.3, 1.5, 1.0), 1), rel=1e-6)
    # other argument kinds, each compiled by numba for them from the same module: NumPy scalars,
    # an int theta0 that the loop makes a float (numba types the variable float64, and so does
    # the specialization: its saves go to a float64 array; it was a typing failure)
    for args in ((np.float64(0.3), 1.5, np.float64(1.0)), (0.3, 1.5, 1), (0.3, 1.5, 1.0)):
        value, grads = vg(*args)
        pvalue, pgrads = srcgrad.value_and_grad(pendulum, wrt=("c", "L"))(*args)
        assert value == pytest.approx(pvalue, rel=1e-14)
        assert grads == (pytest.approx(pgrads[0], rel=1e-12), pytest.approx(pgrads[1], rel=1e-12))
    calls = vg.__wrapped__.__globals__["__srcgrad_calls__"]
    assert len(calls.made) == 3 and len({c.path for c in calls.made.values()}) == 1


def test_hessian_of_straight_line_code():
    h = srcgrad.hessian(wave, backend="numba")(0.7, 1.1)
    step = 1e-4
    da = srcgrad.grad(wave)
    assert h == pytest.approx((da(0.7 + step, 1.1) - da(0.7 - step, 1.1)) / (2 * step), rel=1e-6)
    assert h == pytest.approx(srcgrad.hessian(wave)(0.7, 1.1), rel=1e-12)


def test_source_shows_the_module_numba_compiled():
    # before a call: the unspecialized module; after: the one compiled for the argument kinds
    dn = srcgrad.grad(rosen, backend="numba")
    assert "unbroadcast(" in srcgrad.source(dn)
    dn(X, 100.0)
    text = srcgrad.source(dn)
    assert_golden("numba_rosen.py", text)
    auto = srcgrad.grad(rosen, backend="auto")
    auto(X, 100.0)
    assert srcgrad.source(auto) == "# backend='auto' chose numba\n" + text


def test_code_numba_cannot_compile_is_refused_at_transform_time_at_the_users_line():
    with pytest.raises(UnsupportedSyntaxError) as raised:
        srcgrad.grad(with_dict, backend="numba")
    error = raised.value
    assert "backend='numba' cannot compile a dict" in str(error)
    assert error.filename == __file__ and error.line.strip() == 'd = {"a": x}'
    auto = srcgrad.grad(with_dict, backend="auto")
    assert auto(1.5) == 2.0
    assert srcgrad.source(auto).startswith("# backend='auto' chose Python: numba cannot compile "
                                           "a dict")


def test_a_typing_failure_on_the_first_call_is_located_and_auto_runs_python():
    x, w = np.arange(24.0).reshape(2, 3, 4), np.linspace(0.0, 1.0, 4)  # numba's @ is 1-d, 2-d
    with pytest.raises(UnsupportedSyntaxError) as raised:
        srcgrad.grad(projected, wrt=1, backend="numba")(x, w)
    message = str(raised.value)
    assert "`x_matmul_w = x @ w`" in message and "(3-d float64 array, 1-d" in message
    assert raised.value.line.strip() == "return np.sum(x @ w)"
    auto = srcgrad.grad(projected_in_a_loop, wrt=1, backend="auto")
    expected = srcgrad.grad(projected_in_a_loop, wrt=1)(x, w)
    np.testing.assert_array_equal(auto(x, w), expected)
    np.testing.assert_array_equal(auto(x, w), expected)  # these kinds now go to Python directly


def test_auto_runs_a_derivative_without_a_loop_in_python():
    # its time is NumPy's vectorized calls, which numba runs no faster
    auto = srcgrad.grad(projected, wrt=1, backend="auto")
    assert srcgrad.source(auto).startswith("# backend='auto' chose Python: no loop")
    x, w = np.arange(6.0).reshape(2, 3), np.linspace(0.0, 1.0, 3)
    np.testing.assert_array_equal(auto(x, w), srcgrad.grad(projected, wrt=1)(x, w))


def test_without_numba_the_option_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` raises ImportError
    with pytest.raises(SrcgradError, match=r"pip install 'srcgrad\[numba\]'"):
        srcgrad.grad(pendulum, wrt="L", backend="numba")
    auto = srcgrad.grad(pendulum, wrt="L", backend="auto")
    assert "numba is not installed" in srcgrad.source(auto).splitlines()[0]
    assert auto(0.3, 1.5, 1.0) == srcgrad.grad(pendulum, wrt="L")(0.3, 1.5, 1.0)


def test_an_unknown_backend_is_an_error():
    with pytest.raises(SrcgradError, match="backend must be one of"):
        srcgrad.grad(rosen, backend="jax")


def test_transforms_of_a_numba_derivative_read_its_python_code():
    dn = srcgrad.grad(pendulum, backend="numba")
    second = srcgrad.grad(dn)(0.3, 1.5, 1.0)
    assert second == pytest.approx(srcgrad.grad(srcgrad.grad(pendulum))(0.3, 1.5, 1.0), rel=1e-12)


SWEEP = os.environ.get("SRCGRAD_NUMBA_SWEEP") == "1"


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (compiles for minutes)")
@pytest.mark.parametrize("name", ["rosenbrock", "pendulum", "rnn", "logreg", "mlp"])
def test_sweep_over_the_benchmark_workloads(name):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import workloads

    wl = next(w for w in workloads.WORKLOADS if w.name == name)
    args = list(wl.make_inputs().values())
    got = srcgrad.grad(wl.forward, wrt=wl.wrt, backend="numba")(*args)
    expected = srcgrad.grad(wl.forward, wrt=wl.wrt)(*args)
    if len(wl.wrt) == 1:
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _scalar_loop(r, depth, names):
    """A random arithmetic expression of the loop's elements, counter and earlier names."""
    if depth == 0 or r.random() < 0.3:
        return r.choice([*names, "x[i]", "x[i + 1]", "float(i)", "a", "0.5", "k"])
    left, right = _scalar_loop(r, depth - 1, names), _scalar_loop(r, depth - 1, names)
    return r.choice([f"({left}) + ({right})", f"({left}) * ({right})", f"-({left})",
                     f"({left}) / (1.5 + ({right}) ** 2)", f"({left}) ** 2"])


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (random loops)")
@pytest.mark.parametrize("seed", range(40))
def test_random_scalar_loops_recomputed_for_numba_equal_grad(seed, tmp_path):
    # optimize/recompute.py: saves recomputed in the reversed loop, dead forward loops dropped;
    # the code for numba, run in Python, against grad (the first 4 seeds compiled by numba too)
    import importlib.util
    import random

    from srcgrad import transforms
    from srcgrad.analysis.argkinds import signature_kind, stable
    from srcgrad.context import Options
    from srcgrad.derived import unwrap

    r = random.Random(seed)
    body, names = [], []
    for j in range(r.randint(1, 4)):
        body.append(f"        t{j} = {_scalar_loop(r, r.randint(1, 3), names + ['s'] * (j % 2))}")
        names.append(f"t{j}")
    decay = r.choice(["1.0", "0.9"])
    body.append(f"        s = s * {decay} + {r.choice(names)} * {r.choice(names)}")
    path = tmp_path / f"loop{seed}.py"
    path.write_text("def f(x, a):\n    s = 0.0\n    k = a * 0.3\n"
                    "    for i in range(len(x) - 1):\n" + "\n".join(body) + "\n    return s\n")
    spec = importlib.util.spec_from_file_location(f"loop{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, a = np.random.default_rng(seed).uniform(-1.2, 1.2, 7), 0.7
    kinds = tuple(sorted((p, stable(signature_kind(v))) for p, v in (("x", x), ("a", a))))
    for mode in ("grad", "value_and_grad"):
        want = getattr(srcgrad, mode)(module.f, wrt=("x", "a"))(x, a)
        options = Options(kinds=kinds, for_numba=True)
        got = unwrap(transforms.derived(module.f, mode, ("x", "a"), options))(x, a)
        if seed < 4:
            compiled = getattr(srcgrad, mode)(module.f, wrt=("x", "a"), backend="numba")(x, a)
            np.testing.assert_allclose(np.hstack(compiled[-1] if mode != "grad" else compiled),
                                       np.hstack(want[-1] if mode != "grad" else want),
                                       rtol=1e-12)
        if mode != "grad":
            assert np.isclose(got[0], want[0], rtol=1e-12)
            got, want = got[1], want[1]
        np.testing.assert_allclose(np.hstack(got), np.hstack(want), rtol=1e-12, atol=1e-300)


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (two processes importing numba)")
def test_a_second_process_loads_the_compiled_derivative_from_numbas_cache(tmp_path):
    script = (
        "import time, numpy as np, srcgrad\n"
        "from test_numba_backend import pendulum\n"
        "t = time.perf_counter()\n"
        "g = srcgrad.grad(pendulum, backend='numba')(0.3, 1.5, 1.0)\n"
        "print(time.perf_counter() - t, g)\n"
        "import numba\n"
        "from srcgrad.emit import numba_tiers\n"
        "print(len(numba_tiers._QUICK))\n"
        "d = srcgrad.grad(pendulum, backend='numba').__wrapped__.__srcgrad_numba__\n"
        "print(d.stats.cache_hits)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]),
               SRCGRAD_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, check=True).stdout.split("\n") for _ in range(2)]
    assert runs[0][0].split()[1] == runs[1][0].split()[1]  # the same gradient
    # the first process ran the quick tier, and wrote the full code to numba's cache on its way
    # out (emit/numba_tiers.py); the second loaded that, and compiled no quick tier
    assert runs[0][1] == "1" and runs[1][1] == "0"
    assert runs[0][2] == "Counter()" and "1" in runs[1][2]  # compiled, then loaded


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (three processes compiling "
                    "srcgrad's helpers into a numba cache of their own)")
def test_a_cached_derivative_runs_when_its_helpers_were_compiled_again(tmp_path):
    # runtime/numba_linking.py: the derivative's code calls the helpers by their symbols; here
    # they are compiled again in the later processes (their cache entries removed, numba's
    # function counter moved), under other symbols, and the derivative still loads and runs
    script = (
        "import sys, numba, numpy as np, srcgrad\n"
        "for _ in range(int(sys.argv[1])):\n"
        "    numba.njit(lambda v: v + 1)(1.0)\n"
        "from test_numba_backend import iterated, X\n"
        "dn = srcgrad.grad(iterated, backend='numba')\n"
        "print(dn(X).tolist(), '|', srcgrad.grad(iterated)(X).tolist())\n"
        "print(dn.__wrapped__.__srcgrad_numba__.stats.cache_hits)\n"
        "from srcgrad.emit.numba_tiers import settle\n"
        "settle()  # (the full code, compiled behind the first call: emit/numba_tiers.py)\n"
        "from srcgrad.runtime.numba_linking import loaded\n"
        "(r,) = dn.__wrapped__.__srcgrad_numba__.overloads.values()\n"
        "print(sum(getattr(sys.modules[f.args[0]], f.args[1]).overloads[f.args[2]].fndesc"
        ".mangled_name != f.args[3] for f in r.reload_init if getattr(f, 'func', 0) is loaded))\n"
    )
    numba_cache = tmp_path / "numba"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]),
               SRCGRAD_CACHE_DIR=str(tmp_path / "srcgrad"), NUMBA_CACHE_DIR=str(numba_cache))
    runs = []
    for shift in (0, 7, 3):
        for entry in numba_cache.rglob("numba_cached.*"):
            entry.unlink()
        runs.append(subprocess.run([sys.executable, "-c", script, str(shift)],
                                   capture_output=True, text=True, env=env,
                                   check=True).stdout.split("\n"))
    for got, want in (run[0].split("|") for run in runs):
        assert got.strip() == want.strip()  # the gradient Python computes, to the last bit
    assert runs[0][1] == "Counter()" and "1" in runs[1][1] and "1" in runs[2][1]
    assert runs[0][2] == "0" and runs[1][2] != "0" and runs[2][2] != "0"  # other symbols


SCALE = 2.0


def scaled(v):
    return v * v * SCALE


def uses_a_helper_and_a_global(x):
    return scaled(x) + SCALE * x


def test_a_redefined_helper_or_a_rebound_global_runs_what_python_would(monkeypatch):
    dn = srcgrad.grad(uses_a_helper_and_a_global, backend="numba")
    assert "SCALE = 2.0" in srcgrad.source(dn) and "inlined_scaled" not in srcgrad.source(dn)
    assert dn(1.5) == pytest.approx(2 * 1.5 * 2.0 + 2.0, rel=1e-15)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)  # numba compiled 2.0 in
    assert dn(1.5) == pytest.approx(2 * 1.5 * 3.0 + 3.0, rel=1e-15)
    monkeypatch.setattr(sys.modules[__name__], "scaled", lambda v: v * v * v)
    assert dn(1.5) == pytest.approx(3 * 1.5**2 + 3.0, rel=1e-15)


def powers(x, n):
    return x ** n + x ** -1


def test_integer_powers_are_pythons():
    # numba's 2 ** -1 is the integer 0; generated code calls srcgrad_power instead
    dn = srcgrad.grad(powers, backend="numba")
    assert dn(2, -2) == srcgrad.grad(powers)(2, -2) == -2 * 2.0**-3 - 2.0**-2
    assert "srcgrad_power(x, -2)" in srcgrad.source(dn)


def means(x, y):
    return np.mean(x * y) + np.mean(x)


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (numba compiles "
                    "np.broadcast_shapes for seconds)")
def test_means_and_broadcast_shapes():
    x, y = np.linspace(0.0, 1.0, 4), np.linspace(1.0, 2.0, 12).reshape(3, 4)
    got = srcgrad.grad(means, wrt=(0, 1), backend="numba")(x, y)
    for g, e, i in zip(got, srcgrad.grad(means, wrt=(0, 1))(x, y), (0, 1)):
        np.testing.assert_allclose(g, e, rtol=1e-14)
        np.testing.assert_allclose(g, numeric_grad(means, (x, y), i), rtol=1e-6)


def summed_squares(z):
    return np.sum(z * z)


def test_grad_of_a_complex_output_is_refused_in_compiled_code():
    # the seed of a full reduction checks what the output follows from (check_real); numba's
    # unit_seed also returned 1.0 for a complex output
    df = srcgrad.grad(summed_squares, backend="numba")
    np.testing.assert_allclose(df(X), 2 * X)
    with pytest.raises(CompiledValueError, match="real number.*holomorphic_grad"):
        df(X * (1 + 1j))


def log_softmax_loss(z, Y):
    m = z - np.max(z, axis=1, keepdims=True)  # the benchmark's MLP loss
    # (the result does not depend on that max, which is not differentiated: analysis/shifts.py;
    # the max of the last term is)
    return -np.sum(Y * (m - np.log(np.sum(np.exp(m), axis=1, keepdims=True)))) + np.sum(
        np.min(z, axis=0) ** 2) + np.sum(np.max(z, axis=1) ** 2)


def test_reductions_over_an_axis_and_the_adjoint_of_max_with_ties():
    # np.max/np.min/np.sum with axis and keepdims: loops in runtime/numba_helpers.py, as is
    # chooser_grad (a tie splits the gradient: row 0 and column 1 hold two maxima/minima)
    z = np.array([[2.0, 2.0, -1.0], [0.5, -3.0, 1.5], [0.1, -3.0, 0.2], [1.0, 0.0, 4.0]])
    Y = np.eye(4, 3)
    got = srcgrad.grad(log_softmax_loss, backend="numba")(z, Y)
    want = srcgrad.grad(log_softmax_loss)(z, Y)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    # (at a tie central differences see half the gradient on each element: the equal split)
    np.testing.assert_allclose(got, numeric_grad(log_softmax_loss, (z, Y), 0), rtol=1e-6)
    # the implementations of the reductions call the float64 kernels unlinked (numba_linking):
    # the derivative's module only declares them, and its reload list loads them
    from srcgrad.emit import numba_tiers
    from srcgrad.runtime import numba_linking

    numba_tiers.settle()
    dn = srcgrad.grad(log_softmax_loss, backend="numba")
    (result,) = dn.__wrapped__.__srcgrad_numba__.overloads.values()
    reloads = {f.args[1]: f.args[3] for f in result.reload_init
               if getattr(f, "func", None) is numba_linking.loaded}
    assert {"_reduce_f64", "_reduce_f64_kept"} <= set(reloads), reloads
    module = result.library._shared_module or result.library._final_module
    for name in ("_reduce_f64", "_reduce_f64_kept"):
        assert module.get_function(reloads[name]).is_declaration


def test_a_lowering_is_read_back_from_the_disk_cache_while_the_names_mean_the_same(monkeypatch):
    from srcgrad import transforms
    from srcgrad.context import Options
    from srcgrad.derived import unwrap
    from srcgrad.emit import numba_backend

    py_fn = unwrap(transforms.derived(uses_a_helper_and_a_global, "grad", "x", Options()))
    first = numba_backend.lowered(py_fn)
    assert first == numba_backend.lower(py_fn)

    def not_again(*args):
        raise AssertionError("lowered again")

    monkeypatch.setattr(numba_backend, "lower", not_again)
    assert numba_backend.lowered(py_fn) == first  # read back, not lowered again
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)  # a number compiled in: a new key
    with pytest.raises(AssertionError, match="lowered again"):
        numba_backend.lowered(py_fn)


def test_a_missing_implementation_is_said_to_be_srcgrads_only_for_srcgrads_helpers():
    from srcgrad.emit.numba_refusals import _reason

    head = "No implementation of function Function(<function {} at 0x7f00>) found for signature:"
    assert _reason(head.format("unbroadcast")).startswith("srcgrad's numba implementation of "
                                                          "unbroadcast does not take")
    assert _reason(head.format("chooser_grad")).startswith("srcgrad's numba implementation")
    assert _reason(head.format("amax")) == "numba's amax does not take these arguments"


def test_the_cached_unbroadcast_kernels_sum_what_python_sums():
    # what numba compiles once per machine (runtime/numba_helpers.py), run as Python here:
    # every way a 1-d or 2-d operand is broadcast, against the Python helper
    from srcgrad.runtime import numba_helpers as nh
    from srcgrad.runtime.shapes import unbroadcast

    g = np.arange(12.0).reshape(3, 4) ** 1.5
    for kernel, shape in [(nh._same_ndim_2, (3, 4)), (nh._same_ndim_2, (1, 4)),
                          (nh._same_ndim_2, (3, 1)), (nh._same_ndim_2, (1, 1)),
                          (nh._leading_2_1, (4,)), (nh._leading_2_1, (1,)),
                          (nh._same_ndim_1, (12,)), (nh._same_ndim_1, (1,))]:
        gi = g.ravel() if kernel is nh._same_ndim_1 else g
        got, x = kernel.py_func(gi, np.empty(shape)), np.empty(shape)
        assert got.shape == shape
        np.testing.assert_allclose(got, unbroadcast(gi, x), rtol=1e-15)
    for kernel, gi, shape in [(nh._same_ndim_2, g, (2, 4)), (nh._leading_2_1, g, (3,)),
                              (nh._same_ndim_1, g.ravel(), (5,))]:
        with pytest.raises(CompiledValueError, match="do not broadcast"):
            kernel.py_func(gi, np.empty(shape))


def broadcast_in_a_loop(z, b1, b2, c):
    s = 0.0
    for _ in range(2):
        s = s + np.sum(np.tanh(z * b1 + b2 - c) * z)
    return s


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (a compile of seconds)")
def test_operands_broadcast_along_either_axis_through_the_cached_kernels():
    rng = np.random.default_rng(2)
    args = (rng.normal(size=(4, 5)), rng.normal(size=(1, 5)), rng.normal(size=(4, 1)),
            rng.normal(size=5))
    got = srcgrad.grad(broadcast_in_a_loop, wrt=(0, 1, 2, 3), backend="numba")(*args)
    want = srcgrad.grad(broadcast_in_a_loop, wrt=(0, 1, 2, 3))(*args)
    for i, (g, e) in enumerate(zip(got, want)):
        assert g.shape == args[i].shape
        np.testing.assert_allclose(g, e, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(g, numeric_grad(broadcast_in_a_loop, args, i), rtol=1e-6)


def rnn_like(Wx, Wh, b, xs, h):
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh + b)
    return np.sum(h * h)


def test_a_loop_the_python_backend_sums_after_is_lowered_without_those_sums():
    # the Python derivative keeps per-step products for one sum after the loop
    # (optimize/steps.py: matmul_vjp_right_steps, unbroadcast_steps), which numba has no
    # implementation of; backend="numba" lowers the derivative without them (no compile here)
    assert "_steps(" in srcgrad.source(srcgrad.grad(rnn_like, wrt=(0, 1, 2)))
    lowered = srcgrad.source(srcgrad.grad(rnn_like, wrt=(0, 1, 2), backend="numba"))
    assert "_steps(" not in lowered and "unbroadcast(" in lowered


def test_the_module_numba_caches_is_named_after_srcgrads_sources_too(monkeypatch):
    # numba's cache of a module follows that file only, and holds srcgrad's helpers compiled
    # in: a change to srcgrad (its sources' stat, its version) must not load the old code
    from srcgrad.emit import diskcache, numba_backend, numba_calls

    module = numba_backend.lowered(srcgrad.grad(rosen, backend="numba").__srcgrad_python__)
    first = numba_calls.jit(numba, module)[1]
    assert numba_calls.jit(numba, module)[1] == first
    changed = (*diskcache.environment()[:-1], "a changed source")
    monkeypatch.setattr(diskcache, "environment", lambda: changed)
    assert numba_calls.jit(numba, module)[1] != first


def test_one_kernel_splits_ties_for_every_dtype_and_axis():
    # runtime/numba_reductions._split_ties, the one tie-splitting loop of chooser_grad along an
    # axis (float64 and other dtypes), run as Python here against the Python helper
    from srcgrad.runtime.numba_reductions import _split_ties
    from srcgrad.runtime.reductions import chooser_grad

    a = np.array([[2.0, 2.0, -1.0], [0.5, np.nan, 1.5], [0.1, -3.0, 0.1]])
    for dtype in (np.float64, np.float32):
        ad = a.astype(dtype)
        for axis in (0, 1, -1):
            y = np.max(ad, axis=axis)
            d = np.arange(1.0, 4.0).astype(dtype)
            got = _split_ties.py_func(d, ad, y, axis, np.empty(a.shape, dtype))
            want = chooser_grad(d, ad, y, axis)
            assert got.dtype == dtype  # (the out given; Python's is float64 here)
            np.testing.assert_array_equal(got, want.astype(dtype))


# --- checkpoint= with backend="numba" (emit/numba_checkpoint.py) -------------------------------
def decaying(a, n):
    y = a
    for i in range(1, n, 2):  # a range with a start and a stride: i = start + trip * stride
        y = 0.9 * y + 0.1 * np.sin(y * y + 0.01 * i)
    return y


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (two compiles, ~3 s)")
def test_a_checkpointed_loop_runs_its_step_and_its_vjp_compiled():
    g = srcgrad.grad(decaying, checkpoint=3, backend="numba")
    got = g(0.7, 150)  # 75 trips: segments of several trips (schedule.SHORT is 64)
    assert got == pytest.approx(srcgrad.grad(decaying)(0.7, 150), rel=1e-13)
    assert got == pytest.approx(numeric_grad(decaying, (0.7, 150), 0), rel=1e-6)
    shown = srcgrad.source(g)
    assert "reverse_segment(decaying_step" in shown  # the schedule: the Python derivative's
    from srcgrad.derived import unwrap
    from srcgrad.emit.numba_checkpoint import Step

    fn = unwrap(g)
    steps = [c.cell_contents for c in fn.__closure__ if isinstance(c.cell_contents, Step)]
    assert len(steps) == 1 and steps[0].primal.__srcgrad_numba__ is not None


def rnn_steps(Wx, Wh, xs, h):
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h * h)


def test_the_step_numba_types_and_the_invariants_whose_gradients_are_read():
    # no compile: the step as a function of numbers and arrays, and the invariants the
    # derivative reads the cotangents of (xs is read by rows, but no gradient of it is asked)
    import ast

    from srcgrad.derived import unwrap
    from srcgrad.emit import numba_checkpoint
    from srcgrad.frontend.source import GENERATED_SOURCE

    fn = unwrap(srcgrad.grad(rnn_steps, wrt=(0, 1), checkpoint=4))
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    flat, names, count = numba_checkpoint.flat_step(cells["rnn_steps_step"])
    assert_golden("numba_checkpoint_step.py", GENERATED_SOURCE[flat.__code__][0])
    assert (names[:count], sorted(names[count:])) == (["h"], ["Wh", "Wx", "xs"])
    tree = ast.parse(GENERATED_SOURCE[fn.__code__][0])
    read = numba_checkpoint.read_invariants(tree, "rnn_steps_step")
    assert sorted(names[count + k] for k in read) == ["Wh", "Wx"]
    fn_all = unwrap(srcgrad.grad(rnn_steps, wrt=(0, 1, 2), checkpoint=4))
    tree = ast.parse(GENERATED_SOURCE[fn_all.__code__][0])
    assert len(numba_checkpoint.read_invariants(tree, "rnn_steps_step")) == 3


def keeps_a_dict(x, n):
    s = 0.0
    for _ in range(n):
        d = {"v": x}
        x = np.sin(d["v"]) * 1.1
        s = s + np.sum(x)
    return s


def test_a_step_numba_cannot_compile_is_refused_at_its_line_and_auto_runs_python():
    for transform in (srcgrad.grad, srcgrad.hvp):  # (hvp: the step of the gradient of f)
        with pytest.raises(UnsupportedSyntaxError, match="cannot compile a dict") as info:
            transform(keeps_a_dict, checkpoint=2, backend="numba")
        assert info.value.filename == __file__ and info.value.line.strip() == 'd = {"v": x}'
    got = srcgrad.grad(keeps_a_dict, checkpoint=2, backend="auto")(X, 5)
    np.testing.assert_allclose(got, srcgrad.grad(keeps_a_dict)(X, 5), rtol=1e-14)


def scaled_by_out(x, a):
    y = x * 0.5
    for _ in range(3):
        y[0] = y[0] * 1.0
        np.multiply(y, a, out=y)
    return np.sum(y)


def test_a_step_whose_lowering_numba_cannot_do_runs_python_with_auto():
    # numba types `np.multiply(y, a, out=y)` in the step, then its lowering raises
    # NotImplementedError (unsupported keyword arguments), which no `except NumbaError` caught:
    # "auto" crashed where Python runs
    x = np.array([0.3, -0.2, 0.5])
    got = srcgrad.value_and_grad(scaled_by_out, checkpoint=2, backend="auto")(x, 0.7)
    want = srcgrad.value_and_grad(scaled_by_out)(x, 0.7)
    assert got[0] == want[0]
    np.testing.assert_allclose(got[1], want[1], rtol=1e-14)


def strided(x, W, n):
    s = 0.0
    for i in range(2, n, 3):
        x = np.tanh(W @ x) * (1.0 + 0.01 * i)
        s = s + np.sum(x * x)
    return s


def iterated_while(x):
    s = 0.0
    k = 0
    while k < 30:  # a probe counts the trips (Python), the steps are compiled
        x = np.sin(x) * 1.05
        s = s + np.sum(x)
        k = k + 1
    return s


def leaves_early(x, n):
    s = 0.0
    for _ in range(n):
        x = np.cos(x) * 1.1
        s = s + x[0]
        if s > 5.0:
            break
    return s


def two_loops(x, n):
    for _ in range(n):
        x = np.sin(x) + 0.1
    s = 0.0
    for j in range(n):
        s = s + np.sum(x * j)
        x = x * 0.99
    return s


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (compiles for a minute)")
@pytest.mark.parametrize("checkpoint", [2, 5, "auto"])
def test_checkpointed_loops_compiled_by_numba_equal_the_gradient(checkpoint):
    rng = np.random.default_rng(3)
    x, W = rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5
    cases = [(strided, (x, W, 40), (0, 1)), (strided, (x, W, 300), (0, 1)),
             (iterated_while, (x,), 0), (leaves_early, (x, 30), 0), (two_loops, (x, 70), 0),
             (rnn_steps, (W, W.T, rng.normal(size=(20, 2, 3)), np.full((2, 3), 0.1)), (0, 1, 3))]
    for f, args, wrt in cases:
        got = srcgrad.grad(f, wrt=wrt, checkpoint=checkpoint, backend="numba")(*args)
        value, got_v = srcgrad.value_and_grad(f, wrt=wrt, checkpoint=checkpoint,
                                              backend="numba")(*args)
        want = srcgrad.grad(f, wrt=wrt)(*args)
        assert value == pytest.approx(f(*args), rel=1e-13)
        wrts = wrt if isinstance(wrt, tuple) else (wrt,)
        pairs = zip(*(r if isinstance(wrt, tuple) else (r,) for r in (got, got_v, want)))
        for i, (g, gv, e) in zip(wrts, pairs):
            np.testing.assert_allclose(g, e, rtol=1e-11, atol=1e-13)
            np.testing.assert_allclose(gv, e, rtol=1e-11, atol=1e-13)
            if not (type(args[-1]) is int and args[-1] == 300):  # (100 tanh trips: gradients
                # of 1e3, where central differences lose 5 digits)
                np.testing.assert_allclose(g, numeric_grad(f, args, i), rtol=1e-6, atol=1e-7)


def damped(y):
    for _ in range(9):
        y = y - 0.1 * np.sin(y)
    return y


def test_hvp_with_checkpoint_runs_the_steps_jvp_and_the_vjp_of_that_jvp():
    # no compile: the tangent of the checkpointed gradient holds a Step (both names its
    # staleness guard compares), the step's tangent of an advance and the tangent rules of the
    # schedule are numba_checkpoint's, which run the Step's compiled jvp and vjp of that jvp
    from srcgrad.derived import unwrap
    from srcgrad.emit import numba_checkpoint as nc

    fn = unwrap(srcgrad.hvp(damped, checkpoint=3, backend="numba"))
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    step = cells["damped_step"]
    assert isinstance(step, nc.Step) and cells["inlined_damped_step"] is step
    assert cells["damped_step_tangent_state"].step is step
    assert cells["checkpointed_loop_jvp"] is nc.checkpointed_loop_jvp
    assert cells["reverse_segment_jvp"] is nc.reverse_segment_jvp
    assert cells["reverse_segment"] is nc.reverse_segment
    assert "def damped_step_flat_jvp_vjp(" in srcgrad.source(step.again)
    assert "checkpointed_loop_jvp(damped_step" in srcgrad.source(fn)


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (compiles for a minute)")
def test_hvp_and_hessian_with_checkpoint_compiled_by_numba_equal_the_python_backend():
    from second_order_check import hessian_by_differences

    rng = np.random.default_rng(5)
    x, W = rng.normal(size=3), rng.normal(size=(3, 3)) * 0.5
    cases = [(decaying, (0.7, 150), 0), (damped, (0.4,), 0), (strided, (x, W, 40), (0, 1)),
             (iterated_while, (x,), 0), (grows_in_place, (x, 0.1, 20), (0, 1)),
             (rnn_steps, (W, W.T, rng.normal(size=(6, 2, 3)), np.full((2, 3), 0.1)), 1)]
    for f, args, wrt in cases:  # (the RNN: no cotangent of xs, read by rows, is computed)
        copies = lambda: [a.copy() if isinstance(a, np.ndarray) else a for a in args]  # noqa
        for checkpoint in (3, "auto"):
            got = srcgrad.hessian(f, wrt=wrt, checkpoint=checkpoint, backend="numba")(*copies())
            want = srcgrad.hessian(f, wrt=wrt, checkpoint=checkpoint)(*copies())
            square = (lambda h: h) if isinstance(wrt, tuple) else (lambda h: ((h,),))
            for row, row_want in zip(square(got), square(want)):
                for h, e in zip(row, row_want):
                    np.testing.assert_allclose(h, e, rtol=1e-12, atol=1e-13)
            for k, i in enumerate(wrt if isinstance(wrt, tuple) else (wrt,)):
                np.testing.assert_allclose(square(got)[k][k],
                                           hessian_by_differences(f, copies(), i),
                                           rtol=1e-5, atol=1e-6)
            v = [np.full(np.shape(args[i]), 0.5 + k) if np.ndim(args[i]) else 0.5 + k
                 for k, i in enumerate(wrt if isinstance(wrt, tuple) else (wrt,))]
            v = tuple(v) if isinstance(wrt, tuple) else v[0]
            hv = srcgrad.hvp(f, wrt=wrt, checkpoint=checkpoint, backend="numba")(*copies(), v)
            hv_want = srcgrad.hvp(f, wrt=wrt, checkpoint=checkpoint)(*copies(), v)
            for a, b in zip(*(r if isinstance(wrt, tuple) else (r,) for r in (hv, hv_want))):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(args[0], copies()[0])


def grows_in_place(y, a, n):
    for _ in range(n):
        y += a * np.sin(y)  # in place: the checkpointed step copies y (copy_state)
    return np.sum(y * y)


def grows_a_copy(y, a, n):
    return grows_in_place(y.copy(), a, n)  # (central differences: y kept as it was)


def writes_an_element(y, a, n):
    for _ in range(n):
        y[0] = y[0] + a * np.sin(y[1])
        y[1] = y[1] - a * y[0]
    return np.sum(y * y)


def test_a_checkpointed_step_updating_its_state_in_place_copies_it_with_numbas_helper():
    # no compile: the step's copy of the snapshot it was given is srcgrad's numba copy_state
    from srcgrad.derived import unwrap
    from srcgrad.emit import numba_backend, numba_checkpoint

    fn = unwrap(srcgrad.grad(grows_in_place, wrt=(0, 1), checkpoint=2))
    cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))
    flat, _, _ = numba_checkpoint.flat_step(cells["grows_in_place_step"])
    text = numba_backend.lower(flat).text
    assert "from srcgrad.runtime.numba_helpers import copy_state" in text
    assert "y, = copy_state((y,), (a,))" in text  # (a: the invariant, kept)


def test_an_element_write_is_refused_at_the_users_line_as_a_write():
    for options in ({}, {"checkpoint": 2}):
        with pytest.raises(UnsupportedSyntaxError) as raised:
            srcgrad.grad(writes_an_element, wrt=(0, 1), backend="numba", **options)
        error = raised.value
        assert "cannot compile a write into an element or a slice of an array" in str(error)
        assert error.filename == __file__
        assert error.line.strip() == "y[0] = y[0] + a * np.sin(y[1])"
    y = np.array([0.3, 0.7])
    got = srcgrad.grad(writes_an_element, wrt=(0, 1), backend="auto")(y, 0.1, 4)
    want = srcgrad.grad(writes_an_element, wrt=(0, 1))(y, 0.1, 4)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (compiles for seconds)")
def test_an_argument_updated_in_place_compiled_by_numba_equals_the_gradient():
    y = np.array([0.3, 0.7, -0.2])
    want = srcgrad.grad(grows_in_place, wrt=(0, 1))(y, 0.1, 40)
    for options in ({}, {"checkpoint": 3}):
        got = srcgrad.grad(grows_in_place, wrt=(0, 1), backend="numba", **options)(y, 0.1, 40)
        np.testing.assert_array_equal(y, [0.3, 0.7, -0.2])  # the caller's array intact
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        assert got[1] == pytest.approx(want[1], rel=1e-12)
        np.testing.assert_allclose(got[0], numeric_grad(grows_a_copy, (y, 0.1, 40), 0),
                                   rtol=1e-6)
        assert got[1] == pytest.approx(numeric_grad(grows_a_copy, (y, 0.1, 40), 1), rel=1e-6)
    from srcgrad.runtime.numba_helpers import copy_state

    copied = numba.njit(lambda s: copy_state(s))
    a, b = np.ones(2), np.zeros(0)
    got = copied((a, 2.0, b, b))  # (empty arrays share no element)
    assert got[0] is not a and got[1] == 2.0 and np.array_equal(got[0], a)
    with pytest.raises(CompiledValueError, match="hold the same array"):
        copied((a, 2.0, a))


def test_the_optimization_level_asked_for_is_numbas_only_while_the_module_compiles(monkeypatch):
    # no compile: SRCGRAD_NUMBA_OPT read, numba.config.OPT set meanwhile and restored, the module
    # named after the level too (numba's cache never gives one level's code for another)
    from numba.core import config

    from srcgrad.derived import unwrap
    from srcgrad.emit import numba_backend, numba_calls

    monkeypatch.delenv("SRCGRAD_NUMBA_OPT", raising=False)
    assert numba_calls.opt_level() is None
    monkeypatch.setenv("SRCGRAD_NUMBA_OPT", "0")
    assert numba_calls.opt_level() == 0
    saved = int(config.OPT)
    with pytest.raises(KeyError):
        with numba_calls.at_level(0):
            assert int(config.OPT) == 0
            raise KeyError
    assert int(config.OPT) == saved
    with numba_calls.at_level(None):
        assert int(config.OPT) == saved
    monkeypatch.setenv("SRCGRAD_NUMBA_OPT", "fast")
    with pytest.raises(SrcgradError, match="SRCGRAD_NUMBA_OPT must be 0, 1, 2 or 3"):
        numba_calls.opt_level()
    lowered = numba_backend.lower(unwrap(srcgrad.grad(rosen)))
    plain, plain_path = numba_calls.jit(numba, lowered)
    quick, quick_path = numba_calls.jit(numba, lowered, 0)
    assert plain_path != quick_path and plain is not quick
    with open(quick_path) as handle:
        text = handle.read()
    assert text == lowered.text + "# compiled at numba's optimization level 0 (SRCGRAD_NUMBA_OPT)\n"


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (a compile of seconds)")
def test_a_derivative_compiled_at_level_0_equals_the_gradient(monkeypatch):
    import warnings

    monkeypatch.setenv("SRCGRAD_NUMBA_OPT", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error", numba.NumbaWarning)  # (not offered to numba's cache)
        got = srcgrad.grad(pendulum, wrt=(0, 1, 2), backend="numba")(0.3, 1.5, 1.0)
    want = srcgrad.grad(pendulum, wrt=(0, 1, 2))(0.3, 1.5, 1.0)
    np.testing.assert_allclose(got, want, rtol=1e-13)


# --- runtime/numba_cached.py ---------------------------------------------------------------------
def test_numbas_cache_of_the_cached_helpers_is_stamped_with_srcgrads_sources(monkeypatch):
    # they compile implementations of several files, and numba's cache checks only their own
    from srcgrad.emit import diskcache
    from srcgrad.runtime import numba_cached

    for fn in (numba_cached._unreduce_cached, numba_cached.srcgrad_matmul,
               numba_cached.srcgrad_tanh, numba_cached._numpy_exp_2d):
        assert fn._cache._cache_file._source_stamp[1] == numba_cached.STAMP
    changed = (*diskcache.environment()[:-1], "a changed source", None)
    monkeypatch.setattr(diskcache, "environment", lambda: changed)
    assert numba_cached._stamp() != numba_cached.STAMP


def activations(x, A):
    return np.sum(np.tanh(A) * np.exp(A * 0.1)) + np.sum(np.exp(np.tanh(x)))


def test_tanh_and_exp_of_arrays_are_lowered_to_numpys_own_past_a_size():
    # no compile: the text numba compiles calls srcgrad_tanh / srcgrad_exp (numba_cached.py)
    lowered = srcgrad.source(srcgrad.grad(activations, wrt=(0, 1), backend="numba"))
    code = [line for line in lowered.splitlines() if not line.lstrip().startswith("#")]
    assert any("srcgrad_tanh(A)" in line for line in code)
    assert not any("np.tanh(" in line or "np.exp(" in line for line in code)
    assert "from srcgrad.runtime.numba_cached import" in lowered and "srcgrad_exp(" in lowered


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (a compile of seconds)")
@pytest.mark.parametrize("n", [5, 150])  # below and past numba_cached.OBJMODE_SIZE (1-d and 2-d)
def test_tanh_and_exp_equal_numpys_below_and_past_the_size(n):
    rng = np.random.default_rng(n)
    x, A = rng.normal(size=n), rng.normal(size=(n, 3))
    value, got = srcgrad.value_and_grad(activations, wrt=(0, 1), backend="numba")(x, A)
    assert value == pytest.approx(activations(x, A), rel=1e-14)
    want = srcgrad.grad(activations, wrt=(0, 1))(x, A)
    for i in range(2):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(got[i], numeric_grad(activations, (x, A), i), rtol=1e-5,
                                   atol=1e-9)


@pytest.mark.skipif(not SWEEP, reason="set SRCGRAD_NUMBA_SWEEP=1 (numba types a step)")
def test_a_step_numba_cannot_type_is_refused_at_the_users_line_when_called():
    # the gradient of xs, read by rows: getitem_grad of a row has no numba implementation
    rng = np.random.default_rng(4)
    W, xs, h = rng.normal(size=(3, 3)), rng.normal(size=(6, 2, 3)), np.full((2, 3), 0.1)
    with pytest.raises(UnsupportedSyntaxError, match="getitem_grad") as info:
        srcgrad.grad(rnn_steps, wrt=(0, 1, 2), checkpoint=2, backend="numba")(W, W.T, xs, h)
    assert info.value.filename == __file__
    assert info.value.line.strip() == "h = np.tanh(xs[t] @ Wx + h @ Wh)"
    got = srcgrad.grad(rnn_steps, wrt=(0, 1, 2), checkpoint=2, backend="auto")(W, W.T, xs, h)
    for g, e in zip(got, srcgrad.grad(rnn_steps, wrt=(0, 1, 2))(W, W.T, xs, h)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
