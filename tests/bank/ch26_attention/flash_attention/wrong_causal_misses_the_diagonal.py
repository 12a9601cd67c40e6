# bank: the causal mask off by one: row i stops before key i (stop = i - start), so it never sees itself, and row 0 sees nothing (0 / 0); it must lose its points.
# naive: none
import math

from numba import float32

TILE = 32
D_MAX = 128


@cuda.jit
def flash_attention_kernel(q, k, v, scale, causal, o):
    b = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tx
    n = q.shape[1]
    d = q.shape[2]
    k_tile = cuda.shared.array((TILE, D_MAX), float32)
    v_tile = cuda.shared.array((TILE, D_MAX), float32)
    q_row = cuda.local.array(D_MAX, float32)
    acc = cuda.local.array(D_MAX, float32)
    live = i < n
    if live:
        for t in range(d):
            q_row[t] = float32(q[b, i, t]) * scale
            acc[t] = float32(0.0)
    m = float32(-math.inf)
    total = float32(0.0)
    end = n
    if causal:
        end = min(n, (cuda.blockIdx.x + 1) * cuda.blockDim.x)
    for start in range(0, end, TILE):
        for e in range(tx, TILE * d, cuda.blockDim.x):
            j = e // d
            t = e % d
            if start + j < n:
                k_tile[j, t] = float32(k[b, start + j, t])
                v_tile[j, t] = float32(v[b, start + j, t])
        cuda.syncthreads()
        if live:
            stop = min(TILE, n - start)
            if causal:
                stop = min(stop, i - start)
            for j in range(stop):
                s = float32(0.0)
                for t in range(d):
                    s += q_row[t] * k_tile[j, t]
                if s > m:
                    alpha = math.exp(m - s)
                    total *= alpha
                    for t in range(d):
                        acc[t] *= alpha
                    m = s
                p = math.exp(s - m)
                total += p
                for t in range(d):
                    acc[t] += p * v_tile[j, t]
        cuda.syncthreads()
    if live:
        for t in range(d):
            o[b, i, t] = acc[t] / total
