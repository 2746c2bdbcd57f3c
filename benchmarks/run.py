"""Benchmark srcgrad against hand-written NumPy gradients and other AD tools.

    python benchmarks/run.py [--quick] [--json PATH] [--workloads a,b] [--tools x,y]

Everything runs in one process with one BLAS / intra-op thread. See benchmarks/README.md for
what the columns mean.
"""

import os

# Thread counts must be fixed before NumPy, JAX or PyTorch load their thread pools.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
):
    os.environ[_var] = "1"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
).strip()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# tangent-ad keeps generated code in an on-disk cache by default; its transform time is only
# comparable with srcgrad's cold time without it.
os.environ["TANGENT_DISK_CACHE"] = "0"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import workloads as W  # noqa: E402

RTOL = 1e-6
ATOL = 1e-8

# Column order of every table. "forward" is the plain NumPy function, not a gradient.
TOOLS = ("hand", "srcgrad", "srcgrad_spec", "srcgrad_numba", "numba_fwd", "autograd",
         "jax_eager", "jax_jit", "torch", "tangent")
# Systems that are not a gradient: timed, their value checked against the forward's.
FORWARD_TOOLS = ("numba_fwd",)
LABELS = {
    "forward": "forward",
    "hand": "hand",
    "srcgrad": "srcgrad",
    "srcgrad_spec": "srcgrad spec",
    "srcgrad_numba": "srcgrad[numba]",
    "numba_fwd": "numba fwd",
    "autograd": "autograd",
    "jax_eager": "jax eager",
    "jax_jit": "jax jit",
    "torch": "torch",
    "tangent": "tangent",
}
# Tools whose allocations go through NumPy, so tracemalloc sees them.
MEMORY_TOOLS = ("forward", "hand", "srcgrad", "autograd", "tangent")


# ------------------------------------------------------------------------------------------
# small helpers
# ------------------------------------------------------------------------------------------


def first_line(exc):
    text = str(exc).strip()
    line = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f}us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f}ms"
    return f"{seconds:.2f}s"


def fmt_ratio(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}x"
    if x >= 10:
        return f"{x:.1f}x"
    if x < 0.1:  # (srcgrad[numba] / jax jit: 0.0026x, not 0.00x)
        return f"{x:.2g}x"
    return f"{x:.2f}x"


def fmt_bytes(n):
    if n is None:
        return "-"
    if n < 1024:
        return f"{n}B"
    if n < 1024**2:
        return f"{n / 1024:.1f}KiB"
    return f"{n / 1024**2:.2f}MiB"


def print_table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join(
        str(h).ljust(w) if i == 0 else str(h).rjust(w)
        for i, (h, w) in enumerate(zip(header, widths))
    )
    print(line)
    print("-" * len(line))
    for row in rows:
        print(
            "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(row, widths))
            )
        )


def as_grad_tuple(result, n):
    """Normalise a tool's result to a tuple of n gradients."""
    if n == 1:
        if isinstance(result, (tuple, list)) and len(result) == 1:
            return (result[0],)
        return (result,)
    return tuple(result)


def to_numpy(values):
    out = []
    for v in values:
        if hasattr(v, "detach"):  # torch tensor
            v = v.detach().cpu().numpy()
        out.append(np.asarray(v, dtype=np.float64))
    return tuple(out)


def compare(got, ref):
    """Return None when every gradient matches, else a description of the mismatch."""
    if len(got) != len(ref):
        return f"{len(got)} gradients returned, expected {len(ref)}"
    for i, (g, r) in enumerate(zip(got, ref)):
        if g.shape != r.shape:
            return f"gradient {i}: shape {g.shape}, expected {r.shape}"
        if not np.allclose(g, r, rtol=RTOL, atol=ATOL):
            err = np.max(np.abs(g - r))
            scale = max(np.max(np.abs(r)), 1e-300)
            return f"gradient {i}: max abs err {err:.3g} (max |ref| {scale:.3g})"
    return None


def check_hand_gradient(wl, args, hand):
    """Central-difference check of the hand-written gradient along a random direction."""
    rng = np.random.default_rng(1234)
    positions = wl.wrt_positions()
    dirs = {p: rng.standard_normal(np.shape(args[p])) for p in positions}
    eps = 1e-6

    def shifted(sign):
        a = list(args)
        for p in positions:
            a[p] = args[p] + sign * eps * (dirs[p] if np.ndim(args[p]) else float(dirs[p]))
        return float(wl.forward(*a))

    fd = (shifted(1.0) - shifted(-1.0)) / (2 * eps)
    exact = sum(float(np.sum(np.asarray(g) * dirs[p])) for g, p in zip(hand, positions))
    return abs(fd - exact) / max(abs(exact), 1e-12)


