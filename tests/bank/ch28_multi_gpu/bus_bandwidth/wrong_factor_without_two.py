# bank: uses (n - 1) / n, the factor of a reduce-scatter alone, forgetting the all-gather: it must get no points.
# naive: none
def allreduce_bandwidth(nbytes, seconds, ranks):
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * (ranks - 1) / ranks
