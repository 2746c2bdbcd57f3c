def euler_pullback(theta, n):
    loop_saved = []
    x = theta[0]
    v = theta[1]
    for _ in range(n):
        sin_x = np.sin(x)
        a = -sin_x
        c_times_v = 0.01 * v
        x_old = x
        x = x + c_times_v
        c_times_a = 0.01 * a
        v_old = v
        v = v + c_times_a
        loop_saved.append((c_times_a, x_old, v_old, np.cos(x_old)))
    x_times_x = x * x
    x_times_x_plus_v = x_times_x + v
    del x_times_x
    x_minus_v = x - v
    lst = [x_times_x_plus_v, x_minus_v]
    stack_lst = np.stack(lst)

    def back(seed, v=v, x=x, loop_saved=loop_saved):
        # each call pops copies of the stacks: the primal's stay whole
        loop_saved = list(loop_saved)
        # grad of: return np.stack([x * x + v, x - v])
        dstack_lst = check_seed(seed, stack_lst)
        dlst = stack_grad(dstack_lst, lst)
        del dstack_lst
        dx_times_x_plus_v = elem(dlst, 0, x_times_x_plus_v)
        dx_minus_v = elem(dlst, 1, x_minus_v)
        del dlst
        dx = unbroadcast(dx_minus_v, x)
        dv = unbroadcast(-dx_minus_v, v)
        del dx_minus_v
        dx_times_x = unbroadcast(dx_times_x_plus_v, x)
        dv += unbroadcast(dx_times_x_plus_v, v)
        del dx_times_x_plus_v
        dx = dx + (dx_times_x * x + dx_times_x * x)
        del dx_times_x
        # grad of: for _ in range(n):
        for _ in reversed(range(n)):
            c_times_a, x_old, v_old, cos_x = loop_saved.pop()
            # grad of: v = v + 0.01 * a
            v = v_old
            dc_times_a = unbroadcast(dv, c_times_a)
            dv = unbroadcast(dv, v)
            da = dc_times_a * 0.01
            # grad of: x = x + 0.01 * v
            x = x_old
            dc_times_v = unbroadcast(dx, v)
            dx = unbroadcast(dx, x)
            dv = dv + dc_times_v * 0.01
            # grad of: a = -np.sin(x)
            dsin_x = -da
            dx = dx + dsin_x * cos_x
        del x, v
        # grad of: v = theta[1]
        dtheta = getitem_grad(dv, theta, 1)
        del dv
        # grad of: x = theta[0]
        dtheta = add_at(dtheta, 0, dx)
        return copy_grad(as_like(dtheta, theta))
    return (stack_lst, back)
