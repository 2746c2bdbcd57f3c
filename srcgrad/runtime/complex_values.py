"""Complex values at the boundary of a generated function, and the checks of rules that are
defined for real values only.

Inside generated code a cotangent ``g`` of a value ``w`` stands for the real linear map
``dw -> Re(g * dw)`` (autograd's and JAX's internal convention): the adjoint of a holomorphic
``f`` is then ``g * f'(z)``, the formula the rule tables write for real values. srcgrad's public
convention is PyTorch's, ``df/dx + 1j*df/dy`` for a real ``f``: the conjugate. So a generated
function conjugates the seed it is given (``check_seed``) and the gradient it returns
(``cast_like``/``as_like``); a real argument gets the real part of its cotangent, whose imaginary
part carries no information (``Re(g * dw)`` reads only ``Re(g)`` for a real ``dw``).
"""

from __future__ import annotations

import numpy as np

from ..errors import SrcgradError, UnsupportedCaseError
from .pytrees import fields, kind_of, rebuild


def is_complex(x):
    """Whether ``x`` is a complex number or an array (or NumPy scalar) of a complex dtype."""
    if isinstance(x, complex):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and getattr(dtype, "kind", None) == "c"


def conj_leaf(g, x):
    """The cotangent ``g`` of the value ``x`` in the public convention (or back): its conjugate
    for a complex ``x``, its real part for a real ``x``; a real ``g`` of a real ``x`` itself."""
    if g is None:
        return None
    if is_complex(x):
        return np.conj(g) if is_complex(g) else g
    if is_complex(g):
        return np.real(g)
    return g


def conj_like(g, x):
    """``conj_leaf`` at every leaf of the structure ``x`` (tuples, lists, dicts, objects)."""
    if g is None:
        return None
    if kind_of(x) is not None:
        return rebuild(g, x, conj_like)
    if isinstance(x, dict) and isinstance(g, dict):
        parts = {k: conj_like(v, x.get(k)) for k, v in g.items()}
        # an object's cotangent (DictCotangents, of a field read) stays one: check_seed tells it
        # from a dict by its type
        return parts if type(g) is dict else _same_kind(g, parts)
    if isinstance(x, (tuple, list)) and isinstance(g, (tuple, list)):
        parts = [conj_like(gi, xi) for gi, xi in zip(g, x)]
        return type(g)(parts) if type(g) in (tuple, list) else _same_kind(g, parts)
    if isinstance(g, (tuple, list, dict)):
        return g
    return conj_leaf(g, x)


def _same_kind(g, parts):
    try:
        return type(g)(parts)
    except TypeError:
        return parts


def conj_seed(seed):
    """A seed given by the caller in the public convention, conjugated for generated code."""
    return conj_like(seed, seed)


def real_only(x, function):
    """``x``, which must not be complex: ``function``'s derivative is defined for real values
    only (an ordering, a Hermitian decomposition). A tuple (a decomposition's factors) must
    have no complex element."""
    parts = x if isinstance(x, tuple) else (x,)
    if any(is_complex(part) for part in parts):
        raise UnsupportedCaseError(
            f"srcgrad differentiates {function} for real values only; it got a complex "
            f"{'number' if np.ndim(parts[-1]) == 0 else 'array'} (write the function of the real "
            f"and imaginary parts, np.real(z) and np.imag(z), that you mean)"
        )
    return x


def real_sign(x):
    """``np.sign`` of a real ``x``, the derivative of ``|x|``: of a boolean array (which
    ``np.sign`` refuses) x itself as 0 and 1, the sign of those numbers."""
    if np.result_type(x) == np.bool_:
        return np.asarray(x, dtype=np.int8)
    return np.sign(x)


def sign_grad(x):
    """The derivative of ``np.sign`` of a real ``x``: 0 (it is piecewise constant). Of a complex
    ``x``, ``np.sign`` is ``x / |x|``, which is not constant: refused."""
    real_only(x, "np.sign (of a complex value, x / |x|: write that instead)")
    return 0.0


def norm_input(x, ord=None, axis=None, matrix=False):
    """``x``, whose norm is differentiated as a norm of ``|x|`` when ``x`` is complex: true of
    every vector norm and of the Frobenius and 1/inf matrix norms; the 2-norm, -2-norm and
    nuclear norm of a complex matrix (its singular values) are refused."""
    if not is_complex(x):
        return x
    if matrix is None:  # np.linalg.norm: a matrix norm over two axes, or of a 2-D x with an ord
        matrix = (axis is not None and np.ndim(axis) == 1 and len(axis) == 2) or (
            axis is None and ord is not None and np.ndim(x) == 2
        )
    if matrix and ord in (2, -2, "nuc"):
        raise UnsupportedCaseError(
            f"srcgrad differentiates the matrix norm ord={ord!r} (of the singular values) for "
            f"real matrices only; it got a complex one"
        )
    return x


def complex_output_error(name):
    """The error of ``grad`` of a function whose output is complex."""
    return SrcgradError(
        f"grad needs {name} to return a real number; it returned a complex one, which has no "
        f"gradient. Use vjp(f) with a seed for a complex output, or holomorphic_grad(f) for "
        f"the complex derivative f'(z) of a holomorphic f (or differentiate np.real or np.abs "
        f"of the output)"
    )


def check_real(*values, name="the function"):
    """The check of ``grad``'s seed when the output is not computed (a full reduction): the
    output is complex exactly when one of ``values`` (what it is computed from:
    ``analysis/realness.py``) holds a complex number, which is refused."""
    for value in values:
        if type(value) is np.ndarray and value.dtype.char == "d":  # float64, the common case
            continue
        if holds_complex(value):
            raise complex_output_error(name)


def holds_complex(value, depth=0):
    """Whether ``value`` is complex or a structure (list, tuple, dict, object) holding a complex
    number."""
    if isinstance(value, (float, int, str, bytes)) or value is None:
        return False
    if is_complex(value):
        return True
    if depth > 50:
        return False
    if isinstance(value, np.ndarray) and value.dtype.kind == "O":
        return any(holds_complex(v, depth + 1) for v in value.flat)
    if isinstance(value, dict):
        return any(holds_complex(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)) and kind_of(value) is None:
        return any(holds_complex(v, depth + 1) for v in value)
    data = fields(value)
    return data is not None and any(holds_complex(v, depth + 1) for v in data.values())


def holomorphic_seed(out, x, name="the function"):
    """The seed of ``holomorphic_grad``: 1 shaped like the output, which must have one element;
    the argument ``x`` must be complex (a real one has no complex derivative to return)."""
    if isinstance(out, (tuple, list, dict)):
        raise SrcgradError(
            f"holomorphic_grad needs {name} to return one number; it returned a "
            f"{type(out).__name__}"
        )
    if int(np.size(out)) != 1:
        raise SrcgradError(
            f"holomorphic_grad needs {name} to return one number; it returned shape "
            f"{np.shape(out)}: use jvp or vjp for the derivative of each output"
        )
    if not is_complex(x):
        raise SrcgradError(
            f"holomorphic_grad needs a complex argument (its derivative is f'(z)); the argument "
            f"is {'an array' if np.ndim(x) else 'a number'} of dtype "
            f"{np.result_type(x)}: pass it as complex (x + 0j)"
        )
    if isinstance(out, np.ndarray):
        return np.ones(np.shape(out), dtype=np.result_type(out, 1j))
    return 1.0 + 0.0j


def holomorphic_result(g):
    """``f'(z)`` from the public-convention gradient ``g = conj(f'(z))`` of ``vjp`` seeded
    with 1."""
    return np.conj(g)
