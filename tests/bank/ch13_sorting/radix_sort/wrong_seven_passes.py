# bank: seven passes (shift = 0, 4, ..., 24): the top digit is never sorted; a test whose keys are all below 2^28 passes it; it must lose the points.
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
        mine = (keys[start + t] >> shift) & 15
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


@cuda.jit
def radix_scatter_kernel(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(16, np.int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    if t < 16:
        first = 0
        for d in range(t):
            first += counts[d * blocks + b]
        s_first[t] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & 15
        dest = offsets[d * blocks + b] + t - s_first[d]
        out_keys[dest] = key
        out_values[dest] = tile_values[i]



def radix_sort(keys, values, out_keys, out_values, threads):
    n = keys.size
    blocks = (n + threads - 1) // threads
    tile_keys = cuda.device_array(n, np.uint32)
    tile_values = cuda.device_array(n, np.uint32)
    counts = cuda.device_array(16 * blocks, np.int32)
    offsets = cuda.device_array(16 * blocks, np.int32)
    src_keys, src_values = keys, values
    for shift in range(0, 28, 4):
        radix_local_sort_kernel[blocks, threads](src_keys, src_values, shift, tile_keys,
                                                 tile_values, counts)
        ag.problems.ch13.exclusive_scan(counts, offsets)
        radix_scatter_kernel[blocks, threads](tile_keys, tile_values, shift, counts, offsets,
                                              out_keys, out_values)
        src_keys, src_values = out_keys, out_values
