def dloss(self, x, y):
    tanh_z_2 = None
    tanh_z_2_saved = []
    loop_saved = []
    unused = check_class(self, MLP)
    unused_2 = check_method_of(self, 'forward')
    self_2 = self
    x_2 = x
    seq_2 = self_2.layers
    seq_2_1 = iteration_sequence(seq_2)
    len_seq_2 = len(seq_2_1)
    for i_2 in range(len_seq_2):
        layer_2 = seq_2_1[i_2]
        unused_3 = check_class(layer_2, Dense)
        self_3 = layer_2
        x_3 = x_2
        self_3_p = self_3.p
        self_3_p_W = self_3_p.W
        x_3_matmul_self_3_p_W = x_3 @ self_3_p_W
        self_3_p_2 = self_3.p
        self_3_p_2_b = self_3_p_2.b
        z = x_3_matmul_self_3_p_W + self_3_p_2_b
        self_3_act = self_3.act
        if self_3_act:
            unused_4 = check_method_of(self_3, 'activation')
            z_2 = z
            tanh_z_2_saved.append(tanh_z_2)
            tanh_z_2 = np.tanh(z_2)
            result = tanh_z_2
        else:
            result = z
        x_2_old = x_2
        x_2 = result
        loop_saved.append((x_3, self_3_p_W, x_3_matmul_self_3_p_W, self_3_act, x_2_old))
    del seq_2_1
    unused_5 = check_class(self_2, MLP)
    self_4 = self_2
    self_4_scale_factor = self_4.scale_factor
    times = self_4_scale_factor * 2.0
    self_2_scale = times
    x_2_times_self_2_scale = x_2 * self_2_scale
    out = x_2_times_self_2_scale
    r = 0.0
    seq = self.layers
    seq_3 = iteration_sequence(seq)
    len_seq = len(seq_3)
    unused_6 = check_method_of(self, 'penalty')
    for i in range(len_seq):
        layer = seq_3[i]
        layer_p = layer.p
        layer_p_W = layer_p.W
        v = layer_p_W
        v_pow_2 = v ** 2
        sum_v_pow_2 = np.sum(v_pow_2)
        penalty_layer_p_W = sum_v_pow_2
        r = r + penalty_layer_p_W
    del seq_3
    out_minus_y = out - y
    out_minus_y_pow_2 = out_minus_y ** 2
    out_minus_y_pow_2_shape = shape_like(out_minus_y_pow_2)
    mean_out_minus_y_pow_2 = np.mean(out_minus_y_pow_2)
    del out_minus_y_pow_2
    self_reg = self.reg
    self_reg_times_r = self_reg * r
    plus = mean_out_minus_y_pow_2 + self_reg_times_r
    del self_reg_times_r
    # grad of: return np.mean((out - y) ** 2) + self.reg * r
    dplus = unit_seed(plus)
    dmean_out_minus_y_pow_2 = unbroadcast(dplus, 0.0)
    dout_minus_y_pow_2 = mean_grad(dmean_out_minus_y_pow_2, out_minus_y_pow_2_shape)
    dout_minus_y = dout_minus_y_pow_2 * 2 * out_minus_y
    del out_minus_y
    dout = unbroadcast(dout_minus_y, out)
    del out, dout_minus_y
    # grad of: for layer in self.layers:
    for i in reversed(range(len_seq)):
        pass
    # grad of: out = self.forward(x)
    dx_2 = unbroadcast(dout * self_2_scale, x_2)
    del x_2, self_2_scale, dout
    # grad of: out = self.forward(x)
    for i_2 in reversed(range(len_seq_2)):
        x_3, self_3_p_W, x_3_matmul_self_3_p_W, self_3_act, x_2_old = loop_saved.pop()
        # grad of: out = self.forward(x)
        dresult = dx_2
        x_2 = x_2_old
        # grad of: out = self.forward(x)
        if self_3_act:
            # grad of: out = self.forward(x)
            dtanh_z_2 = dresult
            dz_2 = dtanh_z_2 * (1 - tanh_z_2 * tanh_z_2)
            tanh_z_2 = tanh_z_2_saved.pop()
            dz = dz_2
        else:
            dz = dresult
        # grad of: out = self.forward(x)
        dx_3_matmul_self_3_p_W = unbroadcast(dz, x_3_matmul_self_3_p_W)
        dx_3 = matmul_vjp_left(dx_3_matmul_self_3_p_W, x_3, self_3_p_W)
        dx_2 = dx_3
    del tanh_z_2
    # grad of: out = self.forward(x)
    dx = dx_2
    return cast_like(dx, x)
