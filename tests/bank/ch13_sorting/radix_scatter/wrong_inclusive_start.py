# bank: a digit's start in the tile summed over the digits up to and INCLUDING d (inclusive where exclusive is needed): every key lands one run too far, some outside the output; it must lose the points.
# naive: none
@cuda.jit
def radix_scatter_kernel(tile_keys, tile_values, shift, counts, offsets, out_keys, out_values):
    s_first = cuda.shared.array(16, np.int32)
    t, T = cuda.threadIdx.x, cuda.blockDim.x
    b, blocks = cuda.blockIdx.x, cuda.gridDim.x
    if t < 16:
        first = 0
        for d in range(t + 1):
            first += counts[d * blocks + b]
        s_first[t] = first
    cuda.syncthreads()
    i = b * T + t
    if i < tile_keys.size:
        key = tile_keys[i]
        d = (key >> shift) & 15
        dest = offsets[d * blocks + b] + t - s_first[d]
        if 0 <= dest < out_keys.size:
            out_keys[dest] = key
            out_values[dest] = tile_values[i]
