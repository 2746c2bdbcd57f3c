"""Control flow in reverse mode: branches, loops, break/continue, early returns.

Every function below is checked against central differences (float64) at several inputs that take
different branches or run different iteration counts. The generated source of four of them is
compared with golden files (tests/golden/<name>.py; SRCGRAD_REGEN_GOLDEN=1 rewrites them), a
100,000-iteration loop checks scale and the memory the stacks hold, and the last tests check that
generated code never mutates its arguments and keeps no state between calls, even after a raise.
"""

# ruff: noqa: B007  (the functions under test keep the loop variables users write)

import copy
import math
import tracemalloc

import numpy as np
import pytest
from golden_source import assert_golden
from gradcheck import assert_grad_like, check_grad, numeric_grad

from srcgrad import grad, source, value_and_grad, vjp

rng = np.random.default_rng(3)

V4 = rng.normal(size=4)
POS4 = rng.uniform(0.5, 2.0, size=4)
NEG4 = -rng.uniform(0.5, 2.0, size=4)
MIXED6 = np.array([0.8, -1.3, 0.4, -0.2, 1.7, -0.9])
A34 = rng.normal(size=(3, 4))
B34 = rng.normal(size=(3, 4))
W3 = rng.normal(size=3)
HID, INP, STEPS = 4, 3, 8
WH = 0.5 * rng.normal(size=(HID, HID))
WX = 0.5 * rng.normal(size=(HID, INP))
BH = 0.1 * rng.normal(size=HID)
XS = rng.normal(size=(STEPS, INP))
COEFFS = (0.5, -1.0, 2.0, 0.25, -0.75)
BASIS = rng.normal(size=(5, 3))
ROSEN_X = rng.uniform(-1.5, 1.5, size=10)


# --- branches ----------------------------------------------------------------------------------


def piecewise(x):
    if x > 1.0:
        y = x * x
    elif x > -1.0:
        y = 3.0 * x + np.sin(x)
    else:
        y = -x * np.exp(x)
    return y


def nested_ifs(x, y):
    if x > 0.0:
        if y > 0.0:
            z = x * y
        else:
            z = x - y * y
    else:
        if y > x:
            z = np.sin(x) * y
        else:
            z = x * x * x + y
    return z


def reduction_branch(x):
    if np.sum(x) > 0:
        out = np.sum(x**2)
    else:
        out = np.sum(np.sin(x)) * 2.0
    return out


def mean_elif(x, w):
    m = np.mean(x * w)
    if m > 0.5:
        r = np.sum(np.tanh(x) * w)
    elif m < -0.5:
        r = np.sum(x * x) - np.sum(w)
    else:
        r = m * m
    return r


def cond_expr(x):
    y = x * x if x > 0 else -3.0 * x
    return y + (np.sin(y) if y < 1.0 else np.cos(y))


def cond_expr_arrays(x, w):
    y = x * w if np.mean(x) > 0 else x / w
    return np.sum(y * y)


def bool_ops(x, y):
    if x > 0.0 and y > 0.0:
        r = x * y
    elif not (x > y) or y < -1.0:
        r = x + 2.0 * y * y
    else:
        r = np.exp(x) - y
    return r


def chained_compare(x):
    if -1.0 < x < 1.0:
        r = x**3
    elif 1.0 <= x <= 4.0 < 5.0:
        r = np.sqrt(x)
    else:
        r = np.sin(x) * x
    return r


def multi_return(x):
    if x > 1.0:
        return x**2
    if x < -1.0:
        return -(x**3)
    return np.sin(x) * x + 1.0


def branch_defines(x, w):
    if np.sum(w) > 0:
        s = np.sum(x * w)
        t = s * s
    else:
        t = np.sum(x)
        s = t * 2.0
    return s + t * np.sum(x)


# --- for loops --------------------------------------------------------------------------------


def decay(k, x0):
    x = x0
    for i in range(100):
        x = x - 0.01 * k * x
    return x * x


def horner(x):
    acc = 0.0
    for c in COEFFS:
        acc = acc * x + c
    return acc


def horner_arg(x, coeffs):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def matrix_entries(A, B):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + (i + 1) * A[i, j] * A[i, j] * B[i, j] + A[0, j] * A[i, 0]
    return s


