# bank: takes the row from x and the column from y (`row, col = cuda.grid(2)`); right on square images, but on the non-square ones many pixels are never written; it must lose the points.
# naive: none
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    row, col = cuda.grid(2)
    if row < gray.shape[0] and col < gray.shape[1]:
        gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                          + 0.114 * image[row, col, 2])
