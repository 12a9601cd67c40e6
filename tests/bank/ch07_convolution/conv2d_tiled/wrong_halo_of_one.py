# bank: a halo of one pixel hard-coded in the tile's origin and in the choice of computing threads (written for 3 × 3 filters): right for r = 1, wrong for the 5 × 5 case; it must lose the points.
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
        row = cuda.blockIdx.y * out_tile + ty - 1
        col = cuda.blockIdx.x * out_tile + tx - 1
        h, w = image.shape
        if 0 <= row < h and 0 <= col < w:
            tile[ty, tx] = image[row, col]
        else:
            tile[ty, tx] = float32(0)
        cuda.syncthreads()
        if 1 <= ty < 1 + out_tile and 1 <= tx < 1 + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    ii, jj = ty - r + a, tx - r + b
                    if 0 <= ii < in_tile and 0 <= jj < in_tile:
                        acc += Fc[a, b] * tile[ii, jj]
            out[row, col] = acc

    return conv2d_tiled_kernel
