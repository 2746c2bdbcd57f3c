"""The helpers generated code calls, by family, re-exported here: ``runtime.unbroadcast``.

Generated code is plain Python + NumPy plus these functions, bound by name (``unbroadcast``,
``prod_grad``, ...). Each has a gradient rule of its own (``rules/runtime_rules.py``,
``rules/helper_rules.py``), because generated code is itself valid input to every transform.
Helpers keep types faithful: a gradient for a Python float is a float, for an array an array of
the same shape.

The families mirror ``rules/``:

- ``shapes``: broadcasting and reductions' shapes (``unbroadcast``, ``unreduce``, ``mean_grad``);
- ``containers``: cotangents of tuples, lists and dicts; ``list.append``/``pop``; zeros and copies;
- ``indexing``: ``x[i]`` and its adjoint, writes into arrays and what they overwrite;
- ``boundary``: seeds, tangents, optional parameters and Jacobians of the generated function;
- ``reductions``, ``arrays``, ``products``, ``linalg``: the NumPy rule library's adjoints;
- ``higher_order``: what the rules of these helpers call (derivatives of generated code);
- ``writes``: NumPy's in-place functions as element writes (``np.put``'s positions, ``ufunc.at``);
- ``scipy_helpers``: the SciPy rule library's adjoints, imported only with SciPy (not from here).
"""

from __future__ import annotations

from .arrays import (  # noqa: F401
    PAD_MODES,
    astype,
    between,
    cast_grad,
    cast_tangent,
    column_stack_grad,
    concatenate_grad,
    diag_grad,
    diagonal_grad,
    diff_grad,
    dstack_grad,
    hsplit_grad,
    hstack_grad,
    linspace_grad,
    pad_grad,
    permutation_grad,
    permute_like,
    select_grad,
    sinc_derivative,
    split_grad,
    stack_cotangents,
    stack_grad,
    trace_grad,
    vstack_grad,
)
from .boundary import (  # noqa: F401
    UNSET,
    bind_optional,
    check_seed,
    check_tangent,
    single_output,
    stack_columns,
    stack_rows,
    unit_basis,
    unit_seed,
    unstack_columns,
    unstack_rows,
)
from .containers import (  # noqa: F401
    Cotangents,
    DictCotangents,
    add,
    append_grad_items,
    append_grad_value,
    append_none,
    append_tangent,
    as_like,
    copy_array,
    copy_grad,
    elem,
    extreme_index,
    list_append,
    list_pop,
    max_of,
    min_of,
    pick_extreme,
    sum_grad,
    sum_tangent,
    zeros_like,
)
from .indexing import (  # noqa: F401
    add_at,
    check_not_array,
    check_not_view,
    copy_item,
    fresh_copy,
    getitem_grad,
    restore_item,
    setitem,
    take_item,
    zero_item,
)
from .linalg import (  # noqa: F401
    cholesky_jvp,
    cholesky_vjp,
    det_vjp,
    eigh_jvp,
    eigh_vjp,
    eigvalsh_jvp,
    eigvalsh_vjp,
    lstsq_jvp,
    lstsq_vjp,
    matrix_norm_grad,
    matrix_power_jvp,
    matrix_power_vjp,
    norm_grad,
    pinv_jvp,
    pinv_vjp,
    qr_jvp,
    qr_vjp,
    slogdet_vjp,
    solve_vjp_a,
    solve_vjp_b,
    svd_jvp,
    svd_vjp,
    vector_norm_grad,
)
from .products import (  # noqa: F401
    convolve_vjp,
    correlate_vjp,
    cross_vjp,
    dot_vjp_left,
    dot_vjp_right,
    einsum_jvp,
    einsum_vjp,
    inner_vjp_left,
    inner_vjp_right,
    kron_vjp,
    matmul_vjp_left,
    matmul_vjp_right,
    tensordot_vjp_left,
    tensordot_vjp_right,
)
from .reductions import (  # noqa: F401
    average_grad,
    average_weights_grad,
    average_weights_jvp,
    chooser_grad,
    cumprod_grad,
    cumprod_jvp,
    cumsum_grad,
    prod_grad,
    ptp_grad,
    quantile_grad,
    quantile_jvp,
    reduce_jvp,
    var_grad,
)
from .shapes import (  # noqa: F401
    broadcast_like,
    inverse_permutation,
    mean_grad,
    mT,
    reshape_like,
    shape_like,
    unbroadcast,
    unreduce,
)
