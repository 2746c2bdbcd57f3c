def tanh_map_pullback(x, A):
    A_matmul_x = A @ x
    tanh_A_matmul_x = np.tanh(A_matmul_x)
    del A_matmul_x
    v1_minus_times = 1 - tanh_A_matmul_x * tanh_A_matmul_x

    def back(seed):
        dtanh_A_matmul_x = check_seed(seed, tanh_A_matmul_x)
        dA_matmul_x = dtanh_A_matmul_x * v1_minus_times
        del dtanh_A_matmul_x
        dx = matmul_vjp_right(dA_matmul_x, A, x)
        return cast_like(dx, x)

    def back_many(seed):
        # the sweep once for all seeds: each cotangent has one row per seed
        seeds = many_count(seed)
        dtanh_A_matmul_x = many_check_seeds(seed, tanh_A_matmul_x)
        dA_matmul_x = many_binop('*', dtanh_A_matmul_x, v1_minus_times, True, False)
        del dtanh_A_matmul_x
        dx = many_matmul_vjp_right(dA_matmul_x, A, x)
        return many_cast_like(dx, x)
    return (tanh_A_matmul_x, back, back_many)

