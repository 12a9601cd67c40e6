# bank: returns at once in any block whose tile is not full, as if n were a multiple of the block size: the last tile's keys and counts are never written; a test with whole tiles passes it; it must lose the points.
# naive: allclose
MAX_THREADS = 256


@cuda.jit
def radix_local_sort_kernel(keys, values, shift, tile_keys, tile_values, counts):
    s_digit = cuda.shared.array(MAX_THREADS, np.int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    start = cuda.blockIdx.x * T
    if start + T > keys.size:
        return
    mine = (keys[start + t] >> shift) & 15
    s_digit[t] = mine
    cuda.syncthreads()
    rank = 0
    for j in range(T):
        if s_digit[j] < mine or (s_digit[j] == mine and j < t):
            rank += 1
    tile_keys[start + rank] = keys[start + t]
    tile_values[start + rank] = values[start + t]
    if t < 16:
        c = 0
        for j in range(T):
            c += s_digit[j] == t
        counts[t * cuda.gridDim.x + cuda.blockIdx.x] = c
