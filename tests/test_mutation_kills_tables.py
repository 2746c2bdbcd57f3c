"""Cases that only a surviving mutant of a rule table's template showed untested
(docs/development.md, mutation testing): ``rules/numeric_rules.py`` (``np.interp`` outside its
knots with and without ``left``/``right``, ``np.cov`` of two operands with every keyword,
``np.trapezoid``'s ``dx``, ...) and ``rules/container_rules.py``.

Each is a program a user can write, its gradient checked against central differences and its
tangent against the directional central difference, in float64; ``tests/mutate_rules.py`` runs
them against the rules they name (``MUTATION_CHECKS``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import test_numeric_rules as numeric
from gradcheck import numeric_grad

import srcgrad
from srcgrad.errors import UnsupportedCaseError

RNG = np.random.default_rng(20)


def _check(f, args, wrt):
    """grad of f with respect to the arguments ``wrt`` against central differences, and jvp
    along a random tangent of each against the central difference along them together."""
    args, wrt = list(args), tuple(wrt)
    one = wrt if len(wrt) > 1 else wrt[0]
    grads = srcgrad.grad(f, wrt=one)(*args)
    grads = grads if len(wrt) > 1 else (grads,)
    for i, got in zip(wrt, grads):
        assert np.shape(got) == np.shape(args[i])
        np.testing.assert_allclose(got, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
    tangents = [RNG.normal(size=np.shape(args[i])) for i in wrt]
    tangents = tuple(t if np.ndim(args[i]) else float(t) for i, t in zip(wrt, tangents))
    _, out = srcgrad.jvp(f, wrt=one)(*args, tangents if len(wrt) > 1 else tangents[0])
    h = 1e-6
    plus, minus = list(args), list(args)
    for i, t in zip(wrt, tangents):
        plus[i], minus[i] = args[i] + h * t, args[i] - h * t
    np.testing.assert_allclose(out, (f(*plus) - f(*minus)) / (2 * h), rtol=1e-6, atol=1e-8)


# --- np.trapezoid's dx ----------------------------------------------------------------------------

Y4 = np.array([1.0, 2.0, 4.0, 3.0])


def trapezoid_in_dx(d):
    return np.trapezoid(Y4**2, dx=d)


def trapezoid_in_y_with_array_dx(y):
    return np.trapezoid(y * y, dx=np.array([0.5, 1.0, 2.0]))


def test_trapezoid_refuses_the_derivative_in_an_array_dx():
    # NumPy multiplies an array dx into the averaged samples; the rule's dx is one number (its
    # gradient was the scalar 25.0 for [2.5, 10, 12.5], its tangent an array for a scalar)
    for d in (np.array([0.5, 1.0, 2.0]), np.array([0.7])):
        with pytest.raises(UnsupportedCaseError, match="scalar `dx`"):
            srcgrad.grad(trapezoid_in_dx)(d)
        with pytest.raises(UnsupportedCaseError, match="scalar `dx`"):
            srcgrad.jvp(trapezoid_in_dx)(d, np.ones_like(d))
    _check(trapezoid_in_dx, [0.7], [0])
    _check(trapezoid_in_dx, [np.array(0.7)], [0])
    _check(trapezoid_in_y_with_array_dx, [Y4], [0])  # y's gradient with an array dx is right


# --- np.interp outside its knots ----------------------------------------------------------------

XPI = np.array([0.0, 1.0, 1.5, 3.0])
TI = np.array([-0.7, 0.4, 1.2, 2.2, 3.6, -0.2])  # below, inside, above the knots
FI = np.array([0.3, 2.0, -1.0, 1.5])
WI = np.array([1.0, -2.0, 0.5, 3.0, 1.5, -0.8])  # weights: a dropped cotangent is seen


def interp_plain(t, fp):
    return np.sum(WI * np.interp(t, XPI, fp))


def interp_left(t, fp, lo):
    return np.sum(WI * np.interp(t, XPI, fp, left=lo))


def interp_right(t, fp, hi):
    return np.sum(WI * np.interp(t, XPI, fp, right=hi))


def interp_both(t, fp, lo, hi):
    return np.sum(WI * np.interp(t, XPI, fp, left=lo, right=hi))


def interp_constant_ends(fp):
    # left and right given but constant: their tangents are None, fp's end values unread
    return np.sum(WI * np.interp(TI, XPI, fp, left=0.25, right=-0.5))


INTERP_CASES = [
    (interp_plain, [TI, FI], [0, 1]),
    (interp_left, [TI, FI, 0.6], [0, 1, 2]),
    (interp_left, [TI, FI, np.array(0.6)], [2]),
    (interp_right, [TI, FI, -0.9], [0, 1, 2]),
    (interp_both, [TI, FI, 0.6, -0.9], [1, 2, 3]),
    (interp_both, [TI, FI, np.array(0.6), -0.9], [2, 3]),
    (interp_constant_ends, [FI], [0]),
]


@pytest.mark.parametrize("f, args, wrt", INTERP_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(INTERP_CASES)])
def test_interp_outside_its_knots_with_and_without_left_and_right(f, args, wrt):
    # points below and above the knots: fp's end values are read where left (right) is None
    # and not where it is given (interp_keep), left and right where outside (interp_outside)
    _check(f, args, wrt)


# --- second derivatives: the rules of numeric_rules' helpers -------------------------------------

Z6 = np.array([0.5, -1.0, 2.0, 0.3, -0.7, 1.2])
XS4 = np.array([-1.0, -0.2, 0.5, 2.0])
XC = np.array([1.0, 1.1, 1.25, 1.3, 1.45, 1.6])  # close points: rcond=0.05 drops two directions
OTHER = np.array([[0.4], [-1.1], [0.9]])
M32 = np.array([[0.3, -0.5], [1.2, 0.4], [-0.8, 0.6]])


def trapezoid_x_given_dx_active(z):
    # NumPy ignores dx where x is given: trapezoid_grad's dx is active and its derivative 0
    # (its else branches)
    return np.trapezoid(z[:4] ** 2, x=XS4, dx=z[4]) + z[4] ** 2 * np.sum(z[:4])


def trapezoid_in_x_along_axis_0(z):
    # trapezoid_grad_x's vjp in g reads the axis
    return np.sum(np.trapezoid(np.reshape(z**2, (3, 2)), x=z[:3] ** 3, axis=0) ** 2)


def polyfit_with_rcond(z):
    return np.sum(np.polyfit(XC, z**2, 3, rcond=0.05) ** 2)


def cov_of_one_active_operand(z):
    # cov_vjp/cov_jvp with the other operand given but constant: its tangent is None
    m = np.reshape(z**2, (3, 2))
    return (np.sum(np.cov(m, OTHER, rowvar=False, ddof=2, fweights=np.array([1, 2, 1])) ** 2)
            + np.sum(np.cov(M32.T, np.reshape(z[:3] * z[3:], (1, 3)), bias=True) ** 2))


def _second(f, z, modes):
    """H u, the Hessian of f at z along u, by central differences of grad(f), against each of
    ``modes``: "fr" jvp(grad(f)), "rr" vjp(grad(f)), "ff" jvp(jvp(f)) (u H u), "rf" vjp(jvp(f))."""
    u = np.reshape(np.linspace(-1.0, 1.0, np.size(z)) + 0.1, np.shape(z))
    df = srcgrad.grad(f)
    h = 1e-5
    hu = (df(z + h * u) - df(z - h * u)) / (2 * h)
    got = {
        "fr": lambda: srcgrad.jvp(df)(z, u)[1],
        "rr": lambda: srcgrad.vjp(df)(z, u),
        "ff": lambda: srcgrad.jvp(srcgrad.jvp(f))(z, u, u)[1][1],
        "rf": lambda: srcgrad.vjp(srcgrad.jvp(f))(z, u, (0.0, 1.0)),
    }
    for mode in modes:
        want = np.sum(u * hu) if mode == "ff" else hu
        np.testing.assert_allclose(got[mode](), want, rtol=1e-5, atol=1e-6, err_msg=mode)


def eigvals_squared(a):
    # eigvals' helpers read eig_vectors, whose rule only a second derivative reads: distinct
    # real eigenvalues, and a complex pair
    return (np.sum(np.real(np.linalg.eigvals(a[:3, :3])) ** 3)
            + np.sum(np.real(np.linalg.eigvals(a[1:, 1:] - a[1:, 1:].T + np.eye(2)) ** 2)))


A33 = np.array([[2.0, 1.0, 0.3], [0.5, -1.0, 0.2], [0.1, 0.4, 3.5]])


SECOND_ORDER = [
    (trapezoid_x_given_dx_active, "fr rr"),
    (trapezoid_in_x_along_axis_0, "rr"),
    # polyfit_grad's and polyfit_tangent's rules keep rcond
    (polyfit_with_rcond, "fr rr ff rf"),
    # cov_vjp's tangent in m (other constant) and in other (m constant); cov_jvp's adjoint
    (cov_of_one_active_operand, "fr rr"),
]


@pytest.mark.filterwarnings("ignore::numpy.exceptions.RankWarning")
@pytest.mark.parametrize("f, modes", SECOND_ORDER, ids=[c[0].__name__ for c in SECOND_ORDER])
def test_second_order_through_the_numeric_helpers(f, modes):
    _second(f, Z6, modes.split())


def test_second_order_of_eigvals():
    _second(eigvals_squared, A33, ["fr", "rr"])


def subtract_outer_in_a(a):
    return np.sum(W34 * np.subtract.outer(a, B4))


def add_outer_in_b(b):
    return np.sum(W34 * np.add.outer(A3, b))


W34 = np.arange(12.0).reshape(3, 4) - 5.0
A3 = np.array([0.3, -1.2, 0.8])
B4 = np.array([0.5, -1.0, 2.0, 0.25])


def test_the_tangent_of_an_outer_has_the_outer_shape():
    # a constant first operand: the tangent of add.outer(A3, b) is db broadcast over A3's axis,
    # of the result's shape (3, 4), not db's (which a weighted sum would broadcast back)
    t = np.array([0.5, -1.0, 0.25, 2.0])
    for ufunc, sign in ((np.add, 1.0), (np.subtract, -1.0)):
        _, out = srcgrad.jvp(lambda b, u=ufunc: u.outer(A3, b))(B4, t)
        assert np.shape(out) == (3, 4)
        np.testing.assert_allclose(out, sign * np.broadcast_to(t, (3, 4)), rtol=1e-12)


def trapezoid_dx_beside_x(y, s):
    return np.sum(np.trapezoid(y, x=XS4, dx=s) * np.array([1.0, 2.0]))


def test_the_gradient_in_y_along_an_ignored_dx_is_zeros_of_y_shape():
    # NumPy ignores dx where x is given: the tangent of the gradient in y along dx is zeros of
    # y's shape (trapezoid_grad's dx tangent where x is given), the only part it has here
    y = np.array([[0.3, -1.0, 2.0, 0.5], [1.5, 0.2, -0.4, 1.0]])
    dgrad = srcgrad.grad(trapezoid_dx_beside_x, wrt=0)
    _, out = srcgrad.jvp(dgrad, wrt=1)(y, 0.7, 1.0)
    assert np.shape(out) == (2, 4)
    h = 1e-6
    np.testing.assert_allclose(out, (dgrad(y, 0.7 + h) - dgrad(y, 0.7 - h)) / (2 * h), atol=1e-8)


OUTER_CASES = [(subtract_outer_in_a, A3), (add_outer_in_b, B4),
               (lambda a: np.sum(W34 * np.add.outer(a, B4)), A3),
               (lambda b: np.sum(W34 * np.subtract.outer(A3, b)), B4)]


@pytest.mark.parametrize("f, x", OUTER_CASES)
def test_outer_of_one_active_operand(f, x):
    # the other operand constant (its tangent None) and 1-D (the vjp's tensordot axes)
    _check(f, [x], [0])


def _weighted_gradient_in_y(s):
    return np.sum(np.array([1.0, -2.0, 0.5, 3.0])
                  * srcgrad.grad(_trapezoid_in_y_and_dx, wrt=0)(Y4, s))


def _trapezoid_in_y_and_dx(y, s):
    return np.trapezoid(y**2, dx=s * np.array([0.5, 1.0, 2.0]))


def test_an_array_dx_is_refused_at_second_order_too():
    # the gradient in y reads dx (trapezoid_grad); differentiated again in the array dx's
    # scale s, its rule in dx is refused as trapezoid's is (it gave 21.0 for 18.5); the tangent
    # along s is right (trapezoid_grad is linear in its dx, an array too)
    with pytest.raises(UnsupportedCaseError, match="scalar `dx`"):
        srcgrad.grad(_weighted_gradient_in_y)(0.7)
    h = 1e-6
    want = (_weighted_gradient_in_y(0.7 + h) - _weighted_gradient_in_y(0.7 - h)) / (2 * h)
    np.testing.assert_allclose(srcgrad.jvp(_weighted_gradient_in_y)(0.7, 1.0)[1], want,
                               rtol=1e-6)


def trapezoid_at_a_zero_dx(z):
    # dx is exactly 0.0 at Z6 (z[4] = -0.7): trapezoid_grad's derivative in dx is still there
    return np.trapezoid(z[:4] ** 3, dx=z[4] + 0.7) + np.sum(z[:4]) * z[4]


def test_second_order_at_a_zero_dx():
    _second(trapezoid_at_a_zero_dx, Z6, ["rr"])


# --- second derivatives through the container rules (rules/container_rules.py) -------------------

@dataclasses.dataclass
class Pair:
    a: object
    b: object


def list_insert_second(z):
    L = [z[0], z[1] ** 2]
    L.insert(1, z[2] * z[0])
    return L[0] * L[1] ** 2 + L[2] * L[1]


def list_reverse_second(z):
    L = [z[0], z[1] * z[2], z[3]]
    L.reverse()
    return L[0] * L[1] ** 2 + L[2] ** 3


def dict_get_second(z):
    d = {"a": z[0] * z[1]}
    v = d.get("b", z[2] ** 2) * d.get("a", z[3])
    return v * v + d.get("a") ** 3


def replace_second(z):
    p = Pair(z[0], z[1])
    q = dataclasses.replace(p, b=z[2] * z[0])
    return q.a * q.b ** 2 + p.b * q.b


def concat_second(z):
    L = [z[0], z[1]]
    M = L + [z[2] * z[3]]
    T = tuple(M)
    N = list(T)
    return N[0] * N[2] ** 2 + T[1] ** 3


CONTAINER_CASES = [(list_insert_second, "rf"), (list_reverse_second, "rr"),
                   (dict_get_second, "rf"), (replace_second, "fr ff"), (concat_second, "rf")]

Z4 = np.array([0.5, -1.0, 2.0, 0.3])


@pytest.mark.parametrize("f, modes", CONTAINER_CASES, ids=[c[0].__name__ for c in CONTAINER_CASES])
def test_second_order_through_list_dict_and_field_writes(f, modes):
    # list.insert, list.reverse, dict.get with a default, dataclasses.replace, list
    # concatenation and tuple(): the modes that read the rules these cases alone check
    _second(f, Z4, modes.split())


def dict_methods_second(z):
    d = {"a": z[0], "b": z[1] * z[2]}
    d.update({"c": z[3] ** 2})
    vals = list(d.values())
    items = list(d.items())
    s = vals[0] * vals[2] + items[1][1] ** 2
    return s * s


def list_methods_second(z):
    L = [z[0], z[1]]
    L.extend([z[2] * z[3]])
    L.append(z[0] ** 2)
    v = L.pop(1)
    M = [z[3]] * 2
    return v * L[-1] ** 2 + M[1] * L[0] ** 2 + L[1] * M[0]


def fields_second(z):
    p = Pair(z[0], z[1] * z[2])
    d = dataclasses.asdict(p)
    return d["a"] * d["b"] ** 2 + vars(p)["b"] * vars(p)["a"] ** 2


def cast_and_item_second(z):
    kind = np.float64
    x = (z * z).astype(kind)
    y = np.sum(x * z).item()
    return y * y + x[0] ** 3


def shared_update_second(z):
    x = z * 1.0
    L = [x, z[0]]
    x += z**2
    return np.sum(L[0] ** 2 * z) + L[1] * x[1]


CONTAINER_CASES_ALL_MODES = [dict_methods_second, list_methods_second, fields_second,
                             cast_and_item_second, shared_update_second]
MODES = ["fr", "rr", "ff", "rf"]


@pytest.mark.parametrize("f", CONTAINER_CASES_ALL_MODES, ids=lambda f: f.__name__)
def test_second_order_through_container_helpers(f):
    # dict.update, values() and items(); extend, append, pop and [v] * n; asdict and vars();
    # astype with a dtype held in a variable and .item(); x += v with x held by a list
    _second(f, Z4, MODES)



# --- container_rules: the rules of helpers that only third-order code calls ----------------------
# (value_at_key, default_part, dict_to_values, ...: the adjoints of the adjoints' helpers), and
# helpers of Jacobians and seeds that a second transform of generated code never meets
# (single_output, unstack_rows): a user's function calling the helper itself, differentiated
# once, reads the helper's own rule, which no other test of the suite did
# (mutants20i; each kill re-planted: mutate_code.py --templates container_rules --rerun)
R = srcgrad.runtime
KEYS = {"a": 1.0, "b": 2.0}


def value_at_key(z):
    d = {"a": z[0] * z[1], "b": z[2]}
    return R.value_at_key(d, KEYS, "a") * z[3] + R.value_at_key(d, KEYS, "c") * z[0]


def default_part(z):
    return R.default_part(z[0] * z[1], KEYS, "c", 0.0) * z[2] + R.default_part(
        z[3], KEYS, "a", 0.0) * z[1]


def dict_to_values(z):
    v = R.dict_to_values({"b": z[0], "a": z[1] * z[2]}, KEYS)
    return v[0] * z[3] + v[1] ** 2


def dict_to_items(z):
    v = R.dict_to_items({"b": z[0], "a": z[1] * z[2]}, KEYS)
    return v[0][1] * z[3] + v[1][1] ** 2


def drop_prefix(z):
    v = R.drop_prefix([z[0], z[1], z[2] * z[3]], [1.0])
    return v[0] * z[3] + v[1] ** 2


def insert_zero(z):
    v = R.insert_zero([z[0], z[1] * z[2]], [1.0, 2.0], 1)
    return v[0] * z[3] + v[2] ** 2


def only_at(z):
    return R.only_at(z[0] * z[1], [1.0, 2.0], 1)[1] * z[3]


def ndenumerate_items_of(z):
    v = R.ndenumerate_items_of(z * z, np.ones(4))
    return v[1][1] * z[3] + v[2][1] ** 2


def ndenumerate_tangent(z):
    v = R.ndenumerate_tangent(z * z, np.ones(4))
    return v[1][1] * z[3] + v[2][1] ** 2


def pad_cotangents(z):
    v = R.pad_cotangents([z[0], z[1] * z[2]], [1.0, 2.0, 3.0])
    return v[0] * z[3] + v[1] ** 2


def permute_tangent(z):
    v = R.permute_tangent([z[0], z[1] * z[2], z[3]], [2, 0, 1])
    return v[0] * z[1] + v[1] ** 2 + v[2] * 3.0


def remove_position(z):
    v = R.remove_position([z[0], z[1] * z[2], z[3]], [1.0, 2.0], 1)
    return v[0] * z[1] + v[1] ** 2


def repeat_tangent(z):
    v = R.repeat_tangent([z[0], z[1] * z[2]], [1.0, 2.0], 2)
    return v[0] * z[1] + v[3] ** 2 + v[2] * z[3]


def sequence_tangent(z):
    v = R.sequence_tangent([z[0], z[1] * z[2]], [1.0, 2.0])
    return v[0] * z[3] + v[1] ** 2


def sum_tangent(z):
    return R.sum_tangent([z[0] * z[1], None, z[2]]) * z[3]


def single_output(z):
    return np.sum(R.single_output(z * z) * Y4)


def unstack_rows(z):
    v = R.unstack_rows(np.reshape(z * z, (2, 2)), np.ones(2), np.ones(2))
    return np.sum(v[0] * Y4[:2]) + np.sum(v[1] ** 2)


def unstack_columns(z):
    v = R.unstack_columns(np.reshape(z * z, (2, 2)), np.ones(2), np.ones(2))
    return np.sum(v[0] * Y4[:2]) + np.sum(v[1] ** 2)


def attr_parts(z):
    v = R.attr_parts(Pair(z[0], z[1] * z[2]), Pair(1.0, 2.0))
    return v["a"] * z[3] + v["b"] ** 2


def put_at_paths(z):
    v = R.put_at_paths(z[0] * z[1], [1.0, 2.0, 3.0], [(0,), (2,)], 0.0)
    return v[0] * z[3] + v[2] ** 2 + z[2]


DIRECT = [value_at_key, default_part, dict_to_values, dict_to_items, drop_prefix, insert_zero,
          only_at, ndenumerate_items_of, ndenumerate_tangent, pad_cotangents, permute_tangent,
          remove_position, repeat_tangent, sequence_tangent, sum_tangent, single_output,
          unstack_rows, unstack_columns, attr_parts, put_at_paths]


@pytest.mark.parametrize("f", DIRECT, ids=lambda f: f.__name__)
def test_container_helpers_called_directly(f):
    _check(f, (Z4,), (0,))



# the tangent helpers of forward mode and the adjoints' helpers that only the second-order
# batteries above read (two or three tests each): a user's function calling each one
P12 = Pair(1.0, 2.0)

def set_field_tangent(z):
    t = R.set_field_tangent(Pair(z[0], z[1] * z[2]), z[3] ** 2, P12, "a")
    return t.a * z[1] + t.b ** 2


def replace_field_tangent(z):
    t = R.replace_field_tangent(Pair(z[0], z[1] * z[2]), z[3] ** 2, P12, "b")
    return t.a * z[1] + t.b ** 2


def concat_tangent(z):
    v = R.concat_tangent((z[0], z[1] * z[2]), [z[3]], (1.0, 2.0), [3.0])
    return v[0] * z[3] + v[1] ** 2 + v[2] * z[0]


def extend_tangent(z):
    v = R.extend_tangent([z[0], z[1] * z[2]], [z[3]], [1.0, 2.0], [3.0])
    return v[0] * z[3] + v[1] ** 2 + v[2] * z[0]


def get_tangent(z):
    d = {"a": z[0] * z[1], "b": z[2]}
    return R.get_tangent(d, z[3], {"a": 1.0, "b": 2.0}, "a", 0.0) * z[2] + R.get_tangent(
        d, z[3] ** 2, {"a": 1.0}, "c", 0.0) * z[0]


def insert_tangent(z):
    v = R.insert_tangent([z[0], z[1] * z[2]], z[3] ** 2, [1.0, 2.0], 1, 5.0)
    return v[0] * z[3] + v[1] ** 2 + v[2] * z[0]


def appended_tangent(z):
    v = R.appended_tangent([z[0], z[1] * z[2]], z[3] ** 2, 5.0)
    return v[0] * z[3] + v[1] ** 2 + v[2] * z[0]


def update_tangent(z):
    v = R.update_tangent({"a": z[0], "b": z[1] * z[2]}, {"b": z[3] ** 2, "c": z[0]},
                         {"a": 1.0, "b": 2.0}, {"b": 3.0, "c": 4.0})
    return v["a"] * z[3] + v["b"] ** 2 + v["c"] * z[1]


def zero_written(z):
    v = R.zero_written([z[0], z[1] * z[2], z[3]], 1, 5.0)
    return v[0] * z[3] + v[2] ** 2 + v[1]


def structure_tangent(z):
    t = R.structure_tangent(P12, {"a": z[0] * z[1], "b": None})
    return t.a * z[3] + t.b


def as_dict_grad(z):
    t = R.as_dict_grad({"a": z[0] * z[1], "b": z[2]}, P12)
    return t["a"] * z[3] + t["b"] ** 2


def as_dict_tangent(z):
    t = R.as_dict_tangent(Pair(z[0] * z[1], z[2]), P12)
    return t["a"] * z[3] + t["b"] ** 2


def own_fields_grad(z):
    t = R.own_fields_grad({"a": z[0] * z[1], "b": z[2]}, P12)
    return t["a"] * z[3] + t["b"] ** 2


def own_fields_tangent(z):
    t = R.own_fields_tangent(Pair(z[0] * z[1], z[2]), P12)
    return t["a"] * z[3] + t["b"] ** 2


def as_tuple_tangent(z):
    t = R.as_tuple_tangent([z[0] * z[1], z[2]], [1.0, 2.0])
    return t[0] * z[3] + t[1] ** 2


def items_tangent(z):
    t = R.items_tangent({"a": z[0] * z[1], "b": z[2]}, {"a": 1.0, "b": 2.0})
    return t[0][1] * z[3] + t[1][1] ** 2


def values_tangent(z):
    t = R.values_tangent({"a": z[0] * z[1], "b": z[2]}, {"a": 1.0, "b": 2.0})
    return t[0] * z[3] + t[1] ** 2


def put_shared_tangent(z):
    t = R.put_shared_tangent([z[0], z[1] * z[2], z[3]], z[3] ** 2, [1.0, 2.0, 3.0], [(0,), (2,)],
                             5.0)
    return t[0] * z[1] + t[1] ** 2 + t[2] * 3.0


def pop_item_tangent(z):
    t = R.pop_item_tangent([z[0], z[1] * z[2], z[3]], [1.0, 2.0, 3.0], 1)
    return t[0] * z[3] + t[1] ** 2


def cast_grad(z):
    return np.sum(R.cast_grad(z * z, z, np.float64) * Z4)


def cast_tangent(z):
    return np.sum(R.cast_tangent(z * z, np.float64) * Z4)


TANGENT_HELPERS = [set_field_tangent, replace_field_tangent, concat_tangent, extend_tangent,
                   get_tangent, insert_tangent, appended_tangent, update_tangent, zero_written,
                   structure_tangent, as_dict_grad, as_dict_tangent, own_fields_grad,
                   own_fields_tangent, as_tuple_tangent, items_tangent, values_tangent,
                   put_shared_tangent, pop_item_tangent, cast_grad, cast_tangent]


@pytest.mark.parametrize("f", TANGENT_HELPERS, ids=lambda f: f.__name__)
def test_tangent_helpers_called_directly(f):
    _check(f, (Z4,), (0,))


def set_field_tangent_read_elsewhere(z):
    # the written field's cotangent is None (only the other field is read): zeros like the
    # value written (set_field_tangent vjp[dvalue]'s `set_field(obj, name, dvalue)`), not like
    # the object's tangent or the result
    t = R.set_field_tangent(Pair(z[0], z[1] * z[2]), z[3] ** 2, P12, "a")
    return t.b ** 2 + z[3]


def test_a_field_written_and_read_elsewhere():
    _check(set_field_tangent_read_elsewhere, (Z4,), (0,))


def zero_written_out(z):
    return R.zero_written([z[0], z[1] * z[2], z[3]], 1, 5.0)


def appended_to_an_argument(items):
    v = R.appended_tangent(items, items[0] * 2.0, 5.0)
    return v[0] * v[2] + v[1] ** 2


def test_the_adjoints_of_tangent_helpers_keep_seeds_and_lengths():
    # the caller's list seed kept (zero_written's adjoint zeroes a copy of its cotangent);
    # appended_tangent vjp[ditems] `dy` for `append_grad_items(dy)`: a list argument's gradient
    # one item too long
    seed = [1.0, 2.0, 3.0]
    g = srcgrad.vjp(zero_written_out)(Z4, seed)
    assert seed == [1.0, 2.0, 3.0]
    np.testing.assert_allclose(g, [1.0, 0.0, 0.0, 3.0])
    g = srcgrad.grad(appended_to_an_argument)([0.5, -1.0])
    assert isinstance(g, list) and len(g) == 2
    np.testing.assert_allclose(g, [2.0, -2.0])


def padded_argument(items):
    v = R.pad_cotangents(items, [1.0, 2.0, 3.0])
    return v[0] * v[1] ** 2


def test_the_gradient_of_a_padded_list_argument_has_its_length():
    # pad_cotangents vjp[g] `extend_grad_items(dy, y)` (or `dy`): the cotangent of the padded
    # list cut to the result's length, not the argument's: a gradient one item too long
    g = srcgrad.grad(padded_argument)([0.5, -1.0])
    assert isinstance(g, list) and len(g) == 2
    np.testing.assert_allclose(g, [1.0, -1.0])

MUTATION_CHECKS = {
    np.trapezoid: [test_trapezoid_refuses_the_derivative_in_an_array_dx],
    np.cov: [lambda: numeric.test_mixed_second_order(numeric.mixed_cov, Z6),
              lambda: _second(cov_of_one_active_operand, Z6, ["fr"])],
    np.add.outer: [lambda c=c: test_outer_of_one_active_operand(*c) for c in OUTER_CASES]
    + [test_the_tangent_of_an_outer_has_the_outer_shape],
    np.subtract.outer: [lambda c=c: test_outer_of_one_active_operand(*c) for c in OUTER_CASES]
    + [test_the_tangent_of_an_outer_has_the_outer_shape],
    srcgrad.runtime.trapezoid_grad: [
        lambda: _second(trapezoid_x_given_dx_active, Z6, ["fr", "rr"]),
        test_the_gradient_in_y_along_an_ignored_dx_is_zeros_of_y_shape,
        test_an_array_dx_is_refused_at_second_order_too, test_second_order_at_a_zero_dx],
    srcgrad.runtime.trapezoid_grad_x: [lambda: _second(trapezoid_in_x_along_axis_0, Z6, ["rr"])],
    srcgrad.runtime.polyfit_grad: [lambda: _second(polyfit_with_rcond, Z6, "fr rr ff rf".split())],
    srcgrad.runtime.polyfit_tangent: [
        lambda: _second(polyfit_with_rcond, Z6, "fr rr ff rf".split())],
    srcgrad.runtime.cov_vjp: [lambda: _second(cov_of_one_active_operand, Z6, ["fr", "rr"])],
    srcgrad.runtime.cov_jvp: [lambda: _second(cov_of_one_active_operand, Z6, ["fr", "rr"])],
    srcgrad.runtime.eig_vectors: [test_second_order_of_eigvals],
    np.interp: [lambda c=c: test_interp_outside_its_knots_with_and_without_left_and_right(*c)
                for c in INTERP_CASES],
}
