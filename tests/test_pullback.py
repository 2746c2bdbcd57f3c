"""pullback and linearize: the primal once, a reusable back / jvp_fn; Jacobians built on them.

Each is checked against central differences (float64) and against vjp / jvp, called twice with
what the first call returned changed in place in between; generated code as text (golden)."""

import pickle

import numpy as np
import pytest
from golden_source import assert_golden

import srcgrad
from srcgrad import grad, jacobian, jvp, linearize, pullback, source, vjp


def euler(theta, n):
    x = theta[0]
    v = theta[1]
    for _ in range(n):
        a = -np.sin(x)
        x = x + 0.01 * v
        v = v + 0.01 * a
    return np.stack([x * x + v, x - v])


def written(x, n):
    y = x * 1.0
    for i in range(n):
        y[i % 3] = y[i % 3] * np.sin(y[(i + 1) % 3])
    return np.sum(y ** 2) + y


def stats(w, X):
    z = np.tanh(X @ w)
    return np.sum(z ** 2), {"mean": np.mean(z)}


def mlp(W, x):
    h = np.tanh(x @ W)
    return h * h + np.sin(W).sum()


def appended(x, n):
    hs = []
    h = x
    for _ in range(n):
        h = np.cos(h) * x
        hs.append(h)
    return np.sum(np.stack(hs), axis=0)


def left_then_fresh(x, a):
    for _ in range(3):
        if x.sum() < -0.2:
            break
        x = np.zeros(2) + a * x
    x = np.sin(a) * np.ones(2)  # the loop's x is restored by the sweep, never read by it
    return np.sum(x) + np.tanh(a)


def twice(x, a):
    """Random programs, seed 56056: the second inlined call's primal deletes the name its sweep
    restores, which the pullback took for a name the sweep reads (an internal error)."""
    return np.stack([left_then_fresh(x, a), left_then_fresh(np.cos(x) - 1.5, 0.5 * a)])


def central(f, args, pos, seed, eps=1e-6):
    """seed . df/dargs[pos] by central differences."""
    x = np.asarray(args[pos], dtype=float)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        lo = list(args)
        hi = list(args)
        lo[pos], hi[pos] = x - e, x + e
        g.flat[k] = np.sum(seed * (np.asarray(f(*hi)) - np.asarray(f(*lo)))) / (2 * eps)
    return g


CASES = [
    (euler, (np.array([0.3, 0.2]), 40), 0),
    (written, (np.array([0.3, -0.7, 1.1]), 5), 0),
    (mlp, (np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3)), 0),
    (mlp, (np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3)), 1),
    (appended, (np.array([0.3, -0.2]), 4), 0),
    (twice, (np.array([0.3, -0.2]), 0.7), 1),
    (twice, (np.array([0.3, 0.2]), 0.7), 0),
]


