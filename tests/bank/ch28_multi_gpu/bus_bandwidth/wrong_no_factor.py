# bank: reports busbw equal to algbw (no 2 (n - 1) / n): it must get no points.
# naive: none
def allreduce_bandwidth(nbytes, seconds, ranks):
    algbw = nbytes / seconds / 1e9
    return algbw, algbw
