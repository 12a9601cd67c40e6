# bank: ignores the block-per-problem layout: a grid-stride loop over every element, each finding its problem by binary search in offsets (an empty problem's a and b never read); it must get full marks.
# naive: none
@cuda.jit
def batched_kernel(x, offsets, a, b, out):
    j = cuda.grid(1)
    problems = offsets.shape[0] - 1
    while j < x.shape[0]:
        lo, hi = 0, problems
        while hi - lo > 1:            # offsets[lo] <= j < offsets[hi]
            mid = (lo + hi) // 2
            if offsets[mid] <= j:
                lo = mid
            else:
                hi = mid
        out[j] = a[lo] * x[j] + b[lo]
        j += cuda.gridsize(1)
