def dgolden_indexed_reads(x):
    loop_saved = []
    s = 0.0
    for i in range(3):
        x_item = x[i]
        x_item_times_x_item_2 = x_item * x_item
        s_old = s
        s = s + x_item_times_x_item_2
        loop_saved.append((x_item, s_old))
    # grad of: return s
    ds = unit_seed(s)
    # grad of: for i in range(3):
    dx = zeros_like(x)
    for i in reversed(range(3)):
        x_item, s_old = loop_saved.pop()
        # grad of: s = s + x[i] * x[i]
        s = s_old
        dx_item_times_x_item_2 = unbroadcast(ds, x_item)
        ds = unbroadcast(ds, s)
        dx_item = dx_item_times_x_item_2 * x_item + dx_item_times_x_item_2 * x_item
        dx[i] += dx_item
    return as_like(dx, x)