@pytest.mark.parametrize("f, args, pos", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_back_is_reusable_and_right(f, args, pos):
    value, back = pullback(f, wrt=pos)(*args)
    want_value = f(*args)
    np.testing.assert_allclose(value, want_value, rtol=1e-15)
    rng = np.random.default_rng(0)
    for _ in range(3):
        seed = rng.standard_normal(np.shape(want_value))
        want = vjp(f, wrt=pos)(*args, seed)
        g = back(seed)
        np.testing.assert_allclose(g, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g, central(f, args, pos, seed), rtol=1e-6, atol=1e-8)
        again = back(seed)
        np.testing.assert_allclose(again, g, rtol=0, atol=0)
        g *= 7.0  # the caller owns what back returns
        np.testing.assert_allclose(back(seed), again, rtol=0, atol=0)


def test_back_keeps_the_primal_stacks_and_reads_no_argument_twice():
    # (the generic code: a pullback called once already runs the code specialized to the
    # kinds of its arguments, and source() shows that one)
    text = source(pullback(euler).__wrapped__)
    assert_golden("euler_pullback.py", text)
    assert "def back(seed" in text and "list(loop_saved)" in text and "euler_vjp" not in text
    theta = np.array([0.3, 0.2])
    value, back = pullback(euler)(theta, 40)
    seed = np.array([1.0, -2.0])
    first = back(seed)
    theta[:] = 5.0  # the caller's array changes after the call: back saved what it reads
    np.testing.assert_allclose(back(seed), first, rtol=0, atol=0)


def rewritten(x, n):
    y = x * 1.0
    for i in range(n):
        y = y * 0.9
        y[i % 3] = np.sin(y[(i + 1) % 3]) * y[i % 3]
    return y


def keyed(x, n):
    d = {"a": x * 1.0}
    hs = []
    for _ in range(n):
        d["a"] = np.cos(d["a"]) * x
        hs.append(d["a"])
    return d["a"] + np.sum(np.stack(hs), axis=0)


@pytest.mark.parametrize("f", [written, rewritten, keyed, appended], ids=lambda f: f.__name__)
def test_a_sweep_that_undoes_writes_logs_them_and_reruns_nothing(f):
    text = source(pullback(f))
    assert "undo = Undo()" in text and "undo.rewind()" in text and "_vjp(" not in text
    x = np.array([0.3, -0.7, 1.1]) if f is not appended else np.array([0.3, -0.2])
    value, back = pullback(f)(x, 5)
    want_value = f(x.copy(), 5)
    rng = np.random.default_rng(3)
    seeds = [rng.standard_normal(x.shape) for _ in range(3)]
    got = [back(s) for s in seeds + seeds]
    np.testing.assert_array_equal(value, want_value)  # `rewritten` returns the array it restores
    for s, g, again in zip(seeds, got, got[3:]):
        np.testing.assert_array_equal(g, again)
        np.testing.assert_allclose(g, vjp(f)(x, 5, s), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(g, central(f, (x, 5), 0, s), rtol=1e-6, atol=1e-8)


def test_a_sweep_back_could_not_reuse_is_refused_not_rerun(monkeypatch):
    """A sweep writing in place in a way the undo log does not record (no program reaches it:
    the reverse transform writes through the logged helpers only) is refused at transform
    time; ``back`` used to rerun the whole vjp per call there."""
    from srcgrad.emit import diskcache
    from srcgrad.transform import pullback as pullback_pass

    monkeypatch.setattr(diskcache, "enabled", lambda: False)  # (generated, not read back)
    monkeypatch.setattr(pullback_pass, "_in_place", lambda sweep, ctx, logged=False: logged)
    with pytest.raises(srcgrad.SrcgradError, match="internal error: the pullback of"):
        pullback(written, optimize=False)


def test_has_aux_and_tuple_wrt_and_structures():
    w, X = np.array([0.5, -0.3, 0.2]), np.linspace(-1, 1, 12).reshape(4, 3)
    value, back, aux = pullback(stats, has_aux=True)(w, X)
    assert set(aux) == {"mean"}
    np.testing.assert_allclose(back(1.0), grad(stats, has_aux=True)(w, X)[0], rtol=1e-14)
    np.testing.assert_allclose(back(2.0), 2 * back(1.0), rtol=1e-14)

    def loss(p, X):
        return np.sum(np.tanh(X @ p["w"]) * p["b"] ** 2)

    p = {"w": w, "b": np.array(0.7)}
    value, back = pullback(loss, wrt=("p", "X"))(p, X)
    (gp, gX), (hp, hX) = back(1.0), grad(loss, wrt=("p", "X"))(p, X)
    np.testing.assert_allclose(gp["w"], hp["w"], rtol=1e-14)
    np.testing.assert_allclose(gp["b"], hp["b"], rtol=1e-14)
    np.testing.assert_allclose(gX, hX, rtol=1e-14)


def test_pullback_of_a_gradient_gives_hessian_rows():
    def f(x):
        return np.sum(np.sin(x) * x ** 3)

    x = np.array([0.3, -0.5, 0.9])
    g, back = pullback(grad(f))(x)
    np.testing.assert_allclose(g, grad(f)(x), rtol=1e-14)
    H = np.stack([back(e) for e in np.eye(3)])
    np.testing.assert_allclose(H, srcgrad.hessian(f)(x), rtol=1e-12, atol=1e-14)


def test_linearize_split_and_rerun():
    W, x = np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3)
    text = source(linearize(mlp))
    assert "def jvp_fn(tangent)" in text and "mlp_jvp" not in text
    value, jvp_fn = linearize(mlp)(W, x)
    np.testing.assert_allclose(value, mlp(W, x), rtol=1e-15)
    rng = np.random.default_rng(1)
    for _ in range(2):
        t = rng.standard_normal(W.shape)
        out = jvp_fn(t)
        np.testing.assert_allclose(out, jvp(mlp)(W, x, t)[1], rtol=1e-14)
        eps = 1e-6
        np.testing.assert_allclose(out, (mlp(W + eps * t, x) - mlp(W - eps * t, x)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)
        out *= 3.0
        np.testing.assert_allclose(jvp_fn(t), jvp(mlp)(W, x, t)[1], rtol=1e-14)



@pytest.mark.parametrize("method", ["rev", "fwd", "auto", "reverse", "forward"])
def test_jacobian_methods(method):
    x = np.array([0.3, 0.2])
    J = jacobian(euler, method=method)(x, 20)
    want = np.stack([central(euler, (x, 20), 0, e) for e in np.eye(2)])
    np.testing.assert_allclose(J, want, rtol=1e-6, atol=1e-9)
    text = source(jacobian(euler, method=method))
    assert ("back(" in text) == (method != "fwd" and method != "forward")


def test_jacobian_rejects_an_unknown_method():
    with pytest.raises(srcgrad.SrcgradError, match="'auto', 'rev' or 'fwd'"):
        jacobian(euler, method="sideways")


def test_pullback_and_linearize_pickle():
    for transform in (pullback, linearize):
        again = pickle.loads(pickle.dumps(transform(mlp)))
        W, x = np.linspace(-1, 1, 6).reshape(3, 2), np.linspace(0, 1, 12).reshape(4, 3)
        value, fn = again(W, x)
        np.testing.assert_allclose(value, mlp(W, x))
        assert repr(again).startswith(f"<{transform.__name__} of mlp")


def recomputing(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * x + np.cos(x)
        y = np.sin(y * 0.5)
    return np.sum(y * np.cos(x))


def squashed(W, x):
    h = np.tanh(x @ W)
    return np.sum(h * np.cos(x[:2]))


def test_the_primal_keeps_what_each_back_would_compute_again():
    """The cosines of the sines a back would compute on every call: saved beside the loop's
    values (the restored ``y``, then ``y`` rebound), and once for ``x`` (the straight line)."""
    x = np.array([0.3, -0.2, 0.5])
    text = source(pullback(recomputing))
    code = [line for line in text.split("def back")[1].splitlines() if "# " not in line]
    assert not any("np.cos" in line or "np.sin" in line for line in code)
    value, back = pullback(recomputing)(x, 4)
    for seed in (1.0, 2.5):
        np.testing.assert_allclose(back(seed), vjp(recomputing)(x, 4, seed), rtol=1e-15)
    np.testing.assert_allclose(back(1.0), central(recomputing, (x, 4), 0, 1.0), rtol=1e-7)
    # and the arithmetic on the primal's values alone (1 - h * h of the tanh)
    W, x = np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.3, -0.2, 0.5])
    text = source(pullback(squashed))
    assert "1 - h * h" in text.split("def back")[0] and "1 - h" not in text.split("def back")[1]
    value, back = pullback(squashed)(W, x)
    for seed in (1.0, 2.5):
        np.testing.assert_allclose(back(seed), vjp(squashed)(W, x, seed), rtol=1e-15)
    np.testing.assert_allclose(back(1.0), central(squashed, (W, x), 0, 1.0), rtol=1e-7)


def until(x, n):
    y = x * 1.0
    k = 0
    while k < n:
        y = np.sin(y) * x
        k = k + 1
    return y * y


def branching(x, n):
    y = x
    for i in range(n):
        if i % 2:
            y = np.sin(y) * x
        else:
            y = np.cos(y)
    return y


def chosen(x, n):
    y = x * 2.0
    if n > 2:
        y = np.sin(y) * x
        n = n - 3
    else:
        y = y * y
    s = 0.0
    for _ in range(n):
        z = np.sin(y)
        if np.sum(z) > 0:
            y = z * x
            s = s + np.sum(y)
        y = y * 0.9
    if n > 2:
        y = y + 1.0
    return y * s


def leaving(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * x
        if np.sum(y) < -0.2:
            break
        y = y + 0.1 * x
    return y


def nested(x, n):
    y = x
    for _ in range(n):
        z = y * 0.5
        for _ in range(3):
            z = np.sin(z) * x
            if np.sum(z) > 0.4:
                break
        y = y + z * 0.1
    return y


def returning(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * 1.1 + x
        if np.sum(y) > 1.0:
            return y * 2.0
    return y


def nested_leaving(x, n):
    y = x
    for _ in range(n):
        if np.sum(y) > 2.5:  # (the rest of the trip: a loop in an if)
            break
        z = y * 0.5
        for _ in range(3):
            z = np.sin(z) * x
            if np.sum(z) > 0.4:
                continue
            z = z * 1.1
        y = y + z * 0.3
        if np.sum(y) < -4.0:
            continue
        y = y * 1.01
    return y


def nested_returning(x, n):
    y = x * 1.0
    for _ in range(n):
        for k in range(2):
            y = np.cos(y) * x + 0.5 * k
        if np.sum(y) > 1.9:
            return y * 3.0
    return y - x


def loop_in_a_branch(x, n):
    y = x * 1.0
    if n > 2:
        for _ in range(n):
            y = np.sin(y) * x
    for _ in range(2):
        if np.sum(y) > 0.0:
            for _ in range(2):
                y = np.cos(y) + x
        y = y * 0.9
    return y


def written_in_a_loop(x, n):
    y = x * 1.0
    for _ in range(n):
        y = np.sin(y) * x
        y[0] = y[1] * 0.5
    return y


@pytest.mark.parametrize("f, args", [(euler, (np.array([0.3, 0.2]), 30)),
                                     (recomputing, (np.array([0.3, -0.5]), 4)),
                                     (until, (np.array([0.3, -0.5]), 4)),
                                     (branching, (np.array([0.3, -0.5]), 5)),
                                     (chosen, (np.array([0.3, -0.5]), 8)),
                                     (chosen, (np.array([0.3, 0.5]), 2)),
                                     (leaving, (np.array([0.3, -0.5]), 8)),
                                     (leaving, (np.array([-1.3, -0.9]), 8)),
                                     (nested, (np.array([0.3, -0.5]), 3)),
                                     (nested, (np.array([0.9, 0.7]), 3)),
                                     (returning, (np.array([0.3, -0.5]), 6)),
                                     (returning, (np.array([0.9, 0.7]), 6)),
                                     (nested_leaving, (np.array([0.5, -1.0]), 6)),
                                     (nested_leaving, (np.array([0.9, 0.8]), 6)),
                                     (nested_leaving, (np.array([-3.0, -2.0]), 5)),
                                     (nested_returning, (np.array([0.5, 0.9]), 4)),
                                     (nested_returning, (np.array([0.1, -0.2]), 4)),
                                     (loop_in_a_branch, (np.array([0.5, -0.9]), 4)),
                                     (loop_in_a_branch, (np.array([-1.1, -0.2]), 1))],
                         ids=lambda c: getattr(c, "__name__", ""))
def test_linearize_through_loops_records_the_primal_once(f, args):
    text = source(linearize(f))
    assert "loop_saved.append((" in text and "in loop_saved:" in text
    assert "_jvp(" not in text and "deepcopy" not in text
    value, jvp_fn = linearize(f)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-15)
    rng = np.random.default_rng(2)
    tangents = [rng.standard_normal(np.shape(args[0])) for _ in range(2)]
    outs = [jvp_fn(t) for t in tangents + tangents]
    for t, out, again in zip(tangents, outs, outs[2:]):
        np.testing.assert_array_equal(out, again)
        np.testing.assert_allclose(out, jvp(f)(*args, t)[1], rtol=1e-14, atol=1e-15)
        eps = 1e-6
        x = args[0]
        fd = (f(x + eps * t, *args[1:]) - f(x - eps * t, *args[1:])) / (2 * eps)
        np.testing.assert_allclose(out, fd, rtol=1e-6, atol=1e-8)


def test_linearize_reruns_through_a_primal_written_in_place():
    x = np.array([0.3, -0.5])
    value, jvp_fn = linearize(written_in_a_loop)(x, 3)
    assert "each call reruns the jvp" in source(linearize(written_in_a_loop))
    t = np.array([1.0, -0.5])
    want = jvp(written_in_a_loop)(x, 3, t)[1]
    x[:] = 9.0
    np.testing.assert_allclose(jvp_fn(t), want, rtol=1e-15)


def halved(u, w, n):
    if n <= 0:
        return 0.5 - u * w
    q = halved(1.5, np.array(w), n - 1)
    return 0.5 + 0.5 * np.tanh(q)


def paired(x):
    return np.sin(x) * halved(1.5, x, 2)


def test_linearize_of_a_value_computed_beside_its_tangent():
    # the jvp of a recursive helper returns the value and its tangent as one pair: the value
    # of linearize (rerun path) cannot be computed without the tangent (was a NameError)
    x = np.array([0.3, -0.7, 1.1])
    value, jvp_fn = linearize(paired)(x)
    np.testing.assert_allclose(value, paired(x), rtol=1e-15)
    t = np.array([1.0, -0.5, 0.25])
    want = jvp(paired)(x, t)[1]
    np.testing.assert_allclose(jvp_fn(t), want, rtol=1e-14)
    np.testing.assert_allclose(jvp_fn(t), want, rtol=1e-14)
    eps = 1e-6
    np.testing.assert_allclose(want, (paired(x + eps * t) - paired(x - eps * t)) / (2 * eps),
                               rtol=1e-6, atol=1e-8)


def swing(c, x, n):
    v = 0.0
    for _ in range(n):
        v = v - c * np.sin(x)
        x = x + 0.1 * v
    return x * x


@pytest.mark.parametrize("transform", [pullback, linearize])
def test_pullback_and_linearize_specialize_at_their_first_call(transform):
    # back (jvp_fn) is made by the call and called again and again: the call runs the code
    # generated for its arguments' kinds (Python floats: no unbroadcast in back), not from the
    # 8th call on as grad does
    made = transform(swing, wrt=0)
    value, fn = made(0.7, 0.4, 20)
    text = source(made)
    assert text.startswith("# specialized to the kinds of its arguments: c: float")
    assert "unbroadcast" not in text
    assert transform is linearize or "unbroadcast(" in source(made.__wrapped__)
    assert value == swing(0.7, 0.4, 20)
    eps = 1e-6
    central = (swing(0.7 + eps, 0.4, 20) - swing(0.7 - eps, 0.4, 20)) / (2 * eps)
    np.testing.assert_allclose([fn(1.0), fn(1.0)], [central, central], rtol=1e-6)


def rebuilt(P, M):
    j = 0
    while j < 3:
        j = j + 1
        P = {"w": np.zeros(2) + np.log(M[-1] ** 2 + 1.0), "u": 0.25 * j * P["u"]}
    return np.sum(P["u"] * P["w"])


def test_linearize_of_a_dict_rebuilt_in_a_loop():
    # found by the random programs (seed 55171, checkpoint hunt): NameError in the primal
    # (`plus_2` is not defined): the jvp shares the name node of `P["w"]`'s value between the
    # primal's dict and its tangent's `as_like(None, ...)`, and the record's renaming of the
    # tangent statement renamed the primal's read too; each statement is copied apart now
    P = {"w": np.array([0.3, -0.2]), "u": np.array([1.1, 0.4])}
    M = np.array([[0.5, -0.7], [0.2, 0.9]])
    value, jvp_fn = linearize(rebuilt)(P, M)
    assert value == rebuilt(P, M)
    t = {"w": np.array([0.3, 0.1]), "u": np.array([1.0, -0.5])}
    want = jvp(rebuilt)(P, M, t)[1]
    np.testing.assert_allclose([jvp_fn(t), jvp_fn(t)], [want, want], rtol=1e-14)
    eps = 1e-6
    moved = [{k: P[k] + s * eps * t[k] for k in P} for s in (1, -1)]
    np.testing.assert_allclose(want, (rebuilt(moved[0], M) - rebuilt(moved[1], M)) / (2 * eps),
                               rtol=1e-6)
