# bank: adds the three times instead of taking the largest (as if reading, trees and atomics could not overlap); it must lose the points.
# naive: none
import math


def reduce_time_bound(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    return (4 * n / bandwidth + math.ceil(blocks / resident_blocks) * math.log2(threads) * step_time
            + blocks / atomic_rate)
