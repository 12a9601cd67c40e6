# bank: a grid-stride loop over the rows (fewer threads than rows would also be covered), the scale folded into q's elements as they are read, the maximum found in a pass over the stored scores, and the sum's reciprocal multiplied instead of dividing; correct, full marks.
# naive: none
import math

from numba import float32


@cuda.jit
def attention_naive_kernel(q, k, v, scale, causal, s, o):
    bh, n, d = q.shape
    for r in range(cuda.grid(1), bh * n, cuda.gridsize(1)):
        b = r // n
        i = r % n
        keys = n
        if causal:
            keys = i + 1
        for j in range(keys):
            acc = float32(0.0)
            for t in range(d):
                acc += (q[b, i, t] * scale) * k[b, j, t]
            s[b, i, j] = acc
        m = s[b, i, 0]
        for j in range(1, keys):
            if s[b, i, j] > m:
                m = s[b, i, j]
        total = float32(0.0)
        for j in range(keys):
            s[b, i, j] = math.exp(s[b, i, j] - m)
            total += s[b, i, j]
        inv = float32(1.0) / total
        for t in range(d):
            acc = float32(0.0)
            for j in range(keys):
                acc += s[b, i, j] * v[b, j, t]
            o[b, i, t] = acc * inv
