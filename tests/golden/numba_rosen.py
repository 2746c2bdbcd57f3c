# backend='numba': drosen, compiled by numba.njit(cache=True, boundscheck=True)
from srcgrad.runtime.numba_helpers import unit_seed
from srcgrad.runtime.numba_helpers import zeros_like
from srcgrad.runtime.numba_helpers import unbroadcast
from srcgrad.runtime.numba_helpers import as_like
from srcgrad.runtime.numba_helpers import srcgrad_new_saves, srcgrad_save, srcgrad_restore


def drosen(x, k):
    loop_saved_top = 0
    s = 0.0
    len_x = len(x)
    len_x_minus_1 = len_x - 1
    loop_saved_cap = len(range(len_x_minus_1))
    for i in range(len_x_minus_1):
        i_plus_1 = i + 1
        x_item = x[i_plus_1]
        x_item_2 = x[i]
        x_item_2_pow_2 = x_item_2 ** 2
        minus = x_item - x_item_2_pow_2
        minus_pow_2 = minus ** 2
        k_times_minus_pow_2 = k * minus_pow_2
        plus = s + k_times_minus_pow_2
        v1_minus_x_item_3 = 1 - x_item_2
        v1_minus_x_item_3_pow_2 = v1_minus_x_item_3 ** 2
        s_old = s
        s = plus + v1_minus_x_item_3_pow_2
        if loop_saved_top == 0:
            loop_saved = srcgrad_new_saves(loop_saved_cap, (i_plus_1, x_item, x_item_2, minus, k_times_minus_pow_2, v1_minus_x_item_3, s_old))
        loop_saved_top = srcgrad_save(loop_saved, loop_saved_top, (i_plus_1, x_item, x_item_2, minus, k_times_minus_pow_2, v1_minus_x_item_3, s_old))
    # grad of: return s
    ds = unit_seed(s)
    # grad of: for i in range(len(x) - 1):
    dx = zeros_like(x)
    for i in range((len_x_minus_1) - 1, -1, -1):
        loop_saved_top -= 1
        (i_plus_1, x_item, x_item_2, minus, k_times_minus_pow_2, v1_minus_x_item_3, s_old) = srcgrad_restore(loop_saved, loop_saved_top)
        # grad of: s = s + k * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        dplus = ds
        dv1_minus_x_item_3_pow_2 = unbroadcast(ds, x_item_2)
        s = s_old
        dv1_minus_x_item_3 = dv1_minus_x_item_3_pow_2 * 2 * v1_minus_x_item_3
        dx_item_2 = -dv1_minus_x_item_3
        ds = unbroadcast(dplus, s)
        dk_times_minus_pow_2 = unbroadcast(dplus, k_times_minus_pow_2)
        dminus_pow_2 = unbroadcast(dk_times_minus_pow_2 * k, minus)
        dminus = dminus_pow_2 * 2 * minus
        dx_item = unbroadcast(dminus, x_item)
        dx_item_2_pow_2 = unbroadcast(-dminus, x_item_2)
        dx_item_2 += dx_item_2_pow_2 * 2 * x_item_2
        dx[i] += dx_item_2
        dx[i_plus_1] += dx_item
    return as_like(dx, x)
