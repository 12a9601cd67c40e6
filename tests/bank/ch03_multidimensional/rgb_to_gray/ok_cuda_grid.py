# bank: col and row from cuda.grid(2) (x first), both bounds checked, float64 weights; correct, full marks.
# naive: none
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    col, row = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])
