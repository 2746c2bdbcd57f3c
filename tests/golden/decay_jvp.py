def decay_jvp(k, x0, tangent):
    dk = check_tangent(tangent, k, 'k')
    x = x0
    # tangent of: x = x0
    dx = as_like(None, x0)
    c_times_k = 0.01 * k
    # tangent of: x = x - 0.01 * k * x
    dc_times_k = 0.01 * dk
    for i in range(100):
        c_times_k_times_x = c_times_k * x
        # tangent of: x = x - 0.01 * k * x
        dc_times_k_times_x = dc_times_k * x + c_times_k * dx
        dx = dx - dc_times_k_times_x
        x = x - c_times_k_times_x
    del c_times_k, dc_times_k
    x_times_x = x * x
    # tangent of: return x * x
    dx_times_x = dx * x + x * dx
    return (x_times_x, dx_times_x)
