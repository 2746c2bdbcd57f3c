def dgolden_helper(x, w):
    x_times_w = x * w
    x_2 = x_times_w
    a = 2.0
    b = 0.25
    a_times_x_2 = a * x_2
    b_times_x_2 = b * x_2
    b_times_x_2_times_x_2 = b_times_x_2 * x_2
    plus = a_times_x_2 + b_times_x_2_times_x_2
    scaled_x_times_w = plus
    sum_scaled_x_times_w = np.sum(scaled_x_times_w)
    # grad of: return np.sum(scaled(x * w, b=0.25))
    dsum_scaled_x_times_w = unit_seed(sum_scaled_x_times_w)
    dscaled_x_times_w = unreduce(dsum_scaled_x_times_w, scaled_x_times_w)
    db_times_x_2 = dscaled_x_times_w * x_2
    dx_2 = dscaled_x_times_w * b_times_x_2
    dx_2 += db_times_x_2 * b
    dx_2 += dscaled_x_times_w * a
    dx = unbroadcast(dx_2 * w, x)
    return dx
