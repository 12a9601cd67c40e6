# bank: algbw = bytes / seconds / 1e9, busbw = algbw * 2 (n - 1) / n, as nccl-tests defines them; it must get full marks.
# naive: none
def allreduce_bandwidth(nbytes, seconds, ranks):
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (ranks - 1) / ranks
