# bank: extracts the digit as (key >> (4 * shift)) & 15, as if shift counted digits rather than bits: right only at shift 0, so the tiles are sorted by the wrong bits and the counts are those of another digit; it must lose the points.
# naive: allclose
MAX_THREADS = 256


@cuda.jit
def radix_local_sort_kernel(keys, values, shift, tile_keys, tile_values, counts):
    s_digit = cuda.shared.array(MAX_THREADS, np.int32)
    t = cuda.threadIdx.x
    start = cuda.blockIdx.x * cuda.blockDim.x
    valid = min(cuda.blockDim.x, keys.size - start)
    mine = -1
    if t < valid:
        mine = (keys[start + t] >> (4 * shift)) & 15
        s_digit[t] = mine
    cuda.syncthreads()
    if t < valid:
        rank = 0
        for j in range(valid):
            if s_digit[j] < mine or (s_digit[j] == mine and j < t):
                rank += 1
        tile_keys[start + rank] = keys[start + t]
        tile_values[start + rank] = values[start + t]
    if t < 16:
        c = 0
        for j in range(valid):
            c += s_digit[j] == t
        counts[t * cuda.gridDim.x + cuda.blockIdx.x] = c
