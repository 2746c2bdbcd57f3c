"""``import srcgrad`` imports NumPy and gast and nothing optional: SciPy's rules register on the
first transform that meets a SciPy function, IPython, Pygments and the rest only when used."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIONAL = ("scipy", "IPython", "pygments", "joblib", "mypy", "matplotlib", "dask", "numba",
            "jax", "torch")


def test_import_srcgrad_imports_nothing_optional():
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import srcgrad"], capture_output=True,
        text=True, env=env, check=True,
    )
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines()
                if line.startswith("import time:")}
    assert "srcgrad" in imported and "numpy" in imported
    loaded = sorted(m for m in imported if m.split(".")[0] in OPTIONAL)
    assert loaded == [], f"import srcgrad imported {loaded}"


def test_scipy_rules_register_on_the_first_transform_that_meets_scipy(tmp_path):
    script = tmp_path / "uses_scipy.py"
    script.write_text(
        "import sys\n"
        "import numpy as np\n"
        "import srcgrad\n"
        "import scipy.special\n"
        "assert 'srcgrad.rules.scipy_rules' not in sys.modules\n"
        "def f(x):\n"
        "    return np.sum(scipy.special.expit(x))\n"
        "g = srcgrad.grad(f)(np.zeros(2))\n"
        "assert 'srcgrad.rules.scipy_rules' in sys.modules\n"
        "assert np.allclose(g, 0.25), g\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, str(script)], check=True, env=env)
