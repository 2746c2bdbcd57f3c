def dgolden_indexed_write(x):
    y_saved = []
    loop_saved = []
    y = np.zeros(3)
    for i in range(3):
        x_item = x[i]
        x_item_times_x_item_2 = x_item * x_item
        y_saved.append(copy_item(y, i))
        y = setitem(y, i, x_item_times_x_item_2)
        loop_saved.append((x_item, x_item_times_x_item_2))
    # grad of: return np.sum(y)
    check_real(x)
    dy = unreduce(1.0, y)
    # grad of: for i in range(3):
    dx = zeros_like(x)
    for i in reversed(range(3)):
        x_item, x_item_times_x_item_2 = loop_saved.pop()
        # grad of: y[i] = x[i] * x[i]
        dx_item_times_x_item_2 = unbroadcast(take_item(dy, i, x_item_times_x_item_2), x_item_times_x_item_2)
        dy = zero_item(dy, i)
        y = restore_item(y, i, y_saved.pop())
        dx_item = dx_item_times_x_item_2 * x_item + dx_item_times_x_item_2 * x_item
        dx[i] += dx_item
    return as_like(dx, x)
