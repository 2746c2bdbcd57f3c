"""Mutation testing of srcgrad's code (emitters, rule kinds, helpers) against any test selection.

mutmut runs pytest from scratch for every mutant (collection alone takes seconds here) and
cannot mutate the template strings of the rule tables. This script collects a pytest selection
once, then for each mutant forks: the child puts the mutant in place and runs the collected
tests (stopping at the first failure); a mutant is *killed* when a test fails, errors, or the
child takes longer than ``--timeout``. Nothing a mutant changes leaks into the next.

Targets:

- ``--code srcgrad.transform.adjoints`` mutates the bodies of the module's functions and methods
  (operators swapped, one operand of a binary operation kept, comparisons, ``and``/``or``,
  ``not`` dropped, an ``if``'s test negated, numbers +1, ``True``/``False``, ``a if c else b``
  swapped, a keyword argument dropped, a one-argument call replaced by its argument). The
  mutated function is compiled alone and its code object put into the original function, so
  every module that imported the function sees the mutant.
- ``--templates inplace_rules`` mutates the template strings of a rule module with the operators
  of ``tests/mutate_rules.py`` (for rules whose checks are ordinary tests, not rule-table rows).

The tests are given after ``--`` as pytest arguments. They first run unmutated; a test that
fails then is left out (and reported). That first run also records which statements of
srcgrad's functions each test runs: a code mutant runs only the tests that ran its statement (a
test that never runs the mutated code cannot see it; ``--all-tests`` runs them all), those that
killed a mutant of the same function first, so a wide selection costs little per mutant, and a
mutant no test runs is reported as such; a mutant is killed by a
timeout only when its tests take three times as long as they did (and ``--timeout`` at least).
The disk cache is off in the children (a derivative made by a mutant must not be read by the
next one).

    python tests/mutate_code.py --code srcgrad.transform.templates --sample 200 --seed 1 \\
        --out templates.log -- tests/test_rules.py -k "sin or matmul"

One line per mutant (``killed`` / ``survived`` / ``equivalent`` with the location and the mutated
line), then the score. Mutants listed in ``tests/equivalent_mutants.txt`` count as equivalent.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import json
import linecache
import os
import random
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutate_rules  # noqa: E402  (its operators and its list of equivalent mutants)


def _extra_mutants(node):
    """Operators of code that templates do not have: an ``if``/``while`` test negated."""
    if isinstance(node, (ast.If, ast.While)):
        yield "condition negated", node, type(node)(
            ast.UnaryOp(ast.Not(), node.test), node.body, node.orelse)


def _functions(tree):
    """(qualified name, class name or None, FunctionDef) of the module's functions and methods."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, None, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", node.name, item


