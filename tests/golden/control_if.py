def dgolden_if(x):
    x_gt_c = x > 0.0
    if x_gt_c:
        y = x * x
    else:
        x_gt_c_2 = x > -1.0
        if x_gt_c_2:
            y = 3.0 * x
        else:
            y = -x
    # grad of: return y
    dy = unit_seed(y)
    # grad of: if x > 0.0:
    if x_gt_c:
        # grad of: y = x * x
        dx = dy * x + dy * x
    else:
        # grad of: elif x > -1.0:
        if x_gt_c_2:
            # grad of: y = 3.0 * x
            dx = dy * 3.0
        else:
            # grad of: y = -x
            dx = -dy
    return cast_like(dx, x)
