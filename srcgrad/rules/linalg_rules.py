"""Rules for ``numpy.linalg``.

Conventions:

* ``cholesky``, ``eigh`` and ``eigvalsh`` read one triangle of their input; their gradients are
  the symmetric ones (as in JAX and autograd), which is the gradient of a function of a symmetric
  matrix. Differentiate a function that builds the symmetric matrix (``(a + a.T) / 2``,
  ``a @ a.T``) to get the gradient with respect to its parts.
* ``eigh`` needs distinct eigenvalues, ``svd`` distinct nonzero singular values (and
  ``full_matrices=False`` for a non-square matrix), ``qr`` an m x n matrix with m >= n and full
  column rank, ``pinv`` and ``lstsq`` a matrix whose rank does not change: where the
  decomposition is not unique the derivative does not exist.
* Functions returning several arrays (``slogdet eigh svd qr lstsq``) receive ``dy`` as a tuple of
  cotangents, None for an output that carries no gradient; their tangents are tuples alike.
* Norms: the 2-norm of a zero vector has gradient 0; inf-norm ties split the gradient equally.
  Of a complex matrix or vector, the norm's gradient is that of its conjugate (it depends on
  ``|x|`` only). ``inv solve det matrix_power`` are holomorphic, their rules hold for complex
  matrices as written; ``slogdet cholesky eigh eigvalsh svd svdvals qr pinv lstsq`` refuse complex
  ones (``real_only``).
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
    jvp=("lstsq_jvp(real_only(a, 'np.linalg.lstsq'), real_only(b, 'np.linalg.lstsq'), y, da, "
         "None)",
         "lstsq_jvp(real_only(a, 'np.linalg.lstsq'), real_only(b, 'np.linalg.lstsq'), y, None, "
         "db)"),
)
defrule(
    la.norm,
    "x, ord=None, axis=None, keepdims=False",
    vjp="norm_grad(dy, x, y, ord=ord, axis=axis, keepdims=keepdims) if not np.iscomplexobj(x) "
    "else norm_grad(np.real(dy), np.conj(x), y, ord=ord, axis=axis, keepdims=keepdims)",
    jvp="reduce_jvp(norm_grad(np.ones_like(y), x, y, ord=ord, axis=axis, keepdims=keepdims), dx, "
    "axis=axis, keepdims=keepdims) if not np.iscomplexobj(x) else np.real(reduce_jvp(norm_grad("
    "np.ones_like(y), np.conj(x), y, ord=ord, axis=axis, keepdims=keepdims), dx, axis=axis, "
    "keepdims=keepdims))",
)
defrule(
    la.vector_norm,
    "x, *, axis=None, keepdims=False, ord=2",
    vjp="vector_norm_grad(dy, x, y, axis=axis, keepdims=keepdims, ord=ord) if not "
    "np.iscomplexobj(x) else vector_norm_grad(np.real(dy), np.conj(x), y, axis=axis, "
    "keepdims=keepdims, ord=ord)",
    jvp="reduce_jvp(vector_norm_grad(np.ones_like(y), x, y, axis=axis, keepdims=keepdims, "
    "ord=ord), dx, axis=axis, keepdims=keepdims) if not np.iscomplexobj(x) else np.real("
    "reduce_jvp(vector_norm_grad(np.ones_like(y), np.conj(x), y, axis=axis, keepdims=keepdims, "
    "ord=ord), dx, axis=axis, keepdims=keepdims))",
)
defrule(
    la.matrix_norm,
    "x, *, keepdims=False, ord='fro'",
    vjp="matrix_norm_grad(dy, x, y, keepdims=keepdims, ord=ord) if not np.iscomplexobj(x) else "
    "matrix_norm_grad(np.real(dy), np.conj(x), y, keepdims=keepdims, ord=ord)",
    jvp="reduce_jvp(matrix_norm_grad(np.ones_like(y), x, y, keepdims=keepdims, ord=ord), dx, "
    "axis=(-2, -1), keepdims=keepdims) if not np.iscomplexobj(x) else np.real(reduce_jvp("
    "matrix_norm_grad(np.ones_like(y), np.conj(x), y, keepdims=keepdims, ord=ord), dx, "
    "axis=(-2, -1), keepdims=keepdims))",
)
linear(
    la.trace,
    "x, *, offset=0, dtype=None",
    vjp="trace_grad(dy, x, offset=offset, axis1=-2, axis2=-1)",
)
linear(la.diagonal, "x, *, offset=0", vjp="diagonal_grad(dy, x, offset=offset, axis1=-2, axis2=-1)")
linear(la.matrix_transpose, "x", vjp="mT(dy)")

nondiff(la.matrix_rank)