def _skip(node, fn):
    """Nodes not worth mutating: docstrings, annotations, messages of errors."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    return node is fn.returns


def code_mutants(module_name):
    """Every mutant of a module's functions: (label, qualified name, class, mutated FunctionDef,
    line of the statement it is in)."""
    module = importlib.import_module(module_name)
    source = inspect.getsource(module)
    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for qualname, cls, fn in _functions(tree):
        annotations = {id(n) for a in ast.walk(fn.args) for n in ast.walk(a)
                       if getattr(a, "annotation", None) is not None and n is a.annotation}
        body = fn.body[1:] if ast.get_docstring(fn) is not None else fn.body
        seen = set()
        line_of = _statement_lines(body, compiled=_numba_module(source))
        for stmt in body:
            for node in ast.walk(stmt):
                if _skip(node, fn) or id(node) in annotations:
                    continue
                candidates = [(what, node, new) for what, new in
                              mutate_rules._node_mutants(node, [])]
                candidates += list(_extra_mutants(node))
                for what, target, new in candidates:
                    mutated = mutate_rules._swap_in(fn, target, new)
                    mutated.decorator_list = []
                    mutated.edits = _edits(target, new)  # (the source text, for apply_code)
                    text = ast.unparse(new) if isinstance(new, ast.expr) else what
                    where = getattr(target, "lineno", fn.lineno)
                    line = lines[where - 1].strip() if where <= len(lines) else ""
                    label = (f"{module_name}:{where} {qualname} ({what}): {line} -> "
                             f"{text.splitlines()[0] if text else text}")
                    same = ast.unparse(mutated)
                    if same in seen:  # the same mutant reached twice
                        continue
                    seen.add(same)
                    while label in seen:  # another mutant that reads the same: numbered
                        label += " (again)"
                    seen.add(label)
                    out.append((label, qualname, cls, mutated, line_of[id(target)]))
    return out


def _edits(target, new):
    """The mutant as edits of its module's text, ``(line, col, end line, end col, text)``: the
    node replaced by its new text in parentheses, or a test negated by ``not (...)``."""
    if isinstance(target, ast.stmt):  # (an if's or while's test negated)
        test = target.test
        return [(test.end_lineno, test.end_col_offset, test.end_lineno, test.end_col_offset, ")"),
                (test.lineno, test.col_offset, test.lineno, test.col_offset, "not (")]
    return [(target.lineno, target.col_offset, target.end_lineno, target.end_col_offset,
             f"({ast.unparse(new)})")]


def _mutated_lines(lines, fn_node):
    """The lines of a module with a mutant's edits (``_edits``) made, as many as before (a
    replaced span of several lines leaves empty ones, which Python reads as nothing); None
    where the edited text does not parse to the mutated function (a node in an f-string)."""
    if not getattr(fn_node, "edits", None):
        return None
    lines = list(lines)
    for line, col, end_line, end_col, text in getattr(fn_node, "edits", ()):
        first, last = lines[line - 1].encode(), lines[end_line - 1].encode()
        lines[line - 1:end_line] = ([first[:col].decode() + text + last[end_col:].decode()]
                                    + ["\n"] * (end_line - line))
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.lineno == fn_node.lineno and node.name == fn_node.name):
            node.decorator_list = []
            if ast.dump(node) == ast.dump(fn_node):
                return lines
    return None


def _statement_lines(body, compiled=False):
    """The line of the innermost statement around every node of a function's body (a mutant
    can change a result only where that statement runs). With ``compiled`` (a module numba
    compiles from), the statements of a nested function count as its ``def``: numba compiles
    those, so they are not instrumented (``instrument``)."""
    line_of = {}
    for stmt in body:
        for inner in ast.walk(stmt):  # breadth first: an inner statement comes after its outer
            if isinstance(inner, ast.stmt) and not (compiled and _inside_nested(inner, stmt)):
                for node in ast.walk(inner):
                    line_of[id(node)] = inner.lineno
    return line_of


def _inside_nested(inner, stmt):
    """Whether the statement ``inner`` lies in a function (or lambda) nested in ``stmt``."""
    return any(inner is not node and any(inner is n for n in ast.walk(node))
               for node in ast.walk(stmt)
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def _numba_module(source):
    """Whether numba compiles some of a module's functions (``njit``, ``overload``): their
    statements cannot call the recorder ``instrument`` puts in."""
    return re.search(r"^\s*(from numba\b|import numba\b)", source, re.M) is not None


def _compiled_by_numba(fn):
    """Whether a function is numba's to compile (``@njit``/``@jit``, or ``f = njit(f)``)."""
    names = {d.func if isinstance(d, ast.Call) else d for d in fn.decorator_list}
    return any(getattr(n, "id", getattr(n, "attr", None)) in ("njit", "jit", "generated_jit")
               for n in names)


def _original(module, qualname):
    """The function object whose code a mutant replaces."""
    obj = module
    for part in qualname.split("."):
        obj = obj.__dict__[part] if isinstance(obj, type) else getattr(obj, part)
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        obj = obj.fget
    while hasattr(obj, "__wrapped__"):
        obj = obj.__wrapped__
    return obj


