# specialized to the kinds of its arguments: c: float, L: float, theta0: float, omega0: float
def dswing(c, L, theta0, omega0):
    loop_saved = []
    theta = theta0
    omega = omega0
    c_div_L = 9.81 / L
    neg_c_div_L = -c_div_L
    for _ in range(20):
        sin_theta = math.sin(theta)
        times = neg_c_div_L * sin_theta
        c_times_omega = c * omega
        alpha = times - c_times_omega
        c_times_omega_2 = 0.05 * omega
        theta_old = theta
        theta = theta + c_times_omega_2
        c_times_alpha = 0.05 * alpha
        omega_old = omega
        omega = omega + c_times_alpha
        loop_saved.append((sin_theta, theta_old, omega_old))
    # grad of: return theta * theta
    dtheta = theta + theta
    # grad of: for _ in range(20):
    dc = 0.0
    dneg_c_div_L = 0.0
    domega = 0.0
    for _ in reversed(range(20)):
        sin_theta, theta_old, omega_old = loop_saved.pop()
        # grad of: omega = omega + 0.05 * alpha
        omega = omega_old
        dc_times_alpha = domega
        dalpha = dc_times_alpha * 0.05
        # grad of: theta = theta + 0.05 * omega
        theta = theta_old
        dc_times_omega_2 = dtheta
        domega = domega + dc_times_omega_2 * 0.05
        # grad of: alpha = -(9.81 / L) * np.sin(theta) - c * omega
        dtimes = dalpha
        dc_times_omega = -dalpha
        dc += dc_times_omega * omega
        domega += dc_times_omega * c
        dneg_c_div_L += dtimes * sin_theta
        dsin_theta = dtimes * neg_c_div_L
        dtheta = dtheta + dsin_theta * math.cos(theta)
    # grad of: alpha = -(9.81 / L) * np.sin(theta) - c * omega
    dc_div_L = -dneg_c_div_L
    dL = -dc_div_L * c_div_L / L
    return (cast_like(dc, c), cast_like(dL, L))
