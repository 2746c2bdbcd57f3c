def tanh_loss_jvp(W, b, X, y, tangent):
    dW = check_tangent(tangent[0], W, 'W')
    db = check_tangent(tangent[1], b, 'b')
    X_matmul_W = X @ W
    X_matmul_W_plus_b = X_matmul_W + b
    del X_matmul_W
    z = np.tanh(X_matmul_W_plus_b)
    del X_matmul_W_plus_b
    # tangent of: z = np.tanh(X @ W + b)
    dX_matmul_W = X @ dW
    dX_matmul_W_plus_b = dX_matmul_W + db
    del dX_matmul_W
    dz = dX_matmul_W_plus_b * (1 - z * z)
    del dX_matmul_W_plus_b
    z_minus_y = z - y
    del z
    z_minus_y_pow_2 = z_minus_y ** 2
    mean_z_minus_y_pow_2 = np.mean(z_minus_y_pow_2)
    del z_minus_y_pow_2
    # tangent of: return np.mean((z - y) ** 2)
    dz_minus_y = broadcast_like(dz, z_minus_y)
    del dz
    dz_minus_y_pow_2 = dz_minus_y * 2 * z_minus_y
    del z_minus_y, dz_minus_y
    dmean_z_minus_y_pow_2 = np.mean(dz_minus_y_pow_2)
    return (mean_z_minus_y_pow_2, dmean_z_minus_y_pow_2)
