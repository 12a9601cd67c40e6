# bank: the two floors with math.log2 and math.ceil on floats instead of bit_length and integer ceilings, the chain written latency first; algebraically equal, full marks.
# naive: none
import math


def merge_time_bound(m, n, outputs_per_thread, key_reads, bandwidth, latency, resident_threads):
    steps = math.ceil(math.log2(min(m, n) + 1))
    waves = math.ceil(math.ceil((m + n) / outputs_per_thread) / resident_threads)
    return max((m + n) * (4 * key_reads + 8) / bandwidth,
               latency * waves * (outputs_per_thread + 2 * steps))
