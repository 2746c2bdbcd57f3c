def dgolden_list_argument(params, x):
    check_unpacked(params, 2, 'params')
    W = params[0]
    b = params[1]
    W_matmul_x = W @ x
    W_matmul_x_shape = shape_like(W_matmul_x)
    W_matmul_x_plus_b = W_matmul_x + b
    del W_matmul_x
    tanh_W_matmul_x_plus_b = np.tanh(W_matmul_x_plus_b)
    del W_matmul_x_plus_b
    # grad of: return np.sum(np.tanh(W @ x + b))
    check_real(params, x)
    dtanh_W_matmul_x_plus_b = unreduce(1.0, tanh_W_matmul_x_plus_b)
    dW_matmul_x_plus_b = dtanh_W_matmul_x_plus_b * (1 - tanh_W_matmul_x_plus_b * tanh_W_matmul_x_plus_b)
    del tanh_W_matmul_x_plus_b
    dW_matmul_x = unbroadcast(dW_matmul_x_plus_b, W_matmul_x_shape)
    db = unbroadcast(dW_matmul_x_plus_b, b)
    del dW_matmul_x_plus_b
    dW = matmul_vjp_left(dW_matmul_x, W, x)
    del dW_matmul_x
    # grad of: W, b = params
    dparams = getitem_grad(db, params, 1)
    del db
    dparams = add_at(dparams, 0, dW)
    return as_like(dparams, params)
