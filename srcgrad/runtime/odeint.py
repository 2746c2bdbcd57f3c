"""The derivatives of ``scipy.integrate.odeint``, written so that they are differentiable again.

Imported only with SciPy (``rules/scipy_rules.py``). ``odeint_vjp`` (the adjoint sensitivity
method) and ``odeint_jvp`` (forward sensitivities) are plain NumPy code marked ``by_source``:
where generated code that calls one is differentiated again, srcgrad inlines its body, whose only
derivative-carrying calls are ``odeint`` itself (so its rule recurses, to any order) and NumPy.
Their bodies never call the right-hand side ``func``: at the next order ``func`` is a value
(a system built here), which srcgrad could not inline. They pass it to ``ode_system``
(nondifferentiable), which builds the augmented system as a Python function *with source*
(registered with ``linecache``) calling ``func`` and ``srcgrad.vjp``/``jvp`` of it as globals,
so srcgrad can differentiate that system in turn.

Each interval ``[t[i-1], t[i]]`` is integrated over ``tau`` in ``[0, 1]`` with
``s(tau) = t[i-1] + tau (t[i] - t[i-1])`` and ``dy/dtau = (t[i] - t[i-1]) f(y, s)``: the times
are then parameters of the system (``ta``, ``tb``), and their derivatives are derivatives with
respect to ``args`` of the system (no evaluation of ``f`` at the solution points, which the
next order would have to differentiate through a call of ``func``).
"""

from __future__ import annotations

import linecache
import uuid

import numpy as np
import scipy.integrate

from .. import transforms
from ..errors import NoRuleError, SrcgradError
from .containers import as_like
from .shapes import by_source, reshape_like

# (kind, func, state size, number of args, tfirst, times, params) -> the generated system
_SYSTEMS: dict = {}
SYSTEM = "__srcgrad_ode_system__"  # marks the systems built here


def ode_system(kind, func, y, args, tfirst, full_output=0, times=True, params=True):
    """The system ``odeint_vjp`` (``kind="adjoint"``) or ``odeint_jvp`` (``"tangent"``)
    integrates over one interval, for the right-hand side ``func`` and the solution ``y``,
    differentiated in the state, and in the times (``times``) and ``args`` (``params``) where
    asked (nondifferentiable: it only reads ``func``, the shapes and the options).

    A system built here is integrated over the constant interval ``[0, 1]``: where it is the
    right-hand side (the next order), the times are never differentiated."""
    if full_output:
        raise NoRuleError(
            "srcgrad has no derivative of odeint(..., full_output=True) with respect to `y0`; "
            "call odeint without full_output to differentiate it")
    if not isinstance(args, tuple) or any(isinstance(a, (tuple, list, dict)) for a in args):
        raise SrcgradError(
            "srcgrad differentiates odeint with args given as a tuple of numbers and arrays "
            f"(args=(k, b)); got {type(args).__name__} {args!r:.80}")
    times = bool(times) and not getattr(func, SYSTEM, False)
    key = (kind, func, int(np.shape(y)[1]), len(args), bool(tfirst), times,
           bool(params) and len(args) > 0)
    if key not in _SYSTEMS:
        _SYSTEMS[key] = _build(*key)
    return _SYSTEMS[key]


def ode_layout(func, args, t, wrt):
    """The sizes of the time and parameter gradients in ``odeint_vjp``'s augmented state for
    the gradient ``wrt`` (0: y0, 1: t, 2: args) (nondifferentiable). A system built here is
    integrated over the constant ``[0, 1]``: its times have no gradient (zeros)."""
    inner = getattr(func, SYSTEM, False)
    if inner and wrt == 1 and not (np.array_equal(t, [1.0, 0.0]) or np.array_equal(t, [0.0, 1.0])):
        raise SrcgradError(f"odeint of a system srcgrad built over the times {t!r}")
    times = 2 if wrt == 1 and not inner else 0
    return times, (int(sum(np.size(a) for a in args)) if wrt == 2 else 0)


def _build(kind, func, n, nargs, tfirst, times, params):
    given = "".join(f", params[{k}]" for k in range(nargs))
    call = f"RHS(s, y{given})" if tfirst else f"RHS(y, s{given})"
    rhs = _generated("odeint_rhs", (
        "def odeint_rhs(y, tau, ta, tb, params):\n"
        "    s = ta + tau * (tb - ta)\n"
        f"    return (tb - ta) * np.ravel({call})\n"
    ), {"RHS": func})
    wrt = (0,) + ((2, 3) if times else ()) + ((4,) if params else ())
    ps = [f"p{k}" for k in range(nargs)]
    build = _adjoint if kind == "adjoint" else _tangent
    return build(rhs, wrt, n, ps, times, params)


def _packed(names):
    """A tuple display of ``names`` (``(p0,)`` for one)."""
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def _adjoint(rhs, wrt, n, ps, times, params):
    """``[y, a, g]' = [f, -a^T df/dy, -a^T df/d(ta, tb) or df/dargs]``."""
    parts = ", np.reshape(g[1], (1,)), np.reshape(g[2], (1,))" if times else ""
    last = 3 if times else 1
    parts += "".join(f", np.ravel(g[{last}][{k}])" for k in range(len(ps) if params else 0))
    return _generated("odeint_adjoint", (
        f"def odeint_adjoint(z, tau, ta, tb{''.join(', ' + p for p in ps)}):\n"
        f"    y = z[:{n}]\n"
        f"    a = z[{n}:{2 * n}]\n"
        f"    f = RHS(y, tau, ta, tb, {_packed(ps)})\n"
        f"    g = VJP(y, tau, ta, tb, {_packed(ps)}, -a)\n"
        f"    return np.concatenate([f, {'g[0]' if len(wrt) > 1 else 'g'}{parts}])\n"
    ), {"RHS": rhs, "VJP": transforms.get("vjp")(rhs, wrt=wrt if len(wrt) > 1 else 0)})


