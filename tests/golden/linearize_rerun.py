def rerun_by_linearize_linearize(x, n):
    x_kept, n_kept = deepcopy((x, n))
    y = x
    for _ in range(n):
        for k in range(2):
            scale = 0.5 + k
            sin_y = np.sin(y)
            sin_y_times_x = sin_y * x
            y = sin_y_times_x * scale
        sum_y = np.sum(y)
        sum_y_gt_c = sum_y > 100.0
        if sum_y_gt_c:
            break

    def jvp_fn(tangent):
        # a loop or branch interleaves the primal and its tangent: each call reruns the jvp,
        # on copies of the arguments made when linearize's function was called
        return rerun_by_linearize_jvp(x_kept, n_kept, tangent)[1]
    return (y, jvp_fn)
