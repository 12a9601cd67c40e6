# bank: divides by 2**30 (GiB/s) where nccl-tests reports GB/s (10**9 bytes): 7% low; it must get no points.
# naive: none
def allreduce_bandwidth(nbytes, seconds, ranks):
    algbw = nbytes / seconds / 2**30
    return algbw, algbw * 2 * (ranks - 1) / ranks