# ------------------------------------------------------------------------------------------
# timing
# ------------------------------------------------------------------------------------------


class Timing:
    def __init__(self, quick):
        self.target = 0.02 if quick else 0.2  # seconds per repeat, like timeit's autorange
        self.repeats = 3 if quick else 7
        self.budget = 3.0 if quick else 10.0  # cap on the total of the repeats, seconds
        self.min_repeats = 3

    def measure(self, call):
        timer = timeit.Timer(call)
        number = 1
        while True:
            elapsed = timer.timeit(number)
            if elapsed >= self.target or number >= 10**7:
                break
            number = number * 10 if elapsed * 10 < self.target else number * 2
        per_repeat = elapsed
        repeats = self.repeats
        if per_repeat * repeats > self.budget:
            repeats = max(self.min_repeats, int(self.budget / per_repeat))
        times = [t / number for t in timer.repeat(repeat=repeats, number=number)]
        return {
            "median_s": statistics.median(times),
            "min_s": min(times),
            "times_s": times,
            "number": number,
            "repeats": repeats,
        }


    def paired(self, calls, rounds=None):
        """Round-robin timing of several calls: each round times every call once, so load that
        drifts over the run hits all of them alike. Returns per-call lists of per-round times.

        Timed in CPU time of this process (``time.process_time``), not wall time: on a shared
        machine (load 15 on 2 cores) wall-clock ratios of consecutive runs differed by up to
        7x, since a call's wall time counts the time other processes held the core."""
        rounds = rounds or (5 if self.repeats <= 3 else 21)
        numbers = {}
        for key, call in calls.items():
            timer = timeit.Timer(call, timer=time.process_time)
            number = 1
            while timer.timeit(number) < self.target / 10 and number < 10**6:
                number *= 2
            numbers[key] = (timer, number)
        times = {key: [] for key in calls}
        faults = {key: 0 for key in calls}
        order = list(numbers)
        shuffler = random.Random(0)
        for _ in range(rounds):
            # a new order of the systems each round: none always runs first (warm caches) or
            # right after another (its garbage)
            shuffler.shuffle(order)
            for key in order:
                timer, number = numbers[key]
                before = minor_faults()
                times[key].append(timer.timeit(number) / number)
                if before is not None:
                    faults[key] += minor_faults() - before
        self.rounds_taken = rounds
        self.faults_per_call = {key: faults[key] / (rounds * numbers[key][1]) for key in calls}
        return times


def settle_allocator():
    """Allocate and free 30 MiB once, before any workload, so that every workload meets the
    allocator in the same state. glibc's malloc serves a block above its mmap threshold (128 KiB
    at start) with a fresh mmap, whose pages each call faults in again; freeing such a block
    raises the threshold to its size (up to 32 MiB) and the trim threshold to twice that, for
    the rest of the process. So the first workload that freed a large array made the medium
    arrays of every later one cheaper: the hand-written RNN gradient (two 200 KiB arrays a call)
    took 119 page faults a call and 810-910 us when it ran first, none and 580-610 us after
    logistic regression or the MLP, while srcgrad's (small arrays only) did not change. After
    this call the order of the workloads no longer matters: each is measured in the state a
    NumPy program is in once it has freed one large array (``--cold-allocator`` skips it)."""
    big = np.ones(30 * 2**20 // 8)
    del big


def minor_faults():
    """The minor page faults of this process so far (None where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def paired_ratio(times, numerator, denominator):
    """The median over rounds of the per-round ratio of two paired timings."""
    return statistics.median(a / b for a, b in zip(times[numerator], times[denominator]))


def peak_extra_bytes(call):
    """Peak memory allocated (and traced) during one call, above what was live before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak - before


# ------------------------------------------------------------------------------------------
# tools: each "prepare" returns (zero-argument call, converter to a tuple of ndarrays, extra)
# ------------------------------------------------------------------------------------------


class Skip(Exception):
    """The tool is not available at all."""


def load_srcgrad():
    try:
        mod = importlib.import_module("srcgrad")
        mod.grad  # noqa: B018 - raises AttributeError while the package is incomplete
    except Exception:  # noqa: BLE001
        for name in [m for m in sys.modules if m == "srcgrad" or m.startswith("srcgrad.")]:
            del sys.modules[name]
        if str(REPO) not in sys.path:
            sys.path.insert(0, str(REPO))
        mod = importlib.import_module("srcgrad")
    from srcgrad import grad, value_and_grad  # noqa: F401 - the public API must import

    return mod


class Peers:
    """Lazily imports each peer once; remembers why one is unavailable."""

    def __init__(self):
        self.modules = {}
        self.unavailable = {}
        self.versions = {}

    def get(self, tool):
        if tool in self.unavailable:
            raise Skip(self.unavailable[tool])
        if tool in self.modules:
            return self.modules[tool]
        try:
            mod = self._load(tool)
        except Exception as exc:  # noqa: BLE001
            self.unavailable[tool] = first_line(exc)
            raise Skip(self.unavailable[tool]) from exc
        self.modules[tool] = mod
        return mod

    def _load(self, tool):
        if tool == "srcgrad":
            mod = load_srcgrad()
            self.versions["srcgrad"] = getattr(mod, "__version__", "?") + f" ({mod.__path__[0]})"
            return mod
        if tool == "autograd":
            import autograd
            import autograd.numpy as anp

            self.versions["autograd"] = _dist_version("autograd")
            return (autograd, anp)
        if tool in ("jax_eager", "jax_jit"):
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)
            self.versions["jax"] = f"{jax.__version__} (jaxlib {_dist_version('jaxlib')})"
            return (jax, jnp)
        if tool == "torch":
            import torch

            torch.set_num_threads(1)
            try:
                torch.set_num_interop_threads(1)
            except RuntimeError:
                pass
            import torch_workloads

            self.versions["torch"] = torch.__version__
            return (torch, torch_workloads)
        if tool == "srcgrad_spec":
            return self.get("srcgrad")
        if tool == "srcgrad_numba":
            import numba

            mod = self.get("srcgrad")
            self.versions["numba"] = numba.__version__
            return mod
        if tool == "numba_fwd":
            import numba

            self.versions["numba"] = numba.__version__
            return numba
        if tool == "tangent":
            import tangent

            self.versions["tangent"] = _dist_version("tangent-ad")
            return tangent
        raise ValueError(tool)


