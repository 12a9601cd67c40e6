# bank: the same bound as bytes over the slowest rate in bytes per second (min of bandwidth, atomic rate and copies · address rate / hot fraction); algebraically equal, full marks.
# naive: none
def histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    hot_rate = copies * address_rate / hot_fraction
    return n / min(bandwidth, atomic_rate, hot_rate)
