# bank: the first 16 threads find where their digit starts in the tile (the counts of the smaller digits) into shared memory, a barrier, then every thread writes its key at the digit's offset plus its rank in the run; correct, full marks.
# naive: none
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
