def pendulum_pullback(theta, n):
    theta_kept, n_kept = deepcopy((theta, n))
    x = theta[0]
    v = theta[1]
    range_n = range(n)
    tup = (v, x)
    tup_2 = (theta,)
    checkpointed_loop_2 = checkpointed_loop(None, pendulum_step, range_n, tup, tup_2, 3)
    v_2 = checkpointed_loop_2[0]
    x_2 = checkpointed_loop_2[1]
    x_times_x = x_2 * x_2
    x_times_x_plus_v = x_times_x + v_2
    del x_times_x

    def back(seed):
        # the sweep undoes writes into the primal's arrays or lists in place: each call reruns
        # the vjp, on copies of the arguments made when the pullback was called
        return pendulum_vjp(theta_kept, n_kept, seed)
    return (x_times_x_plus_v, back)
