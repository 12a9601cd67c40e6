# bank: the reference design: a histogram privatized in shared memory (grid-stride), one block of 256 threads scanning the counts (Kogge-Stone) into a lookup table, a 2-D map through it; it must get full marks.
# naive: none
from numba import int32, uint32, float32


@cuda.jit
def clear(hist):
    i = cuda.grid(1)
    if i < hist.size:
        hist[i] = 0


@cuda.jit
def histogram(img, hist):
    bins = cuda.shared.array(256, uint32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    w = img.shape[1]
    for i in range(cuda.grid(1), img.size, cuda.gridsize(1)):
        cuda.atomic.add(bins, img[i // w, i % w], 1)
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        if bins[b] != 0:
            cuda.atomic.add(hist, b, bins[b])


@cuda.jit
def table(hist, n, lut):
    buf = cuda.shared.array((2, 256), int32)
    low = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    buf[0, t] = hist[t]
    cuda.syncthreads()
    s = 0
    stride = 1
    while stride < 256:
        buf[1 - s, t] = buf[s, t] + (buf[s, t - stride] if t >= stride else 0)
        cuda.syncthreads()
        s = 1 - s
        stride *= 2
    cdf = buf[s, t]
    if cdf > 0 and (t == 0 or buf[s, t - 1] == 0):
        low[0] = cdf
    cuda.syncthreads()
    cmin = low[0]
    if n > cmin and cdf >= cmin:
        lut[t] = float32(cdf - cmin) / float32(n - cmin)
    else:
        lut[t] = 0.0


@cuda.jit
def apply(img, lut, out):
    c, r = cuda.grid(2)
    if r < img.shape[0] and c < img.shape[1]:
        out[r, c] = lut[img[r, c]]


def equalize(img, out):
    h, w = img.shape
    hist = cuda.device_array(256, np.uint32)
    lut = cuda.device_array(256, np.float32)
    clear[1, 256](hist)
    histogram[min(64, (img.size + 255) // 256), 256](img, hist)
    table[1, 256](hist, np.int32(img.size), lut)
    apply[((w + 31) // 32, (h + 7) // 8), (32, 8)](img, lut, out)
