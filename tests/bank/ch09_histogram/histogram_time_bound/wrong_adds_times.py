# bank: adds the three times instead of taking the largest (as if reading, atomics and the hot bin never overlapped); it must lose the points.
# naive: none
def histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return n / bandwidth + n / atomic_rate + hot_fraction * n / (copies * address_rate)
