# bank: one shared [5, 32] array, a while loop over chunks, the tail padded with μ = 0 (a padded sample adds exactly zero), libdevice's sin and cos (no fastmath: within the fast bound too), a float64 accumulator; correct, full marks.
# naive: none
import math

from numba import float32

CHUNK = 32


@cuda.jit
def fhd_chunked_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    sh = cuda.shared.array((5, CHUNK), float32)
    n = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    xn = float32(0.0)
    yn = float32(0.0)
    zn = float32(0.0)
    if n < x.size:
        xn, yn, zn = x[n], y[n], z[n]
    acc_re = 0.0
    acc_im = 0.0
    base = 0
    while base < kx.size:
        j = cuda.threadIdx.x
        while j < CHUNK:
            m = base + j
            if m < kx.size:
                sh[0, j] = kx[m]
                sh[1, j] = ky[m]
                sh[2, j] = kz[m]
                sh[3, j] = rMu[m]
                sh[4, j] = iMu[m]
            else:
                sh[0, j] = 0.0
                sh[1, j] = 0.0
                sh[2, j] = 0.0
                sh[3, j] = 0.0
                sh[4, j] = 0.0
            j += cuda.blockDim.x
        cuda.syncthreads()
        for j in range(CHUNK):
            t = float32(2 * math.pi) * (sh[0, j] * xn + sh[1, j] * yn + sh[2, j] * zn)
            c = math.cos(t)
            s = math.sin(t)
            acc_re += sh[3, j] * c - sh[4, j] * s
            acc_im += sh[4, j] * c + sh[3, j] * s
        cuda.syncthreads()
        base += CHUNK
    if n < x.size:
        rFhD[n] = acc_re
        iFhD[n] = acc_im