def over_rows(A, w):
    s = 0.0
    for row in A:
        s = s + np.sum(np.tanh(row) * w) * np.sum(row)
    return s


def with_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + (i + 1) * v * v + np.sin(v) * s
    return s


def with_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * np.sin(b)
    return s * s


def with_continue(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        s = s + x[i] * x[i] * (i + 1)
    return s + np.sum(x)


def with_break(x, limit):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
        if s > limit:
            break
        s = s * 1.1
    return s


def early_return_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
        if s > 10.0:
            return s * x
    return s


def early_return_nested(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] ** 2
            if s > 3.0:
                return s * A[i, j]
    return -s


def reassigned_loop_var(x):
    s = 0.0
    for v in x:
        v = v * v
        v = np.sin(v) + v
        s = s + v
    for i in range(3):
        i = i * 2 + 1
        s = s + np.sum(x) ** i
    return s


def carried_arrays(x, w):
    h = x
    g = w
    for _ in range(5):
        h = np.sin(h) * g + h
        g = g * 0.9 + 0.1 * h
    return np.sum(h * g)


def runtime_range(x, start, stop, step):
    s = 1.0
    for i in range(start, stop, step):
        s = s * x + i * np.sin(x)
    return s


def relu_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i] if x[i] > 0.0 else 0.1 * x[i]
        s = s + v * v
    return s


def tuple_of_arrays(h, w1, w2):
    for w in (w1, w2, w1):
        h = np.tanh(h * w + 0.1)
    return np.sum(h)


def basis_expansion(c):
    acc = np.zeros(3)
    for i in range(c.shape[0]):
        acc = acc + c[i] * BASIS[i]
    return np.sum(acc**2)


def loop_var_after(x, n):
    for i in range(n):
        x = x * 0.5 + np.sin(x)
    return x * i


def rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def zero_trip(x, w, n):
    for _ in range(n):
        x = np.tanh(x * w)
    return np.sum(x)


def zero_trip_scalar(x, k, n):
    s = x
    for _ in range(n):
        s = s * k
    return s


# --- while loops ---------------------------------------------------------------------------------


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-14 * a:
        x = 0.5 * (x + a / x)
    return x


def fixed_point(a):
    z = 0.0
    for _ in range(1000):
        z_new = 0.5 * np.cos(z) + a
        if abs(z_new - z) < 1e-14:
            break
        z = z_new
    return z_new


def grow_while(x, c):
    while x < 10.0:
        x = x * 1.5 + c
    return x


def while_true_break(x, n):
    k = 0
    while True:
        x = np.cos(x) + 0.1 * x
        k = k + 1
        if k >= n:
            break
    return x


def while_bool_ops(x, y):
    while not (x > 5.0) and y > 0.1 or x < -5.0:
        x = x * 0.5 + y + 1.0
        y = y * 0.8
    return x * y


def while_in_for(x):
    s = 0.0
    for i in range(3):
        t = x + i
        while t < 4.0:
            t = t * 1.3 + 0.5
        s = s + t * x
    return s


def zero_trip_while(x, w):
    while np.sum(x) > 100.0:
        x = x * w
    return np.sum(x * x)


# --- composite numerical codes ---------------------------------------------------------------


def pendulum(damping, length, theta0, omega0):
    theta = theta0
    omega = omega0
    dt = 0.01
    for _ in range(1000):
        alpha = -9.81 / length * np.sin(theta) - damping * omega
        theta, omega = theta + dt * omega, omega + dt * alpha
    return theta * theta + 0.1 * omega


def rnn(Wh, Wx, b, xs):
    h = np.zeros(b.shape[0])
    for x_t in xs:
        h = np.tanh(Wh @ h + Wx @ x_t + b)
    return np.sum(h * h)


# (function, args, wrt): each function appears with inputs that take different paths.
def shapes_grow_in_a_loop(a, x):
    # s starts a number and becomes a vector in the first iteration: every adjoint that flows
    # back into the old s must be summed to its shape then, and only then
    s = a
    u = a
    for i in range(3):
        t = s * 2.0
        s = s + x * t
        u = t * s + u
    return np.sum(s) + np.sum(u * u)


