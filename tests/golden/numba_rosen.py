# backend='numba': drosen, compiled by numba.njit(cache=True, boundscheck=True)
import numpy as np
from srcgrad.runtime.numba_helpers import srcgrad_floats, srcgrad_ints, srcgrad_zeros


def drosen(x, k):
    loop_saved_top = 0
    s = 0.0
    len_x = len(x)
    len_x_minus_1 = len_x - 1
    loop_saved_cap = len(range(len_x_minus_1))
    loop_saved_0 = srcgrad_ints(loop_saved_cap)
    loop_saved_1 = srcgrad_floats(loop_saved_cap)
    loop_saved_2 = srcgrad_floats(loop_saved_cap)
    loop_saved_3 = srcgrad_floats(loop_saved_cap)
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
        s = plus + v1_minus_x_item_3_pow_2
        loop_saved_0[loop_saved_top] = i_plus_1
        loop_saved_1[loop_saved_top] = x_item_2
        loop_saved_2[loop_saved_top] = minus
        loop_saved_3[loop_saved_top] = v1_minus_x_item_3
        loop_saved_top = loop_saved_top + 1
    # grad of: for i in range(len(x) - 1):
    ds = 1.0
    dx = srcgrad_zeros(x.shape)
    for i in range((len_x_minus_1) - 1, -1, -1):
        loop_saved_top = loop_saved_top - 1
        i_plus_1 = loop_saved_0[loop_saved_top]
        x_item_2 = loop_saved_1[loop_saved_top]
        minus = loop_saved_2[loop_saved_top]
        v1_minus_x_item_3 = loop_saved_3[loop_saved_top]
        # grad of: s = s + k * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
        dplus = ds
        dv1_minus_x_item_3_pow_2 = ds
        dv1_minus_x_item_3 = dv1_minus_x_item_3_pow_2 * 2 * v1_minus_x_item_3
        dx_item_2 = -dv1_minus_x_item_3
        ds = dplus
        dk_times_minus_pow_2 = dplus
        dminus_pow_2 = dk_times_minus_pow_2 * k
        dminus = dminus_pow_2 * 2 * minus
        dx_item = dminus
        dx_item_2_pow_2 = -dminus
        dx_item_2 += dx_item_2_pow_2 * 2 * x_item_2
        dx[i] += dx_item_2
        dx[i_plus_1] += dx_item
    return dx
