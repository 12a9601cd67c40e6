# bank: PMPP's local sort: four stable 1-bit splits, each an exclusive Kogge-Stone scan of the bit over the tile in shared memory, keys and values passed through shared memory, counts with shared atomics; correct, full marks.
# naive: none
MAX_THREADS = 256


@cuda.jit
def radix_local_sort_kernel(keys, values, shift, tile_keys, tile_values, counts):
    sk = cuda.shared.array(MAX_THREADS, np.uint32)
    sv = cuda.shared.array(MAX_THREADS, np.uint32)
    scan = cuda.shared.array((2, MAX_THREADS), np.int32)
    s_count = cuda.shared.array(16, np.int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, nb = cuda.blockIdx.x, cuda.gridDim.x
    start = b * T
    valid = min(T, keys.size - start)
    if t < 16:
        s_count[t] = 0
    k = np.uint32(0)
    v = np.uint32(0)
    if t < valid:
        k = keys[start + t]
        v = values[start + t]
    for bit in range(4):
        flag = 0
        if t < valid:
            flag = (k >> (shift + bit)) & 1
        src = 0
        scan[0, t] = flag
        cuda.syncthreads()
        stride = 1
        while stride < T:
            if t >= stride:
                scan[1 - src, t] = scan[src, t] + scan[src, t - stride]
            else:
                scan[1 - src, t] = scan[src, t]
            cuda.syncthreads()
            src = 1 - src
            stride *= 2
        ones_before = scan[src, t] - flag
        ones = scan[src, valid - 1]
        if t < valid:
            if flag:
                dest = valid - ones + ones_before
            else:
                dest = t - ones_before
            sk[dest] = k
            sv[dest] = v
        cuda.syncthreads()
        if t < valid:
            k = sk[t]
            v = sv[t]
        cuda.syncthreads()
    if t < valid:
        tile_keys[start + t] = k
        tile_values[start + t] = v
        cuda.atomic.add(s_count, (k >> shift) & 15, 1)
    cuda.syncthreads()
    if t < 16:
        counts[t * nb + b] = s_count[t]