def shapes_grow_in_a_while(a, b, x):
    p = a
    q = b
    k = 0
    while k < 3:
        alpha = p * q - q
        p = p + 0.1 * alpha
        q = q + x * alpha
        k = k + 1
    return np.sum(p * q)


def argument_rebound_in_a_loop(x, a, n):
    s = 0.0
    for i in range(n):
        s = s + x[0] * 2.0
        a = x[0] * 2.0  # the same value as s's term: one computation, but `a` stays the
        # argument when the loop takes no trip
    return np.tanh(a) * np.sum(x) + s


def rebound_to_another_shape(x, a, n):
    y = a * x  # reads the float `a`: its gradient is a float
    for i in range(n):
        a = x * 2.0  # `a` an array from here
    return np.sum(y + a)


def rebound_to_another_shape_in_a_while(x, a):
    y = a * x
    i = 0
    while i < 2:
        a = x * 2.0
        i += 1
    return np.sum(y + a)


def tuple_rebound_in_a_loop(x, t, n):
    y = t[0] * x  # the tuple's cotangent is sparse until the loop, which may not run
    for i in range(n):
        t = (x, 2 * x)
    return np.sum(y + t[1])


def rule_of_its_own_target(x):
    s = x * 1.0
    for i in range(3):
        s = np.tanh(s)  # the rule reads the old s, its reverse template the new one
    return np.sum(s)


