# bank: K = the mean row length, rounded: a natural guess, but the cost of a slot depends on how many rows are at least that long, not on the mean (too many slots on the uniform matrix, too few on the banded one); it must lose the points.
# naive: none
def hybrid_width(lengths):
    return int(round(float(lengths.mean()))) if lengths.size else 0
