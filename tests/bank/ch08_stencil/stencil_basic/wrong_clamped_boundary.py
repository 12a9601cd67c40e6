# bank: computes the stencil at every point, with neighbours clamped into the volume, instead of copying the boundary; interior right, boundary wrong; it must lose the points.
# naive: none
@cuda.jit
def stencil_basic_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        out[i, j, k] = (c0 * inp[i, j, k] + c1 * inp[i, j, max(k - 1, 0)]
                        + c2 * inp[i, j, min(k + 1, nx - 1)] + c3 * inp[i, max(j - 1, 0), k]
                        + c4 * inp[i, min(j + 1, ny - 1), k] + c5 * inp[max(i - 1, 0), j, k]
                        + c6 * inp[min(i + 1, nz - 1), j, k])
