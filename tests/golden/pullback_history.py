def history_kept_in_a_list_pullback(x):
    h_saved = []
    hs = []
    h = x * 1.0
    for i in range(3):
        h_times_x = h * x
        h_times_x_plus_i = h_times_x + i
        h_saved.append(h)
        h = np.tanh(h_times_x_plus_i)
        hs = list_append(hs, h)
    hs_item = hs[0]
    hs_item_2 = hs[2]
    hs_item_times_hs_item_2 = hs_item * hs_item_2
    hs_item_times_hs_item_2_shape = shape_like(hs_item_times_hs_item_2)
    sin_h = np.sin(h)
    plus = hs_item_times_hs_item_2 + sin_h
    del hs_item_times_hs_item_2, sin_h
    plus_shape = shape_like(plus)
    sum_plus = np.sum(plus)
    del plus

    def back(seed, h=h, hs=hs, h_saved=h_saved):
        # the sweep restores the primal's values in place: it keeps each array or
        # list it writes into and puts them back before it returns (every call
        # starts from the values the primal left)
        undo = Undo()
        try:
            # each call pops copies of the stacks: the primal's stay whole
            h_saved = list(h_saved)
            # grad of: return np.sum(hs[0] * hs[2] + np.sin(h))
            dsum_plus = check_seed(seed, sum_plus)
            dplus = unreduce(dsum_plus, plus_shape)
            dhs_item_times_hs_item_2 = unbroadcast(dplus, hs_item_times_hs_item_2_shape)
            dsin_h = unbroadcast(dplus, h)
            dh = dsin_h * np.cos(h)
            del dsin_h
            dhs_item = unbroadcast(dhs_item_times_hs_item_2 * hs_item_2, hs_item)
            dhs_item_2 = unbroadcast(dhs_item_times_hs_item_2 * hs_item, hs_item_2)
            del dhs_item_times_hs_item_2
            dhs = getitem_grad(dhs_item_2, hs, 2)
            del dhs_item_2
            dhs = add_at(dhs, 0, dhs_item)
            del dhs_item
            # grad of: for i in range(3):
            dx = zeros_like(x)
            for i in reversed(range(3)):
                # grad of: hs.append(h)
                dh += append_grad_value(dhs, h)
                dhs = append_grad_items(dhs)
                hs = undo.list_pop(hs)
                # grad of: h = np.tanh(h * x + i)
                dh_times_x_plus_i = dh * (1 - h * h)
                h = h_saved.pop()
                dh_times_x = dh_times_x_plus_i
                dh = unbroadcast(dh_times_x * x, h)
                dx += unbroadcast(dh_times_x * h, x)
            del hs, h, dhs
            # grad of: h = x * 1.0
            dx += dh
            return cast_like(dx, x)
        finally:
            undo.rewind()
    return (sum_plus, back)
