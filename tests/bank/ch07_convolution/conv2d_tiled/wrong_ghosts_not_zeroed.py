# bank: loads the input tile with a guard but no else, so a ghost cell keeps whatever the shared memory held (the previous block's pixels) instead of 0; right away from the image's border, wrong next to it; it must lose the points.
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
        cuda.syncthreads()
        if r <= ty < r + out_tile and r <= tx < r + out_tile and row < h and col < w:
            acc = float32(0)
            for a in range(2 * r + 1):
                for b in range(2 * r + 1):
                    acc += Fc[a, b] * tile[ty - r + a, tx - r + b]
            out[row, col] = acc

    return conv2d_tiled_kernel
