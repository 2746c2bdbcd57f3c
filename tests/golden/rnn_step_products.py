def drnn(Wx, Wh, b, xs, h0):
    loop_saved = []
    h = h0
    len_xs = len(xs)
    for t in range(len_xs):
        xs_item = xs[t]
        xs_item_matmul_Wx = xs_item @ Wx
        h_matmul_Wh = h @ Wh
        plus = xs_item_matmul_Wx + h_matmul_Wh
        plus_plus_b = plus + b
        h_old = h
        h = np.tanh(plus_plus_b)
        loop_saved.append((xs_item, xs_item_matmul_Wx, h_matmul_Wh, plus, h_old))
    h_times_h = h * h
    h_times_h_shape = shape_like(h_times_h)
    del h_times_h
    # grad of: return np.sum(h * h)
    check_real(Wh, Wx, b, h0, xs)
    dh_times_h = unreduce(1.0, h_times_h_shape)
    dh = dh_times_h * h + dh_times_h * h
    # grad of: for t in range(len(xs)):
    dWh = zeros_like(Wh)
    dWx = zeros_like(Wx)
    db = zeros_like(b)
    db_parts = []
    dWh_dys = []
    dWh_xs = []
    dWx_dys = []
    dWx_xs = []
    for t in reversed(range(len_xs)):
        xs_item, xs_item_matmul_Wx, h_matmul_Wh, plus, h_old = loop_saved.pop()
        # grad of: h = np.tanh(xs[t] @ Wx + h @ Wh + b)
        dplus_plus_b = dh * (1 - h * h)
        h = h_old
        dplus = unbroadcast(dplus_plus_b, plus)
        db_parts.append(dplus_plus_b)
        dxs_item_matmul_Wx = unbroadcast(dplus, xs_item_matmul_Wx)
        dh_matmul_Wh = unbroadcast(dplus, h_matmul_Wh)
        dh = matmul_vjp_left(dh_matmul_Wh, h, Wh)
        dWh_dys.append(dh_matmul_Wh)
        dWh_xs.append(h)
        dWx_dys.append(dxs_item_matmul_Wx)
        dWx_xs.append(xs_item)
    del h, dh
    db += unbroadcast_steps(db_parts, b)
    del db_parts
    dWh += matmul_vjp_right_steps(dWh_dys, dWh_xs, Wh)
    del dWh_dys, dWh_xs
    dWx += matmul_vjp_right_steps(dWx_dys, dWx_xs, Wx)
    return (cast_like(dWx, Wx), cast_like(dWh, Wh), cast_like(db, b))
