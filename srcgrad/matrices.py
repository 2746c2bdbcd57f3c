"""Jacobians, Hessians and complex derivatives, built on the generated transforms.

Requires: the transforms registered (``transforms.derived``). Guarantees: ``jacobian_of``,
``hessian_of`` and ``holomorphic`` (the builders ``api.jacobian``, ``api.hessian`` and
``api.holomorphic_grad`` cache) return a function of ``f``'s parameters. For a function of
plain positional parameters and one ``wrt``, that function is generated code from the templates
of ``wrappers.py`` (one primal, then ``back`` or ``jvp_fn`` per basis vector, or ``back_many``
for many seeds at once, ``batched.py``), itself input to every transform; otherwise a Python
closure doing the same.

    jacobian_of(f, ("jacobian", "reverse"), "x", options)  ->  f_jacobian(x, ...)
"""

from __future__ import annotations

import inspect
import itertools
import re
from dataclasses import replace
from typing import Any, Iterator

import numpy as np

from . import runtime, transforms
from .batched import seeded
from .context import Options
from .emit.compile import compile_function
from .emit.naming import DERIVED, WRAPPER_LOCALS, Namer
from .runtime.batched import rows, rows_of
from .targets import Fn, Host, Wrt, target, wrt_names
from .wrappers import (
    HESSIAN,
    HOLOMORPHIC,
    JACOBIAN_AUTO,
    JACOBIAN_AUTO_MANY,
    JACOBIAN_AUTO_TWIN,
    JACOBIAN_FORWARD,
    JACOBIAN_FORWARD_TWIN,
    JACOBIAN_REVERSE,
    JACOBIAN_REVERSE_MANY,
    JACOBIAN_REVERSE_TWIN,
)

_RUNTIME: Any = runtime  # the helpers generated code calls (untyped)


def split_call(f: Fn, wrt: Wrt) -> tuple[tuple[str, ...], Fn]:
    """A function mapping a call's arguments to (positional, keywords, selected values).

    Derived functions with an extra last parameter take every positional parameter by position.
    """
    fn = target(f)
    names = wrt_names(fn, wrt)
    signature = inspect.signature(fn)

    def split(args: Any, kwargs: Any) -> tuple[Any, Any, list[Any]]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args, bound.kwargs, [bound.arguments[n] for n in names]

    return names, split


def _basis(x: Any) -> Iterator[Any]:
    """Unit tangents (or seeds) shaped like ``x``, one per element in C order."""
    for i in range(int(np.size(x))):
        yield _RUNTIME.unit_basis(x, i)


def _assemble(parts: list[Any], out_shape: Any, in_shape: Any, axis: int) -> Any:
    """Stack per-element columns (axis=-1) or rows (axis=0) into ``out_shape + in_shape``."""
    if len(parts) == 1 and (in_shape == () if axis == -1 else out_shape == ()):
        return parts[0]
    stacked = np.stack([np.asarray(p) for p in parts], axis=axis)
    return stacked.reshape(tuple(out_shape) + tuple(in_shape))


def _plain_params(f: Fn) -> list[str] | None:
    """f's parameters when they are all positional without defaults, else None."""
    code = getattr(f, "__code__", None)
    if code is None or f.__defaults__ or code.co_kwonlyargcount:
        return None
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    return list(code.co_varnames[: code.co_argcount])


def generate(f: Fn, name: str, template: str, extras: dict[str, Any],
              params: list[str]) -> Fn:
    """Compile a generated wrapper (Jacobian, Hessian) whose text is ``template``."""
    if not name.isidentifier():  # hessian_<lambda>
        name = re.sub(r"\W", "", name.replace("<lambda>", "lambda")) or "derived"
    taken = set(params) | {name}
    namer = Namer(taken)
    bound = {key: namer.fresh(key) for key in extras}
    local = {n: namer.fresh(n) for n in WRAPPER_LOCALS}
    text = template.format(
        name=name, args=", ".join(params), fname=getattr(f, "__name__", "f"), **bound, **local
    )
    fn: Any = compile_function(text, name, Host, {bound[k]: v for k, v in extras.items()})
    # as current as the derivatives it calls (checked through their own dependencies)
    fn.__srcgrad_depends__ = tuple(
        (_Pinned(v), None, v) for v in extras.values() if hasattr(v, "__srcgrad_depends__")
    )
    made: Fn = fn
    return made


