# bank: forgets that the SMs share the bytes in flight, asking one SM for all of them; it must lose the points.
# naive: none
import math


def bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load):
    total = bandwidth * latency
    return total, math.ceil(total / bytes_per_load), math.ceil(total / (max_threads * bytes_per_load))
