"""MkDocs hooks that make srcgrad's documentation from srcgrad itself, at build time.

A page may contain directives, written as HTML comments so that they are invisible anywhere
else (an editor's preview, a diff):

- ``<!-- source: EXPR -->`` becomes a Python block with ``srcgrad.source(EXPR)``;
- ``<!-- print: EXPR -->`` becomes a text block with what ``print(EXPR)`` prints;
- ``<!-- complex-table -->`` becomes the table of complex-argument gradients of ``complex_cases``;
- ``<!-- benchmark-table -->`` becomes the newest full table of ``benchmarks/RESULTS.md``;
- ``<!-- example: NAME.py -->`` becomes the output of ``examples/NAME.py`` and its figure.

``EXPR`` is evaluated in a module made of every ```` ```python ```` block of the page, in order,
written to a real file (srcgrad reads source with ``inspect``), so the code a page shows is the
code it runs, and the generated source it shows is what srcgrad generates today. A directive
whose expression fails stops the build: the documentation cannot show stale output.

The examples run once per build, each in its own process with ``SRCGRAD_FIGURES`` pointing at a
temporary directory; the figures they save are added to the site under ``figures/``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DIRECTIVE = re.compile(
    r"<!-- (source|print|example): (.+?) -->|<!-- (complex-table|benchmark-table) -->"
)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)

_state: dict = {}


class DocsError(Exception):
    """A directive of a page could not be rendered."""


def page_module(markdown: str, name: str, directory: Path):
    """The page's Python blocks, in order, as an imported module named ``name``."""
    code = "\n\n".join(PYTHON_BLOCK.findall(markdown))
    path = directory / f"{name}.py"
    path.write_text(code)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def render(markdown: str, name: str, directory: Path, examples: dict | None = None) -> str:
    """``markdown`` with every directive replaced by what it stands for."""
    if not DIRECTIVE.search(markdown):
        return markdown
    namespace = None
    if PYTHON_BLOCK.search(markdown):
        namespace = vars(page_module(markdown, name, directory))

    def replace(match):
        kind, expr = match.group(1) or match.group(3), match.group(2)
        try:
            return _directive(kind, expr, namespace, examples)
        except Exception as error:  # noqa: BLE001 - any failure stops the build, with its cause
            raise DocsError(f"{name}: {match.group(0)} failed: {error!r}") from error

    return DIRECTIVE.sub(replace, markdown)


def _directive(kind, expr, namespace, examples):
    import srcgrad

    if kind == "source":
        return f"```python\n{srcgrad.source(eval(expr, namespace)).rstrip()}\n```"
    if kind == "print":
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            print(eval(expr, namespace))
        return f"```text\n{out.getvalue().rstrip()}\n```"
    if kind == "complex-table":
        return complex_table()
    if kind == "benchmark-table":
        return benchmark_table()
    return example_section(expr.strip(), examples)


# --- complex arguments ---------------------------------------------------------------------------

COMPLEX_CASES = '''
import numpy as np

def abs_squared(z):
    return np.sum(np.abs(z) ** 2)

def modulus(z):
    return np.sum(np.abs(z))

def real_part(z):
    return np.sum(np.real(z))

def imaginary_part(z):
    return np.sum(np.imag(z))

def real_of_square(z):
    return np.sum(np.real(z * z))

def real_of_exp(z):
    return np.sum(np.real(np.exp(z)))

def times_conjugate(z):
    return np.sum(np.real(z * np.conj(z)))

def modulus_of_square(z):
    return np.sum(np.abs(z * z))

def phase(z):
    return np.sum(np.angle(z))

def real_argument_abs_squared(x):
    z = x[0] + 1j * x[1]
    return np.abs(z) ** 2

def real_argument_modulus(x):
    z = x[0] + 1j * x[1]
    return np.abs(z)
'''


def steepest_ascent(f, z, h=1e-6):
    """``df/dx + 1j * df/dy`` of a real ``f`` of complex ``z``, by central differences."""
    g = np.zeros(z.shape, dtype=complex)
    for i in range(z.size):
        e = np.zeros(z.shape)
        e.flat[i] = h
        g.flat[i] = (f(z + e) - f(z - e)) / (2 * h) + 1j * (f(z + 1j * e) - f(z - 1j * e)) / (
            2 * h
        )
    return g


