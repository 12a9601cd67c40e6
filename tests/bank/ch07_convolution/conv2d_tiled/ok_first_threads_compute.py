# bank: the same input tile, but the threads with tx, ty < out_tile compute (output at the tile origin + (ty, tx), read from tile[ty + a, tx + b]) and the last 2r rows and columns of threads only load; correct, full marks.
# naive: none
from numba import float32


def make_conv2d_tiled(F, in_tile):
    r = F.shape[0] // 2
    out_tile = in_tile - 2 * r

    @cuda.jit
    def conv2d_tiled_kernel(image, out):
        Fc = cuda.const.array_like(F)
        tile = cuda.shared.array((in_tile, in_tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        top = cuda.blockIdx.y * out_tile          # the output tile's first row and column
        left = cuda.blockIdx.x * out_tile
        i, j = top - r + ty, left - r + tx
        h, w = image.shape
        value = float32(0)
        if i >= 0 and i < h and j >= 0 and j < w:
            value = image[i, j]
        tile[ty, tx] = value
        cuda.syncthreads()
        row, col = top + ty, left + tx
        if ty < out_tile and tx < out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty + a, tx + b]
            out[row, col] = acc

    return conv2d_tiled_kernel
