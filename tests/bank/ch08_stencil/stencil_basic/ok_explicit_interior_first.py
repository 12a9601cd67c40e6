# bank: explicit block/thread indices (no cuda.grid), an early return outside the volume, the interior test first and the sum in reverse order; correct, full marks.
# naive: none
@cuda.jit
def stencil_basic_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    i = cuda.blockIdx.z * cuda.blockDim.z + cuda.threadIdx.z
    nz, ny, nx = out.shape
    if i >= nz or j >= ny or k >= nx:
        return
    if 0 < i < nz - 1 and 0 < j < ny - 1 and 0 < k < nx - 1:
        out[i, j, k] = (c6 * inp[i + 1, j, k] + c5 * inp[i - 1, j, k] + c4 * inp[i, j + 1, k]
                        + c3 * inp[i, j - 1, k] + c2 * inp[i, j, k + 1] + c1 * inp[i, j, k - 1]
                        + c0 * inp[i, j, k])
    else:
        out[i, j, k] = inp[i, j, k]
