# bank: an exclusive scan (cdf[v] stored before hist[v] is added, cdf_min taken from it): every value maps one step too dark and the brightest present never reaches 1; it must lose its points.
# naive: none
@cuda.jit
def count(img, hist):
    r, c = cuda.grid(2)
    if r < img.shape[0] and c < img.shape[1]:
        cuda.atomic.add(hist, img[r, c], 1)


@cuda.jit
def scan(hist, cdf, info):
    if cuda.grid(1) == 0:
        running = 0
        first = 0
        found = False
        for v in range(256):
            cdf[v] = running              # exclusive: the counts below v only
            running += hist[v]
            if not found and hist[v] > 0:
                first = cdf[v]
                found = True
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
    grid = ((h + 15) // 16, (w + 15) // 16)
    count[grid, (16, 16)](img, hist)
    scan[1, 1](hist, cdf, info)
    remap[grid, (16, 16)](img, cdf, info, out)
