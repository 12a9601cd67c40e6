# bank: tries every width from 0 to the longest row with the cost written out (rows · K + 3 · the nonzeros past K) and keeps the first of the cheapest; slow for long rows but right, full marks.
# naive: none
def hybrid_width(lengths):
    lengths = lengths.astype(np.int64)
    best, best_cost = 0, None
    for k in range(int(lengths.max(initial=0)) + 1):
        cost = lengths.size * k + 3 * int(np.maximum(lengths - k, 0).sum())
        if best_cost is None or cost < best_cost:
            best, best_cost = k, cost
    return best
