# bank: three passes (maximum, sum, normalise), an early return for threads past the last row and for fully masked rows, and a multiply by the reciprocal of the sum; correct within the bound, full marks.
# naive: none
import math
from numba import float32


@cuda.jit
def softmax_rows_kernel(x, y):
    r = cuda.grid(1)
    if r >= x.shape[0]:
        return
    n = x.shape[1]
    m = x[r, 0]
    for j in range(1, n):
        m = max(m, x[r, j])
    if m == float32(-math.inf):
        for j in range(n):
            y[r, j] = float32(0.0)
        return
    s = float32(0.0)
    for j in range(n):
        s += math.exp(x[r, j] - m)
    inv = float32(1.0) / s
    for j in range(n):
        y[r, j] = math.exp(x[r, j] - m) * inv
