# bank: NumPy: the unique words, a bincount of their banks, its maximum; correct, full marks.
# naive: none
def bank_conflict_ways(width, x_step, y_step):
    t = np.arange(32)
    words = np.unique((t % width) * x_step + (t // width) * y_step)
    return int(np.bincount(words % 32).max())
