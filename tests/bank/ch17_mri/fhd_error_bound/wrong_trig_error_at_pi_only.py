# bank: takes the approximate sine's error as a everywhere (its error on [−π, π]), leaving out the part that grows with the angle; it must lose the points.
# naive: none
def fhd_error_bound(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24
    return mu_sum * (a + 5 * u / (1 - 5 * u) * theta_max) + (m + 2) * u / (1 - (m + 2) * u) * mu_sum
