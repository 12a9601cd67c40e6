# bank: the three parts written out (the trigonometry's own error at the largest angle, the angle's float32 error passed on, the float32 sum's γ_(m+2)), each per unit of mu_sum; correct, full marks.
# naive: none
def fhd_error_bound(m, mu_sum, theta_max, a, b):
    u = 2.0 ** -24

    def gamma(k):
        return k * u / (1 - k * u)
    trig = a + b * theta_max
    argument = gamma(5) * theta_max
    return mu_sum * (trig + argument) + gamma(m + 2) * mu_sum
