# bank: cuda.grid(2), if/else loads and a last phase that stops at K, with TILE = 32 (blocks of 1024 threads, the most a block may have): the check launches the tile side the cell states; correct, full marks.
# naive: none
TILE = 32


@cuda.jit
def tiled_matmul_kernel(A, B, C):
    tile_a = cuda.shared.array((TILE, TILE), np.float32)
    tile_b = cuda.shared.array((TILE, TILE), np.float32)
    col, row = cuda.grid(2)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    K = A.shape[1]
    acc = 0.0
    for start in range(0, K, TILE):
        if row < A.shape[0] and start + tx < K:
            tile_a[ty, tx] = A[row, start + tx]
        else:
            tile_a[ty, tx] = 0.0
        if start + ty < K and col < B.shape[1]:
            tile_b[ty, tx] = B[start + ty, col]
        else:
            tile_b[ty, tx] = 0.0
        cuda.syncthreads()
        for k in range(min(TILE, K - start)):
            acc += tile_a[ty, k] * tile_b[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc
