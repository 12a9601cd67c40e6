# bank: the privatized histogram with `bins[v] += 1` instead of an atomic add: threads of a block lose each other's updates (a race the CPU mode's detector stops every time); it must lose its points.
# naive: none
from numba import uint32


@cuda.jit
def histogram(img, hist):
    bins = cuda.shared.array(256, uint32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        bins[b] = 0
    cuda.syncthreads()
    w = img.shape[1]
    for i in range(cuda.grid(1), img.size, cuda.gridsize(1)):
        bins[img[i // w, i % w]] += 1
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        if bins[b] != 0:
            cuda.atomic.add(hist, b, bins[b])


@cuda.jit
def scan(hist, cdf, info):
    if cuda.grid(1) == 0:
        running = 0
        first = 0
        for v in range(256):
            running += hist[v]
            cdf[v] = running
            if first == 0 and running > 0:
                first = running
        info[0] = first
        info[1] = running


@cuda.jit
def remap(img, cdf, info, out):
    r, c = cuda.grid(2)
    if r < img.shape[0] and c < img.shape[1]:
        cmin = info[0]
        n = info[1]
        if n == cmin:
            out[r, c] = 0.0
        else:
            out[r, c] = (cdf[img[r, c]] - cmin) / float(n - cmin)


def equalize(img, out):
    h, w = img.shape
    hist = cuda.to_device(np.zeros(256, np.int64))
    cdf = cuda.device_array(256, np.int64)
    info = cuda.device_array(2, np.int64)
    histogram[4, 128](img, hist)
    scan[1, 1](hist, cdf, info)
    remap[((h + 15) // 16, (w + 15) // 16), (16, 16)](img, cdf, info, out)