def complex_rows(directory: Path):
    """``(code, srcgrad's gradient, steepest ascent, verdict)`` for each of ``COMPLEX_CASES``."""
    import srcgrad

    path = directory / "complex_cases.py"
    path.write_text(COMPLEX_CASES)
    spec = importlib.util.spec_from_file_location("complex_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["complex_cases"] = module
    spec.loader.exec_module(module)
    rows = []
    for name in re.findall(r"^def (\w+)", COMPLEX_CASES, flags=re.M):
        f = getattr(module, name)
        body = re.search(rf"def {name}\((?:z|x)\):\n((?:    .*\n)+)", COMPLEX_CASES).group(1)
        body = "; ".join(line.strip() for line in body.strip().splitlines())
        if name.startswith("real_argument_"):
            z = np.array([1.0, 2.0])
            ref = steepest_ascent(f, z).real  # a real argument's gradient: df/dx alone
        else:
            z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
            ref = steepest_ascent(f, z)
        try:
            g = srcgrad.grad(f)(z)
        except srcgrad.SrcgradError as error:
            rows.append((body, type(error).__name__, ref, "refused"))
            continue
        if np.allclose(g, ref, atol=1e-6):
            verdict = "steepest ascent (the convention)"
        elif np.allclose(g, np.conj(ref), atol=1e-6):
            verdict = "**conjugate** of the convention"
        else:
            verdict = "**wrong**"
        rows.append((body, g, ref, verdict))
    return rows


def _fmt(v):
    if isinstance(v, str):
        return v
    return np.array2string(np.round(v, 3), separator=", ")


def complex_table() -> str:
    rows = complex_rows(Path(_state["tmp"]))
    lines = ["| `f` | srcgrad's `grad(f)` | `df/dx + 1j*df/dy` | srcgrad gives |",
             "|---|---|---|---|"]
    for body, g, ref, verdict in rows:
        body = body.replace("return ", "").replace("|", "\\|")
        lines.append(f"| `{body}` | `{_fmt(g)}` | `{_fmt(ref)}` | {verdict} |")
    return "\n".join(lines)


# --- benchmarks ----------------------------------------------------------------------------------


def benchmark_table() -> str:
    """The newest full run of ``benchmarks/run.py`` in ``benchmarks/RESULTS.md`` (the first
    section holding its "Median time per call" table): its heading, text and tables."""
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    newest = next(s for s in sections if "Median time per call" in s)
    heading, _, body = newest.partition("\n")
    return f"**{heading.strip()}**\n\n{body.strip()}"


# --- examples ------------------------------------------------------------------------------------


def run_examples(figures: Path) -> dict:
    """Run every ``examples/*.py``; name -> (seconds, output). A failing example stops the build."""
    results = {}
    env = dict(os.environ, SRCGRAD_FIGURES=str(figures), PYTHONPATH=str(ROOT))
    for path in sorted((ROOT / "examples").glob("*.py")):
        if path.name.startswith("_"):
            continue
        start, cpu = time.perf_counter(), _children_cpu()
        run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                             env=env, cwd=ROOT, timeout=300)
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
        if run.returncode:
            raise DocsError(f"examples/{path.name} failed:\n{run.stdout}\n{run.stderr}")
        results[path.name] = (seconds, cpu, run.stdout)
    return results


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children (NaN off Unix)."""
    try:
        import resource
    except ImportError:
        return float("nan")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def example_section(name: str, examples: dict | None) -> str:
    if examples is None or name not in examples:
        raise DocsError(f"no example examples/{name}")
    seconds, cpu, output = examples[name]
    stem = name.removesuffix(".py")
    parts = [f"`python examples/{name}`, when this page was built (it took {cpu:.1f} s of CPU "
             f"time, {seconds:.1f} s on the clock of the build machine, imports included):",
             f"```text\n{output.rstrip()}\n```"]
    if (Path(_state["figures"]) / f"{stem}.png").exists():
        parts.append(f"![{stem}](figures/{stem}.png)")
    return "\n\n".join(parts)


# --- the MkDocs events ---------------------------------------------------------------------------


def on_config(config, **kwargs):
    sys.path.insert(0, str(ROOT))
    _state["tmpdir"] = tempfile.TemporaryDirectory(prefix="srcgrad-docs-")
    _state["tmp"] = Path(_state["tmpdir"].name)
    _state["figures"] = _state["tmp"] / "figures"
    _state["figures"].mkdir()
    return config


def on_files(files, config, **kwargs):
    from mkdocs.structure.files import File

    _state["examples"] = run_examples(_state["figures"])
    for png in sorted(_state["figures"].glob("*.png")):
        files.append(File.generated(config, f"figures/{png.name}", content=png.read_bytes()))
    return files


def on_page_markdown(markdown, page, config, files, **kwargs):
    name = "docs_" + re.sub(r"\W", "_", page.file.src_uri.removesuffix(".md"))
    examples = _state.get("examples")
    if "<!-- example: " in markdown:
        markdown += more_examples(markdown, examples)
    return render(markdown, name, _state["tmp"], examples)


def more_examples(markdown: str, examples: dict) -> str:
    """Sections for the examples a page of examples does not name, so that none is left out."""
    named = set(re.findall(r"<!-- example: (.+?) -->", markdown))
    extra = sorted(set(examples) - named)
    if not extra:
        return ""
    parts = ["\n\n## More examples\n"]
    for name in extra:
        text = (ROOT / "examples" / name).read_text()
        doc = re.match(r'\s*"""(.*?)(?:\n\n|""")', text, flags=re.S)
        summary = " ".join(doc.group(1).split()) if doc else ""
        parts.append(f"### `examples/{name}`\n\n{summary}\n\n<!-- example: {name} -->\n")
    return "\n".join(parts)


def on_post_build(config, **kwargs):
    _state.pop("tmpdir").cleanup()



def check_pages(paths) -> None:
    """Render each page's source and print directives (example directives are left to the
    build, which runs the examples); raise on the first that fails."""
    with tempfile.TemporaryDirectory(prefix="srcgrad-docs-") as tmp:
        _state["tmp"] = Path(tmp)
        for path in map(Path, paths):
            text = re.sub(r"<!-- example: .*? -->", "", path.read_text())
            rendered = render(text, "docs_check_" + re.sub(r"\W", "_", path.stem), Path(tmp))
            if DIRECTIVE.search(rendered):
                raise DocsError(f"{path}: a directive was left unrendered")


if __name__ == "__main__":
    # python docs/hooks.py PAGE.md ...: what tests/test_docs.py runs, in a process of its own,
    # since pages register rules and define functions that should not outlive them
    sys.path.insert(0, str(ROOT))
    check_pages(sys.argv[1:])
