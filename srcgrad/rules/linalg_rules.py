"""Rules for ``numpy.linalg``.

Conventions:

* ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of their input; their gradients are
  the symmetric ones (as in JAX and autograd), which is the gradient of a function of a symmetric
  matrix. Differentiate a function that builds the symmetric matrix (``(a + a.T) / 2``,
  ``a @ a.T``) to get the gradient with respect to its parts.
* ``eigh`` and ``eigvals`` need distinct eigenvalues (``eigvals`` a diagonalizable matrix),
  ``cond`` with ``p`` None/2/-2 simple extreme singular values, ``svd`` distinct nonzero
  singular values (and
  ``full_matrices=False`` for a non-square matrix), ``qr`` an m x n matrix with m >= n and full
  column rank, ``pinv`` and ``lstsq`` a matrix whose rank does not change: where the
  decomposition is not unique the derivative does not exist.
* Functions returning several arrays (``slogdet eigh svd qr lstsq``) receive ``dy`` as a tuple of
  cotangents, None for an output that carries no gradient; their tangents are tuples alike.
* Norms: the 2-norm of a zero vector has gradient 0; inf-norm ties split the gradient equally.
  Of a complex vector or matrix, a norm is differentiated as the same norm of ``|x|`` (all but
  the matrix norms of singular values, ord 2, -2 and 'nuc', which refuse complex input).
* Complex matrices: ``inv solve det matrix_power`` are holomorphic, their rules hold as written;
  ``slogdet cholesky eigh eigvalsh svd svdvals qr pinv lstsq`` refuse them (``real_only``).
"""

import numpy as np

from .registry import defrule, linear, nondiff

la = np.linalg

defrule(la.inv, "a", vjp="-mT(y) @ dy @ mT(y)", jvp="-y @ da @ y")
defrule(
    la.solve,
    "a, b",
    vjp=("solve_vjp_a(dy, a, b, y)", "solve_vjp_b(dy, a, b)"),
    # a 1-D b is one vector for every matrix of a stack a (and so is y): da @ y per matrix
    jvp=(
        "-np.linalg.solve(a, np.matmul(da, y)) if np.ndim(b) > 1 else "
        "-np.linalg.solve(a, np.matmul(da, np.expand_dims(y, -1)))[..., 0]",
        "np.linalg.solve(a, db)",
    ),
)
defrule(
    la.det,
    "a",
    vjp="det_vjp(dy, y, a)",
    jvp="y * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)",
)
defrule(
    la.slogdet,
    "a",
    vjp="slogdet_vjp(dy, real_only(a, 'np.linalg.slogdet'))",
    # the sign is piecewise constant: its tangent is zeros (None would reach arithmetic on it)
    jvp="(np.zeros(np.shape(y[0])), np.trace(np.linalg.solve(real_only(a, 'np.linalg.slogdet'), "
    "da), axis1=-2, axis2=-1))",
)
defrule(
    la.cholesky,
    "a, *, upper=False",
    vjp="cholesky_vjp(dy, real_only(y, 'np.linalg.cholesky'), upper=upper)",
    jvp="cholesky_jvp(real_only(y, 'np.linalg.cholesky'), da, upper=upper)",
)
defrule(la.eigh, "a, UPLO='L'", vjp="eigh_vjp(dy, real_only(y, 'np.linalg.eigh'))",
        jvp="eigh_jvp(real_only(y, 'np.linalg.eigh'), da)")
defrule(la.eigvalsh, "a, UPLO='L'",
        vjp="eigvalsh_vjp(dy, real_only(a, 'np.linalg.eigvalsh'), UPLO=UPLO)",
        jvp="eigvalsh_jvp(real_only(a, 'np.linalg.eigvalsh'), da, UPLO=UPLO)")
# The holomorphic transpose; a real matrix gets the real part (see runtime/numerics.py).
defrule(la.eigvals, "a", vjp="eigvals_vjp(dy, a, y)", jvp="eigvals_jvp(a, y, da)")
# complex x: refused (cond_vjp takes no conjugates; its gradient of a complex matrix was the
# conjugate of the right one)
defrule(la.cond, "x, p=None", vjp="cond_vjp(dy, real_only(x, 'np.linalg.cond'), p=p)",
        jvp="cond_jvp(real_only(x, 'np.linalg.cond'), dx, p=p)")
