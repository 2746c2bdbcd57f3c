def dgolden_early_return(x, n):
    s_gt_c = None
    result = None
    i_saved = []
    s_saved = []
    s_gt_c_saved = []
    result_saved = []
    s = 0.0
    returned = False
    trips = 0
    for i in range(n):
        trips = trips + 1
        i_saved.append(i)
        x_times_i = x * i
        s_saved.append(s)
        s = s + x_times_i
        s_gt_c_saved.append(s_gt_c)
        s_gt_c = s > 10.0
        if s_gt_c:
            result_saved.append(result)
            result = s * x
            returned = True
            break
    bool_returned = bool(returned)
    if bool_returned:
        pass
    else:
        result_saved.append(result)
        result = s
    # grad of: return s
    dresult = unit_seed(result)
    # grad of: for i in range(n):
    if bool_returned:
        ds = zeros_like(s)
    else:
        # grad of: return s
        ds = dresult
        result = result_saved.pop()
        dresult = 0.0
    # grad of: for i in range(n):
    dx = zeros_like(x)
    for _ in range(trips):
        i = i_saved.pop()
        # grad of: if s > 10.0:
        if s_gt_c:
            # grad of: return s * x
            ds = ds + dresult * x
            dx += unbroadcast(dresult * s, x)
            result = result_saved.pop()
            dresult = 0.0
        s_gt_c = s_gt_c_saved.pop()
        # grad of: s = s + x * i
        s = s_saved.pop()
        dx_times_i = unbroadcast(ds, x)
        ds = unbroadcast(ds, s)
        dx += dx_times_i * i
    return cast_like(dx, x)