CASES = [
    (shapes_grow_in_a_loop, (0.7, V4 * 0.1), (0, 1)),
    (shapes_grow_in_a_while, (0.4, 0.3, V4 * 0.2), (0, 1, 2)),
    (piecewise, (1.7,), 0),
    (piecewise, (0.3,), 0),
    (piecewise, (-2.2,), 0),
    (nested_ifs, (0.8, 1.1), (0, 1)),
    (nested_ifs, (0.8, -1.1), (0, 1)),
    (nested_ifs, (-0.8, 0.6), (0, 1)),
    (nested_ifs, (-0.8, -1.6), (0, 1)),
    (reduction_branch, (POS4,), 0),
    (reduction_branch, (NEG4,), 0),
    (mean_elif, (POS4, POS4 + 0.3), (0, 1)),
    (mean_elif, (NEG4, POS4), (0, 1)),
    (mean_elif, (0.2 * V4, V4), (0, 1)),
    (cond_expr, (0.7,), 0),
    (cond_expr, (1.6,), 0),
    (cond_expr, (-0.2,), 0),
    (cond_expr_arrays, (POS4, V4), (0, 1)),
    (cond_expr_arrays, (NEG4, POS4), (0, 1)),
    (bool_ops, (0.5, 0.7), (0, 1)),
    (bool_ops, (0.5, -0.7), (0, 1)),
    (bool_ops, (-0.5, -2.0), (0, 1)),
    (bool_ops, (0.5, -2.0), (0, 1)),
    (chained_compare, (0.4,), 0),
    (chained_compare, (2.5,), 0),
    (chained_compare, (6.0,), 0),
    (multi_return, (1.5,), 0),
    (multi_return, (-1.5,), 0),
    (multi_return, (0.5,), 0),
    (branch_defines, (V4, POS4), (0, 1)),
    (branch_defines, (V4, NEG4), (0, 1)),
    (decay, (0.5, 2.0), (0, 1)),
    (horner, (1.3,), 0),
    (horner, (-0.7,), 0),
    (horner_arg, (1.3, COEFFS), 0),
    (matrix_entries, (A34, B34), (0, 1)),
    (over_rows, (A34, V4), (0, 1)),
    (with_enumerate, (V4,), 0),
    (with_zip, (V4, POS4), (0, 1)),
    (with_zip, (MIXED6[:4], V4), (0, 1)),
    (with_continue, (MIXED6,), 0),
    (with_continue, (NEG4,), 0),
    (with_break, (MIXED6, 0.5), 0),
    (with_break, (MIXED6, 3.0), 0),
    (with_break, (MIXED6, 100.0), 0),
    (early_return_loop, (1.5, 10), 0),
    (early_return_loop, (0.1, 10), 0),
    (early_return_loop, (4.0, 10), 0),
    (early_return_loop, (4.0, 0), 0),
    (early_return_nested, (A34,), 0),
    (early_return_nested, (0.1 * A34,), 0),
    (reassigned_loop_var, (0.5 * V4,), 0),
    (carried_arrays, (V4, POS4), (0, 1)),
    (runtime_range, (0.7, 1, 8, 2), 0),
    (runtime_range, (0.7, 9, -3, -3), 0),
    (runtime_range, (1.2, 2, 12, 1), 0),
    (relu_loop, (MIXED6,), 0),
    (rule_of_its_own_target, (V4,), 0),
    (tuple_of_arrays, (V4, POS4, V4), 0),
    (tuple_of_arrays, (V4, POS4, V4), (0, 1, 2)),
    (basis_expansion, (V4[:1].repeat(5) + np.arange(5.0),), 0),
    (loop_var_after, (0.3, 4), 0),
    (loop_var_after, (-1.1, 7), 0),
    (rosenbrock, (ROSEN_X,), 0),
    (zero_trip, (V4, POS4, 3), (0, 1)),
    (zero_trip, (V4, POS4, 0), (0, 1)),
    (zero_trip_scalar, (0.9, 1.1, 0), (0, 1)),
    (zero_trip_scalar, (0.9, 1.1, 5), (0, 1)),
    (newton_sqrt, (0.3,), 0),
    (newton_sqrt, (30.0,), 0),
    (newton_sqrt, (1e4,), 0),
    (fixed_point, (0.2,), 0),
    (fixed_point, (3.0,), 0),
    (grow_while, (12.0, 0.5), (0, 1)),
    (grow_while, (7.0, 0.5), (0, 1)),
    (grow_while, (1.2, 0.5), (0, 1)),
    (while_true_break, (0.4, 1), 0),
    (while_true_break, (0.4, 6), 0),
    (while_bool_ops, (1.0, 1.0), (0, 1)),
    (while_bool_ops, (-7.0, 0.05), (0, 1)),
    (while_bool_ops, (6.0, 1.0), (0, 1)),
    (while_in_for, (0.9,), 0),
    (while_in_for, (3.7,), 0),
    (zero_trip_while, (V4, POS4), (0, 1)),
    (zero_trip_while, (V4 + 60.0, np.full(4, 0.5)), (0, 1)),
    (pendulum, (0.3, 1.2, 0.8, 0.0), ("damping", "length")),
    (pendulum, (0.05, 0.6, -1.5, 2.0), ("damping", "length")),
    (rnn, (WH, WX, BH, XS), ("Wh", "Wx", "b")),
    (argument_rebound_in_a_loop, (V4 * 0.3, 0.7, 0), (0, 1)),
    (argument_rebound_in_a_loop, (V4 * 0.3, 0.7, 2), (0, 1)),
    (rebound_to_another_shape, (V4 * 0.3, 0.7, 2), (0, 1)),
    (rebound_to_another_shape, (V4 * 0.3, 0.7, 0), (0, 1)),
    (rebound_to_another_shape_in_a_while, (V4 * 0.3, 0.7), (0, 1)),
    (tuple_rebound_in_a_loop, (V4 * 0.3, (0.7, 1.1), 0), 0),
    (tuple_rebound_in_a_loop, (V4 * 0.3, (0.7, 1.1), 2), 0),
]


def _case_id(case):
    f, args, _ = case.values if hasattr(case, "values") else case
    shown = ",".join(
        f"a{a.shape}"
        if isinstance(a, np.ndarray)
        else ("tuple" if isinstance(a, tuple) else f"{a}")
        for a in args
    )
    return f"{f.__name__}({shown})"


@pytest.mark.parametrize("f,args,wrt", CASES, ids=[_case_id(c) for c in CASES])
def test_against_central_differences(f, args, wrt):
    check_grad(f, args, wrt, rtol=1e-5, atol=1e-7)


def test_enough_functions():
    assert len({(c.values if hasattr(c, "values") else c)[0] for c in CASES}) >= 30


