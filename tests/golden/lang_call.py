def dgolden_helper(x, w):
    if scaled is not inlined_scaled:
        return rederived(derivative)(x, w)
    x_times_w = x * w
    x_2 = x_times_w
    a = 2.0
    b = 0.25
    b_times_x_2 = b * x_2
    # grad of: return np.sum(scaled(x * w, b=0.25))
    check_real(w, x)
    dscaled_x_times_w = unreduce(1.0, shape_like(w, x))
    db_times_x_2 = dscaled_x_times_w * x_2
    del x_2
    dx_2 = dscaled_x_times_w * b_times_x_2
    del b_times_x_2
    dx_2 += db_times_x_2 * b
    del db_times_x_2
    dx_2 += dscaled_x_times_w * a
    dx = unbroadcast(dx_2 * w, x)
    return cast_like(dx, x)
