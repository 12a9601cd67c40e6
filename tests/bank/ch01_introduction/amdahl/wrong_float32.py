# bank: the right formula evaluated in float32, about 1e-7 relative error where float64 rounding is asked for; it must lose the points.
# naive: allclose
def amdahl_speedup(parallel_fraction, speedup):
    p, s = np.float32(parallel_fraction), np.float32(speedup)
    return float(np.float32(1) / ((np.float32(1) - p) + p / s))
