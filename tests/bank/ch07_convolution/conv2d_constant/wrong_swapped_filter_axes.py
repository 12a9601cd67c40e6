# bank: reads the filter transposed (Fc[b, a]: the column offset picks the filter's row); right for a symmetric filter, wrong for the checks' random ones; it must lose the points.
# naive: none
from numba import float32


def make_conv2d_constant(F):
    r = F.shape[0] // 2

    @cuda.jit
    def conv2d_constant_kernel(image, out):
        Fc = cuda.const.array_like(F)
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    i, j = row + a - r, col + b - r
                    if 0 <= i < h and 0 <= j < w:
                        acc += Fc[b, a] * image[i, j]
            out[row, col] = acc

    return conv2d_constant_kernel
