# bank: the factory keeps a float64 copy of the filter in constant memory, tests the ghost cells with explicit comparisons and sums in float64; correct, full marks.
# naive: none
def make_conv2d_constant(F):
    F64 = np.ascontiguousarray(F, dtype=np.float64)
    d = F.shape[0]
    r = d // 2

    @cuda.jit
    def conv2d_constant_kernel(image, out):
        weights = cuda.const.array_like(F64)
        x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        if y < out.shape[0] and x < out.shape[1]:
            total = 0.0
            for a in range(d):
                for b in range(d):
                    i = y - r + a
                    j = x - r + b
                    if i >= 0 and i < image.shape[0] and j >= 0 and j < image.shape[1]:
                        total += weights[a, b] * image[i, j]
            out[y, x] = total

    return conv2d_constant_kernel
