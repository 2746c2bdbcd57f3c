def written_with_all_kinds_of_parameters_pullback(x, s, /, *rest, **named):
    y_saved = []
    ones_3 = np.ones(3)
    y = ones_3 * s
    del ones_3
    x_item = x[0]
    named_item = named['w']
    x_item_times_named_item = x_item * named_item
    y_saved.append(copy_item(y, 0))
    y = setitem(y, 0, x_item_times_named_item)
    sin_x = np.sin(x)
    y_times_sin_x = y * sin_x
    y_times_sin_x_shape = shape_like(y_times_sin_x)
    rest_item = rest[0]
    y_saved.append(y)
    y = y_times_sin_x * rest_item
    del y_times_sin_x
    y_times_y = y * y
    y_times_y_shape = shape_like(y_times_y)
    sum_y_times_y = np.sum(y_times_y)
    del y_times_y

    def back(seed, y=y, y_saved=y_saved):
        # the sweep restores the primal's values in place: it keeps each array or
        # list it writes into and puts them back before it returns (every call
        # starts from the values the primal left)
        undo = Undo()
        try:
            # each call pops copies of the stacks: the primal's stay whole
            y_saved = list(y_saved)
            # grad of: return np.sum(y * y)
            dsum_y_times_y = check_seed(seed, sum_y_times_y)
            dy_times_y = unreduce(dsum_y_times_y, y_times_y_shape)
            dy = dy_times_y * y + dy_times_y * y
            # grad of: y = y * np.sin(x) * rest[0]
            dy_times_sin_x = unbroadcast(dy * rest_item, y_times_sin_x_shape)
            y = y_saved.pop()
            dy = unbroadcast(dy_times_sin_x * sin_x, y)
            dsin_x = unbroadcast(dy_times_sin_x * y, x)
            del dy_times_sin_x
            dx = dsin_x * np.cos(x)
            del dsin_x
            # grad of: y[0] = x[0] * named["w"]
            dx_item_times_named_item = unbroadcast(take_item(dy, 0, x_item_times_named_item), x_item_times_named_item)
            del dy
            y = undo.restore_item(y, 0, y_saved.pop())
            del y
            dx_item = unbroadcast(dx_item_times_named_item * named_item, x_item)
            del dx_item_times_named_item
            dx = add(dx, getitem_grad(dx_item, x, 0))
            return as_like(dx, x)
        finally:
            undo.rewind()
    return (sum_y_times_y, back)
