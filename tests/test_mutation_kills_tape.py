"""Cases that only a surviving mutant of ``srcgrad/transform/tape.py`` (the saves of the primal
sweep and their restores in the adjoint sweep) or of ``reverse.py`` showed untested
(docs/development.md, mutation testing).

Each is a program a user can write: its gradient checked against central differences where the
mutant changed a result, its generated code pinned where the mutant changed only the text. The
comments name the mutants of ``tests/mutate_code.py`` they kill.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

import srcgrad


def written_after_a_loop_assigns_it(a):
    s = 0.0
    for i in range(3):
        x = a * (i + 1.0)
        x[0] = x[1] * x[2]
        s = s + np.sum(np.sin(x) * x)
    return s


def index_array_written_after_it_indexed_a_write(w, c):
    x = c * 1.0
    idx = np.array([0, 1])
    y = np.sum(x * w)
    x[idx] = 5.0
    idx[0] = 2
    return y


def base_of_a_view_of_a_view_written(w, c):
    x = c * 1.0
    r = x[1:]
    q = r[1:]
    y = np.sum(q * w)
    x[2] = 5.0
    z = x[2] * 1.0
    return y + z * w[0]


def base_of_a_view_written(w, c):
    x = c * 1.0
    r = x[1:]
    y = np.sum(r * w)
    x[1] = 5.0
    z = x[1] * 1.0
    return y + z * w[0]


C4 = np.array([0.3, 0.5, 0.7, 0.9])

CASES = [
    # x, bound anew on every trip and then written by element, is saved before the next trip
    # binds it: the sweep of each trip reads its own x. Kills tape:119 Tape._save (comparison:
    # `var in self.item_written`, no save of an array written by element: every trip's sweep
    # read the last trip's x)
    (written_after_a_loop_assigns_it, (np.array([0.3, 0.5, 0.7]),)),
    # the write into idx is undone before the sweep undoes x[idx] = 5.0 with it: the sweep
    # reads idx only through that undo. Kills tape:325 _reads (left operand only: `return
    # read, viewed`, without the index names the undo reads)
    (index_array_written_after_it_indexed_a_write, (np.array([0.3, 0.5, 0.9]), C4[:3])),
    # the sweep reads q (a view of a view of x), never x: the write into x is undone because q
    # shares its memory. Kills tape:334 _with_bases (condition negated: no base at all) and
    # tape:338 (call dropped: r, but not r's own base x)
    (base_of_a_view_of_a_view_written, (np.array([0.3, 0.5]), C4)),
    (base_of_a_view_written, (np.array([0.3, 0.5, 0.9]), C4)),
]


def _central(f, args, h=1e-6):
    x = np.array(args[0], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = h
        up = f(x + step, *(np.copy(a) for a in args[1:]))
        down = f(x - step, *(np.copy(a) for a in args[1:]))
        out[i] = (up - down) / (2 * h)
    return out


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_sweep_reads_the_values_the_primal_overwrote(f, args):
    want = _central(f, args)
    df = srcgrad.grad(f)
    for _ in range(2):  # the same on every call
        got = df(*(np.copy(a) for a in args))
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def base_rebound_on_a_branch(w, c, flag):
    x = c * 1.0
    if flag > 0:
        x = c * 2.0
    r = x[1:]
    return np.sum(r * w)


def new_on_a_branch_after_a_loop(x, c):
    s = 0.0
    for _ in range(2):
        s = s + np.sum(x * x)
    if c > 0:
        t = np.sin(x)
    else:
        t = np.cos(x)
    return s + np.sum(t * x)


def constant_on_both_branches(x, c):
    k = 1.0
    if c > 0:
        k = 2.0
    else:
        k = 3.0
    return np.sum(x * x) + k


def _else_that_does_nothing(text):
    return [
        n.lineno for n in ast.walk(ast.parse(text))
        if isinstance(n, (ast.If, ast.For, ast.While))
        and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.Pass)
    ]


def test_what_the_sweep_never_reads_is_not_saved():
    # The generated code is a product: these pin its text where a mutant changed only that.
    w, c = np.array([0.3, 0.5]), np.array([0.3, 0.5, 0.7])
    # x is rebound on a branch and the sweep reads only its view r: the name x need not be
    # saved (a rebinding leaves r's memory alone). Kills tape:263 Tape._lower (branches
    # swapped; comparison `is not`: a VALUE save checked against the names with their views'
    # bases) and tape:333 _with_bases (call dropped: the bases added into the sweep's reads)
    df = srcgrad.grad(base_rebound_on_a_branch)
    np.testing.assert_allclose(df(w, c, 1.0), 2.0 * c[1:], rtol=1e-12)
    assert "x_saved" not in srcgrad.source(df)
    # t is new where the branch binds it (after a loop, outside any): no old value to save.
    # Kills tape:169 Tape._primal_loop (constant: `depth += 2`, the depth left at 1 after the
    # loop, so a name surely unbound got a save of None)
    x = np.array([0.3, 0.5])
    df = srcgrad.grad(new_on_a_branch_after_a_loop)
    np.testing.assert_allclose(df(x, 1.0), 4 * x + np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert "t_saved" not in srcgrad.source(df)
    # the restores of an inactive branch are dropped (the sweep never reads k): the else
    # branch of the reversed if is then empty and left out, not `else: pass`. Kills tape:254
    # Tape._rewrite (branches swapped; comparison `!=`: a body emptied, an orelse given `pass`)
    df = srcgrad.grad(constant_on_both_branches)
    np.testing.assert_allclose(df(x, 1.0), 2 * x, rtol=1e-12)
    assert _else_that_does_nothing(srcgrad.source(df)) == []


def a_variable_named_like_the_kept_result(x):
    h = x * 1.0
    s = 0.0
    for _ in range(2):
        h_new = h * 2.0
        s = s + np.sum(h_new * x)
        h = np.hypot(h, x)
    return s + np.sum(h)


def test_the_result_kept_before_a_restore_takes_a_fresh_name():
    # the sweep of `h = np.hypot(h, x)` keeps the new h before it restores the old one (the
    # rule reads both) under a fresh name: not `h_new` when the function has a variable of that
    # name, which the sweep of `s = s + np.sum(h_new * x)` reads after. Kills reverse:371
    # ReverseAD._restore_before_rule (call dropped: the name not made fresh, a wrong gradient).
    x = np.array([0.3, 0.5, 0.7])
    f = a_variable_named_like_the_kept_result
    np.testing.assert_allclose(srcgrad.grad(f)(x), _central(f, (x,)), rtol=1e-7)


def a_variable_named_like_the_kept_value(x):
    s = 1.0
    s_value = x * 2.0
    for _ in range(2):
        s = s * np.sum(x) + np.sum(np.sin(x) * s_value)
    return s


def test_the_value_kept_before_the_sweep_takes_a_fresh_name():
    # value_and_grad keeps the output s (a loop rebinds it, the sweep restores it) under a
    # fresh name: not `s_value` when the function has a variable of that name, which the sweep
    # reads, nor s itself, which the sweep restores. Kills reverse:242 ReverseAD._as_returned
    # (call dropped, twice: a wrong gradient; the value s had before the loop).
    x = np.array([0.3, 0.5, 0.7])
    f = a_variable_named_like_the_kept_value
    value, g = srcgrad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, _central(f, (x,)), rtol=1e-6)


def a_dict_literal_with_equal_keys(x):
    # 1 and 1.0 are one key (the later value stays); 0 and 2**61 - 1 have one hash but are
    # two keys
    d = {1: x * 2.0, 1.0: x * 3.0, 0: x * 5.0, 2305843009213693951: x * 7.0}  # noqa: F601
    e = {"a": x * 11.0, "a": x * 13.0}  # noqa: F601
    return np.sum(d[1] * d[0] * d[2305843009213693951] * e["a"])


def test_a_dict_literal_keeps_the_last_value_of_an_equal_key():
    # Kills reverse:86 _overwritten (comparison `!=`: 1's value counted though 1.0's replaced
    # it, 0's dropped for a key of the same hash; call dropped, hash(k) == key: the first "a"
    # counted; all wrong gradients), reverse:84 (unary dropped: no constant key overwritten),
    # reverse:87 (constant: the next key skipped).
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(srcgrad.grad(a_dict_literal_with_equal_keys)(x),
                               3 * 5 * 7 * 13 * 4 * x**3, rtol=1e-12)


def real_written_into_a_complex_argument_s_copy(x, z):
    y = z * 1.0
    v = x * 2.0
    y[1:3] = v
    s = np.sum(v * v)
    return s + np.sum(np.abs(y * z) ** 2)


def test_a_complex_cotangent_of_a_real_value_written_into_an_item_adds_out_of_place():
    # the cotangent of v from y[1:3] = v is complex (z is), v's buffer real: it is added out of
    # place. Kills reverse:426 ReverseAD._adjoint_setitem (keyword dropped: `widen`, so it
    # was added in place and NumPy refused the cast).
    x, z = np.array([0.3, 0.5]), np.array([1.0 + 1.0j, 2.0, 3.0 - 1.0j])
    f = real_written_into_a_complex_argument_s_copy
    np.testing.assert_allclose(srcgrad.grad(f)(x, z), _central(f, (x, z)), rtol=1e-7)


def a_variable_named_like_the_kept_argument(x, n):
    x_arg = np.float32(2.0)
    for _ in range(n):
        x = x * 1.5
    return np.sum(x) * x_arg


def aliased_before_a_loop(x):
    y = x
    z = np.sin(y)
    for _ in range(2):
        z = z * 1.5
    return np.sum(z)


def aliased_before_a_branch(x, c):
    y = x
    z = np.sin(y)
    if c > 0:
        z = z * 1.5
    return np.sum(z)


def test_the_argument_kept_for_the_gradient_s_form_and_the_sweep_after_a_loop():
    # the argument x, which the body rebinds, is kept under a fresh name for the gradient's
    # form: not `x_arg` when the function has a variable of that name (a float32 number: the
    # float64 gradient came back float32). Kills reverse:208 ReverseAD._keep_arguments (call
    # dropped: the name not made fresh).
    x = np.array([0.5, -1.2])
    f = a_variable_named_like_the_kept_argument
    g = srcgrad.grad(f)(x, 2)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, [4.5, 4.5], rtol=1e-12)
    # after a loop's sweep the adjoints are out of control flow again: `y = x` aliases dx to dy
    # (no `dx = dy`). Kills reverse:595 ReverseAD._adjoint_loop (call dropped: _leave, so the
    # sweep after the loop stayed "inside control"). The generated code is a product: this
    # pins its text.
    df = srcgrad.grad(aliased_before_a_loop)
    x = np.array([0.3, 0.5, 0.7])
    np.testing.assert_allclose(df(x), 2.25 * np.cos(x), rtol=1e-12)
    assert "dx = dy" not in srcgrad.source(df)
    # and after a branch's (kills reverse:535 ReverseAD._adjoint_if, call dropped: _leave)
    df = srcgrad.grad(aliased_before_a_branch)
    np.testing.assert_allclose(df(x, 1.0), 1.5 * np.cos(x), rtol=1e-12)
    assert "dx = dy" not in srcgrad.source(df)


def written_with_itself_beside_a_y_old(x):
    y = x * 1.0
    y_old = np.sin(x)
    t = np.sum(y_old * x)
    y[:] = y
    return np.sum(y * y_old) * 2.0 + t


def test_the_cotangent_of_an_array_written_with_itself_takes_an_adjoint_name():
    # `y[:] = y`: the value is the array before the write, so its part of dy is kept under an
    # adjoint name before the written elements are zeroed; not `y_old`, the function's own
    # variable, which the sweep of t reads after. Kills reverse:421 ReverseAD._adjoint_setitem
    # (call dropped: naming.OLD's name used as it is, a wrong gradient).
    x = np.array([0.3, 0.5, 0.7])
    f = written_with_itself_beside_a_y_old
    np.testing.assert_allclose(srcgrad.grad(f)(x), _central(f, (x,)), rtol=1e-7)


def two_contributions(x):
    y = x * 2.0
    return np.sum(y * y) + np.sum(np.sin(y))


def test_the_unoptimized_derivative_adds_out_of_place():
    # optimize=False: no in-place adds into adjoint buffers (`dy = dy + g`, never `dy += g`).
    # Kills reverse:175 ReverseAD._analyse (boolean operator `or`: in-place adds without the
    # optimizer). The generated code is a product: this pins its text.
    df = srcgrad.grad(two_contributions, optimize=False)
    x = np.array([0.3, 0.5])
    np.testing.assert_allclose(df(x), 8 * x + 2 * np.cos(2 * x), rtol=1e-12)
    assert "+=" not in srcgrad.source(df)


def scaled_and_shifted_by_its_sum(x):
    c = np.sum(x)
    y = x * c + c
    return np.sum(y * y)


def test_a_number_operand_s_contribution_is_unbroadcast_to_any_number():
    # c is a number (its shape set is {()}): its contributions are summed to a number with the
    # reference 0.0, no read of c. Kills reverse:476 ReverseAD._contributions (call dropped:
    # the shape never looked up, `unbroadcast(dy, c)`). The generated code is a product: this
    # pins its text.
    df = srcgrad.grad(scaled_and_shifted_by_its_sum)
    x = np.array([0.3, 0.5, 0.7])
    np.testing.assert_allclose(df(x), _central(scaled_and_shifted_by_its_sum, (x,)), rtol=1e-7)
    text = srcgrad.source(df)
    assert "dc = unbroadcast(dy, 0.0)" in text and "unbroadcast(dy, c)" not in text


def _sum_of_squares(z):
    return np.sum(z * z)


def _sum_of_an_entry(d):
    return np.sum(d["a"] * 2.0)


Z = np.array([1.0 + 2.0j, 0.5 - 1.0j])


@pytest.mark.parametrize("fn, arg", [(_sum_of_squares, Z), (_sum_of_an_entry, {"a": Z})],
                         ids=["array", "dict"])
def test_grad_of_a_complex_full_reduction_is_refused(fn, arg):
    # np.sum(...) is a scalar by construction: the seed is 1.0 without unit_seed, and the
    # output's realness is checked on what it follows from (check_real(z)): the leaves whose
    # kind is not known real, including those with no kind at all (every parameter of the
    # unspecialized derivative, a dict). Kills reverse:645 ReverseAD._check_real (call
    # dropped: `if not _known_real(kinds.get(n))` -> `if kinds.get(n)`), under which grad
    # returned [2-4j, 1+2j] for the complex output, no error.
    with pytest.raises(srcgrad.SrcgradError, match="return a real number"):
        srcgrad.grad(fn)(arg)


def _constant_output(x, n):
    y = np.sum(np.ones(3)[n])
    return y


def test_an_output_that_carries_no_gradient_is_still_computed_and_checked():
    # The output does not depend on x: its seed is checked (unit_seed(y), a statement; the
    # primal is computed) and x's gradient is zero. Kills reverse:621 ReverseAD._seed (boolean
    # operator: `isinstance(out, Name) or out.id in active`), under which the inactive output
    # was seeded as if active (`dy = 1.0`, the primal dropped as dead): an index out of range
    # raised nothing and grad returned zeros.
    x = np.array([1.0, 2.0])
    df = srcgrad.grad(_constant_output)
    np.testing.assert_array_equal(df(x, 1), [0.0, 0.0])
    assert "\n    unit_seed(y)\n" in srcgrad.source(df)
    with pytest.raises(IndexError):
        df(x, 5)


def overwritten_in_an_inner_loop(x, c):
    t = x * 1.0
    u = x * c
    for _ in range(2):
        t = x * 2.0
        for _k in range(2):
            t = np.cos(u)
    return np.sum(t * u)


def overwritten_again_in_an_inner_loop(x, c):
    t = x * 1.0
    u = x * c
    for _ in range(2):
        t = np.cos(u)
        for _k in range(2):
            t = u + x
    return np.sum(t * u)


@pytest.mark.parametrize("fn", [overwritten_in_an_inner_loop, overwritten_again_in_an_inner_loop])
def test_an_adjoint_the_outer_loop_kills_is_rezeroed_inside_the_inner_loop(fn):
    # t's adjoint is killed by every iteration of the outer loop, and re-zeroed where that
    # happens, inside the inner loop too. Kills reverse:592 ReverseAD._adjoint_loop (right
    # operand only: `self.rezero = killed`, the inner loop forgetting the outer's set), under
    # which the gradient took the contribution of the later iterations again (found by a
    # search of nested-loop programs; 49 of 300 gave a wrong gradient under the mutant).
    x, c = np.array([0.3, -0.7, 1.1]), 0.5
    h = 1e-6
    want = np.array([(fn(x + h * e, c) - fn(x - h * e, c)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(srcgrad.grad(fn)(x, c), want, rtol=1e-6, atol=1e-9)


def halves_down(x, n):
    if n == 0:
        return x * x
    return halves_down(x, n - 1) + x


def test_the_seed_a_split_of_a_split_receives_is_read_directly():
    # The split derivative of a recursion's split derivative (behind grad(grad(f))): the
    # yield `seed = yield result_value` receives the value's cotangent, `seed_sent`, and the
    # sweep reads it directly (`dresult_2 = seed_sent`): the value's adjoint aliases it outside
    # control flow. Kills reverse:320 ReverseAD._adjoint_yield (comparison: `target in
    # assigned_in_control`), under which it was first assigned (`dresult_value = seed_sent`;
    # the same values, other text).
    first = srcgrad.transforms.derived(halves_down, "split", ("x",))
    text = srcgrad.source(srcgrad.transforms.derived(first, "split", ("x",)))
    assert "seed_sent = (yield dseed)" in text
    assert "dresult_value" not in text
    assert "dresult_2 = seed_sent\n" in text


C3 = np.array([1.0, -2.0, 0.5])


def written_from_itself_at_repeated_indices(x):
    y = np.exp(x)
    y[np.array([0, 0, 1])] = y
    return np.sum(y * C3)


def written_from_itself_at_a_list_of_indices(x):
    y = np.exp(x)
    y[[1, 2, 2]] = y
    return np.sum(np.sin(y) * C3)


@pytest.mark.parametrize("fn", [written_from_itself_at_repeated_indices,
                                written_from_itself_at_a_list_of_indices])
def test_an_array_written_from_itself_keeps_its_value_for_the_sweep(fn):
    # `y[I] = y`: the value's part is held under a name of its own (`dy_old`) while the
    # written elements are zeroed. Kills reverse:421 ReverseAD._adjoint_setitem (call dropped:
    # `held = target`), under which the part was held in the primal `y` itself; the restore
    # puts back only the elements the write reached (I repeats one, misses one), so the
    # adjoint of np.exp read a cotangent where y[2] was: a wrong gradient.
    x = np.array([0.3, -0.2, 0.9])
    h = 1e-6
    want = np.array([(fn(x + h * e) - fn(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(srcgrad.grad(fn)(x), want, rtol=1e-6, atol=1e-9)


X4 = np.array([0.3, -0.2, 0.9, 1.4])
W4 = np.array([1.0, 2.0, 3.0, 4.0])


def clipped_below(lo):
    return np.sum(np.clip(X4, lo, 1.0) * W4)


def chosen_where_small(b):
    return np.sum(np.where(X4 > 0.5, X4, b) * W4)


@pytest.mark.parametrize("fn", [clipped_below, chosen_where_small])
def test_an_operand_with_a_default_broadcast_by_another_without_shapes(fn):
    # With optimize=False no shapes are known, and whether the contribution to `lo` (one
    # element, broadcast against X4) is summed back (unbroadcast) is decided from the other
    # operands: X4 is a name, so it may have broadcast it. Kills reverse:507
    # ReverseAD._may_broadcast (comparison: `p == param`, the operand asking about itself),
    # under which a parameter with a default (np.clip's a_min, np.where's y) got no
    # unbroadcast: a gradient of shape (4,) for an argument of shape (1,).
    lo = np.array([0.1])
    h = 1e-6
    want = np.array([(fn(lo + h) - fn(lo - h)) / (2 * h)])
    got = srcgrad.grad(fn, optimize=False)(lo)
    assert got.shape == (1,)
    np.testing.assert_allclose(got, want, rtol=1e-6)
