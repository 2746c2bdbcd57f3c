def back_named_like_the_pullback_pullback(x, y):
    sin_x = np.sin(x)
    x_2 = sin_x * y
    del sin_x
    back = x_2 * y
    cos_y = np.cos(y)
    back_2 = back + cos_y
    del back, cos_y
    back_times_x = back_2 * x_2
    sum_back_times_x = np.sum(back_times_x)
    del back_times_x
    cos_x = np.cos(x)

    def back_3(seed):
        # grad of: return np.sum(back * x)
        dsum_back_times_x = check_seed(seed, sum_back_times_x)
        dback_times_x = unreduce(dsum_back_times_x, shape_like(x, y))
        dback_2 = dback_times_x * x_2
        dx_2 = dback_times_x * back_2
        # grad of: back = x * y
        dx_2 += dback_2 * y
        del dback_2
        # grad of: x = np.sin(x) * y
        dsin_x = unbroadcast(dx_2 * y, x)
        del dx_2
        dx = dsin_x * cos_x
        return cast_like(dx, x)
    return (sum_back_times_x, back_3)
