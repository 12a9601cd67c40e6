# bank: a signal-processing convolution, the filter flipped (F[2r - a, 2r - b]); right for a symmetric filter such as a blur, wrong for the checks' random ones; it must lose the points.
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
                if 0 <= i < h and 0 <= j < w:
                    acc += F[2 * r - a, 2 * r - b] * image[i, j]
        out[row, col] = acc
