# bank: folds the pair over the first cols − 1 values only (range(x.shape[1] - 1)), so the last column never reaches m and d; it must lose the points.
# naive: none
import math
from numba import float32


@cuda.jit
def softmax_rows_kernel(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(x.shape[1] - 1):
            v = x[r, j]
            if v > m:
                d = d * math.exp(m - v) + float32(1.0)
                m = v
            elif v > float32(-math.inf):
                d += math.exp(v - m)
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)
