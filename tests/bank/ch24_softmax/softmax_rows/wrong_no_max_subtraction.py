# bank: sums exp(x) without subtracting the row's maximum; right for small values, overflows (inf / inf, or Python's OverflowError in CPU mode) on the checks' offsets up to 1e4, and NaN on fully masked rows; it must lose the points.
# naive: allclose
import math
from numba import float32


@cuda.jit
def softmax_rows_kernel(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        d = float32(0.0)
        for j in range(x.shape[1]):
            d += math.exp(x[r, j])
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j]) / d
