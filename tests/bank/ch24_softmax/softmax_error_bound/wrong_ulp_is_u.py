# bank: counts an ulp of the exponential as u instead of 2u (half the exponential's error); it must lose the points.
# naive: none
def softmax_error_bound(chain, exp_ulps, spread):
    u = 2.0 ** -24
    a = (2 * chain + exp_ulps * (chain + 1) + spread) * u
    r = a / (1 - a)
    b = (exp_ulps + 2 + spread) * u
    g = b / (1 - b)
    return r, (g + r) / (1 - r)
