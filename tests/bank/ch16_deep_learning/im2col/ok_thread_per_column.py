# bank: PMPP's shape of the unroll: one thread per column of Xu (an output position) writes its whole window, channel by channel and tap by tap; the threads of the grid's other rows of blocks have nothing to do; correct (slower), full marks.
# naive: none
@cuda.jit
def im2col_kernel(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if cuda.blockIdx.y != 0 or cuda.threadIdx.y != 0 or col >= Xu.shape[1]:
        return
    P = X.shape[2] - R + 1
    Q = X.shape[3] - S + 1
    n = col // (P * Q)
    p = (col // Q) % P
    q = col % Q
    row = 0
    for c in range(X.shape[1]):
        for r in range(R):
            for s in range(S):
                Xu[row, col] = X[n, c, p + r, q + s]
                row += 1
