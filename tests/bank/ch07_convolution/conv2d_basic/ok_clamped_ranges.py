# bank: explicit block and thread indices, an early return outside the image, window loops clamped to the image with max/min (no ghost test inside), a float64 accumulator; correct, full marks.
# naive: none
@cuda.jit
def conv2d_basic_kernel(image, F, out, r):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    h, w = image.shape
    if row >= h or col >= w:
        return
    acc = 0.0
    for i in range(max(row - r, 0), min(row + r + 1, h)):
        for j in range(max(col - r, 0), min(col + r + 1, w)):
            acc += F[i - row + r, j - col + r] * image[i, j]
    out[row, col] = acc
