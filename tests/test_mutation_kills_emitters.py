"""Cases that only a surviving mutant of the emitters (``srcgrad/transform/forward.py``,
``reverse.py``, ``tape.py``) showed untested (docs/development.md, mutation testing).

Each is a program a user can write, its derivative checked against central differences; the
comment names the mutant of ``tests/mutate_code.py`` it kills.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import srcgrad

C = np.array([0.5, -1.0, 2.0])


def grows_in_a_loop(s, n):
    a = s * s
    for _ in range(n):
        a = a + C
    return np.sum(a)


@pytest.mark.parametrize("n", [1, 2])
def test_the_tangent_of_a_number_that_a_loop_makes_an_array(n):
    # `a = a + C` in a loop: a is a number before the first iteration and an array after, and
    # its tangent (that of a number) is broadcast to the new a's shape, so the tangent is
    # computed after the new value (a fresh name, then the rebinding). With one iteration the
    # tangent broadcast to the old a stays a number, and np.sum gives 2 s, not 3 * 2 s.
    # Kills forward:396 ForwardAD._needs_result (unary dropped: `if active or ...`).
    h = 1e-6
    want = (grows_in_a_loop(0.7 + h, n) - grows_in_a_loop(0.7 - h, n)) / (2 * h)
    got = srcgrad.jvp(grows_in_a_loop)(0.7, n, 1.0)[1]
    assert np.shape(got) == ()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, 3 * 2 * 0.7, rtol=1e-12)


def softsign(x):
    return x / (1.0 + np.abs(x))


@srcgrad.adjoint(softsign)
def softsign_adjoint(dy, y, x):
    return dy / (1.0 + np.abs(x)) ** 2


def softclip(x):
    return np.tanh(x) * 2.0


@srcgrad.tangent(softclip)
def softclip_tangent(y, x, dx):
    c = np.cosh(x)
    return 2.0 * dx / (c * c)


def weighted_softclip(x):
    return np.sum(softclip(x) * x)


def test_a_tangent_rule_with_a_statement_before_its_return():
    # the rule's `c = np.cosh(x)` is inlined before the tangent that reads it. Kills
    # tangents:72 Tangents.bind (right operand only: `return [assign(dname, value)]`, the
    # rule's statements dropped: NameError).
    x = np.array([0.3, -0.7, 1.1])
    t = np.array([1.0, 0.5, -2.0])
    h = 1e-6
    want = (weighted_softclip(x + h * t) - weighted_softclip(x - h * t)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(weighted_softclip)(x, t)[1], want, rtol=1e-7)


def weighted_softsign(x):
    return np.sum(softsign(x) * x)


def test_forward_mode_of_a_function_with_a_gradient_rule_alone_is_refused_where_it_is_called():
    # the gradient works; forward mode needs a tangent rule and says so, naming the parameter,
    # at the call. Kills forward:411 ForwardAD._apply_rule (the parameters' names joined)
    x = np.array([0.3, -0.7])
    np.testing.assert_allclose(
        srcgrad.grad(weighted_softsign)(x), softsign(x) + x / (1.0 + np.abs(x)) ** 2, rtol=1e-14
    )
    with pytest.raises(srcgrad.NoRuleError) as info:
        srcgrad.jvp(weighted_softsign)(x, np.ones(2))
    message = str(info.value)
    assert "softsign has a gradient rule but no tangent rule for x; forward mode" in message
    assert "test_mutation_kills_emitters.py" in message
    assert "return np.sum(softsign(x) * x)" in message and "^" in message


def written_into_itself(x):
    y = x * 2.0
    y[:] = y
    return np.sum(y**2 * x)


def test_an_array_written_into_itself():
    # `y[:] = y`: the value is the array before the write, its cotangent
    # taken before the written elements are zeroed. Kills reverse:417
    # ReverseAD._adjoint_setitem (call dropped: `name(held)`).
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(srcgrad.grad(written_into_itself)(x), 12 * x**2, rtol=1e-14)


def bound_changed_in_the_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * (i + 1.0)
        n = n + 1  # range(n) was evaluated once: the loop still runs 3 times
    return s


def test_a_loop_whose_bound_its_body_rebinds():
    # the sweep cannot replay reversed(range(n)) with the n the loop left: it counts the trips.
    # Kills tape:197 Tape._reversible (boolean operator: a name rebound in the loop counted as
    # a fixed bound).
    assert bound_changed_in_the_loop(0.7, 3) == pytest.approx(0.7 * 6)
    assert srcgrad.grad(bound_changed_in_the_loop)(0.7, 3) == pytest.approx(6.0, rel=1e-14)


M = np.array([[0.5, -1.0, 2.0], [0.35, 0.7, -0.4]])


def broadcast_against_a_matrix(x):
    return np.sum(np.sin(x * M) + np.arctan2(x, M))


def test_a_gradient_without_optimization_sums_broadcast_contributions_back():
    # with optimize=False no shapes are known: whether an operand may have been broadcast is
    # read from the other operands (a name may broadcast, a number not). Kills reverse:502
    # ReverseAD._may_broadcast (comparison: `p not in op.args`, no unbroadcast at all).
    x = np.array([0.3, -0.7, 1.1])
    want = np.sum(M * np.cos(x * M) + M / (x**2 + M**2), axis=0)
    for optimize in (True, False):
        got = srcgrad.grad(broadcast_against_a_matrix, optimize=optimize)(x)
        np.testing.assert_allclose(got, want, rtol=1e-13)


def squares_of_items_times_a_complex(x, z):
    s = 0.0
    for i in range(3):
        s = s + np.real((x[i] * z) ** 2)
    return s


def test_items_of_a_real_array_into_complex_arithmetic_add_no_complex_into_real():
    # the contribution of x[i] is complex (z is): it widens the real adjoint of x, so it is
    # added out of place, never cast into x's real buffer (no ComplexWarning; kills
    # `_in_place_item` adding items in place where the contribution widens the adjoint)
    x, z = np.array([0.3, -0.7, 1.1]), 0.5 + 1.5j
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        got = srcgrad.grad(squares_of_items_times_a_complex)(x, z)
    np.testing.assert_allclose(got, 2 * x * np.real(z**2), rtol=1e-14)


def array_and_its_item(x):
    p = x * 2.0
    s = p[0] * 3.0
    return p, s


def test_the_seed_of_a_tuple_output_is_not_written_into():
    # the cotangent of p is the seed's own array (elem of check_seed's tuple), which the
    # adjoint of p[0] must not update in place: the caller's seed stays as it was, and a
    # second call gives the same. Kills adjoints:203 Adjoints.fresh (call dropped: `return
    # (... for fn in helpers)`, a generator, so every call's result counts as a new array).
    x = np.array([0.3, -0.7, 1.1])
    seed = (np.array([1.0, 2.0, 3.0]), 0.5)
    h = 1e-6

    def weighted(v):
        p, s = array_and_its_item(v)
        return np.sum(seed[0] * p) + seed[1] * s

    want = [(weighted(x + h * e) - weighted(x - h * e)) / (2 * h) for e in np.eye(3)]
    back = srcgrad.vjp(array_and_its_item)
    for _ in range(2):
        np.testing.assert_allclose(back(x, seed), want, rtol=1e-8)
    assert seed[0].tolist() == [1.0, 2.0, 3.0]


def two_aliases_of_one_cotangent(x, c):
    u = x * 2.0
    v = x * 3.0
    if c > 0:
        v = v * u
    else:
        v = v * 5.0 + u
    w = u + v
    return np.sum(w * w)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_the_else_branch_does_not_inherit_what_the_if_branch_owns(c):
    # du and dv are both w's cotangent before the if (`w = u + v`); the if branch makes du a
    # new array, the else branch must still add out of place (du = du + dv), or it adds dv
    # into the one buffer dv is too. Kills adjoints:223 Adjoints.snapshot (call dropped: the
    # entry's owned set is the live one, so the else branch starts with the if branch's).
    x = np.array([0.3, -0.7, 1.1])
    h = 1e-6
    want = [(two_aliases_of_one_cotangent(x + h * e, c)
             - two_aliases_of_one_cotangent(x - h * e, c)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(srcgrad.grad(two_aliases_of_one_cotangent)(x, c), want,
                               rtol=1e-7)


def rebound_on_one_branch(x, c):
    u = x * 2.0
    v = x * 3.0
    t = u * v
    if c > 0:
        u = u * 2.0
    w = u + v
    return np.sum(w * w) + np.sum(t)


def rebound_on_the_other_branch(x, c):
    u = x * 2.0
    v = x * 3.0
    t = u * v
    if c > 0:
        c = c * 2.0
    else:
        u = u * 2.0
    w = u + v
    return np.sum(w * w) + np.sum(t)


@pytest.mark.parametrize("f", [rebound_on_one_branch, rebound_on_the_other_branch])
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_buffer_only_one_branch_made_is_not_added_into_after_the_if(f, c):
    # du is w's cotangent before the if, as dv is; only the if branch gives du a new array, so
    # after the if `t = u * v` adds out of place (du = du + dt * v): on the path without the
    # branch du is still dv's buffer. Kills adjoints:250 Adjoints.join_branches (left operand
    # only: `self.owned = owned_body`; and right operand only, with the else branch).
    x = np.array([0.3, -0.7, 1.1])
    h = 1e-6
    want = [(f(x + h * e, c) - f(x - h * e, c)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(srcgrad.grad(f)(x, c), want, rtol=1e-7)


def read_by_index_where_bound(x, c):
    s = 0.0
    if c > 0:
        y = x * 2.0
    for i in range(3):
        if c > 0:
            s = s + y[i] * x[i]
    return s


def test_a_variable_perhaps_unbound_before_a_loop_that_reads_its_items():
    # y is bound only when c > 0: its adjoint before the loop is the number 0.0, which gets no
    # private copy (a 0-d array would take no index: `dy = add_at(dy, i, g)` fails). Kills
    # adjoints:256 Adjoints.private_copies (condition negated; `or`; `var not in surely`).
    x = np.array([0.3, -0.7, 1.1])
    h = 1e-6
    want = [(read_by_index_where_bound(x + h * e, 1.0) - read_by_index_where_bound(x - h * e, 1.0))
            / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(srcgrad.grad(read_by_index_where_bound)(x, 1.0), want, rtol=1e-7)
    np.testing.assert_allclose(srcgrad.grad(read_by_index_where_bound)(x, -1.0), 0.0 * x)


def norm_copied(x):
    a = np.linalg.norm(x)
    b = a
    return b * np.sum(x)


def test_forward_mode_aliases_the_tangent_of_a_copy():
    # `b = a` gives b the tangent name da, no statement (tangents.py: a name or constant is
    # aliased outside branches and loops). Kills tangents:61 Tangents.bind (unary dropped:
    # `alias = ... and prelude`, which copies it, and drops a template's prelude where it has one).
    x = np.array([0.3, -0.7, 1.1])
    t = np.array([1.0, 0.5, -2.0])
    h = 1e-6
    want = (norm_copied(x + h * t) - norm_copied(x - h * t)) / (2 * h)
    df = srcgrad.jvp(norm_copied)
    np.testing.assert_allclose(df(x, t)[1], want, rtol=1e-7)
    text = srcgrad.source(df)
    assert "db = da" not in text and "da * sum_x" in text


def copied_then_updated_in_a_loop(x):
    a = x * 2.0
    s = a
    for _ in range(3):
        a = a * x
    return np.sum(s * a)


def copied_then_updated_on_a_branch(x):
    a = x * 2.0
    s = a
    if np.sum(x) > 0:
        a = a * x
    return np.sum(s * a)


@pytest.mark.parametrize("f, sign", [(copied_then_updated_in_a_loop, 1.0),
                                     (copied_then_updated_on_a_branch, 1.0),
                                     (copied_then_updated_on_a_branch, -1.0)])
def test_forward_mode_copies_a_tangent_that_control_flow_reassigns(f, sign):
    # `s = a` where a's tangent is reassigned in a loop or branch after: s gets its own copy
    # there. An alias would be copied just before the reassignment instead, in the loop (each
    # trip: ds ends as da before the last trip) or on the branch (ds unbound on the other path).
    # Kills tangents:65 Tangents.bind (constant: `alias = True`) and tangents:63 (comparison
    # `!=`; call dropped: `any(v for v in ...)`).
    x = sign * np.array([0.3, -0.7, 1.1])
    t = np.array([1.0, 0.5, -2.0])
    h = 1e-6
    want = (f(x + h * t) - f(x - h * t)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(f)(x, t)[1], want, rtol=1e-7)


def added_then_written(x):
    y = x * 1.0
    v = y + 0.0
    y[0] = 2.0 * x[1]
    return np.sum(v * y)


def plus_then_written(x):
    y = x * 1.0
    v = +y
    y[0] = 2.0 * x[1]
    return np.sum(v * y)


def np_add_then_written(x):
    y = x * 1.0
    v = np.add(0.0, y)
    y[1] = np.sin(x[2])
    return np.sum(v * y) + v[1]


@pytest.mark.parametrize("f", [added_then_written, plus_then_written, np_add_then_written])
def test_forward_mode_keeps_the_tangent_of_a_new_array_equal_to_one_written_after(f):
    # `v = y + 0.0` is a new array whose tangent is y's, aliased (the add's tangent is dy
    # alone); `y[0] = ...` then rebinds dy, so v first gets its own copy of it (_unalias).
    # Kills tangents:72 Tangents.bind (right operand only: `return prelude + [...]`, the
    # copy dropped: v then had the written y's tangent).
    x = np.array([0.5, -1.2, 2.0])
    t = np.array([1.0, 0.3, -0.7])
    h = 1e-6
    want = (f(x + h * t) - f(x - h * t)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(f)(x, t)[1], want, rtol=1e-7)


def looped_on_one_branch_then_summed(x, c):
    s = 0.0
    if c > 0:
        for i in range(3):
            s = s + x[i] ** 2
        x = np.ones(3) * c
    else:
        s = s + x[1] * 3.0
    return s + np.sum(x)


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_the_else_branch_does_not_inherit_the_zeros_buffer_of_the_if_branch(c):
    # the if branch rebinds x, then its loop reads x[i]: there x's adjoint is a zeros buffer
    # (dx[i] += g). The else branch starts from the adjoint at the if's end, the read-only
    # broadcast of np.sum's cotangent, where x[1] needs add_at (a copy first). Kills
    # adjoints:223 Adjoints.snapshot (call dropped: `self.zeroed`, the live set, as the entry's:
    # the else branch wrote dx[1] += g into the read-only view), listed as equivalent before.
    x = np.array([0.5, -1.2, 2.0])
    f = looped_on_one_branch_then_summed
    h = 1e-6
    want = np.array([(f(x + h * e, c) - f(x - h * e, c)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(srcgrad.grad(f)(x.copy(), c), want, rtol=1e-6, atol=1e-8)


def rebound_after_an_inner_loop(x, n):
    s = 0.0
    for _ in range(n):
        for i in range(3):
            s = s + x[i] ** 2
        x = np.ones(3) * s * 0.1
        s = s + x[0] * 2.0
    return s + np.sum(x)


def test_a_trial_sweep_leaves_the_zeros_buffers_of_the_loop_alone():
    # the loop's body is first swept on trial (which adjoints it assigns): there x's adjoint
    # is a zeros buffer before the inner loop. The real sweep reads x[0] first, with x's
    # adjoint still the read-only broadcast of np.sum's cotangent (add_at, a copy first).
    # Kills adjoints:283 Adjoints.trial (call dropped: `self.zeroed = self.zeroed`, the trial
    # updating the set it restores: dx[0] += g into the read-only view), listed as equivalent.
    x = np.array([0.5, -1.2, 2.0])
    f = rebound_after_an_inner_loop
    h = 1e-6
    want = np.array([(f(x + h * e, 1) - f(x - h * e, 1)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(srcgrad.grad(f)(x.copy(), 1), want, rtol=1e-6, atol=1e-8)


def quotient_of_arrays(x, y):
    return np.sum(x / y)


def test_a_tangent_that_reads_the_result_is_not_broadcast_again():
    # the tangent of x / y in both operands reads the result ((dx - y_ * dy) / y), so it has
    # the result's shape: no broadcast_like around it (it would return it unchanged: needless
    # work in the generated code). Kills forward:472 _has_output_shape (constant: `return
    # False`). The generated code is a product: this pins its text.
    x, y = np.array([0.5, -1.2, 2.0]), np.array([1.5, 0.7, 2.2])
    df = srcgrad.jvp(quotient_of_arrays, wrt=(0, 1))
    value, tangent = df(x, y, (np.ones(3), np.ones(3)))
    assert tangent == pytest.approx(np.sum(1.0 / y - x / y**2), rel=1e-12)
    assert "broadcast_like" not in srcgrad.source(df)


def read_by_index_after_an_alias(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] ** 2
    t = x
    return s + np.sum(np.sin(t))


def test_a_loop_reading_items_adds_into_a_private_copy_of_an_aliased_adjoint():
    # dx is dt itself (t = x) when the loop's sweep starts: it is copied once before the loop
    # so that each x[i] adds in place (O(1) a trip), not dx + getitem_grad(...) (a new array a
    # trip). Kills reverse:581 ReverseAD._adjoint_loop (boolean operator: `surely and set()`,
    # no private copy). The generated code is a product: this pins its text.
    x = np.array([0.5, -1.2, 2.0])
    df = srcgrad.grad(read_by_index_after_an_alias)
    np.testing.assert_allclose(df(x, 3), 2 * x + np.cos(x), rtol=1e-12)
    text = srcgrad.source(df)
    assert "dx = copy_array(dx)" in text and "dx = add_at(dx, i, dx_item)" in text
    # a number's contribution is unbroadcast to any number's shape, written 0.0 (kills
    # reverse:477 ReverseAD._contributions, constant: 1.0)
    assert "unbroadcast(ds_plus_sum_sin_t, 0.0)" in text


def rebinds_its_argument(x, n):
    for _ in range(n):
        x = x * 1.5
    return np.sum(x)


def test_an_argument_the_body_rebinds_is_kept_under_a_name_that_says_so():
    # the gradient takes the form of the argument as passed, kept as `x_arg` before the loop
    # rebinds x. Kills reverse:208 ReverseAD._keep_arguments (call dropped: a fresh name made
    # from `x` itself). The generated code is a product: this pins its text.
    df = srcgrad.grad(rebinds_its_argument)
    np.testing.assert_allclose(df(np.array([0.5, -1.2]), 2), [2.25, 2.25], rtol=1e-12)
    text = srcgrad.source(df)
    assert "    x_arg = x\n" in text and "cast_like(dx, x_arg)" in text


def reads_a_variable_named_underscore(x, n):
    _ = x * 2.0
    s = 0.0
    i = 0
    while i < n:
        s = s + np.sum(x * _)
        i = i + 1
    return s


def test_the_loop_over_the_trips_of_a_while_does_not_take_a_name_of_the_function():
    # the reversed while runs `for <name> in range(trips)`: a fresh name, not `_` when the
    # function has a variable `_` that the sweep reads. Kills reverse:611
    # ReverseAD._reversed_loop (call dropped: `_` itself, which overwrote the function's `_`).
    x = np.array([0.5, -1.2])
    np.testing.assert_allclose(srcgrad.grad(reads_a_variable_named_underscore)(x, 3), 12 * x,
                               rtol=1e-12)


class _Point:
    def __init__(self, a):
        self.a = a


def list_item_given_an_object(x):
    L = [_Point(x), _Point(x * 2.0)]
    L[0] = _Point(np.sin(x))
    return np.sum(L[0].a * L[1].a)


def dict_item_written(x):
    d = {"a": x * 1.0, "b": x * 2.0}
    d["a"] = np.sin(x)
    return np.sum(d["a"] * d["b"])


def test_an_item_written_into_a_list_or_dict_takes_its_cotangent_as_it_is():
    # the cotangent of an object built here put into a list's item is a dict, no operand of
    # unbroadcast; a dict's item holds the value as written: no unbroadcast around it either.
    # Kills reverse:411 ReverseAD._adjoint_setitem (boolean operator `or`: the object's was
    # refused, the dict's got a needless unbroadcast).
    x = np.array([0.5, -1.2])
    want = 2 * (np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(srcgrad.grad(list_item_given_an_object)(x), want, rtol=1e-10)
    df = srcgrad.grad(dict_item_written)
    np.testing.assert_allclose(df(x), want, rtol=1e-10)
    assert "unbroadcast(take_item" not in srcgrad.source(df)


def halved(x):
    return x * 0.5


@srcgrad.adjoint(halved)
def halved_adjoint(dy, y, x):
    return dy * NOT_DEFINED_ANYWHERE  # noqa: F821 (the error under test)


def test_a_gradient_rule_that_reads_an_unknown_name_is_refused_when_inlined():
    # Kills templates:78 _Substitute.visit_Name (call dropped: the raise made an expression,
    # so the unknown name was bound to MISSING and the derivative failed, if ever, when called).
    # The user's mistake is located at the rule's line, not called an internal error.
    with pytest.raises(srcgrad.UnsupportedSyntaxError, match="NOT_DEFINED_ANYWHERE") as info:
        srcgrad.grad(lambda x: np.sum(halved(x)))(np.ones(3))
    assert "internal" not in info.value.message
    assert info.value.filename == __file__
    assert info.value.line.strip().startswith("return dy * NOT_DEFINED_ANYWHERE")


def power_with_a_sent_name(x, n):
    if n == 0:
        return 1.0
    seed_sent = np.sin(x)
    return x * power_with_a_sent_name(x, n - 1) + seed_sent * seed_sent


def test_the_value_a_split_derivative_is_sent_takes_a_fresh_name():
    # the jvp of a recursion's split derivative (behind hessian) receives `(seed, its tangent)`
    # at its yield under a fresh name: not `seed_sent` when the function has a variable of
    # that name (the tuple overwrote it: a TypeError). Kills forward:316
    # ForwardAD._split_yield (call dropped: the name not made fresh).
    def f(x):
        return power_with_a_sent_name(x, 3)

    h = 1e-5
    g = srcgrad.grad(f)
    want = (g(0.7 + h) - g(0.7 - h)) / (2 * h)
    assert srcgrad.hessian(f)(0.7) == pytest.approx(want, rel=1e-7)
    # and the reverse sweep of that split derivative (grad of grad) receives the seed's
    # cotangent under a fresh name too. Kills reverse:316 ReverseAD._adjoint_yield (call
    # dropped: `seed_sent` overwritten, a wrong second derivative).
    assert srcgrad.grad(g)(0.7) == pytest.approx(want, rel=1e-7)


def nests_itself_in_a_loop(x):
    d = {"a": x}
    for _ in range(2):
        d = {"a": d["a"] * x, "b": d}
    return np.sum(d["a"]) + np.sum(d["b"]["a"])


def test_forward_mode_of_a_dict_a_loop_rebuilds_around_itself():
    # `d = {..., "b": d}` rebinds d to a dict holding its old value: the statement overwrites
    # its own operand and its op is no rule. Kills forward:392 ForwardAD._needs_result
    # (boolean operator `and`: the rule's broadcast flag read where there is no rule).
    x = np.array([0.3, 0.5])
    h = 1e-6
    want = [(nests_itself_in_a_loop(x + h * e) - nests_itself_in_a_loop(x - h * e)) / (2 * h)
            for e in np.eye(2)]
    jvp = srcgrad.jvp(nests_itself_in_a_loop)
    got = [jvp(x, e)[1] for e in np.eye(2)]
    np.testing.assert_allclose(got, want, rtol=1e-7)


def sums_a_slice(x):
    y = x * 2.0
    return np.sum(np.sin(y[1:]))


def test_the_tangent_of_a_slice_reads_as_the_user_wrote_it():
    # elem(dy, slice(1, None, None), y_item), the tangent of y[1:], is written dy[1:]. Kills
    # forward:516 _SliceSyntax.visit_Call (constant: the result's argument checked instead of
    # the index, so no tangent of an index became a subscript). The generated code is a
    # product: this pins its text.
    jvp = srcgrad.jvp(sums_a_slice)
    x = np.array([0.3, 0.5, 0.7])
    assert jvp(x, np.ones(3))[1] == pytest.approx(np.sum(2.0 * np.cos(2.0 * x[1:])), rel=1e-12)
    text = srcgrad.source(jvp)
    assert "dy_item = dy[1:]" in text and "elem(" not in text
    # each part of a tuple index too: dx[1:, 0] (kills forward:525 _SliceSyntax._index, call
    # dropped: the tuple's parts kept as slice(1, None, None))
    jvp = srcgrad.jvp(lambda x: np.sum(np.sin(x[1:, 0]) * x[:-1, 1]))
    x = np.arange(1.0, 7.0).reshape(3, 2) / 7.0
    want = np.sum(np.cos(x[1:, 0]) * x[:-1, 1]) + np.sum(np.sin(x[1:, 0]))
    assert jvp(x, np.ones((3, 2)))[1] == pytest.approx(want, rel=1e-12)
    text = srcgrad.source(jvp)
    assert "dx[1:, 0]" in text and "dx[:-1, 1]" in text


def reads_only_its_first(x, y):
    return np.sum(np.sin(x))


def test_the_tangent_of_an_argument_the_output_ignores_is_checked_too():
    # y is differentiated (wrt) but inactive: its tangent is still checked against y's shape.
    # Kills forward:127 ForwardAD._seed_inputs (call dropped: the check of an inactive
    # argument's tangent not emitted, a wrong-shaped tangent accepted silently).
    jvp = srcgrad.jvp(reads_only_its_first, wrt=(0, 1))
    x, y = np.array([0.3, 0.5]), np.array([1.0, 2.0, 3.0])
    assert jvp(x, y, (np.ones(2), np.ones(3)))[1] == pytest.approx(np.sum(np.cos(x)))
    with pytest.raises(srcgrad.SrcgradError, match="tangent for 'y' has shape"):
        jvp(x, y, (np.ones(2), np.ones(5)))


def power_with_a_pair_name(x, n):
    if n == 0:
        return 1.0
    r_pair = np.sin(x)
    r = power_with_a_pair_name(x, n - 1)
    return x * r + r_pair * r_pair


def test_the_pair_of_a_recursive_call_in_forward_mode_takes_a_fresh_name():
    # jvp of a recursion computes `(value, tangent)` of the call in one pair, named fresh: not
    # `r_pair` when the function has a variable of that name (the pair overwrote it). Kills
    # forward:344 ForwardAD._recursive_pair (call dropped: the name not made fresh).
    h = 1e-6
    want = (power_with_a_pair_name(0.7 + h, 3) - power_with_a_pair_name(0.7 - h, 3)) / (2 * h)
    assert srcgrad.jvp(power_with_a_pair_name)(0.7, 3, 1.0)[1] == pytest.approx(want, rel=1e-8)


def powers_itself_in_a_loop(x):
    a = x * 3.0
    for _ in range(2):
        a = a ** 1.5
        a = np.hypot(a, x)
    return np.sum(a)


def test_a_tangent_that_reads_the_old_operand_and_the_result_in_a_loop():
    # `a = a ** 1.5` rebinds its own operand, and its tangent reads both the old a and the
    # result: the result goes to a fresh name first (`a_2 = a ** 1.5`, the tangent, then
    # `a = a_2`). Kills forward:206 ForwardAD._tangent_of (call dropped: the result written
    # into a itself, so the tangent read the new a as the old: a wrong jvp).
    x = np.array([0.3, 0.5, 0.7])
    h = 1e-6
    want = [(powers_itself_in_a_loop(x + h * e) - powers_itself_in_a_loop(x - h * e)) / (2 * h)
            for e in np.eye(3)]
    jvp = srcgrad.jvp(powers_itself_in_a_loop)
    np.testing.assert_allclose([jvp(x, e)[1] for e in np.eye(3)], want, rtol=1e-6)


def two_statements_on_a_line(x):
    h = x * 1.0
    s = 0.0
    for _ in range(2):
        h = np.tanh(h); z = h * x  # noqa: E702 (one line, under test)
        s = s + np.sum(z)
    return s


def test_a_later_statement_of_the_line_reads_the_rebinding_its_tangent_delays():
    # `h = np.tanh(h)` in a loop computes h_2 first and rebinds h after its tangent, at the end
    # of the line's run; `z = h * x` on the same line reads h, so the rebinding comes first.
    # Kills forward:492 _rebinds (call dropped: `written = pending`, so a read of a name the
    # pending statements assign was not seen: z read the old h, a wrong value).
    x = np.array([0.3, 0.5, 0.7])
    value, tangent = srcgrad.jvp(two_statements_on_a_line)(x, np.ones(3))
    assert value == pytest.approx(two_statements_on_a_line(x), rel=1e-12)
    h = 1e-6
    want = (two_statements_on_a_line(x + h) - two_statements_on_a_line(x - h)) / (2 * h)
    assert tangent == pytest.approx(want, rel=1e-6)


def writes_into_a_keyword_only_argument(x, *, M):
    M[0] = x[0] * 2.0
    return np.sum(M * M)


def test_a_keyword_only_argument_an_active_value_flows_into_starts_with_a_zero_tangent():
    # M is outside wrt but x flows into it: its zero tangent is made with the other seeds,
    # first, as for a positional argument. Kills forward:82 ForwardAD.run (left operand only,
    # right operand only: keyword-only arguments left out, their zeros made at the write).
    # The generated code is a product: this pins its text.
    jvp = srcgrad.jvp(writes_into_a_keyword_only_argument)
    x, M = np.array([0.3, 0.5]), np.array([1.0, 2.0, 3.0])
    assert jvp(x, np.array([1.0, 0.0]), M=M.copy())[1] == pytest.approx(8 * 0.3 * 2.0 / 2)
    text = srcgrad.source(jvp)
    assert text.index("dM = zeros_like(M)") < text.index("# tangent of: M[0] = x[0] * 2.0")


def prints_on_its_line(x):
    s = np.sum(np.sin(x) * x); print("s", s)  # noqa: E702 (one line, under test)
    return s * 2.0


def test_a_call_statement_of_the_line_comes_before_the_line_s_tangents(capsys):
    # the tangents of a line follow its last statement, a call statement (print) included.
    # Kills forward:490 _rebinds (constant: True, the tangents flushed before the print).
    # The generated code is a product: this pins its text.
    jvp = srcgrad.jvp(prints_on_its_line)
    x = np.array([0.3, 0.5, 0.7])
    assert jvp(x, np.ones(3))[1] == pytest.approx(2 * np.sum(np.cos(x) * x + np.sin(x)))
    text = srcgrad.source(jvp)
    assert text.index("print('s', s)") < text.index("# tangent of: s = np.sum(")


def nests_itself(x):
    t = x * 1.0
    for _ in range(2):
        t = (t, x)
    return t[0][1] * 2.0


def test_a_tuple_that_holds_its_old_self_gets_its_tangent_first():
    # `t = (t, x)` overwrites an operand, but a tuple's tangent reads no result: it is built
    # from the old tangents first (`dt = (dt, dx)`), then the value, in place. Kills
    # forward:442 _reads_result (constant: `return False` -> `return True` for an op that is
    # no rule), under which it took the fresh-name form (`t_2 = (t, x)`, the tangent,
    # `t = t_2`): the same values, other text.
    df = srcgrad.jvp(nests_itself)
    assert df(0.5, 1.0) == (1.0, 2.0)
    body = srcgrad.source(df)
    assert "        dt = (dt, dx)\n        t = (t, x)\n" in body
    assert "t_2" not in body


def test_a_step_read_whose_cotangent_no_operand_carries_is_an_internal_error():
    # ReverseAD._moved_step, the guard of a step read `y = got_j(s, after)` (a recursion's split
    # derivative): its cotangent goes with `after` when that is active, through the handle s
    # when only s is, and with neither it would be dropped, so srcgrad refuses with a
    # SrcgradError naming the line. No program has reached that refusal (the activity analysis
    # makes every started handle active); this pins its contract. Kills reverse:493 (call
    # dropped: `raise f'internal error ...'`, a TypeError, no SrcgradError).
    from types import SimpleNamespace

    from srcgrad.transform.reverse import ReverseAD

    got, other = SimpleNamespace(sends_step=True), SimpleNamespace(sends_step=False)
    stmt = SimpleNamespace(lineno=7)
    assert ReverseAD._moved_step(None, got, ["after", "s"], stmt) == []
    assert ReverseAD._moved_step(None, got, ["y", "s"], stmt) == ["after"]
    assert ReverseAD._moved_step(None, other, [], stmt) == []
    with pytest.raises(srcgrad.SrcgradError, match="internal error: the cotangent of a step "
                       "read at line 7 would be dropped"):
        ReverseAD._moved_step(None, got, ["y"], stmt)
