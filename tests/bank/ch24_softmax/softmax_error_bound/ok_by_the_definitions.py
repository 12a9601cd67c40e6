# bank: counts the perturbations as the notebook describes them and turns each total into a relative error with a / (1 − a); correct, full marks.
# naive: none
def softmax_error_bound(chain, exp_ulps, spread):
    u = 2.0 ** -24
    per_exp = 2 * exp_ulps * u
    a = chain * (2 * u + per_exp) + per_exp + spread * u
    r = a / (1 - a)
    b = per_exp + 2 * u + spread * u
    g = b / (1 - b)
    return r, (1 + g) / (1 - r) - 1