def apply_code(module_name, qualname, cls, fn_node):
    """Put the mutated function's code into the original function object."""
    module = importlib.import_module(module_name)
    node = fn_node
    if cls is not None:  # compiled inside a class, so a ``super()`` cell is where it was
        node = ast.ClassDef(cls, [], [], [fn_node], [], type_params=[]) \
            if sys.version_info >= (3, 12) else ast.ClassDef(cls, [], [], [fn_node], [])
    tree = ast.fix_missing_locations(ast.Module([node], []))
    namespace = dict(module.__dict__)
    exec(compile(tree, inspect.getsourcefile(module), "exec"), namespace)
    new = namespace[cls].__dict__[fn_node.name] if cls else namespace[fn_node.name]
    if isinstance(new, (staticmethod, classmethod)):
        new = new.__func__
    original = _original(module, qualname)
    original.__code__ = new.__code__
    # srcgrad reads the source of the helpers it differentiates by their source (``by_source``:
    # linecache, through inspect): the mutant's text, or their derivatives would be the
    # original's while their values are the mutant's (kron_vjp_partner's kron_vjp(..., 2))
    filename = inspect.getsourcefile(module)
    lines = _mutated_lines(linecache.getlines(filename), fn_node)
    if lines is not None:
        linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    for value in list(module.__dict__.values()):  # a numba function compiled from it
        if getattr(value, "py_func", None) is original and hasattr(value, "_cache"):
            from numba.core.caching import NullCache

            value._cache = NullCache()  # its cache would give the unmutated function's code


def template_mutants(module_name):
    """Every mutant of a rule module's templates: (label, rule, side, param, mutated text)."""
    rules = mutate_rules.rules_of(module_name)
    return [(label, rule, side, param, text)
            for rule, side, param, text, label in mutate_rules._enumerate(rules, None)]


def apply_template(rule, side, param, text):
    getattr(rule, f"{side}_src")[param] = text
    rule.vjp_template = rule.jvp_template = None


def _items_of(items, rule, reads=None):
    """The tests of a rule: those with a row of its function among their parameters (rows have
    an ``fn``), and the tests that are no row and read its templates when they ran unmutated
    (``reads``: nodeid -> the names of the rules whose templates the test took; recorded by the
    first run of a template run: a rule no test read then has none, and its mutants are
    reported as run by no test); every test if none of them is and nothing was recorded."""
    if rule is None:
        return items
    from srcgrad.rules import registry

    keys = mutate_rules._keys_of(rule)
    mine = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        row = False
        for value in callspec.params.values() if callspec else ():
            fn = getattr(value, "fn", None)
            try:
                row = row or (fn is not None and registry._key(fn) is not None)
                if fn is not None and registry._key(fn) in keys:
                    mine.append(item)
                    break
            except TypeError:
                continue
        else:
            if not row and reads is not None and rule.name in reads.get(item.nodeid, ()):
                mine.append(item)
    return mine if mine or reads is not None else items


READS = set()  # the names of the rules whose templates the test that runs took (first run)


def record_reads():
    """Make ``Rule.vjp`` and ``Rule.jvp`` add the rule's name to ``READS`` (in the first run's
    child: which tests that are no row of a rule table read which rules)."""
    from srcgrad.rules import registry

    for side in ("vjp", "jvp"):
        original = getattr(registry.Rule, side)

        def recording(rule, *args, original=original, **kwargs):
            READS.add(rule.name)  # (a name, not an id: a coverage file keeps it)
            return original(rule, *args, **kwargs)

        setattr(registry.Rule, side, recording)


HITS = set()  # the statements run by the test that runs, when instrumented (the first run)
UNTRACED = set()  # the functions that could not be instrumented


def _key(filename, qualname):
    """A function of srcgrad as coverage records it: its file and its qualified name."""
    return os.path.realpath(filename) + ":" + qualname


def _hits_before_statements(node, key, nested=True):
    """Put a call that records ``key`` + the statement's line before every statement nested in
    ``node`` (bodies of branches, loops, handlers, and of nested functions unless ``nested`` is
    False)."""
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST) and (nested or not isinstance(
                        item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))):
                    _hits_before_statements(item, key, nested)
            if value and all(isinstance(item, ast.stmt) for item in value):
                setattr(node, field, [new for item in value for new in (_hit(key, item), item)])
        elif isinstance(value, ast.AST) and (nested or not isinstance(value, ast.Lambda)):
            _hits_before_statements(value, key, nested)


