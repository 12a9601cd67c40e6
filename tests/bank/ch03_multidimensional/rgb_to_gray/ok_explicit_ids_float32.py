# bank: row and col from blockIdx/blockDim/threadIdx .y and .x, an early return outside the image, float32 weights; correct, full marks.
# naive: none
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if row >= image.shape[0] or col >= image.shape[1]:
        return
    r, g, b = image[row, col, 0], image[row, col, 1], image[row, col, 2]
    gray[row, col] = np.float32(0.299) * r + np.float32(0.587) * g + np.float32(0.114) * b
