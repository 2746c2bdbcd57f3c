# backend='numba': drosen, compiled by numba.njit(cache=True, boundscheck=True)
# dx: allocated by the caller as np.empty(x.shape) and returned by it
import numpy as np


def drosen(x, k, dx):
    len_x = len(x)
    len_x_minus_1 = len_x - 1
    # grad of: for i in range(len(x) - 1):
    ds = 1.0
    dx[...] = 0.0
    for i in range((len_x_minus_1) - 1, -1, -1):
        i_plus_1 = i + 1
        x_item_2 = x[i]
        minus = x[i + 1] - x[i] ** 2
        v1_minus_x_item_3 = 1 - x[i]
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
    return