def _hit(key, stmt):
    return ast.Expr(ast.Call(ast.Name("_mutate_code_hit_", ast.Load()),
                             [ast.Constant(f"{key}:{stmt.lineno}")], []))


def instrument(module_names):
    """Make every statement of the modules' functions add its ``_key`` and line to ``HITS``
    when it runs (a call put before it; cheap, unlike a trace or profile hook on every call),
    so that a mutant runs only the tests that ran its statement. In a module numba compiles
    from, the functions numba compiles and the functions nested in others (the implementations
    an ``overload`` returns) are left as they are: numba cannot compile the call."""
    for module_name in module_names:
        module = importlib.import_module(module_name)
        where = inspect.getsourcefile(module)
        module.__dict__["_mutate_code_hit_"] = HITS.add
        source = inspect.getsource(module)
        compiled = _numba_module(source)
        for qualname, cls, fn in _functions(ast.parse(source)):
            if compiled and (_compiled_by_numba(fn) or hasattr(
                    getattr(module, qualname, None), "py_func")):
                UNTRACED.add(_key(where, qualname))  # its mutants run every test
                continue
            doc = fn.body[:1] if ast.get_docstring(fn) is not None else []
            rest = ast.Module(fn.body[len(doc):], [])
            _hits_before_statements(rest, _key(where, qualname), nested=not compiled)
            fn.body = doc + rest.body
            fn.decorator_list = []
            try:
                apply_code(module_name, qualname, cls, fn)
            except Exception:  # noqa: BLE001 - not instrumented: its mutants run every test
                UNTRACED.add(_key(where, qualname))


def _send(fd, line):
    os.write(fd, (line + "\n").encode())


def _unlined(label):
    """A mutant's label without its line number."""
    return re.sub(r"^([\w.]+):\d+ ", r"\1 ", label)


