# bank: in floats through math.ceil, and each time as the FLOPs over the attainable rate min(peak, intensity × bandwidth); algebraically equal, full marks.
# naive: none
import math


def nbody_bound(n, block, peak_flops, bandwidth):
    pairs = float(n) * float(n)
    flops = 20.0 * pairs
    gather = 16.0 * pairs + 24.0 * n
    tiled = 16.0 * n * math.ceil(n / block) + 24.0 * n

    def seconds(nbytes):
        return flops / min(peak_flops, flops / nbytes * bandwidth)
    return flops, gather, tiled, seconds(gather), seconds(tiled)
