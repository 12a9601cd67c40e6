# bank: gives every curve the most points, 32, whatever its curvature: the tessellation drawn with these counts is right, but nothing is adaptive any more; it must lose its points.
# naive: none
@cuda.jit
def tess_counts_kernel(cp, counts):
    i = cuda.grid(1)
    if i < cp.shape[0]:
        counts[i] = 32