class Mutator:
    """The pytest plugin: replaces the test loop by the mutation loop."""

    def __init__(self, args):
        self.args = args
        self.equivalent = {_unlined(e) for e in mutate_rules._equivalent(args.equivalent)}
        self.out = open(args.out, "a") if args.out else None
        self.done = set()
        self.seconds = {}  # how long each test took unmutated (recorded with coverage)
        self.killers = {}  # function -> the tests that killed its mutants, the latest first
        self.reads = None  # nodeid -> the rules whose templates it read (template runs)
        if args.out and os.path.exists(args.out):
            verdicts = ("killed", "killed (timeout)", "survived", "survived (no test runs it)",
                        "equivalent")
            self.done = {line.split(": ", 1)[1].strip() for line in open(args.out)
                         if line.split(": ", 1)[0] in verdicts}

    def say(self, line):
        print(line, flush=True)
        if self.out:
            self.out.write(line + "\n")
            self.out.flush()

    def _child(self, items, apply, timeout, failed=None, cover=None, reads=None):
        """Fork; run the items with the mutant applied. Returns (True, the test that failed),
        ("timeout", None) or (False, None). With ``failed``, run them all and collect the
        failing ones; with ``cover``, also record which of srcgrad's statements each test runs
        (``cover[nodeid]``: a set of ``_key``:line); with ``reads``, which rules' templates
        each test takes (``reads[nodeid]``: a set of rule names)."""
        from _pytest.runner import runtestprotocol

        from srcgrad.rules import derived
        from srcgrad.transforms import forget

        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            status = 0
            try:
                os.environ["SRCGRAD_CACHE"] = "0"
                signal.alarm(timeout)
                if apply is not None:
                    apply()
                if reads is not None:
                    record_reads()
                for i, item in enumerate(items):
                    nxt = items[i + 1] if i + 1 < len(items) else None
                    HITS.clear()
                    READS.clear()
                    # each test derives its functions anew: a derivative an earlier test left in
                    # srcgrad's memory would neither be mutated nor record coverage (a golden
                    # file's test read the text another test had generated); the rule objects
                    # of generated and recursive functions keep their derivatives too
                    # (rules/derived.py: _Derivatives.made, _Lazy.made), and the splitters
                    forget()
                    derived._RULES.clear()
                    derived._SPLITTERS.clear()
                    began = time.time()
                    reports = runtestprotocol(item, nextitem=nxt, log=False)
                    if cover is not None:
                        _send(write, "\t".join(["C", item.nodeid, str(time.time() - began)]
                                               + sorted(HITS)))
                    if reads is not None:
                        _send(write, "\t".join(["R", item.nodeid, str(time.time() - began)]
                                               + sorted(READS)))
                    if any(r.failed for r in reports):
                        status = 1
                        _send(write, "F\t" + item.nodeid)
                        if failed is None:
                            break
            except BaseException:  # noqa: BLE001 - anything a mutant raises kills it
                status = 1
            for key in UNTRACED if cover is not None else ():
                _send(write, "U\t" + key)
            os._exit(status)
        os.close(write)
        chunks = []
        while True:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read)
        _, code = os.waitpid(pid, 0)
        first = None
        for line in b"".join(chunks).decode().splitlines():
            kind, nodeid, *keys = line.split("\t")
            if kind == "F":
                first = first or nodeid
                if failed is not None:
                    failed.add(nodeid)
            elif kind == "C" and cover is not None:
                cover[nodeid] = set(keys[1:])
                self.seconds[nodeid] = float(keys[0])
            elif kind == "R" and reads is not None:
                reads[nodeid] = set(keys[1:])
                self.seconds[nodeid] = float(keys[0])
            elif kind == "U" and cover is not None:
                cover.setdefault("", set()).add(nodeid)  # (the key of a function not traced)
        if os.WIFSIGNALED(code) and os.WTERMSIG(code) == signal.SIGALRM:
            return "timeout", None
        return code != 0, first

    def pytest_runtestloop(self, session):
        args = self.args
        todo = []
        for name in args.code:
            where = inspect.getsourcefile(importlib.import_module(name))
            todo += [(label, lambda m=name, q=q, c=c, f=f: apply_code(m, q, c, f), None,
                      _key(where, q), line) for label, q, c, f, line in code_mutants(name)]
        for name in args.templates:
            todo += [(label, lambda r=r, s=s, p=p, t=t: apply_template(r, s, p, t), r, None,
                      None) for label, r, s, p, t in template_mutants(name)]
        if args.function:  # searched in "module qualname" (code) or "rule side[param]" (templates)
            pattern = re.compile(args.function)
            todo = [t for t in todo if pattern.search(_unlined(t[0]).split(" (", 1)[0])]
        if args.rerun:  # (matched without line numbers: the source may have moved since)
            wanted = {_unlined(line.split(": ", 1)[1].strip()) for line in open(args.rerun)
                      if line.startswith(("survived", "undecided"))}
            todo = [t for t in todo if _unlined(t[0]) in wanted]
        if args.exclude:  # (matched without line numbers, as --rerun)
            ran_before = {_unlined(label) for path in args.exclude
                          for label in mutate_rules._reported(path)}
            before = len(todo)
            todo = [t for t in todo if _unlined(t[0]) not in ran_before]
            self.say(f"== {before} mutants, {before - len(todo)} of them reported by "
                     f"{', '.join(args.exclude)}: {len(todo)} not run before")
        population = len(todo)
        if args.sample:  # (a sample as large as the population: all of them, shuffled)
            picked = random.Random(args.seed).sample(range(population),
                                                     min(args.sample, population))
            todo = [todo[i] for i in picked]  # in random order: a run cut by --budget is a sample
        self.say(f"== {' '.join(args.code + args.templates)}: {len(todo)} of {population} "
                 f"mutants (seed {args.seed}); {len(session.items)} tests")
        start = time.time()
        failed, cover = self._baseline(session)
        items = [i for i in session.items if i.nodeid not in failed]
        for nodeid in sorted(failed):
            self.say(f"BASELINE FAILS (left out): {nodeid}")
        self.say(f"baseline: {len(items)} tests, {time.time() - start:.0f} s")
        counts = dict.fromkeys(("killed", "survived", "listed", "undecided"), 0)
        began, ran = time.time(), 0
        for label, apply, rule, key, line in todo:
            if label in self.done:
                continue
            if args.budget and time.time() - start > args.budget:
                self.say(f"budget of {args.budget} s spent: stopped")
                break
            ran += 1
            self._one(label, apply, self._tests_of(items, rule, key, line, cover), cover,
                      key, counts)
        total = counts["killed"] + counts["survived"] + counts["listed"]
        score = f"{100 * counts['killed'] / total:.1f}%" if total else "-"
        spent = time.time() - began
        self.say(f"== {total} mutants run, {counts['killed']} killed ({score}), "
                 f"{counts['listed']} equivalent (listed), {counts['survived']} survived, "
                 f"{counts['undecided']} undecided; {time.time() - start:.0f} s "
                 f"({ran} mutants in {spent:.0f} s after the baseline: "
                 f"{60 * ran / max(spent, 1e-9):.1f} per minute)")
        return True

    def _baseline(self, session):
        """The first, unmutated run (or the saved one): the failing tests and the coverage."""
        args = self.args
        failed = set()
        cover = {} if (args.code or args.instrument) and not args.all_tests else None
        if args.coverage and os.path.exists(args.coverage):  # the first run of an earlier run
            with open(args.coverage) as saved:
                known = json.load(saved)
            names = known.get("keys")
            failed, self.seconds = set(known["failed"]), known["seconds"]
            cover = {nodeid: {names[k] for k in keys} if names else set(keys)
                     for nodeid, keys in known["cover"].items()}
            missing = set(args.code) - set(known.get("modules", args.code))
            if missing:
                raise SystemExit(f"{args.coverage} has no coverage of {sorted(missing)}: give "
                                 "them to the first run (--instrument)")
            if args.templates and not args.code:  # a template run: the rules each test read
                if "reads" not in known:  # (without them every mutant would run every test)
                    raise SystemExit(f"{args.coverage} records no rule reads (a --code run "
                                     "made it): give a template run a coverage file of its own")
                self.reads = {nodeid: set(rules) for nodeid, rules in known["reads"].items()}
                return failed, None
            return failed, cover
        modules = list(dict.fromkeys(args.code + args.instrument))
        # a template run: which tests that are no row read which rules (_items_of)
        self.reads = {} if args.templates and not args.code else None
        self._child(session.items, (lambda: instrument(modules)) if cover is not None
                    else None, args.baseline_timeout or 20 * args.timeout, failed, cover,
                    self.reads)
        if args.coverage and (cover is not None or self.reads is not None):
            names = sorted(set().union(*cover.values())) if cover else []
            index = {name: i for i, name in enumerate(names)}
            saved = {"failed": sorted(failed), "seconds": self.seconds, "keys": names,
                     "modules": modules, "cover": {k: sorted(index[n] for n in v)
                                                   for k, v in (cover or {}).items()}}
            if self.reads is not None:
                saved["reads"] = {k: sorted(v) for k, v in self.reads.items()}
            with open(args.coverage, "w") as out:
                json.dump(saved, out)
        return failed, cover

    def _tests_of(self, items, rule, key, line, cover):
        """The tests a mutant runs: those that ran its statement (its function's, with a
        coverage file of an older run), the ones that killed a mutant of its function first,
        then the quick ones."""
        mine = _items_of(items, rule, self.reads)
        if cover is not None and key is not None and key not in cover.get("", ()):
            where = f"{key}:{line}"
            mine = [i for i in mine if where in cover.get(i.nodeid, ())
                    or key in cover.get(i.nodeid, ())]
        if cover is not None or self.reads is not None:  # (a template run: key is None)
            rank = {nodeid: n for n, nodeid in enumerate(self.killers.get(key, ()))}
            mine.sort(key=lambda i: (rank.get(i.nodeid, len(rank)),
                                     self.seconds.get(i.nodeid, 0)))
        return mine

    def _one(self, label, apply, mine, cover, key, counts):
        """Run one mutant against its tests and report it."""
        args = self.args
        timeout, capped = args.timeout, False
        if cover is not None or self.reads is not None:
            timeout = max(timeout, int(3 * sum(self.seconds.get(i.nodeid, 0) for i in mine)))
            capped, timeout = timeout > args.cap, min(timeout, args.cap)
        began = time.time()
        dead, killer = self._child(mine, apply, timeout) if mine else (False, None)
        verdict = "killed" if dead is True else "killed (timeout)" if dead else "survived"
        if not mine:
            verdict = "survived (no test runs it)"
        if dead == "timeout" and capped:
            self.say(f"undecided (its tests take over --cap {args.cap} s): {label}")
            counts["undecided"] += 1
            return
        if killer is not None:  # tried first for the next mutants of the same function
            known = self.killers.setdefault(key, [])
            if killer in known:
                known.remove(killer)
            known.insert(0, killer)
        counts["killed"] += bool(dead)
        if not dead and _unlined(label) in self.equivalent:
            verdict = "equivalent"
            counts["listed"] += 1
        elif not dead:
            counts["survived"] += 1
        self.say(f"{verdict}: {label}")
        self.say(f"#   {len(mine)} tests selected, {time.time() - began:.1f} s"
                 + (f", killed by {killer}" if killer else ""))


