def dwaiting(x, c):
    y = x * 1.0
    tup = (y,)
    tup_2 = (c,)
    checkpointed_loop_2 = checkpointed_loop(waiting_probe, waiting_step, None, tup, tup_2, 3)
    y_2 = checkpointed_loop_2[0]
    y_times_c = y_2 * c
    # grad of: return y * c
    dy_times_c = unit_seed(y_times_c)
    dy_2 = unbroadcast(dy_times_c * c, y_2)
    del y_2
    # grad of: y, kept = checkpointed_loop(waiting_probe, waiting_step, None, (y,), (c,), 3)
    dcheckpointed_loop_2 = getitem_grad(dy_2, checkpointed_loop_2, 0)
    del dy_2
    dstate = as_like(dcheckpointed_loop_2[:-1], checkpointed_loop_2[:-1])
    dkept = dcheckpointed_loop_2[-1]
    del dcheckpointed_loop_2
    dinvariants = as_like(None, tup_2)
    intervals = kept_intervals(checkpointed_loop_2[-1])
    kept_2 = list(checkpointed_loop_2[-1])
    del checkpointed_loop_2
    for j in range(len(intervals) - 1, -1, -1):
        lo, hi, width = intervals[j]
        held = [kept_2.pop()]
        snapshot = held[0]
        current = copy_state(held[-1], tup_2)
        for action, a, b in revolve(-(-(hi - lo) // width), 3 - j):
            if action == ADVANCE:
                current = waiting_step(lo + a * width, min(lo + b * width, hi), None, current, tup_2)
            elif action == SNAPSHOT:
                held.append(copy_state(current, tup_2))
            elif action == RESTORE:
                current = copy_state(held[-1], tup_2)
            elif action == FORGET:
                held.pop()
            else:
                dstate, dstep = reverse_segment(waiting_step, lo + a * width, min(lo + a * width + width, hi), None, current, tup_2, dstate)
                dinvariants = add(dinvariants, dstep)
        if dkept is not None:
            dstate = add(dstate, as_like(dkept[j], snapshot))
    del tup_2, dkept, dinvariants, intervals, kept_2
    dtup = as_like(dstate, tup)
    del tup, dstate
    dy = elem(dtup, 0, y)
    del y, dtup
    # grad of: y = x * 1.0
    dx = dy
    return copy_grad(cast_like(dx, x))
