"""What a generated function does at its boundary with the caller: check the seed of a ``vjp``
and the tangent of a ``jvp``, make the unit seed of ``grad``, bind optional parameters given before
the seed, and build Jacobians from one gradient per row or one tangent per column.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import (
    DerivedCallError,
    NonScalarOutputError,
    SeedShapeError,
    SrcgradError,
    TangentShapeError,
)
from .complex_values import complex_output_error, conj_like, conj_seed, is_complex
from .containers import Cotangents, DictCotangents, cast_like
from .pytrees import _differentiable, check_structure, fields, kind_of, rebuild
from .shapes import as_array, float_dtype


class _Unset:
    def __repr__(self):
        return "UNSET"


UNSET = _Unset()  # an optional parameter not passed by keyword


def bind_optional(rest, given, defaults, name, varargs=False, trailing=1):
    """Split ``*rest`` into optional parameters and the last ``trailing`` positional arguments
    (the seed or tangent; a derivative of a derivative has one per transform).

    ``given`` holds what came by keyword for each optional parameter (``UNSET`` if nothing).
    With ``varargs`` the function has a ``*args`` of its own: the positional arguments left after
    the optional ones are its value, returned (a tuple) before the last ones.
    """
    if len(rest) < trailing:
        what = "argument (the seed or tangent)" if trailing == 1 else f"{trailing} arguments"
        raise DerivedCallError(f"{name}() missing its last positional {what}")
    cut = len(rest) - trailing
    positional, last = rest[:cut], tuple(rest[cut:])
    extra = ()
    if varargs:
        positional, extra = positional[:len(defaults)], (tuple(positional[len(defaults):]),)
    if len(positional) > len(defaults):
        raise DerivedCallError(
            f"{name}() takes at most {len(defaults)} optional positional arguments before the "
            f"last {'one' if trailing == 1 else trailing}, got {len(positional)}"
        )
    values = []
    for i, default in enumerate(defaults):
        if i < len(positional):
            if given[i] is not UNSET:
                raise DerivedCallError(f"{name}() got multiple values for an optional argument")
            values.append(positional[i])
        else:
            values.append(default if given[i] is UNSET else given[i])
    return (*values, *extra, *last)


def single_output(value, name="f"):
    """``value``, which must be one array or scalar for a Jacobian."""
    if isinstance(value, (tuple, list, dict)):
        raise SrcgradError(
            f"jacobian needs {name} to return one array or scalar; it returned a "
            f"{type(value).__name__}. Take the Jacobian of each output separately."
        )
    return value


def unit_basis(like, i):
    """The ``i``-th unit vector shaped like ``like`` (1.0 for a scalar), in C order."""
    jacobian_argument(like)
    if np.ndim(like) == 0 and not isinstance(like, np.ndarray):
        return 1.0
    e = np.zeros(np.shape(like), dtype=float_dtype(like))
    e.flat[i] = 1.0
    return e


def jacobian_argument(x):
    """``x``, checked to be what Jacobians and Hessians are taken of: a real array or number.
    The rows a vjp gives of a complex argument and the columns a jvp gives would be different
    matrices (the conjugate and the derivative); a structure (tuple, list, dict, dataclass)
    has no array shape to stack them in."""
    if type(x) is np.ndarray and x.dtype.kind in "fiub":
        return x  # the usual case, checked first (once per row or column of a Jacobian)
    if is_complex(x):
        raise SrcgradError(
            "jacobian and hessian take real arrays and numbers; this one is complex. Use jvp "
            "(the directional derivative), vjp, or holomorphic_grad (docs/complex.md)"
        )
    if kind_of(x) is not None or isinstance(x, (tuple, list, dict)):
        raise SrcgradError(
            f"jacobian and hessian take arguments that are arrays or numbers, not a "
            f"{type(x).__name__}: pass its arrays as arguments of their own, or use grad, vjp, "
            f"jvp or hvp, whose gradients, seeds and tangents have its structure"
        )
    return x


def stack_rows(rows, value, x):
    """A Jacobian from one gradient per output element: shape ``value.shape + x.shape``."""
    jacobian_argument(x)
    if np.ndim(value) == 0 and len(rows) == 1:
        return rows[0]
    return np.reshape(np.stack([as_array(r) for r in rows]), np.shape(value) + np.shape(x))


def stack_columns(columns, value, x):
    """A Jacobian from one tangent per input element: shape ``value.shape + x.shape``, in the
    dtype of x's gradients whatever the output's (as ``stack_rows``, and JAX's ``jacobian``): the
    method a Jacobian is computed by never changes its dtype."""
    if np.ndim(x) == 0 and len(columns) == 1:
        return cast_like(columns[0], x)
    stacked = np.stack([as_array(c) for c in columns], axis=-1)
    return cast_like(np.reshape(stacked, np.shape(value) + np.shape(x)), x)


def unstack_rows(d, value, x):
    """The adjoint of ``stack_rows``: one cotangent per row."""
    flat = np.reshape(d, (math.prod(np.shape(value)),) + np.shape(x))
    return Cotangents(flat[i] for i in range(flat.shape[0]))


def unstack_columns(d, value, x):
    """The adjoint of ``stack_columns``: one cotangent per column."""
    flat = np.reshape(d, np.shape(value) + (math.prod(np.shape(x)),))
    return Cotangents(flat[..., j] for j in range(flat.shape[-1]))


def unit_seed(out, name="the function"):
    """The seed of ``grad``: 1 shaped like the output, which must have exactly one element."""
    if type(out) in (float, int):
        return 1.0
    if isinstance(out, (tuple, list, dict)) or kind_of(out) is not None:
        raise NonScalarOutputError((), name, container=_described(out))
    shape = np.shape(out)
    if int(np.prod(shape)) != 1:
        raise NonScalarOutputError(shape, name)
    if is_complex(out):
        raise complex_output_error(name)
    if isinstance(out, np.ndarray):
        return np.ones(shape, dtype=float_dtype(out))
    if isinstance(out, np.generic):
        # A NumPy scalar output seeds a NumPy scalar, so that the sweep divides and overflows
        # as the primal did (inf, not ZeroDivisionError, at a pole of the function).
        return float_dtype(out).type(1.0)
    return 1.0


def split_aux(pair, name="the function"):
    """``pair``, which must be ``(output, aux)`` for ``has_aux=True``."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        what = _described(pair) if isinstance(pair, (tuple, list, dict)) else type(pair).__name__
        raise SrcgradError(
            f"has_aux=True needs {name} to return a pair (output, aux); it returned a {what}"
        )
    return pair


def _described(value):
    if kind_of(value) is not None:
        return f"{type(value).__name__} object"
    if isinstance(value, dict):
        return f"dict with keys {list(value)}"
    return f"{type(value).__name__} of {len(value)} values"


def check_seed(seed, out):
    """A ``vjp`` seed must have the shape (and for a tuple output, the structure) of the output.

    A complex seed is returned conjugated: generated code works in the conjugate of the public
    convention (``runtime/complex_values.py``)."""
    if (type(seed) is np.ndarray and type(out) is np.ndarray and seed.shape == out.shape
            and seed.dtype.kind == "f"):
        return seed  # the usual case, checked first (a Jacobian calls back once per row)
    if kind_of(out) is not None:
        if isinstance(seed, (Cotangents, DictCotangents)):
            # the cotangent generated code builds for a read of the output's fields (attr_grad,
            # `grad(f)(p).a` differentiated again): the same seed, with the output's structure
            seed = rebuild(seed, out, lambda part, value: part)
        if type(seed) is not type(out):
            raise SrcgradError(
                f"the vjp seed is a {type(seed).__name__}, but the output is a "
                f"{type(out).__name__}: the seed of a structure has its structure"
            )
        check_like(seed, out, "", _seed_error)
        return conj_like(seed, seed)
    if isinstance(out, (tuple, list)):
        if not isinstance(seed, (tuple, list)) or len(seed) != len(out):
            raise SeedShapeError(_structure(seed), _structure(out))
        # None in a structured seed is a zero cotangent (the part of a derived function's tuple
        # output that nothing read)
        return Cotangents(None if s is None else check_seed(s, o) for s, o in zip(seed, out))
    if isinstance(out, dict) or isinstance(seed, (dict, tuple, list)):
        check_like(seed, out, "", _seed_error)
    elif np.shape(seed) != np.shape(out):
        raise SeedShapeError(np.shape(seed), np.shape(out))
    return conj_seed(seed)


def check_like(given, value, where, error):
    """Raise ``error(given, value, where, structural)`` where the seed or tangent ``given`` has
    not the structure and shapes of ``value``, through dicts, lists, tuples and objects: the
    keys of a dict (a key missing is an error unless its value carries no gradient; a
    ``DictCotangents`` of generated code leaves zero parts out), the fields of an object, the
    shape of each array or number. ``None`` is a zero part; a part of ``value`` that carries no
    gradient (an int, a string) takes anything."""
    if given is None or not _differentiable(value):
        return
    if kind_of(value) is not None:
        if type(given) is not type(value):
            raise error(given, value, where, True)
        theirs = fields(given)
        for name, part in fields(value).items():
            check_like(theirs.get(name), part, f"{where}.{name}", error)
    elif isinstance(value, dict):
        _check_dict_like(given, value, where, error)
    elif isinstance(value, (tuple, list)):
        if not isinstance(given, (tuple, list)) or len(given) != len(value):
            raise error(given, value, where, True)
        for i, (g, part) in enumerate(zip(given, value)):
            check_like(g, part, f"{where}[{i}]", error)
    elif isinstance(given, (tuple, list, dict)) or kind_of(given) is not None:
        raise error(given, value, where, True)
    elif np.shape(given) != np.shape(value):
        raise error(given, value, where, False)


def _check_dict_like(given, value, where, error):
    if not isinstance(given, dict):
        raise error(given, value, where, True)
    extra = [k for k in given if k not in value]
    missing = [k for k, v in value.items() if k not in given and _differentiable(v)]
    if extra or (missing and type(given) is dict):
        raise error(given, value, where, True)
    for k, part in value.items():
        if k in given:
            check_like(given[k], part, f"{where}[{k!r}]", error)


def _described_part(x):
    if isinstance(x, dict):
        return f"a dict with keys {list(x)}"
    if isinstance(x, (tuple, list)) or kind_of(x) is not None:
        return f"a {type(x).__name__} of {len(fields(x) or x)} values"
    return f"an array of shape {np.shape(x)}"


def _seed_error(given, value, where, structural):
    return SeedShapeError(np.shape(given) if not structural else (), np.shape(value)
                          if not structural else (), where,
                          (_described_part(given), _described_part(value)) if structural else None)


def _tangent_error(name):
    def error(given, value, where, structural):
        if structural:
            return TangentShapeError((), (), name + where,
                                     (_described_part(given), _described_part(value)))
        return TangentShapeError(np.shape(given), np.shape(value), name + where)
    return error


def _structure(x):
    if isinstance(x, (tuple, list)):
        return tuple(np.shape(v) for v in x)
    return np.shape(x)


def check_tangent(tangent, x, name="x"):
    """A ``jvp`` tangent must have the shape of the argument it perturbs (for a tuple, list or
    dict argument, the structure, and each element the shape of the argument's; for a structured
    object, an instance of the same class)."""
    if kind_of(x) is not None:
        check_structure(x)
        if type(tangent) is not type(x):
            raise SrcgradError(
                f"jvp tangent for {name!r} is a {type(tangent).__name__}, but the argument is a "
                f"{type(x).__name__}: the tangent of a structure has its structure"
            )
        check_like(tangent, x, "", _tangent_error(name))
        return tangent
    if isinstance(x, (tuple, list)) or isinstance(tangent, (tuple, list)):
        if not (isinstance(x, (tuple, list)) and isinstance(tangent, (tuple, list))
                and len(tangent) == len(x)):
            raise TangentShapeError(_structure(tangent), _structure(x), name)
        for i, (t, v) in enumerate(zip(tangent, x)):
            check_tangent(t, v, f"{name}[{i}]")
        return tangent
    if isinstance(x, dict) or isinstance(tangent, dict):
        check_like(tangent, x, "", _tangent_error(name))
        return tangent
    if np.shape(tangent) != np.shape(x):
        raise TangentShapeError(np.shape(tangent), np.shape(x), name)
    return tangent

