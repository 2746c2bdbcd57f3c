def dgolden_helper(x, w):
    if scaled is not inlined_scaled:
        return rederived(derivative)(x, w)
    x_times_w = x * w
    x_2 = x_times_w
    a = 2.0
    b = 0.25
    a_times_x_2 = a * x_2
    b_times_x_2 = b * x_2
    b_times_x_2_times_x_2 = b_times_x_2 * x_2
    plus = a_times_x_2 + b_times_x_2_times_x_2
    del a_times_x_2, b_times_x_2_times_x_2
    scaled_x_times_w = plus
    sum_scaled_x_times_w = np.sum(scaled_x_times_w)
    # grad of: return np.sum(scaled(x * w, b=0.25))
    check_real_output(sum_scaled_x_times_w)
    dscaled_x_times_w = unreduce(1.0, scaled_x_times_w)
    del scaled_x_times_w
    db_times_x_2 = dscaled_x_times_w * x_2
    del x_2
    dx_2 = dscaled_x_times_w * b_times_x_2
    del b_times_x_2
    dx_2 += db_times_x_2 * b
    del db_times_x_2
    dx_2 += dscaled_x_times_w * a
    dx = unbroadcast(dx_2 * w, x)
    return cast_like(dx, x)
