# bank: takes the column apart with the input's width (p = col // W) instead of the output's (Q = W − S + 1), so every window after the first row of outputs is taken from the wrong place; it must lose the points.
# naive: none
@cuda.jit
def im2col_kernel(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P = X.shape[2] - R + 1
        Q = X.shape[3] - S + 1
        c, r, s = row // (R * S), (row // S) % R, row % S
        n = col // (P * Q)
        k = col % (P * Q)
        p, q = k // X.shape[3], k % X.shape[3]
        if p < P and q < Q:
            Xu[row, col] = X[n, c, p + r, q + s]
        else:
            Xu[row, col] = 0.0
