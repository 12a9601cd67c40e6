# bank: no bounds check, so the threads of the partial blocks past the right and bottom edges index outside the image; it must lose the points.
# naive: none
@cuda.jit
def rgb_to_gray_kernel(image, gray):
    col, row = cuda.grid(2)
    gray[row, col] = (0.299 * image[row, col, 0] + 0.587 * image[row, col, 1]
                      + 0.114 * image[row, col, 2])