def _tangent(rhs, wrt, n, ps, times, params):
    """``[y, s]' = [f, df/dy s + df/d(ta, tb) (dta, dtb) + df/dargs dargs]``."""
    dps = [f"d{p}" for p in ps]
    tangents = ["s"] + (["dta", "dtb"] if times else []) + ([_packed(dps)] if params else [])
    seed = _packed(tangents) if len(tangents) > 1 else "s"
    return _generated("odeint_tangent", (
        f"def odeint_tangent(z, tau, ta, tb, dta, dtb{''.join(', ' + p for p in ps + dps)}):\n"
        f"    y = z[:{n}]\n"
        f"    s = z[{n}:]\n"
        f"    f, df = JVP(y, tau, ta, tb, {_packed(ps)}, {seed})\n"
        "    return np.concatenate([f, df])\n"
    ), {"JVP": transforms.get("jvp")(rhs, wrt=wrt if len(wrt) > 1 else 0)})


def _generated(name, text, scope):
    """The function ``name`` defined by ``text`` with the globals ``scope`` (and NumPy), its
    source registered under a file name of its own so that srcgrad can read it."""
    filename = f"<srcgrad {name} {uuid.uuid4().hex[:12]}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np, **scope}
    exec(compile(text, filename, "exec"), namespace)
    fn = namespace[name]
    setattr(fn, SYSTEM, True)
    return fn


@by_source
def ode_args(head, args, tail):
    """The arguments of a system: ``(*head, *args, *tail)``, one flat tuple (a system of a system
    then has numbers and arrays as arguments, never a tuple of them)."""
    parts = []
    for a in head:
        parts.append(a)
    for a in args:
        parts.append(a)
    for a in tail:
        parts.append(a)
    return tuple(parts)


@by_source
def ode_split(flat, args):
    """``flat`` cut into the shapes of ``args``' elements: their gradients (a tuple)."""
    parts = []
    start = 0
    for a in args:
        stop = start + np.size(a)
        parts.append(reshape_like(flat[start:stop], a))
        start = stop
    return tuple(parts)


@by_source
def odeint_vjp(dy, y, func, y0, t, args=(), rtol=None, atol=None, mxstep=0, hmax=0.0,
               tfirst=False, full_output=0, wrt=0):
    """The gradient ``wrt`` (0: ``y0``, 1: ``t``, 2: ``args``) of ``odeint(func, y0, t, args)``
    by the adjoint sensitivity method.

    Backwards over each interval it integrates, with ``odeint`` and the caller's tolerances, the
    augmented system ``[y, a, g]``: ``y`` the solution, ``a' = -a^T df/dy`` the adjoint,
    ``g' = -a^T df/d(ta, tb)`` or ``-a^T df/dargs`` the gradient asked for (module docstring);
    ``dy[i]`` is added to ``a`` at every ``t[i]``. Accuracy follows ``rtol`` and ``atol``.
    """
    system = ode_system("adjoint", func, y, args, tfirst, full_output, wrt == 1, wrt == 2)
    k, m = ode_layout(func, args, t, wrt)
    n = np.shape(y)[1]
    dys = np.reshape(dy, np.shape(y))
    a = dys[-1]
    dparams = np.zeros(m)
    dts = []
    later = 0.0
    for i in range(len(t) - 1, 0, -1):
        z0 = np.concatenate([y[i], a, np.zeros(k + m)])
        z = scipy.integrate.odeint(system, z0, np.array([1.0, 0.0]),
                                   args=ode_args((t[i - 1], t[i]), args, ()),
                                   rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        end = z[1]
        a = end[n:2 * n] + dys[i - 1]
        if k:
            dts.append(end[2 * n + 1] + later)
            later = end[2 * n]
        if wrt == 2:
            dparams = dparams + end[2 * n:]
    if wrt == 0:
        return reshape_like(a, y0)
    if wrt == 1:
        dts.append(later)
        return reshape_like(np.flip(np.stack(dts)) if k else np.zeros(len(t)), t)
    return ode_split(dparams, args)


@by_source
def odeint_jvp(y, func, y0, t, args, dy0, dt, dargs, rtol=None, atol=None, mxstep=0, hmax=0.0,
               tfirst=False, full_output=0):
    """The tangent of ``odeint(func, y0, t, args)`` by forward sensitivities, for the tangents
    ``dy0``, ``dt``, ``dargs`` (None where inactive): over each interval, the sensitivity
    ``s' = df/dy s + df/d(ta, tb, args) (dta, dtb, dargs)`` from ``srcgrad.jvp`` of the
    system, started from the tangent at ``t[i-1]``."""
    system = ode_system("tangent", func, y, args, tfirst, full_output, dt is not None,
                        dargs is not None)
    n = np.shape(y)[1]
    s = np.ravel(as_like(dy0, y0)) * 1.0
    dts = as_like(dt, t)
    dps = as_like(dargs, args)
    out = [s]
    for i in range(1, len(t)):
        z0 = np.concatenate([y[i - 1], s])
        z = scipy.integrate.odeint(system, z0, np.array([0.0, 1.0]),
                                   args=ode_args((t[i - 1], t[i], dts[i - 1], dts[i]), args,
                                                 dps),
                                   rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        s = z[1][n:]
        out.append(s)
    return np.stack(out)
