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
    # SciPy imported first (Dask imports part of it): importing srcgrad still imports none of
    # SciPy's rules (nor scipy.stats, scipy.signal...: 50 MB in every Dask worker). A user's rule
    # for a SciPy function registers after SciPy's rules, which then never replace it. A
    # transform that meets no SciPy function does not import them (seconds: `import numba`
    # imports scipy, and loading them at the first lookup made numba's first call slow).
    script = tmp_path / "uses_scipy.py"
    script.write_text(
        "import sys\n"
        "import numpy as np\n"
        "import scipy\n"
        "before = set(sys.modules)\n"
        "import srcgrad\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith('scipy'))\n"
        "assert not new, new\n"
        "import scipy.special\n"
        "def plain(x):\n"
        "    return np.sum(np.sin(x) * x)\n"
        "srcgrad.grad(plain)(np.zeros(2))\n"
        "assert 'srcgrad.rules.scipy_rules' not in sys.modules  # met no SciPy function\n"
        "def f(x):\n"
        "    return np.sum(scipy.special.expit(x))\n"
        "g = srcgrad.grad(f)(np.zeros(2))\n"
        "assert 'srcgrad.rules.scipy_rules' in sys.modules\n"
        "assert np.allclose(g, 0.25), g\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, str(script)], check=True, env=env)



def test_a_rule_loads_the_library_rules_first_unless_it_is_for_srcgrads_own_function(monkeypatch):
    # A library's rules, loaded after a user's rule for one of its functions, would replace it:
    # they load first. srcgrad's own rules (checkpoint.py registers them when srcgrad is
    # imported) are for no library's function, and must not load SciPy's rules (see above).
    from srcgrad.rules import custom, registry

    loads = []
    rules: dict = {}
    monkeypatch.setattr(registry, "OPTIONAL_RULES", {"a_library": "its_rules"})
    monkeypatch.setattr(registry, "load_optional_rules", lambda: loads.append(1))
    monkeypatch.setattr(registry, "RULES", rules)
    monkeypatch.setattr(custom, "RULES", rules)
    monkeypatch.setattr(custom.transforms, "forget", lambda: None)

    def users(x):
        return x

    def srcgrads(x):
        return x

    def librarys(x):
        return x

    srcgrads.__module__ = "srcgrad.checkpoint"
    librarys.__module__ = "a_library.part"
    custom._rule_for(srcgrads, None)
    assert loads == [] and srcgrads in rules
    custom._rule_for(users, None)  # a library's rules are for its own objects only
    assert loads == [] and users in rules
    custom._rule_for(librarys, None)
    assert loads == [1] and librarys in rules
