# bank: forgets that privatization spreads the hot bin over its copies (divides by address_rate only), so a privatized histogram looks as contended as a global one; it must lose the points.
# naive: none
def histogram_time_bound(n, hot_fraction, bandwidth, atomic_rate, address_rate, copies):
    return max(n / bandwidth, n / atomic_rate, hot_fraction * n / address_rate)