def _dist_version(name):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def prepare(tool, wl, args, peers):
    n = len(wl.wrt)
    positions = wl.wrt_positions()
    argnum = positions[0] if n == 1 else positions
    extra = {}

    if tool == "hand":
        return (lambda: wl.hand_grad(*args)), to_numpy, extra

    if tool == "srcgrad":
        sg = peers.get("srcgrad")
        wrt = wl.wrt[0] if n == 1 else wl.wrt
        t0 = time.perf_counter()
        df = sg.grad(wl.forward, wrt=wrt)
        extra["prepare_s"] = time.perf_counter() - t0
        return (lambda: df(*args)), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    if tool == "srcgrad_spec":
        # srcgrad.specialize: generated again for the kinds of the first call's arguments
        sg = peers.get("srcgrad")
        wrt = wl.wrt[0] if n == 1 else wl.wrt
        t0 = time.perf_counter()
        df = sg.specialize(sg.grad(wl.forward, wrt=wrt))
        df(*args)
        extra["prepare_s"] = time.perf_counter() - t0
        return (lambda: df(*args)), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    if tool == "srcgrad_numba":
        sg = peers.get("srcgrad_numba")
        wrt = wl.wrt[0] if n == 1 else wl.wrt
        t0 = time.perf_counter()
        df = sg.grad(wl.forward, wrt=wrt, backend="numba")
        df(*args)  # numba compiles on the first call (or loads its on-disk cache)
        extra["prepare_s"] = time.perf_counter() - t0
        _numba_settled()
        return (lambda: df(*args)), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    if tool == "numba_fwd":
        numba = peers.get("numba_fwd")
        t0 = time.perf_counter()
        fwd = numba.njit(wl.forward)
        fwd(*args)
        extra["compile_s"] = time.perf_counter() - t0
        return (lambda: fwd(*args)), float, extra

    if tool == "autograd":
        autograd, anp = peers.get("autograd")
        df = autograd.grad(W.rebind_numpy(wl.forward, anp), argnum)
        return (lambda: df(*args)), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    if tool in ("jax_eager", "jax_jit"):
        jax, jnp = peers.get(tool)
        jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        df = jax.grad(W.rebind_numpy(wl.forward, jnp), argnums=argnum)
        if tool == "jax_jit":
            t0 = time.perf_counter()
            df = jax.jit(df).lower(*jargs).compile()
            extra["compile_s"] = time.perf_counter() - t0
        block = jax.block_until_ready
        return (lambda: block(df(*jargs))), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    if tool == "torch":
        torch, tw = peers.get("torch")
        fwd = tw.FORWARDS[wl.name]
        targs = [torch.as_tensor(a, dtype=torch.float64).clone() for a in args]
        leaves = []
        for p in positions:
            targs[p].requires_grad_(True)
            leaves.append(targs[p])
        grad = torch.autograd.grad
        return (lambda: grad(fwd(*targs), leaves)), to_numpy, extra

    if tool == "tangent":
        tangent = peers.get("tangent")
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # tangent's generated code contains `if 1 is None:`; not our business.
            warnings.simplefilter("ignore", SyntaxWarning)
            if callable(getattr(tangent, "clear_cache", None)):
                tangent.clear_cache()
            df = tangent.grad(wl.forward, wrt=positions)
        extra["prepare_s"] = time.perf_counter() - t0
        return (lambda: df(*args)), (lambda r: to_numpy(as_grad_tuple(r, n))), extra

    raise ValueError(tool)


