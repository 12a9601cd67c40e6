# bank: the same bound as one expression, mu_sum factored out and γ written inline; correct, full marks.
# naive: none
def fhd_error_bound(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24
    return mu_sum * (a + b * theta_max + 5 * u / (1 - 5 * u) * theta_max
                     + (m + 2) * u / (1 - (m + 2) * u))
