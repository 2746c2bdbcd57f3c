def split_by_linearize_linearize(x, y):
    sin_x = np.sin(x)
    x_2 = sin_x * y
    del sin_x
    y_2 = y * 2.0
    jvp_fn = x_2 * y_2
    cos_y = np.cos(y_2)
    jvp_fn_plus_cos_y = jvp_fn + cos_y
    del jvp_fn, cos_y
    abs_y = abs(y_2)
    plus = jvp_fn_plus_cos_y + abs_y
    del abs_y
    len_x = len(x_2)
    jvp_fn_2 = plus + len_x
    x_3 = jvp_fn_2 * x_2
    sum_x = np.sum(x_3)
    del x_3

    def jvp_fn_3(tangent):
        dx = check_tangent(tangent, x, 'x')
        # tangent of: x = np.sin(x) * y
        dsin_x = dx * np.cos(x)
        del dx
        dx_2 = dsin_x * y
        del dsin_x
        # tangent of: jvp_fn = x * y
        djvp_fn = dx_2 * y_2
        # tangent of: jvp_fn = jvp_fn + np.cos(y) + abs(y) + len(x)
        djvp_fn_plus_cos_y = broadcast_like(djvp_fn, jvp_fn_plus_cos_y)
        del djvp_fn
        dplus = broadcast_like(djvp_fn_plus_cos_y, plus)
        del djvp_fn_plus_cos_y
        djvp_fn_2 = broadcast_like(dplus, jvp_fn_2)
        del dplus
        # tangent of: x = jvp_fn * x
        dx_3 = djvp_fn_2 * x_2 + jvp_fn_2 * dx_2
        del dx_2, djvp_fn_2
        # tangent of: return np.sum(x)
        dsum_x = np.sum(dx_3)
        return copy_grad(dsum_x)
    return (sum_x, jvp_fn_3)
