"""The layout rules of issue 12, checked on srcgrad's own source.

Dependencies point one way (nothing below ``api`` imports it), every module says what it is,
every stage of the pipeline is a pass ``run(node, ctx) -> node`` and is documented, and no function
or module grows past the sizes and complexity a reader can hold in their head.
"""

import ast
import inspect
import pathlib

import pytest

import srcgrad
from srcgrad import pipeline

PACKAGE = pathlib.Path(srcgrad.__file__).parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 800


def _relative(path):
    return path.relative_to(PACKAGE).as_posix()


def _tree(path):
    return ast.parse(path.read_text(), filename=str(path))


def _imported_modules(path):
    """The srcgrad modules (and names) ``path`` imports, dotted, relative to the package."""
    package = _relative(path).split("/")[:-1]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("srcgrad."):
                    yield alias.name[len("srcgrad."):]
        elif isinstance(node, ast.ImportFrom):
            module = node.module.split(".") if node.module else []
            if node.level:
                parts = package[: len(package) - node.level + 1] + module
            elif module[:1] == ["srcgrad"]:
                parts = module[1:]
            else:
                continue
            if parts:
                yield ".".join(parts)  # from .api import grad
            for alias in node.names:
                yield ".".join(parts + [alias.name])  # from . import api


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_nothing_below_the_api_imports_it(path):
    if _relative(path) in ("__init__.py", "__main__.py", "api.py"):
        return
    assert "api" not in set(_imported_modules(path)), (
        f"{_relative(path)} imports srcgrad.api; use srcgrad.transforms (the registry below it)"
    )


def test_the_import_scan_sees_imports_of_the_api():
    # the check above is only as good as the scan
    assert "api" in set(_imported_modules(PACKAGE / "__init__.py"))
    assert "api" in set(_imported_modules(PACKAGE / "__main__.py"))  # `from . import api`


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_every_module_opens_with_a_docstring(path):
    assert ast.get_docstring(_tree(path)), f"{_relative(path)} has no module docstring"


def test_every_stage_is_a_pass_taking_the_tree_and_the_context():
    for mode in pipeline.MODES:
        stages = pipeline.stages(mode)
        labels = [s.label for s in stages]
        assert len(labels) == len(set(labels)), labels
        for stage in stages:
            params = list(inspect.signature(stage.run).parameters)
            assert len(params) == 2 and params[1] == "ctx", (stage.label, params)


def _functions(tree, prefix=""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_functions_and_modules_stay_small(path):
    name = _relative(path)
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"
    for qualname, node in _functions(_tree(path)):
        length = node.end_lineno - node.lineno + 1
        assert length <= MAX_FUNCTION_LINES, f"{name}:{qualname} has {length} lines"


def _documented_stages(text):
    """Stage labels in the order a text names them (``a -> b | c``, ``| a / b |`` rows)."""
    return [w.strip(" `") for w in text.replace("|", " ").replace("->", " ").replace("/", " ")
            .replace(",", " ").split()]


def test_the_pass_order_is_documented_where_readers_look():
    labels = {s.label for mode in pipeline.MODES for s in pipeline.stages(mode) if s.dump}
    diagram = pipeline.__doc__.split("\n\n")[1]
    assert labels <= set(_documented_stages(diagram)), labels - set(_documented_stages(diagram))
    page = (PACKAGE.parent / "docs" / "how-it-works.md").read_text()
    table = next(block for block in page.split("\n\n") if block.startswith("| stage |"))
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| ")]
    named = set(_documented_stages(" ".join(rows)))
    assert labels <= named, f"stages missing from docs/how-it-works.md's table: {labels - named}"


MAX_COMPLEXITY = 20  # radon's grade C at most


def test_no_function_is_more_complex_than_grade_c():
    radon = pytest.importorskip("radon.complexity")  # in the test extra
    too_complex = set()
    for path in MODULES:
        for block in radon.cc_visit(path.read_text()):
            for b in [block, *getattr(block, "methods", ())]:
                if b.complexity > MAX_COMPLEXITY:
                    too_complex.add(f"{_relative(path)}:{b.fullname}")
    assert not too_complex, sorted(too_complex)


def _spelled_name_stems(path):
    """``(line, source)`` of each request for a fresh name spelled with a string literal
    (``namer.fresh("trips")``, ``fresh(var + "_saved")``, ``fresh(f"{x}_cast")``)."""
    found = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in ("fresh", "_fresh"):
            stems = node.args
        elif called == "_helper" and len(node.args) == 3:  # inplace_calls: the held value's stem
            stems = node.args[2:]
        else:
            continue
        for stem in stems:
            if any(
                isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(
                    n.value, str))
                for n in ast.walk(stem)
            ):
                found.append((node.lineno, ast.unparse(node)))
    return found


@pytest.mark.parametrize("path", MODULES, ids=_relative)
def test_every_generated_name_stem_is_declared_in_naming(path):
    if _relative(path) == "emit/naming.py":
        return
    assert _spelled_name_stems(path) == [], "declare the stem in emit/naming.py and use it"
