def dreparameterized(mu, sigma, rng):
    eps = rng.normal(size=4)
    sigma_times_eps = sigma * eps
    sigma_times_eps_shape = shape_like(sigma_times_eps)
    mu_plus_sigma_times_eps = mu + sigma_times_eps
    del sigma_times_eps
    sin = np.sin(mu_plus_sigma_times_eps)
    # grad of: return np.sum(np.sin(mu + sigma * eps) ** 2)
    check_real(mu, rng, sigma)
    dsin_pow_2 = unreduce(1.0, shape_like(eps, mu, sigma))
    dsin = dsin_pow_2 * 2 * sin
    del sin
    dmu_plus_sigma_times_eps = dsin * np.cos(mu_plus_sigma_times_eps)
    del mu_plus_sigma_times_eps, dsin
    dmu = unbroadcast(dmu_plus_sigma_times_eps, mu)
    dsigma_times_eps = unbroadcast(dmu_plus_sigma_times_eps, sigma_times_eps_shape)
    del dmu_plus_sigma_times_eps
    dsigma = unbroadcast(dsigma_times_eps * eps, sigma)
    return (cast_like(dmu, mu), cast_like(dsigma, sigma))
