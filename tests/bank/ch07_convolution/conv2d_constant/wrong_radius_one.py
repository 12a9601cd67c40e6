# bank: the factory hard-codes a 3 × 3 window (r = 1) whatever the filter's size; right for the 3 × 3 case, wrong for the 5 × 5 one; it must lose the points.
# naive: none
from numba import float32


def make_conv2d_constant(F):
    @cuda.jit
    def conv2d_constant_kernel(image, out):
        Fc = cuda.const.array_like(F)
        col, row = cuda.grid(2)
        h, w = image.shape
        if row < h and col < w:
            acc = float32(0)
            for a in range(3):
                for b in range(3):
                    i, j = row + a - 1, col + b - 1
                    if 0 <= i < h and 0 <= j < w:
                        acc += Fc[a, b] * image[i, j]
            out[row, col] = acc

    return conv2d_constant_kernel
