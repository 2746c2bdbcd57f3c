"""One before/after test per pass, as text.

Each test runs the real pipeline with ``dump=True``, which prints the source after every stage,
and compares the stage before a pass and the stage after it with the expected source. The order
of the stages is the one written out in ``srcgrad/pipeline.py``.
"""

import contextlib
import functools
import importlib
import inspect
import io
import pkgutil
import textwrap

import numpy as np
import pytest

import srcgrad
from srcgrad import UnsupportedSyntaxError
from srcgrad.pipeline import Options, derive


@functools.cache
def stages(fn, wrt=("x",)):
    """The source after every stage of ``grad(fn)``, by stage name, in pipeline order."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        derive(fn, "grad", wrt, Options(dump=True))
    texts = {}
    for chunk in out.getvalue().split("# ---- after ")[1:]:
        label, _, text = chunk.partition(" ----\n")
        texts[label] = text.strip()
    return texts


def around(fn, stage, wrt=("x",)):
    """The source before and after ``stage``."""
    texts = stages(fn, wrt)
    labels = list(texts)
    return texts[labels[labels.index(stage) - 1]], texts[stage]


def code(text):
    return textwrap.dedent(text).strip()


# ---- check -----------------------------------------------------------------------------------


def uses_with(x):
    try:
        return np.log(x)
    except FloatingPointError:
        return x


def test_check_rejects_with_file_line_and_caret():
    line = inspect.getsourcelines(uses_with)[1] + 2
    with pytest.raises(UnsupportedSyntaxError) as info:
        derive(uses_with, "grad", ("x",))
    assert str(info.value) == (
        "srcgrad does not support `return` inside `try` ... `except`; assign the result (or a "
        "flag) and leave after the statement here\n"
        f'  File "{__file__}", line {line}\n'
        "            return np.log(x)\n"
        "            ^"
    )


def releases_early(x):
    y = x * 2.0
    z = np.sin(y)
    del y
    return np.sum(z)


def test_check_drops_del_of_a_name():
    before, after = around(releases_early, "check")
    assert before == code("""
        def releases_early(x):
            y = x * 2.0
            z = np.sin(y)
            del y
            return np.sum(z)
    """)
    assert after == code("""
        def releases_early(x):
            y = x * 2.0
            z = np.sin(y)
            return np.sum(z)
    """)


# ---- control ---------------------------------------------------------------------------------


def loop_over_list(xs):
    s = 0.0
    for x in xs:
        s = s + x
    return s


def test_control_turns_a_for_over_a_list_into_an_index_loop():
    before, after = around(loop_over_list, "control", ("xs",))
    assert before == code("""
        def loop_over_list(xs):
            s = 0.0
            seq = xs
            seq = iteration_sequence(seq)
            for x in seq:
                s = s + x
            return s
    """)
    assert after == code("""
        def loop_over_list(xs):
            s = 0.0
            seq = xs
            seq = iteration_sequence(seq)
            for i in range(len(seq)):
                x = seq[i]
                s = s + x
            return s
    """)


def mutates_lists(x, d):
    hs = [x]
    hs.insert(0, x * 2.0)
    a = hs.pop(1)
    hs.sort()
    d.update(k=a)
    for k, v in d.items():
        hs.append(v * len(k))
    return sum(hs)


def test_containers_turns_list_and_dict_methods_into_assignments():
    before, after = around(mutates_lists, "containers")
    assert after == code("""
        def mutates_lists(x, d):
            hs = [x]
            hs = list_insert(hs, 0, x * 2.0)
            a = hs[1]
            hs = pop_item(hs, 1)
            hs_order = sort_order(hs, False)
            hs = list_permute(hs, hs_order)
            d = dict_update(d, {'k': a})
            for k, v in dict_items(d):
                hs.append(v * len(k))
            return sum(hs)
    """)


def break_and_continue(x, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if j == 1:
                continue
            s = s + x * j
    return s


def test_control_moves_what_follows_a_jump_into_the_branch_that_falls_through():
    before, after = around(break_and_continue, "control")
    assert "break\n            if j == 1:\n                continue" in before
    assert after == code("""
        def break_and_continue(x, n):
            s = 0.0
            for i in range(n):
                for j in range(n):
                    if j > i:
                        break
                    elif j == 1:
                        pass
                    else:
                        s = s + x * j
            return s
    """)


def early_return(x):
    if x > 0:
        return x * 2
    y = x * 3
    return y


def early_return_from_loop(x, n):
    for i in range(n):
        if i > 2:
            return x * i
    return x


def test_control_leaves_a_single_return():
    before, after = around(early_return, "control")
    assert before == code("""
        def early_return(x):
            if x > 0:
                return x * 2
            y = x * 3
            return y
    """)
    assert after == code("""
        def early_return(x):
            if x > 0:
                result = x * 2
            else:
                y = x * 3
                result = y
            return result
    """)


def test_control_leaves_a_loop_by_a_flag_on_early_return():
    _, after = around(early_return_from_loop, "control")
    assert after == code("""
        def early_return_from_loop(x, n):
            returned = False
            for i in range(n):
                if i > 2:
                    result = x * i
                    returned = True
                    break
            if returned:
                pass
            else:
                result = x
            return result
    """)


# ---- anf -------------------------------------------------------------------------------------


def layer(X, W, b):
    z = np.tanh(X @ W + b)
    return np.sum(z)


def test_anf_names_temporaries_after_what_they_hold():
    before, after = around(layer, "anf", ("W",))
    assert before == code("""
        def layer(X, W, b):
            z = np.tanh(X @ W + b)
            return np.sum(z)
    """)
    assert after == code("""
        def layer(X, W, b):
            X_matmul_W = X @ W
            X_matmul_W_plus_b = X_matmul_W + b
            z = np.tanh(X_matmul_W_plus_b)
            sum_z = np.sum(z)
            return sum_z
    """)


# ---- inline ----------------------------------------------------------------------------------


def square_of(v):
    t = v * v
    return t


def calls_a_helper(x):
    t = 3.0
    return square_of(x) + t


def test_inline_replaces_a_call_by_the_body_with_locals_renamed_apart():
    before, after = around(calls_a_helper, "inline")
    assert before == code("""
        def calls_a_helper(x):
            t = 3.0
            square_of_x = square_of(x)
            square_of_x_plus_t = square_of_x + t
            return square_of_x_plus_t
    """)
    assert after == code("""
        def calls_a_helper(x):
            t = 3.0
            v = x
            t_2 = v * v
            square_of_x = t_2
            square_of_x_plus_t = square_of_x + t
            return square_of_x_plus_t
    """)


# ---- licm ------------------------------------------------------------------------------------


def decay(x, k, n):
    for _ in range(n):
        x = x - 0.01 * k * x
    return np.sum(x)


def test_licm_hoists_an_invariant_out_of_the_loop():
    before, after = around(decay, "licm")
    assert before == code("""
        def decay(x, k, n):
            for _ in range(n):
                c_times_k = 0.01 * k
                c_times_k_times_x = c_times_k * x
                x = x - c_times_k_times_x
            sum_x = np.sum(x)
            return sum_x
    """)
    assert after == code("""
        def decay(x, k, n):
            c_times_k = 0.01 * k
            for _ in range(n):
                c_times_k_times_x = c_times_k * x
                x = x - c_times_k_times_x
            sum_x = np.sum(x)
            return sum_x
    """)


# ---- copy ------------------------------------------------------------------------------------


def writes_into_argument(x):
    x[0] = 0.0
    return np.sum(x)


def test_copy_gives_a_written_argument_a_fresh_copy():
    before, after = around(writes_into_argument, "copy")
    assert before == code("""
        def writes_into_argument(x):
            x = setitem(x, 0, 0.0)
            sum_x = np.sum(x)
            return sum_x
    """)
    assert after == code("""
        def writes_into_argument(x):
            unused = check_argument_parts(x, 'x')
            x = fresh_copy(x)
            x = setitem(x, 0, 0.0)
            sum_x = np.sum(x)
            return sum_x
    """)


# ---- ssa -------------------------------------------------------------------------------------


def redefines(x):
    x = x * 2
    y = np.sin(x)
    return y


def test_ssa_renames_a_redefinition():
    before, after = around(redefines, "ssa")
    assert before == code("""
        def redefines(x):
            x = x * 2
            y = np.sin(x)
            return y
    """)
    assert after == code("""
        def redefines(x):
            x_2 = x * 2
            y = np.sin(x_2)
            return y
    """)


# ---- cse -------------------------------------------------------------------------------------


def repeats(x, n):
    s = np.sin(x) * np.sin(x)
    for i in range(n):
        s = s + (x[i] - x[i] ** 2) * x[i]
    x = x * 2
    return s + np.sin(x)


def test_cse_computes_a_repeated_expression_once():
    before, after = around(repeats, "cse")
    assert before == code("""
        def repeats(x, n):
            sin_x = np.sin(x)
            sin_x_2 = np.sin(x)
            s = sin_x * sin_x_2
            for i in range(n):
                x_item = x[i]
                x_item_2 = x[i]
                x_item_2_pow_2 = x_item_2 ** 2
                minus = x_item - x_item_2_pow_2
                x_item_3 = x[i]
                minus_times_x_item_3 = minus * x_item_3
                s = s + minus_times_x_item_3
            x_2 = x * 2
            sin_x_3 = np.sin(x_2)
            s_plus_sin_x_3 = s + sin_x_3
            return s_plus_sin_x_3
    """)
    # np.sin(x_2) reads another value than np.sin(x): computed again
    assert after == code("""
        def repeats(x, n):
            sin_x = np.sin(x)
            s = sin_x * sin_x
            for i in range(n):
                x_item = x[i]
                x_item_2_pow_2 = x_item ** 2
                minus = x_item - x_item_2_pow_2
                minus_times_x_item_3 = minus * x_item
                s = s + minus_times_x_item_3
            x_2 = x * 2
            sin_x_3 = np.sin(x_2)
            s_plus_sin_x_3 = s + sin_x_3
            return s_plus_sin_x_3
    """)


def overwrites_between(x):
    x = x.copy()
    y = x[0] * 2.0
    x[0] = 5.0
    z = x[0] * 2.0
    return y + z


def test_cse_recomputes_after_an_operand_changes():
    after = stages(overwrites_between)["cse"]
    assert after.count("[0]") == 2


# ---- reverse ---------------------------------------------------------------------------------


def overwrites_in_loop(x, n):
    for _ in range(n):
        a = x + 1.0
        b = 3.0 * a
        x = np.sin(b)
    return x


def test_reverse_saves_only_overwritten_values_the_adjoint_reads():
    # `b` (read by the adjoint of sin) and the old `x` (overwritten, read by the seed) are
    # saved, together, one tuple per iteration; `a` is not.
    _, after = around(overwrites_in_loop, "reverse")
    assert after == code("""
        def doverwrites_in_loop(x, n):
            x_arg = x
            loop_saved = []
            for _ in range(n):
                a = x + 1.0
                b = 3.0 * a
                x_old = x
                x = np.sin(b)
                loop_saved.append((b, x_old))
            # grad of: return x
            dx = unit_seed(x)
            # grad of: for _ in range(n):
            for _ in reversed(range(n)):
                b, x_old = loop_saved.pop()
                # grad of: x = np.sin(b)
                db = dx * np.cos(b)
                x = x_old
                # grad of: b = 3.0 * a
                da = db * 3.0
                # grad of: a = x + 1.0
                dx = da
            return cast_like(dx, x_arg)
    """)


def same_shapes(x):
    y = x * x + x
    return np.sum(y)


def test_reverse_needs_no_unbroadcast_where_shapes_provably_match():
    before, after = around(same_shapes, "reverse")
    assert before == code("""
        def same_shapes(x):
            x_times_x = x * x
            y = x_times_x + x
            sum_y = np.sum(y)
            return sum_y
    """)
    assert after == code("""
        def dsame_shapes(x):
            x_times_x = x * x
            y = x_times_x + x
            sum_y = np.sum(y)
            # grad of: return np.sum(y)
            check_real(x)
            dy = unreduce(1.0, y)
            # grad of: y = x * x + x
            dx = dy + (dy * x + dy * x)
            return cast_like(dx, x)
    """)


def accumulates(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    return s


def test_reverse_accumulates_in_place_into_an_owned_buffer():
    _, after = around(accumulates, "reverse")
    assert after == code("""
        def daccumulates(x, n):
            s_saved = []
            s = 0.0
            for i in range(n):
                x_times_i = x * i
                s_saved.append(s)
                s = s + x_times_i
            # grad of: return s
            ds = unit_seed(s)
            # grad of: for i in range(n):
            dx = zeros_like(x)
            for i in reversed(range(n)):
                # grad of: s = s + x * i
                s = s_saved.pop()
                dx_times_i = unbroadcast(ds, x)
                ds = unbroadcast(ds, s)
                dx += dx_times_i * i
            return cast_like(dx, x)
    """)


def gathers(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i]
    return s


def test_reverse_adds_into_an_element_for_an_item_read_in_a_loop():
    before, after = around(gathers, "reverse")
    assert before == code("""
        def gathers(x, n):
            s = 0.0
            for i in range(n):
                x_item = x[i]
                s = s + x_item
            return s
    """)
    assert after == code("""
        def dgathers(x, n):
            loop_saved = []
            s = 0.0
            for i in range(n):
                x_item = x[i]
                s_old = s
                s = s + x_item
                loop_saved.append((x_item, s_old))
            # grad of: return s
            ds = unit_seed(s)
            # grad of: for i in range(n):
            dx = zeros_like(x)
            for i in reversed(range(n)):
                x_item, s_old = loop_saved.pop()
                # grad of: s = s + x[i]
                s = s_old
                dx_item = unbroadcast(ds, x_item)
                ds = unbroadcast(ds, s)
                dx[i] += dx_item
            return as_like(dx, x)
    """)


def gathers_rows(x, rows):
    s = 0.0
    for k in range(len(rows)):
        s = s + np.sum(x[rows[k]])
    return s


def test_reverse_adds_at_an_index_that_may_not_be_an_integer():
    # rows[k] may be an array of indices with repeats: np.add.at semantics, through add_at
    _, after = around(gathers_rows, "reverse")
    assert "        dx = add_at(dx, rows_item, dx_item)\n" in after
    assert "+=" not in after.split("dx = zeros_like(x)")[1].replace("ds +=", "")


def gathers_and_scales(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] * np.sum(x * s)
    return s


def test_reverse_adds_at_when_the_loop_also_reads_the_whole_array():
    # dx gets whole-array contributions in the loop too: it is no longer a plain zeros buffer
    _, after = around(gathers_and_scales, "reverse")
    assert "dx = add(dx, getitem_grad(dx_item, x, i))" in after
    assert "dx[i] +=" not in after


# ---- fold ------------------------------------------------------------------------------------


def square(x):
    return x ** 2


def test_fold_removes_power_of_one():
    before, after = around(square, "fold")
    assert "    dx = dx_pow_2 * 2 * x ** (2 - (2 != 0))\n" in before
    assert after == code("""
        def dsquare(x):
            x_pow_2 = x ** 2
            # grad of: return x ** 2
            dx_pow_2 = unit_seed(x_pow_2)
            dx = dx_pow_2 * 2 * x
            return cast_like(dx, x)
    """)


def test_fold_takes_the_branch_of_a_literal_in_a_tuple_of_literals():
    import ast

    import gast

    from srcgrad.optimize.fold import ConstantFold

    def folded(expr):
        tree = ConstantFold(None).run(gast.parse(f"def f(x):\n    return {expr}\n"))
        return ast.unparse(gast.gast_to_ast(tree)).strip().splitlines()[-1].strip()

    assert folded("f(x) if None not in ('nuc', 2, -2) else g(x)") == "return f(x)"
    assert folded("f(x) if 2 not in ('nuc', 2, -2) else g(x)") == "return g(x)"
    assert folded("f(x) if 'nuc' in ('nuc', 2) else g(x)") == "return f(x)"
    # not a literal, or not all literals: left to run time
    assert folded("f(x) if x in ('nuc', 2) else g(x)") == "return f(x) if x in ('nuc', 2) else g(x)"
    assert folded("f(x) if 2 in (x, 2) else g(x)") == "return f(x) if 2 in (x, 2) else g(x)"


def test_fold_drops_a_zero_subtracted_beside_a_float_factor():
    import ast

    import gast

    from srcgrad.optimize.fold import ConstantFold

    def folded(expr):
        tree = ConstantFold(None).run(gast.parse(f"def f(x):\n    return {expr}\n"))
        return ast.unparse(gast.gast_to_ast(tree)).strip().splitlines()[-1].strip()

    assert folded("0.5 * (x - 0.0)") == "return 0.5 * x"
    assert folded("(x - (0.0 + 0.0)) * 2.0") == "return x * 2.0"
    # x - 0.0 of an int or bool array is a float array, and x - -0.0 of -0.0 is 0.0: kept
    assert folded("x - 0.0") == "return x - 0.0"
    assert folded("2 * (x - 0.0)") == "return 2 * (x - 0.0)"
    assert folded("y * (x - 0.0)") == "return y * (x - 0.0)"
    assert folded("0.5 * (x - -0.0)") == "return 0.5 * (x - -0.0)"
    assert folded("0.5 * (x - 0)") == "return 0.5 * (x - 0)"
    x = np.array([-0.0, 3.0, np.inf])
    for a in (x, np.array([True, False]), np.array([2, -7], np.int8), np.float32(1.5), 3):
        want = 0.5 * (a - 0.0)
        assert np.array_equal(0.5 * a, want) and np.result_type(0.5 * a) == np.result_type(want)
    assert np.signbit(0.5 * x[0]) == np.signbit(0.5 * (x[0] - 0.0))


# ---- dce -------------------------------------------------------------------------------------


def prints(x):
    t = x * 2  # noqa: F841
    print(x)
    return np.sin(x)


def test_dce_removes_an_unused_pure_temporary_and_keeps_a_print():
    before, after = around(prints, "dce")
    assert before.startswith(code("""
        def dprints(x):
            t = x * 2
            print(x)
    """))
    assert after == code("""
        def dprints(x):
            print(x)
            sin_x = np.sin(x)
            # grad of: return np.sin(x)
            dsin_x = unit_seed(sin_x)
            dx = dsin_x * np.cos(x)
            return cast_like(dx, x)
    """)


# ---- owned -----------------------------------------------------------------------------------


def summed(x, y):
    return np.sum(x + y)


def test_owned_copies_returned_gradients_that_are_views_or_shared():
    # `unreduce` gives a read-only broadcast view, and both gradients are that one view
    before, after = around(summed, "owned", ("x", "y"))
    assert before == code("""
        def dsummed(x, y):
            # grad of: return np.sum(x + y)
            check_real(x, y)
            dx_plus_y = unreduce(1.0, shape_like(x, y))
            dx = unbroadcast(dx_plus_y, x)
            dy = unbroadcast(dx_plus_y, y)
            return (cast_like(dx, x), cast_like(dy, y))
    """)
    assert after == code("""
        def dsummed(x, y):
            # grad of: return np.sum(x + y)
            check_real(x, y)
            dx_plus_y = unreduce(1.0, shape_like(x, y))
            dx = unbroadcast(dx_plus_y, x)
            dy = unbroadcast(dx_plus_y, y)
            return (copy_grad(cast_like(dx, x)), copy_grad(cast_like(dy, y)))
    """)


def test_owned_leaves_gradients_made_by_arithmetic_alone():
    before, after = around(layer, "owned", ("W",))
    assert before.endswith("    return cast_like(dW, W)")
    assert after == before


# ---- release ---------------------------------------------------------------------------------


def logistic(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def test_release_deletes_each_value_after_its_last_read():
    # (not the broadcast view `dminus`, which holds no memory, nor `dw` just before the return)
    before, after = around(logistic, "release", ("w",))
    assert before == code("""
        def dlogistic(w, X, y):
            z = X @ w
            # grad of: return np.mean(np.logaddexp(0.0, z) - y * z)
            check_real(X, w, y)
            dminus = mean_grad(1.0, shape_like(y, z))
            dlogaddexp_c_z = unbroadcast(dminus, z)
            dy_times_z = -dminus
            dz = unbroadcast(dy_times_z * y, z)
            dz += dlogaddexp_c_z * (0.5 + 0.5 * np.tanh(0.5 * z))
            # grad of: z = X @ w
            dw = matmul_vjp_right(dz, X, w)
            return cast_like(dw, w)
    """)
    assert after == code("""
        def dlogistic(w, X, y):
            z = X @ w
            # grad of: return np.mean(np.logaddexp(0.0, z) - y * z)
            check_real(X, w, y)
            dminus = mean_grad(1.0, shape_like(y, z))
            dlogaddexp_c_z = unbroadcast(dminus, z)
            dy_times_z = -dminus
            dz = unbroadcast(dy_times_z * y, z)
            del dy_times_z
            dz += dlogaddexp_c_z * (0.5 + 0.5 * np.tanh(0.5 * z))
            del z, dlogaddexp_c_z
            # grad of: z = X @ w
            dw = matmul_vjp_right(dz, X, w)
            return cast_like(dw, w)
    """)


def scalars_and_loops(x, n):
    m = len(x)
    s = 0.0
    for i in range(n):
        s = s + np.sum(x * x) / (m + i)
    return s


def test_release_leaves_numbers_loop_stacks_and_parameters_alone():
    # m, i, s, the sum and its adjoint, and the stacks hold nothing worth a `del`; x * x is
    # released before the loop, its shape taken from x; s stays a number through the loop, so
    # its adjoint needs no unbroadcast and its old values no saving
    before, after = around(scalars_and_loops, "release")
    assert "del" not in before
    assert after == code("""
        def dscalars_and_loops(x, n):
            loop_saved = []
            m = len(x)
            s = 0.0
            x_times_x = x * x
            sum_x_times_x = np.sum(x_times_x)
            del x_times_x
            for i in range(n):
                m_plus_i = m + i
                div = sum_x_times_x / m_plus_i
                s = s + div
                loop_saved.append(m_plus_i)
            # grad of: return s
            check_real(x)
            # grad of: for i in range(n):
            ds = 1.0
            dsum_x_times_x = zeros_like(sum_x_times_x)
            for i in reversed(range(n)):
                m_plus_i = loop_saved.pop()
                # grad of: s = s + np.sum(x * x) / (m + i)
                ddiv = ds
                dsum_x_times_x += ddiv / m_plus_i
            # grad of: s = s + np.sum(x * x) / (m + i)
            dx_times_x = unreduce(dsum_x_times_x, x)
            dx = dx_times_x * x + dx_times_x * x
            return cast_like(dx, x)
    """)


def affine_loss(W, b, x):
    z = x @ W + b
    return np.sum(np.tanh(z))


def test_proxy_keeps_only_the_shape_of_a_product_read_for_its_shape():
    # x @ W is read for its value once, early, and for its shape at the end of the sweep: a
    # zero-memory view of its shape is taken where it is computed, so it can be released early
    before, after = around(affine_loss, "proxy", wrt=("W", "b"))
    assert "    dx_matmul_W = unbroadcast(dz, x_matmul_W)\n" in before
    assert after == code("""
        def daffine_loss(W, b, x):
            x_matmul_W = x @ W
            x_matmul_W_shape = shape_like(x_matmul_W)
            z = x_matmul_W + b
            tanh_z = np.tanh(z)
            # grad of: return np.sum(np.tanh(z))
            check_real(W, b, x)
            dtanh_z = unreduce(1.0, tanh_z)
            dz = dtanh_z * (1 - tanh_z * tanh_z)
            # grad of: z = x @ W + b
            dx_matmul_W = unbroadcast(dz, x_matmul_W_shape)
            db = unbroadcast(dz, b)
            dW = matmul_vjp_right(dx_matmul_W, x, W)
            return (cast_like(dW, W), cast_like(db, b))
    """)
    released = stages(affine_loss, ("W", "b"))["release"]
    assert "    z = x_matmul_W + b\n    del x_matmul_W\n" in released


# ---- optimize=False --------------------------------------------------------------------------


def tidy(x):
    unused = x * 2  # noqa: F841
    return x ** 2


def test_optimize_false_skips_fold_and_dce():
    assert srcgrad.source(srcgrad.grad(tidy)) == code("""
        def dtidy(x):
            x_pow_2 = x ** 2
            # grad of: return x ** 2
            dx_pow_2 = unit_seed(x_pow_2)
            dx = dx_pow_2 * 2 * x
            return cast_like(dx, x)
    """) + "\n"
    assert srcgrad.source(srcgrad.grad(tidy, optimize=False)) == code("""
        def dtidy(x):
            unused = x * 2
            x_pow_2 = x ** 2
            # grad of: return x ** 2
            dx_pow_2 = unit_seed(x_pow_2)
            dx = dx_pow_2 * 2 * x ** (2 - (2 != 0))
            return cast_like(dx, x)
    """) + "\n"


def test_optimize_false_skips_release():
    assert "    del " in srcgrad.source(srcgrad.grad(logistic))
    assert "del " not in srcgrad.source(srcgrad.grad(logistic, optimize=False))


def test_optimize_false_skips_licm():
    hoisted = "    c_times_k = 0.01 * k\n    for _ in range(n):\n"
    in_loop = "    for _ in range(n):\n        c_times_k = 0.01 * k\n"
    assert hoisted in srcgrad.source(srcgrad.grad(decay))
    plain = srcgrad.source(srcgrad.grad(decay, optimize=False))
    assert hoisted not in plain
    assert in_loop in plain
    assert "        loop_saved.append((c_times_k, c_times_k_times_x, x_old))\n" in plain


# ---- every pass states what it requires and guarantees (STYLE.md, habit 1) -------------------


def _pass_modules():
    names = []
    for package in ("normalize", "analysis", "optimize", "transform"):
        path = importlib.import_module(f"srcgrad.{package}").__path__
        names += [f"srcgrad.{package}.{m.name}" for m in pkgutil.iter_modules(path)]
    return sorted(names)


@pytest.mark.parametrize("name", _pass_modules())
def test_module_docstring_states_requires_and_guarantees(name):
    doc = importlib.import_module(name).__doc__ or ""
    assert "Requires" in doc and "Guarantees" in doc