defrule(
    la.svd,
    "a, full_matrices=True, compute_uv=True, hermitian=False",
    vjp="svd_vjp(dy, y, real_only(a, 'np.linalg.svd'), full_matrices=full_matrices, "
    "compute_uv=compute_uv)",
    jvp="svd_jvp(y, real_only(a, 'np.linalg.svd'), da, full_matrices=full_matrices, "
    "compute_uv=compute_uv)",
)
defrule(
    la.svdvals,
    "x",
    vjp="svd_vjp(dy, y, real_only(x, 'np.linalg.svdvals'), full_matrices=False, compute_uv=False)",
    jvp="svd_jvp(y, real_only(x, 'np.linalg.svdvals'), dx, full_matrices=False, compute_uv=False)",
)
defrule(la.qr, "a, mode='reduced'", vjp="qr_vjp(dy, y, real_only(a, 'np.linalg.qr'), mode=mode)",
        jvp="qr_jvp(y, real_only(a, 'np.linalg.qr'), da, mode=mode)")
defrule(
    la.pinv, "a, rcond=None, hermitian=False",
    vjp="pinv_vjp(dy, y, real_only(a, 'np.linalg.pinv'))",
    jvp="pinv_jvp(y, real_only(a, 'np.linalg.pinv'), da)"
)
defrule(
    la.matrix_power,
    "a, n",
    vjp={"a": "matrix_power_vjp(dy, a, n)"},
    jvp={"a": "matrix_power_jvp(a, da, n)"},
)
defrule(
    la.lstsq,
    "a, b, rcond=None",
    vjp=("lstsq_vjp(dy, real_only(a, 'np.linalg.lstsq'), real_only(b, 'np.linalg.lstsq'), y)",
         "lstsq_vjp(dy, real_only(a, 'np.linalg.lstsq'), real_only(b, 'np.linalg.lstsq'), y, "
         "wrt=1)"),
    # one template for both tangents: the tangent is a tuple, which `+` would concatenate
    jvp={"*": "lstsq_jvp(real_only(a, 'np.linalg.lstsq'), real_only(b, 'np.linalg.lstsq'), y, "
              "da, db)"},
)
# Of a complex x, a norm is the same norm of |x| (norm_input refuses the ones of singular values):
# its gradient is the real one at |x| times abs's, which second order differentiates correctly.
_ABS_GRAD = "np.conj(x) / np.where(x == 0, 1.0, np.abs(x))"
_D_ABS = "np.real(np.conj(x) * dx) / np.where(x == 0, 1.0, np.abs(x))"


def _norm(fn, signature, helper, args, axis, matrix):
    """The rule of a norm whose adjoint is ``helper(dy, x, y, <args>)``, for real and complex x."""
    at_abs = f"np.abs(norm_input(x, ord, {axis}, {matrix}))"
    defrule(
        fn,
        signature,
        vjp=f"{helper}(dy, x, y, {args}) if not np.iscomplexobj(x) else "
        f"{helper}(np.real(dy), {at_abs}, y, {args}) * {_ABS_GRAD}",
        jvp=f"reduce_jvp({helper}(np.ones_like(y), x, y, {args}), dx, axis={axis}, "
        f"keepdims=keepdims) if not np.iscomplexobj(x) else reduce_jvp({helper}(np.ones_like(y), "
        f"{at_abs}, y, {args}), {_D_ABS}, axis={axis}, keepdims=keepdims)",
    )


_norm(la.norm, "x, ord=None, axis=None, keepdims=False", "norm_grad",
      "ord=ord, axis=axis, keepdims=keepdims", "axis", None)
_norm(la.vector_norm, "x, *, axis=None, keepdims=False, ord=2", "vector_norm_grad",
      "axis=axis, keepdims=keepdims, ord=ord", "axis", False)
_norm(la.matrix_norm, "x, *, keepdims=False, ord='fro'", "matrix_norm_grad",
      "keepdims=keepdims, ord=ord", "(-2, -1)", True)
linear(
    la.trace,
    "x, *, offset=0, dtype=None",
    vjp="trace_grad(dy, x, offset=offset, axis1=-2, axis2=-1)",
)
linear(la.diagonal, "x, *, offset=0", vjp="diagonal_grad(dy, x, offset=offset, axis1=-2, axis2=-1)")
linear(la.matrix_transpose, "x", vjp="mT(dy)")

nondiff(la.matrix_rank)
