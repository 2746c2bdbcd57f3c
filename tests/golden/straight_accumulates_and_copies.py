def daccumulates_and_copies(x, w):
    a = x * w
    b = np.sin(x)
    z = a
    tanh_x = np.tanh(x)
    # grad of: return np.sum(z * b + x * 3.0) + np.sum(np.tanh(x))
    check_real(w, x)
    dsum_2 = 1.0
    dsum_tanh_x = 1.0
    dtanh_x = unreduce(dsum_tanh_x, tanh_x)
    dx = dtanh_x * (1 - tanh_x * tanh_x)
    del tanh_x
    dz_times_b_plus_x_times_c = unreduce(dsum_2, shape_like(w, x))
    dx_times_c = unbroadcast(dz_times_b_plus_x_times_c, x)
    dx += dx_times_c * 3.0
    del dx_times_c
    dz = dz_times_b_plus_x_times_c * b
    del b
    db = unbroadcast(dz_times_b_plus_x_times_c * z, x)
    del z
    # grad of: b = np.sin(x)
    dx += db * np.cos(x)
    del db
    # grad of: a = x * w
    dx += unbroadcast(dz * w, x)
    return cast_like(dx, x)
