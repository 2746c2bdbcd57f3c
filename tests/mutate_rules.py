"""Mutation testing of the rule tables' templates (docs/development.md).

mutmut mutates function bodies; a rule table is module-level calls whose templates are strings
that the transform inlines into generated code, so mutmut never sees them. This script mutates
each template string of the named rule modules the way a mutation tool mutates code, and checks
each mutant through the transform, with the rows that test that rule:

- ``tests/test_rules.py``: the row's gradient against central differences, and ``jvp`` against
  the gradient (``test_rule_gradient``, ``test_rule_tangent``);
- ``tests/test_rule_shapes.py``: the same at every generated shape of the row
  (``test_rule_at_generated_shapes``);
- ``tests/test_scalar_rules.py``: gradient, tangent and hessian of the ``math``/builtin rows;
- ``tests/test_helper_rules.py`` (``helper_rules``, ``runtime_rules``: rules of srcgrad's own
  helpers, read by second derivatives only): the tests that read the rule's templates, recorded
  by running each test once in a child (``_recorded``; ``--record`` adds test modules).

A mutant is *killed* when one of those checks fails (or raises, or takes longer than
``--timeout``); each runs in a forked child, so nothing a mutant changes leaks into the next.
Operators: arithmetic operators swapped (``+ -``, ``* /``, ``** *``, ``@ *``), one operand of a
binary operation dropped, a unary minus or ``not`` dropped, comparisons and ``and``/``or``
swapped, numbers changed by one, ``True``/``False`` swapped, the branches of ``a if c else b``
swapped, a keyword argument dropped, a one-argument call replaced by its argument (``mT(y)`` ->
``y``), and a name of the rule (``y``, a parameter, a tangent) replaced by another of its names.

    python tests/mutate_rules.py numpy_rules [linalg_rules ...] [--match np.sin] [--out FILE]

It prints one line per mutant (``killed`` / ``survived`` with the rule, template and mutated
text) and a score per module; run it from the repository root (``PYTHONPATH=.``).
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib
import math
import os
import random
import re
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
# a mutant changes srcgrad in memory, where the disk cache cannot see it: a derivative generated
# with a mutated rule must never be stored, nor one generated without it loaded
os.environ["SRCGRAD_CACHE"] = "0"

import numpy as np  # noqa: E402

from srcgrad.rules import registry  # noqa: E402

SWAP = {
    ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div], ast.Div: [ast.Mult],
    ast.Pow: [ast.Mult], ast.MatMult: [ast.Mult], ast.FloorDiv: [ast.Div], ast.Mod: [ast.Div],
}
COMPARE = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


def _node_mutants(node, names):
    """Replacements for one node: (description, new node)."""
    if isinstance(node, ast.BinOp):
        for op in SWAP.get(type(node.op), []):
            yield "operator", ast.BinOp(node.left, op(), node.right)
        yield "left operand only", node.left
        yield "right operand only", node.right
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        yield "unary dropped", node.operand
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in COMPARE:
                ops = list(node.ops)
                ops[i] = COMPARE[type(op)]()
                yield "comparison", ast.Compare(node.left, ops, node.comparators)
    elif isinstance(node, ast.BoolOp):
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "boolean operator", ast.BoolOp(other, node.values)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield "constant", ast.Constant(not node.value)
        elif isinstance(node.value, (int, float)):
            yield "constant", ast.Constant(node.value + 1)
    elif isinstance(node, ast.IfExp):
        yield "branches swapped", ast.IfExp(node.test, node.orelse, node.body)
    elif isinstance(node, ast.Call):
        for i in range(len(node.keywords)):
            keywords = node.keywords[:i] + node.keywords[i + 1:]
            yield "keyword dropped", ast.Call(node.func, node.args, keywords)
        if len(node.args) == 1 and not node.keywords:
            yield "call dropped", node.args[0]
    elif isinstance(node, ast.Name) and node.id in names:
        for other in names:
            if other != node.id:
                yield "name replaced", ast.Name(other, ast.Load())


def _swap_in(tree, target, new):
    """A copy of ``tree`` with the node ``target`` (by identity) replaced by ``new``."""
    memo = {id(target): new}
    return copy.deepcopy(tree, memo)


def mutants(text, names):
    """The mutated texts of a template, each with a description, without duplicates."""
    tree = ast.parse(text.strip(), mode="eval")
    original = ast.unparse(tree)
    seen = {original}
    for node in ast.walk(tree):
        for what, new in _node_mutants(node, names):
            try:
                mutated = ast.unparse(ast.fix_missing_locations(_swap_in(tree, node, new)))
                compile(mutated, "<mutant>", "eval")
            except (SyntaxError, ValueError, TypeError):
                continue
            if mutated not in seen:
                seen.add(mutated)
                yield what, mutated


def rules_of(module_name):
    """The rules a rule module registers, found by running it again into a recording table."""
    module = importlib.import_module(f"srcgrad.rules.{module_name}")
    recorded = {}
    original = registry.RULES
    registry.RULES = recorded
    try:
        importlib.reload(module)
    finally:
        registry.RULES = original
    original.update(recorded)  # the fresh rules are the ones in force (same templates)
    unique = {}
    for rule in recorded.values():
        if not rule.nondiff and (rule.vjp_src or rule.jvp_src):
            unique[id(rule)] = rule
    return list(unique.values())


def _checks():
    """fn -> list of zero-argument checks (the rows' test functions), cheapest first."""
    import test_rule_shapes as shapes
    import test_rules as table
    import test_scalar_rules as scalar

    checks = {}

    def add(fn, check):
        checks.setdefault(registry._key(fn), []).append(check)

    for p in table.PARAMS:
        if not p.marks:
            add(p.values[0].fn, lambda r=p.values[0]: table.test_rule_gradient_and_tangent(r))
    for p in scalar.PARAMS:
        r = p.values[0]
        for test in (scalar.test_scalar_rule_gradient, scalar.test_scalar_rule_tangent,
                     scalar.test_scalar_rule_second_order):
            add(r[0], lambda r=r, test=test: test(r))
    from srcgrad import runtime

    for p in scalar.PARAMS:  # digamma is lgamma's derivative: its rule is their second order
        if p.values[0][0] in (math.lgamma, math.gamma):
            add(runtime.digamma, lambda r=p.values[0]: scalar.test_scalar_rule_second_order(r))
    for r in getattr(table, "ONE_ACTIVE", []):
        add(r.fn, lambda r=r: table.test_rule_rows_not_run_on_dask(r))
    for p in getattr(scalar, "EXACT_PARAMS", []):
        add(p.values[0][0], lambda r=p.values[0]: scalar.test_scalar_rule_convention(r))
    # the hand-written checks of rules whose rows cannot say everything
    EXTREMA = "test_extrema_ties_and_nans_follow_the_documented_convention"
    NANS = "test_nan_reductions_skip_the_nans"
    la = np.linalg
    extra = [
        (la.eigvalsh, "test_eigvalsh_reads_the_triangle_it_is_told", ["L", "U"]),
        (la.eigh, "test_eigh_adjoint", [None]),
        (la.qr, "test_qr_adjoint", [None]),
        (la.svd, "test_svd_adjoint", [(4, 3), (3, 4), (3, 3)]),
        (la.lstsq, "test_lstsq_adjoint", [(6,), (6, 2)]),
        (np.absolute, "test_kinks_follow_the_documented_convention", [None]),
        (np.fabs, "test_kinks_follow_the_documented_convention", [None]),
        (np.copysign, "test_kinks_follow_the_documented_convention", [None]),
        (np.maximum, "test_kinks_follow_the_documented_convention", [None]),
        (np.max, "test_kinks_follow_the_documented_convention", [None]),
        (np.clip, "test_kinks_follow_the_documented_convention", [None]),
        (np.minimum, EXTREMA, [table.minimum_sum] if hasattr(table, EXTREMA) else []),
        (np.fmax, EXTREMA, [table.fmax_sum] if hasattr(table, EXTREMA) else []),
        (np.fmin, EXTREMA, [table.fmin_sum] if hasattr(table, EXTREMA) else []),
        (np.nansum, NANS, ["nansum"] if hasattr(table, NANS) else []),
        (np.nanmean, NANS, ["nanmean"] if hasattr(table, NANS) else []),
        (np.nanmax, NANS, ["nanmax"] if hasattr(table, NANS) else []),
        (np.nanmin, NANS, ["nanmin"] if hasattr(table, NANS) else []),
        (la.slogdet, "test_slogdet_sign_alone_has_a_zero_gradient_of_the_matrix_shape", [None]),
        (np.nan_to_num, "test_nan_to_num_passes_no_gradient_through_what_it_replaces", [None]),
        (np.std, "test_a_zero_std_has_gradient_and_tangent_zero", [None]),
        (np.nanvar, "test_nan_functions_give_nans_no_gradient", ["nanvar"]),
        (np.nanstd, "test_nan_functions_give_nans_no_gradient", ["nanstd"]),
        (np.nancumsum, "test_nan_functions_give_nans_no_gradient", ["nancumsum"]),
        (np.nancumprod, "test_nan_functions_give_nans_no_gradient", ["nancumprod"]),
    ]
    for fn, name, values in extra:
        test = getattr(table, name, None)  # (absent in older versions of the tests)
        for v in values if test else []:
            add(fn, (lambda t=test: t()) if v is None else (lambda t=test, v=v: t(v)))
    import test_dtypes as dtypes

    for fn, f in [(np.array, "mean_of_array"), (np.asarray, "mean_of_asarray")]:
        if hasattr(dtypes, f):  # the argument's type (float) is the gradient's
            f = getattr(dtypes, f)
            add(fn, lambda f=f: dtypes.test_a_float_made_a_0d_array_gets_a_float_gradient(f))
    for p in getattr(table, "NUMERIC_PARAMS", []):
        add(p.values[0].fn, lambda r=p.values[0]: table.test_numeric_rule(r))
    try:
        import test_numeric_rules as numeric
    except ImportError:  # (absent in older versions of the tests)
        numeric = None
    try:
        import test_mutation_kills_tables as tables
    except ImportError:  # (absent in older versions of the tests)
        tables = None
    for module in (numeric, tables):
        for fn, tests in getattr(module, "MUTATION_CHECKS", {}).items():
            for test in tests:
                add(fn, test)
    import test_complex_table as complex_table  # complex inputs: the rows above are real

    for fn, _ in _callees(getattr(complex_table, "CALLS", [])):
        for test in (complex_table.test_vjp_is_the_gradient_of_the_pairing_with_the_seed,
                     complex_table.test_jvp_of_every_call_against_central_differences):
            add(fn, test)
    zero = getattr(complex_table, "test_a_complex_zero_has_gradient_zero", None)
    for f in getattr(complex_table, "AT_ZERO", []) if zero else []:
        for fn, _ in _callees([f.__doc__]):
            add(fn, lambda f=f: zero(f))
    angle = getattr(complex_table, "test_the_angle_on_the_positive_real_axis", None)
    if angle:
        add(np.angle, angle)
    import test_complex

    for fn, calls in _callees(getattr(test_complex, "REFUSED", [])):
        for call in calls:
            add(fn, lambda c=call: test_complex.test_rules_for_real_values_refuse_complex_ones(c))
    for p in shapes.VARIANTS:
        r, refused = p.values
        add(r.fn, lambda r=r, refused=refused: shapes.test_rule_at_generated_shapes(r, refused))
    if any(m in RECORDED for m in MODULES):  # (recorded: costs a run of the test files)
        for test_module in RECORD:
            module = importlib.import_module(test_module)
            for key, tests in _recorded(_tests_of_module(module)).items():
                checks.setdefault(key, []).extend(tests)
    return checks


MODULES = []  # the rule modules of this run (main sets it)
# rule modules read only by derivatives of generated code (second order and up): their checks
# are the tests of RECORD (test modules) that read each rule's templates, found by running them
RECORDED = ("helper_rules", "runtime_rules")
# (--record adds test modules)
RECORD = ["test_helper_rules", "test_mutation_kills_lists", "test_mutation_kills_rules",
          "test_mutation_kills_helpers"]


def _tests_of_module(module):
    """Every test of a test module as a zero-argument call, its parametrizations expanded
    (``pytest.mark.parametrize`` with argument values)."""
    tests = []
    for name, fn in vars(module).items():
        if not name.startswith("test_") or not callable(fn):
            continue
        marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            tests.append(fn)
            continue
        # stacked parametrize marks: every combination (before, only the first mark was
        # expanded, so such a test failed for a missing argument and checked nothing)
        combinations = [{}]
        for mark in marks:
            argnames, values = mark.args[:2]
            names = ([a.strip() for a in argnames.split(",")] if isinstance(argnames, str)
                     else list(argnames))
            each = []
            for v in values:
                v = v.values if hasattr(v, "values") and not isinstance(v, dict) else v  # param
                if len(names) > 1:
                    each.append(dict(zip(names, v)))
                else:
                    each.append({names[0]: v[0] if isinstance(v, tuple) else v})
            combinations = [{**c, **e} for c in combinations for e in each]
        for kwargs in combinations:
            tests.append(lambda fn=fn, kwargs=kwargs: fn(**kwargs))
    return tests


def _recorded(tests):
    """rule key -> the tests that read its templates: each test runs once, in a forked child
    (the templates and derivatives it makes stay there), with ``Rule.vjp``/``Rule.jvp``
    recording the rules whose templates the transform takes. A test that fails unmutated is
    left out."""
    found = {}
    for test in tests:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            seen = set()
            for side in ("vjp", "jvp"):
                original = getattr(registry.Rule, side)

                def recording(rule, original=original, seen=seen):
                    seen.add(id(rule))
                    return original(rule)

                setattr(registry.Rule, side, recording)
            import warnings

            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    test()
                ok = True
            except BaseException:  # noqa: BLE001 - a failing test checks nothing
                ok = False
            keys = [i for i, k in enumerate(registry.RULES) if id(registry.RULES[k]) in seen]
            with os.fdopen(write, "w") as out:
                out.write(" ".join(map(str, keys)) if ok else "FAILED")
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as inp:
            text = inp.read()
        os.waitpid(pid, 0)
        if text == "FAILED":
            print(f"(a helper test fails unmutated: left out: {test})", flush=True)
            continue
        keys = list(registry.RULES)  # (a key the child added, e.g. SciPy's, is not mutated)
        for i in map(int, text.split()):
            if i < len(keys):
                found.setdefault(keys[i], []).append(test)
    return found


def _callees(calls):
    """The functions the calls of a table of calls as text (``"np.exp(z)"``, the lists of
    ``tests/test_complex_table.py`` and ``tests/test_complex.py``) call: fn -> its calls."""
    import builtins

    found = {}
    for call in calls:
        for node in ast.walk(ast.parse(call, mode="eval")):
            if isinstance(node, ast.Call):
                try:
                    fn = eval(compile(ast.Expression(node.func), "<call>", "eval"),
                              {"np": np, "__builtins__": builtins})
                except (AttributeError, NameError):
                    continue
                found.setdefault(id(fn), (fn, []))[1].append(call)
    return found.values()


EQUIVALENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equivalent_mutants.txt")


def _equivalent(path):
    """The mutants listed as equivalent (the part of each line before `` ## ``)."""
    if not path or not os.path.exists(path):
        return set()
    return {line.split(" ## ")[0].strip() for line in open(path)
            if line.strip() and not line.startswith("#")}


def _reported(path):
    """The mutants an output file of an earlier run reports a verdict of."""
    verdicts = ("killed", "killed (timeout)", "survived", "survived (no test runs it)",
                "equivalent")
    return {line.split(": ", 1)[1].strip() for line in open(path)
            if line.split(": ", 1)[0] in verdicts}


def _names(rule, side):
    """The names a template's names may be replaced by: the result, the differentiable
    parameters and their cotangent or tangents."""
    params = [p for p in rule.signature.parameters if p in rule.vjp_src or p in rule.jvp_src]
    return params + ["y"] + (["dy"] if side == "vjp" else ["d" + p for p in params])


def _keys_of(rule):
    return [k for k, v in registry.RULES.items() if v is rule]


def _run_child(rule, side, param, text, checks, timeout=120):
    """Fork; in the child, put ``text`` in the rule and run the checks. True if one failed."""
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            signal.alarm(timeout)
            if text is not None:
                getattr(rule, f"{side}_src")[param] = text
            rule.vjp_template = rule.jvp_template = None
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for check in checks:
                    check()
        except BaseException:  # noqa: BLE001 - any failure kills the mutant
            status = 1
        os._exit(status)
    _, code = os.waitpid(pid, 0)
    return code != 0


def _enumerate(rules, wanted):
    """Every mutant of the rules' templates: (rule, side, param, mutated text, label)."""
    todo = []
    for rule in rules:
        for side in ("vjp", "jvp"):
            names = _names(rule, side)
            for param, text in list(getattr(rule, f"{side}_src").items()):
                if not isinstance(text, str):  # a refused parameter (``{"x": None}``)
                    continue
                for what, mutated in mutants(text, names):
                    label = f"{rule.name} {side}[{param}] ({what}): {mutated}"
                    if wanted is None or label in wanted:
                        todo.append((rule, side, param, mutated, label))
    return todo


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--match", default="",
                    help="only rules whose name this regular expression finds (`np.sin`, "
                    "`dot_vjp|add_at`)")
    ap.add_argument("--rules", default=":", help="a slice of the module's rules (`0:40`)")
    ap.add_argument("--skip", default="", help="rules to leave out, comma-separated names")
    ap.add_argument("--out", default=None,
                    help="also append the lines to this file; mutants it lists are not run again")
    ap.add_argument("--rerun", default=None,
                    help="only the mutants a previous run's output (this file) lists as survived")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds a mutant may take (its baseline ten times that) before it counts "
                    "as killed (the baseline as failing)")
    ap.add_argument("--equivalent", default=EQUIVALENT,
                    help="the list of equivalent mutants (default tests/equivalent_mutants.txt)")
    ap.add_argument("--sample", type=int, default=0,
                    help="run only a random sample of this many of each module's mutants")
    ap.add_argument("--seed", type=int, default=0, help="the seed of --sample")
    ap.add_argument("--exclude", action="append", default=[],
                    help="an output file of an earlier run: the mutants it reports are left out "
                    "before --sample draws (a sample of the mutants not run before)")
    ap.add_argument("--budget", type=int, default=0,
                    help="start no mutant after this many seconds")
    ap.add_argument("--record", action="append", default=[],
                    help="a test module (`test_third_order`) whose tests also check the rules of "
                    f"{', '.join(RECORDED)}: the ones each of its tests reads, recorded")
    args = ap.parse_args(argv)
    equivalent = _equivalent(args.equivalent)
    MODULES[:] = args.modules
    RECORD.extend(args.record)
    done = set()  # with --out, the mutants an interrupted run already reported are skipped
    if args.out and os.path.exists(args.out):
        done = {line.split(": ", 1)[1].strip() for line in open(args.out)
                if line.split(": ", 1)[0] in ("killed", "survived", "equivalent")}
    ran_before = set().union(*(_reported(path) for path in args.exclude))
    wanted = None
    if args.rerun:
        wanted = {line.split(": ", 1)[1].strip() for line in open(args.rerun)
                  if line.startswith("survived: ")}
    checks = _checks()
    out = open(args.out, "a") if args.out else None

    def say(line):
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    for module_name in args.modules:
        killed = survived = untested = listed = 0
        start = time.time()
        lo, hi = (int(v) if v else None for v in args.rules.split(":"))
        rules = []
        for rule in rules_of(module_name)[lo:hi]:
            if args.match and not re.search(args.match, rule.name):
                continue
            if rule.name in args.skip.split(","):
                continue
            if wanted is not None and not any(w.startswith(rule.name + " ") for w in wanted):
                continue
            rules.append(rule)
        todo = _enumerate(rules, wanted)
        if args.exclude:
            before = len(todo)
            todo = [m for m in todo if m[-1] not in ran_before]
            say(f"== {module_name}: {before} mutants, {before - len(todo)} of them reported by "
                f"{', '.join(args.exclude)}: {len(todo)} not run before")
        population = len(todo)
        if args.sample:
            picked = random.Random(args.seed).sample(range(population),
                                                     min(args.sample, population))
            todo = [todo[i] for i in picked]  # in random order: a run cut by --budget is a sample
            say(f"== {module_name}: a sample of {len(todo)} of {population} mutants "
                f"(seed {args.seed})")
        by_rule = {}
        for m in todo:
            by_rule.setdefault(id(m[0]), []).append(m)
        for group in by_rule.values():
            rule = group[0][0]
            rule_checks = [c for k in _keys_of(rule) for c in checks.get(k, [])]
            if not rule_checks:
                untested += len(group)
                say(f"NO CHECKS {rule.name} ({len(group)} mutants)")
                continue
            if all(m[-1] in done for m in group):
                continue
            if _run_child(rule, "vjp", None, None, rule_checks, timeout=10 * args.timeout):
                say(f"BASELINE FAILS {rule.name}: skipped ({len(group)} mutants)")
                continue
            for rule, side, param, mutated, label in group:
                if label in done:
                    continue
                if args.budget and time.time() - start > args.budget:
                    break
                dead = _run_child(rule, side, param, mutated, rule_checks, args.timeout)
                killed += dead
                survived += not dead
                verdict = "killed" if dead else "survived"
                if not dead and label in equivalent:
                    verdict, survived, listed = "equivalent", survived - 1, listed + 1
                say(f"{verdict}: {label}")
        total = killed + survived + listed
        score = f"{100 * killed / total:.1f}%" if total else "-"
        say(f"== {module_name}: {total} mutants, {killed} killed ({score}), {listed} equivalent "
            f"(listed), {survived} survived; without checks: {untested} mutants; "
            f"{time.time() - start:.0f} s")
    np.seterr(all="warn")


if __name__ == "__main__":
    main()
