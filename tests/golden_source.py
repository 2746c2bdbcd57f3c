"""Golden-file tests of generated source.

``assert_golden(name, text)`` compares ``text`` with ``tests/golden/<name>``; running the tests
with ``SRCGRAD_REGEN_GOLDEN=1`` rewrites the files instead (review the diff before committing).
"""

import os
import pathlib

GOLDEN = pathlib.Path(__file__).parent / "golden"


def assert_golden(name, text):
    path = GOLDEN / name
    if os.environ.get("SRCGRAD_REGEN_GOLDEN") == "1":
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with SRCGRAD_REGEN_GOLDEN=1 to create it"
    assert text == path.read_text(), f"generated source differs from {path}"