def test_cases_take_different_paths():
    """The inputs really do take different branches / trip counts (not a vacuous check)."""
    counts = set()
    for a in (0.3, 30.0, 1e4):
        x, n = a, 0
        while abs(x * x - a) > 1e-14 * a:
            x, n = 0.5 * (x + a / x), n + 1
        counts.add(n)
    assert len(counts) == 3


def test_newton_sqrt_exact():
    for a in (0.3, 30.0, 1e4):
        assert grad(newton_sqrt)(a) == pytest.approx(0.5 / math.sqrt(a), rel=1e-12)


def test_fixed_point_matches_implicit_derivative():
    # z = 0.5 cos z + a  =>  dz/da = 1 / (1 + 0.5 sin z)
    for a in (0.2, 3.0):
        z = fixed_point(a)
        assert grad(fixed_point)(a) == pytest.approx(1.0 / (1.0 + 0.5 * math.sin(z)), rel=1e-10)


def test_zero_trip_gradients_keep_type_and_shape():
    gx, gw = grad(zero_trip, wrt=(0, 1))(V4, POS4, 0)
    assert_grad_like(gx, V4)
    assert_grad_like(gw, POS4)
    np.testing.assert_array_equal(gx, np.ones(4))
    np.testing.assert_array_equal(gw, np.zeros(4))
    gx, gk = grad(zero_trip_scalar, wrt=(0, 1))(0.9, 1.1, 0)
    assert_grad_like(gx, 0.9)
    assert_grad_like(gk, 1.1)
    assert (gx, gk) == (1.0, 0.0)
    gx, gw = grad(zero_trip_while, wrt=(0, 1))(V4, POS4)
    assert_grad_like(gw, POS4)
    np.testing.assert_array_equal(gw, np.zeros(4))


def test_horner_wrt_tuple_of_coefficients():
    g = grad(horner_arg, wrt=1)(1.3, COEFFS)
    assert isinstance(g, tuple) and len(g) == len(COEFFS)
    expected = tuple(1.3 ** (len(COEFFS) - 1 - k) for k in range(len(COEFFS)))
    np.testing.assert_allclose(g, expected, rtol=1e-12)


def _value_and_grad_cases():
    seen, out = set(), []
    for case in reversed(CASES):  # the last input of each function (zero_trip_scalar: n=5)
        f, args, wrt = case.values if hasattr(case, "values") else case
        if f in seen or hasattr(case, "marks") and case.marks:
            continue
        seen.add(f)
        out.append(pytest.param(f, args, wrt, id=f.__name__))
    return out


@pytest.mark.parametrize("f,args,wrt", _value_and_grad_cases())
def test_value_and_grad(f, args, wrt):
    value, g = value_and_grad(f, wrt=wrt)(*args)
    assert value is not None
    np.testing.assert_allclose(value, f(*args), rtol=1e-13)
    expected = grad(f, wrt=wrt)(*args)
    for gi, ei in zip(g, expected) if isinstance(wrt, tuple) else [(g, expected)]:
        np.testing.assert_allclose(gi, ei, rtol=1e-13)


def rnn_states(Wh, xs):
    h = np.zeros(Wh.shape[0])
    total = np.zeros(Wh.shape[0])
    for x_t in xs:
        h = np.tanh(Wh @ h + WX @ x_t)
        total = total + h
    return total


def clipped_steps(x, n):
    for _ in range(n):
        x = np.where(x > 1.0, x * 0.5, x * 1.5) if np.sum(x) > 0 else x - 0.3 * np.sin(x)
    return x


def test_vjp_through_loops():
    seed = rng.normal(size=HID)
    seed_before = seed.copy()
    g = vjp(rnn_states, wrt=0)(WH, XS, seed)
    np.testing.assert_array_equal(seed, seed_before)
    expected = numeric_grad(lambda Wh, xs: np.dot(rnn_states(Wh, xs), seed), (WH, XS), 0)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)

    x = np.array([0.4, 1.6, -0.3])
    for n in (0, 1, 4):
        seed = np.array([1.0, -2.0, 0.5])
        g = vjp(clipped_steps)(x, n, seed)
        expected = numeric_grad(lambda x, n, s=seed: np.dot(clipped_steps(x, n), s), (x, n), 0)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(seed, [1.0, -2.0, 0.5])


