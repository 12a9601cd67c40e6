# bank: a one-dimensional shared array of in_tile² elements indexed ty * in_tile + tx, a float64 accumulator and an early exit after the barrier; correct, full marks.
# naive: none
def make_conv2d_tiled(F, in_tile):
    r = F.shape[0] // 2
    out_tile = in_tile - 2 * r
    size = in_tile * in_tile

    @cuda.jit
    def conv2d_tiled_kernel(image, out):
        Fc = cuda.const.array_like(F)
        tile = cuda.shared.array(size, np.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * out_tile + ty - r
        col = cuda.blockIdx.x * out_tile + tx - r
        inside = 0 <= row < image.shape[0] and 0 <= col < image.shape[1]
        tile[ty * in_tile + tx] = image[row, col] if inside else 0.0
        cuda.syncthreads()
        if not inside or ty < r or tx < r or ty >= r + out_tile or tx >= r + out_tile:
            return
        acc = 0.0
        for a in range(2 * r + 1):
            for b in range(2 * r + 1):
                acc += Fc[a, b] * tile[(ty - r + a) * in_tile + tx - r + b]
        out[row, col] = acc

    return conv2d_tiled_kernel
