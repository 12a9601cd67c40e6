# bank: FlashAttention's per-tile update: tiles of 16 keys, each thread first finds the tile's largest score among the keys it sees, rescales its sum and accumulator once per tile, then adds the tile's terms (the scores computed twice, the scale applied after the dot product, the tile loaded one key row per thread); correct, full marks.
# naive: none
import math

from numba import float32

TILE = 16
D_MAX = 128


@cuda.jit
def flash_attention_kernel(q, k, v, scale, causal, o):
    b = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    first = cuda.blockIdx.x * cuda.blockDim.x
    i = first + tx
    n = q.shape[1]
    d = q.shape[2]
    k_tile = cuda.shared.array((TILE, D_MAX), float32)
    v_tile = cuda.shared.array((TILE, D_MAX), float32)
    q_row = cuda.local.array(D_MAX, float32)
    acc = cuda.local.array(D_MAX, float32)
    for t in range(d):
        acc[t] = float32(0.0)
        q_row[t] = float32(q[b, i, t]) if i < n else float32(0.0)
    m = float32(-math.inf)
    total = float32(0.0)
    last = n
    if causal and first + cuda.blockDim.x < n:
        last = first + cuda.blockDim.x
    for start in range(0, last, TILE):
        j = tx
        while j < TILE:
            if start + j < n:
                for t in range(d):
                    k_tile[j, t] = float32(k[b, start + j, t])
                    v_tile[j, t] = float32(v[b, start + j, t])
            j += cuda.blockDim.x
        cuda.syncthreads()
        count = min(TILE, n - start)
        if causal:
            count = min(count, i - start + 1)
        if i < n and count > 0:
            tile_max = float32(-math.inf)
            for j in range(count):
                s = float32(0.0)
                for t in range(d):
                    s += q_row[t] * k_tile[j, t]
                tile_max = max(tile_max, s * scale)
            m_new = max(m, tile_max)
            alpha = math.exp(m - m_new)
            total *= alpha
            for t in range(d):
                acc[t] *= alpha
            for j in range(count):
                s = float32(0.0)
                for t in range(d):
                    s += q_row[t] * k_tile[j, t]
                p = math.exp(s * scale - m_new)
                total += p
                for t in range(d):
                    acc[t] += p * v_tile[j, t]
            m = m_new
        cuda.syncthreads()
    if i < n:
        for t in range(d):
            o[b, i, t] = acc[t] / total