# --- golden files of the generated source -------------------------------------------------------


def golden_if(x):
    if x > 0.0:
        y = x * x
    elif x > -1.0:
        y = 3.0 * x
    else:
        y = -x
    return y


def golden_while_break(x):
    y = x
    while True:
        y = 0.5 * (y + x / y)
        if abs(y * y - x) < 1e-12:
            break
    return y


def golden_early_return(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
        if s > 10.0:
            return s * x
    return s


def golden_indexed_reads(x):
    s = 0.0
    for i in range(3):
        s = s + x[i] * x[i]
    return s


GOLDENS = [
    ("control_if", golden_if, (0,)),
    ("control_for_indexed_reads", golden_indexed_reads, (0,)),
    ("control_for_decay", decay, (0,)),
    ("control_while_break", golden_while_break, (0,)),
    ("control_early_return", golden_early_return, (0,)),
]


@pytest.mark.parametrize("name,f,wrt", GOLDENS, ids=[g[0] for g in GOLDENS])
def test_golden_source(name, f, wrt):
    assert_golden(f"{name}.py", source(grad(f, wrt=wrt[0])))


def test_golden_functions_are_correct():
    for x in (0.5, -0.5, -3.0):
        check_grad(golden_if, (x,))
    check_grad(golden_while_break, (2.0,))
    check_grad(golden_while_break, (0.01,))
    for x in (0.2, 1.5):
        check_grad(golden_early_return, (x, 10))
    # (its golden source: x[i] read in a loop adds into a zeros buffer in place, `dx[i] += ...`)
    check_grad(golden_indexed_reads, (np.array([0.5, -1.0, 2.0]),))


def test_loops_stay_loops():
    """No unrolling: the derivative of a 100-step loop is a few dozen lines."""
    src = source(grad(decay))
    assert src.count("\n") < 60
    loops = [line for line in src.splitlines() if line.lstrip().startswith("for ")]
    assert len(loops) == 2 and "append(" in src and ".pop()" in src


# --- scale ---------------------------------------------------------------------------------


def long_decay(k, x0, n):
    x = x0
    for _ in range(n):
        x = x - 0.01 * k * x
    return x


def test_hundred_thousand_iterations_and_stack_memory():
    n = 100_000
    k, x0 = 1e-3, 1.5
    dlong = grad(long_decay, wrt=(0, 1))
    dlong(k, x0, 10)  # generate and compile outside the measurement
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        dk, dx0 = dlong(k, x0, n)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    factor = 1.0 - 0.01 * k
    assert dx0 == pytest.approx(factor**n, rel=1e-9)
    assert dk == pytest.approx(x0 * n * factor ** (n - 1) * -0.01, rel=1e-9)
    per_iteration = peak / n
    print(f"\nstack memory: {peak} bytes peak, {per_iteration:.1f} bytes per iteration")
    assert per_iteration < 48  # 32 bytes measured (one float pushed per iteration)


# --- no mutation, no state between calls -------------------------------------------------------


def accumulate_rows(A, h):
    for row in A:
        h = h + row * np.sum(h)
        h = h * 0.5
    return np.sum(h * h)


def risky_while(x, k):
    s = 1.0
    i = 0.0
    while i < 5.0:
        s = s * x + 1.0 / (i - k)
        i = i + 1.0
    return s


def test_arguments_not_modified_and_calls_repeatable():
    A, h = A34.copy(), V4.copy()
    d = grad(accumulate_rows, wrt=(0, 1))
    first = d(A, h)
    np.testing.assert_array_equal(A, A34)
    np.testing.assert_array_equal(h, V4)
    second = d(A, h)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(
        first, (numeric_grad(accumulate_rows, (A, h), 0), numeric_grad(accumulate_rows, (A, h), 1))
    ):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)


def test_repeatable_after_a_call_that_raised():
    d = grad(risky_while)
    good = d(0.7, 7.5)
    with pytest.raises(ZeroDivisionError):
        d(0.7, 3.0)  # raises on the fourth iteration, after values were pushed
    assert d(0.7, 7.5) == good
    dv = vjp(risky_while)
    with pytest.raises(ZeroDivisionError):
        dv(0.7, 3.0, 1.0)
    assert dv(0.7, 7.5, 1.0) == good
    check_grad(risky_while, (0.7, 7.5))


