def indexed_reads_in_a_loop_pullback(x):
    loop_saved = []
    s = 0.0
    for i in range(3):
        x_item = x[i]
        sin_x_item = np.sin(x_item)
        v2_minus_i = 2 - i
        x_item_2 = x[v2_minus_i]
        times = sin_x_item * x_item_2
        s_old = s
        s = s + times
        loop_saved.append((x_item, sin_x_item, v2_minus_i, x_item_2, times, s_old, np.cos(x_item)))

    def back(seed, s=s, loop_saved=loop_saved):
        # each call pops copies of the stacks: the primal's stay whole
        loop_saved = list(loop_saved)
        # grad of: return s
        ds = check_seed(seed, s)
        # grad of: for i in range(3):
        dx = zeros_like(x)
        for i in reversed(range(3)):
            x_item, sin_x_item, v2_minus_i, x_item_2, times, s_old, cos_x_item = loop_saved.pop()
            # grad of: s = s + np.sin(x[i]) * x[2 - i]
            s = s_old
            dtimes = unbroadcast(ds, times)
            ds = unbroadcast(ds, s)
            dsin_x_item = unbroadcast(dtimes * x_item_2, x_item)
            dx_item_2 = unbroadcast(dtimes * sin_x_item, x_item_2)
            dx[v2_minus_i] += dx_item_2
            dx_item = dsin_x_item * cos_x_item
            dx[i] += dx_item
        return as_like(dx, x)
    return (s, back)
