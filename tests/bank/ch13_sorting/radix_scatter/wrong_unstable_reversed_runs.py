# bank: ranks each key from the end of its digit's run instead of its start: every key lands in its digit's range (the keys are right whenever a run's keys are equal), but equal digits come out reversed, so the values are wrong; a test that compares keys by digit only, with distinct digits, passes it; it must lose the points.
# naive: allclose
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
        last = s_first[d] + counts[d * blocks + b] - 1
        dest = offsets[d * blocks + b] + last - t
        out_keys[dest] = key
        out_values[dest] = tile_values[i]
