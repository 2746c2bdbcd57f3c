def ddecay(k, x0):
    x_saved = []
    x = x0
    c_times_k = 0.01 * k
    for i in range(100):
        c_times_k_times_x = c_times_k * x
        x_saved.append(x)
        x = x - c_times_k_times_x
    x_times_x = x * x
    # grad of: return x * x
    dx_times_x = unit_seed(x_times_x)
    dx = dx_times_x * x + dx_times_x * x
    # grad of: for i in range(100):
    dc_times_k = zeros_like(c_times_k)
    for i in reversed(range(100)):
        # grad of: x = x - 0.01 * k * x
        x = x_saved.pop()
        dc_times_k_times_x = -dx
        dx = unbroadcast(dx, x)
        dc_times_k += unbroadcast(dc_times_k_times_x * x, k)
        dx = dx + unbroadcast(dc_times_k_times_x * c_times_k, x)
    del x, c_times_k, dx
    # grad of: x = x - 0.01 * k * x
    dk = dc_times_k * 0.01
    return cast_like(dk, k)
