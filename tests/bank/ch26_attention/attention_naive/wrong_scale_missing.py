# bank: forgets the scale 1 / sqrt(d): the softmax of q·k itself, far sharper than attention's; it must lose its points.
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
    m = float32(-math.inf)
    for j in range(keys):
        acc = float32(0.0)
        for t in range(d):
            acc += q[b, i, t] * k[b, j, t]
        s[b, i, j] = acc
        m = max(m, acc)
    total = float32(0.0)
    for j in range(keys):
        p = math.exp(s[b, i, j] - m)
        s[b, i, j] = p
        total += p
    for t in range(d):
        acc = float32(0.0)
        for j in range(keys):
            acc += s[b, i, j] * v[b, j, t]
        o[b, i, t] = acc / total
