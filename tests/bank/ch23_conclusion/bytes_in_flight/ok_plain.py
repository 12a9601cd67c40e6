# bank: Little's law, the share of an SM, rounded up with math.ceil; correct, full marks.
# naive: none
import math


def bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load):
    in_flight = bandwidth * latency
    per_sm = in_flight / sms
    return in_flight, math.ceil(per_sm / bytes_per_load), \
        math.ceil(per_sm / (max_threads * bytes_per_load))