# ------------------------------------------------------------------------------------------
# srcgrad transform time
# ------------------------------------------------------------------------------------------


class FreshFunctions:
    """Makes never-seen-before copies of a workload function: its source, under a new name, in
    a new module file, so that no cache keyed on the function, its code or its text can hit.
    (The workload functions use no global but ``np``.)"""

    def __init__(self, directory):
        self.directory = Path(directory)
        self.count = 0

    def make(self, fn):
        self.count += 1
        new_name = f"{fn.__name__}_fresh{self.count}"
        body = re.sub(rf"^def {fn.__name__}\(", f"def {new_name}(", inspect.getsource(fn))
        mod_name = f"_srcgrad_bench_fresh{self.count}"
        path = self.directory / f"{mod_name}.py"
        path.write_text("import numpy as np\n\n\n" + body)
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        spec.loader.exec_module(module)
        return getattr(module, new_name)


def _warm_up_target(x):
    return x * x


def srcgrad_transform_times(wl, args, peers, fresh):
    sg = peers.get("srcgrad")
    cleared = None
    for name in ("clear_cache", "cache_clear", "reset_cache"):
        if callable(getattr(sg, name, None)):
            getattr(sg, name)()
            cleared = name
            break
    fn = fresh.make(wl.forward)
    wrt = wl.wrt[0] if len(wl.wrt) == 1 else wl.wrt
    out = {"cache_cleared_with": cleared, "fresh_function": fn.__name__}
    for label in ("cold", "cached"):
        t0 = time.perf_counter()
        df = sg.grad(fn, wrt=wrt)
        t1 = time.perf_counter()
        df(*args)
        t2 = time.perf_counter()
        out[f"{label}_grad_s"] = t1 - t0
        out[f"{label}_first_call_s"] = t2 - t1
        out[f"{label}_total_s"] = t2 - t0
    return out


def _numba_settled():
    """The fully optimized code numba compiles behind a first call (srcgrad/emit/numba_tiers.py)
    waited for: the calls timed run it."""
    from srcgrad.emit import numba_tiers

    numba_tiers.settle()


NUMBA_SECOND_PROCESS = """\
import importlib.util, sys, time
spec = importlib.util.spec_from_file_location({module!r}, {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
sys.path.insert(0, {repo!r})
import srcgrad, numba
sys.path.insert(0, {here!r})
import workloads
args = list(workloads.{inputs}().values())
fn = getattr(module, {name!r})
if {warm!r}:  # numba's start-up paid first, by a function of its own (loaded from its cache)
    sys.path.insert(0, {warm!r})
    import numba_warm_up
    numba.njit(cache=True)(numba_warm_up.f)(1.0)
t0 = time.perf_counter()
df = srcgrad.grad(fn, wrt={wrt!r}, backend="numba")
df(*args)
print(time.perf_counter() - t0)
"""


def srcgrad_numba_first_calls(wl, args, peers, fresh):
    """grad(f, backend="numba") + its first call for a never-seen function (transform and
    numba compile), then the same in a second process (srcgrad's and numba's disk caches warm;
    the imports of srcgrad and numba are not counted)."""
    sg = peers.get("srcgrad_numba")
    fn = fresh.make(wl.forward)
    wrt = wl.wrt[0] if len(wl.wrt) == 1 else wl.wrt
    t0 = time.perf_counter()
    sg.grad(fn, wrt=wrt, backend="numba")(*args)
    out = {"cold_total_s": time.perf_counter() - t0}
    _numba_settled()  # (numba's cache then holds the full code for the second process)
    module = sys.modules[fn.__module__]
    import subprocess
    import tempfile

    warm = os.path.join(tempfile.gettempdir(), "srcgrad-bench-numba-warm-up")
    os.makedirs(warm, exist_ok=True)
    with open(os.path.join(warm, "numba_warm_up.py"), "w") as handle:
        handle.write("def f(x):\n    return x + 1.0\n")
    for key, directory in (("warm_second_process_s", ""),
                           ("warm_second_process_srcgrad_s", warm)):
        script = NUMBA_SECOND_PROCESS.format(
            module=module.__name__, path=module.__file__, repo=str(REPO), here=str(HERE),
            inputs=wl.make_inputs.__name__, name=fn.__name__, wrt=wrt, warm=directory,
        )
        # bytecode written and read, as for an installed package (srcgrad's numba modules are
        # imported by the first grad(backend="numba"), inside the time)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True, env=env)
        out[key] = float(done.stdout.split()[-1])
    return out


