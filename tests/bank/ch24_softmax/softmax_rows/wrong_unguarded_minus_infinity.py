# bank: the online update with no guard for −inf: a row that starts with −inf computes exp(−inf − (−inf)) = NaN and keeps it, and a fully masked row gives NaN instead of 0; right on rows without masks; it must lose the points.
# naive: allclose
import math
from numba import float32


@cuda.jit
def softmax_rows_kernel(x, y):
    r = cuda.grid(1)
    if r < x.shape[0]:
        m = float32(-math.inf)
        d = float32(0.0)
        for j in range(x.shape[1]):
            m_new = max(m, x[r, j])
            d = d * math.exp(m - m_new) + math.exp(x[r, j] - m_new)
            m = m_new
        for j in range(x.shape[1]):
            y[r, j] = math.exp(x[r, j] - m) / d
