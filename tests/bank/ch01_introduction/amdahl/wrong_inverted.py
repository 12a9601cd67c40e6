# bank: returns the new run-time fraction (1 - p) + p / s instead of its inverse, so every answer but the p = 0 and s = 1 edges is wrong; it must lose the points.
# naive: none
def amdahl_speedup(parallel_fraction, speedup):
    return (1.0 - parallel_fraction) + parallel_fraction / speedup
