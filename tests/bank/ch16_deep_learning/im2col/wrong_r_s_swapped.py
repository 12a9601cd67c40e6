# bank: unpacks the row as c·R·S + s·R + r (s and r in the wrong order), which is right only for square filters; the visible 3 × 2 filter exposes it, so it must lose the points.
# naive: none
@cuda.jit
def im2col_kernel(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P = X.shape[2] - R + 1
        Q = X.shape[3] - S + 1
        c, s, r = row // (R * S), (row // R) % S, row % R
        n, p, q = col // (P * Q), (col // Q) % P, col % Q
        Xu[row, col] = X[n, c, p + r, q + s]