# ------------------------------------------------------------------------------------------
# main loop
# ------------------------------------------------------------------------------------------


def run_workload(wl, tools, peers, timing, fresh, notes):
    print(f"\n== {wl.name}: {wl.description}", flush=True)
    inputs = wl.make_inputs()
    args = [inputs[k] for k in wl.arg_names()]
    rec = {"description": wl.description, "wrt": list(wl.wrt), "tools": {}}

    value = wl.forward(*args)
    rec["forward_value"] = float(value)
    rec["forward"] = timing.measure(lambda: wl.forward(*args))
    fwd_s = rec["forward"]["median_s"]
    print(f"  forward    {fmt_time(fwd_s)}   (value {float(value):.6g})", flush=True)

    ref = to_numpy(wl.hand_grad(*args))
    fd_err = check_hand_gradient(wl, args, ref)
    rec["hand_vs_finite_difference_rel_err"] = fd_err
    if fd_err > 1e-5:
        msg = f"{wl.name}: hand-written gradient disagrees with finite differences ({fd_err:.3g})"
        print(f"  WARNING {msg}")
        notes.append(msg)

    calls = {}
    for tool in tools:
        entry = {}
        rec["tools"][tool] = entry
        try:
            call, convert, extra = prepare(tool, wl, args, peers)
            entry.update(extra)
            got = convert(call())
        except Skip as exc:
            # srcgrad is the subject, not an optional peer: its absence is a failure.
            entry["status"] = f"{'failed' if tool == 'srcgrad' else 'skipped'}: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001
            entry["status"] = f"failed: {first_line(exc)}"
            print(f"  {LABELS[tool]:<10} failed: {first_line(exc)}", flush=True)
            notes.append(f"{tool} on {wl.name}: failed: {first_line(exc)}")
            continue
        if tool in FORWARD_TOOLS:
            mismatch = compare((np.asarray(got),), (np.asarray(float(value)),))
        else:
            mismatch = compare(got, ref)
        if mismatch:
            entry["status"] = f"WRONG: {mismatch}"
            print(f"  {LABELS[tool]:<10} WRONG GRADIENT: {mismatch}  (not timed)", flush=True)
            notes.append(f"{tool} on {wl.name}: WRONG GRADIENT: {mismatch}")
            continue
        try:
            entry.update(timing.measure(call))
        except Exception as exc:  # noqa: BLE001
            entry["status"] = f"failed: {first_line(exc)} (while timing)"
            notes.append(f"{tool} on {wl.name}: failed while timing: {first_line(exc)}")
            continue
        entry["status"] = "ok"
        entry["ratio_to_forward"] = entry["median_s"] / fwd_s
        calls[tool] = call
        more = ""
        if "compile_s" in entry:
            more = f"   (compile {fmt_time(entry['compile_s'])})"
        if tool == "srcgrad_numba":
            more = f"   (grad() + first call {fmt_time(entry['prepare_s'])})"
        print(
            f"  {LABELS[tool]:<10} {fmt_time(entry['median_s'])}"
            f"   {fmt_ratio(entry['ratio_to_forward'])} forward{more}",
            flush=True,
        )

    sg = rec["tools"].get("srcgrad", {})
    if sg.get("status") == "ok":
        rec["srcgrad_over_peer"] = {
            t: sg["median_s"] / e["median_s"]
            for t, e in rec["tools"].items()
            if t != "srcgrad" and e.get("status") == "ok"
        }
        # The ratios the targets are stated in, measured again in interleaved rounds (forward,
        # hand, srcgrad, forward, ...) so that a shared machine's drifting load cancels out.
        together = {"forward": lambda: wl.forward(*args)}
        together.update({t: calls[t] for t in ("hand", "srcgrad", "srcgrad_spec", "srcgrad_numba",
                                               "numba_fwd", "jax_jit") if t in calls})
        times = timing.paired(together)
        rec["paired"] = {k: statistics.median(v) for k, v in times.items()}
        rec["paired_rounds"] = timing.rounds_taken
        rec["paired_minor_faults_per_call"] = timing.faults_per_call
        for t in together:
            if t != "forward":
                ratio = paired_ratio(times, t, "forward")
                rec["tools"][t]["ratio_to_forward"] = ratio
                rec["tools"][t]["ratio_to_forward_unpaired"] = (
                    rec["tools"][t]["median_s"] / fwd_s
                )
        if "hand" in together:
            rec["srcgrad_over_peer"]["hand"] = paired_ratio(times, "srcgrad", "hand")
        if "srcgrad_spec" in together:
            rec["srcgrad_spec_over"] = {
                t: paired_ratio(times, "srcgrad_spec", t) for t in ("hand", "srcgrad")
                if t in together
            }
        if "numba_fwd" in together and "srcgrad_numba" in together:
            rec["srcgrad_numba_over_numba_fwd"] = paired_ratio(times, "srcgrad_numba",
                                                               "numba_fwd")
            print(f"  interleaved: srcgrad[numba] / numba fwd "
                  f"{fmt_ratio(rec['srcgrad_numba_over_numba_fwd'])}", flush=True)
        if "jax_jit" in together and "srcgrad_numba" in together:
            rec["srcgrad_numba_over_jax_jit"] = paired_ratio(times, "srcgrad_numba", "jax_jit")
            print(f"  interleaved: srcgrad[numba] / jax jit "
                  f"{fmt_ratio(rec['srcgrad_numba_over_jax_jit'])}", flush=True)
        print(
            f"  interleaved ({timing.rounds_taken} rounds, order shuffled, CPU time): "
            + ", ".join(
                f"{LABELS[t]} {fmt_ratio(rec['tools'][t]['ratio_to_forward'])} forward"
                for t in together if t != "forward"
            )
            + (
                f", srcgrad/hand {fmt_ratio(rec['srcgrad_over_peer']['hand'])}"
                if "hand" in together else ""
            ),
            flush=True,
        )
    if "srcgrad" in tools:
        try:
            rec["srcgrad_transform"] = srcgrad_transform_times(wl, args, peers, fresh)
            st = rec["srcgrad_transform"]
            print(
                f"  srcgrad transform: cold {fmt_time(st['cold_total_s'])},"
                f" cached {fmt_time(st['cached_total_s'])}",
                flush=True,
            )
        except Skip as exc:
            rec["srcgrad_transform"] = f"failed: {exc}"
        except Exception as exc:  # noqa: BLE001
            rec["srcgrad_transform"] = f"failed: {first_line(exc)}"

    if "srcgrad_numba" in calls:
        try:
            rec["srcgrad_numba_first_call"] = srcgrad_numba_first_calls(wl, args, peers, fresh)
            st = rec["srcgrad_numba_first_call"]
            print(
                f"  srcgrad[numba] first call: cold {fmt_time(st['cold_total_s'])}, second "
                f"process (warm caches) {fmt_time(st['warm_second_process_s'])}, of which "
                f"srcgrad's (numba started by another function first) "
                f"{fmt_time(st['warm_second_process_srcgrad_s'])}",
                flush=True,
            )
        except Exception as exc:  # noqa: BLE001
            rec["srcgrad_numba_first_call"] = f"failed: {first_line(exc)}"

    if wl.vectorized:
        mem = {"forward": peak_extra_bytes(lambda: wl.forward(*args))}
        for tool in MEMORY_TOOLS:
            if tool in calls:
                mem[tool] = peak_extra_bytes(calls[tool])
        rec["peak_extra_bytes"] = mem
        print(
            "  peak extra memory: "
            + ", ".join(f"{LABELS[t]} {fmt_bytes(b)}" for t, b in mem.items()),
            flush=True,
        )
    return rec


