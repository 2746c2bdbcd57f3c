def pendulum_pullback(theta, n):
    x = theta[0]
    v = theta[1]
    range_n = range(n)
    tup = (v, x)
    tup_2 = (theta,)
    checkpointed_loop_2 = checkpointed_loop(None, pendulum_step, range_n, tup, tup_2, 3)
    v_2 = checkpointed_loop_2[0]
    x_2 = checkpointed_loop_2[1]
    x_times_x = x_2 * x_2
    x_times_x_plus_v = x_times_x + v_2
    del x_times_x

    def back(seed):
        # grad of: return x * x + v
        dx_times_x_plus_v = check_seed(seed, x_times_x_plus_v)
        dx_times_x = unbroadcast(dx_times_x_plus_v, x_2)
        dv_2 = unbroadcast(dx_times_x_plus_v, v_2)
        del dx_times_x_plus_v
        dx_2 = dx_times_x * x_2 + dx_times_x * x_2
        del dx_times_x
        # grad of: v, x, kept = checkpointed_loop(None, pendulum_step, range(n), (v, x), (theta,), 3)
        dcheckpointed_loop_2 = getitem_grad(dx_2, checkpointed_loop_2, 1)
        del dx_2
        dcheckpointed_loop_2 = add_at(dcheckpointed_loop_2, 0, dv_2)
        del dv_2
        dstate = as_like(dcheckpointed_loop_2[:-1], checkpointed_loop_2[:-1])
        dkept = dcheckpointed_loop_2[-1]
        del dcheckpointed_loop_2
        dinvariants = as_like(None, tup_2)
        intervals = kept_intervals(checkpointed_loop_2[-1])
        kept_2 = list(checkpointed_loop_2[-1])
        for j in range(len(intervals) - 1, -1, -1):
            lo, hi, width = intervals[j]
            held = [kept_2.pop()]
            snapshot = held[0]
            current = copy_state(held[-1], tup_2)
            for action, a, b in revolve(-(-(hi - lo) // width), 3 - j):
                if action == ADVANCE:
                    current = pendulum_step(lo + a * width, min(lo + b * width, hi), range_n, current, tup_2)
                elif action == SNAPSHOT:
                    held.append(copy_state(current, tup_2))
                elif action == RESTORE:
                    current = copy_state(held[-1], tup_2)
                elif action == FORGET:
                    held.pop()
                else:
                    dstate, dstep = reverse_segment(pendulum_step, lo + a * width, min(lo + a * width + width, hi), range_n, current, tup_2, dstate)
                    dinvariants = add(dinvariants, dstep)
            if dkept is not None:
                dstate = add(dstate, as_like(dkept[j], snapshot))
        del dkept, intervals, kept_2
        dtup = as_like(dstate, tup)
        del dstate
        dtup_2 = as_like(dinvariants, tup_2)
        del dinvariants
        dtheta = elem(dtup_2, 0, theta)
        del dtup_2
        dv = elem(dtup, 0, v)
        dx = elem(dtup, 1, x)
        del dtup
        # grad of: v = theta[1]
        dtheta = add(dtheta, getitem_grad(dv, theta, 1))
        del dv
        # grad of: x = theta[0]
        dtheta = add(dtheta, getitem_grad(dx, theta, 0))
        return copy_grad(as_like(dtheta, theta))
    return (x_times_x_plus_v, back)
