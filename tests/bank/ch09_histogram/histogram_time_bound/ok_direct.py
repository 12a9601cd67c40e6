# bank: the three times as in the text, reading, all atomics, the hottest bin over its copies, and the largest of them; correct, full marks.
# naive: none
def histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    reading = n / bandwidth
    atomics = n / atomic_rate
    hottest = hot_fraction * n / (copies * address_rate)
    return max(reading, atomics, hottest)
