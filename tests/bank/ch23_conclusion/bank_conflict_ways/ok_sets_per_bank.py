# bank: a set of the words, then a count of distinct words per bank; correct, full marks.
# naive: none
def bank_conflict_ways(width, x_step, y_step):
    words = set()
    for t in range(32):
        tx, ty = t % width, t // width
        words.add(tx * x_step + ty * y_step)
    per_bank = {}
    for w in words:
        per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
    return max(per_bank.values())
