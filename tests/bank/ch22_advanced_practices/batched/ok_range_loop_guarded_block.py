# bank: a for loop over range(start + t, end, blockDim.x), with a guard on the block index and the coefficients read inside the loop (b + x * a); it must get full marks.
# naive: none
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    if p < a.shape[0]:
        for j in range(offsets[p] + cuda.threadIdx.x, offsets[p + 1], cuda.blockDim.x):
            out[j] = b[p] + x[j] * a[p]
