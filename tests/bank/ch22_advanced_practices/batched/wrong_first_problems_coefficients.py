# bank: uses a[0] and b[0] for every problem (one launch, but one problem's coefficients); it must get no points.
# naive: none
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    j = offsets[p] + cuda.threadIdx.x
    while j < offsets[p + 1]:
        out[j] = a[0] * x[j] + b[0]
        j += cuda.blockDim.x
