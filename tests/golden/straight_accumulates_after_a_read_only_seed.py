def daccumulates_after_a_read_only_seed(x):
    a = np.sin(x)
    b = np.cos(x)
    # grad of: return np.sum(x) + np.sum(a * b)
    check_real(x)
    dsum_x = 1.0
    dsum_a_times_b = 1.0
    da_times_b = unreduce(dsum_a_times_b, x)
    da = da_times_b * b
    del b
    db = da_times_b * a
    del a
    dx = unreduce(dsum_x, x)
    # grad of: b = np.cos(x)
    dx = dx + -db * np.sin(x)
    del db
    # grad of: a = np.sin(x)
    dx += da * np.cos(x)
    return cast_like(dx, x)
