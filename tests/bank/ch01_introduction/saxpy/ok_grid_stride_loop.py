# bank: a grid-stride loop, which also covers every element of the one-thread-per-element launch; correct, full marks.
# naive: none
@cuda.jit
def saxpy(a, x, y, out):
    start = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    for i in range(start, len(out), stride):
        out[i] = a * x[i] + y[i]