def cell(entry):
    status = entry.get("status", "")
    if status == "ok":
        return None
    if not status:
        return "-"
    if status.startswith("skipped"):
        return "skip"
    if status.startswith("WRONG"):
        return "WRONG"
    return "FAIL"


def print_summary(results, tools):
    names = list(results["workloads"])
    wls = results["workloads"]

    rows = []
    for name in names:
        rec = wls[name]
        row = [name, fmt_time(rec["forward"]["median_s"])]
        for t in tools:
            e = rec["tools"][t]
            row.append(cell(e) or fmt_time(e["median_s"]))
        rows.append(row)
    print_table(
        "Median time per call (one thread)",
        ["workload", "forward"] + [LABELS[t] for t in tools],
        rows,
    )

    rows = []
    for name in names:
        rec = wls[name]
        row = [name]
        for t in tools:
            e = rec["tools"][t]
            row.append(cell(e) or fmt_ratio(e["ratio_to_forward"]))
        rows.append(row)
    print_table(
        "Gradient time / NumPy forward time (hand, srcgrad: interleaved with the forward)",
        ["workload"] + [LABELS[t] for t in tools], rows
    )

    peers = [t for t in tools if t != "srcgrad"]
    if "srcgrad" in tools:
        rows = []
        for name in names:
            rec = wls[name]
            sg = rec["tools"]["srcgrad"]
            row = [name]
            for t in peers:
                e = rec["tools"][t]
                ratio = rec.get("srcgrad_over_peer", {}).get(t)
                row.append(cell(sg) or cell(e) or fmt_ratio(ratio))
            rows.append(row)
        print_table(
            "srcgrad time / peer time (below 1 = srcgrad faster; hand: interleaved)",
            ["workload"] + [LABELS[t] for t in peers],
            rows,
        )

    if "srcgrad_spec" in tools:
        rows = []
        for name in names:
            rec = wls[name]
            sp = rec["tools"]["srcgrad_spec"]
            over = rec.get("srcgrad_spec_over", {})
            row = [name, cell(sp) or fmt_time(sp["median_s"])]
            row += [cell(sp) or fmt_ratio(sp.get("ratio_to_forward"))]
            row += [cell(sp) or fmt_ratio(over.get(t)) for t in ("hand", "srcgrad")]
            row += [cell(sp) or fmt_time(sp["prepare_s"])]
            rows.append(row)
        print_table(
            "srcgrad spec (srcgrad.specialize): time, and ratios (all interleaved)",
            ["workload", "srcgrad spec", "/ forward", "/ hand", "/ srcgrad",
             "grad() + first call"],
            rows,
        )

    if "srcgrad_numba" in tools:
        rows = []
        for name in names:
            rec = wls[name]
            nb = rec["tools"]["srcgrad_numba"]
            row = [name, cell(nb) or fmt_time(nb["median_s"])]
            paired = rec.get("srcgrad_numba_over_numba_fwd")
            row.append(cell(nb) or (fmt_ratio(paired) if paired else "-"))
            for t in ("srcgrad", "jax_jit", "hand"):
                e = rec["tools"].get(t, {})
                ratio = rec.get(f"srcgrad_numba_over_{t}") or (
                    e.get("median_s") and nb.get("median_s")
                    and nb["median_s"] / e["median_s"])
                row.append(cell(nb) or cell(e) or fmt_ratio(ratio))
            rows.append(row)
        print_table(
            "srcgrad[numba]: time, and ratios (numba fwd and jax jit: interleaved)",
            ["workload", "srcgrad[numba]", "/ numba fwd", "/ srcgrad", "/ jax jit", "/ hand"],
            rows,
        )

    rows = []
    for name in names:
        rec = wls[name]
        st = rec.get("srcgrad_transform")
        if isinstance(st, dict):
            cold, cached = fmt_time(st["cold_total_s"]), fmt_time(st["cached_total_s"])
            cold_grad, cached_grad = fmt_time(st["cold_grad_s"]), fmt_time(st["cached_grad_s"])
        else:
            cold = cached = cold_grad = cached_grad = (
                "FAIL" if st and st.startswith("failed") else "-"
            )
        jit = rec["tools"].get("jax_jit", {})
        tan = rec["tools"].get("tangent", {})
        nb = rec.get("srcgrad_numba_first_call")
        nb_cold = nb_warm = nb_ours = cell(rec["tools"].get("srcgrad_numba", {})) or "-"
        if isinstance(nb, dict):
            nb_cold = fmt_time(nb["cold_total_s"])
            nb_warm = fmt_time(nb["warm_second_process_s"])
            nb_ours = fmt_time(nb["warm_second_process_srcgrad_s"])
        nbf = rec["tools"].get("numba_fwd", {})
        rows.append(
            [
                name,
                cold,
                cold_grad,
                cached,
                cached_grad,
                fmt_time(jit["compile_s"]) if "compile_s" in jit else cell(jit) or "-",
                fmt_time(tan["prepare_s"]) if "prepare_s" in tan else cell(tan) or "-",
                nb_cold,
                nb_warm,
                nb_ours,
                fmt_time(nbf["compile_s"]) if "compile_s" in nbf else cell(nbf) or "-",
            ]
        )
    print_table(
        "One-time costs (srcgrad: grad() + first call, then grad() alone)",
        [
            "workload",
            "srcgrad cold",
            "grad() only",
            "srcgrad cached",
            "grad() only",
            "jax jit compile",
            "tangent transform",
            "srcgrad[numba] cold",
            "[numba] 2nd process",
            "of it srcgrad",
            "numba fwd compile",
        ],
        rows,
    )

    mem_names = [n for n in names if "peak_extra_bytes" in wls[n]]
    if mem_names:
        rows = []
        for name in mem_names:
            mem = wls[name]["peak_extra_bytes"]
            row = [name]
            for t in MEMORY_TOOLS:
                if t in mem:
                    row.append(fmt_bytes(mem[t]))
                elif t == "forward" or t in tools:
                    row.append(cell(wls[name]["tools"].get(t, {})) or "-")
                else:
                    row.append("-")
            rows.append(row)
        print_table(
            "Peak extra memory of one call (tracemalloc)",
            ["workload"] + [LABELS[t] for t in MEMORY_TOOLS],
            rows,
        )


