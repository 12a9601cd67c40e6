# bank: leaves out the barrier after the sums, so a fast thread's copies of the next chunk can overwrite samples a slower warp is still adding; it must lose the points.
# naive: none
import math

from numba import float32

TWO_PI = float32(2 * math.pi)
CHUNK = 64


@cuda.jit(fastmath=True)
def fhd_chunked_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    s_kx = cuda.shared.array(CHUNK, float32)
    s_ky = cuda.shared.array(CHUNK, float32)
    s_kz = cuda.shared.array(CHUNK, float32)
    s_r = cuda.shared.array(CHUNK, float32)
    s_i = cuda.shared.array(CHUNK, float32)
    n = cuda.grid(1)
    inside = n < x.size
    xn = x[n] if inside else float32(0.0)
    yn = y[n] if inside else float32(0.0)
    zn = z[n] if inside else float32(0.0)
    re = float32(0.0)
    im = float32(0.0)
    M = kx.size
    for base in range(0, M, CHUNK):
        for j in range(cuda.threadIdx.x, CHUNK, cuda.blockDim.x):
            if base + j < M:
                s_kx[j] = kx[base + j]
                s_ky[j] = ky[base + j]
                s_kz[j] = kz[base + j]
                s_r[j] = rMu[base + j]
                s_i[j] = iMu[base + j]
        cuda.syncthreads()
        for j in range(min(CHUNK, M - base)):
            t = TWO_PI * (s_kx[j] * xn + s_ky[j] * yn + s_kz[j] * zn)
            c = math.cos(t)
            s = math.sin(t)
            re += s_r[j] * c - s_i[j] * s
            im += s_i[j] * c + s_r[j] * s
    if inside:
        rFhD[n] = re
        iFhD[n] = im
