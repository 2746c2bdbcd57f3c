"""The dataflow solver and the analyses built on it, on small bodies parsed directly."""

import textwrap

import gast

from srcgrad.analysis.dataflow import Dataflow
from srcgrad.analysis.definitions import Definitions
from srcgrad.analysis.integers import Integers
from srcgrad.astutil import param_names, stored


def _fn(source):
    return gast.parse(textwrap.dedent(source)).body[0]


def _by_name(func, fn):
    return isinstance(func, gast.Name) and func.id == fn.__name__


class _Assigned(Dataflow):
    def transfer(self, stmt, facts):
        return facts | stored(stmt)


class _Read(Dataflow):
    backward = True

    def transfer(self, stmt, facts):
        return facts | {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)}


def test_branches_join_and_loops_reach_a_fixed_point():
    fn = _fn(
        """
        def f(x, c):
            a = x * 2
            if c:
                b = a
            while c:
                d = e
                e = x
            z = 0
        """
    )
    solver = _Assigned()
    assert solver.block(fn.body, frozenset()) == {"a", "b", "d", "e", "z"}
    # on entry to `d = e`, after any number of trips: e may be bound by an earlier one
    loop_body = fn.body[2].body
    assert "e" in solver.before[id(loop_body[0])]
    assert solver.before[id(fn.body[1])] == {"a"}


def test_a_backward_analysis_visits_statements_last_first():
    fn = _fn(
        """
        def f(x):
            a = x
            b = a
        """
    )
    solver = _Read()
    solver.block(fn.body, frozenset())
    assert solver.before[id(fn.body[1])] == frozenset()
    assert solver.before[id(fn.body[0])] == {"a", "b"}


def test_definitions_surely_and_maybe():
    fn = _fn(
        """
        def f(x, c):
            if c:
                y = x
            z = x * 2
            for i in range(3):
                t = x
                u = t
        """
    )
    definitions = Definitions(fn.body, param_names(fn), set())
    z, loop = fn.body[1], fn.body[2]
    assert definitions.surely(fn.body[0]) == {"x", "c"}
    assert definitions.surely(z) == {"x", "c"}
    assert definitions.maybe(z) == {"x", "c", "y"}
    # bound before the first run of `u = t`; a loop target is only ever maybe bound
    assert definitions.maybe(loop.body[1]) == {"x", "c", "y", "z", "i", "t"}
    assert definitions.surely(loop.body[1]) == {"x", "c", "z", "t"}
    assert definitions.surely(loop.body[0]) == {"x", "c", "z"}


def test_integers_are_the_greatest_set_closed_under_the_rules():
    fn = _fn(
        """
        def f(x, n):
            k = 0
            for i in range(n):
                j = i + 1
                k = k + len(x) - j
                h = k * 0.5
            for r in x:
                m = r
        """
    )
    assert Integers(_by_name).run(fn, param_names(fn)) == {"k", "i", "j"}
