"""The command line: ``python -m srcgrad show`` and ``python -m srcgrad emit``.

Emitted modules are run in a separate interpreter where importing srcgrad fails, and must compute
the same derivatives as srcgrad.
"""

import ast
import importlib.util
import io
import json
import subprocess
import sys
import tokenize

import numpy as np
import pytest

import srcgrad
from srcgrad.__main__ import main

MODEL = '''
import numpy as np
import srcgrad

SCALE = 2.0
OFFSETS = np.array([[1.0, -2.0, 0.5]])


def loss(W, b, X, y):
    z = np.tanh(X @ W + b)
    return np.mean((z - y) ** 2)


def loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sin(x * i) * SCALE
    return np.sum(s)


def reduce(x):
    return np.sum(np.sum(x * OFFSETS, axis=1) ** 2)


def unbroadcast(a):          # shares its name with a runtime helper
    return a * 3.0


@srcgrad.nondifferentiable
def weight(x):
    return unbroadcast(float(np.size(x)))


def weighted(x):
    return np.sum(np.cos(x) * weight(x)) + SCALE


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def recursive(x):
    return np.sum(power(x, 3))


class Model:
    pass


NOT_A_FUNCTION = 3
THING = Model()


def reads_object(x):
    return np.sum(x * THING.__class__.__name__.count("M"))
'''


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "cli_model.py"
    path.write_text(MODEL)
    spec = importlib.util.spec_from_file_location("cli_model_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def _run_isolated(code, cwd):
    """Run ``code`` in a fresh interpreter (isolated mode) in which srcgrad cannot be imported."""
    blocker = (
        "import sys\n"
        "class _Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'srcgrad':\n"
        "            raise ImportError('srcgrad is blocked in this test')\n"
        "sys.meta_path.insert(0, _Block())\n"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", blocker + code], cwd=cwd, capture_output=True, text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def _assert_standalone(text):
    """Only NumPy and the standard library are imported, and no code names srcgrad."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            modules = [node.module]
        else:
            continue
        for module in modules:
            top = module.partition(".")[0]
            assert top in ("numpy", "__future__") or top in sys.stdlib_module_names, module
    names = {
        tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.NAME
    }
    assert "srcgrad" not in names


def test_show_prints_the_generated_source(model, capsys):
    path, _ = model
    assert main(["show", f"{path}:loss", "--wrt", "W,b"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("def dloss(W, b, X, y):")
    assert "dW = matmul_vjp_right(" in out
    assert "\x1b[" not in out  # not a terminal: no highlighting


def test_show_modes_and_positions(model, capsys):
    path, _ = model
    assert main(["show", f"{path}:loss", "--wrt", "0", "--mode", "jvp"]) == 0
    assert capsys.readouterr().out.startswith("def loss_jvp(W, b, X, y, tangent):")
    assert main(["show", f"{path}:loss", "--mode", "value_and_grad"]) == 0
    assert "def loss_value_and_grad(" in capsys.readouterr().out


def test_python_dash_m_entry_point(model):
    path, _ = model
    result = subprocess.run(
        [sys.executable, "-m", "srcgrad", "show", f"{path}:reduce"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("def dreduce(x):")


def test_emitted_modules_compute_srcgrads_gradients(model, tmp_path, capsys):
    path, module = model
    cases = {
        "loss": (["--wrt", "W,b"], ("W", "b")),  # the README's tanh loss
        "loop": ([], 0),  # a for loop: list stacks
        "reduce": ([], 0),  # np.sum with axis: unreduce, and an ndarray constant
        "weighted": ([], 0),  # a copied user function calling one renamed around a helper
        "recursive": ([], 0),  # a derivative made on its first call: forced and copied
    }
    for func, (flags, _) in cases.items():
        out = tmp_path / f"emitted_{func}.py"
        assert main(["emit", f"{path}:{func}", *flags, "-o", str(out)]) == 0
        text = out.read_text()
        assert "srcgrad" not in text.partition('"""\n')[0]  # the header
        _assert_standalone(text)
    capsys.readouterr()
    assert "def unbroadcast_2(a):" in (tmp_path / "emitted_weighted.py").read_text()

    rng = np.random.default_rng(0)
    W, b = rng.normal(size=(3, 2)), rng.normal(size=2)
    X, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    x3, x43 = rng.normal(size=3), rng.normal(size=(4, 3))
    calls = {
        "loss": (W, b, X, y), "loop": (x3, 4), "reduce": (x43,), "weighted": (x3,),
        "recursive": (x3,),
    }
    np.savez(tmp_path / "args.npz", W=W, b=b, X=X, y=y, x3=x3, x43=x43)
    code = (
        "import importlib.util, json, numpy as np\n"
        "a = np.load('args.npz')\n"
        "def load(func):\n"
        "    spec = importlib.util.spec_from_file_location(func, f'emitted_{func}.py')\n"
        "    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m\n"
        "out = {\n"
        "    'loss': load('loss').dloss(a['W'], a['b'], a['X'], a['y']),\n"
        "    'loop': load('loop').dloop(a['x3'], 4),\n"
        "    'reduce': load('reduce').dreduce(a['x43']),\n"
        "    'weighted': load('weighted').dweighted(a['x3']),\n"
        "    'recursive': load('recursive').drecursive(a['x3']),\n"
        "}\n"
        "as_list = lambda g: [np.asarray(v).tolist() for v in g] if isinstance(g, tuple) "
        "else np.asarray(g).tolist()\n"
        "print(json.dumps({k: as_list(v) for k, v in out.items()}))\n"
    )
    got = json.loads(_run_isolated(code, tmp_path))
    for func, (_, wrt) in cases.items():
        expected = srcgrad.grad(getattr(module, func), wrt=wrt)(*calls[func])
        if isinstance(expected, tuple):
            for g, e in zip(got[func], expected):
                np.testing.assert_allclose(g, e, rtol=1e-12)
        else:
            np.testing.assert_allclose(got[func], expected, rtol=1e-12)


def test_emit_to_stdout_and_other_modes(model, capsys):
    path, _ = model
    assert main(["emit", f"{path}:loss", "--mode", "vjp", "--wrt", "W"]) == 0
    text = capsys.readouterr().out
    namespace = {}
    exec(compile(text, "emitted", "exec"), namespace)
    rng = np.random.default_rng(1)
    W, b, X, y = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(5, 3)), 0.5
    np.testing.assert_allclose(
        namespace["loss_vjp"](W, b, X, y, 1.0),
        srcgrad.grad(_reference_loss)(W, b, X, y),
        rtol=1e-12,
    )


def _reference_loss(W, b, X, y):
    z = np.tanh(X @ W + b)
    return np.mean((z - y) ** 2)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["show", "{path}"], "expected FILE.py:FUNC"),
        (["show", "{path}:missing"], "has no function 'missing'"),
        (["show", "{path}:NOT_A_FUNCTION"], "is a int, not a Python function"),
        (["show", "{path}:Model"], "is a type, not a Python function"),
        (["show", "{dir}/nowhere.py:f"], "no such file"),
        (["show", "{path}:loss", "--wrt", "q"], "has no parameter 'q'"),
        (["emit", "{path}:reads_object"], "reads `THING` (an instance of"),
    ],
)
def test_errors_are_one_message_and_a_nonzero_exit(model, capsys, argv, message):
    path, _ = model
    argv = [a.format(path=path, dir=path.parent) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_a_module_that_fails_to_import(tmp_path, capsys):
    bad = tmp_path / "cli_broken.py"
    bad.write_text("import numpy as np\nraise RuntimeError('boom')\n")
    assert main(["show", f"{bad}:f"]) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: boom (line 2)" in err and "Traceback" not in err
