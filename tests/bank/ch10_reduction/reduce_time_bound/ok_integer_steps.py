# bank: the bound with integer arithmetic for the waves (-(-a // b)) and the tree's steps (bit_length), the reading time in bytes; correct, full marks.
# naive: none
def reduce_time_bound(n, blocks, threads, resident_blocks, bandwidth, step_time, atomic_rate):
    waves = -(-blocks // resident_blocks)
    steps = threads.bit_length() - 1
    return max(n * 4.0 / bandwidth, waves * steps * step_time, blocks / atomic_rate)
