# bank: int() truncates instead of rounding up, one thread and one load short nearly always; it must lose the points.
# naive: none
def bytes_in_flight(bandwidth, latency, sms, max_threads, bytes_per_load):
    per_sm = bandwidth * latency / sms
    return bandwidth * latency, int(per_sm / bytes_per_load), \
        int(per_sm / (max_threads * bytes_per_load))
