# bank: K = the longest row, which is plain ELL with an empty COO part: every row pays for the longest row's slots (on a power-law matrix tens of times the best cost); it must lose the points.
# naive: none
def hybrid_width(lengths):
    return int(lengths.max(initial=0))
