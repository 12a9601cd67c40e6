# bank: ping-pong between a scratch pair and the outputs (the eighth pass lands in the outputs), with its own one-block exclusive scan kernel of the count table instead of the course's; correct, full marks.
# naive: none
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



@cuda.jit
def scan_table(counts, offsets):
    if cuda.threadIdx.x == 0:
        running = 0
        for i in range(counts.size):
            offsets[i] = running
            running += counts[i]


def radix_sort(keys, values, out_keys, out_values, threads):
    n = keys.size
    blocks = -(-n // threads)
    scratch = (cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32))
    tiles = (cuda.device_array(n, np.uint32), cuda.device_array(n, np.uint32))
    counts = cuda.device_array(16 * blocks, np.int32)
    offsets = cuda.device_array(16 * blocks, np.int32)
    src = (keys, values)
    for p in range(8):
        dst = (out_keys, out_values) if p % 2 == 1 else scratch
        radix_local_sort_kernel[blocks, threads](src[0], src[1], 4 * p, tiles[0], tiles[1], counts)
        scan_table[1, 32](counts, offsets)
        radix_scatter_kernel[blocks, threads](tiles[0], tiles[1], 4 * p, counts, offsets,
                                              dst[0], dst[1])
        src = dst