def _modules(names):
    """The modules named, a package standing for its modules (``srcgrad.runtime``)."""
    import pkgutil

    out = []
    for name in names:
        module = importlib.import_module(name)
        if hasattr(module, "__path__"):
            out += [name] + [f"{name}.{info.name}" for info in
                             pkgutil.iter_modules(module.__path__) if not info.ispkg]
        else:
            out.append(name)
    return list(dict.fromkeys(out))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", action="append", default=[],
                    help="a module (or a package: each of its modules) whose code to mutate")
    ap.add_argument("--templates", action="append", default=[],
                    help="a rule module (srcgrad.rules.X) whose templates to mutate")
    ap.add_argument("--sample", type=int, default=0, help="run a random sample of the mutants")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=120, help="seconds a mutant may take")
    ap.add_argument("--cap", type=int, default=300,
                    help="seconds a code mutant may take at most, however long its tests took "
                    "unmutated (a mutant stopped there is undecided, not killed)")
    ap.add_argument("--budget", type=int, default=0,
                    help="start no mutant after this many seconds (the ones run are a random "
                    "sample of the --sample)")
    ap.add_argument("--out", default=None,
                    help="also append the lines to this file; mutants it lists are not run again")
    ap.add_argument("--function", default=None,
                    help="only mutants of the functions (or rules) whose name this regular "
                    "expression finds")
    ap.add_argument("--all-tests", action="store_true",
                    help="run every test against a code mutant (by default only the tests that "
                    "called its function when they ran unmutated)")
    ap.add_argument("--coverage", default=None,
                    help="keep the first run's results (failing tests, coverage, times) in this "
                    "file and read them from it next time (same tree, same tests): a resumed "
                    "run starts at once")
    ap.add_argument("--instrument", action="append", default=[],
                    help="a module whose coverage the first run also records (one coverage "
                    "file for several runs, each mutating one of the modules)")
    ap.add_argument("--baseline-timeout", type=int, default=0,
                    help="seconds the first run may take (default 20 x --timeout)")
    ap.add_argument("--rerun", default=None,
                    help="only the mutants a previous run's output (this file) lists as survived "
                    "or undecided")
    ap.add_argument("--exclude", action="append", default=[],
                    help="an output file of an earlier run: the mutants it reports are left out "
                    "before --sample draws (a sample of the mutants not run before)")
    ap.add_argument("--equivalent", default=mutate_rules.EQUIVALENT)
    args = ap.parse_args(argv[:split])
    args.code, args.instrument = _modules(args.code), _modules(args.instrument)
    import pytest

    # one process (`-n 0`): a mutant runs a few test files, and two workers would cost more to
    # start than they save
    return pytest.main(argv[split + 1:] + ["-p", "no:cacheprovider", "-q", "-n", "0"],
                       plugins=[Mutator(args)])


if __name__ == "__main__":
    sys.exit(main())
