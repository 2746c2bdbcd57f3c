def dgolden_while_break(x):
    x_div_y = None
    x_div_y_saved = []
    y_saved = []
    y = x
    trips = 0
    while True:
        trips = trips + 1
        x_div_y_saved.append(x_div_y)
        x_div_y = x / y
        y_plus_x_div_y = y + x_div_y
        y_saved.append(y)
        y = 0.5 * y_plus_x_div_y
        y_times_y = y * y
        y_times_y_minus_x = y_times_y - x
        abs_y_times_y_minus_x = abs(y_times_y_minus_x)
        lt = abs_y_times_y_minus_x < 1e-12
        if lt:
            break
    # grad of: return y
    dy = unit_seed(y)
    # grad of: while True:
    dx = zeros_like(x)
    for _ in range(trips):
        # grad of: y = 0.5 * (y + x / y)
        dy_plus_x_div_y = dy * 0.5
        y = y_saved.pop()
        dy = unbroadcast(dy_plus_x_div_y, y)
        dx_div_y = dy_plus_x_div_y
        dx += unbroadcast(dx_div_y / y, x)
        dy = dy + unbroadcast(-dx_div_y * x_div_y / y, y)
        x_div_y = x_div_y_saved.pop()
    del x_div_y
    # grad of: y = x
    dx += dy
    return cast_like(dx, x)
