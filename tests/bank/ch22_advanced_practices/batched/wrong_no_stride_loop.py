# bank: one element per thread of each problem and no loop, so a problem longer than the block keeps NaN past its first blockDim.x elements; it must get no points.
# naive: none
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    j = offsets[p] + cuda.threadIdx.x
    if j < offsets[p + 1]:
        out[j] = a[p] * x[j] + b[p]
