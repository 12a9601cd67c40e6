# bank: adds its sums to rFhD and iFhD as PMPP's listing does (rFhD[n] += ...) instead of storing them, so the outputs, which arrive filled with NaN, stay NaN (on a real scan, the previous iteration's values would be counted twice); it must lose the points.
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
        rFhD[n] += re
        iFhD[n] += im
