def dwaiting(x, c):
    y = x * 1.0
    tup = (y,)
    tup_2 = (c,)
    checkpointed_while_2 = checkpointed_while(waiting_probe, waiting_step, None, tup, tup_2, 3)
    y_2 = checkpointed_while_2[0]
    y_times_c = y_2 * c
    # grad of: return y * c
    dy_times_c = unit_seed(y_times_c)
    dy_2 = unbroadcast(dy_times_c * c, y_2)
    del y_2
    # grad of: y, trips = checkpointed_while(waiting_probe, waiting_step, None, (y,), (c,), 3)
    dcheckpointed_while_2 = getitem_grad(dy_2, checkpointed_while_2, 0)
    del dy_2
    n = checkpointed_while_2[-1]
    dstate = as_like(dcheckpointed_while_2, checkpointed_while_2)[:-1]
    del checkpointed_while_2, dcheckpointed_while_2
    dinvariants = as_like(None, tup_2)
    held = [copy_state(tup)]
    current = copy_state(tup)
    width = segment_width(n, tup)
    del tup
    for action, i, j in revolve(-(-n // width), 3):
        if action == ADVANCE:
            current = waiting_step(i * width, min(j * width, n), None, current, tup_2)
        elif action == SNAPSHOT:
            held.append(copy_state(current))
        elif action == RESTORE:
            current = copy_state(held[-1])
        elif action == FORGET:
            held.pop()
        else:
            dstate, dstep = reverse_segment(waiting_step, i * width, min(i * width + width, n), None, current, tup_2, dstate)
            dinvariants = add(dinvariants, dstep)
    del tup_2, n, dinvariants, held, current, width
    dy = elem(dstate, 0, y)
    del y, dstate
    # grad of: y = x * 1.0
    dx = dy
    return copy_grad(cast_like(dx, x))
