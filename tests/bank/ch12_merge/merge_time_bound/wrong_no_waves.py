# bank: forgets the waves: one thread's chain of loads as the whole latency floor, as if every thread ran at once; the basic kernel then looks memory-bound at any number of outputs per thread; it must lose the points.
# naive: none
def merge_time_bound(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    memory = (4 * key_reads + 8) * (m + n) / bandwidth
    steps = min(m, n).bit_length()
    return max(memory, (2 * steps + outputs_per_thread) * latency)
