"""The public API is typed: ``mypy --strict`` is clean on ``srcgrad/api.py`` and
``srcgrad/__init__.py`` (errors of the modules under them are not reported here), and the
package ships a ``py.typed`` marker, so a user's mypy reads these annotations."""

import hashlib
import os
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_mypy_strict_is_clean_on_the_public_api():
    pytest.importorskip("mypy")  # in the test extra
    # a cache of this checkout's own (mypy's files are not safe to share between checkouts)
    tag = hashlib.sha1(ROOT.encode()).hexdigest()[:12]
    cache = os.path.join(tempfile.gettempdir(), f"srcgrad-mypy-cache-{tag}")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
         "--cache-dir", cache, "srcgrad/api.py", "srcgrad/__init__.py"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_package_is_marked_typed():
    assert os.path.exists(os.path.join(ROOT, "srcgrad", "py.typed"))
    with open(os.path.join(ROOT, "pyproject.toml")) as handle:
        assert 'srcgrad = ["py.typed"]' in handle.read()
