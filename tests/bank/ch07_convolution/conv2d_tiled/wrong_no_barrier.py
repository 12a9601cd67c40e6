# bank: the tiled kernel without its cuda.syncthreads(), so a thread may read a tile cell before the thread that loads it has written it; caught by the race detector in CPU mode; it must lose the points.
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
        row = cuda.blockIdx.y * out_tile + ty - r
        col = cuda.blockIdx.x * out_tile + tx - r
        h, w = image.shape
        if 0 <= row < h and 0 <= col < w:
            tile[ty, tx] = image[row, col]
        else:
            tile[ty, tx] = float32(0)
        if r <= ty < r + out_tile and r <= tx < r + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty - r + a, tx - r + b]
            out[row, col] = acc

    return conv2d_tiled_kernel
