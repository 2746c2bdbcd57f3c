"""The test suite never reads or writes the user's srcgrad disk cache: every test (and every
subprocess a test starts) uses a cache directory of its own, removed at the end of the run."""

import os
import shutil
import tempfile

import pytest

_CACHE_DIR = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
os.environ["SRCGRAD_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("SRCGRAD_CACHE", None)  # the cache is on in the tests, whatever the shell says


@pytest.fixture(scope="session", autouse=True)
def _remove_test_cache():
    yield
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)
