# bank: pairs c1 with the x neighbour after the point and c2 with the one before (swapped); on symmetric coefficients it would pass, on the check's distinct ones it must lose the points.
# naive: allclose
@cuda.jit
def stencil_basic_kernel(inp, out, c0, c1, c2, c3, c4, c5, c6):
    k, j, i = cuda.grid(3)
    nz, ny, nx = inp.shape
    if i < nz and j < ny and k < nx:
        if i == 0 or j == 0 or k == 0 or i == nz - 1 or j == ny - 1 or k == nx - 1:
            out[i, j, k] = inp[i, j, k]
        else:
            out[i, j, k] = (c0 * inp[i, j, k] + c2 * inp[i, j, k - 1] + c1 * inp[i, j, k + 1]
                            + c3 * inp[i, j - 1, k] + c4 * inp[i, j + 1, k]
                            + c5 * inp[i - 1, j, k] + c6 * inp[i + 1, j, k])