def machine_info():
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": cpu,
        "numpy": np.__version__,
        "threads_env": {
            k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        },
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="shorter timing: ~20 ms per repeat, 3 repeats"
    )
    parser.add_argument(
        "--json",
        default=str(HERE / "results.json"),
        help="where to write the results (default: benchmarks/results.json)",
    )
    parser.add_argument(
        "--workloads",
        default="",
        help="comma-separated subset of: " + ",".join(w.name for w in W.WORKLOADS),
    )
    parser.add_argument(
        "--cold-allocator",
        action="store_true",
        help="do not settle malloc's thresholds before the workloads (see settle_allocator)",
    )
    parser.add_argument("--tools", default="", help="comma-separated subset of: " + ",".join(TOOLS))
    opts = parser.parse_args(argv)

    selected = [w for w in W.WORKLOADS if not opts.workloads or w.name in opts.workloads.split(",")]
    tools = [t for t in TOOLS if not opts.tools or t in opts.tools.split(",")]
    if "hand" not in tools:
        tools.insert(0, "hand")
    timing = Timing(opts.quick)
    peers = Peers()
    notes = []

    info = machine_info()
    print(
        f"srcgrad benchmarks  python {info['python']}  numpy {info['numpy']}  "
        f"{'quick' if opts.quick else 'full'} run"
    )
    print(f"cpu: {info['cpu']}; one thread (OMP/OPENBLAS/MKL_NUM_THREADS=1)")
    for tool in tools:
        if tool == "hand":
            continue
        try:
            peers.get(tool)
        except Skip as exc:
            print(f"note: {LABELS[tool]} skipped: {exc}")
    if "srcgrad" in tools and "srcgrad" in peers.modules:
        # Pay srcgrad's one-time start-up (lazy imports, rule tables) outside the measurements.
        try:
            peers.modules["srcgrad"].grad(_warm_up_target)(2.0)
        except Exception as exc:  # noqa: BLE001
            print(f"note: srcgrad warm-up failed: {first_line(exc)}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in peers.versions.items()))

    results = {
        "meta": {
            **info,
            "quick": opts.quick,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "rtol": RTOL,
            "atol": ATOL,
            "timing": {
                "target_s_per_repeat": timing.target,
                "repeats": timing.repeats,
                "budget_s": timing.budget,
                "interleaved_timer": "time.process_time",
            },
            "load_average_start": os.getloadavg(),
            "versions": peers.versions,
            "unavailable": peers.unavailable,
        },
        "workloads": {},
        "notes": notes,
    }
    results["meta"]["allocator_settled"] = not opts.cold_allocator
    if not opts.cold_allocator:
        settle_allocator()
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="srcgrad-bench-") as tmp:
        fresh = FreshFunctions(tmp)
        for wl in selected:
            results["workloads"][wl.name] = run_workload(wl, tools, peers, timing, fresh, notes)
    results["meta"]["wall_s"] = time.perf_counter() - start
    results["meta"]["load_average_end"] = os.getloadavg()
    print("load average at the end (1, 5, 15 min): "
          + ", ".join(f"{x:.1f}" for x in os.getloadavg()))

    print_summary(results, tools)
    if notes or peers.unavailable:
        print("\nNotes:")
    for note in notes:
        print(f"  - {note}")
    for tool, why in peers.unavailable.items():
        print(f"  - {tool} not available: {why}")

    path = Path(opts.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=float) + "\n")
    print(f"\nwrote {path}  ({results['meta']['wall_s']:.0f}s)")


if __name__ == "__main__":
    main()
