# bank: tests only i < h and j < w, so near the top and left edges the negative indices wrap around to the last row and column instead of counting as ghost cells; it must lose the points.
# naive: none
from numba import float32


@cuda.jit
def conv2d_basic_kernel(image, F, out, r):
    col, row = cuda.grid(2)
    h, w = image.shape
    if row < h and col < w:
        acc = float32(0)
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                i, j = row + a - r, col + b - r
                if i < h and j < w:
                    acc += F[a, b] * image[i, j]
        out[row, col] = acc
