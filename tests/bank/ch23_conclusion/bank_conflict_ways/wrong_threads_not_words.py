# bank: counts the threads per bank instead of the distinct words, so a broadcast (many threads, one word) is counted as a conflict; it must lose the points.
# naive: none
def bank_conflict_ways(width, x_step, y_step):
    per_bank = [0] * 32
    for t in range(32):
        per_bank[((t % width) * x_step + (t // width) * y_step) % 32] += 1
    return max(per_bank)
