# bank: a grid-stride loop over voxels, the angle computed in turns and in float64 (math.pi is a float64), float64 accumulators, one complex multiply by e^{iθ} written out; more accurate than asked, full marks.
# naive: none
import math


@cuda.jit
def fhd_gather_kernel(kx, ky, kz, x, y, z, rMu, iMu, rFhD, iFhD):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for n in range(start, x.size, stride):
        acc_re = 0.0
        acc_im = 0.0
        for m in range(kx.size):
            turns = float(kx[m]) * x[n] + float(ky[m]) * y[n] + float(kz[m]) * z[n]
            c = math.cos(2.0 * math.pi * turns)
            s = math.sin(2.0 * math.pi * turns)
            acc_re += float(rMu[m]) * c - float(iMu[m]) * s
            acc_im += float(rMu[m]) * s + float(iMu[m]) * c
        rFhD[n] = acc_re
        iFhD[n] = acc_im
