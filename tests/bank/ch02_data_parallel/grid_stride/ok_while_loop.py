# bank: a while loop with the stride spelled out as gridDim.x * blockDim.x; correct, full marks.
# naive: none
@cuda.jit
def vector_add_grid_stride(x, y, out):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    n = out.shape[0]
    while i < n:
        out[i] = x[i] + y[i]
        i += stride
