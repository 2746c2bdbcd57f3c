def rerun_with_all_kinds_of_parameters_linearize(x, s, /, *rest, scale=2.0, **named):
    x_kept_2, s_kept, rest_kept, scale_kept, named_kept = deepcopy((x, s, rest, scale, named))
    x_kept = x * s
    y = x_kept * 1.0
    del x_kept
    for _ in range(2):
        for k in range(2):
            sin_y = np.sin(y)
            sin_y_times_x = sin_y * x
            rest_item = rest[0]
            rest_item_plus_k = rest_item + k
            times = sin_y_times_x * rest_item_plus_k
            times_times_scale = times * scale
            named_item = named['w']
            y = times_times_scale * named_item
        y_item = y[1]
        y_item_times_c = y_item * 0.5
        y = setitem(y, 2, y_item_times_c)

    def jvp_fn(tangent):
        # a loop or branch interleaves the primal and its tangent: each call reruns the jvp,
        # on copies of the arguments made when linearize's function was called
        return rerun_with_all_kinds_of_parameters_jvp(x_kept_2, s_kept, *rest_kept, tangent, scale=scale_kept, **named_kept)[1]
    return (y, jvp_fn)
