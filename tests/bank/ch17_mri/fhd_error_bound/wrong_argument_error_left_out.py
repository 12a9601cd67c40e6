# bank: forgets that θ itself is rounded in float32 (no γ_5 · theta_max part), as if only the sine and cosine erred; it must lose the points.
# naive: none
def fhd_error_bound(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24
    return mu_sum * (a + b * theta_max) + (m + 2) * u / (1 - (m + 2) * u) * mu_sum
