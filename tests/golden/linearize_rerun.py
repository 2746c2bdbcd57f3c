def rerun_by_linearize_linearize(x, n):
    x_kept, n_kept = deepcopy((x, n))
    y = x * 1.0
    for _ in range(n):
        for k in range(2):
            scale = 0.5 + k
            sin_y = np.sin(y)
            sin_y_times_x = sin_y * x
            y = sin_y_times_x * scale
        y_item = y[1]
        y_item_times_c = y_item * 0.5
        y = setitem(y, 0, y_item_times_c)

    def jvp_fn(tangent):
        # a loop or branch interleaves the primal and its tangent: each call reruns the jvp,
        # on copies of the arguments made when linearize's function was called
        return rerun_by_linearize_jvp(x_kept, n_kept, tangent)[1]
    return (y, jvp_fn)
