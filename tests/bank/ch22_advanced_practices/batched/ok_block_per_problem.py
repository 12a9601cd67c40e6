# bank: the notebook's design: block p strides through problem p by blockDim.x, a[p] and b[p] read once into registers; it must get full marks.
# naive: none
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    p = cuda.blockIdx.x
    end = offsets[p + 1]
    ap, bp = a[p], b[p]
    j = offsets[p] + cuda.threadIdx.x
    while j < end:
        out[j] = ap * x[j] + bp
        j += cuda.blockDim.x