def test_repeated_calls_do_not_leak_state():
    args = (MIXED6.copy(), 3.0)
    before = copy.deepcopy(args)
    d = grad(with_break)
    results = [d(*args) for _ in range(3)]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    np.testing.assert_array_equal(args[0], before[0])
    # Interleave inputs that take different paths: each call stands alone.
    a = d(MIXED6, 0.5)
    b = d(MIXED6, 100.0)
    np.testing.assert_array_equal(d(MIXED6, 0.5), a)
    np.testing.assert_array_equal(d(MIXED6, 100.0), b)


def alias_then_loop(x):
    y = x
    for i in range(3):
        y = y + x[i] * x
    return y


def seed_flows_to_arg(x):
    t = 0.0
    for i in range(2):
        t = t + x[i] * x[i]
    return x + t


def carried_from_arg(x, w):
    for i in range(2):
        w = w + x[i]
    return w


def seed_kept_by_a_zero_trip_loop(x, n):
    y = x * 1.0
    w = y * 3.0
    for i in range(n):
        y = y * 2.0  # the reversed body gives y's adjoint a buffer of its own ...
    return y + w  # ... but with n = 0 it is still the seed when w's part is added to it


@pytest.mark.parametrize(
    "f,args",
    [
        (alias_then_loop, (np.arange(1.0, 5.0),)),
        (seed_flows_to_arg, (np.arange(1.0, 5.0),)),
        (carried_from_arg, (np.arange(1.0, 5.0), np.ones(4))),
        (seed_kept_by_a_zero_trip_loop, (np.arange(1.0, 5.0), 0)),
    ],
    ids=["alias_then_loop", "seed_flows_to_arg", "carried_from_arg", "zero_trip_seed"],
)
def test_vjp_does_not_modify_seed_or_arguments(f, args):
    """Adjoints accumulated in place (x[i] in loops) must never write into the seed or an arg."""
    seed = np.array([1.0, 2.0, 3.0, 4.0])
    before = copy.deepcopy((args, seed))
    d = vjp(f)
    first = d(*args, seed)
    assert_same_arrays(before, (args, seed))
    np.testing.assert_array_equal(d(*args, seed), first)
    expected = numeric_grad(lambda *a: np.dot(f(*a), before[1]), args, 0)
    np.testing.assert_allclose(first, expected, rtol=1e-6, atol=1e-8)


def assert_same_arrays(before, after):
    (args_b, seed_b), (args_a, seed_a) = before, after
    np.testing.assert_array_equal(seed_a, seed_b)
    for a, b in zip(args_a, args_b):
        np.testing.assert_array_equal(a, b)


def _bound_on_one_branch_then_overwritten(x, c):
    if c > 0:
        a = x * 2.0
    a = np.sin(x)
    return a * a


def _bound_on_one_branch_then_overwritten_in_a_loop(x, c):
    if c > 0:
        a = x * 2.0
    s = 0.0
    for i in range(3):
        a = np.sin(x * i)
        s = s + a * a
    return s


@pytest.mark.parametrize(
    "f", [_bound_on_one_branch_then_overwritten, _bound_on_one_branch_then_overwritten_in_a_loop]
)
@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_value_saved_where_it_may_be_unbound(f, c):
    # the save of `a` before it is overwritten runs on the path that never bound it: `a` starts
    # as None (was UnboundLocalError in the generated code)
    check_grad(f, (1.5, c))


def loop_rebinds_to_a_new_shape(x):
    y = x * 2.0
    s = y[0] * y[1]
    for i in range(2):
        y = np.sin(x[:2]) * y[i]  # (3,) before the loop, (2,) after its first iteration
    return np.sum(y * y) + s


def test_loop_rebinding_a_read_variable_to_a_new_shape():
    # the adjoint of y before its rebinding in the loop is not the buffer of the y after it
    check_grad(loop_rebinds_to_a_new_shape, (np.array([1.0, 2.0, 3.0]),))
