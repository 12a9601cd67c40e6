# bank: exponentiates the raw scores (no maximum subtracted): on the heads whose scores reach ±200, exp overflows float32 to inf and inf / inf is NaN; it must lose its points.
# naive: none
import math

from numba import float32


@cuda.jit
def attention_naive_kernel(q, k, v, scale, causal, s, o):
    r = cuda.grid(1)
    bh, n, d = q.shape
    if r >= bh * n:
        return
    b = r // n
    i = r % n
    keys = i + 1 if causal else n
    total = float32(0.0)
    for j in range(keys):
        acc = float32(0.0)
        for t in range(d):
            acc += q[b, i, t] * k[b, j, t]
        p = math.exp(acc * scale)
        s[b, i, j] = p
        total += p
    for t in range(d):
        acc = float32(0.0)
        for j in range(keys):
            acc += s[b, i, j] * v[b, j, t]
        o[b, i, t] = acc / total
