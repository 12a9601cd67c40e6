# bank: computes the row with blockDim.x instead of blockDim.y (assumes square blocks); with 16 x 8 blocks whole bands of rows are skipped; it must lose the points.
# naive: none
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.x + cuda.threadIdx.y
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])
