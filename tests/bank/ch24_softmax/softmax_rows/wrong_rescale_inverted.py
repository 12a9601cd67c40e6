# bank: rescales d by exp(m_new − m_old) instead of exp(m_old − m_new) when the maximum grows; exact for rows whose first value is their maximum, wrong otherwise; it must lose the points.
# naive: none
import math
from numba import float32


@cuda.jit
def softmax_rows_kernel(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(x.shape[1]):
            v = x[r, j]
            if v > m:
                if d > float32(0.0):
                    d = d * math.exp(v - m)
                d += float32(1.0)
                m = v
            elif v > float32(-math.inf):
                d += math.exp(v - m)
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j] - m) / d if d > float32(0.0) else float32(0.0)
