"""In Jupyter or IPython, ``show(df)`` displays the generated code as highlighted HTML with line
numbers, each ``# grad of:`` block beside (and linked to) the user's line it differentiates."""

import re

import numpy as np
import pytest

import srcgrad

IPython = pytest.importorskip("IPython")  # in the test extra


def act(z):
    return np.tanh(z)


def loss(W, x):
    z = act(x @ W)
    return np.sum(z * z)


def test_the_html_has_line_numbers_and_each_block_beside_its_source_line():
    df = srcgrad.grad(loss)
    html = df._repr_html_()
    text = srcgrad.source(df)
    rows = re.findall(r'<tr id="([^"]+)"[^>]*><td class="n">(\d+)</td>', html)
    assert [int(n) for _, n in rows] == list(range(1, len(text.splitlines()) + 1))
    line = loss.__code__.co_firstlineno + 1  # z = act(x @ W)
    blocks = re.findall(r'<a href="#([^"]+)">grad of test_display.py:(\d+)</a>', html)
    assert str(line) in {n for _, n in blocks}
    anchors = {a for a, _ in rows}
    assert all(target in anchors for target, _ in blocks)  # each links to its primal line
    assert "<span" in html  # highlighted (Pygments is in the test extra)


def test_show_displays_html_through_ipython():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    try:
        with capture_output() as captured:
            srcgrad.show(srcgrad.grad(loss))
        (output,) = captured.outputs
        assert "text/html" in output.data and "srcgrad-source" in output.data["text/html"]
        assert output.data["text/plain"] == srcgrad.source(srcgrad.grad(loss)).rstrip("\n")
        formatted, _ = shell.display_formatter.format(srcgrad.grad(loss))
        assert formatted["text/plain"] == "<grad of loss wrt 'W'>"
        assert "srcgrad-source" in formatted["text/html"]
    finally:
        InteractiveShell.clear_instance()


def test_show_prints_outside_ipython(capsys):
    srcgrad.show(srcgrad.grad(loss))
    assert "def dloss(W, x):" in capsys.readouterr().out