class _Pinned:
    """A namespace in which a dependency always resolves to the same object: what is checked
    is that object's own dependencies."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def resolve(self, expr: Any) -> Any:
        return self.obj


def holomorphic(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    names, split = split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    back = transforms.derived(f, "vjp", tuple(names) if as_tuple else names[0], options)
    params = _plain_params(f)
    name = DERIVED["holomorphic_grad"].format(getattr(f, "__name__", "f"))
    if params is not None and not as_tuple:
        # generated code, so that it is itself input to every transform
        extras = {"f": f, "vjp": back, "holomorphic_seed": _RUNTIME.holomorphic_seed,
                  "holomorphic_result": _RUNTIME.holomorphic_result}
        return generate(f, name, HOLOMORPHIC.replace("{x}", names[0]), extras, params)

    def holomorphic(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        out = f(*args, **kwargs)
        seed = None
        for x in xs:
            seed = _RUNTIME.holomorphic_seed(out, x, getattr(f, "__name__", "f"))
        g = back(*pos, seed, **kw)
        if as_tuple:
            return tuple(_RUNTIME.holomorphic_result(part) for part in g)
        return _RUNTIME.holomorphic_result(g)

    holomorphic.__name__ = holomorphic.__qualname__ = name
    holomorphic.__doc__ = f"Complex derivative of {getattr(f, '__name__', 'f')} ({names})."
    return holomorphic


def jacobian_of(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    method = mode[1]
    names, split = split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    params = _plain_params(f)
    if params is not None and not as_tuple:
        # generated code, so that a Jacobian is itself input to every transform
        common = {"f": f, "np": np, "unit_basis": _RUNTIME.unit_basis,
                  "single_output": _RUNTIME.single_output,
                  "jacobian_argument": _RUNTIME.jacobian_argument}
        extras, twin, many = dict(common), dict(common), None
        if method != "forward":  # one sweep for many seeds where it can (batched.py)
            back = transforms.derived(f, "pullback", names[0], options)
            many = seeded(back)
            extras.update(pullback=many or back, stack_rows=_RUNTIME.stack_rows, rows=rows)
            twin.update(vjp=transforms.derived(f, "vjp", names[0], options),
                        stack_rows=_RUNTIME.stack_rows)
        if method != "reverse":
            extras.update(linearize=transforms.derived(f, "linearize", names[0], options),
                          stack_columns=_RUNTIME.stack_columns)
            twin.update(jvp=transforms.derived(f, "jvp", names[0], options),
                        stack_columns=_RUNTIME.stack_columns)
        name = DERIVED["jacobian"].format(f.__name__)
        fast = {"reverse": JACOBIAN_REVERSE_MANY if many else JACOBIAN_REVERSE,
                "forward": JACOBIAN_FORWARD, "auto": JACOBIAN_AUTO_MANY if many else
                JACOBIAN_AUTO}[method].replace("{x}", names[0])
        slow = {"reverse": JACOBIAN_REVERSE_TWIN, "forward": JACOBIAN_FORWARD_TWIN,
                "auto": JACOBIAN_AUTO_TWIN}[method].replace("{x}", names[0])
        fn: Any = generate(f, name, fast, extras, params)
        fn.__srcgrad_differentiate_as__ = generate(f, name, slow, twin, params)
        made: Fn = fn
        return made
    forward = [transforms.derived(f, "jvp", n, options) for n in names]
    pulled = many = None
    if method != "forward":
        pulled = transforms.derived(f, "pullback", tuple(names), options)
        many = seeded(pulled)

    def jac(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        for x in xs:
            _RUNTIME.jacobian_argument(x)
        n_in = sum(int(np.size(x)) for x in xs)
        columns: list[list[Any]] = [[] for _ in xs]
        value = None
        if method != "reverse" and n_in:
            # The first column also yields the output's size, which decides the method.
            value, column = forward[0](*pos, next(_basis(xs[0])), **kw)
            columns[0].append(column)
        else:
            value = f(*args, **kwargs)
        value = _RUNTIME.single_output(value, getattr(f, "__name__", "f"))
        if method == "forward" or (method == "auto" and n_in < int(np.size(value))):
            for k, x in enumerate(xs):
                for e in itertools.islice(_basis(x), len(columns[k]), None):
                    columns[k].append(forward[k](*pos, e, **kw)[1])
            result = [_RUNTIME.stack_columns(c, value, x) for c, x in zip(columns, xs)]
        else:
            back_many = None
            if many is not None:  # one sweep for many seeds (batched.py)
                value, back, back_many = many(*pos, **kw)
            else:
                value, back = pulled(*pos, **kw)
            value = _RUNTIME.single_output(value, getattr(f, "__name__", "f"))
            result = rows_of(back_many, back, value, xs)
        return tuple(result) if as_tuple else result[0]

    jac.__name__ = jac.__qualname__ = DERIVED["jacobian"].format(getattr(f, "__name__", "f"))
    jac.__doc__ = f"Jacobian of {getattr(f, '__name__', 'f')} with respect to {names}."
    return jac


METHODS = {"auto": "auto", "rev": "reverse", "reverse": "reverse", "fwd": "forward",
            "forward": "forward"}


def hessian_of(f: Fn, mode: Any, wrt: Wrt, options: Options) -> Fn:
    names, split = split_call(f, wrt)
    as_tuple = isinstance(wrt, (tuple, list))
    # hvp's derivative: forward over reverse
    inner = transforms.derived(f, "grad", wrt, replace(options, backend="python"))
    hv = transforms.derived(inner, "tangent", wrt, options)
    params = _plain_params(f)
    if params is not None and not as_tuple:
        # generated code, so that a Hessian is itself input to every transform
        extras = {"np": np, "hvp": hv, "unit_basis": _RUNTIME.unit_basis,
                  "jacobian_argument": _RUNTIME.jacobian_argument,
                  "stack_columns": _RUNTIME.stack_columns}
        template = HESSIAN.replace("{x}", names[0])
        return generate(f, DERIVED["hessian"].format(f.__name__), template, extras, params)

    def hess(*args: Any, **kwargs: Any) -> Any:
        pos, kw, xs = split(args, kwargs)
        if not as_tuple:
            x = xs[0]
            columns = [hv(*pos, e, **kw) for e in _basis(x)]
            return _assemble(columns, np.shape(x), np.shape(x), -1)
        zeros = tuple(_RUNTIME.zeros_like(x) for x in xs)
        blocks = [[None] * len(xs) for _ in xs]
        for j, xj in enumerate(xs):
            columns = []
            for e in _basis(xj):
                columns.append(hv(*pos, zeros[:j] + (e,) + zeros[j + 1:], **kw))
            for i, xi in enumerate(xs):
                parts = [c[i] for c in columns]
                blocks[i][j] = _assemble(parts, np.shape(xi), np.shape(xj), -1)
        return tuple(tuple(row) for row in blocks)

    hess.__name__ = hess.__qualname__ = DERIVED["hessian"].format(getattr(f, "__name__", "f"))
    hess.__doc__ = f"Hessian of {getattr(f, '__name__', 'f')} with respect to {names}."
    return hess

