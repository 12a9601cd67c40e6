# bank: adds the perturbations but never turns them into a relative error (a instead of a / (1 − a), g + r instead of (g + r) / (1 − r)): off by about 2% on the 65,536-value chain; it must lose the points.
# naive: none
def softmax_error_bound(chain, exp_ulps, spread):
    u = 2.0 ** -24
    a = (2 * chain + 2 * exp_ulps * (chain + 1) + spread) * u
    b = (2 * exp_ulps + 2 + spread) * u
    return a, a + b
