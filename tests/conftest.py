"""Session setup and checks for the whole suite.

The test suite never reads or writes the user's srcgrad disk cache: every test (and every
subprocess a test starts) uses a cache directory of its own, removed at the end of the run.

A test module or test skipped because a module could not be imported (``pytest.importorskip``)
whose distribution the ``test`` extra of ``pyproject.toml`` installs is an error: after
``pip install -e ".[test]"`` nothing may be skipped for want of it, so CI cannot pass while
silently not running, say, every SciPy rule test.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

# One directory for the run, made by the process that starts it and shared by its pytest-xdist
# workers (they inherit the environment): a derivative one worker stored, another loads, as the
# rule tables derive the same rows in several modules (test_rules, test_dask, ...). Entries are
# written atomically and checked when read (srcgrad/emit/diskcache.py), as for processes sharing
# a user's cache. The process that made the directory removes it at the end.
_OWN_CACHE = "SRCGRAD_TEST_CACHE_DIR" not in os.environ
if _OWN_CACHE:
    os.environ["SRCGRAD_TEST_CACHE_DIR"] = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
_CACHE_DIR = os.environ["SRCGRAD_TEST_CACHE_DIR"]
os.environ["SRCGRAD_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("SRCGRAD_CACHE", None)  # the cache is on in the tests, whatever the shell says


def pytest_unconfigure(config):
    if _OWN_CACHE:
        shutil.rmtree(_CACHE_DIR, ignore_errors=True)


ROOT = Path(__file__).resolve().parent.parent
_MISSING = re.compile(r"could not import '([\w.]+)'")
_skipped_for_extras: list[str] = []


def extra_modules(extra="test"):
    """Top-level module names of the distributions the ``extra`` of pyproject.toml installs."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return set()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = project["optional-dependencies"][extra]
    return {re.split(r"[<>=!~\[; ]", n, maxsplit=1)[0].replace("-", "_").lower() for n in names}


def _record(report):
    if not report.skipped:
        return
    match = _MISSING.search(str(report.longrepr))
    if match and match.group(1).split(".")[0].lower() in extra_modules():
        _skipped_for_extras.append(f"{report.nodeid}: {match.group(0)}")


def pytest_collectreport(report):
    _record(report)


def pytest_runtest_logreport(report):
    _record(report)


def pytest_terminal_summary(terminalreporter):
    if _skipped_for_extras:
        terminalreporter.section("skipped for a module the test extra installs", red=True)
        for line in _skipped_for_extras:
            terminalreporter.line(line)
        terminalreporter.line('install them: pip install -e ".[test]"')


def pytest_sessionfinish(session):
    if _skipped_for_extras and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
