# bank: one thread per element of Xu, c, r, s from the row and n, p, q from the column by division and remainder, one copy; correct, full marks.
# naive: none
@cuda.jit
def im2col_kernel(X, Xu, R, S):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < Xu.shape[0] and col < Xu.shape[1]:
        P = X.shape[2] - R + 1
        Q = X.shape[3] - S + 1
        c, r, s = row // (R * S), (row // S) % R, row % S
        n, p, q = col // (P * Q), (col // Q) % P, col % Q
        Xu[row, col] = X[n, c, p + r, q + s]
