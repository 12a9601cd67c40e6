# bank: counts the weights, the activations and the outputs but not the scales: 1.6% short at G = 128, far more for small groups; it must lose the points.
# naive: none
def quant_time_bound(n, k, batch, bits, group, bandwidth):
    return (n * k * bits / 8 + 2 * batch * k + 4 * batch * n) / bandwidth
